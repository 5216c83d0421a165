// SPDX-License-Identifier: MIT
// oauth-server: a test MCP server that is also its own OAuth authorization server (evhttp):
// protected resource metadata, AS metadata, DCR, authorize (redirects at once), token with
// PKCE check, rotating refresh tokens, short-lived access tokens, and revocation on demand.
// Hostile modes (issue 40): a token endpoint on another host (--token-endpoint), another
// authorization server named by the resource (--other-as, fault other-as), a refresh answer held
// until released (fault hold-refresh), a refresh refused unless it names the sign-in's resource
// (fault root-resource), escape sequences in an endpoint and in an error (esc-endpoint,
// esc-error). Token requests are logged with what they carried, so a test sees what leaked.

#include <arpa/inet.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <yajl/yajl_tree.h>

#include "common/hash.h"

/* Tokens issued in one test run: a handful per sign-in and refresh. */
#define MAX_TOKENS 64
/* Request bodies here are tiny JSON-RPC messages and forms. */
#define BODY_MAX 65536

typedef struct Tok {
    char value[64];
    bool refresh, revoked;
    time_t expires;
    char resource[256]; /* a refresh token: the resource its sign-in was for */
} Tok;

static struct {
    int port;
    const char *port_file;
    long expires_in;
    Tok toks[MAX_TOKENS];
    int n_toks, serial, refreshes, codes;
    char challenge[128];
    char fault[32]; /* set by GET /fault/NAME: bad-state, no-access-token, garbage-meta, no-pkce,
                       other-resource, wrong-iss, meta-issuer; GET /fault/none clears it */
    FILE *log;
    const char *bind_addr, *token_endpoint, *other_as;
    struct evhttp_request *held; /* a refresh whose answer waits for GET /release-refresh */
    Tok *held_at, *held_rt;
} st = {.expires_in = 3600, .bind_addr = "127.0.0.1"};

static const char *base_url(void)
{
    static char b[64];
    snprintf(b, sizeof(b), "http://%s:%d", st.bind_addr, st.port);
    return b;
}

static bool fault(const char *name)
{
    return strcmp(st.fault, name) == 0;
}

static Tok *issue(bool refresh, long ttl)
{
    Tok *t = &st.toks[st.n_toks++ % MAX_TOKENS];
    snprintf(t->value, sizeof(t->value), "%s-%d", refresh ? "rt" : "at", ++st.serial);
    t->refresh = refresh;
    t->revoked = false;
    t->expires = ttl ? time(NULL) + ttl : 0;
    return t;
}

static Tok *find(const char *v, bool refresh)
{
    for (int i = 0; v && i < MAX_TOKENS && i < st.n_toks; i++)
        if (st.toks[i].refresh == refresh && strcmp(st.toks[i].value, v) == 0)
            return &st.toks[i];
    return NULL;
}

static void reply(struct evhttp_request *req, int code, const char *ctype, const char *body)
{
    struct evbuffer *b = evbuffer_new();
    if (ctype)
        evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", ctype);
    if (body)
        evbuffer_add(b, body, strlen(body));
    evhttp_send_reply(req, code, code < 300 ? "OK" : code < 400 ? "Found" : "Error", b);
    evbuffer_free(b);
}

static char *body_of(struct evhttp_request *req)
{
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    size_t n = evbuffer_get_length(in);
    char *s = malloc(n + 1);
    if (n > BODY_MAX)
        n = BODY_MAX;
    evbuffer_remove(in, s, n);
    s[n] = '\0';
    return s;
}

static void b64url(char *out, const unsigned char *d, size_t n)
{
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = d[i] << 16 | (i + 1 < n ? d[i + 1] << 8 : 0) | (i + 2 < n ? d[i + 2] : 0);
        out[o++] = t[v >> 18 & 63];
        out[o++] = t[v >> 12 & 63];
        if (i + 1 < n)
            out[o++] = t[v >> 6 & 63];
        if (i + 2 < n)
            out[o++] = t[v & 63];
    }
    out[o] = '\0';
}

/* Hostile token answers (h-red2): an expires_in past any clock, or an access token of 200 KB. */
#define HUGE_TOKEN_BYTES (200 * 1024)
static bool token_json_hostile(struct evhttp_request *req, Tok *at, Tok *rt)
{
    char *b;

    if (fault("huge-expiry")) {
        char t[512];
        snprintf(t, sizeof(t),
                 "{\"access_token\":\"%s\",\"token_type\":\"Bearer\","
                 "\"expires_in\":9223372036854775807,\"refresh_token\":\"%s\"}",
                 at->value, rt->value);
        reply(req, 200, "application/json", t);
        return true;
    }
    if (!fault("huge-token"))
        return false;
    b = malloc(HUGE_TOKEN_BYTES + 256);
    strcpy(b, "{\"token_type\":\"Bearer\",\"access_token\":\"");
    memset(b + strlen(b), 'A', HUGE_TOKEN_BYTES);
    strcpy(b + strlen("{\"token_type\":\"Bearer\",\"access_token\":\"") + HUGE_TOKEN_BYTES, "\"}");
    reply(req, 200, "application/json", b);
    free(b);
    return true;
}

static void token_json(struct evhttp_request *req, Tok *at, Tok *rt)
{
    char b[512];

    if (token_json_hostile(req, at, rt))
        return;
    if (fault("no-access-token")) {
        reply(req, 200, "application/json", "{\"token_type\":\"Bearer\",\"expires_in\":60}");
        return;
    }
    snprintf(b, sizeof(b),
             "{\"access_token\":\"%s\",\"token_type\":\"Bearer\",\"expires_in\":%ld,"
             "\"refresh_token\":\"%s\",\"scope\":\"mcp\"}",
             at->value, st.expires_in, rt->value);
    reply(req, 200, "application/json", b);
}

static void log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void log_line(const char *fmt, ...)
{
    va_list ap;

    if (!st.log)
        return;
    va_start(ap, fmt);
    vfprintf(st.log, fmt, ap);
    va_end(ap);
    fputc('\n', st.log);
    fflush(st.log);
}

/* The held refresh's client went away (mcpd cancelled it): nothing is answered. */
static void on_held_closed(struct evhttp_connection *conn, void *arg)
{
    (void)conn, (void)arg;
    if (st.held)
        log_line("held refresh: the client went away");
    st.held = NULL;
}

static void hold(struct evhttp_request *req, Tok *at, Tok *rt, const char *res)
{
    st.held = req;
    st.held_at = at;
    st.held_rt = rt;
    snprintf(rt->resource, sizeof(rt->resource), "%s", res ? res : "");
    evhttp_connection_set_closecb(evhttp_request_get_connection(req), on_held_closed, NULL);
    log_line("refresh held (would give %s)", at->value);
}

/* GET /release-refresh: the held refresh is answered now, if its client still waits. */
static void release(struct evhttp_request *req)
{
    struct evhttp_request *h = st.held;

    st.held = NULL;
    if (h) {
        evhttp_connection_set_closecb(evhttp_request_get_connection(h), NULL, NULL);
        log_line("held refresh answered with %s", st.held_at->value);
        token_json(h, st.held_at, st.held_rt);
    } else {
        log_line("nothing held to release");
    }
    reply(req, 200, "text/plain", h ? "released\n" : "none\n");
}

static void on_token(struct evhttp_request *req)
{
    char *body = body_of(req);
    struct evkeyvalq kv;
    const char *grant, *v;

    TAILQ_INIT(&kv);
    evhttp_parse_query_str(body, &kv);
    grant = evhttp_find_header(&kv, "grant_type");
    /* What the request carried, for a test that asks whether a secret reached this host. */
    log_line("TOKEN grant=%s basic=%s secret=%s verifier=%s code=%s", grant ? grant : "-",
             evhttp_find_header(evhttp_request_get_input_headers(req), "Authorization") ? "yes"
                                                                                        : "no",
             evhttp_find_header(&kv, "client_secret") ? "yes" : "no",
             evhttp_find_header(&kv, "code_verifier") ? "yes" : "no",
             evhttp_find_header(&kv, "code") ? "yes" : "no");
    if (fault("esc-error")) {
        /* An error whose description hides text (ESC[8m) and retitles the terminal (OSC 0). */
        reply(req, 400, "application/json",
              "{\"error\":\"invalid_grant\",\"error_description\":\"bad "
              "\\u001b[8mhidden\\u001b]0;title\\u0007 code\"}");
    } else if (grant && strcmp(grant, "authorization_code") == 0) {
        unsigned char d[SHA256_DIGEST_SIZE];
        char c[64];
        Sha256 s;
        v = evhttp_find_header(&kv, "code_verifier");
        sha256_init(&s);
        sha256_update(&s, v ? v : "", v ? strlen(v) : 0);
        sha256_final(&s, d);
        b64url(c, d, sizeof(d));
        if (!v || strcmp(c, st.challenge) != 0 || !evhttp_find_header(&kv, "resource")) {
            reply(req, 400, "application/json", "{\"error\":\"invalid_grant\"}");
        } else {
            Tok *at = issue(false, st.expires_in), *rt = issue(true, 0);
            snprintf(rt->resource, sizeof(rt->resource), "%s", evhttp_find_header(&kv, "resource"));
            log_line("code grant gave %s %s", at->value, rt->value);
            token_json(req, at, rt);
        }
    } else if (grant && strcmp(grant, "refresh_token") == 0) {
        Tok *rt = find(evhttp_find_header(&kv, "refresh_token"), true);
        const char *res = evhttp_find_header(&kv, "resource");
        if (!rt || rt->revoked) {
            reply(req, 400, "application/json", "{\"error\":\"invalid_grant\"}");
        } else if (fault("root-resource") && (!res || strcmp(res, rt->resource) != 0)) {
            /* RFC 8707 2.2: a refresh may not ask for another resource than its grant. */
            reply(req, 400, "application/json", "{\"error\":\"invalid_target\"}");
        } else {
            rt->revoked = true; /* rotation: a refresh token is good once */
            st.refreshes++;
            if (fault("hold-refresh") && !st.held)
                hold(req, issue(false, st.expires_in), issue(true, 0), res);
            else
                token_json(req, issue(false, st.expires_in), issue(true, 0));
        }
    } else {
        reply(req, 400, "application/json", "{\"error\":\"unsupported_grant_type\"}");
    }
    evhttp_clear_headers(&kv);
    free(body);
}

static void on_authorize(struct evhttp_request *req)
{
    const char *q = evhttp_uri_get_query(evhttp_request_get_evhttp_uri(req));
    const char *ru, *state, *cc, *m;
    struct evkeyvalq kv;
    char loc[1024];

    TAILQ_INIT(&kv);
    evhttp_parse_query_str(q ? q : "", &kv);
    ru = evhttp_find_header(&kv, "redirect_uri");
    state = evhttp_find_header(&kv, "state");
    cc = evhttp_find_header(&kv, "code_challenge");
    m = evhttp_find_header(&kv, "code_challenge_method");
    log_line("AUTHORIZE client_id=%s",
             evhttp_find_header(&kv, "client_id") ? evhttp_find_header(&kv, "client_id") : "-");
    if (!ru || !state || !cc || !m || strcmp(m, "S256") != 0 ||
        (strncmp(ru, "http://127.0.0.1:", 17) != 0 && strncmp(ru, "http://localhost:", 17) != 0) ||
        strlen(cc) >= sizeof(st.challenge)) {
        reply(req, 400, "text/plain", "bad authorization request\n");
    } else {
        strcpy(st.challenge, cc);
        snprintf(loc, sizeof(loc), "%s?code=code-%d&state=%s%s%s", ru, ++st.codes, state,
                 fault("bad-state") ? "x" : "",
                 fault("wrong-iss") ? "&iss=https%3A%2F%2Fevil.example" : "");
        evhttp_add_header(evhttp_request_get_output_headers(req), "Location", loc);
        reply(req, 302, NULL, NULL);
    }
    evhttp_clear_headers(&kv);
}

static bool authorized(struct evhttp_request *req)
{
    const char *h = evhttp_find_header(evhttp_request_get_input_headers(req), "Authorization");
    Tok *t = h && strncmp(h, "Bearer ", 7) == 0 ? find(h + 7, false) : NULL;
    char ch[256];

    if (t && !t->revoked && (!t->expires || time(NULL) < t->expires))
        return true;
    snprintf(ch, sizeof(ch),
             "Bearer error=\"invalid_token\", resource_metadata=\"%s/.well-known/"
             "oauth-protected-resource/mcp\"%s",
             base_url(),
             fault("esc-challenge") ? ", error_description=\"\x1b[8mhidden\x1b]0;title\x07\"" : "");
    evhttp_add_header(evhttp_request_get_output_headers(req), "WWW-Authenticate", ch);
    reply(req, 401, "application/json", "{\"error\":\"invalid_token\"}");
    return false;
}

static void on_mcp(struct evhttp_request *req)
{
    char *body, out[512];
    yajl_val v, id, method;
    const char *path[] = {"id", NULL}, *mpath[] = {"method", NULL};

    if (evhttp_request_get_command(req) != EVHTTP_REQ_POST) {
        reply(req, 405, NULL, NULL);
        return;
    }
    if (!authorized(req))
        return;
    body = body_of(req);
    v = yajl_tree_parse(body, NULL, 0);
    id = yajl_tree_get(v, path, yajl_t_number);
    method = yajl_tree_get(v, mpath, yajl_t_string);
    if (!id) {
        reply(req, 202, NULL, NULL);
    } else {
        const char *m = YAJL_GET_STRING(method);
        long long i = YAJL_GET_INTEGER(id);
        if (m && strcmp(m, "initialize") == 0)
            snprintf(out, sizeof(out),
                     "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"protocolVersion\":"
                     "\"2025-06-18\",\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":"
                     "\"oauth-server\",\"version\":\"1\"}}}",
                     i);
        else if (m && strcmp(m, "tools/list") == 0)
            snprintf(out, sizeof(out),
                     "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"tools\":[{\"name\":"
                     "\"whoami\",\"inputSchema\":{\"type\":\"object\"}}]}}",
                     i);
        else if (m && strcmp(m, "tools/call") == 0)
            snprintf(out, sizeof(out),
                     "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{\"content\":[{\"type\":"
                     "\"text\",\"text\":\"signed-in call %d\"}]}}",
                     i, st.serial);
        else
            snprintf(out, sizeof(out), "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"result\":{}}", i);
        reply(req, 200, "application/json", out);
    }
    yajl_tree_free(v);
    free(body);
}

static void on_request(struct evhttp_request *req, void *arg)
{
    const char *p = evhttp_uri_get_path(evhttp_request_get_evhttp_uri(req));
    char b[1024];

    (void)arg;
    if (st.log)
        fprintf(st.log, "%s %s\n",
                evhttp_request_get_command(req) == EVHTTP_REQ_POST ? "POST" : "GET", p),
            fflush(st.log);
    if (strcmp(p, "/mcp") == 0) {
        on_mcp(req);
    } else if (strcmp(p, "/.well-known/oauth-protected-resource/mcp") == 0) {
        snprintf(b, sizeof(b), "{\"resource\":\"%s/%s\",\"authorization_servers\":[\"%s\"]}",
                 base_url(),
                 fault("other-resource")  ? "other"
                 : fault("root-resource") ? ""
                                          : "mcp",
                 fault("other-as") && st.other_as ? st.other_as : base_url());
        reply(req, 200, "application/json", b);
    } else if (strcmp(p, "/.well-known/oauth-authorization-server") == 0 && fault("garbage-meta")) {
        reply(req, 200, "application/json", "<html>surely not JSON");
    } else if (strcmp(p, "/.well-known/oauth-authorization-server") == 0) {
        char tok_ep[300];
        snprintf(tok_ep, sizeof(tok_ep), "%s/token", base_url());
        snprintf(b, sizeof(b),
                 "{\"issuer\":\"%s\",\"authorization_endpoint\":\"%s/authorize%s\","
                 "\"token_endpoint\":\"%s\",\"registration_endpoint\":\"%s/register\","
                 "\"code_challenge_methods_supported\":[\"%s\"],"
                 "\"token_endpoint_auth_methods_supported\":[\"none\"]}",
                 fault("meta-issuer") ? "https://attacker.example" : base_url(), base_url(),
                 fault("esc-endpoint") ? "?x=\\u001b[8mhidden" : "",
                 st.token_endpoint ? st.token_endpoint : tok_ep, base_url(),
                 fault("no-pkce") ? "plain" : "S256");
        reply(req, 200, "application/json", b);
    } else if (strcmp(p, "/register") == 0) {
        free(body_of(req));
        reply(req, 201, "application/json", "{\"client_id\":\"test-client\"}");
    } else if (strcmp(p, "/authorize") == 0) {
        on_authorize(req);
    } else if (strcmp(p, "/token") == 0) {
        on_token(req);
    } else if (strcmp(p, "/release-refresh") == 0) {
        release(req);
    } else if (strcmp(p, "/revoke-all") == 0) {
        for (int i = 0; i < MAX_TOKENS; i++)
            st.toks[i].revoked = true;
        reply(req, 200, "text/plain", "revoked\n");
    } else if (strcmp(p, "/expire-access") == 0) {
        for (int i = 0; i < MAX_TOKENS; i++)
            if (!st.toks[i].refresh)
                st.toks[i].expires = 1;
        reply(req, 200, "text/plain", "expired\n");
    } else if (strncmp(p, "/fault/", 7) == 0) {
        snprintf(st.fault, sizeof(st.fault), "%s", p + 7);
        reply(req, 200, "text/plain", "ok\n");
    } else if (strcmp(p, "/stats") == 0) {
        snprintf(b, sizeof(b), "{\"refreshes\":%d,\"issued\":%d}", st.refreshes, st.serial);
        reply(req, 200, "application/json", b);
    } else {
        reply(req, 404, "text/plain", "not found\n");
    }
}

static void on_signal(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    event_base_loopexit(arg, NULL);
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"port-file", required_argument, NULL, 'f'},
        {"log", required_argument, NULL, 'l'},
        {"expires-in", required_argument, NULL, 'e'},
        {"bind", required_argument, NULL, 'b'},
        {"token-endpoint", required_argument, NULL, 't'},
        {"other-as", required_argument, NULL, 'o'},
        {"fault", required_argument, NULL, 'F'},
        {NULL, 0, NULL, 0},
    };
    struct event_base *base;
    struct evhttp *http;
    struct evhttp_bound_socket *bound;
    struct sockaddr_in sin;
    socklen_t len = sizeof(sin);
    struct event *sig;
    int ch;

    while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        if (ch == 'f')
            st.port_file = optarg;
        else if (ch == 'l')
            st.log = fopen(optarg, "a");
        else if (ch == 'e')
            st.expires_in = atol(optarg);
        else if (ch == 'b')
            st.bind_addr = optarg;
        else if (ch == 't')
            st.token_endpoint = optarg;
        else if (ch == 'o')
            st.other_as = optarg;
        else if (ch == 'F')
            snprintf(st.fault, sizeof(st.fault), "%s", optarg); /* from the first request on */
        else {
            fprintf(stderr,
                    "usage: oauth-server [--port-file F] [--log F] [--expires-in S] "
                    "[--bind ADDR] [--token-endpoint URL] [--other-as URL] [--fault NAME]\n");
            return 2;
        }
    }
    signal(SIGPIPE, SIG_IGN);
    base = event_base_new();
    http = evhttp_new(base);
    evhttp_set_gencb(http, on_request, NULL);
    /* Loopback only (or an address of a test's private network namespace). */
    bound = evhttp_bind_socket_with_handle(http, st.bind_addr, 0);
    if (!bound)
        return 1;
    getsockname(evhttp_bound_socket_get_fd(bound), (struct sockaddr *)&sin, &len);
    st.port = ntohs(sin.sin_port);
    if (st.port_file) {
        char tmp[512];
        FILE *f;
        snprintf(tmp, sizeof(tmp), "%s.tmp", st.port_file);
        if (!(f = fopen(tmp, "w")))
            return 1;
        fprintf(f, "%d\n", st.port);
        fclose(f);
        rename(tmp, st.port_file); /* the test sees the whole number or nothing */
    }
    sig = evsignal_new(base, SIGTERM, on_signal, base);
    event_add(sig, NULL);
    event_base_dispatch(base);
    event_free(sig);
    evhttp_free(http);
    event_base_free(base);
    if (st.log)
        fclose(st.log);
    return 0;
}
