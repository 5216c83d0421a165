// SPDX-License-Identifier: MIT
// raw-http-server: a Streamable HTTP MCP server on bare sockets whose answers break HTTP on demand.

/*
 * What evhttp cannot be made to send: a session id with a bare CR or a control byte in it, or
 * of 90 KB; a tool answer that never comes while the connection stays open (slowloris); an SSE
 * answer of keep-alive comments only, forever; a JSON answer that is a batch of a million junk
 * values or of 100k log notifications; a body sent as gzip although nobody asked for it; an
 * answer trickled a byte at a time (trickle); two million tiny SSE events before it (sse-tiny).
 * Round 5: 100 MB of headers (hdr-flood) or of 100 Continue responses (cont-flood), one header line
 * of 50 MB (hdr-line), headers or a status line dripped a byte a second forever (hdr-drip,
 * status-drip), an SSE answer of 100 MB without a newline (sse-noline; on the GET stream:
 * get-noline; on a legacy SSE stream: legacy-noline), Content-Type lies (ct-sse-json, ct-json-sse),
 * a 200 with no body (empty-200), a 202 for the request (accepted-202), a chunked answer whose last
 * chunk never comes (chunked-forever). initialize, tools/list and the notifications are answered
 * properly, so the server connects and the fault hits a tools/call (mode hang-init hits initialize
 * itself). Each connection is served by a child process, so a hanging answer holds one connection
 * only. Every request's header names and its Mcp-Session-Id are logged to --log, so a test can
 * check what reached the server. Mode oauth-hang-register is a protected server whose sign-in never
 * gets past registration; oauth-plain-remote one whose token endpoint is plain http on another
 * host. Standalone (libc only): mcpd's own code cannot hide a matching bug here.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A request of mcpd's is a few KB; the 90 KB session id comes back in one header. */
#define REQ_MAX (512u * 1024u)
/* The huge session id: under curl's 100 KB bound for one header line, so curl passes it on. */
#define HUGE_SESSION_BYTES (90u * 1024u)
/* Values in the junk batch: just under mcpd's JSON_MAX_VALUES (1 Mi), so the parse succeeds. */
#define JUNK_VALUES 1000000
/* Notifications in the other batch: 6 values each, 600k in all, under the same bound. */
#define NOTE_VALUES 100000
/* Keep-alive comments are sent this often, as a busy proxy would. */
#define COMMENT_EVERY_US 2000
/* Mode trickle: one byte of the answer this often (a 150-byte answer takes 30 s). */
#define TRICKLE_EVERY_US 200000
/*
 * Mode sse-tiny: at least this many one-value events ("data: 1", 9 bytes each) before the
 * answer, and for at least TINY_MIN_MS: a fast reader must not get the answer before its
 * client's timeout (the test expects the call to end at it, whatever the machine's speed).
 */
#define TINY_EVENTS 2000000
#define TINY_MIN_MS 30000
/* Modes hdr-flood and sse-noline: what they send at most (100 MB), in chunks of FLOOD_CHUNK. */
#define FLOOD_BYTES (100u * 1024u * 1024u)
#define FLOOD_CHUNK (64u * 1024u)
/* Mode hdr-line: one header line of 50 MB. */
#define HUGE_LINE_BYTES (50u * 1024u * 1024u)
/* Modes hdr-drip and status-drip: one byte this often, forever. */
#define DRIP_EVERY_US 1000000

static struct {
    const char *mode;
    const char *log_path;
    const char *port_file;
} opt;

static bool send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w, n -= (size_t)w;
    }
    return true;
}

static void log_line(const char *fmt, const char *a, size_t n)
{
    FILE *f;

    if (!opt.log_path || !(f = fopen(opt.log_path, "a")))
        return;
    fprintf(f, fmt, (int)n, a);
    fclose(f);
}

#define MIN_SZ(a, b) ((a) < (b) ? (a) : (b))

static bool mode_is(const char *m)
{
    return strcmp(opt.mode, m) == 0;
}

/* The JSON-RPC id of a request body, as its text ("0" if none). */
static void body_id(const char *body, char *out, size_t cap)
{
    const char *p = strstr(body, "\"id\":");
    size_t n = 0;

    snprintf(out, cap, "0");
    if (!p)
        return;
    p += 5;
    while (*p == ' ')
        p++;
    while (p[n] && p[n] != ',' && p[n] != '}' && n + 1 < cap)
        n++;
    memcpy(out, p, n);
    out[n] = '\0';
}

static void respond(int fd, const char *status, const char *extra, const char *ctype,
                    const char *body)
{
    char head[512];
    int n =
        snprintf(head, sizeof(head), "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n",
                 status, ctype, strlen(body));

    send_all(fd, head, (size_t)n);
    if (extra)
        send_all(fd, extra, strlen(extra));
    send_all(fd, "\r\n", 2);
    send_all(fd, body, strlen(body));
}

/* The session id initialize hands out in this mode (a header line with its CRLF), or NULL. */
static char *session_header(void)
{
    char *h;

    if (mode_is("session-cr"))
        return strdup("Mcp-Session-Id: s1\rX-Injected: yes\r\n");
    if (mode_is("session-ctl"))
        return strdup("Mcp-Session-Id: s1\x01x\r\n");
    if (!mode_is("session-huge"))
        return strdup("Mcp-Session-Id: s1\r\n");
    h = malloc(HUGE_SESSION_BYTES + 64);
    strcpy(h, "Mcp-Session-Id: ");
    memset(h + strlen(h), 'S', HUGE_SESSION_BYTES);
    strcpy(h + 16 + HUGE_SESSION_BYTES, "\r\n");
    return h;
}

static void answer_initialize(int fd, const char *id)
{
    char body[512];
    char *sh = session_header();

    snprintf(
        body, sizeof(body),
        "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"protocolVersion\":\"2025-06-18\","
        "\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"raw\",\"version\":\"1\"}}}",
        id);
    respond(fd, "200 OK", sh, "application/json", body);
    free(sh);
}

static void forever(void)
{
    for (;;)
        pause();
}

/* A batch: a million junk values (or 100k log notifications), then the real answer. */
static void answer_junk_batch(int fd, const char *id)
{
    static const char note[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
                               "\"params\":{\"level\":\"info\",\"data\":\"flood\"}},";
    bool notes = mode_is("batch-notes");
    const char *elem = notes ? note : "1,";
    size_t elen = strlen(elem), count = notes ? NOTE_VALUES : JUNK_VALUES;
    char tail[256], head[256];
    size_t len;
    int n;

    snprintf(tail, sizeof(tail),
             "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\","
             "\"text\":\"after the junk\"}]}}]",
             id);
    len = 1 + elen * count + strlen(tail);
    n = snprintf(
        head, sizeof(head),
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n[", len);
    send_all(fd, head, (size_t)n);
    char *junk = malloc(elen * count);
    for (size_t i = 0; i < count; i++)
        memcpy(junk + i * elen, elem, elen);
    send_all(fd, junk, elen * count);
    free(junk);
    send_all(fd, tail, strlen(tail));
}

/* Mode trickle: a proper JSON answer, one byte at a time (slowloris from the server's side). */
static void answer_trickle(int fd, const char *body)
{
    char head[256];
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\n\r\n",
                     strlen(body));

    send_all(fd, head, (size_t)n);
    for (const char *p = body; *p; p++) {
        if (!send_all(fd, p, 1))
            _exit(0);
        usleep(TRICKLE_EVERY_US);
    }
}

/* Mode sse-tiny: millions of tiny events that are no message, then the answer as an event. */
static void answer_tiny_events(int fd, const char *body)
{
    static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n";
    static const char ev[] = "data: 1\n\n";
    size_t per = 65536 / (sizeof(ev) - 1), elen = sizeof(ev) - 1;
    char *chunk = malloc(per * elen);

    for (size_t i = 0; i < per; i++)
        memcpy(chunk + i * elen, ev, elen);
    struct timespec t0, t;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    send_all(fd, head, sizeof(head) - 1);
    for (size_t sent = 0;; sent += per) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        long ms = (t.tv_sec - t0.tv_sec) * 1000L + (t.tv_nsec - t0.tv_nsec) / 1000000L;
        if (sent >= TINY_EVENTS && ms >= TINY_MIN_MS)
            break;
        if (!send_all(fd, chunk, per * elen))
            _exit(0); /* the client gave up (its timeout): what the test waits for */
    }
    free(chunk);
    send_all(fd, "data: ", 6);
    send_all(fd, body, strlen(body));
    send_all(fd, "\n\n", 2);
    _exit(0); /* the stream ends with the answer */
}

/* Send head, then n bytes of c in FLOOD_CHUNK pieces (stopping when the peer goes), then tail. */
static void flood(int fd, const char *head, char c, size_t n, const char *tail)
{
    char *chunk = malloc(FLOOD_CHUNK);

    memset(chunk, c, FLOOD_CHUNK);
    if (!send_all(fd, head, strlen(head)))
        _exit(0);
    for (size_t sent = 0; sent < n; sent += FLOOD_CHUNK)
        if (!send_all(fd, chunk, MIN_SZ(FLOOD_CHUNK, n - sent)))
            _exit(0);
    free(chunk);
    send_all(fd, tail, strlen(tail));
}

/* Send text one byte per DRIP_EVERY_US, then one more byte of filler the same way, forever. */
static void drip(int fd, const char *text, char filler)
{
    for (const char *p = text; *p; p++) {
        if (!send_all(fd, p, 1))
            _exit(0);
        usleep(DRIP_EVERY_US);
    }
    while (send_all(fd, &filler, 1))
        usleep(DRIP_EVERY_US);
    _exit(0);
}

/* 100 MB of header lines of about 1 KB each. */
static void answer_header_flood(int fd)
{
    static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n";
    char line[1024];

    memset(line, 'h', sizeof(line));
    memcpy(line, "X-Junk: ", 8);
    memcpy(line + sizeof(line) - 2, "\r\n", 2);
    send_all(fd, head, sizeof(head) - 1);
    for (size_t sent = 0; sent < FLOOD_BYTES; sent += sizeof(line))
        if (!send_all(fd, line, sizeof(line)))
            _exit(0);
    _exit(0);
}

/* The hostile answers of round 5 (h-red5); false if mode is none of them. */
static bool answer_red5(int fd, const char *answer)
{
    char b[1024];

    if (mode_is("hdr-flood"))
        answer_header_flood(fd);
    if (mode_is("cont-flood")) {
        /* 100 MB of interim responses, each a complete header block that curl's counts restart. */
        static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
        for (size_t sent = 0; sent < FLOOD_BYTES; sent += sizeof(cont) - 1)
            if (!send_all(fd, cont, sizeof(cont) - 1))
                _exit(0);
        _exit(0);
    }
    if (mode_is("hdr-line"))
        flood(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Huge: ", 'x',
              HUGE_LINE_BYTES, "\r\nContent-Length: 2\r\n\r\n{}");
    if (mode_is("hdr-drip"))
        drip(fd, "HTTP/1.1 200 OK\r\nX-Slow: ", 'd');
    if (mode_is("status-drip"))
        drip(fd, "HTTP/1.1 2", '0');
    if (mode_is("sse-noline")) {
        flood(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: ", 'n',
              FLOOD_BYTES, "");
        forever();
    }
    if (mode_is("ct-sse-json")) {
        respond(fd, "200 OK", NULL, "text/event-stream", answer);
        return true;
    }
    if (mode_is("ct-json-sse")) {
        snprintf(b, sizeof(b), "event: message\ndata: %s\n\n", answer);
        respond(fd, "200 OK", NULL, "application/json", b);
        return true;
    }
    if (mode_is("empty-200")) {
        respond(fd, "200 OK", NULL, "application/json", "");
        return true;
    }
    if (mode_is("accepted-202")) {
        respond(fd, "202 Accepted", NULL, "application/json", "");
        return true;
    }
    if (mode_is("chunked-forever")) {
        /* The answer in one chunk, and the last chunk never sent. */
        snprintf(b, sizeof(b),
                 "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                 "Transfer-Encoding: chunked\r\n\r\n%zx\r\n%s\r\n",
                 strlen(answer), answer);
        send_all(fd, b, strlen(b));
        forever();
    }
    return false;
}

static void answer_call(int fd, const char *id)
{
    char body[512];

    if (mode_is("hang"))
        forever();
    if (mode_is("comments")) {
        static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n";
        send_all(fd, head, sizeof(head) - 1);
        while (send_all(fd, ": keep-alive\n\n", 14))
            usleep(COMMENT_EVERY_US);
        _exit(0);
    }
    if (mode_is("batch") || mode_is("batch-notes")) {
        answer_junk_batch(fd, id);
        return;
    }
    if (mode_is("gzip")) {
        /* A gzip member header and zeros: what a bomb starts with. Nobody sent Accept-Encoding. */
        static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                   "Content-Encoding: gzip\r\nContent-Length: 4096\r\n\r\n"
                                   "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03";
        static char zeros[4096 - 10];
        send_all(fd, head, sizeof(head) - 1);
        send_all(fd, zeros, sizeof(zeros));
        return;
    }
    snprintf(body, sizeof(body),
             "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\","
             "\"text\":\"plain answer\"}]}}",
             id);
    if (answer_red5(fd, body))
        return;
    if (mode_is("trickle"))
        answer_trickle(fd, body);
    else if (mode_is("sse-tiny"))
        answer_tiny_events(fd, body);
    else
        respond(fd, "200 OK", NULL, "application/json", body);
}

/* Log the header names of one request, and its Mcp-Session-Id (first 64 bytes and length). */
static void log_headers(const char *req, const char *end)
{
    for (const char *l = strstr(req, "\r\n") + 2; l < end; l = strstr(l, "\r\n") + 2) {
        const char *colon = memchr(l, ':', (size_t)(end - l));
        const char *eol = strstr(l, "\r\n");
        if (!colon || colon > eol)
            continue;
        log_line("header %.*s\n", l, (size_t)(colon - l));
        if (strncasecmp(l, "mcp-session-id:", 15) == 0) {
            char len[32];
            snprintf(len, sizeof(len), "%zu", (size_t)(eol - colon - 2));
            log_line("session-len %.*s\n", len, strlen(len));
        }
    }
}

/*
 * Mode oauth-hang-register: a protected server whose authorization server never answers client
 * registration, so mcpd's sign-in sits with its redirect listener open and no state chosen yet.
 */
static bool serve_oauth(int fd, const char *req)
{
    struct sockaddr_in sa;
    socklen_t sl = sizeof(sa);
    char base[64], b[1024];
    /* Mode oauth-plain-remote: the token endpoint is plain http on a host of TEST-NET-1. */
    bool plain_remote = mode_is("oauth-plain-remote");

    if (!mode_is("oauth-hang-register") && !plain_remote)
        return false;
    getsockname(fd, (struct sockaddr *)&sa, &sl);
    snprintf(base, sizeof(base), "http://127.0.0.1:%d", ntohs(sa.sin_port));
    if (strncmp(req, "POST /register ", 15) == 0) {
        forever();
    } else if (strncmp(req, "GET /.well-known/oauth-protected-resource", 41) == 0) {
        snprintf(b, sizeof(b), "{\"resource\":\"%s/mcp\",\"authorization_servers\":[\"%s\"]}", base,
                 base);
        respond(fd, "200 OK", NULL, "application/json", b);
    } else if (strncmp(req, "GET /.well-known/oauth-authorization-server", 43) == 0) {
        snprintf(b, sizeof(b),
                 "{\"issuer\":\"%s\",\"authorization_endpoint\":\"%s/authorize\","
                 "\"token_endpoint\":\"%s/token\",\"registration_endpoint\":\"%s/register\","
                 "\"code_challenge_methods_supported\":[\"S256\"]}",
                 base, base, plain_remote ? "http://192.0.2.1" : base, base);
        respond(fd, "200 OK", NULL, "application/json", b);
    } else if (strncmp(req, "GET ", 4) == 0) {
        respond(fd, "404 Not Found", NULL, "text/plain", "");
    } else {
        char h[256];
        snprintf(h, sizeof(h),
                 "WWW-Authenticate: Bearer resource_metadata=\"%s/.well-known/"
                 "oauth-protected-resource\"\r\n",
                 base);
        respond(fd, "401 Unauthorized", h, "application/json", "{}");
    }
    return true;
}

static void serve_one(int fd, const char *req, const char *body)
{
    char id[64];

    log_line("request %.*s\n", req, (size_t)(strchr(req, '\r') - req));
    if (serve_oauth(fd, req))
        return;
    if (strncmp(req, "GET ", 4) == 0 && (mode_is("get-noline") || mode_is("legacy-noline"))) {
        /* The GET stream (or the legacy SSE stream): 100 MB of one line, no newline, ever. */
        flood(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: ", 'g',
              FLOOD_BYTES, "");
        forever();
    }
    if (strncmp(req, "GET ", 4) == 0) {
        respond(fd, "405 Method Not Allowed", "Allow: POST\r\n", "text/plain", "");
        return;
    }
    if (strncmp(req, "DELETE ", 7) == 0) {
        respond(fd, "200 OK", NULL, "text/plain", "");
        return;
    }
    body_id(body, id, sizeof(id));
    if (strstr(body, "\"method\":\"initialize\"")) {
        if (mode_is("hang-init"))
            forever();
        answer_initialize(fd, id);
    } else if (strstr(body, "\"method\":\"tools/list\"")) {
        char b[512];
        snprintf(b, sizeof(b),
                 "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"tools\":[{\"name\":\"t\","
                 "\"inputSchema\":{\"type\":\"object\"}}]}}",
                 id);
        respond(fd, "200 OK", NULL, "application/json", b);
    } else if (strstr(body, "\"method\":\"tools/call\"")) {
        answer_call(fd, id);
    } else if (!strstr(body, "\"method\"") || strstr(body, "\"method\":\"notifications/")) {
        respond(fd, "202 Accepted", NULL, "text/plain", "");
    } else {
        char b[256];
        snprintf(b, sizeof(b),
                 "{\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":-32601,\"message\":\"no\"}}",
                 id);
        respond(fd, "200 OK", NULL, "application/json", b);
    }
}

/* One connection: requests one after the other (keep-alive) until EOF. */
static void serve_conn(int fd)
{
    char *buf = malloc(REQ_MAX + 1);
    size_t have = 0;

    buf[0] = '\0';
    for (;;) {
        char *end = NULL;
        ssize_t n;
        while (!(end = strstr(buf, "\r\n\r\n"))) {
            if (have >= REQ_MAX || (n = read(fd, buf + have, REQ_MAX - have)) <= 0)
                _exit(0);
            have += (size_t)n;
            buf[have] = '\0';
        }
        const char *cl = strcasestr(buf, "\r\ncontent-length:");
        size_t body_len = cl && cl < end ? strtoul(cl + 17, NULL, 10) : 0;
        size_t total = (size_t)(end + 4 - buf) + body_len;
        while (have < total) {
            if (total > REQ_MAX || (n = read(fd, buf + have, REQ_MAX - have)) <= 0)
                _exit(0);
            have += (size_t)n;
            buf[have] = '\0';
        }
        log_headers(buf, end + 2);
        char saved = buf[total];
        buf[total] = '\0';
        serve_one(fd, buf, end + 4);
        buf[total] = saved;
        memmove(buf, buf + total, have - total);
        have -= total;
        buf[have] = '\0';
    }
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {{"mode", required_argument, NULL, 'm'},
                                         {"log", required_argument, NULL, 'l'},
                                         {"port-file", required_argument, NULL, 'f'},
                                         {NULL, 0, NULL, 0}};
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t sl = sizeof(sa);
    int c, lfd;

    opt.mode = "plain";
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'm')
            opt.mode = optarg;
        else if (c == 'l')
            opt.log_path = optarg;
        else if (c == 'f')
            opt.port_file = optarg;
        else
            return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    signal(SIGCHLD, SIG_IGN); /* children are reaped by the kernel */
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 64) < 0 ||
        getsockname(lfd, (struct sockaddr *)&sa, &sl) < 0) {
        perror("raw-http-server: listen");
        return 1;
    }
    if (opt.port_file) {
        char tmp[4096];
        snprintf(tmp, sizeof(tmp), "%s.tmp", opt.port_file);
        FILE *f = fopen(tmp, "w");
        if (!f)
            return 1;
        fprintf(f, "%d\n", ntohs(sa.sin_port));
        fclose(f);
        rename(tmp, opt.port_file);
    }
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        if (fork() == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL); /* a killed server takes its connections along */
            if (getppid() == 1)
                _exit(0);
            close(lfd);
            serve_conn(fd);
        }
        close(fd);
    }
}
