// SPDX-License-Identifier: MIT
// fake-server: a configurable fake MCP server on the stdio transport, for tests and benchmarks.

/*
 * One JSON-RPC 2.0 message per line on stdin/stdout. Deliberately standalone (only yajl and
 * libc), so a bug in mcpd's own JSON code cannot hide behind a matching bug here.
 *
 * The loop is poll(2) on stdin plus a small sorted list of timers: slow work (sleep calls,
 * delayed initialize, list_changed) is a timer, so other requests keep being answered.
 */

/* The build may already pass -D_GNU_SOURCE; redefining it differently would warn. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#define DEFAULT_PROTOCOL  "2025-11-25"
#define GARBAGE_LINE      "this is not json {{{"
#define PROGRESS_EVERY_MS 100

/* Stringise JSON written as plain tokens, so schemas below read as JSON, not as escapes. */
#define JSON(...) #__VA_ARGS__

static struct {
    const char *name, *log_path, *pid_path;
    long tools, page_size, init_delay_ms, crash_after, list_changed_ms, stderr_noise;
    long huge_line, stderr_flood;
    const char *stray_tree; /* the sleep argument of the stray tree's processes, or NULL */
    long touch_mb;
    bool hang_init, exit_now, garbage, list_fail, ignore_sigterm, ignore_eof;
    bool grandchild, close_stdout, only_generic, ask, exit_on_init, no_progress;
    bool strict_init; /* a request other than initialize before it ends the process */
    bool seen_init;
    bool ignore_unknown; /* a request it does not know is never answered (server/discover) */
    bool tasks;          /* the tasks capability and the tool task_sleep */
    bool tasks_silent;   /* no notifications/tasks/status: a task's end is seen only by asking */
    bool echo_meta;      /* echo answers with the call's params._meta (trace context tests) */
} opt = {.name = "fake", .list_changed_ms = -1};

static struct {
    FILE *log;
    long calls;             /* tools/call requests received */
    bool list_change_armed; /* list_changed timer already scheduled */
    bool late_tool;         /* list_changed has fired: late_tool exists */
    bool init_answered, listed_once, stdout_closed;
    bool peer_gone;   /* a stdout write failed: exit 0 once back in the main loop */
    yajl_val current; /* message being handled, freed at exit if a tool exits */
} st;

/* Options for the bounds tests (work a server may cause mcpd). */
static struct {
    long list_changed_burst; /* list_changed notifications sent when the timer fires */
    bool repeat_cursor;      /* pages after the first point back to the start: a cursor loop */
    bool reverse_list;       /* tools/list in reverse order: servers' own order must not matter */
} bounds = {.list_changed_burst = 1};

/* ---------------------------------------------------------------- ids and tokens */

/* A JSON-RPC id or progress token, kept as its raw token so it is echoed with its own type. */
typedef enum { TOK_NONE, TOK_NULL, TOK_STR, TOK_NUM } TokKind;
typedef struct {
    TokKind kind;
    char *s; /* string contents, or the number's text as it arrived */
} Tok;

/* Borrow from a parsed tree (no copy): valid while the tree lives. */
static bool tok_from(yajl_val v, Tok *t)
{
    *t = (Tok){TOK_NONE, NULL};
    if (YAJL_IS_STRING(v))
        *t = (Tok){TOK_STR, v->u.string};
    else if (YAJL_IS_NUMBER(v))
        *t = (Tok){TOK_NUM, v->u.number.r};
    else if (YAJL_IS_NULL(v))
        t->kind = TOK_NULL;
    else
        return false;
    return true;
}

static Tok tok_dup(const Tok *t)
{
    Tok d = *t;
    if (t->s && !(d.s = strdup(t->s)))
        abort();
    return d;
}

static bool tok_equal(const Tok *a, const Tok *b)
{
    if (a->kind != b->kind)
        return false;
    return !a->s || strcmp(a->s, b->s) == 0;
}

/* ---------------------------------------------------------------- small helpers */

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "fake-server[%s]: ", opt.name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static yajl_val obj_get(yajl_val obj, const char *key)
{
    if (!YAJL_IS_OBJECT(obj))
        return NULL;
    for (size_t i = 0; i < obj->u.object.len; i++)
        if (strcmp(obj->u.object.keys[i], key) == 0)
            return obj->u.object.values[i];
    return NULL;
}

static const char *obj_str(yajl_val obj, const char *key)
{
    yajl_val v = obj_get(obj, key);
    return YAJL_IS_STRING(v) ? v->u.string : NULL;
}

/* ---------------------------------------------------------------- output */

/*
 * Blocking full write of one line. A failure means the client is gone, which is not an error:
 * stop writing and let the main loop exit 0, so handlers unwind and free what they hold.
 */
static void write_line(const char *buf, size_t len)
{
    struct iovec iov[2] = {{(void *)buf, len}, {(void *)"\n", 1}};
    int i = 0;

    if (st.stdout_closed)
        return;
    while (i < 2) {
        ssize_t n = writev(STDOUT_FILENO, iov + i, 2 - i);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            st.stdout_closed = st.peer_gone = true;
            return;
        }
        while (i < 2 && (size_t)n >= iov[i].iov_len)
            n -= (ssize_t)iov[i++].iov_len;
        if (i < 2) {
            iov[i].iov_base = (char *)iov[i].iov_base + n;
            iov[i].iov_len -= (size_t)n;
        }
    }
}

static void gs(yajl_gen g, const char *s)
{
    yajl_gen_string(g, (const unsigned char *)s, strlen(s));
}

static void gkv(yajl_gen g, const char *key, const char *val)
{
    gs(g, key);
    gs(g, val);
}

static void gen_tok(yajl_gen g, const Tok *t)
{
    if (t->kind == TOK_STR)
        gs(g, t->s);
    else if (t->kind == TOK_NUM)
        yajl_gen_number(g, t->s, strlen(t->s));
    else
        yajl_gen_null(g);
}

/* Re-emit a parsed value; numbers keep their original text. */
static void gen_value(yajl_gen g, yajl_val v)
{
    if (YAJL_IS_STRING(v)) {
        gs(g, v->u.string);
    } else if (YAJL_IS_NUMBER(v)) {
        yajl_gen_number(g, v->u.number.r, strlen(v->u.number.r));
    } else if (YAJL_IS_OBJECT(v)) {
        yajl_gen_map_open(g);
        for (size_t i = 0; i < v->u.object.len; i++) {
            gs(g, v->u.object.keys[i]);
            gen_value(g, v->u.object.values[i]);
        }
        yajl_gen_map_close(g);
    } else if (YAJL_IS_ARRAY(v)) {
        yajl_gen_array_open(g);
        for (size_t i = 0; i < v->u.array.len; i++)
            gen_value(g, v->u.array.values[i]);
        yajl_gen_array_close(g);
    } else if (YAJL_IS_TRUE(v) || YAJL_IS_FALSE(v)) {
        yajl_gen_bool(g, YAJL_IS_TRUE(v));
    } else {
        yajl_gen_null(g);
    }
}

/* Opens {"jsonrpc":"2.0" — the caller adds members, then msg_send() closes and writes it. */
static yajl_gen msg_open(void)
{
    yajl_gen g = yajl_gen_alloc(NULL);
    if (!g)
        abort();
    yajl_gen_map_open(g);
    gkv(g, "jsonrpc", "2.0");
    return g;
}

static void msg_send(yajl_gen g, bool is_response)
{
    const unsigned char *buf;
    size_t len;

    yajl_gen_map_close(g);
    yajl_gen_get_buf(g, &buf, &len);
    if (is_response && opt.garbage)
        write_line(GARBAGE_LINE, strlen(GARBAGE_LINE));
    write_line((const char *)buf, len);
    yajl_gen_free(g);
}

/* Opens a response up to "result": the caller writes the result value, then msg_send(g, true). */
static yajl_gen result_open(const Tok *id)
{
    yajl_gen g = msg_open();
    gs(g, "id");
    gen_tok(g, id);
    gs(g, "result");
    return g;
}

static void send_error(const Tok *id, int code, const char *message)
{
    yajl_gen g = msg_open();
    gs(g, "id");
    gen_tok(g, id);
    gs(g, "error");
    yajl_gen_map_open(g);
    gs(g, "code");
    yajl_gen_integer(g, code);
    gkv(g, "message", message);
    yajl_gen_map_close(g);
    msg_send(g, true);
}

static void send_errorf(const Tok *id, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void send_errorf(const Tok *id, int code, const char *fmt, ...)
{
    va_list ap;
    char *msg;

    va_start(ap, fmt);
    if (vasprintf(&msg, fmt, ap) < 0)
        abort();
    va_end(ap);
    send_error(id, code, msg);
    free(msg);
}

static void send_empty_result(const Tok *id)
{
    yajl_gen g = result_open(id);
    yajl_gen_map_open(g);
    yajl_gen_map_close(g);
    msg_send(g, true);
}

/* "content": [{type: text, text}] inside an open result map. */
static void gen_text_content(yajl_gen g, const char *text, size_t len)
{
    gs(g, "content");
    yajl_gen_array_open(g);
    yajl_gen_map_open(g);
    gkv(g, "type", "text");
    gs(g, "text");
    yajl_gen_string(g, (const unsigned char *)text, len);
    yajl_gen_map_close(g);
    yajl_gen_array_close(g);
}

/* A tools/call result with one text content. */
static void send_text(const Tok *id, const char *text, size_t len, bool is_error)
{
    yajl_gen g = result_open(id);
    yajl_gen_map_open(g);
    gen_text_content(g, text, len);
    if (is_error) {
        gs(g, "isError");
        yajl_gen_bool(g, 1);
    }
    yajl_gen_map_close(g);
    msg_send(g, true);
}

static void send_str(const Tok *id, const char *text)
{
    send_text(id, text, strlen(text), false);
}

static void send_notification(const char *method)
{
    yajl_gen g = msg_open();
    gkv(g, "method", method);
    msg_send(g, false);
}

static void send_progress(const Tok *token, long progress, long total)
{
    yajl_gen g = msg_open();
    gkv(g, "method", "notifications/progress");
    gs(g, "params");
    yajl_gen_map_open(g);
    gs(g, "progressToken");
    gen_tok(g, token);
    gs(g, "progress");
    yajl_gen_integer(g, progress);
    gs(g, "total");
    yajl_gen_integer(g, total);
    yajl_gen_map_close(g);
    msg_send(g, false);
}

/* ---------------------------------------------------------------- timers */

typedef enum { TM_SLEEP, TM_INIT, TM_LIST_CHANGED, TM_TASK } TimerKind;

typedef struct Timer {
    struct Timer *next;
    TimerKind kind;
    uint64_t due;         /* when this timer next needs attention */
    uint64_t start, end;  /* sleep: when it began and when to answer */
    long ms, step, steps; /* sleep: duration, progress sent so far, progress total; task: its n */
    Tok id, token;        /* request id; sleep's progress token (TOK_NONE if none) */
    char *version;        /* init: protocol version to answer with */
} Timer;

/* Sorted by due; equal deadlines keep arrival order. Benchmarks keep at most a few hundred. */
static Timer *timers;

static void timer_insert(Timer *t)
{
    Timer **pp = &timers;
    while (*pp && (*pp)->due <= t->due)
        pp = &(*pp)->next;
    t->next = *pp;
    *pp = t;
}

static Timer *timer_new(TimerKind kind, uint64_t delay_ms)
{
    Timer *t = calloc(1, sizeof(*t));
    if (!t)
        abort();
    t->kind = kind;
    t->start = now_ms();
    t->due = t->end = t->start + delay_ms;
    return t;
}

static void timer_free(Timer *t)
{
    free(t->id.s);
    free(t->token.s);
    free(t->version);
    free(t);
}

static int poll_timeout(void)
{
    if (!timers)
        return -1;
    uint64_t now = now_ms();
    if (timers->due <= now)
        return 0;
    uint64_t left = timers->due - now;
    return left > INT_MAX ? INT_MAX : (int)left;
}

/* ---------------------------------------------------------------- initialize */

static void maybe_close_stdout(void)
{
    if (!opt.close_stdout || st.stdout_closed || !st.init_answered || !st.listed_once)
        return;
    /* /dev/null over fd 1 drops our end of the pipe (client sees EOF) and keeps fd 1 taken. */
    int fd = open("/dev/null", O_WRONLY);
    if (fd >= 0) {
        dup2(fd, STDOUT_FILENO);
        if (fd != STDOUT_FILENO)
            close(fd);
    } else {
        close(STDOUT_FILENO);
    }
    st.stdout_closed = true;
    note("closed stdout (--close-stdout-after-init)");
}

static void send_init_result(const Tok *id, const char *version)
{
    yajl_gen g = result_open(id);
    yajl_gen_map_open(g);
    gkv(g, "protocolVersion", version);
    gs(g, "capabilities");
    yajl_gen_map_open(g);
    gs(g, "tools");
    yajl_gen_map_open(g);
    gs(g, "listChanged");
    yajl_gen_bool(g, 1);
    yajl_gen_map_close(g);
    gs(g, "logging");
    yajl_gen_map_open(g);
    yajl_gen_map_close(g);
    if (opt.tasks) {
        /* tasks: {list:{}, cancel:{}, requests:{tools:{call:{}}}}, as server-everything says */
        const char *keys[] = {"list", "cancel"};
        gs(g, "tasks");
        yajl_gen_map_open(g);
        for (size_t i = 0; i < 2; i++) {
            gs(g, keys[i]);
            yajl_gen_map_open(g);
            yajl_gen_map_close(g);
        }
        gs(g, "requests");
        yajl_gen_map_open(g);
        gs(g, "tools");
        yajl_gen_map_open(g);
        gs(g, "call");
        yajl_gen_map_open(g);
        yajl_gen_map_close(g);
        yajl_gen_map_close(g);
        yajl_gen_map_close(g);
        yajl_gen_map_close(g);
    }
    yajl_gen_map_close(g);
    gs(g, "serverInfo");
    yajl_gen_map_open(g);
    gkv(g, "name", opt.name);
    gkv(g, "version", "1.0.0");
    yajl_gen_map_close(g);
    yajl_gen_map_close(g);
    msg_send(g, true);
    st.init_answered = true;
    maybe_close_stdout();
}

static void on_initialize(const Tok *id, yajl_val params)
{
    const char *version = obj_str(params, "protocolVersion");

    if (!version)
        version = DEFAULT_PROTOCOL;
    if (opt.exit_on_init) {
        note("exiting on initialize (--exit-on-initialize)");
        exit(5);
    }
    if (opt.hang_init) {
        note("not answering initialize (--hang-init)");
        return;
    }
    if (opt.init_delay_ms > 0) {
        Timer *t = timer_new(TM_INIT, (uint64_t)opt.init_delay_ms);
        t->id = tok_dup(id);
        if (!(t->version = strdup(version)))
            abort();
        timer_insert(t);
        return;
    }
    send_init_result(id, version);
}

/* ---------------------------------------------------------------- tool definitions */

struct ToolDef;
typedef void CallFn(const Tok *id, yajl_val args, yajl_val params);

typedef struct ToolDef {
    const char *name, *description, *schema;
    CallFn *call;
} ToolDef;

static CallFn call_echo, call_add, call_sleep, call_crash, call_big, call_fail, call_tool_error,
    call_env, call_cwd, call_pid, call_generic, call_ask, call_say;

#define NO_ARGS JSON({"type" : "object", "properties" : {}})

static const ToolDef builtin_tools[] = {
    {"echo", "Return the given text unchanged.", JSON({
         "type" : "object",
         "properties" : {"text" : {"type" : "string", "description" : "Text to send back."}},
         "required" : ["text"]
     }),
     call_echo},
    {"add", "Add two numbers and return the sum as text.", JSON({
         "type" : "object",
         "properties" : {
             "a" : {"type" : "number", "description" : "First addend."},
             "b" : {"type" : "number", "description" : "Second addend."}
         },
         "required" : [ "a", "b" ]
     }),
     call_add},
    {"sleep",
     "Answer after the given number of milliseconds, reporting progress every 100 ms when the "
     "call carries a progress token.",
     JSON({
         "type" : "object",
         "properties" : {
             "ms" : {
                 "type" : "integer",
                 "minimum" : 0,
                 "description" : "How long to wait, in milliseconds."
             }
         },
         "required" : ["ms"]
     }),
     call_sleep},
    {"crash", "Exit the server process with status 3 without answering.", NO_ARGS, call_crash},
    {"big", "Return one text content of exactly the given number of 'x' characters.", JSON({
         "type" : "object",
         "properties" : {
             "bytes" : {
                 "type" : "integer",
                 "minimum" : 0,
                 "description" : "Length of the text, in bytes."
             }
         },
         "required" : ["bytes"]
     }),
     call_big},
    {"fail", "Always fail with a JSON-RPC internal error.", NO_ARGS, call_fail},
    {"tool_error", "Always return a tool-level error result (isError).", NO_ARGS, call_tool_error},
    {"env", "Return the value of an environment variable of the server, or \"\" if unset.", JSON({
         "type" : "object",
         "properties" : {"name" : {"type" : "string", "description" : "Variable name."}},
         "required" : ["name"]
     }),
     call_env},
    {"cwd", "Return the server's current working directory.", NO_ARGS, call_cwd},
    {"pid", "Return the server's process id.", NO_ARGS, call_pid},
};
#define N_BUILTIN (sizeof(builtin_tools) / sizeof(builtin_tools[0]))

/* Appears after --list-changed-after-ms fires; answers like echo. */
static const ToolDef late_tool = {
    "late_tool", "A tool that appeared after notifications/tools/list_changed; echoes its text.",
    JSON({
        "type" : "object",
        "properties" : {"text" : {"type" : "string", "description" : "Text to send back."}},
        "required" : ["text"]
    }),
    call_echo};

/* Listed with --ask: a server-to-client request whose answer becomes the tool's result. */
static const ToolDef ask_tool = {
    "ask",
    "Send the client a request (sampling, elicitation, roots) and return its answer as JSON.",
    JSON({
        "type" : "object",
        "properties" : {
            "method" : {"type" : "string", "description" : "The request's method."},
            "params" : {"type" : "object", "description" : "Its params."}
        },
        "required" : ["method"]
    }),
    call_ask};

/* Listed with --ask too: a notifications/message of the given level. */
static const ToolDef say_tool = {
    "say", "Send the client a log message (notifications/message) and answer \"said\".", JSON({
        "type" : "object",
        "properties" : {
            "level" : {"type" : "string", "description" : "debug, info, ... emergency."},
            "text" : {"type" : "string", "description" : "The message."}
        },
        "required" : [ "level", "text" ]
    }),
    call_say};

/* Generic tools cycle through these, so a long tools/list resembles a real server's. */
static const ToolDef generic_tools[] = {
    {NULL, "Search the documents of a collection by full-text query.", JSON({
         "type" : "object",
         "properties" : {
             "query" : {"type" : "string", "description" : "Full-text query; quote phrases."},
             "limit" : {
                 "type" : "integer",
                 "minimum" : 1,
                 "maximum" : 100,
                 "default" : 10,
                 "description" : "Maximum number of hits to return."
             },
             "include_archived" : {
                 "type" : "boolean",
                 "default" : false,
                 "description" : "Also search archived documents."
             },
             "tags" : {
                 "type" : "array",
                 "items" : {"type" : "string"},
                 "description" : "Only documents carrying all of these tags."
             }
         },
         "required" : ["query"]
     }),
     call_generic},
    {NULL, "Fetch one record by id, optionally restricted to some fields.", JSON({
         "type" : "object",
         "properties" : {
             "id" : {"type" : "string", "description" : "Record identifier, e.g. rec_0042."},
             "fields" : {
                 "type" : "array",
                 "items" : {"type" : "string"},
                 "description" : "Fields to return; all of them when omitted."
             },
             "timeout_ms" : {
                 "type" : "integer",
                 "minimum" : 0,
                 "description" : "Give up after this many milliseconds."
             }
         },
         "required" : ["id"]
     }),
     call_generic},
    {NULL, "Convert a length between units.", JSON({
         "type" : "object",
         "properties" : {
             "value" : {"type" : "number", "description" : "Quantity to convert."},
             "from" : {
                 "type" : "string",
                 "enum" : [ "m", "km", "ft", "mi" ],
                 "description" : "Unit of value."
             },
             "to" : {
                 "type" : "string",
                 "enum" : [ "m", "km", "ft", "mi" ],
                 "description" : "Unit of the result."
             },
             "precision" : {
                 "type" : "integer",
                 "minimum" : 0,
                 "maximum" : 12,
                 "description" : "Digits after the decimal point."
             }
         },
         "required" : [ "value", "from", "to" ]
     }),
     call_generic},
    {NULL, "Open an issue in the tracker.", JSON({
         "type" : "object",
         "properties" : {
             "title" : {"type" : "string", "description" : "One-line summary."},
             "body" : {"type" : "string", "description" : "Markdown description."},
             "priority" : {
                 "type" : "string",
                 "enum" : [ "low", "normal", "high" ],
                 "default" : "normal",
                 "description" : "Triage priority."
             },
             "labels" : {
                 "type" : "array",
                 "items" : {"type" : "string"},
                 "description" : "Labels to attach."
             },
             "assignee" : {
                 "type" : "object",
                 "properties" : {"login" : {"type" : "string"}},
                 "description" : "Who should handle it."
             }
         },
         "required" : ["title"]
     }),
     call_generic},
};
#define N_GENERIC_KINDS (sizeof(generic_tools) / sizeof(generic_tools[0]))

/* Schemas parsed once at start-up: emitting from a tree keeps tools/list cheap and compact. */
static yajl_val builtin_schema[N_BUILTIN], generic_schema[N_GENERIC_KINDS], late_schema, ask_schema,
    say_schema;

static yajl_val parse_schema(const char *text)
{
    char err[256];
    yajl_val v = yajl_tree_parse(text, err, sizeof(err));
    if (!v) {
        fprintf(stderr, "fake-server: bad built-in schema: %s\n", err);
        abort();
    }
    return v;
}

static void load_schemas(void)
{
    for (size_t i = 0; i < N_BUILTIN; i++)
        builtin_schema[i] = parse_schema(builtin_tools[i].schema);
    for (size_t i = 0; i < N_GENERIC_KINDS; i++)
        generic_schema[i] = parse_schema(generic_tools[i].schema);
    late_schema = parse_schema(late_tool.schema);
    ask_schema = parse_schema(ask_tool.schema);
    say_schema = parse_schema(say_tool.schema);
}

static void gen_tool(yajl_gen g, const char *name, const char *description, yajl_val schema)
{
    yajl_gen_map_open(g);
    gkv(g, "name", name);
    gkv(g, "description", description);
    gs(g, "inputSchema");
    gen_value(g, schema);
    yajl_gen_map_close(g);
}

/* ---------------------------------------------------------------- tools/list */

static size_t listed_builtins(void)
{
    return opt.only_generic ? 0 : N_BUILTIN;
}

static size_t tool_count(void)
{
    return listed_builtins() + (opt.tasks ? 1 : 0) + (size_t)opt.tools + (opt.ask ? 2 : 0) +
           (st.late_tool ? 1 : 0);
}

static void gen_task_tool(yajl_gen g);

/* The i-th tool of the full listing: builtins, then tool0..tool(N-1), then late_tool. */
static void gen_tool_at(yajl_gen g, size_t i)
{
    if (i < listed_builtins()) {
        gen_tool(g, builtin_tools[i].name, builtin_tools[i].description, builtin_schema[i]);
        return;
    }
    if (opt.tasks && i == listed_builtins()) {
        gen_task_tool(g);
        return;
    }
    if (opt.tasks)
        i--;
    i -= listed_builtins();
    if (i == (size_t)opt.tools && opt.ask) {
        gen_tool(g, ask_tool.name, ask_tool.description, ask_schema);
        return;
    }
    if (i == (size_t)opt.tools + 1 && opt.ask) {
        gen_tool(g, say_tool.name, say_tool.description, say_schema);
        return;
    }
    if (i >= (size_t)opt.tools) {
        gen_tool(g, late_tool.name, late_tool.description, late_schema);
        return;
    }
    char name[32], desc[160];
    snprintf(name, sizeof(name), "tool%zu", i);
    snprintf(desc, sizeof(desc), "%s (generic tool %zu)",
             generic_tools[i % N_GENERIC_KINDS].description, i);
    gen_tool(g, name, desc, generic_schema[i % N_GENERIC_KINDS]);
}

/* Cursors are decimal offsets; anything else is a client bug worth an error. */
static bool parse_cursor(yajl_val params, size_t total, size_t *offset)
{
    yajl_val c = obj_get(params, "cursor");
    char *end;

    *offset = 0;
    if (!c || YAJL_IS_NULL(c))
        return true;
    if (!YAJL_IS_STRING(c) || c->u.string[0] < '0' || c->u.string[0] > '9')
        return false;
    errno = 0;
    unsigned long long v = strtoull(c->u.string, &end, 10);
    if (errno || *end || v > total)
        return false;
    *offset = (size_t)v;
    return true;
}

static void on_tools_list(const Tok *id, yajl_val params)
{
    size_t total = tool_count(), off, end;

    if (opt.list_fail) {
        send_error(id, -32603, "tools/list failed (--list-fail)");
    } else if (!parse_cursor(params, total, &off)) {
        send_error(id, -32602, "Invalid cursor");
    } else {
        end = opt.page_size > 0 && total - off > (size_t)opt.page_size ? off + (size_t)opt.page_size
                                                                       : total;
        yajl_gen g = result_open(id);
        yajl_gen_map_open(g);
        gs(g, "tools");
        yajl_gen_array_open(g);
        for (size_t i = off; i < end; i++)
            gen_tool_at(g, bounds.reverse_list ? end - 1 - (i - off) : i);
        yajl_gen_array_close(g);
        if (end < total) {
            char cursor[32];
            snprintf(cursor, sizeof(cursor), "%zu", end);
            if (bounds.repeat_cursor && off > 0)
                snprintf(cursor, sizeof(cursor), "0");
            gkv(g, "nextCursor", cursor);
        }
        yajl_gen_map_close(g);
        msg_send(g, true);
    }
    st.listed_once = true;
    maybe_close_stdout();
}

/* ---------------------------------------------------------------- tools/call */

static void bad_args(const Tok *id, const char *tool, const char *want)
{
    send_errorf(id, -32602, "Invalid arguments for %s: expected %s", tool, want);
}

static void send_json_text(const Tok *id, yajl_val v);

static void call_echo(const Tok *id, yajl_val args, yajl_val params)
{
    const char *text = obj_str(args, "text");
    if (opt.echo_meta)
        send_json_text(id, obj_get(params, "_meta"));
    else if (!text)
        bad_args(id, "echo", "{text: string}");
    else
        send_str(id, text);
}

static void call_add(const Tok *id, yajl_val args, yajl_val params)
{
    (void)params;
    yajl_val a = obj_get(args, "a"), b = obj_get(args, "b");
    char out[64];
    long long sum;

    if (!YAJL_IS_NUMBER(a) || !YAJL_IS_NUMBER(b)) {
        bad_args(id, "add", "{a: number, b: number}");
        return;
    }
    /* Integers stay exact; anything else goes through double, shortest text that round-trips. */
    if (YAJL_IS_INTEGER(a) && YAJL_IS_INTEGER(b) &&
        !__builtin_add_overflow(a->u.number.i, b->u.number.i, &sum)) {
        snprintf(out, sizeof(out), "%lld", sum);
    } else {
        /* yajl fills number.d for integers too. */
        double d = a->u.number.d + b->u.number.d;
        snprintf(out, sizeof(out), "%.15g", d);
        if (strtod(out, NULL) != d)
            snprintf(out, sizeof(out), "%.17g", d);
    }
    send_str(id, out);
}

static void call_sleep(const Tok *id, yajl_val args, yajl_val params)
{
    yajl_val ms = obj_get(args, "ms");
    Tok token;

    if (!YAJL_IS_INTEGER(ms) || ms->u.number.i < 0) {
        bad_args(id, "sleep", "{ms: integer >= 0}");
        return;
    }
    Timer *t = timer_new(TM_SLEEP, (uint64_t)ms->u.number.i);
    t->ms = (long)ms->u.number.i;
    t->id = tok_dup(id);
    /* A null or odd-typed token is not a token: only strings and numbers get progress. */
    if (!opt.no_progress && tok_from(obj_get(obj_get(params, "_meta"), "progressToken"), &token) &&
        token.kind != TOK_NULL) {
        t->token = tok_dup(&token);
        t->steps = t->ms / PROGRESS_EVERY_MS;
        if (t->steps > 0)
            t->due = t->start + PROGRESS_EVERY_MS;
    }
    timer_insert(t);
}

static void call_crash(const Tok *id, yajl_val args, yajl_val params)
{
    (void)id, (void)args, (void)params;
    note("crashing on request (exit 3)");
    exit(3);
}

static void call_big(const Tok *id, yajl_val args, yajl_val params)
{
    (void)params;
    yajl_val bytes = obj_get(args, "bytes");

    /* 1 GiB cap: beyond that the test is about the fake's memory, not the client's. */
    if (!YAJL_IS_INTEGER(bytes) || bytes->u.number.i < 0 || bytes->u.number.i > (1LL << 30)) {
        bad_args(id, "big", "{bytes: integer in 0..2^30}");
        return;
    }
    size_t n = (size_t)bytes->u.number.i;
    char *text = malloc(n + 1);
    if (!text)
        abort();
    memset(text, 'x', n);
    send_text(id, text, n, false);
    free(text);
}

static void call_fail(const Tok *id, yajl_val args, yajl_val params)
{
    (void)args, (void)params;
    send_error(id, -32603, "fake failure");
}

static void call_tool_error(const Tok *id, yajl_val args, yajl_val params)
{
    (void)args, (void)params;
    send_text(id, "tool said no", strlen("tool said no"), true);
}

static void call_env(const Tok *id, yajl_val args, yajl_val params)
{
    (void)params;
    const char *name = obj_str(args, "name"), *val;
    if (!name) {
        bad_args(id, "env", "{name: string}");
        return;
    }
    val = getenv(name);
    send_str(id, val ? val : "");
}

static void call_cwd(const Tok *id, yajl_val args, yajl_val params)
{
    (void)args, (void)params;
    char *cwd = getcwd(NULL, 0);
    if (!cwd) {
        send_errorf(id, -32603, "getcwd: %s", strerror(errno));
        return;
    }
    send_str(id, cwd);
    free(cwd);
}

static void call_pid(const Tok *id, yajl_val args, yajl_val params)
{
    (void)args, (void)params;
    char out[32];
    snprintf(out, sizeof(out), "%ld", (long)getpid());
    send_str(id, out);
}

/* Generic tools answer with their arguments as compact JSON text ({} when there were none). */
/* Asks in flight: our request id "ask-<n>" and the tools/call waiting for its answer. */
typedef struct Ask {
    struct Ask *next;
    long n;
    Tok call_id;
    char *url_eid; /* a url-mode elicitation's elicitationId: completed once accepted */
} Ask;
static Ask *asks;
static long next_ask;

static void call_ask(const Tok *id, yajl_val args, yajl_val params)
{
    const char *method = obj_str(args, "method");
    yajl_val p = obj_get(args, "params");
    char rid[32];

    (void)params;
    if (obj_str(args, "requireUrl")) {
        /* 2025-11-25's -32042: the call needs the person at a link first; the completion of
         * that elicitation follows the error at once (the person was quick). */
        yajl_gen g = msg_open();
        gs(g, "id");
        gen_tok(g, id);
        gs(g, "error");
        yajl_gen_map_open(g);
        gs(g, "code");
        yajl_gen_integer(g, -32042);
        gkv(g, "message", "this call needs you to sign in first");
        gs(g, "data");
        yajl_gen_map_open(g);
        gs(g, "elicitations");
        yajl_gen_array_open(g);
        yajl_gen_map_open(g);
        gkv(g, "mode", "url");
        gkv(g, "elicitationId", "req-1");
        gkv(g, "url", obj_str(args, "requireUrl"));
        gkv(g, "message", "Sign in");
        yajl_gen_map_close(g);
        yajl_gen_array_close(g);
        yajl_gen_map_close(g);
        yajl_gen_map_close(g);
        msg_send(g, true);
        yajl_gen done = msg_open();
        gkv(done, "method", "notifications/elicitation/complete");
        gs(done, "params");
        yajl_gen_map_open(done);
        gkv(done, "elicitationId", "req-1");
        yajl_gen_map_close(done);
        msg_send(done, false);
        return;
    }
    if (!method) {
        bad_args(id, "ask", "{method: string, params?: object}");
        return;
    }
    Ask *a = calloc(1, sizeof(*a));
    if (!a)
        abort();
    a->n = ++next_ask;
    a->call_id = tok_dup(id);
    if (strcmp(method, "elicitation/create") == 0 && obj_str(p, "mode") &&
        strcmp(obj_str(p, "mode"), "url") == 0 && obj_str(p, "elicitationId"))
        a->url_eid = strdup(obj_str(p, "elicitationId"));
    a->next = asks;
    asks = a;
    snprintf(rid, sizeof(rid), "ask-%ld", a->n);
    yajl_gen g = msg_open();
    gkv(g, "id", rid);
    gkv(g, "method", method);
    gs(g, "params");
    if (p)
        gen_value(g, p);
    else {
        yajl_gen_map_open(g);
        yajl_gen_map_close(g);
    }
    msg_send(g, false);
}

static void call_say(const Tok *id, yajl_val args, yajl_val params)
{
    const char *level = obj_str(args, "level"), *text = obj_str(args, "text");

    (void)params;
    if (!level || !text) {
        bad_args(id, "say", "{level: string, text: string}");
        return;
    }
    yajl_gen g = msg_open();
    gkv(g, "method", "notifications/message");
    gs(g, "params");
    yajl_gen_map_open(g);
    gkv(g, "level", level);
    gkv(g, "data", text);
    yajl_gen_map_close(g);
    msg_send(g, false);
    send_str(id, "said");
}

/* The client's answer to an ask: the waiting call gets it as text (the JSON as received). */
static void on_ask_answer(yajl_val msg, const char *rid)
{
    long n = strtol(rid + 4, NULL, 10);
    yajl_val v = obj_get(msg, "result");
    const char *tag = "result";

    for (Ask **pp = &asks; *pp; pp = &(*pp)->next) {
        if ((*pp)->n != n)
            continue;
        Ask *a = *pp;
        *pp = a->next;
        if (!v) {
            v = obj_get(msg, "error");
            tag = "error";
        }
        if (a->url_eid && strcmp(tag, "result") == 0 && obj_str(v, "action") &&
            strcmp(obj_str(v, "action"), "accept") == 0) {
            /* The person finished in the browser: the server says so, as url mode has it. */
            yajl_gen done = msg_open();
            gkv(done, "method", "notifications/elicitation/complete");
            gs(done, "params");
            yajl_gen_map_open(done);
            gkv(done, "elicitationId", a->url_eid);
            yajl_gen_map_close(done);
            msg_send(done, false);
        }
        yajl_gen g = yajl_gen_alloc(NULL);
        const unsigned char *buf;
        size_t len;
        yajl_gen_map_open(g);
        gs(g, tag);
        if (v)
            gen_value(g, v);
        else
            yajl_gen_null(g);
        yajl_gen_map_close(g);
        yajl_gen_get_buf(g, &buf, &len);
        send_text(&a->call_id, (const char *)buf, len, false);
        yajl_gen_free(g);
        free(a->call_id.s);
        free(a->url_eid);
        free(a);
        return;
    }
    note("answer to %s, which was not asked (or answered already)", rid);
}

/* v as compact JSON text, the text of the answer ({} for NULL). */
static void send_json_text(const Tok *id, yajl_val v)
{
    yajl_gen g = yajl_gen_alloc(NULL);
    const unsigned char *buf;
    size_t len;

    if (!g)
        abort();
    if (v) {
        gen_value(g, v);
    } else {
        yajl_gen_map_open(g);
        yajl_gen_map_close(g);
    }
    yajl_gen_get_buf(g, &buf, &len);
    send_text(id, (const char *)buf, len, false);
    yajl_gen_free(g);
}

static void call_generic(const Tok *id, yajl_val args, yajl_val params)
{
    (void)params;
    send_json_text(id, args);
}

/* "tool<k>" with k a canonical decimal below --tools. */
static bool is_generic_name(const char *name)
{
    const char *p = name + 4;
    char *end;

    if (strncmp(name, "tool", 4) != 0 || *p < '0' || *p > '9' || (p[0] == '0' && p[1]))
        return false;
    errno = 0;
    unsigned long k = strtoul(p, &end, 10);
    return !errno && !*end && k < (unsigned long)opt.tools;
}

static CallFn call_task_sleep;

static CallFn *find_tool(const char *name)
{
    if (opt.tasks && strcmp(name, "task_sleep") == 0)
        return call_task_sleep;
    for (size_t i = 0; i < N_BUILTIN; i++)
        if (strcmp(name, builtin_tools[i].name) == 0)
            return builtin_tools[i].call;
    if (st.late_tool && strcmp(name, late_tool.name) == 0)
        return late_tool.call;
    if (opt.ask && strcmp(name, ask_tool.name) == 0)
        return ask_tool.call;
    if (opt.ask && strcmp(name, say_tool.name) == 0)
        return say_tool.call;
    if (is_generic_name(name))
        return call_generic;
    return NULL;
}

/*
 * Write n bytes of 'x' and a newline to fd from one static chunk: a 100 MB line costs no
 * memory here, so only the reader's limits are tested. Returns false if the reader is gone.
 */
static bool write_stream(int fd, long n)
{
    static char chunk[65536];
    long left = n;

    if (!chunk[0])
        memset(chunk, 'x', sizeof(chunk));
    while (left > 0) {
        ssize_t w = write(fd, chunk, left < (long)sizeof(chunk) ? (size_t)left : sizeof(chunk));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        left -= w;
    }
    return write(fd, "\n", 1) == 1;
}

static void on_tools_call(const Tok *id, yajl_val params)
{
    const char *name = obj_str(params, "name");
    yajl_val args = obj_get(params, "arguments");
    CallFn *fn;

    if (opt.crash_after > 0 && ++st.calls >= opt.crash_after) {
        note("exiting on tools/call number %ld (--crash-after-calls)", st.calls);
        exit(4);
    }
    if (opt.huge_line > 0 && !st.stdout_closed && !write_stream(STDOUT_FILENO, opt.huge_line)) {
        st.stdout_closed = st.peer_gone = true;
        return;
    }
    if (!name) {
        send_error(id, -32602, "Invalid params: tools/call needs a string name");
    } else if (args && !YAJL_IS_OBJECT(args) && !YAJL_IS_NULL(args)) {
        send_error(id, -32602, "Invalid params: arguments must be an object");
    } else if (!(fn = find_tool(name))) {
        send_errorf(id, -32602, "Unknown tool: %s", name);
    } else {
        fn(id, YAJL_IS_NULL(args) ? NULL : args, params);
    }
}

/* ---------------------------------------------------------------- tasks (--tasks) */

/*
 * Task-augmented tools/call of task_sleep {ms, ask?, asks?, link?, id?}: a CreateTaskResult at
 * once, then after ms the task completes (progress and notifications/tasks/status with the
 * related-task _meta); with ask it first asks the client (elicitation/create tied to the task,
 * status input_required) and completes with the answer's action; asks "url", "sampling" or
 * "roots" asks that instead (url-mode elicitation, sampling/createMessage, roots/list), and an
 * error answer completes it with "error <code>". link: the result has a resource_link to
 * ui://task/view.html. Ids are "task-<n>" in every server, so two servers' ids collide, as they
 * may in the wild; id gives the id (a server reusing one). early: the task ends at once and its
 * status notification ("completed", a later lastUpdatedAt) is written before the
 * CreateTaskResult ("working"), as a server whose result and notification race may do.
 */
#define RELATED_TASK "io.modelcontextprotocol/related-task"

typedef struct FakeTask {
    char id[32];
    const char *status;
    long ms, ttl;
    const char *ask; /* NULL, "form", "url", "sampling", "roots" */
    bool asked, link;
    const char *updated; /* lastUpdatedAt */
    char *answer;        /* the elicitation's action */
    Tok token;           /* the call's progress token, or TOK_NONE */
    Tok waiter;          /* a tasks/result waiting for the end, or TOK_NONE */
} FakeTask;

static FakeTask *ftasks;
static size_t n_ftasks;

static const char *const task_schema = JSON({
    "type" : "object",
    "properties" : {
        "ms" : {"type" : "integer", "minimum" : 0, "description" : "How long the task runs."},
        "ask" : {"type" : "boolean", "description" : "Ask the client first (elicitation)."},
        "asks" : {"type" : "string", "description" : "Ask this instead: url, sampling, roots."},
        "link" : {"type" : "boolean", "description" : "A resource_link in the result."},
        "id" : {"type" : "string", "description" : "The task's id."},
        "early" : {"type" : "boolean", "description" : "Status before the result."}
    },
    "required" : ["ms"]
});

static void gen_task_tool(yajl_gen g)
{
    yajl_val schema = yajl_tree_parse(task_schema, NULL, 0);

    yajl_gen_map_open(g);
    gkv(g, "name", "task_sleep");
    gkv(g, "description", "Sleep ms milliseconds; as a task when the call asks for one.");
    gs(g, "inputSchema");
    gen_value(g, schema);
    gs(g, "execution");
    yajl_gen_map_open(g);
    gkv(g, "taskSupport", "optional");
    yajl_gen_map_close(g);
    yajl_gen_map_close(g);
    yajl_tree_free(schema);
}

static bool task_terminal(const FakeTask *t)
{
    return strcmp(t->status, "working") != 0 && strcmp(t->status, "input_required") != 0;
}

static void gen_related(yajl_gen g, const FakeTask *t)
{
    gs(g, "_meta");
    yajl_gen_map_open(g);
    gs(g, RELATED_TASK);
    yajl_gen_map_open(g);
    gkv(g, "taskId", t->id);
    yajl_gen_map_close(g);
    yajl_gen_map_close(g);
}

/* The Task object's members (inside an open map). */
static void gen_task_members(yajl_gen g, const FakeTask *t)
{
    gkv(g, "taskId", t->id);
    gkv(g, "status", t->status);
    gkv(g, "createdAt", "2025-11-25T00:00:00Z");
    gkv(g, "lastUpdatedAt", t->updated);
    gs(g, "ttl");
    yajl_gen_integer(g, t->ttl);
    gs(g, "pollInterval");
    yajl_gen_integer(g, 50);
}

static void send_task_status(const FakeTask *t)
{
    if (opt.tasks_silent)
        return;
    yajl_gen g = msg_open();
    gkv(g, "method", "notifications/tasks/status");
    gs(g, "params");
    yajl_gen_map_open(g);
    gen_task_members(g, t);
    yajl_gen_map_close(g);
    msg_send(g, false);
}

/* tasks/result's answer: the call's own result, tied to the task. */
static void send_task_result(const Tok *id, const FakeTask *t)
{
    char text[96];

    if (strcmp(t->status, "cancelled") == 0) {
        send_errorf(id, -32603, "task %s was cancelled", t->id);
        return;
    }
    snprintf(text, sizeof(text), "task slept %ld ms%s%s", t->ms, t->answer ? ", answer " : "",
             t->answer ? t->answer : "");
    yajl_gen g = result_open(id);
    yajl_gen_map_open(g);
    if (t->link) {
        gs(g, "content");
        yajl_gen_array_open(g);
        yajl_gen_map_open(g);
        gkv(g, "type", "text");
        gkv(g, "text", text);
        yajl_gen_map_close(g);
        yajl_gen_map_open(g);
        gkv(g, "type", "resource_link");
        gkv(g, "uri", "ui://task/view.html");
        gkv(g, "name", "view");
        yajl_gen_map_close(g);
        yajl_gen_array_close(g);
    } else
        gen_text_content(g, text, strlen(text));
    gen_related(g, t);
    yajl_gen_map_close(g);
    msg_send(g, true);
}

static void task_finish(FakeTask *t, const char *status)
{
    t->status = status;
    send_task_status(t);
    if (t->waiter.kind != TOK_NONE) {
        send_task_result(&t->waiter, t);
        free(t->waiter.s);
        t->waiter = (Tok){TOK_NONE, NULL};
    }
}

static void fire_task(long n)
{
    FakeTask *t = &ftasks[n];

    if (task_terminal(t))
        return;
    if (t->ask && !t->asked) {
        /* Ask the client; the answer completes the task (on_task_answer). */
        yajl_gen g = msg_open();
        char rid[48];
        snprintf(rid, sizeof(rid), "taskask-%ld", n);
        t->asked = true;
        t->status = "input_required";
        send_task_status(t);
        gkv(g, "id", rid);
        gkv(g, "method",
            strcmp(t->ask, "sampling") == 0 ? "sampling/createMessage"
            : strcmp(t->ask, "roots") == 0  ? "roots/list"
                                            : "elicitation/create");
        gs(g, "params");
        yajl_gen_map_open(g);
        if (strcmp(t->ask, "sampling") == 0) {
            gs(g, "messages");
            yajl_gen_array_open(g);
            yajl_gen_array_close(g);
            gs(g, "maxTokens");
            yajl_gen_integer(g, 10);
        } else if (strcmp(t->ask, "url") == 0) {
            gkv(g, "mode", "url");
            gkv(g, "message", "Sign in for the task");
            gkv(g, "url", "https://example.com/task-login");
            gkv(g, "elicitationId", rid);
        } else if (strcmp(t->ask, "form") == 0) {
            gkv(g, "message", "Go on with the task?");
            gs(g, "requestedSchema");
            yajl_gen_map_open(g);
            gkv(g, "type", "object");
            gs(g, "properties");
            yajl_gen_map_open(g);
            yajl_gen_map_close(g);
            yajl_gen_map_close(g);
        }
        gen_related(g, t);
        yajl_gen_map_close(g);
        msg_send(g, false);
        return;
    }
    if (t->token.kind != TOK_NONE) {
        yajl_gen g = msg_open();
        gkv(g, "method", "notifications/progress");
        gs(g, "params");
        yajl_gen_map_open(g);
        gs(g, "progressToken");
        gen_tok(g, &t->token);
        gs(g, "progress");
        yajl_gen_integer(g, 1);
        gs(g, "total");
        yajl_gen_integer(g, 1);
        gen_related(g, t);
        yajl_gen_map_close(g);
        msg_send(g, false);
    }
    task_finish(t, "completed");
}

static void on_task_answer(yajl_val msg, const char *rid)
{
    char *end;
    long n = strtol(rid + 8, &end, 10);
    yajl_val result = obj_get(msg, "result"), code = obj_get(obj_get(msg, "error"), "code");
    const char *action = obj_str(result, "action");
    char text[64];

    if (*end || n < 0 || (size_t)n >= n_ftasks || task_terminal(&ftasks[n]))
        return;
    if (YAJL_IS_INTEGER(code))
        snprintf(text, sizeof(text), "error %lld", (long long)YAJL_GET_INTEGER(code));
    else
        snprintf(text, sizeof(text), "%s",
                 action                       ? action
                 : obj_get(result, "roots")   ? "roots"
                 : obj_get(result, "content") ? "sampled"
                                              : "error");
    if (!(ftasks[n].answer = strdup(text)))
        abort();
    ftasks[n].status = "working";
    fire_task(n);
}

static void call_task_sleep(const Tok *id, yajl_val args, yajl_val params)
{
    yajl_val task = obj_get(params, "task"), ms = obj_get(args, "ms"), ttl = obj_get(task, "ttl");
    yajl_val meta = obj_get(params, "_meta");
    static const char *const ask_kinds[] = {"url", "sampling", "roots"};
    const char *kind = obj_str(args, "asks");
    FakeTask *t;
    Tok tok;

    if (!YAJL_IS_OBJECT(task)) {
        call_sleep(id, args, params);
        return;
    }
    if (!YAJL_IS_INTEGER(ms)) {
        bad_args(id, "task_sleep", "{ms: integer}");
        return;
    }
    if (!(ftasks = realloc(ftasks, (n_ftasks + 1) * sizeof(*ftasks))))
        abort();
    t = &ftasks[n_ftasks];
    memset(t, 0, sizeof(*t));
    snprintf(t->id, sizeof(t->id), "task-%zu", n_ftasks + 1);
    t->status = "working";
    t->updated = "2025-11-25T00:00:00Z";
    t->ms = (long)YAJL_GET_INTEGER(ms);
    t->ttl = YAJL_IS_INTEGER(ttl) ? (long)YAJL_GET_INTEGER(ttl) : 60000;
    t->ask = YAJL_IS_TRUE(obj_get(args, "ask")) ? "form" : NULL;
    for (size_t k = 0; kind && k < sizeof(ask_kinds) / sizeof(*ask_kinds); k++)
        if (strcmp(kind, ask_kinds[k]) == 0)
            t->ask = ask_kinds[k];
    t->link = YAJL_IS_TRUE(obj_get(args, "link"));
    if (obj_str(args, "id"))
        snprintf(t->id, sizeof(t->id), "%s", obj_str(args, "id"));
    if (tok_from(obj_get(meta, "progressToken"), &tok))
        t->token = tok_dup(&tok);
    bool early = YAJL_IS_TRUE(obj_get(args, "early"));
    if (!early) {
        Timer *tm = timer_new(TM_TASK, (uint64_t)t->ms);
        tm->ms = (long)n_ftasks;
        timer_insert(tm);
    }
    n_ftasks++;

    yajl_gen g = result_open(id);
    yajl_gen_map_open(g);
    gs(g, "task");
    yajl_gen_map_open(g);
    gen_task_members(g, t);
    yajl_gen_map_close(g);
    yajl_gen_map_close(g);
    if (early) {
        t->updated = "2025-11-25T00:00:01Z";
        task_finish(t, "completed"); /* its status goes out before the result */
    }
    msg_send(g, true);
}

static FakeTask *task_of(const Tok *id, yajl_val params)
{
    const char *tid = obj_str(params, "taskId");

    for (size_t i = 0; tid && i < n_ftasks; i++)
        if (strcmp(ftasks[i].id, tid) == 0)
            return &ftasks[i];
    send_errorf(id, -32602, "Invalid params: no task %s", tid ? tid : "(none)");
    return NULL;
}

static void on_tasks(const char *method, const Tok *id, yajl_val params)
{
    FakeTask *t;
    yajl_gen g;

    if (strcmp(method, "tasks/list") == 0) {
        g = result_open(id);
        yajl_gen_map_open(g);
        gs(g, "tasks");
        yajl_gen_array_open(g);
        for (size_t i = 0; i < n_ftasks; i++) {
            yajl_gen_map_open(g);
            gen_task_members(g, &ftasks[i]);
            yajl_gen_map_close(g);
        }
        yajl_gen_array_close(g);
        yajl_gen_map_close(g);
        msg_send(g, true);
        return;
    }
    if (!(t = task_of(id, params)))
        return;
    if (strcmp(method, "tasks/result") == 0) {
        if (task_terminal(t))
            send_task_result(id, t);
        else if (t->waiter.kind != TOK_NONE)
            send_errorf(id, -32600, "a tasks/result of %s is already waiting", t->id);
        else
            t->waiter = tok_dup(id);
        return;
    }
    if (strcmp(method, "tasks/cancel") == 0) {
        if (task_terminal(t)) {
            send_errorf(id, -32602, "Invalid params: task %s is already %s", t->id, t->status);
            return;
        }
        task_finish(t, "cancelled");
    }
    g = result_open(id);
    yajl_gen_map_open(g);
    gen_task_members(g, t);
    yajl_gen_map_close(g);
    msg_send(g, true);
}

/* ---------------------------------------------------------------- timer firing */

static void fire_sleep(Timer *t, uint64_t now)
{
    /* If we were held up, catch up on missed ticks rather than skipping numbers. */
    while (t->step < t->steps && t->start + (uint64_t)(t->step + 1) * PROGRESS_EVERY_MS <= now)
        send_progress(&t->token, ++t->step, t->steps);
    if (now >= t->end) {
        char out[48];
        snprintf(out, sizeof(out), "slept %ld ms", t->ms);
        send_str(&t->id, out);
        timer_free(t);
        return;
    }
    t->due = t->end;
    if (t->step < t->steps) {
        uint64_t tick = t->start + (uint64_t)(t->step + 1) * PROGRESS_EVERY_MS;
        if (tick < t->due)
            t->due = tick;
    }
    timer_insert(t);
}

static void fire_timer(Timer *t, uint64_t now)
{
    switch (t->kind) {
    case TM_SLEEP:
        fire_sleep(t, now);
        return;
    case TM_TASK:
        fire_task(t->ms);
        break;
    case TM_INIT:
        send_init_result(&t->id, t->version);
        break;
    case TM_LIST_CHANGED:
        st.late_tool = true;
        send_notification("notifications/tools/list_changed");
        for (long i = 1; i < bounds.list_changed_burst; i++)
            send_notification("notifications/tools/list_changed");
        break;
    }
    timer_free(t);
}

static void fire_due_timers(void)
{
    uint64_t now = now_ms();
    while (timers && timers->due <= now) {
        Timer *t = timers;
        timers = t->next;
        fire_timer(t, now);
    }
}

/* ---------------------------------------------------------------- dispatch */

static void on_cancelled(yajl_val params)
{
    Tok rid;

    if (!tok_from(obj_get(params, "requestId"), &rid))
        return;
    for (Timer **pp = &timers; *pp; pp = &(*pp)->next) {
        if ((*pp)->kind == TM_SLEEP && tok_equal(&(*pp)->id, &rid)) {
            Timer *t = *pp;
            *pp = t->next;
            note("dropped cancelled sleep call");
            timer_free(t);
            return;
        }
    }
}

static void on_notification(const char *method, yajl_val params)
{
    if (strcmp(method, "notifications/initialized") == 0) {
        if (opt.list_changed_ms >= 0 && !st.list_change_armed) {
            st.list_change_armed = true;
            timer_insert(timer_new(TM_LIST_CHANGED, (uint64_t)opt.list_changed_ms));
        }
    } else if (strcmp(method, "notifications/cancelled") == 0) {
        on_cancelled(params);
    }
    /* Other notifications are legal and need nothing from us. */
}

static void on_request(const char *method, const Tok *id, yajl_val params)
{
    if (opt.stderr_noise > 0)
        note("noise: handling %s", method);
    if (opt.strict_init && !opt.seen_init && strcmp(method, "initialize") != 0) {
        note("exiting on %s before initialize (--strict-init)", method);
        exit(6);
    }
    if (strcmp(method, "initialize") == 0) {
        opt.seen_init = true;
        on_initialize(id, params);
    } else if (strcmp(method, "ping") == 0 || strcmp(method, "logging/setLevel") == 0)
        send_empty_result(id);
    else if (strcmp(method, "tools/list") == 0)
        on_tools_list(id, params);
    else if (strcmp(method, "tools/call") == 0)
        on_tools_call(id, params);
    else if (opt.tasks && strncmp(method, "tasks/", 6) == 0)
        on_tasks(method, id, params);
    else if (opt.ignore_unknown)
        note("ignoring %s (--ignore-unknown)", method);
    else
        send_error(id, -32601, "Method not found");
}

static void on_message(yajl_val msg)
{
    const char *method = obj_str(msg, "method");
    yajl_val idv = obj_get(msg, "id");
    Tok id;

    if (!YAJL_IS_OBJECT(msg)) {
        note("ignoring a JSON value that is not an object");
        return;
    }
    if (!method) {
        const char *rid = obj_str(msg, "id");
        if (rid && strncmp(rid, "ask-", 4) == 0) {
            on_ask_answer(msg, rid);
            return;
        }
        if (rid && strncmp(rid, "taskask-", 8) == 0) {
            on_task_answer(msg, rid);
            return;
        }
        /* A response to a request we never send, or junk: nothing to answer. */
        note("ignoring a message without a method");
        return;
    }
    if (!idv) {
        on_notification(method, obj_get(msg, "params"));
        return;
    }
    if (!tok_from(idv, &id)) {
        note("ignoring %s with an id that is neither string, number nor null", method);
        return;
    }
    on_request(method, &id, obj_get(msg, "params"));
}

/* Print only the first line of yajl's multi-line, caret-drawing error. */
static void note_bad_json(const char *err, size_t len)
{
    size_t n = strcspn(err, "\n");
    note("ignoring a line that is not valid JSON (%zu bytes): %.*s", len, (int)n, err);
}

static void handle_line(char *line, size_t len)
{
    char err[512];

    if (len && line[len - 1] == '\r')
        line[--len] = '\0';
    if (strspn(line, " \t") == len)
        return;
    if (st.log) {
        fwrite(line, 1, len, st.log);
        fputc('\n', st.log);
        fflush(st.log);
    }
    st.current = yajl_tree_parse(line, err, sizeof(err));
    if (!st.current) {
        note_bad_json(err, len);
        return;
    }
    on_message(st.current);
    yajl_tree_free(st.current);
    st.current = NULL;
}

/* ---------------------------------------------------------------- input */

static struct {
    char *data;
    size_t len, cap;
    size_t scanned; /* bytes already known to hold no newline */
    bool open;
} in = {.open = true};

static void input_reserve(void)
{
    /* Doubling keeps a 64 MiB line to a dozen reallocs; +1 leaves room for a final NUL. */
    if (in.cap - in.len >= 65536 + 1)
        return;
    size_t cap = in.cap ? in.cap * 2 : 131072;
    char *p = realloc(in.data, cap);
    if (!p) {
        note("out of memory for a %zu-byte input buffer", cap);
        exit(1);
    }
    in.data = p;
    in.cap = cap;
}

static void input_lines(void)
{
    size_t start = 0;
    char *nl;

    /* Once the client is gone there is no point handling the rest. */
    while (!st.peer_gone && (nl = memchr(in.data + in.scanned, '\n', in.len - in.scanned))) {
        *nl = '\0';
        handle_line(in.data + start, (size_t)(nl - (in.data + start)));
        start = in.scanned = (size_t)(nl - in.data) + 1;
    }
    in.scanned = in.len;
    if (start) {
        memmove(in.data, in.data + start, in.len - start);
        in.len -= start;
        in.scanned -= start;
    }
}

static void input_eof(void)
{
    if (in.len) {
        /* Be lenient: a last line without its newline is still a message. */
        in.data[in.len] = '\0';
        handle_line(in.data, in.len);
        in.len = in.scanned = 0;
    }
    if (!opt.ignore_eof)
        exit(0);
    note("stdin closed; staying up (--ignore-stdin-eof)");
    in.open = false;
}

static void input_read(void)
{
    input_reserve();
    ssize_t n = read(STDIN_FILENO, in.data + in.len, in.cap - in.len - 1);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        input_eof();
        return;
    }
    in.len += (size_t)n;
    input_lines();
}

/* ---------------------------------------------------------------- start-up */

static void usage(FILE *f)
{
    fputs("usage: fake-server [options]\n"
          "  --name S                   serverInfo.name (default fake)\n"
          "  --tools N                  add generic tools tool0..tool(N-1)\n"
          "  --only-generic             list only the generic tools\n"
          "  --page-size N              tools/list page size (0 = one page)\n"
          "  --init-delay-ms N          answer initialize after N ms\n"
          "  --hang-init                never answer initialize\n"
          "  --exit-immediately         exit 1 before reading anything\n"
          "  --crash-after-calls N      exit 4 on the N-th tools/call\n"
          "  --garbage                  write a non-JSON line before every response\n"
          "  --stderr-noise N           N stderr lines at start, one per request\n"
          "  --list-fail                answer tools/list with an error\n"
          "  --list-changed-after-ms N  send tools/list_changed N ms after initialized\n"
          "  --ignore-sigterm           ignore SIGTERM\n"
          "  --ignore-stdin-eof         keep running after stdin EOF\n"
          "  --fork-grandchild          fork a child that sleeps forever\n"
          "  --stray-tree S             start `sleep S` three ways that outlive a crash of mcpd:\n"
          "                             a TERM- and EOF-ignoring child, a helper in its own\n"
          "                             group, a setsid double-forked grandchild; the last two\n"
          "                             with an empty environment (no MCPD_INSTANCE tag)\n"
          "  --touch-mb N               allocate and touch N MiB (a server's memory to measure)\n"
          "  --close-stdout-after-init  close stdout after initialize and tools/list\n"
          "  --exit-on-initialize       exit 5 when initialize arrives\n"
          "  --huge-line N              write an N-byte non-JSON line before each call's answer\n"
          "  --stderr-flood N           write N bytes of stderr lines at start\n"
          "  --no-progress              sleep calls send no progress (a hung call)\n"
          "  --list-changed-burst N     send N list_changed when the list changes\n"
          "  --repeat-cursor            later pages give cursor 0: a paging loop\n"
          "  --reverse-list             each tools/list page in reverse order\n"
          "  --log FILE                 append every received line to FILE\n"
          "  --pid-file FILE            write our pid to FILE\n"
          "  --ask                      list the tool ask {method, params}: a request to the "
          "client\n"
          "  --ignore-unknown           never answer a request it does not know\n"
          "  --tasks                    the tasks capability and the task tool task_sleep\n"
          "  --tasks-silent             --tasks, and no notifications/tasks/status\n"
          "  --echo-meta                echo answers with the call's params._meta as JSON\n",
          f);
}

static long parse_count(const char *s, const char *name)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 0) {
        fprintf(stderr, "fake-server: --%s wants a non-negative integer, got '%s'\n", name, s);
        exit(2);
    }
    return v;
}

enum {
    O_NAME = 256,
    O_TOOLS,
    O_PAGE,
    O_INIT_DELAY,
    O_HANG,
    O_EXIT,
    O_CRASH_AFTER,
    O_GARBAGE,
    O_NOISE,
    O_LIST_FAIL,
    O_LIST_CHANGED,
    O_SIGTERM,
    O_EOF,
    O_GRANDCHILD,
    O_STRAY_TREE,
    O_TOUCH_MB,
    O_CLOSE_STDOUT,
    O_LOG,
    O_PID_FILE,
    O_ONLY_GENERIC,
    O_ASK,
    O_ECHO_META,
    O_EXIT_ON_INIT,
    O_STRICT_INIT,
    O_HUGE_LINE,
    O_STDERR_FLOOD,
    O_NO_PROGRESS,
    O_LIST_CHANGED_BURST,
    O_REPEAT_CURSOR,
    O_IGNORE_UNKNOWN,
    O_TASKS,
    O_TASKS_SILENT,
    O_REVERSE_LIST,
};

static const struct option long_opts[] = {
    {"name", required_argument, NULL, O_NAME},
    {"tools", required_argument, NULL, O_TOOLS},
    {"page-size", required_argument, NULL, O_PAGE},
    {"init-delay-ms", required_argument, NULL, O_INIT_DELAY},
    {"hang-init", no_argument, NULL, O_HANG},
    {"exit-immediately", no_argument, NULL, O_EXIT},
    {"crash-after-calls", required_argument, NULL, O_CRASH_AFTER},
    {"garbage", no_argument, NULL, O_GARBAGE},
    {"stderr-noise", required_argument, NULL, O_NOISE},
    {"list-fail", no_argument, NULL, O_LIST_FAIL},
    {"list-changed-after-ms", required_argument, NULL, O_LIST_CHANGED},
    {"ignore-sigterm", no_argument, NULL, O_SIGTERM},
    {"ignore-stdin-eof", no_argument, NULL, O_EOF},
    {"fork-grandchild", no_argument, NULL, O_GRANDCHILD},
    {"stray-tree", required_argument, NULL, O_STRAY_TREE},
    {"touch-mb", required_argument, NULL, O_TOUCH_MB},
    {"close-stdout-after-init", no_argument, NULL, O_CLOSE_STDOUT},
    {"log", required_argument, NULL, O_LOG},
    {"pid-file", required_argument, NULL, O_PID_FILE},
    {"only-generic", no_argument, NULL, O_ONLY_GENERIC},
    {"ask", no_argument, NULL, O_ASK},
    {"echo-meta", no_argument, NULL, O_ECHO_META},
    {"exit-on-initialize", no_argument, NULL, O_EXIT_ON_INIT},
    {"strict-init", no_argument, NULL, O_STRICT_INIT},
    {"huge-line", required_argument, NULL, O_HUGE_LINE},
    {"stderr-flood", required_argument, NULL, O_STDERR_FLOOD},
    {"no-progress", no_argument, NULL, O_NO_PROGRESS},
    {"list-changed-burst", required_argument, NULL, O_LIST_CHANGED_BURST},
    {"repeat-cursor", no_argument, NULL, O_REPEAT_CURSOR},
    {"ignore-unknown", no_argument, NULL, O_IGNORE_UNKNOWN},
    {"tasks", no_argument, NULL, O_TASKS},
    {"tasks-silent", no_argument, NULL, O_TASKS_SILENT},
    {"reverse-list", no_argument, NULL, O_REVERSE_LIST},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void set_option(int c, const char *arg, const char *name)
{
    switch (c) {
    case O_NAME:
        opt.name = arg;
        break;
    case O_TOOLS:
        opt.tools = parse_count(arg, name);
        break;
    case O_PAGE:
        opt.page_size = parse_count(arg, name);
        break;
    case O_INIT_DELAY:
        opt.init_delay_ms = parse_count(arg, name);
        break;
    case O_HANG:
        opt.hang_init = true;
        break;
    case O_EXIT:
        opt.exit_now = true;
        break;
    case O_CRASH_AFTER:
        opt.crash_after = parse_count(arg, name);
        break;
    case O_GARBAGE:
        opt.garbage = true;
        break;
    case O_NOISE:
        opt.stderr_noise = parse_count(arg, name);
        break;
    case O_LIST_FAIL:
        opt.list_fail = true;
        break;
    case O_LIST_CHANGED:
        opt.list_changed_ms = parse_count(arg, name);
        break;
    case O_SIGTERM:
        opt.ignore_sigterm = true;
        break;
    case O_EOF:
        opt.ignore_eof = true;
        break;
    case O_GRANDCHILD:
        opt.grandchild = true;
        break;
    case O_STRAY_TREE:
        opt.stray_tree = arg;
        break;
    case O_TOUCH_MB:
        opt.touch_mb = parse_count(arg, name);
        break;
    case O_CLOSE_STDOUT:
        opt.close_stdout = true;
        break;
    case O_LOG:
        opt.log_path = arg;
        break;
    case O_PID_FILE:
        opt.pid_path = arg;
        break;
    case O_ONLY_GENERIC:
        opt.only_generic = true;
        break;
    case O_ASK:
        opt.ask = true;
        break;
    case O_ECHO_META:
        opt.echo_meta = true;
        break;
    case O_EXIT_ON_INIT:
        opt.exit_on_init = true;
        break;
    case O_STRICT_INIT:
        opt.strict_init = true;
        break;
    case O_HUGE_LINE:
        opt.huge_line = parse_count(arg, name);
        break;
    case O_STDERR_FLOOD:
        opt.stderr_flood = parse_count(arg, name);
        break;
    case O_NO_PROGRESS:
        opt.no_progress = true;
        break;
    case O_LIST_CHANGED_BURST:
        bounds.list_changed_burst = parse_count(arg, name);
        break;
    case O_REVERSE_LIST:
        bounds.reverse_list = true;
        break;
    case O_REPEAT_CURSOR:
        bounds.repeat_cursor = true;
        break;
    case O_IGNORE_UNKNOWN:
        opt.ignore_unknown = true;
        break;
    case O_TASKS:
        opt.tasks = true;
        break;
    case O_TASKS_SILENT:
        opt.tasks = opt.tasks_silent = true;
        break;
    case 'h':
        usage(stdout);
        exit(0);
    default:
        usage(stderr);
        exit(2);
    }
}

static void parse_options(int argc, char **argv)
{
    int c, idx;

    while ((c = getopt_long(argc, argv, "h", long_opts, &idx)) != -1)
        set_option(c, optarg, c >= O_NAME ? long_opts[idx].name : "");
    if (optind < argc) {
        fprintf(stderr, "fake-server: unexpected argument '%s'\n", argv[optind]);
        exit(2);
    }
}

static void write_pid_file(void)
{
    FILE *f = fopen(opt.pid_path, "w");
    if (!f || fprintf(f, "%ld\n", (long)getpid()) < 0 || fclose(f) != 0) {
        fprintf(stderr, "fake-server: %s: %s\n", opt.pid_path, strerror(errno));
        exit(1);
    }
}

static void fork_grandchild(void)
{
    pid_t pid = fork();
    if (pid < 0) {
        note("fork: %s", strerror(errno));
        exit(1);
    }
    if (pid == 0) {
        /* Keeps the inherited stdio open, as an npx wrapper's node child would. */
        for (;;)
            pause();
    }
    fprintf(stderr, "grandchild pid %ld\n", (long)pid);
}

/*
 * In a forked child: become `sleep arg`, with the environment given (NULL: ours). A daemon
 * (env given) lets go of our pipes, as daemons do: holding them, a stray left by a failing
 * test would keep the test runner waiting for its output to end.
 */
_Noreturn static void exec_sleep(const char *arg, char **env)
{
    char *argv[] = {"sleep", (char *)arg, NULL};
    int null = env ? open("/dev/null", O_RDWR) : -1;

    for (int fd = 0; null >= 0 && fd < 3; fd++)
        dup2(null, fd);
    if (env)
        execve("/bin/sleep", argv, env);
    else
        execv("/bin/sleep", argv);
    _exit(127);
}

/*
 * What real servers leave behind when their parent dies: the kinds mcpd must find by something
 * other than its tag or its process group.
 */
static void start_stray_tree(const char *arg)
{
    char *empty[] = {NULL};
    pid_t pid, mid;

    /* (a) An EOF- and TERM-ignoring child, tag kept: like an npx wrapper's node. */
    if ((pid = fork()) == 0) {
        signal(SIGTERM, SIG_IGN);
        signal(SIGHUP, SIG_IGN);
        exec_sleep(arg, NULL);
    }
    fprintf(stderr, "stray wrapper pid %ld\n", (long)pid);
    /* (b) A helper in its own process group that cleared its environment. */
    if ((pid = fork()) == 0) {
        setpgid(0, 0);
        exec_sleep(arg, empty);
    }
    fprintf(stderr, "stray helper pid %ld\n", (long)pid);
    /* (c) A daemon: fork, setsid, fork again, the middle one exits at once, no environment. */
    if ((mid = fork()) == 0) {
        setsid();
        if (fork() == 0)
            exec_sleep(arg, empty);
        _exit(0);
    }
    if (mid > 0)
        waitpid(mid, NULL, 0);
}

/* Memory that counts in PSS: every page written. */
static char *touched;

static void touch_memory(long mb)
{
    size_t n = (size_t)mb * 1024 * 1024;

    touched = malloc(n);
    if (!touched) {
        note("cannot allocate %ld MiB", mb);
        exit(1);
    }
    for (size_t i = 0; i < n; i += 4096)
        touched[i] = (char)(i / 4096 + 1);
}

/* Frees everything so valgrind sees a clean exit on every exit() path. */
static void cleanup(void)
{
    free(touched);
    while (timers) {
        Timer *t = timers;
        timers = t->next;
        timer_free(t);
    }
    for (size_t i = 0; i < N_BUILTIN; i++)
        yajl_tree_free(builtin_schema[i]);
    for (size_t i = 0; i < N_GENERIC_KINDS; i++)
        yajl_tree_free(generic_schema[i]);
    yajl_tree_free(late_schema);
    yajl_tree_free(ask_schema);
    yajl_tree_free(say_schema);
    yajl_tree_free(st.current);
    free(in.data);
    if (st.log)
        fclose(st.log);
}

static void start_up(void)
{
    signal(SIGPIPE, SIG_IGN);
    if (opt.ignore_sigterm)
        signal(SIGTERM, SIG_IGN);
    if (opt.pid_path)
        write_pid_file();
    if (opt.exit_now) {
        note("exiting at once (--exit-immediately)");
        exit(1);
    }
    if (opt.log_path && !(st.log = fopen(opt.log_path, "a"))) {
        fprintf(stderr, "fake-server: %s: %s\n", opt.log_path, strerror(errno));
        exit(1);
    }
    if (opt.grandchild)
        fork_grandchild();
    if (opt.stray_tree)
        start_stray_tree(opt.stray_tree);
    if (opt.touch_mb)
        touch_memory(opt.touch_mb);
    load_schemas();
    atexit(cleanup);
    for (long i = 1; i <= opt.stderr_noise; i++)
        note("noise %ld/%ld: warming up imaginary caches, please ignore", i, opt.stderr_noise);
    /* Lines of 1000 bytes, so the reader sees many lines as well as many bytes. */
    for (long left = opt.stderr_flood; left > 0; left -= 1000)
        if (!write_stream(STDERR_FILENO, left < 1000 ? left : 999))
            break;
}

int main(int argc, char **argv)
{
    parse_options(argc, argv);
    start_up();
    for (;;) {
        fire_due_timers();
        if (st.peer_gone)
            return 0;
        /* A negative fd is skipped by poll: after a tolerated EOF only timers remain. */
        struct pollfd pfd = {.fd = in.open ? STDIN_FILENO : -1, .events = POLLIN};
        int r = poll(&pfd, 1, poll_timeout());
        if (r < 0 && errno != EINTR) {
            note("poll: %s", strerror(errno));
            return 1;
        }
        if (r > 0 && pfd.revents)
            input_read();
        if (st.peer_gone)
            return 0;
    }
}
