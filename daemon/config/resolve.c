// SPDX-License-Identifier: MIT
// resolve: connect-time values (!command, environment-variable names, OAuth credentials), on the
// loop.

#include <errno.h>
#include <ctype.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include <event2/event.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/sys/child.h"
#include "daemon/sys/keyring.h"
#include "daemon/config/credentials.h"
#include "daemon/config/resolve.h"

typedef struct Job {
    struct Resolve *r;
    char *key; /* member of the map (env or headers) whose value this command produces */
    char *command;
    bool helper; /* the headersHelper: its output is a JSON object of headers, not one value */
    Child *child;
    struct event *ev_out, *ev_err;
    StrBuf out;
    bool out_eof, err_eof, done;
} Job;

struct Resolve {
    struct event_base *base;
    ServerConfig *cfg; /* the copy being resolved */
    const char *field; /* "env" or "headers" */
    yajl_val map;      /* cfg->env or cfg->headers */
    char *credentials_path;
    int64_t timeout_ms;
    Job *jobs;
    size_t n_jobs, n_running;
    struct event *ev_timeout, *ev_finish;
    char *error;
    bool retryable;
    ResolveDoneFn fn;
    void *userdata;
    yajl_val helper_headers; /* what the headersHelper printed, laid over the headers at the end */
};

static void wipe(StrBuf *sb)
{
    if (sb->data)
        explicit_bzero(sb->data, sb->cap);
    strbuf_deinit(sb);
}

static void job_stop(Job *j)
{
    if (j->ev_out)
        event_free(j->ev_out);
    if (j->ev_err)
        event_free(j->ev_err);
    j->ev_out = j->ev_err = NULL;
    /* Kills the group and reaps it when it has not exited: never a zombie or an orphan. */
    child_free(j->child);
    j->child = NULL;
}

static void resolve_free(Resolve *r)
{
    for (size_t i = 0; i < r->n_jobs; i++) {
        job_stop(&r->jobs[i]);
        free(r->jobs[i].key);
        free(r->jobs[i].command);
        wipe(&r->jobs[i].out);
    }
    free(r->jobs);
    json_free(r->helper_headers);
    event_free(r->ev_timeout);
    event_free(r->ev_finish);
    server_config_free(r->cfg);
    free(r->credentials_path);
    free(r->error);
    free(r);
}

/* What a job is, for messages: "env.KEY: `!cmd`" or "headersHelper `cmd`" (to free). */
static char *job_what(const Job *j)
{
    if (j->helper)
        return xasprintf("headersHelper `%s`", j->command);
    return xasprintf("%s.%s: `!%s`", j->r->field, j->key, j->command);
}

/* Record the first failure and finish; the callback runs from the loop. */
static void resolve_fail(Resolve *r, bool retryable, const char *fmt, ...) _printf_(3, 4);
static void resolve_fail(Resolve *r, bool retryable, const char *fmt, ...)
{
    StrBuf sb = STRBUF_INIT;
    va_list ap;

    if (r->error)
        return;
    va_start(ap, fmt);
    strbuf_vprintf(&sb, fmt, ap);
    va_end(ap);
    r->error = strbuf_detach(&sb, NULL);
    r->retryable = retryable;
    event_active(r->ev_finish, EV_TIMEOUT, 0);
}

static int apply_oauth(Resolve *r)
{
    ServerConfig *c = r->cfg;
    _cleanup_free_ char *token = NULL, *why = NULL, *bearer = NULL;

    if (!streq(c->auth_type, "oauth") || !c->credential_id)
        return 0;
    if (credentials_lookup(r->credentials_path, c->credential_id, &token, &why) < 0) {
        r->error = xasprintf("Server \"%s\": auth: %s", c->name, why);
        r->retryable = false;
        return -EINVAL;
    }
    if (c->type == TRANSPORT_STDIO) {
        if (!c->env)
            c->env = json_object_new();
        json_object_set(c->env, "OAUTH_ACCESS_TOKEN", json_string_new(token));
    } else {
        if (!c->headers)
            c->headers = json_object_new();
        bearer = xasprintf("Bearer %s", token);
        json_object_set(c->headers, "Authorization", json_string_new(bearer));
        explicit_bzero(bearer, strlen(bearer));
    }
    explicit_bzero(token, strlen(token));
    return 0;
}

static void on_finish(evutil_socket_t fd, short what, void *arg)
{
    Resolve *r = arg;

    (void)fd, (void)what;
    if (!r->error && r->helper_headers) {
        /* The helper's headers win over the written ones, as in Claude Code. */
        if (!r->cfg->headers)
            r->cfg->headers = json_object_new();
        for (size_t i = 0; i < r->helper_headers->u.object.len; i++)
            json_object_set(r->cfg->headers, r->helper_headers->u.object.keys[i],
                            json_copy(r->helper_headers->u.object.values[i]));
    }
    if (!r->error) {
        apply_oauth(r);
    }
    if (r->error) {
        r->fn(r->userdata, NULL, r->error, r->retryable);
    } else {
        ServerConfig *done = r->cfg;
        r->cfg = NULL;
        r->fn(r->userdata, done, NULL, false);
    }
    resolve_free(r);
}

/* A header's name: an HTTP token (RFC 9110 5.6.2), so no line of its own can be made of it. */
static bool header_name_ok(const char *k)
{
    if (!*k)
        return false;
    for (; *k; k++)
        if (!(isalnum((unsigned char)*k) || strchr("!#$%&'*+-.^_`|~", *k)))
            return false;
    return true;
}

/*
 * The headersHelper's stdout (Claude Code's contract: a JSON object whose values are all strings)
 * into r->helper_headers. Nothing of the output is quoted in an error: it holds secrets.
 */
static void helper_take(Job *j, const char *s, size_t n)
{
    Resolve *r = j->r;
    _cleanup_free_ char *text = xstrndup(s, n), *err = NULL;
    yajl_val o = json_parse(text, &err);
    const char *bad = NULL;

    explicit_bzero(text, n);
    if (!YAJL_IS_OBJECT(o))
        bad = "a JSON object of header names and string values";
    for (size_t i = 0; !bad && i < o->u.object.len; i++) {
        yajl_val v = o->u.object.values[i];
        if (!header_name_ok(o->u.object.keys[i]))
            bad = "header names that are HTTP tokens";
        else if (!YAJL_IS_STRING(v))
            bad = "string values only";
        else if (strpbrk(v->u.string, "\r\n"))
            bad = "values without line breaks";
    }
    if (bad) {
        _cleanup_free_ char *what = job_what(j);
        json_free(o);
        resolve_fail(r, true,
                     "Server \"%s\": %s did not print %s (Claude Code's headersHelper contract); "
                     "its output is not shown (it may hold secrets): run it yourself to see it",
                     r->cfg->name, what, bad);
        return;
    }
    r->helper_headers = o;
}

/* Trimmed stdout becomes the value. */
static void job_complete(Job *j)
{
    Resolve *r = j->r;
    int st = j->child->status;
    char *s = j->out.data ? j->out.data : "";
    size_t n = j->out.len;

    j->done = true;
    r->n_running--;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        /*
         * Its output is not quoted: a secret tool that fails often prints what it was given or
         * found (a token, a vault path with the secret) to stderr, and this message goes to
         * the log and to mcpd/status, which any agent can read.
         */
        _cleanup_free_ char *how = child_describe_status(st), *what = job_what(j);
        resolve_fail(r, true,
                     "Server \"%s\": %s %s; its output is not shown (it may hold "
                     "secrets): run the command yourself to see why it fails",
                     r->cfg->name, what, how);
        return;
    }
    if (j->helper) {
        helper_take(j, s, n);
        if (r->n_running == 0)
            event_active(r->ev_finish, EV_TIMEOUT, 0);
        return;
    }
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    while (n && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'))
        s++, n--;
    /*
     * A !command that prints nothing gives no value: the key is dropped (the seed's "falsy
     * result drops the key", B14), so a secret tool with nothing to say does not pass an empty
     * token. Only here: a value written empty ("FOO": "") or expanding to empty is passed as
     * "", as every agent passes it.
     */
    if (n)
        json_object_set(r->map, j->key, json_string_newn(s, n));
    else
        json_free(json_object_take(r->map, j->key));
    /* The pipes and the reaped child are released with r, not from this callback. */
    if (r->n_running == 0)
        event_active(r->ev_finish, EV_TIMEOUT, 0);
}

static void job_maybe_done(Job *j)
{
    if (!j->done && j->child && j->child->exited && j->out_eof && j->err_eof)
        job_complete(j);
}

static void on_child_exit(Child *c, int status, void *userdata)
{
    (void)c, (void)status;
    job_maybe_done(userdata);
}

/* Drain one pipe (sb NULL: read and discard); at EOF stop watching it. */
static void job_read(Job *j, int fd, StrBuf *sb, bool *eofp, struct event *ev, size_t cap)
{
    char buf[4096];

    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            explicit_bzero(buf, sizeof(buf));
            return;
        }
        if (n <= 0) {
            *eofp = true;
            event_del(ev);
            break;
        }
        if (!sb)
            continue;
        if (sb->len + (size_t)n > cap) {
            _cleanup_free_ char *what = job_what(j);
            resolve_fail(j->r, false,
                         "Server \"%s\": %s printed more than %zu bytes; it was stopped",
                         j->r->cfg->name, what, cap);
            explicit_bzero(buf, sizeof(buf));
            return;
        }
        strbuf_append(sb, buf, (size_t)n);
    }
    explicit_bzero(buf, sizeof(buf));
    job_maybe_done(j);
}

static void on_out(evutil_socket_t fd, short what, void *arg)
{
    Job *j = arg;

    (void)what;
    job_read(j, fd, &j->out, &j->out_eof, j->ev_out, RESOLVE_MAX_OUTPUT);
}

static void on_err(evutil_socket_t fd, short what, void *arg)
{
    Job *j = arg;

    (void)what;
    /* Drained so the command never blocks on a full pipe, and never kept (see job_complete). */
    job_read(j, fd, NULL, &j->err_eof, j->ev_err, 0);
}

static void on_timeout(evutil_socket_t fd, short what, void *arg)
{
    Resolve *r = arg;

    (void)fd, (void)what;
    for (size_t i = 0; i < r->n_jobs; i++)
        if (!r->jobs[i].done) {
            _cleanup_free_ char *job = job_what(&r->jobs[i]);
            resolve_fail(r, true, "Server \"%s\": %s did not finish within %lld ms; it was stopped",
                         r->cfg->name, job, (long long)r->timeout_ms);
            break;
        }
}

static int job_start(Resolve *r, Job *j, yajl_val env, const char *cwd)
{
    char *argv[] = {"sh", "-c", j->command, NULL};
    ChildSpec spec = {"/bin/sh", argv, env, cwd};
    _cleanup_free_ char *why = NULL;
    int rc = child_spawn(&j->child, &spec, on_child_exit, j, &why);

    if (rc < 0) {
        _cleanup_free_ char *what = job_what(j);
        resolve_fail(r, true, "Server \"%s\": cannot run %s: %s", r->cfg->name, what, why);
        return rc;
    }
    /* The command gets no input: EOF at once. */
    close(j->child->fd_stdin);
    j->child->fd_stdin = -1;
    j->ev_out = event_new(r->base, j->child->fd_stdout, EV_READ | EV_PERSIST, on_out, j);
    j->ev_err = event_new(r->base, j->child->fd_stderr, EV_READ | EV_PERSIST, on_err, j);
    event_add(j->ev_out, NULL);
    event_add(j->ev_err, NULL);
    r->n_running++;
    return 0;
}

/* A value that is exactly a set variable's name becomes its value (seed 2.2), in mcpd's files. */
static bool is_env_name(const char *s)
{
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
        return false;
    for (; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return false;
    return true;
}

/*
 * The value of key as the file wrote it: the map is the written one expanded, member for member
 * (an envFile's names after them), so it is found at the same place without a search; a search
 * per member of a map of many was quadratic.
 */
static const char *written_value(yajl_val written, size_t i, const char *key)
{
    if (YAJL_IS_OBJECT(written) && i < written->u.object.len &&
        streq(written->u.object.keys[i], key))
        return YAJL_IS_STRING(written->u.object.values[i]) ? written->u.object.values[i]->u.string
                                                           : NULL;
    return json_get_string(written, key);
}

/*
 * ${keyring:NAME} in a value of mcpd's own file: the secret of the Secret Service item whose
 * attribute "mcpd" is NAME (secret-tool store --label=... mcpd NAME), looked up now (each lookup
 * bounded by KEYRING_CALL_TIMEOUT_MS). Returns the new value (to free, holds a secret) or NULL
 * after resolve_fail.
 */
static char *keyring_fill(Resolve *r, const char *key, const char *v)
{
    StrBuf sb = STRBUF_INIT;
    const char *p = v, *at;

    while ((at = strstr(p, "${" RESOLVE_KEYRING_FORM))) {
        const char *name = at + 2 + strlen(RESOLVE_KEYRING_FORM), *end = strchr(name, '}');
        _cleanup_free_ char *n = end ? xstrndup(name, (size_t)(end - name)) : NULL, *why = NULL;
        char *secret = NULL;
        size_t len = 0;
        int rc;

        if (!n || !n[0]) {
            strbuf_append(&sb, p, (size_t)(name - p));
            p = name;
            continue;
        }
        const KeyringAttr attrs[] = {{"mcpd", n}};
        rc = keyring_lookup(attrs, 1, &secret, &len, &why);
        if (rc != 0) {
            resolve_fail(r, rc != KEYRING_E_NOTFOUND, "Server \"%s\": %s.%s: ${keyring:%s}: %s",
                         r->cfg->name, r->field, key, n,
                         rc == KEYRING_E_NOTFOUND
                             ? "no item with the attribute mcpd=<name> in the Secret Service; "
                               "store one: secret-tool store --label=<label> mcpd <name>"
                             : (why ? why : "the Secret Service did not answer"));
            if (sb.data)
                explicit_bzero(sb.data, sb.cap);
            strbuf_deinit(&sb);
            return NULL;
        }
        strbuf_append(&sb, p, (size_t)(at - p));
        strbuf_append(&sb, secret, len);
        explicit_bzero(secret, len);
        free(secret);
        p = end + 1;
    }
    strbuf_puts(&sb, p);
    return strbuf_detach(&sb, NULL);
}

/* Walk the map: start commands, substitute variable names. */
static void resolve_values(Resolve *r)
{
    yajl_val map = r->map, raw = json_get_object(r->cfg->raw, r->field);
    bool trusted = false, checked = false;

    for (size_t i = 0; map && i < map->u.object.len && !r->error; i++) {
        const char *key = map->u.object.keys[i], *v = map->u.object.values[i]->u.string, *env;
        /* Only a "!" the file itself has: a ${VAR} that expands to "!..." is a plain value. */
        const char *written = written_value(raw, i, key);
        /* Another agent's file means "!x" literally: only mcpd's own files run commands. */
        if (v[0] == '!' && written && written[0] == '!' && r->cfg->allow_commands) {
            if (!checked) {
                _cleanup_free_ char *why = NULL;
                checked = true;
                trusted = resolve_check_file(r->cfg->source.path, &why) == 0;
                if (!trusted) {
                    resolve_fail(r, false, "Server \"%s\": %s.%s: refusing to run a !command: %s",
                                 r->cfg->name, r->field, key, why);
                    return;
                }
            }
            Job *j = &r->jobs[r->n_jobs++];
            j->r = r;
            j->key = xstrdup(key);
            j->command = xstrdup(v + 1);
            if (job_start(r, j, NULL, NULL) < 0)
                return;
        } else if (r->cfg->allow_commands && written &&
                   strstr(written, "${" RESOLVE_KEYRING_FORM) &&
                   strstr(v, "${" RESOLVE_KEYRING_FORM)) {
            /* Only as the file wrote it: a ${VAR} that expands to one stays text. */
            char *filled = keyring_fill(r, key, v);
            if (!filled)
                return;
            explicit_bzero(map->u.object.values[i]->u.string,
                           strlen(map->u.object.values[i]->u.string));
            json_free(map->u.object.values[i]);
            map->u.object.values[i] = json_string_new(filled);
            explicit_bzero(filled, strlen(filled));
            free(filled);
        } else if (r->cfg->allow_commands && is_env_name(v) && (env = getenv(v))) {
            /*
             * mcpd's own rule, like "!": an agent passes "LOG_LEVEL": "DEBUG" as written (Claude
             * Code, Cursor, VS Code, ... substitute only ${...}), so in its file a value that
             * happens to name a set variable (DEBUG, CI, HOME) stays what it says.
             */
            json_free(map->u.object.values[i]); /* key is member i: no search */
            map->u.object.values[i] = json_string_new(env);
        }
    }
}

/*
 * Claude Code's headersHelper, as Claude Code runs it (services/mcp/headersHelper.ts): through
 * the shell, with the server's name and URL in CLAUDE_CODE_MCP_SERVER_NAME and _URL, bounded in
 * time (the command timeout, 10 s as in Claude Code) and output (RESOLVE_MAX_OUTPUT). It runs in
 * the directory of the project file that defines it (Claude Code runs it in the project it
 * started in; a local-scope entry of ~/.claude.json runs in that file's directory), in $HOME for
 * a user-level entry. Only servers discovery kept reach here: a
 * project's entry only once the project is approved (trust-gate.c).
 */
static void start_helper(Resolve *r)
{
    _cleanup_json_ yajl_val env = json_object_new();
    _cleanup_free_ char *cwd = NULL;
    Job *j = &r->jobs[r->n_jobs++];

    json_object_set(env, "CLAUDE_CODE_MCP_SERVER_NAME", json_string_new(r->cfg->name));
    json_object_set(env, "CLAUDE_CODE_MCP_SERVER_URL",
                    json_string_new(r->cfg->url ? r->cfg->url : ""));
    cwd = r->cfg->source.level == CONFIG_LEVEL_PROJECT && r->cfg->source.path
              ? paths_dirname(r->cfg->source.path)
              : paths_home();
    j->r = r;
    j->helper = true;
    j->command = xstrdup(r->cfg->headers_helper);
    (void)job_start(r, j, env, cwd);
}

int resolve_start(Resolve **rp, struct event_base *base, const ServerConfig *cfg,
                  const ResolveOptions *opt, ResolveDoneFn fn, void *userdata)
{
    Resolve *r = xcalloc(1, sizeof(*r));
    struct timeval tv;

    r->base = base;
    r->cfg = server_config_copy(cfg);
    r->fn = fn;
    r->userdata = userdata;
    r->timeout_ms =
        opt && opt->command_timeout_ms > 0 ? opt->command_timeout_ms : RESOLVE_COMMAND_TIMEOUT_MS;
    r->credentials_path =
        opt && opt->credentials_path ? xstrdup(opt->credentials_path) : resolve_credentials_path();
    r->field = r->cfg->type == TRANSPORT_STDIO ? "env" : "headers";
    r->map = r->cfg->type == TRANSPORT_STDIO ? r->cfg->env : r->cfg->headers;
    /* One job per member at most, and the headersHelper. */
    r->jobs = xcalloc((r->map ? r->map->u.object.len : 0) + 1, sizeof(Job));
    r->ev_timeout = evtimer_new(base, on_timeout, r);
    r->ev_finish = event_new(base, -1, 0, on_finish, r);
    resolve_values(r);
    if (!r->error && r->cfg->headers_helper && r->cfg->type != TRANSPORT_STDIO)
        start_helper(r);
    if (r->n_running) {
        tv.tv_sec = (time_t)(r->timeout_ms / 1000);
        tv.tv_usec = (suseconds_t)(r->timeout_ms % 1000 * 1000);
        evtimer_add(r->ev_timeout, &tv);
    } else {
        event_active(r->ev_finish, EV_TIMEOUT, 0);
    }
    *rp = r;
    return 0;
}

void resolve_cancel(Resolve *r)
{
    if (r)
        resolve_free(r);
}

int resolve_check_file(const char *path, char **whyp)
{
    struct stat st;

    if (!path) {
        *whyp = xstrdup("the server has no config file to check");
        return -EPERM;
    }
    if (stat(path, &st) < 0) {
        int r = -errno;
        *whyp = xasprintf("cannot check %s: %s", path, strerror(-r));
        return r;
    }
    if (st.st_uid != geteuid()) {
        *whyp = xasprintf("%s is owned by uid %u, not by you (uid %u)", path, (unsigned)st.st_uid,
                          (unsigned)geteuid());
        return -EPERM;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        *whyp = xasprintf("%s is writable by %s (mode %04o); run chmod go-w %s", path,
                          st.st_mode & S_IWOTH ? "others" : "its group",
                          (unsigned)(st.st_mode & 07777), path);
        return -EPERM;
    }
    return 0;
}

char *resolve_credentials_path(void)
{
    _cleanup_free_ char *conf = paths_config_home();

    return paths_join(conf, "mcpd/credentials.json");
}
