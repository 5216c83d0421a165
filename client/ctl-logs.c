// SPDX-License-Identifier: MIT
// ctl-logs: mcpctl logs: a server's stderr and run records, once or followed.

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/ctl-logs.h"
#include "common/json.h"
#include "common/mcp.h"
#include "common/strbuf.h"
#include "common/util.h"

/*
 * logs -f asks for news this often: a person watching sees a line within a blink, and one
 * small local request four times a second costs the daemon nothing.
 */
#define LOGS_FOLLOW_POLL_MS 250

/* The start of the last n lines of text (all of it when n < 0); a final newline ends a line. */
static const char *tail_lines(const char *text, long n)
{
    size_t len = strlen(text), i = len;
    long seen = 0;

    if (n < 0)
        return text;
    if (i > 0 && text[i - 1] == '\n')
        i--;
    for (; i > 0; i--)
        if (text[i - 1] == '\n' && ++seen == n)
            return text + i;
    return n == 0 ? text + len : text;
}

/* Where logs -f has got to: the run being shown and how many of its stderr bytes were printed. */
typedef struct LogCursor {
    uint64_t run;
    uint64_t bytes;
    bool ended; /* its end was printed */
} LogCursor;

static void log_run_header(StrBuf *sb, yajl_val r)
{
    int64_t k = 0, pid = 0, started = 0;
    char when[32] = "?";
    time_t t;
    struct tm tm;

    json_get_int(r, "run", &k);
    json_get_int(r, "pid", &pid);
    json_get_int(r, "startedAt", &started);
    t = (time_t)(started / 1000);
    if (localtime_r(&t, &tm))
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
    if (pid)
        strbuf_printf(sb, "-- run %lld, pid %lld, started %s --\n", (long long)k, (long long)pid,
                      when);
    else
        strbuf_printf(sb, "-- run %lld, at %s --\n", (long long)k, when);
}

/* Append what of run r the cursor has not shown yet: header, new stderr, its end. */
static void log_run_render(StrBuf *sb, yajl_val r, LogCursor *cur)
{
    int64_t k = 0, total = 0, dur = 0;
    const char *text = json_get_string(r, "stderr") ?: "";
    uint64_t len = strlen(text), first;

    json_get_int(r, "run", &k);
    json_get_int(r, "stderrBytes", &total);
    json_get_int(r, "durationMs", &dur);
    if ((uint64_t)k != cur->run) {
        *cur = (LogCursor){.run = (uint64_t)k};
        log_run_header(sb, r);
    }
    if (cur->ended)
        return;
    /* The daemon keeps a tail: bytes before it are gone, and the text may be re-encoded. */
    first = (uint64_t)total > len ? (uint64_t)total - len : 0;
    if (cur->bytes < first && first > 0)
        strbuf_printf(sb, "[... %llu earlier bytes not kept]\n",
                      (unsigned long long)(first - cur->bytes));
    if ((uint64_t)total > cur->bytes) {
        uint64_t from = MAX(cur->bytes, first) - first;
        strbuf_puts(sb, text + MIN(from, len));
        if (len && text[len - 1] != '\n' && !YAJL_IS_TRUE(json_get(r, "running")))
            strbuf_putc(sb, '\n');
        cur->bytes = (uint64_t)total;
    }
    if (!YAJL_IS_TRUE(json_get(r, "running"))) {
        if (dur < 1000)
            strbuf_printf(sb, "-- run %lld %s after %lld ms --\n", (long long)k,
                          json_get_string(r, "exit") ?: "ended", (long long)dur);
        else
            strbuf_printf(sb, "-- run %lld %s after %.1f s --\n", (long long)k,
                          json_get_string(r, "exit") ?: "ended", (double)dur / 1000.0);
        cur->ended = true;
    }
}

/* One mcpd/logs request from run `since` on; its result parsed in *resp. */
static int logs_request(Ctl *ctl, const char *server, uint64_t since, yajl_val *resp)
{
    _cleanup_free_ char *out = NULL, *params = NULL;
    yajl_val p = json_object_new();
    int code;

    json_object_set(p, "server", json_string_new(server));
    if (since)
        json_object_set(p, "since", json_int_new((int64_t)since));
    params = json_to_string(p);
    json_free(p);
    if ((code = ctl_request(ctl, MCPD_METHOD_LOGS, params, &out)) == EXIT_OK)
        *resp = json_parse(out, NULL);
    return code;
}

/* Render the runs of a logs answer (only run ctl->run when given) past the cursor. */
static void logs_render(const Ctl *ctl, yajl_val res, StrBuf *sb, LogCursor *cur)
{
    yajl_val runs = json_get_array(res, "runs");

    if (!runs) {
        /* No process record (an HTTP server): whatever the transport keeps. */
        strbuf_puts(sb, json_get_string(res, "text") ?: "");
        return;
    }
    for (size_t i = 0; i < json_array_len(runs); i++) {
        yajl_val r = json_array_at(runs, i);
        int64_t k = 0;
        json_get_int(r, "run", &k);
        if ((ctl->run && k != ctl->run) || (uint64_t)k < cur->run)
            continue;
        log_run_render(sb, r, cur);
    }
}

/* logs --json: the answer, with only run K and each stderr cut to its last N lines. */
static void logs_print_json(const Ctl *ctl, yajl_val res)
{
    yajl_val runs = json_get_array(res, "runs"), kept = json_array_new();

    for (size_t i = 0; i < json_array_len(runs); i++) {
        yajl_val r = json_array_at(runs, i);
        int64_t k = 0;
        json_get_int(r, "run", &k);
        if (ctl->run && k != ctl->run)
            continue;
        if (ctl->lines >= 0)
            json_object_set(
                r, "stderr",
                json_string_new(tail_lines(json_get_string(r, "stderr") ?: "", ctl->lines)));
        json_array_push(kept, json_copy(r));
    }
    if (runs)
        json_object_set(res, "runs", kept);
    else
        json_free(kept);
    if (ctl->lines >= 0)
        json_object_set(
            res, "text",
            json_string_new(tail_lines(json_get_string(res, "text") ?: "", ctl->lines)));
    ctl_print_json(res);
}

/*
 * logs NAME [-n N] [--run K] [-f]: every run the daemon keeps (start, stderr tail, how it
 * ended), the last N lines with -n, one run with --run, then new output as it comes with -f.
 */
int ctl_verb_logs(Ctl *ctl, char **args, int n)
{
    _cleanup_json_ yajl_val res = NULL;
    LogCursor cur = {0};
    StrBuf sb = STRBUF_INIT;
    int code = logs_request(ctl, args[0], (uint64_t)ctl->run, &res);

    if (code != EXIT_OK)
        return code;
    if (ctl->json && ctl->follow) {
        fprintf(stderr, "mcpctl: logs -f prints text; for JSON, run logs --json without -f\n");
        return EXIT_USAGE;
    }
    if (ctl->json) {
        logs_print_json(ctl, res);
        return EXIT_OK;
    }
    if (ctl->run && !json_array_len(json_get_array(res, "runs"))) {
        fprintf(stderr, "mcpctl: %s has no run %ld kept (see `mcpctl logs %s`)\n", args[0],
                ctl->run, args[0]);
        return EXIT_FAILED;
    }
    logs_render(ctl, res, &sb, &cur);
    if (!sb.len && !ctl->follow)
        fprintf(stderr,
                "mcpctl: nothing recorded for %s yet (no process run; an HTTP server has "
                "none: see `mcpctl status %s`)\n",
                args[0], args[0]);
    fputs(tail_lines(strbuf_str(&sb), ctl->lines), stdout);
    fflush(stdout);
    while (ctl->follow && !(ctl->run && cur.ended)) {
        struct timespec ts = {0, LOGS_FOLLOW_POLL_MS * 1000000L};
        nanosleep(&ts, NULL);
        res = json_free(res);
        if ((code = logs_request(ctl, args[0], cur.run, &res)) != EXIT_OK)
            break;
        strbuf_reset(&sb);
        logs_render(ctl, res, &sb, &cur);
        fputs(strbuf_str(&sb), stdout);
        fflush(stdout);
    }
    strbuf_deinit(&sb);
    return code;
}
