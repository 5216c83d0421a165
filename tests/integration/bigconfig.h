// SPDX-License-Identifier: MIT
// bigconfig: config files of the largest size mcpd reads (4 MiB) in the shapes of issue 39 item 7,
// and an agent that pings mcpd meanwhile and keeps its slowest answer.
#pragma once

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "client/include/mcpc.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "tests/integration/harness.h"

/* The shapes: one server of 200 000 env keys, and 1000 servers with nested objects. */
#define BIG_ENV_KEYS    200000
#define BIG_SERVERS     1000
#define BIG_FILE_BYTES  (4u * 1024u * 1024u) /* config-read.c's CONFIG_MAX_FILE_BYTES */
#define BIG_NESTED_KEYS 50                   /* objects nested under each server's "metadata" */

/* {"mcpServers":{"big":{"command":...,"env":{"K000000":"000000",...}}}}: ~3.6 MB at 200 000. */
static inline char *big_env_file(size_t n_keys)
{
    StrBuf sb = STRBUF_INIT;

    strbuf_puts(&sb, "{\"mcpServers\":{\"big\":{\"command\":\"/bin/true\",\"env\":{");
    for (size_t i = 0; i < n_keys; i++)
        strbuf_printf(&sb, "%s\"K%06zu\":\"%06zu\"", i ? "," : "", i, i);
    strbuf_puts(&sb, "}}}}");
    return strbuf_detach(&sb, NULL);
}

/* n servers, each with args, env and BIG_NESTED_KEYS nested objects: ~3.3 MB at 1000. */
static inline char *big_servers_file(size_t n_servers)
{
    StrBuf sb = STRBUF_INIT;

    strbuf_puts(&sb, "{\"mcpServers\":{");
    for (size_t s = 0; s < n_servers; s++) {
        strbuf_printf(&sb, "%s\"s%04zu\":{\"command\":\"/bin/true\",\"args\":[", s ? "," : "", s);
        for (int a = 0; a < 20; a++)
            strbuf_printf(&sb, "%s\"a%d\"", a ? "," : "", a);
        strbuf_puts(&sb, "],\"env\":{");
        for (int e = 0; e < 40; e++)
            strbuf_printf(&sb, "%s\"E%03d\":\"xxxxxxxxxxxxxxxxxxxx\"", e ? "," : "", e);
        strbuf_puts(&sb, "},\"metadata\":{\"deep\":{");
        for (int k = 0; k < BIG_NESTED_KEYS; k++)
            strbuf_printf(&sb, "%s\"l%d\":{\"m\":[1,2,{\"k\":\"vvvvvvvvvv\"}]}", k ? "," : "", k);
        strbuf_puts(&sb, "}}}");
    }
    strbuf_puts(&sb, "}}");
    return strbuf_detach(&sb, NULL);
}

/* Write text as <dir>/.mcp.json (dir made); fatal when it cannot be written. */
static inline void big_write_mcp_json(const char *dir, const char *text)
{
    _cleanup_free_ char *path = paths_join(dir, ".mcp.json");

    paths_mkdir_p(dir, 0700);
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        h_sh("echo cannot write %s; false", path);
}

/* An agent pinging mcpd in a loop on its own thread, keeping the slowest round trip. */
typedef struct BigPinger {
    mcpc_client *c;
    pthread_t thread;
    atomic_bool stop;
    atomic_uint_fast64_t max_us, n_pings, n_failed;
} BigPinger;

static inline void *big_pinger_run(void *arg)
{
    BigPinger *p = arg;

    while (!atomic_load(&p->stop)) {
        char *out = NULL;
        uint64_t t0 = now_us();
        int r = mcpc_request(p->c, "ping", "{}", &out);
        uint64_t dt = now_us() - t0;
        free(out);
        if (r != 0)
            atomic_fetch_add(&p->n_failed, 1);
        atomic_fetch_add(&p->n_pings, 1);
        if (dt > atomic_load(&p->max_us))
            atomic_store(&p->max_us, dt);
        h_sleep_ms(1);
    }
    return NULL;
}

/* Start pinging through c (connected already). */
static inline void big_pinger_start(BigPinger *p, mcpc_client *c)
{
    p->c = c;
    atomic_store(&p->stop, false);
    atomic_store(&p->max_us, 0);
    atomic_store(&p->n_pings, 0);
    atomic_store(&p->n_failed, 0);
    pthread_create(&p->thread, NULL, big_pinger_run, p);
}

/* Stop, after at least one more ping than before the call: the window is covered. */
static inline void big_pinger_stop(BigPinger *p)
{
    uint64_t n = atomic_load(&p->n_pings);

    while (atomic_load(&p->n_pings) < n + 2)
        h_sleep_ms(1);
    atomic_store(&p->stop, true);
    pthread_join(p->thread, NULL);
}

/*
 * Initialize an agent in root and list its tools: the list waits for the discovery of root's
 * files. Return the time both took, in ms.
 */
static inline int64_t big_initialize_in(Harness *h, const char *root, mcpc_client **cp)
{
    mcpc_options o = {
        .socket_path = h->socket, .client_name = "big-agent", .cwd = root, .timeout_ms = 600000};
    uint64_t t0 = now_us();
    mcpc_client *c = mcpc_new(&o);
    int r = mcpc_connect(c);

    char *out = NULL;

    if (r != 0 || mcpc_request(c, "tools/list", "{}", &out) != 0) {
        h_dump_log(h);
        h_sh("echo 'initialize or tools/list in %s: %s'; false", root, mcpc_errmsg(c));
    }
    free(out);
    *cp = c;
    return (int64_t)(now_us() - t0) / 1000;
}
