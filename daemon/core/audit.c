// SPDX-License-Identifier: MIT
// audit: one entry per tool call (who called which tool of which server, how long it took, how
// it ended), to the journal, a log line or a file of JSON lines (docs/audit.md).

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/json.h"
#include "common/log.h"
#include "common/mcp.h"
#include "common/paths.h"
#include "common/redact.h"
#include "common/util.h"
#include "daemon/core/audit.h"
#include "daemon/sys/systemd.h"

/* Fields of one entry: the journal's MESSAGE, PRIORITY, identifier, event and these. */
#define AUDIT_MAX_FIELDS 16

/* The trace context an agent passes in _meta (W3C Trace Context), named in entries as given. */
#define AUDIT_META_TRACEPARENT "traceparent"
#define AUDIT_META_TRACESTATE  "tracestate"

/* One field of an entry: its JSON key, its journal name, its value (JSON text when json). */
typedef struct Field {
    const char *key;
    const char *journal;
    const char *value;
    bool json;
} Field;

/* Room for an int64 in decimal with its sign and a NUL. */
#define NUM_MAX 21

typedef struct Entry {
    Field f[AUDIT_MAX_FIELDS];
    size_t n;
    char took[NUM_MAX], pid[NUM_MAX], code[NUM_MAX]; /* the numbers' texts */
} Entry;

/* v in decimal into buf (NUM_MAX bytes), without printf: an entry is made on every call. */
static const char *fmt_i64(char *buf, int64_t v)
{
    char tmp[NUM_MAX];
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    size_t n = 0, k = 0;

    do
        tmp[n++] = (char)('0' + u % 10);
    while ((u /= 10));
    if (v < 0)
        buf[k++] = '-';
    while (n)
        buf[k++] = tmp[--n];
    buf[k] = '\0';
    return buf;
}

static void entry_add(Entry *e, const char *key, const char *journal, const char *value, bool json)
{
    if (value && e->n < AUDIT_MAX_FIELDS)
        e->f[e->n++] = (Field){key, journal, value, json};
}

const char *audit_outcome_name(AuditOutcome o)
{
    static const char *const names[] = {
        [AUDIT_CANCELLED] = "cancelled",     [AUDIT_OK] = "ok",
        [AUDIT_TOOL_ERROR] = "tool-error",   [AUDIT_ERROR] = "error",
        [AUDIT_TIMEOUT] = "timeout",         [AUDIT_CLOSED] = "closed",
        [AUDIT_UNAVAILABLE] = "unavailable", [AUDIT_TASK] = "task",
        [AUDIT_REFUSED] = "refused",
    };
    return (unsigned)o < N_ELEMENTS(names) ? names[o] : "?";
}

AuditOutcome audit_outcome_of_code(int64_t code)
{
    switch (code) {
    case MCP_ERROR_REQUEST_TIMEOUT:
        return AUDIT_TIMEOUT;
    case MCP_ERROR_CONNECTION_CLOSED:
        return AUDIT_CLOSED;
    case MCPD_ERROR_UNAVAILABLE:
        return AUDIT_UNAVAILABLE;
    default:
        return AUDIT_ERROR;
    }
}

AuditOutcome audit_outcome_of_result(const Audit *au, const char *raw, size_t n)
{
    /* Looked for only when an entry will say it. The bytes "isError":true with their quotes can
     * only be a member (inside a string the quotes are escaped); a server writing it with spaces
     * or nested deeper is read as ok, which an audit trail can live with. */
    if (!raw || !audit_enabled(au))
        return AUDIT_OK;
    return memmem(raw, n, "\"isError\":true", 14) ? AUDIT_TOOL_ERROR : AUDIT_OK;
}

char *audit_copy_arguments(const Audit *au, const char *args, size_t n)
{
    _cleanup_free_ char *text = NULL;
    _cleanup_json_ yajl_val v = NULL;
    char *shown;

    if (!au->settings || !au->settings->audit_arguments || !audit_enabled(au))
        return NULL;
    if (!args)
        return xstrdup("{}");
    if (json_parse_full(&v, args, n, JSON_UTF8_REPAIR, NULL) != 0)
        return xstrdup("\"(arguments not JSON)\"");
    redact_json_secrets(v);
    shown = json_to_string(v);
    if (strlen(shown) > AUDIT_ARGS_MAX) {
        /* Cut text is no longer JSON: it is given as a string that says so. */
        StrBuf sb = STRBUF_INIT;
        text = xasprintf("%.*s... (cut at %d bytes)", AUDIT_ARGS_MAX, shown, AUDIT_ARGS_MAX);
        json_write_string(&sb, text, strlen(text));
        free(shown);
        shown = strbuf_detach(&sb, NULL);
    }
    return shown;
}

/* The executable of an agent's process, read once per agent (empty when it cannot be read). */
static const char *agent_exe(Agent *a, int pid)
{
    char link[64], buf[PATH_MAX];
    ssize_t n;

    if (a->exe)
        return a->exe;
    snprintf(link, sizeof(link), "/proc/%d/exe", pid);
    n = pid > 0 ? readlink(link, buf, sizeof(buf) - 1) : -1;
    buf[n > 0 ? n : 0] = '\0';
    a->exe = xstrdup(buf);
    return a->exe;
}

/* ---- sinks ---- */

static void write_journal(const Entry *e, const char *message)
{
    struct iovec iov[AUDIT_MAX_FIELDS + 4];
    char *texts[AUDIT_MAX_FIELDS + 4];
    size_t n = 0;

    texts[n++] = xasprintf("MESSAGE=%s", message);
    texts[n++] = xasprintf("PRIORITY=%d", LOG_NOTICE);
    texts[n++] = xstrdup("SYSLOG_IDENTIFIER=mcpd");
    texts[n++] = xstrdup("MCPD_EVENT=call");
    for (size_t i = 0; i < e->n; i++)
        texts[n++] = xasprintf("%s=%s", e->f[i].journal, e->f[i].value);
    for (size_t i = 0; i < n; i++)
        iov[i] = (struct iovec){texts[i], strlen(texts[i])};
    if (systemd_journal_sendv(iov, (int)n) < 0)
        log_full(LOG_NOTICE, NULL, "call", "%s", message);
    for (size_t i = 0; i < n; i++)
        free(texts[i]);
}

/* key=value pairs, strings quoted as JSON strings: one line a person and a program can read. */
static void write_line(const Entry *e, const char *server)
{
    StrBuf sb = STRBUF_INIT;

    strbuf_puts(&sb, "call");
    for (size_t i = 0; i < e->n; i++) {
        strbuf_printf(&sb, " %s=", e->f[i].key);
        if (e->f[i].json)
            strbuf_puts(&sb, e->f[i].value);
        else
            json_write_string(&sb, e->f[i].value, strlen(e->f[i].value));
    }
    log_full(LOG_NOTICE, server, "call", "%s", strbuf_str(&sb));
    strbuf_deinit(&sb);
}

static void audit_file_open(Audit *au)
{
    _cleanup_free_ char *state = NULL, *dir = NULL;
    struct stat st;

    if (!au->path) {
        state = paths_state_home();
        dir = paths_join(state, "mcpd");
        au->path = paths_join(dir, "audit.jsonl");
        paths_mkdir_p(dir, 0700);
    }
    au->fd = open(au->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (au->fd < 0) {
        if (!au->file_failed)
            log_warning("audit: cannot open %s: %m; entries are lost until it can be opened "
                        "(check the directory, or set \"audit\" to \"log\" in mcpd.json)",
                        au->path);
        au->file_failed = true;
        return;
    }
    au->file_failed = false;
    au->file_size = fstat(au->fd, &st) == 0 ? st.st_size : 0;
}

/* The file passed AUDIT_FILE_MAX: it becomes audit.jsonl.1 and a new one begins. */
static void audit_file_rotate(Audit *au)
{
    _cleanup_free_ char *old = xasprintf("%s.1", au->path);

    close(au->fd);
    au->fd = -1;
    if (rename(au->path, old) < 0)
        log_warning("audit: cannot rename %s to %s: %m", au->path, old);
    audit_file_open(au);
}

static void audit_flush(Audit *au)
{
    const char *p = au->buf.data;
    size_t left = au->buf.len;

    if (!left)
        return;
    if (au->fd < 0)
        audit_file_open(au);
    while (au->fd >= 0 && left) {
        ssize_t w = write(au->fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            log_warning("audit: cannot write %s: %m; %zu bytes of entries lost", au->path, left);
            break;
        }
        p += w;
        left -= (size_t)w;
        au->file_size += w;
    }
    strbuf_reset(&au->buf);
    if (au->fd >= 0 && au->file_size > AUDIT_FILE_MAX)
        audit_file_rotate(au);
}

static void on_flush(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    audit_flush(arg);
}

/* One JSON object a line, the entry's own keys, with the time it was written. */
static void write_file(Audit *au, const Entry *e)
{
    StrBuf *sb = &au->buf;
    char now[NUM_MAX];

    strbuf_puts(sb, "{\"time\":");
    strbuf_puts(sb, fmt_i64(now, wall_ms()));
    for (size_t i = 0; i < e->n; i++) {
        strbuf_puts(sb, ",\"");
        strbuf_puts(sb, e->f[i].key);
        strbuf_puts(sb, "\":");
        if (e->f[i].json)
            strbuf_puts(sb, e->f[i].value);
        else
            json_write_string(sb, e->f[i].value, strlen(e->f[i].value));
    }
    strbuf_puts(sb, "}\n");
    if (sb->len >= AUDIT_BUFFER_FLUSH) {
        evtimer_del(au->flush);
        audit_flush(au);
    } else if (!evtimer_pending(au->flush, NULL)) {
        struct timeval tv = {AUDIT_FLUSH_MS / 1000, (AUDIT_FLUSH_MS % 1000) * 1000};
        evtimer_add(au->flush, &tv);
    }
}

/* ---- entries ---- */

/* The trace context of the call's _meta (W3C traceparent, tracestate), as given; to free. */
static void trace_context(const char *meta, char **parentp, char **statep)
{
    _cleanup_free_ char *text = NULL;
    _cleanup_json_ yajl_val v = NULL;
    const char *s;

    *parentp = *statep = NULL;
    if (!meta || !strstr(meta, "trace"))
        return;
    text = xasprintf("{%s}", meta);
    v = json_parse(text, NULL);
    if ((s = json_get_string(v, AUDIT_META_TRACEPARENT)))
        *parentp = xstrdup(s);
    if ((s = json_get_string(v, AUDIT_META_TRACESTATE)))
        *statep = xstrdup(s);
}

void audit_call_end(Audit *au, const AuditCall *ac)
{
    WorkspaceRegistry *wr = au->workspaces;
    Agent *a = agent_get(wr->agents, ac->peer_id);
    Peer *p = peer_get(wr->peers, ac->peer_id);
    Workspace *ws = a ? ws_of_agent(wr, a) : NULL;
    bool refused = ac->outcome == AUDIT_REFUSED;
    const ToolStat *ts = ac->server && !ac->tool_name
                             ? idmap_get(&ac->server->tool_stats.by_key, ac->tool_key)
                             : NULL;
    /* A refused call's tool may have no server at all (unknown): "" then, not "gone" ("?"). */
    const char *server = ac->server ? ac->server->cfg->name : refused ? "" : "?";
    const char *tool = ts ? ts->name : ac->tool_name ? ac->tool_name : "?";
    const char *client = a && a->client_name ? a->client_name : "";
    _cleanup_free_ char *parent = NULL, *state = NULL, *message = NULL;
    Entry e;
    const char *took, *pid, *code = NULL;

    e.n = 0;
    took = fmt_i64(e.took, (int64_t)ac->took_ms);
    pid = fmt_i64(e.pid, p ? (int64_t)p->pid : 0);
    au->entries++;
    if ((ac->outcome >= AUDIT_ERROR && ac->outcome <= AUDIT_UNAVAILABLE) || refused)
        code = fmt_i64(e.code, ac->code);
    trace_context(ac->meta, &parent, &state);
    entry_add(&e, "server", "MCPD_SERVER", server, false);
    entry_add(&e, "tool", "MCPD_TOOL", tool, false);
    entry_add(&e, "agent", "MCPD_AGENT", client, false);
    entry_add(&e, "pid", "MCPD_AGENT_PID", pid, true);
    entry_add(&e, "exe", "MCPD_AGENT_EXE", a && p ? agent_exe(a, (int)p->pid) : "", false);
    entry_add(&e, "project", "MCPD_PROJECT", ws && ws->root ? ws->root : "", false);
    entry_add(&e, "durationMs", "MCPD_DURATION_MS", took, true);
    entry_add(&e, "outcome", "MCPD_OUTCOME", audit_outcome_name(ac->outcome), false);
    entry_add(&e, "code", "MCPD_ERROR_CODE", code, true);
    entry_add(&e, "requestId", "MCPD_REQUEST_ID", ac->request_id, true);
    entry_add(&e, "traceparent", "MCPD_TRACEPARENT", parent, false);
    entry_add(&e, "tracestate", "MCPD_TRACESTATE", state, false);
    entry_add(&e, "arguments", "MCPD_ARGUMENTS", ac->arguments, true);

    if (au->settings->audit == SETTINGS_AUDIT_FILE) {
        write_file(au, &e);
        return;
    }
    if (!au->journal) {
        write_line(&e, server);
        return;
    }
    message = xasprintf("tools/call %s/%s from %s (pid %s): %s in %s ms", server, tool,
                        *client ? client : "an agent", pid, audit_outcome_name(ac->outcome), took);
    write_journal(&e, message);
}

void audit_init(Audit *au, WorkspaceRegistry *workspaces)
{
    memset(au, 0, sizeof(*au));
    au->workspaces = workspaces;
    au->settings = workspaces->settings;
    au->journal = systemd_stderr_is_journal();
    au->fd = -1;
    au->flush = evtimer_new(workspaces->base, on_flush, au);
}

void audit_deinit(Audit *au)
{
    if (au->settings)
        audit_flush(au);
    if (au->flush)
        event_free(au->flush);
    strbuf_deinit(&au->buf);
    if (au->fd >= 0)
        close(au->fd);
    free(au->path);
    memset(au, 0, sizeof(*au));
    au->fd = -1;
}
