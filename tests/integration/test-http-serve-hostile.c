// SPDX-License-Identifier: MIT
// test-http-serve-hostile: attacks on mcpd's own HTTP endpoint (issue 35): 1,000 connections,
// a slowloris, a 1 GiB body, hostile chunked bodies and 100,000 header fields, while an agent
// keeps being served; then mcpd's fds and memory are back where they were.

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/util.h"
#include "tests/integration/harness.h"
#include "tests/integration/httpc.h"

/* Connections opened at once: twice mcpd's HTTP_MAX_CONNS (512). */
#define N_FLOOD 1000
/* Slowloris connections, each dripping a byte every SLOW_DRIP_MS into a head that never ends. */
#define N_SLOW       40
#define SLOW_DRIP_MS 100
/* partialLineTimeoutMs for this test: the whole-request bound (30 s by default), made short. */
#define REQUEST_TIMEOUT_MS 1000
/*
 * What mcpd's resident memory may stay above its level before the attacks: the allocator keeps
 * some freed memory for reuse; what an attack holds (16 MiB buffers, 1,000 connections' state)
 * would be far more.
 */
#define RSS_SLACK_KIB (12 * 1024)
/* ASan keeps freed memory in a 256 MiB quarantine by default, which would count as RSS. */
#define ASAN_QUARANTINE_OPTION "quarantine_size_mb=1"

static char *token_of(const Harness *h)
{
    _cleanup_free_ char *path = xasprintf("%s/run/mcpd/http-token", h->dir);
    return h_read_file(path);
}

/* An HTTP agent completes an initialize on the loopback port. */
static bool http_agent_ok(int port, const char *token)
{
    _cleanup_free_ char *auth = xasprintf("Authorization: Bearer %s\r\n", token);
    int fd = hc_tcp(port);
    HcResponse r = hc_post(fd, port, "/mcp", auth, HC_INITIALIZE);
    bool ok = r.status == 200 && strstr(r.body, "\"serverInfo\"");

    hc_free(&r);
    if (fd >= 0)
        close(fd);
    return ok;
}

static bool agent_ok(mcpc_client *c)
{
    int is_error = -1;
    _cleanup_free_ char *t = h_call_text(c, "mcp_fake_echo", "{\"text\":\"still\"}", &is_error);
    return streq(t, "still") && is_error == 0;
}

static void flood(int port, const char *token, mcpc_client *c)
{
    static int fds[N_FLOOD];
    int opened = 0;

    for (int i = 0; i < N_FLOOD; i++)
        if ((fds[i] = hc_tcp(port)) >= 0)
            opened++;
    CHECK_MSG(opened == N_FLOOD, "opened %d of %d connections", opened, N_FLOOD);
    h_sleep_ms(200);
    CHECK_MSG(agent_ok(c), "the line-protocol agent during 1,000 HTTP connections");
    CHECK_MSG(http_agent_ok(port, token), "an HTTP agent during 1,000 HTTP connections");
    for (int i = 0; i < N_FLOOD; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

static void slowloris(const Harness *h, mcpc_client *c)
{
    int fds[N_SLOW], closed = 0;

    for (int i = 0; i < N_SLOW; i++) {
        fds[i] = h_raw_connect(h);
        (void)h_raw_write(fds[i], "POST /mcp HTTP/1.1\r\n", 20);
    }
    /* Drip for three request timeouts: each connection is refused (408) and closed by then. */
    for (int t = 0; t < 3 * REQUEST_TIMEOUT_MS / SLOW_DRIP_MS; t++) {
        for (int i = 0; i < N_SLOW; i++)
            (void)!send(fds[i], "X", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
        h_sleep_ms(SLOW_DRIP_MS);
    }
    CHECK_MSG(agent_ok(c), "the agent during a slowloris");
    for (int i = 0; i < N_SLOW; i++) {
        HcResponse r = hc_read(fds[i], 2000);
        closed += r.status == 408;
        hc_free(&r);
        close(fds[i]);
    }
    CHECK_MSG(closed == N_SLOW, "%d of %d slow requests refused with 408", closed, N_SLOW);
}

/* A body announced as 1 GiB and sent until mcpd stops taking it: 413, then closed. */
static void huge_body(const Harness *h, mcpc_client *c)
{
    static char chunk[1 << 16];
    int fd = h_raw_connect(h);
    static const char head[] = "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                               "Content-Length: 1073741824\r\n\r\n";
    size_t sent = 0;

    memset(chunk, '7', sizeof(chunk));
    (void)h_raw_write(fd, head, sizeof(head) - 1);
    for (; sent < (1u << 30); sent += sizeof(chunk))
        if (!h_raw_write(fd, chunk, sizeof(chunk)))
            break;
    CHECK_MSG(sent < (1u << 30), "mcpd took the whole 1 GiB body instead of closing");
    CHECK_MSG(agent_ok(c), "the agent after a 1 GiB body");
    close(fd);
}

/* The head of a chunked POST, raw on the socket. */
#define CHUNKED_HEAD                                                                               \
    "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"                          \
    "Transfer-Encoding: chunked\r\n\r\n"

/* A chunked request refused with status: what it sent first, then more until mcpd stops it. */
static void chunked_refused(const Harness *h, const char *what, const char *first, const char *more,
                            int status)
{
    int fd = h_raw_connect(h);
    bool open = h_raw_write(fd, first, strlen(first));
    StrBuf block = STRBUF_INIT;

    /* more, again and again in 64 KiB writes (within the request's time bound), 1 MiB in all:
     * mcpd answers as soon as a bound is passed; a client still writing then fails. */
    while (more && block.len < 65536)
        strbuf_puts(&block, more);
    for (int i = 0; open && more && i < 16; i++)
        open = send(fd, block.data, block.len, MSG_NOSIGNAL) >= 0;
    strbuf_deinit(&block);
    HcResponse r = hc_read(fd, H_WAIT_MS);
    CHECK_MSG(r.status == status, "%s: %d, wanted %d", what, r.status, status);
    hc_free(&r);
    close(fd);
}

/* Hostile chunked bodies: each refused with its status, on its own connection. */
static void chunked_attacks(const Harness *h, mcpc_client *c)
{
    chunked_refused(h, "a chunk size of 2^96", CHUNKED_HEAD "FFFFFFFFFFFFFFFFFFFFFFFF\r\n", NULL,
                    413);
    chunked_refused(h, "a chunk past maxMessageBytes", CHUNKED_HEAD "7FFFFFFF\r\n", NULL, 413);
    chunked_refused(h, "a size that is not hex", CHUNKED_HEAD "zz\r\n{}\r\n0\r\n\r\n", NULL, 400);
    chunked_refused(h, "a size line that never ends", CHUNKED_HEAD "1", "0", 400);
    chunked_refused(h, "endless one-byte chunks", CHUNKED_HEAD, "1\r\n \r\n", 413);
    chunked_refused(h, "endless trailers", CHUNKED_HEAD "0\r\n", "X-Trailer: y\r\n", 431);
    /* Chunks dripping slowly: the whole-request time bound ends it. */
    int fd = h_raw_connect(h);
    (void)h_raw_write(fd, CHUNKED_HEAD, strlen(CHUNKED_HEAD));
    for (int t = 0; t < 3 * REQUEST_TIMEOUT_MS / SLOW_DRIP_MS; t++) {
        (void)!send(fd, "1\r\n \r\n", 6, MSG_NOSIGNAL | MSG_DONTWAIT);
        h_sleep_ms(SLOW_DRIP_MS);
    }
    HcResponse r = hc_read(fd, 2000);
    CHECK_MSG(r.status == 408, "chunks dripping past the request's time: %d", r.status);
    hc_free(&r);
    close(fd);
    CHECK_MSG(agent_ok(c), "the agent after hostile chunked bodies");
}

static void many_fields(const Harness *h)
{
    StrBuf sb = STRBUF_INIT;
    int fd = h_raw_connect(h);

    strbuf_puts(&sb, "POST /mcp HTTP/1.1\r\nHost: x\r\n");
    for (int i = 0; i < 100000; i++)
        strbuf_printf(&sb, "X-%d: y\r\n", i);
    strbuf_puts(&sb, "\r\n");
    (void)h_raw_write(fd, sb.data, sb.len);
    HcResponse r = hc_read(fd, H_WAIT_MS);
    CHECK_MSG(r.status == 431, "100,000 header fields: %d", r.status);
    hc_free(&r);
    close(fd);
    strbuf_deinit(&sb);
}

int main(void)
{
    Harness h;
    _cleanup_free_ char *cfg =
        xasprintf("{\"mcpServers\": {\"fake\": {\"command\": \"%s\"}}}", h_fake());
    _cleanup_free_ char *settings = xasprintf("{\"partialLineTimeoutMs\": %d}", REQUEST_TIMEOUT_MS);
    struct rlimit rl;

    const char *asan = getenv("ASAN_OPTIONS");
    _cleanup_free_ char *opts =
        asan && *asan ? xasprintf("%s:%s", asan, ASAN_QUARANTINE_OPTION) : NULL;

    setenv("ASAN_OPTIONS", opts ? opts : ASAN_QUARANTINE_OPTION, 1); /* mcpd inherits it */
    signal(SIGPIPE, SIG_IGN);
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < N_FLOOD + 256) {
        rl.rlim_cur = MIN(rl.rlim_max, (rlim_t)N_FLOOD + 256);
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    h_setup(&h, "http-serve-hostile");
    h_write_config(&h, cfg);
    h_write_settings(&h, settings);
    h_start(&h, "--listen", "127.0.0.1:0", NULL);
    mcpc_client *c = h_client(&h, "served-agent");
    h_settle(&h, c, "fake", NULL);
    int port = hc_port(&h);
    _cleanup_free_ char *token = token_of(&h);
    CHECK(port > 0 && token);
    /* Warm: the paths taken once, so what they allocate for good is in the baseline. */
    CHECK(http_agent_ok(port, token ? token : ""));
    many_fields(&h);
    long before = h_rss_kib(h.pid);

    flood(port, token ? token : "", c);
    slowloris(&h, c);
    huge_body(&h, c);
    chunked_attacks(&h, c);
    many_fields(&h);

    CHECK_MSG(agent_ok(c), "the agent after the attacks");
    mcpc_free(c);
    h_check_healthy(&h, "http-serve-hostile", "mcp_fake_echo");
    long after = h_rss_kib(h.pid);
    if (h_measurable("mcpd's resident memory"))
        CHECK_MSG(after <= before + RSS_SLACK_KIB, "mcpd's RSS %ld KiB after, %ld KiB before",
                  after, before);
    printf("# mcpd RSS: %ld KiB before the attacks, %ld KiB after\n", before, after);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("http-serve-hostile");
}
