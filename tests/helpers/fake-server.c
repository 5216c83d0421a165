// SPDX-License-Identifier: MIT
// fake-server: a configurable MCP stdio server for mcpd's tests and benchmarks.

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/strbuf.h"
#include "common/util.h"

/* Always listed first (unless --only-generic), always callable. */
static const char *const builtins[] = {
    "echo", "add", "sleep", "crash", "big", "fail", "tool_error", "env", "cwd", "pid",
};

static struct {
    const char *name;
    long tools, page_size, init_delay_ms, crash_after, list_changed_ms, stderr_noise;
    bool hang_init, garbage, list_fail, ignore_eof, close_stdout, only_generic;
    FILE *log;
} opt = {.name = "fake", .list_changed_ms = -1};

static long n_calls;
static bool late_tool, stdout_closed, listed_once;

/* Work due later: a sleep result, a delayed initialize result, a list_changed. */
typedef enum { DUE_SLEEP, DUE_INIT, DUE_LIST_CHANGED } DueKind;

typedef struct Due {
    DueKind kind;
    uint64_t at_ms, end_ms, every_ms;
    yajl_val id, token, init_params;
    long step, steps;
    struct Due *next;
} Due;

static Due *dues;

static void send_sb(StrBuf *sb)
{
    if (!stdout_closed) {
        if (opt.garbage && fd_write_all(1, "this is not json {{{\n", 21) < 0)
            exit(0);
        if (fd_write_all(1, sb->data, sb->len) < 0)
            exit(0); /* the client is gone */
    }
    strbuf_deinit(sb);
}

static void reply(yajl_val id, yajl_val result)
{
    StrBuf sb = STRBUF_INIT;

    jsonrpc_write_result(&sb, id, result);
    json_free(result);
    send_sb(&sb);
}

static void reply_error(yajl_val id, int code, const char *msg)
{
    StrBuf sb = STRBUF_INIT;

    jsonrpc_write_error(&sb, id, code, msg, NULL);
    send_sb(&sb);
}

static yajl_val text_result(const char *text, size_t n)
{
    yajl_val r = json_object_new(), content = json_array_new(), item = json_object_new();

    json_object_set(item, "type", json_string_new("text"));
    json_object_set(item, "text", json_string_newn(text, n));
    json_array_push(content, item);
    json_object_set(r, "content", content);
    return r;
}

static yajl_val prop(const char *type, const char *desc)
{
    yajl_val p = json_object_new();

    json_object_set(p, "type", json_string_new(type));
    json_object_set(p, "description", json_string_new(desc));
    return p;
}

static yajl_val tool_def(const char *name, const char *desc, const char *const *props,
                         const char *const *types, size_t n, size_t n_required)
{
    yajl_val t = json_object_new(), schema = json_object_new(), ps = json_object_new();
    yajl_val req = json_array_new();

    for (size_t i = 0; i < n; i++) {
        _cleanup_free_ char *d = xasprintf("The %s argument of %s", props[i], name);
        json_object_set(ps, props[i], prop(types[i], d));
        if (i < n_required)
            json_array_push(req, json_string_new(props[i]));
    }
    json_object_set(schema, "type", json_string_new("object"));
    json_object_set(schema, "properties", ps);
    json_object_set(schema, "required", req);
    json_object_set(t, "name", json_string_new(name));
    json_object_set(t, "description", json_string_new(desc));
    json_object_set(t, "inputSchema", schema);
    return t;
}

static yajl_val builtin_def(size_t i)
{
    static const char *const text[] = {"text"}, *const str[] = {"string"};
    static const char *const ab[] = {"a", "b"}, *const nums[] = {"number", "number"};
    static const char *const ms[] = {"ms"}, *const bytes[] = {"bytes"};
    static const char *const ints[] = {"integer"}, *const name[] = {"name"};

    switch (i) {
    case 0:
        return tool_def("echo", "Return the text given", text, str, 1, 1);
    case 1:
        return tool_def("add", "Add two numbers", ab, nums, 2, 2);
    case 2:
        return tool_def("sleep", "Answer after ms milliseconds, with progress", ms, ints, 1, 1);
    case 4:
        return tool_def("big", "Return a text of that many bytes", bytes, ints, 1, 1);
    case 7:
        return tool_def("env", "Return an environment variable", name, str, 1, 1);
    default:
        return tool_def(builtins[i], "A builtin of the fake server", NULL, NULL, 0, 0);
    }
}

static yajl_val generic_def(long k)
{
    static const char *const props[] = {"query", "limit", "verbose", "tags"};
    static const char *const types[] = {"string", "integer", "boolean", "array"};
    _cleanup_free_ char *name = xasprintf("tool%ld", k);
    _cleanup_free_ char *desc =
        xasprintf("Generic tool number %ld: echoes its arguments back as JSON text", k);

    return tool_def(name, desc, props, types, 4, 1);
}

/* All tools in list order. */
static yajl_val all_tools(void)
{
    yajl_val arr = json_array_new();

    if (!opt.only_generic)
        for (size_t i = 0; i < N_ELEMENTS(builtins); i++)
            json_array_push(arr, builtin_def(i));
    for (long k = 0; k < opt.tools; k++)
        json_array_push(arr, generic_def(k));
    if (late_tool) {
        static const char *const text[] = {"text"}, *const str[] = {"string"};
        json_array_push(arr, tool_def("late_tool", "Appeared after list_changed", text, str, 1, 1));
    }
    return arr;
}

static void do_list(yajl_val id, yajl_val params)
{
    yajl_val tools = all_tools(), r = json_object_new(), page = json_array_new();
    const char *cursor = json_get_string(params, "cursor");
    size_t start = cursor ? strtoul(cursor, NULL, 10) : 0, n = json_array_len(tools);
    size_t end = opt.page_size > 0 ? MIN(n, start + (size_t)opt.page_size) : n;

    if (opt.list_fail) {
        json_free(tools);
        json_free(r);
        json_free(page);
        reply_error(id, JSONRPC_INTERNAL_ERROR, "tools/list is broken on purpose");
        return;
    }
    for (size_t i = start; i < end; i++)
        json_array_push(page, json_copy(json_array_at(tools, i)));
    json_object_set(r, "tools", page);
    if (end < n) {
        char buf[32];
        snprintf(buf, sizeof(buf), "%zu", end);
        json_object_set(r, "nextCursor", json_string_new(buf));
    }
    json_free(tools);
    reply(id, r);
    if (opt.close_stdout && !listed_once) {
        close(1);
        stdout_closed = true;
    }
    listed_once = true;
}

static void do_initialize(yajl_val id, yajl_val params)
{
    const char *v = json_get_string(params, "protocolVersion");
    yajl_val r = json_object_new(), caps = json_object_new(), tools = json_object_new();
    yajl_val info = json_object_new();

    json_object_set(tools, "listChanged", json_bool_new(true));
    json_object_set(caps, "tools", tools);
    json_object_set(caps, "logging", json_object_new());
    json_object_set(info, "name", json_string_new(opt.name));
    json_object_set(info, "version", json_string_new("1.0.0"));
    json_object_set(r, "protocolVersion", json_string_new(v ? v : "2025-11-25"));
    json_object_set(r, "capabilities", caps);
    json_object_set(r, "serverInfo", info);
    reply(id, r);
}

static Due *due_add(DueKind kind, uint64_t at, yajl_val id)
{
    Due *d = xcalloc(1, sizeof(*d));

    d->kind = kind;
    d->at_ms = at;
    d->id = json_copy(id);
    d->next = dues;
    dues = d;
    return d;
}

static void due_free(Due *d)
{
    json_free(d->id);
    json_free(d->token);
    json_free(d->init_params);
    free(d);
}

static void send_progress(Due *d)
{
    yajl_val p = json_object_new();
    StrBuf sb = STRBUF_INIT;

    json_object_set(p, "progressToken", json_copy(d->token));
    json_object_set(p, "progress", json_int_new(d->step));
    json_object_set(p, "total", json_int_new(d->steps));
    jsonrpc_write_notification(&sb, "notifications/progress", p);
    json_free(p);
    send_sb(&sb);
}

static void start_sleep(yajl_val id, yajl_val args, yajl_val meta)
{
    int64_t ms = 0;
    uint64_t now = now_ms();
    Due *d;

    json_get_int(args, "ms", &ms);
    d = due_add(DUE_SLEEP, now + (uint64_t)MAX(ms, 0), id);
    d->end_ms = d->at_ms;
    if (meta && json_get(meta, "progressToken")) {
        d->token = json_copy(json_get(meta, "progressToken"));
        d->every_ms = 100;
        d->steps = MAX(1, ms / 100);
        d->at_ms = MIN(d->end_ms, now + d->every_ms);
    }
}

static void do_call(yajl_val id, yajl_val params)
{
    const char *name = json_get_string(params, "name");
    yajl_val args = json_get_object(params, "arguments");
    const char *s;
    int64_t a = 0, b = 0;
    char buf[64];

    if (opt.crash_after > 0 && ++n_calls >= opt.crash_after)
        exit(4);
    if (!name) {
        reply_error(id, JSONRPC_INVALID_PARAMS, "params.name is missing");
    } else if (streq(name, "echo") || streq(name, "late_tool")) {
        s = json_get_string(args, "text");
        reply(id, text_result(s ? s : "", s ? strlen(s) : 0));
    } else if (streq(name, "add")) {
        yajl_val x = json_get(args, "a"), y = json_get(args, "b");
        double sum = (YAJL_IS_DOUBLE(x) ? x->u.number.d : 0) + (YAJL_IS_DOUBLE(y) ? y->u.number.d : 0);
        (void)a, (void)b;
        snprintf(buf, sizeof(buf), "%g", sum);
        reply(id, text_result(buf, strlen(buf)));
    } else if (streq(name, "sleep")) {
        start_sleep(id, args, json_get_object(params, "_meta"));
    } else if (streq(name, "crash")) {
        exit(3);
    } else if (streq(name, "big")) {
        int64_t n = 0;
        json_get_int(args, "bytes", &n);
        char *x = xmalloc((size_t)MAX(n, 0) + 1);
        memset(x, 'x', (size_t)MAX(n, 0));
        reply(id, text_result(x, (size_t)MAX(n, 0)));
        free(x);
    } else if (streq(name, "fail")) {
        reply_error(id, JSONRPC_INTERNAL_ERROR, "fake failure");
    } else if (streq(name, "tool_error")) {
        yajl_val r = text_result("tool said no", 12);
        json_object_set(r, "isError", json_bool_new(true));
        reply(id, r);
    } else if (streq(name, "env")) {
        s = getenv(json_get_string(args, "name") ? json_get_string(args, "name") : "");
        reply(id, text_result(s ? s : "", s ? strlen(s) : 0));
    } else if (streq(name, "cwd")) {
        char cwd[4096];
        if (!getcwd(cwd, sizeof(cwd)))
            cwd[0] = '\0';
        reply(id, text_result(cwd, strlen(cwd)));
    } else if (streq(name, "pid")) {
        snprintf(buf, sizeof(buf), "%d", (int)getpid());
        reply(id, text_result(buf, strlen(buf)));
    } else if (startswith(name, "tool") && strtol(name + 4, NULL, 10) < opt.tools) {
        _cleanup_free_ char *t = args ? json_to_string(args) : xstrdup("{}");
        reply(id, text_result(t, strlen(t)));
    } else {
        _cleanup_free_ char *m = xasprintf("Unknown tool: %s", name);
        reply_error(id, JSONRPC_INVALID_PARAMS, m);
    }
}

static void do_cancel(yajl_val params)
{
    yajl_val rid = json_get(params, "requestId");

    for (Due **pp = &dues; *pp;) {
        Due *d = *pp;
        if (d->kind == DUE_SLEEP && json_equal(d->id, rid)) {
            *pp = d->next;
            due_free(d);
        } else {
            pp = &d->next;
        }
    }
}

static void handle(JsonrpcMsg *m)
{
    if (opt.stderr_noise)
        fprintf(stderr, "fake %s: got %s\n", opt.name, m->method ? m->method : "a response");
    if (m->kind == JSONRPC_NOTIFICATION) {
        if (streq(m->method, "notifications/cancelled"))
            do_cancel(m->params);
        else if (streq(m->method, "notifications/initialized") && opt.list_changed_ms >= 0)
            due_add(DUE_LIST_CHANGED, now_ms() + (uint64_t)opt.list_changed_ms, NULL);
        return;
    }
    if (m->kind != JSONRPC_REQUEST)
        return;
    if (streq(m->method, "initialize")) {
        if (opt.hang_init)
            return;
        if (opt.init_delay_ms > 0) {
            Due *d = due_add(DUE_INIT, now_ms() + (uint64_t)opt.init_delay_ms, m->id);
            d->init_params = json_copy(m->params);
            return;
        }
        do_initialize(m->id, m->params);
    } else if (streq(m->method, "ping")) {
        reply(m->id, NULL);
    } else if (streq(m->method, "tools/list")) {
        do_list(m->id, m->params);
    } else if (streq(m->method, "tools/call")) {
        do_call(m->id, m->params);
    } else {
        reply_error(m->id, JSONRPC_METHOD_NOT_FOUND, "Method not found");
    }
}

/* Run what is due; return ms until the next due item, or -1. */
static int run_dues(void)
{
    uint64_t now = now_ms();
    int next = -1;

    for (Due **pp = &dues; *pp;) {
        Due *d = *pp;
        if (d->at_ms > now) {
            int left = (int)(d->at_ms - now);
            next = next < 0 ? left : MIN(next, left);
            pp = &d->next;
            continue;
        }
        if (d->kind == DUE_SLEEP && d->token && d->at_ms < d->end_ms) {
            d->step++;
            send_progress(d);
            d->at_ms = MIN(d->end_ms, d->at_ms + d->every_ms);
            pp = &d->next;
            next = 0;
            continue;
        }
        *pp = d->next;
        if (d->kind == DUE_SLEEP)
            reply(d->id, text_result("slept", 5));
        else if (d->kind == DUE_INIT)
            do_initialize(d->id, d->init_params);
        else {
            StrBuf sb = STRBUF_INIT;
            late_tool = true;
            jsonrpc_write_notification(&sb, "notifications/tools/list_changed", NULL);
            send_sb(&sb);
        }
        due_free(d);
    }
    return next;
}

static void parse_args(int argc, char **argv)
{
    static const struct option opts[] = {
        {"name", required_argument, NULL, 'n'},
        {"tools", required_argument, NULL, 't'},
        {"page-size", required_argument, NULL, 'p'},
        {"init-delay-ms", required_argument, NULL, 'd'},
        {"hang-init", no_argument, NULL, 'H'},
        {"exit-immediately", no_argument, NULL, 'X'},
        {"crash-after-calls", required_argument, NULL, 'C'},
        {"garbage", no_argument, NULL, 'g'},
        {"stderr-noise", required_argument, NULL, 'e'},
        {"list-fail", no_argument, NULL, 'L'},
        {"list-changed-after-ms", required_argument, NULL, 'l'},
        {"ignore-sigterm", no_argument, NULL, 'S'},
        {"ignore-stdin-eof", no_argument, NULL, 'E'},
        {"fork-grandchild", no_argument, NULL, 'F'},
        {"close-stdout-after-init", no_argument, NULL, 'O'},
        {"only-generic", no_argument, NULL, 'G'},
        {"log", required_argument, NULL, 'o'},
        {"pid-file", required_argument, NULL, 'P'},
        {NULL, 0, NULL, 0},
    };
    int c;

    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'n': opt.name = optarg; break;
        case 't': opt.tools = atol(optarg); break;
        case 'p': opt.page_size = atol(optarg); break;
        case 'd': opt.init_delay_ms = atol(optarg); break;
        case 'H': opt.hang_init = true; break;
        case 'X': exit(1);
        case 'C': opt.crash_after = atol(optarg); break;
        case 'g': opt.garbage = true; break;
        case 'e': opt.stderr_noise = atol(optarg); break;
        case 'L': opt.list_fail = true; break;
        case 'l': opt.list_changed_ms = atol(optarg); break;
        case 'S': signal(SIGTERM, SIG_IGN); break;
        case 'E': opt.ignore_eof = true; break;
        case 'O': opt.close_stdout = true; break;
        case 'G': opt.only_generic = true; break;
        case 'o': opt.log = fopen(optarg, "a"); break;
        case 'F': {
            pid_t p = fork();
            if (p == 0) {
                for (;;)
                    pause();
            }
            fprintf(stderr, "grandchild pid %d\n", (int)p);
            break;
        }
        case 'P': {
            FILE *f = fopen(optarg, "w");
            if (f) {
                fprintf(f, "%d\n", (int)getpid());
                fclose(f);
            }
            break;
        }
        default:
            fprintf(stderr, "fake-server: bad option\n");
            exit(2);
        }
    }
}

int main(int argc, char **argv)
{
    Framer in;
    bool eof = false;

    signal(SIGPIPE, SIG_IGN);
    parse_args(argc, argv);
    for (long i = 0; i < opt.stderr_noise; i++)
        fprintf(stderr, "fake %s: noise line %ld on stderr\n", opt.name, i);
    framer_init(&in, 256u * 1024u * 1024u);
    for (;;) {
        int timeout = run_dues();
        struct pollfd pfd = {0, POLLIN, 0};
        char *line;
        size_t len;

        if (eof) {
            if (!opt.ignore_eof)
                break;
            pfd.fd = -1;
            timeout = timeout < 0 ? 1000 : timeout;
        }
        if (poll(&pfd, 1, timeout) < 0 && errno != EINTR)
            break;
        if (!(pfd.revents & (POLLIN | POLLHUP)))
            continue;
        ssize_t n = framer_read_fd(&in, 0);
        if (n == 0 || (n < 0 && n != -EINTR && n != -EAGAIN)) {
            eof = true;
            continue;
        }
        while (framer_next(&in, &line, &len) == 0) {
            JsonrpcMsg m;
            char *err = NULL;
            if (opt.log) {
                fprintf(opt.log, "%s\n", line);
                fflush(opt.log);
            }
            if (jsonrpc_msg_parse(&m, line, len, &err) != 0)
                fprintf(stderr, "fake %s: bad line (%s)\n", opt.name, err ? err : "?");
            else
                handle(&m);
            free(err);
            jsonrpc_msg_deinit(&m);
        }
    }
    framer_deinit(&in);
    while (dues) {
        Due *d = dues;
        dues = d->next;
        due_free(d);
    }
    return 0;
}
