// SPDX-License-Identifier: MIT
// runlog: per server, a bounded record of its last process runs that outlives each process.

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/hash.h"
#include "common/json.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/util.h"
#include "daemon/sys/child.h"
#include "daemon/sys/durable.h"
#include "daemon/sys/runlog.h"

/*
 * stderr kept of the running process: enough for a stack trace or two (what mcpd/logs always
 * kept). Once a run ends its tail shrinks to RUN_TAIL_ENDED_BYTES: the message a crash leaves is
 * at the end, and twenty runs of a crash loop must stay small.
 */
#define RUN_TAIL_LIVE_BYTES  (64u * 1024u)
#define RUN_TAIL_ENDED_BYTES (8u * 1024u)
/*
 * Servers remembered at once. Records of servers still configured are never dropped; past
 * this, the least recently used of the others go. At most 256 x (20 x 8 KiB + 64 KiB) if all
 * of them spew, and far less in practice.
 */
#define RUNLOG_MAX_LOGS 256
/*
 * A record file: 20 tails of 8 KiB, each at most 6 bytes of JSON per byte (\u00XX escapes),
 * plus the fields. Anything larger was not written by us and is ignored.
 */
#define RUNLOG_MAX_FILE_BYTES (RUNLOG_MAX_RUNS * RUN_TAIL_ENDED_BYTES * 6u + 64u * 1024u)
/* Records of servers not seen for a month belong to configs long gone. */
#define RUNLOG_KEEP_DAYS 30

struct RunLog {
    char *name, *start_dir;
    Run runs[RUNLOG_MAX_RUNS]; /* ring: serial s lives at (s - 1) % RUNLOG_MAX_RUNS */
    uint64_t n_spawns;
    unsigned n_refs;
    uint64_t used; /* a tick of the registry, for eviction */
};

static RunLog **logs;
static size_t n_logs;
static uint64_t tick;
static char *state_dir; /* NULL: records live in memory only */

static void runlog_load(RunLog *rl);

static void run_clear(Run *r)
{
    free(r->spawn_error);
    free(r->tail);
    memset(r, 0, sizeof(*r));
}

static void runlog_free(RunLog *rl)
{
    for (size_t i = 0; i < RUNLOG_MAX_RUNS; i++)
        run_clear(&rl->runs[i]);
    free(rl->name);
    free(rl->start_dir);
    free(rl);
}

RunLog *runlog_find(const char *name, const char *start_dir)
{
    for (size_t i = 0; i < n_logs; i++)
        if (streq(logs[i]->name, name) && streq(logs[i]->start_dir, start_dir ? start_dir : ""))
            return logs[i];
    return NULL;
}

/* Full: forget the least recently used record nothing refers to (if any). */
static void evict_one(void)
{
    size_t victim = n_logs;

    for (size_t i = 0; i < n_logs; i++)
        if (!logs[i]->n_refs && (victim == n_logs || logs[i]->used < logs[victim]->used))
            victim = i;
    if (victim == n_logs)
        return;
    runlog_free(logs[victim]);
    logs[victim] = logs[--n_logs];
}

RunLog *runlog_get(const char *name, const char *start_dir)
{
    RunLog *rl = runlog_find(name, start_dir);

    if (!rl) {
        if (n_logs >= RUNLOG_MAX_LOGS)
            evict_one();
        rl = xcalloc(1, sizeof(*rl));
        rl->name = xstrdup(name);
        rl->start_dir = xstrdup(start_dir ? start_dir : "");
        logs = xrealloc(logs, (n_logs + 1) * sizeof(*logs));
        logs[n_logs++] = rl;
        runlog_load(rl);
    }
    rl->n_refs++;
    rl->used = ++tick;
    return rl;
}

RunLog *runlog_unref(RunLog *rl)
{
    if (rl)
        rl->n_refs--;
    return NULL;
}

/* <dir>/<name>-<16 hex digits of the start dir's hash>.json */
static char *record_path(const RunLog *rl)
{
    char hex[2 * SHA256_DIGEST_SIZE + 1];
    _cleanup_free_ char *base = NULL;

    sha256_hex(hex, rl->start_dir, strlen(rl->start_dir));
    hex[16] = '\0';
    base = xasprintf("%s-%s.json", rl->name, hex);
    return paths_join(state_dir, base);
}

static yajl_val run_json(const Run *r);

/* Write the record (ended runs and the running one as it is now); a failure is logged once. */
static void runlog_save(RunLog *rl)
{
    static bool warned;
    _cleanup_free_ char *path = NULL, *why = NULL;
    yajl_val o, runs;
    StrBuf sb = STRBUF_INIT;

    if (!state_dir)
        return;
    path = record_path(rl);
    o = json_object_new();
    runs = json_array_new();
    json_object_set(o, "name", json_string_new(rl->name));
    json_object_set(o, "startDir", json_string_new(rl->start_dir));
    json_object_set(o, "spawns", json_int_new((int64_t)rl->n_spawns));
    for (uint64_t s = rl->n_spawns > RUNLOG_MAX_RUNS ? rl->n_spawns - RUNLOG_MAX_RUNS + 1 : 1;
         s <= rl->n_spawns; s++) {
        const Run *r = &rl->runs[(s - 1) % RUNLOG_MAX_RUNS];
        if (r->serial != s)
            continue;
        yajl_val j = run_json(r);
        json_object_set(j, "status", json_int_new(r->status));
        json_array_push(runs, j);
    }
    json_object_set(o, "runs", runs);
    json_write(&sb, o);
    json_free(o);
    if (durable_write(state_dir, path, sb.data, sb.len, &why) < 0 && !warned) {
        warned = true;
        log_full(LOG_WARNING, rl->name, "runlog", "cannot keep the run record: %s", why);
    }
    strbuf_deinit(&sb);
}

/* One run read back; false if it is not one of ours. */
static bool run_from_json(Run *r, yajl_val j)
{
    int64_t serial = 0, pid = 0, started = 0, ended = 0, status = 0, bytes = 0;
    const char *tail = json_get_string(j, "stderr"), *err = json_get_string(j, "spawnError");

    if (json_get_int(j, "run", &serial) < 0 || serial < 1 || !tail ||
        json_get_int(j, "startedAt", &started) < 0)
        return false;
    json_get_int(j, "pid", &pid);
    json_get_int(j, "endedAt", &ended);
    json_get_int(j, "status", &status);
    json_get_int(j, "stderrBytes", &bytes);
    r->serial = (uint64_t)serial;
    r->pid = (pid_t)pid;
    r->started_wall_ms = started;
    r->status = (int)status;
    r->stderr_bytes = (uint64_t)MAX(bytes, 0);
    r->spawn_error = err ? xstrdup(err) : NULL;
    /* Still running when written, and mcpd is new: that process is gone, its end unseen. */
    r->unknown_end = !ended;
    r->ended_wall_ms = ended ? ended : started;
    r->tail_len = MIN(strlen(tail), (size_t)RUN_TAIL_ENDED_BYTES);
    r->tail_cap = MAX(r->tail_len, 1);
    r->tail = xmalloc(r->tail_cap);
    memcpy(r->tail, tail + strlen(tail) - r->tail_len, r->tail_len);
    return true;
}

/* Read back the record a previous mcpd left for this server, if any. */
static void runlog_load(RunLog *rl)
{
    _cleanup_free_ char *path = NULL, *text = NULL, *why = NULL;
    _cleanup_json_ yajl_val o = NULL;
    yajl_val runs;
    int64_t spawns = 0;

    if (!state_dir)
        return;
    path = record_path(rl);
    if (paths_read_regular(path, false, RUNLOG_MAX_FILE_BYTES, NULL, &text, NULL, &why) < 0)
        return;
    o = json_parse(text, NULL);
    runs = json_get_array(o, "runs");
    if (!streq(json_get_string(o, "name") ?: "", rl->name) ||
        !streq(json_get_string(o, "startDir") ?: "", rl->start_dir) ||
        json_get_int(o, "spawns", &spawns) < 0 || spawns < 0 || !runs)
        return;
    rl->n_spawns = (uint64_t)spawns;
    for (size_t i = 0; i < json_array_len(runs); i++) {
        Run tmp = {0};
        if (!run_from_json(&tmp, json_array_at(runs, i)) || tmp.serial > rl->n_spawns ||
            tmp.serial + RUNLOG_MAX_RUNS <= rl->n_spawns) {
            run_clear(&tmp);
            continue;
        }
        Run *r = &rl->runs[(tmp.serial - 1) % RUNLOG_MAX_RUNS];
        run_clear(r);
        *r = tmp;
    }
}

/* Records not written for RUNLOG_KEEP_DAYS go. */
static void remove_old_records(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    struct stat st;
    time_t limit = time(NULL) - (time_t)RUNLOG_KEEP_DAYS * 86400;

    while (d && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (e->d_name[0] == '.' || n < 5 || !streq(e->d_name + n - 5, ".json"))
            continue;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
            st.st_mtime < limit)
            unlinkat(dirfd(d), e->d_name, 0);
    }
    if (d)
        closedir(d);
}

int runlog_set_dir(const char *dir, char **whyp)
{
    int r;

    free(state_dir);
    state_dir = NULL;
    if ((r = paths_mkdir_p(dir, 0700)) < 0 && r != -EEXIST) {
        *whyp = xasprintf("cannot create %s: %s", dir, strerror(-r));
        return r;
    }
    if ((r = paths_ensure_private_dir(dir, geteuid(), 1, whyp)) < 0)
        return r;
    remove_old_records(dir);
    state_dir = xstrdup(dir);
    return 0;
}

static Run *run_of(RunLog *rl, uint64_t serial)
{
    Run *r;

    if (!serial || serial > rl->n_spawns)
        return NULL;
    r = &rl->runs[(serial - 1) % RUNLOG_MAX_RUNS];
    return r->serial == serial ? r : NULL;
}

static Run *run_new(RunLog *rl, pid_t pid)
{
    Run *r = &rl->runs[rl->n_spawns % RUNLOG_MAX_RUNS];

    run_clear(r);
    r->serial = ++rl->n_spawns;
    r->pid = pid;
    r->started_wall_ms = wall_ms();
    rl->used = ++tick;
    return r;
}

uint64_t runlog_begin(RunLog *rl, pid_t pid)
{
    Run *r = run_new(rl, pid);

    r->tail_cap = RUN_TAIL_LIVE_BYTES;
    r->tail = xmalloc(r->tail_cap);
    return r->serial;
}

void runlog_spawn_failed(RunLog *rl, const char *why)
{
    Run *r = run_new(rl, 0);

    r->ended_wall_ms = r->started_wall_ms;
    r->spawn_error = xstrdup(why ? why : "could not start");
    runlog_save(rl);
}

/* Keep the last cap bytes of what came so far plus data. */
static void tail_add(Run *r, const char *data, size_t n)
{
    if (n >= r->tail_cap) {
        memcpy(r->tail, data + n - r->tail_cap, r->tail_cap);
        r->tail_len = r->tail_cap;
        return;
    }
    if (r->tail_len + n > r->tail_cap) {
        size_t drop = r->tail_len + n - r->tail_cap;
        memmove(r->tail, r->tail + drop, r->tail_len - drop);
        r->tail_len -= drop;
    }
    memcpy(r->tail + r->tail_len, data, n);
    r->tail_len += n;
}

void runlog_append(RunLog *rl, uint64_t serial, const char *data, size_t n)
{
    Run *r = run_of(rl, serial);

    if (!r || !r->tail)
        return;
    r->stderr_bytes += n;
    tail_add(r, data, n);
}

void runlog_end(RunLog *rl, uint64_t serial, int status)
{
    Run *r = run_of(rl, serial);

    if (!r)
        return;
    r->ended_wall_ms = wall_ms();
    r->status = status;
    if (r->tail_len > RUN_TAIL_ENDED_BYTES) {
        memmove(r->tail, r->tail + r->tail_len - RUN_TAIL_ENDED_BYTES, RUN_TAIL_ENDED_BYTES);
        r->tail_len = RUN_TAIL_ENDED_BYTES;
    }
    r->tail_cap = MAX(r->tail_len, 1);
    r->tail = xrealloc(r->tail, r->tail_cap);
    runlog_save(rl);
}

void runlog_tail(RunLog *rl, uint64_t serial, StrBuf *sb)
{
    Run *r = run_of(rl, serial);

    if (r && r->tail)
        strbuf_append(sb, r->tail, r->tail_len);
}

uint64_t runlog_spawns(const RunLog *rl)
{
    return rl ? rl->n_spawns : 0;
}

const Run *runlog_last_ended(const RunLog *rl)
{
    uint64_t first = rl && rl->n_spawns > RUNLOG_MAX_RUNS ? rl->n_spawns - RUNLOG_MAX_RUNS : 0;

    for (uint64_t s = rl ? rl->n_spawns : 0; s > first; s--) {
        const Run *r = &rl->runs[(s - 1) % RUNLOG_MAX_RUNS];
        if (r->serial == s && r->ended_wall_ms)
            return r;
    }
    return NULL;
}

char *runlog_describe(const Run *r)
{
    if (r->unknown_end)
        return xstrdup("outcome unknown: mcpd stopped before it ended");
    if (r->spawn_error)
        return xasprintf("did not start: %s", r->spawn_error);
    if (!r->ended_wall_ms)
        return xstrdup("running");
    return child_describe_status(r->status);
}

static yajl_val run_json(const Run *r)
{
    yajl_val o = json_object_new();
    _cleanup_free_ char *how = runlog_describe(r);
    int64_t end = r->ended_wall_ms ? r->ended_wall_ms : wall_ms();

    json_object_set(o, "run", json_int_new((int64_t)r->serial));
    if (r->pid)
        json_object_set(o, "pid", json_int_new(r->pid));
    json_object_set(o, "startedAt", json_int_new(r->started_wall_ms));
    if (r->ended_wall_ms)
        json_object_set(o, "endedAt", json_int_new(r->ended_wall_ms));
    json_object_set(o, "durationMs", json_int_new(MAX(end - r->started_wall_ms, 0)));
    json_object_set(o, "running", json_bool_new(!r->ended_wall_ms));
    json_object_set(o, "exit", json_string_new(how));
    bool known = r->ended_wall_ms && !r->spawn_error && !r->unknown_end;
    if (known && WIFEXITED(r->status))
        json_object_set(o, "exitCode", json_int_new(WEXITSTATUS(r->status)));
    if (known && WIFSIGNALED(r->status))
        json_object_set(o, "signal", json_int_new(WTERMSIG(r->status)));
    if (r->spawn_error)
        json_object_set(o, "spawnError", json_string_new(r->spawn_error));
    /* stderr is arbitrary bytes: keep what is valid UTF-8, mark the rest. */
    json_object_set(o, "stderr", json_string_new_lossy(r->tail ? r->tail : "", r->tail_len));
    json_object_set(o, "stderrBytes", json_int_new((int64_t)r->stderr_bytes));
    return o;
}

yajl_val runlog_json(const RunLog *rl, uint64_t since)
{
    yajl_val arr = json_array_new();
    uint64_t first = rl->n_spawns > RUNLOG_MAX_RUNS ? rl->n_spawns - RUNLOG_MAX_RUNS + 1 : 1;

    for (uint64_t s = MAX(first, since); s <= rl->n_spawns; s++) {
        const Run *r = &rl->runs[(s - 1) % RUNLOG_MAX_RUNS];
        if (r->serial == s)
            json_array_push(arr, run_json(r));
    }
    return arr;
}

void runlog_clear(void)
{
    free(state_dir);
    state_dir = NULL;
    for (size_t i = 0; i < n_logs; i++)
        runlog_free(logs[i]);
    free(logs);
    logs = NULL;
    n_logs = 0;
}
