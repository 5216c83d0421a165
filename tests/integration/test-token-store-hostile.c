// SPDX-License-Identifier: MIT
// test-token-store-hostile: a hostile OAuth token store (FIFO, link, mode 0666, truncated, deep,
// huge).

/*
 * Round 2 of the attacks on the files mcpd reads (task h-red2). The token store is read on the
 * first request to an HTTP server; a FIFO under its name hung that open() for good, and with it
 * the whole daemon. Each store below must be refused with a warning naming the file and what to
 * do, the server needing the token then asks for a sign-in (401), and everyone else is served.
 * The last case, a proper store, proves the token is used when the file is fine.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/bg.h"
#include "tests/integration/harness.h"

#define CONTROL "mcp_steady_echo"
#define TOKEN   "t0k-red2"
/* Deeper than JSON_MAX_DEPTH (128) many times over. */
#define DEEP_LEVELS 100000
/* Past the store's 1 MiB bound. */
#define HUGE_BYTES (2u * 1024u * 1024u)

typedef enum { K_FIFO, K_LINK, K_MODE, K_TRUNC, K_DEEP, K_HUGE, K_GOOD, K_DIR } Kind;

static const struct {
    Kind kind;
    const char *name;
    const char *want; /* in mcpd's log, or NULL for the proper store */
} cases[] = {
    {K_FIFO, "fifo", "it must be a regular file"},
    {K_LINK, "link", "it is a symbolic link"},
    {K_MODE, "mode", "mode 0600"},
    {K_TRUNC, "trunc", "not a JSON object with a \"tokens\" array ("},
    {K_DEEP, "deep", "nested deeper than 128 levels"},
    {K_HUGE, "huge", "of at most 1048576 bytes"},
    {K_GOOD, "good", NULL},
    {K_DIR, "dir", NULL}, /* a proper store in a directory anyone may write */
};

static void write_text(const char *path, const char *text, size_t n, mode_t mode)
{
    FILE *f = fopen(path, "w");

    CHECK_MSG(f && fwrite(text, 1, n, f) == n, "write %s", path);
    if (f)
        fclose(f);
    chmod(path, mode);
}

/* Put the store of kind k in place for the server at url. */
static void make_store(Harness *h, Kind k, const char *url)
{
    _cleanup_free_ char *dir = xasprintf("%s/state/mcpd", h->dir);
    _cleanup_free_ char *path = xasprintf("%s/oauth-tokens.json", dir);
    _cleanup_free_ char *good = xasprintf(
        "{\"version\":1,\"tokens\":[{\"resource\":\"%s\",\"accessToken\":\"" TOKEN "\"}]}\n", url);
    _cleanup_free_ char *target = xasprintf("%s/elsewhere.json", h->dir);
    char *big;

    h_sh("mkdir -p '%s' && chmod 700 '%s'", dir, dir);
    switch (k) {
    case K_FIFO:
        h_sh("mkfifo -m 600 '%s'", path);
        break;
    case K_LINK:
        write_text(target, good, strlen(good), 0600);
        CHECK(symlink(target, path) == 0);
        break;
    case K_MODE:
        write_text(path, good, strlen(good), 0666);
        break;
    case K_TRUNC:
        write_text(path, good, strlen(good) / 2, 0600);
        break;
    case K_DEEP:
        big = xmalloc(DEEP_LEVELS);
        memset(big, '[', DEEP_LEVELS);
        write_text(path, big, DEEP_LEVELS, 0600);
        free(big);
        break;
    case K_HUGE:
        big = xmalloc(HUGE_BYTES);
        memset(big, ' ', HUGE_BYTES);
        memcpy(big, good, strlen(good));
        write_text(path, big, HUGE_BYTES, 0600);
        free(big);
        break;
    case K_GOOD:
        write_text(path, good, strlen(good), 0600);
        break;
    case K_DIR:
        write_text(path, good, strlen(good), 0600);
        chmod(dir, 0777);
        break;
    }
}

/* The server's state once decided: "connected" or "failed" (needing a sign-in). */
static bool wait_decided(mcpc_client *c, const char *name, bool want_connected)
{
    for (uint64_t end = now_ms() + H_WAIT_MS; now_ms() < end; h_sleep_ms(100)) {
        _cleanup_json_ yajl_val st = h_status(c);
        yajl_val s = h_server(st, name);
        const char *state = json_get_string(s, "state");
        if (want_connected && streq(state, "connected"))
            return true;
        if (!want_connected && streq(state, "failed") &&
            YAJL_IS_TRUE(json_get(s, "needsAuthorization")))
            return true;
    }
    return false;
}

static void run_case(size_t i)
{
    _cleanup_free_ char *hname = xasprintf("token-store-%s", cases[i].name);
    _cleanup_free_ char *port_file = NULL, *out = NULL, *url = NULL, *cfg = NULL, *log = NULL;
    Harness h;
    mcpc_client *c;
    pid_t srv;
    int port;

    h_setup(&h, hname);
    port_file = xasprintf("%s/tok.port", h.dir);
    out = xasprintf("%s/tok.out", h.dir);
    char *argv[] = {getenv("HTTP_SERVER"), "--port-file", port_file, "--token", TOKEN, NULL};
    srv = bg_spawn(argv, "MCPD_TEST_TAG=", out);
    port = bg_wait_port_file(port_file, H_WAIT_MS);
    CHECK(port > 0);
    url = xasprintf("http://127.0.0.1:%d/mcp", port);
    make_store(&h, cases[i].kind, url);
    cfg = xasprintf("{\"mcpServers\": {\"steady\": {\"command\": \"%s\"},"
                    " \"tok\": {\"type\": \"http\", \"url\": \"%s\", \"reconnect\": false}}}",
                    h_fake(), url);
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    c = h_client(&h, hname);
    h_settle(&h, c, "steady", NULL);
    CHECK_MSG(wait_decided(c, "tok", !cases[i].want), "%s: tok is not %s", cases[i].name,
              cases[i].want ? "failed for want of a sign-in" : "connected");
    log = h_read_file(h.log);
    if (cases[i].want) {
        _cleanup_free_ char *path = xasprintf("%s/state/mcpd/oauth-tokens.json", h.dir);
        CHECK_MSG(log && strstr(log, path) && strstr(log, cases[i].want) &&
                      strstr(log, "remove it and sign in again"),
                  "%s: no warning naming the store and \"%s\"", cases[i].name, cases[i].want);
    }
    if (cases[i].kind == K_DIR) {
        /* Read, the store is fine; written (here by a logout), the directory is refused. */
        _cleanup_free_ char *res = NULL;
        int r = mcpc_request(c, "mcpd/logout", "{\"server\":\"tok\"}", &res);
        CHECK_MSG(r != 0 && strstr(mcpc_errmsg(c), "/state/mcpd has mode 0777") &&
                      strstr(mcpc_errmsg(c), "chmod 0700"),
                  "dir: logout gave %d: %s", r, r ? mcpc_errmsg(c) : res);
    }
    h_check_healthy(&h, cases[i].name, CONTROL);
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    bg_stop(srv);
    h_teardown(&h);
}

int main(void)
{
    for (size_t i = 0; i < N_ELEMENTS(cases); i++)
        run_case(i);
    return h_finish("test-token-store-hostile");
}
