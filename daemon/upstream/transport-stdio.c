// SPDX-License-Identifier: MIT
// transport-stdio: an MCP server as a child process, NDJSON over its stdin and stdout.

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <event2/event.h>

#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/log.h"
#include "common/outbuf.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/sys/loglimit.h"
#include "daemon/sys/child.h"
#include "daemon/sys/proctree.h"
#include "daemon/sys/runlog.h"
#include "daemon/sys/turn.h"
#include "daemon/upstream/sandbox.h"
#include "daemon/upstream/transport-stdio.h"
#include "daemon/upstream/transport.h"

/* A server that stops reading its stdin may not make the daemon queue without end. */
#define STDIN_QUEUE_MAX (64u * 1024u * 1024u)
/* The MCP spec's shutdown recipe with the SDK's timings: close stdin, 2 s, SIGTERM, 2 s, SIGKILL.
 */
#define STOP_TERM_AFTER_MS 2000
#define STOP_KILL_AFTER_MS 2000
/* The last stderr line that goes into a server's error: one line of a message, not a dump. */
#define STDERR_LAST_WORDS 300
/* After stdout EOF, how long to wait for the exit status that explains it. */
#define EOF_EXIT_GRACE_MS 250
/*
 * stdout lines of one server handled per loop turn. One read brings up to FRAMER_READ_CHUNK
 * bytes: tens of thousands of tiny lines, whose handling (a parse each) held every other server
 * and agent up for a quarter of a second under ASan, turn after turn, while a server flooded
 * its stdout. Past this many the rest waits for the next turn and the pipe is not read
 * meanwhile, so the flooding server is slowed down rather than everyone else; a turn of this
 * many ordinary messages stays in the low milliseconds.
 */
#define STDOUT_LINES_PER_TURN 1024
/* stderr lines into the log: a burst of this many, then this many per second. */
#define STDERR_LOG_BURST 100
#define STDERR_LOG_RATE  20

typedef struct StdioTransport {
    Transport base;
    Child *child;
    Framer in;
    OutBuf out;         /* to stdin; stays allocated between writes (no allocation per request) */
    TurnTask out_turn;  /* writes out once the turn's requests are all in it */
    TurnFd w_out, w_in; /* stdin and stdout, in the loop's own epoll set (turn.h) */
    struct event *ev_err, *ev_stop, *ev_free, *ev_eof;
    struct event *ev_more; /* lines left past STDOUT_LINES_PER_TURN: the next turn takes them */
    struct StdioTransport *next, *prev; /* every live stdio transport, for kill_all */
    RunLog *runlog; /* this run's stderr and exit go there, for mcpd/logs after it is gone */
    uint64_t run;
    StrBuf err_line;          /* partial stderr line */
    LogLimit log_limit;       /* stderr lines into the log */
    const char *grace_reason; /* what to report if no exit status comes within the grace */
    yajl_val sandbox;         /* the policy it runs contained by (a copy), or NULL */
    const char *sandbox_how;  /* and how (SANDBOX_HOW_*) */
    bool stdout_eof, closing, reported;
    int stop_stage;
} StdioTransport;

static unsigned n_live;
static StdioTransport *all_stdio;

unsigned transport_stdio_live_count(void)
{
    return n_live;
}

static void stdio_report(StdioTransport *s, const char *reason)
{
    _cleanup_free_ char *contained = NULL;

    if (s->reported || s->closing)
        return;
    s->reported = true;
    /* A contained server's error says where to look: the refusals are in its stderr. */
    if (s->sandbox)
        reason = contained =
            xasprintf("%s (it ran in a sandbox: `mcpctl logs %s` shows what was refused)", reason,
                      s->base.server);
    if (s->base.cb.closed)
        s->base.cb.closed(s->base.userdata, reason);
}

static void stdio_free(StdioTransport *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        all_stdio = s->next;
    if (s->next)
        s->next->prev = s->prev;
    event_free(s->ev_free);
    event_free(s->ev_eof);
    event_free(s->ev_more);
    turn_task_deinit(&s->out_turn);
    turn_fd_deinit(&s->w_out);
    turn_fd_deinit(&s->w_in);
    if (s->ev_err)
        event_free(s->ev_err);
    if (s->ev_stop)
        event_free(s->ev_stop);
    outbuf_deinit(&s->out);
    framer_deinit(&s->in);
    strbuf_deinit(&s->err_line);
    loglimit_deinit(&s->log_limit);
    child_free(s->child);
    runlog_unref(s->runlog);
    json_free(s->sandbox);
    free(s->base.server);
    free(s);
    n_live--;
}

static void on_free(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    stdio_free(arg);
}

/*
 * Done = exited and stdout at EOF; only then may a closing transport go away. The free runs
 * from the loop, never from the callback that noticed, which may still be using s.
 */
static void stdio_maybe_done(StdioTransport *s)
{
    if (s->closing && s->child->exited && s->stdout_eof)
        event_active(s->ev_free, EV_TIMEOUT, 0);
}

void transport_stdio_kill_all(void)
{
    for (StdioTransport *s = all_stdio; s; s = s->next)
        child_kill_group(s->child, SIGKILL);
}

static void log_stderr_line(StdioTransport *s, const char *line, size_t n)
{
    if (!loglimit_take(&s->log_limit))
        return;
    log_full(LOG_INFO, s->base.server, "stderr", "stderr: %.*s", (int)MIN(n, 2000), line);
}

static void on_stderr(evutil_socket_t fd, short what, void *arg)
{
    StdioTransport *s = arg;
    char buf[8192];
    ssize_t n;

    (void)what;
    n = read(fd, buf, sizeof(buf));
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        event_del(s->ev_err);
        return;
    }
    runlog_append(s->runlog, s->run, buf, (size_t)n);
    for (ssize_t i = 0, start = 0; i < n; i++) {
        if (buf[i] != '\n') {
            if (i == n - 1)
                strbuf_append(&s->err_line, buf + start, (size_t)(n - start));
            continue;
        }
        strbuf_append(&s->err_line, buf + start, (size_t)(i - start));
        log_stderr_line(s, strbuf_str(&s->err_line), s->err_line.len);
        strbuf_reset(&s->err_line);
        start = i + 1;
    }
    /* A line without a newline does not grow forever. */
    if (s->err_line.len > 4096) {
        log_stderr_line(s, strbuf_str(&s->err_line), s->err_line.len);
        strbuf_reset(&s->err_line);
    }
}

/*
 * The pipes say the process is going (stdout EOF, stdin broken): usually the exit follows at
 * once, and its status and last words say more than the pipe did. Report why only if it does not.
 */
static void await_exit(StdioTransport *s, const char *why)
{
    struct timeval tv = {0, EOF_EXIT_GRACE_MS * 1000};

    if (evtimer_pending(s->ev_eof, NULL))
        return;
    s->grace_reason = why;
    evtimer_add(s->ev_eof, &tv);
}

/*
 * Handle the complete lines read, at most STDOUT_LINES_PER_TURN; return whether some are left.
 * A closing transport's lines are dropped (nobody wants them), all of them, so its buffer does
 * not grow while the server is stopped.
 */
static bool take_lines(StdioTransport *s)
{
    unsigned n = 0;
    char *line;
    size_t len;
    int r;

    while ((r = framer_next(&s->in, &line, &len)) != FRAMER_E_AGAIN) {
        if (s->closing)
            continue;
        if (r == FRAMER_E_TOOBIG) {
            log_full(LOG_WARNING, s->base.server, "protocol",
                     "skipping a stdout line longer than %zu bytes", s->in.max);
            continue;
        }
        /* The owner may close us from inside the callback: the rest is then dropped. */
        if (s->base.cb.message)
            s->base.cb.message(s->base.userdata, line, len);
        if (++n == STDOUT_LINES_PER_TURN && !s->closing)
            return true;
    }
    framer_release_big(&s->in);
    return false;
}

/* Lines are left: stop reading, and take them on the next turn (a timer runs after the poll). */
static void more_next_turn(StdioTransport *s)
{
    struct timeval now = {0, 0};

    turn_fd_want(&s->w_in, 0);
    evtimer_add(s->ev_more, &now);
}

static void on_more(evutil_socket_t fd, short what, void *arg)
{
    StdioTransport *s = arg;

    (void)fd, (void)what;
    if (take_lines(s))
        more_next_turn(s);
    else if (!s->stdout_eof)
        turn_fd_want(&s->w_in, EV_READ);
}

static void on_stdout(evutil_socket_t fd, short what, void *arg)
{
    StdioTransport *s = arg;
    ssize_t n;

    (void)what;
    n = framer_read_fd(&s->in, fd);
    if (n == -EAGAIN || n == -EINTR)
        return;
    if (n <= 0) {
        turn_fd_want(&s->w_in, 0);
        s->stdout_eof = true;
        if (!s->child->exited && !s->closing)
            await_exit(s, "closed its stdout but is still running");
        stdio_maybe_done(s);
        return;
    }
    if (take_lines(s))
        more_next_turn(s);
}

static void on_eof_grace(evutil_socket_t fd, short what, void *arg)
{
    StdioTransport *s = arg;

    (void)fd, (void)what;
    stdio_report(s, s->grace_reason);
}

static void on_stdin_writable(evutil_socket_t fd, short what, void *arg)
{
    StdioTransport *s = arg;

    (void)what;
    ssize_t w = outbuf_write(&s->out, fd);
    if (w < 0 && w != -EAGAIN && w != -EINTR) {
        outbuf_clear(&s->out);
        if (s->child->exited)
            stdio_report(s, "stdin is closed (broken pipe)");
        else
            await_exit(s, "stdin is closed (broken pipe)");
        return;
    }
    if (outbuf_len(&s->out) > 0)
        turn_fd_want(&s->w_out, EV_WRITE);
}

/* The end of a turn in which requests were queued: they leave in one write. */
static void on_stdin_flush(evutil_socket_t fd, short what, void *arg)
{
    StdioTransport *s = arg;

    (void)fd;
    if (s->child->fd_stdin >= 0)
        on_stdin_writable(s->child->fd_stdin, what, s);
}

/* The last non-empty line of the run's stderr, cut to STDERR_LAST_WORDS bytes; NULL if none. */
static char *last_words(StdioTransport *s)
{
    StrBuf sb = STRBUF_INIT;
    char *end, *start, *r = NULL;

    runlog_tail(s->runlog, s->run, &sb);
    end = sb.data ? sb.data + sb.len : NULL;
    while (end && end > sb.data && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
        end--;
    if (end && end > sb.data) {
        start = end;
        while (start > sb.data && start[-1] != '\n')
            start--;
        r = xstrndup(start, MIN((size_t)(end - start), STDERR_LAST_WORDS));
    }
    strbuf_deinit(&sb);
    return r;
}

/*
 * A contained server that ended on its own: the hint goes into its run record (so `mcpctl logs`
 * shows it after the server's own last words) and the log.
 */
static void sandbox_note_exit(StdioTransport *s, const char *why)
{
    _cleanup_free_ char *hint = sandbox_exit_hint(s->base.server, s->sandbox, s->sandbox_how);
    _cleanup_free_ char *line = xasprintf("mcpd: %s\n", hint);

    runlog_append(s->runlog, s->run, line, strlen(line));
    log_full(LOG_WARNING, s->base.server, "sandbox", "%s; %s", why, hint);
}

static void on_exit_cb(Child *c, int status, void *userdata)
{
    StdioTransport *s = userdata;
    _cleanup_free_ char *why = child_describe_status(status), *words = NULL, *full = NULL;

    (void)c;
    event_del(s->ev_eof);
    /* What it said last is usually why: "exited with status 3: fatal: cannot open ...". */
    words = s->closing || s->reported ? NULL : last_words(s);
    full = words ? xasprintf("%s: %s", why, words) : NULL;
    /*
     * Into the run record while it is open (its end keeps only what it holds then), when it
     * ended on its own: not stopped, or stopped only after it had failed (a broken pipe).
     */
    if (s->sandbox && (s->reported || !s->closing))
        sandbox_note_exit(s, full ? full : why);
    runlog_end(s->runlog, s->run, status);
    log_full(s->closing ? LOG_DEBUG : LOG_WARNING, s->base.server, "exit", "process %d %s",
             (int)c->pid, why);
    stdio_report(s, full ? full : why);
    stdio_maybe_done(s);
}

static int stdio_send(Transport *t, const char *line, size_t len)
{
    StdioTransport *s = (StdioTransport *)t;

    if (s->closing || s->reported || s->child->fd_stdin < 0)
        return -ENOTCONN;
    if (outbuf_len(&s->out) + len > STDIN_QUEUE_MAX)
        return -ENOBUFS;
    bool idle = outbuf_len(&s->out) == 0;
    outbuf_append(&s->out, line, len);
    /* Written after the current batch of events: requests made together share one write. */
    if (idle)
        turn_defer(&s->out_turn);
    return 0;
}

static void on_stop_timer(evutil_socket_t fd, short what, void *arg)
{
    StdioTransport *s = arg;
    struct timeval tv = {STOP_KILL_AFTER_MS / 1000, (STOP_KILL_AFTER_MS % 1000) * 1000};

    (void)fd, (void)what;
    if (s->child->exited) {
        /* Exited, but something in its group still holds stdout open. */
        child_kill_group(s->child, SIGKILL);
        s->stdout_eof = true;
        stdio_maybe_done(s);
        return;
    }
    if (s->stop_stage++ == 0) {
        log_full(LOG_INFO, s->base.server, "stop", "no exit 2 s after stdin closed: SIGTERM");
        child_kill_group(s->child, SIGTERM);
        child_kill_group(s->child, SIGCONT); /* a stopped process could not act on it */
        evtimer_add(s->ev_stop, &tv);
    } else {
        log_full(LOG_WARNING, s->base.server, "stop", "still running after SIGTERM: SIGKILL");
        child_kill_group(s->child, SIGKILL);
        evtimer_add(s->ev_stop, &tv);
    }
}

static void stdio_close(Transport *t)
{
    StdioTransport *s = (StdioTransport *)t;
    struct timeval tv = {STOP_TERM_AFTER_MS / 1000, (STOP_TERM_AFTER_MS % 1000) * 1000};

    if (s->closing)
        return;
    s->closing = true;
    s->base.cb = (TransportCallbacks){0};
    event_del(s->ev_eof);
    turn_fd_deinit(&s->w_out); /* before its fd is closed below */
    turn_cancel(&s->out_turn);
    /* What is queued (a cancel sent just before) gets one last try, without waiting. */
    if (s->child->fd_stdin >= 0)
        (void)outbuf_write(&s->out, s->child->fd_stdin);
    outbuf_clear(&s->out);
    if (s->child->fd_stdin >= 0) {
        close(s->child->fd_stdin);
        s->child->fd_stdin = -1;
    }
    if (s->child->exited && !s->stdout_eof)
        child_kill_group(s->child, SIGKILL);
    /* Keep draining stdout so the child never blocks on a full pipe while it exits. */
    evtimer_add(s->ev_stop, &tv);
    stdio_maybe_done(s);
}

static void stdio_status(Transport *t, yajl_val obj)
{
    StdioTransport *s = (StdioTransport *)t;

    json_object_set(obj, "pid", json_int_new(s->child->pid));
    if (s->sandbox_how)
        json_object_set(obj, "sandboxedBy", json_string_new(s->sandbox_how));
    proctree_status(s->child->serial, s->child->started_ms, obj);
}

static void stdio_logs(Transport *t, StrBuf *sb)
{
    StdioTransport *s = (StdioTransport *)t;

    runlog_tail(s->runlog, s->run, sb);
}

static const TransportOps stdio_ops = {
    .kind = "stdio",
    .send = stdio_send,
    .close = stdio_close,
    .status = stdio_status,
    .logs = stdio_logs,
};

int transport_stdio_new(Transport **tp, struct event_base *base, const ServerConfig *cfg,
                        const char *default_cwd, const TransportCallbacks *cb, void *userdata,
                        char **whyp)
{
    StdioTransport *s = xcalloc(1, sizeof(*s));
    char **argv = xcalloc(cfg->n_args + 2, sizeof(char *));
    ChildSpec spec = {cfg->command, argv, cfg->env, cfg->cwd ? cfg->cwd : default_cwd};
    int r;

    argv[0] = cfg->command;
    for (size_t i = 0; i < cfg->n_args; i++)
        argv[i + 1] = cfg->args[i];
    s->runlog = runlog_get(cfg->name, default_cwd);
    if (cfg->sandbox)
        r = sandbox_spawn(&s->child, &spec, cfg->sandbox, cfg->name, on_exit_cb, s, &s->sandbox_how,
                          whyp);
    else
        r = child_spawn(&s->child, &spec, on_exit_cb, s, whyp);
    free(argv);
    if (r < 0) {
        runlog_spawn_failed(s->runlog, *whyp);
        runlog_unref(s->runlog);
        free(s);
        return r;
    }
    s->run = runlog_begin(s->runlog, s->child->pid);
    s->sandbox = json_copy(cfg->sandbox);
    n_live++;
    s->base.ops = &stdio_ops;
    s->base.cb = *cb;
    s->base.userdata = userdata;
    s->base.base = base;
    s->base.server = xstrdup(cfg->name);
    loglimit_init(&s->log_limit, base, cfg->name, "stderr", "stderr lines", STDERR_LOG_BURST,
                  STDERR_LOG_RATE);
    framer_init(&s->in, JSONRPC_MAX_LINE_DEFAULT);
    outbuf_init(&s->out, NULL);
    bool watched =
        turn_fd_init(&s->w_out, base, s->child->fd_stdin, NULL, on_stdin_writable, s) == 0;
    turn_task_init(&s->out_turn, base, on_stdin_flush, s);
    watched = turn_fd_init(&s->w_in, base, s->child->fd_stdout, on_stdout, NULL, s) == 0 && watched;
    s->ev_err = event_new(base, s->child->fd_stderr, EV_READ | EV_PERSIST, on_stderr, s);
    s->ev_stop = evtimer_new(base, on_stop_timer, s);
    s->ev_free = evtimer_new(base, on_free, s);
    s->ev_eof = evtimer_new(base, on_eof_grace, s);
    s->ev_more = evtimer_new(base, on_more, s);
    s->next = all_stdio;
    if (all_stdio)
        all_stdio->prev = s;
    all_stdio = s;
    event_add(s->ev_err, NULL);
    if (!watched || turn_fd_want(&s->w_in, EV_READ) < 0)
        await_exit(s, "mcpd cannot watch its pipes (epoll failed: see mcpd's log)");
    if (cfg->sandbox) {
        _cleanup_free_ char *how = sandbox_describe(cfg->sandbox, s->sandbox_how);
        log_full(LOG_INFO, cfg->name, "spawn", "started %s (pid %d) in the sandbox %s",
                 cfg->command, (int)s->child->pid, how);
    } else
        log_full(LOG_INFO, cfg->name, "spawn", "started %s (pid %d)", cfg->command,
                 (int)s->child->pid);
    *tp = &s->base;
    return 0;
}
