// SPDX-License-Identifier: MIT
// procs: every process mcpd starts and all their descendants: tagged, recorded, and ended.

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/log.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/sys/durable.h"
#include "daemon/sys/procs.h"

/* 128 random bits: no two instances (of any user, any boot) share a tag. */
#define INSTANCE_BYTES 16
/*
 * Environments are read only this far: exec limits them to a quarter of the stack limit
 * (2 MiB with the usual 8 MiB), so 16 MiB reads all of any sane one and bounds the time.
 */
#define ENVIRON_READ_MAX (16u * 1024u * 1024u)
/* A SIGKILL scan repeats while new processes appear (forks racing the scan), at most this often. */
#define KILL_PASSES 8
/*
 * fds kept in reserve for scans and record writes: a server's descendants must be found and the
 * record kept even when agents have used every fd (the scan needs /proc and one file at a time).
 */
#define RESERVE_FDS 2
/* At exit, how long to wait for killed descendants (adopted by the subreaper) to be reaped. */
#define EXIT_REAP_MS      2000
#define EXIT_REAP_STEP_MS 10
/* A record file is small: a header and one line per live child. Larger is not ours. */
#define RECORD_MAX_BYTES (1024u * 1024u)
#define RECORD_MAGIC     "mcpd-procs 1"

static char instance[INSTANCE_BYTES * 2 + 1];
static void ensure_identity(void);
static char *record_dir, *record_path;
static char boot_id[64];
static ProcId self;
static ProcId *live;
static uint64_t *live_serial; /* the child serial of each of live */
static size_t n_live, cap_live;
/* Descendants of the children as the latest walk saw them (sorted by pid), for the record. */
static ProcId *desc;
static size_t n_desc;
static int reserve[RESERVE_FDS] = {-1, -1};

pid_t procs_self(void)
{
    ensure_identity();
    return self.pid;
}

const char *procs_instance(void)
{
    return instance;
}

char *procs_child_env(uint64_t serial)
{
    return xasprintf(PROCS_ENV_NAME "=%s-%llu", instance, (unsigned long long)serial);
}

static void read_boot_id(char *out, size_t size)
{
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

    snprintf(out, size, "-");
    if (f) {
        if (fgets(out, (int)size, f))
            out[strcspn(out, "\n")] = '\0';
        fclose(f);
    }
}

/* Who we are (never chosen by a scan) and which boot this is (records of others are void). */
static void ensure_identity(void)
{
    ProcInfo pi;

    if (self.pid == getpid())
        return;
    self.pid = getpid();
    self.start = procs_read_info(self.pid, &pi) == 0 ? pi.start : 0;
    read_boot_id(boot_id, sizeof(boot_id));
}

const char *procs_boot_id(void)
{
    ensure_identity();
    return boot_id;
}

/* Give the reserved fds back to the process for a moment, and take them again after. */
static void reserve_release(void)
{
    for (int i = 0; i < RESERVE_FDS; i++)
        if (reserve[i] >= 0) {
            close(reserve[i]);
            reserve[i] = -1;
        }
}

static void reserve_take(void)
{
    for (int i = 0; i < RESERVE_FDS; i++)
        if (reserve[i] < 0)
            reserve[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/* ---------------------------------------------------------------- reading /proc */

static int parse_stat(const char *buf, pid_t pid, ProcInfo *pi)
{
    /* comm (field 2) may hold spaces and parentheses: the fields resume after the last ')'. */
    const char *p = strrchr(buf, ')');
    long long v[21];
    char state;

    if (!p || sscanf(p + 1, " %c", &state) != 1)
        return -EINVAL;
    p += 3;
    /*
     * Fields 4 to 24: ppid, pgrp, session, tty, tpgid (may be -1), flags, 4 fault counts,
     * utime, stime, cutime, cstime, priority, nice, threads, itrealvalue, starttime, vsize, rss.
     */
    for (int i = 0; i < 21; i++) {
        char *end;
        v[i] = strtoll(p, &end, 10);
        if (end == p)
            return -EINVAL;
        p = end;
    }
    pi->pid = pid;
    pi->state = state;
    pi->ppid = (pid_t)v[0];
    pi->pgid = (pid_t)v[1];
    pi->sid = (pid_t)v[2];
    pi->cpu_ticks = (uint64_t)(v[10] + v[11] + v[12] + v[13]);
    pi->start = (uint64_t)v[18];
    pi->rss_pages = v[20] > 0 ? (uint64_t)v[20] : 0;
    return 0;
}

static int read_info_at(int procfd, pid_t pid, ProcInfo *pi)
{
    char path[32], buf[1024];
    ssize_t n;
    int fd;

    snprintf(path, sizeof(path), "%d/stat", (int)pid);
    fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return n < 0 ? -errno : -ENOENT;
    buf[n] = '\0';
    return parse_stat(buf, pid, pi);
}

int procs_read_info(pid_t pid, ProcInfo *pi)
{
    int procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int r;

    if (procfd < 0)
        return -errno;
    r = read_info_at(procfd, pid, pi);
    close(procfd);
    return r;
}

/*
 * Stream the NUL-separated environment, comparing the start of each entry with want; with
 * prefix, copy what follows want in the entry found to rest (cut to rest_size - 1 bytes).
 */
static bool env_find_at(int procfd, pid_t pid, const char *want, bool prefix, char *rest,
                        size_t rest_size)
{
    size_t wl = strlen(want), pos = 0, total = 0, n_rest = 0;
    char path[32], buf[16384];
    bool match = true, found = false;
    ssize_t n = 0;
    int fd;

    snprintf(path, sizeof(path), "%d/environ", (int)pid);
    if ((fd = openat(procfd, path, O_RDONLY | O_CLOEXEC)) < 0)
        return false;
    while (!found && total < ENVIRON_READ_MAX && (n = read(fd, buf, sizeof(buf))) > 0) {
        total += (size_t)n;
        for (ssize_t i = 0; i < n && !found; i++) {
            if (buf[i] == '\0') {
                found = match && (pos == wl || (prefix && pos >= wl));
                pos = n_rest = 0;
                match = true;
                continue;
            }
            if (pos < wl && buf[i] != want[pos])
                match = false;
            else if (pos >= wl && match && rest && n_rest + 1 < rest_size) {
                rest[n_rest++] = buf[i];
                rest[n_rest] = '\0';
            }
            pos++;
        }
    }
    close(fd);
    /* The last entry may lack its NUL (but one cut short by the bound proves nothing). */
    return found || (n == 0 && match && (pos == wl || (prefix && pos >= wl)) && pos > 0);
}

bool procs_env_has(pid_t pid, const char *entry, bool prefix)
{
    int procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    bool r;

    if (procfd < 0)
        return false;
    r = env_find_at(procfd, pid, entry, prefix, NULL, 0);
    close(procfd);
    return r;
}

uint64_t procs_tag_serial(pid_t pid)
{
    _cleanup_free_ char *prefix = NULL;
    char rest[24] = "", *end;
    unsigned long long serial;
    int procfd;
    bool found;

    if (!instance[0] || (procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return 0;
    prefix = xasprintf(PROCS_ENV_NAME "=%s-", instance);
    found = env_find_at(procfd, pid, prefix, true, rest, sizeof(rest));
    close(procfd);
    serial = found ? strtoull(rest, &end, 10) : 0;
    return found && end != rest && !*end ? (uint64_t)serial : 0;
}

/* ---------------------------------------------------------------- choosing and signalling */

typedef struct Scan {
    ProcInfo *p;
    bool *chosen;
    size_t n;
} Scan;

static int cmp_info(const void *a, const void *b)
{
    const ProcInfo *x = a, *y = b;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

static ssize_t scan_find(const Scan *s, pid_t pid)
{
    ProcInfo key = {.pid = pid};
    const ProcInfo *f = s->n ? bsearch(&key, s->p, s->n, sizeof(*s->p), cmp_info) : NULL;
    return f ? f - s->p : -1;
}

/* Every live process of our uid but mcpd itself, sorted by pid. */
static int scan_load(Scan *s, int procfd)
{
    DIR *d;
    struct dirent *e;
    size_t cap = 0;
    uid_t uid = geteuid();
    int dfd = dup(procfd);

    if (dfd < 0 || !(d = fdopendir(dfd))) {
        int r = -errno;
        if (dfd >= 0)
            close(dfd);
        return r;
    }
    while ((e = readdir(d)) && s->n < PROCS_SCAN_MAX) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        struct stat st;
        ProcInfo pi;
        if (*end || pid <= 0 || pid == self.pid)
            continue;
        if (fstatat(procfd, e->d_name, &st, 0) < 0 || st.st_uid != uid)
            continue;
        if (read_info_at(procfd, (pid_t)pid, &pi) < 0 || pi.state == 'Z' || pi.state == 'X')
            continue;
        if (s->n == cap) {
            cap = cap ? cap * 2 : 256;
            s->p = xrealloc(s->p, cap * sizeof(*s->p));
        }
        s->p[s->n++] = pi;
    }
    if (e)
        log_warning("more than %d processes of uid %u: only the first were checked", PROCS_SCAN_MAX,
                    (unsigned)uid);
    closedir(d);
    if (s->n)
        qsort(s->p, s->n, sizeof(*s->p), cmp_info);
    s->chosen = xcalloc(s->n ? s->n : 1, sizeof(bool));
    return 0;
}

static bool is_exact(const ProcTarget *t, const ProcInfo *pi)
{
    for (size_t j = 0; j < t->n_exact; j++)
        if (t->exact[j].pid == pi->pid && t->exact[j].start == pi->start)
            return true;
    return false;
}

/* Is pi in the group of a live leader the target names exactly (so the group is ours)? */
static bool in_exact_group(const ProcTarget *t, const Scan *s, const ProcInfo *pi)
{
    ssize_t k = scan_find(s, pi->pgid);
    return k >= 0 && is_exact(t, &s->p[k]);
}

/*
 * Is pi in a group or session that a recorded process of a dead instance led, the leader gone?
 * The kernel gives no new process a pid that is still some process's group or session id, so
 * while a member lives the id has named that one group since its leader, our child or its
 * descendant, made it. The id could only name another group if every member had left and the
 * pid were reused: then its new leader (pid equal to the id, another start time) or its members,
 * all born after the recorded process, would match; a live process holding the pid with another
 * start time makes the rule stand aside.
 */
static bool in_orphaned_group(const ProcTarget *t, const Scan *s, const ProcInfo *pi)
{
    for (size_t j = 0; j < t->n_exact; j++) {
        const ProcId *id = &t->exact[j];
        ssize_t k;
        if ((pi->pgid != id->pid && pi->sid != id->pid) || pi->start < id->start)
            continue;
        k = scan_find(s, id->pid);
        if (k < 0 || s->p[k].start == id->start)
            return true;
    }
    return false;
}

static void scan_choose(Scan *s, const ProcTarget *t, int procfd)
{
    bool changed = true;

    for (size_t i = 0; i < s->n; i++) {
        const ProcInfo *pi = &s->p[i];
        s->chosen[i] = is_exact(t, pi) || (t->pgid > 0 && pi->pgid == t->pgid) ||
                       in_exact_group(t, s, pi) || (t->self_children && pi->ppid == self.pid) ||
                       (t->exact_orphaned_groups && in_orphaned_group(t, s, pi)) ||
                       (t->tag && env_find_at(procfd, pi->pid, t->tag, t->tag_prefix, NULL, 0));
    }
    /* Descendants by parent pid, to a fixed point (each pass reaches one generation deeper). */
    while (changed) {
        changed = false;
        for (size_t i = 0; i < s->n; i++) {
            ssize_t k;
            if (s->chosen[i] || (k = scan_find(s, s->p[i].ppid)) < 0 || !s->chosen[k])
                continue;
            s->chosen[i] = changed = true;
        }
    }
}

static void scan_free(Scan *s)
{
    free(s->p);
    free(s->chosen);
    *s = (Scan){0};
}

int procs_scan(ProcInfo **infop, size_t *np)
{
    Scan s = {0};
    int procfd, r;

    ensure_identity();
    *infop = NULL;
    *np = 0;
    reserve_release();
    procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    r = procfd < 0 ? -errno : scan_load(&s, procfd);
    if (procfd >= 0)
        close(procfd);
    reserve_take();
    if (r == 0) {
        *infop = s.p;
        *np = s.n;
        s.p = NULL;
    }
    scan_free(&s);
    return r;
}

static bool seen_before(const ProcId *seen, size_t n_seen, const ProcInfo *pi)
{
    for (size_t i = 0; i < n_seen; i++)
        if (seen[i].pid == pi->pid && seen[i].start == pi->start)
            return true;
    return false;
}

/*
 * Signal the chosen processes of one scan, each after its chosen parent (pid order is no guide
 * once pids wrap): a parent that outlived its child for a moment could react to that death. An
 * ASan build's leak checker is such a parent: its tracer is a clone sharing its environment (tag
 * included), and a tracer killed first makes the process it checks die with "LeakSanitizer has
 * encountered a fatal error". A round with no parent left to wait for (a ppid loop through a
 * reused pid) signals the rest as they come. Returns how many were signalled for the first time.
 */
static size_t signal_chosen(const Scan *s, int sig, ProcId **seenp, size_t *n_seenp)
{
    bool *done = xcalloc(s->n ? s->n : 1, sizeof(bool));
    size_t fresh = 0;

    for (bool progress = true, force = false; progress || !force;) {
        force = !progress;
        progress = false;
        for (size_t i = 0; i < s->n; i++) {
            ssize_t k;
            if (!s->chosen[i] || done[i])
                continue;
            k = scan_find(s, s->p[i].ppid);
            if (!force && k >= 0 && s->chosen[k] && !done[k])
                continue; /* its parent first */
            done[i] = progress = true;
            if (seen_before(*seenp, *n_seenp, &s->p[i]))
                continue;
            (void)kill(s->p[i].pid, sig);
            *seenp = xrealloc(*seenp, (*n_seenp + 1) * sizeof(**seenp));
            (*seenp)[(*n_seenp)++] = (ProcId){s->p[i].pid, s->p[i].start};
            fresh++;
        }
    }
    free(done);
    return fresh;
}

unsigned procs_signal(const ProcTarget *t, int sig)
{
    ProcId *seen = NULL;
    size_t n_seen = 0, n_scanned = 0;
    uint64_t t0 = now_us();
    int procfd;

    ensure_identity();
    reserve_release();
    procfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (procfd < 0) {
        log_warning("cannot scan /proc for processes to end: %s", strerror(errno));
        reserve_take();
        return 0;
    }
    for (int pass = 0; pass < (sig == SIGKILL ? KILL_PASSES : 1); pass++) {
        Scan s = {0};
        size_t fresh = 0;
        int r = scan_load(&s, procfd);
        if (r < 0) {
            log_warning("cannot scan /proc for processes to end: %s", strerror(-r));
            break;
        }
        scan_choose(&s, t, procfd);
        n_scanned += s.n;
        fresh = signal_chosen(&s, sig, &seen, &n_seen);
        scan_free(&s);
        if (!fresh)
            break;
    }
    close(procfd);
    reserve_take();
    free(seen);
    if (n_seen)
        log_debug("signal %d to %zu processes (%zu looked at in %llu us)", sig, n_seen, n_scanned,
                  (unsigned long long)(now_us() - t0));
    return (unsigned)n_seen;
}

unsigned procs_signal_child(pid_t pgid, uint64_t serial, const ProcId *known, size_t n_known,
                            int sig)
{
    _cleanup_free_ char *tag = NULL;
    ProcTarget t = {.pgid = pgid, .exact = known, .n_exact = n_known};

    if (!instance[0])
        return 0;
    tag = procs_child_env(serial);
    t.tag = tag;
    return procs_signal(&t, sig);
}

/* ---------------------------------------------------------------- the durable record */

static int write_record(void)
{
    StrBuf sb = STRBUF_INIT;
    int r;

    if (!record_path)
        return 0; /* no record dir: logged once at start */

    strbuf_printf(&sb, RECORD_MAGIC "\nboot %s\ndaemon %d %llu\n", boot_id, (int)self.pid,
                  (unsigned long long)self.start);
    for (size_t i = 0; i < n_live; i++)
        strbuf_printf(&sb, "child %d %llu\n", (int)live[i].pid, (unsigned long long)live[i].start);
    for (size_t i = 0; i < n_desc; i++)
        strbuf_printf(&sb, "desc %d %llu\n", (int)desc[i].pid, (unsigned long long)desc[i].start);
    reserve_release();
    r = durable_write(record_dir, record_path, sb.data, sb.len, NULL);
    reserve_take();
    strbuf_deinit(&sb);
    if (r < 0)
        log_warning("cannot write the process record %s: %s (processes of this mcpd may "
                    "outlive a crash of it)",
                    record_path, strerror(-r));
    return r;
}

void procs_add(pid_t pid, uint64_t serial)
{
    ProcInfo pi;
    int r;

    if (!instance[0])
        return;
    /* At the fd limit too: a child that got its pipes must still be recorded. */
    reserve_release();
    r = procs_read_info(pid, &pi);
    reserve_take();
    if (r < 0) {
        log_warning("cannot read the start time of process %d: %s (it is not recorded)", (int)pid,
                    strerror(-r));
        return;
    }
    if (n_live == cap_live) {
        cap_live = cap_live ? cap_live * 2 : 16;
        live = xrealloc(live, cap_live * sizeof(*live));
        live_serial = xrealloc(live_serial, cap_live * sizeof(*live_serial));
    }
    live_serial[n_live] = serial;
    live[n_live++] = (ProcId){pid, pi.start};
    write_record();
}

void procs_foreach_child(void (*fn)(pid_t pid, uint64_t serial, void *ud), void *ud)
{
    for (size_t i = 0; i < n_live; i++)
        fn(live[i].pid, live_serial[i], ud);
}

void procs_note_descendants(const ProcId *ids, size_t n)
{
    bool same = n == n_desc;

    for (size_t i = 0; same && i < n; i++)
        same = ids[i].pid == desc[i].pid && ids[i].start == desc[i].start;
    if (same)
        return;
    desc = xrealloc(desc, (n ? n : 1) * sizeof(*desc));
    if (n)
        memcpy(desc, ids, n * sizeof(*ids));
    n_desc = n;
    log_debug("process record: %zu processes below the children", n);
    write_record();
}

void procs_remove(pid_t pid)
{
    for (size_t i = 0; i < n_live; i++)
        if (live[i].pid == pid) {
            live_serial[i] = live_serial[n_live - 1];
            live[i] = live[--n_live];
            write_record();
            return;
        }
}

/* A parsed record of some instance. */
typedef struct Record {
    char boot[64];
    ProcId daemon;
    ProcId *children;
    size_t n_children;
} Record;

static int parse_record(const char *text, Record *rec, char **whyp)
{
    unsigned line = 0;

    if (!startswith(text, RECORD_MAGIC "\n")) {
        *whyp = xstrdup("it does not start with \"" RECORD_MAGIC "\"");
        return -EINVAL;
    }
    for (const char *p = text; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p)) {
        int pid = 0;
        unsigned long long start = 0;
        line++;
        if (line == 1)
            continue;
        if (sscanf(p, "boot %63s", rec->boot) == 1)
            continue;
        if (sscanf(p, "daemon %d %llu", &pid, &start) == 2 && pid > 0) {
            rec->daemon = (ProcId){pid, start};
            continue;
        }
        /* Children, and (desc) their descendants as the last walk of /proc saw them. */
        if ((sscanf(p, "child %d %llu", &pid, &start) == 2 ||
             sscanf(p, "desc %d %llu", &pid, &start) == 2) &&
            pid > 0) {
            rec->children = xrealloc(rec->children, (rec->n_children + 1) * sizeof(ProcId));
            rec->children[rec->n_children++] = (ProcId){pid, start};
            continue;
        }
        *whyp = xasprintf("line %u is not understood", line);
        return -EINVAL;
    }
    if (!rec->boot[0] || rec->daemon.pid <= 0) {
        *whyp = xstrdup("it lacks its boot or daemon line");
        return -EINVAL;
    }
    return 0;
}

static bool proc_alive(const ProcId *id)
{
    ProcInfo pi;
    struct stat st;
    char path[32];

    snprintf(path, sizeof(path), "/proc/%d", (int)id->pid);
    return stat(path, &st) == 0 && st.st_uid == geteuid() && procs_read_info(id->pid, &pi) == 0 &&
           pi.start == id->start && pi.state != 'Z';
}

/* End what one dead instance's record names; return how many processes were killed. */
static unsigned reap_record(const char *path, const char *name, bool *removep)
{
    _cleanup_free_ char *text = NULL, *why = NULL, *tag = NULL;
    Record rec = {0};
    struct stat st;
    unsigned n = 0;
    int r;

    *removep = false;
    /* Never blocks (a FIFO planted here is refused unread), never follows a link. */
    r = paths_read_regular(path, false, RECORD_MAX_BYTES, &st, &text, NULL, &why);
    if (r == 0 && st.st_uid != geteuid()) {
        r = -EPERM;
        why = xasprintf("owned by uid %u, not by this user", (unsigned)st.st_uid);
    }
    if (r == 0)
        r = parse_record(text, &rec, &why);
    if (r < 0) {
        if (r != -ENOENT)
            log_warning("ignoring the process record %s: %s; remove it if it is not mcpd's", path,
                        why);
        /* Left alone: it may be a newer mcpd's (writes are atomic renames, never torn). */
        free(rec.children);
        return 0;
    }
    if (streq(rec.boot, boot_id) || streq(boot_id, "-")) {
        if (proc_alive(&rec.daemon)) {
            free(rec.children);
            return 0; /* another mcpd of this user, running: its processes are its own */
        }
        /* Tag first: it proves a process is ours whatever its pid; recorded leaders by identity. */
        tag = xasprintf(PROCS_ENV_NAME "=%s-", name);
        ProcTarget t = {.tag = tag,
                        .tag_prefix = true,
                        .exact = rec.children,
                        .n_exact = rec.n_children,
                        .exact_orphaned_groups = true};
        log_debug("record %s of mcpd %d: %zu processes named", name, (int)rec.daemon.pid,
                  rec.n_children);
        n = procs_signal(&t, SIGKILL);
        if (n)
            log_notice("an earlier mcpd (pid %d) ended without stopping its servers: killed %u "
                       "processes it left behind",
                       (int)rec.daemon.pid, n);
    }
    /* From another boot: every process it names is long gone. */
    free(rec.children);
    *removep = true;
    return n;
}

static bool is_instance_name(const char *s)
{
    size_t n = strspn(s, "0123456789abcdef");
    return n == INSTANCE_BYTES * 2 && s[n] == '\0';
}

unsigned procs_reap_records(const char *dir, const char *keep)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    unsigned n = 0;

    if (!d)
        return 0;
    ensure_identity();
    while ((e = readdir(d))) {
        _cleanup_free_ char *path = NULL;
        bool remove = false;
        if (e->d_name[0] == '.' || (keep && streq(e->d_name, keep)))
            continue;
        path = paths_join(dir, e->d_name);
        if (!is_instance_name(e->d_name)) {
            /* A temp file whose writer died mid-write: its record holds the truth. */
            size_t len = strlen(e->d_name);
            if (len > 4 && streq(e->d_name + len - 4, ".tmp") &&
                !(keep && startswith(e->d_name, keep)))
                (void)unlink(path);
            continue;
        }
        n += reap_record(path, e->d_name, &remove);
        if (remove)
            (void)unlink(path);
    }
    closedir(d);
    return n;
}

void procs_init(void)
{
    _cleanup_free_ char *runtime = paths_runtime_dir(), *why = NULL;
    unsigned char raw[INSTANCE_BYTES];

    /* Orphans of our servers (their parent died, or they double-forked) are reparented to us. */
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
        log_warning("cannot become a child subreaper: %s (orphans of servers go to init)",
                    strerror(errno));
    if (random_bytes(raw, sizeof(raw)) < 0) {
        log_warning("no randomness for the instance tag: child processes are not tracked");
        return;
    }
    hex_encode(instance, raw, sizeof(raw));
    ensure_identity();
    reserve_take();
    record_dir = paths_join(runtime, "procs");
    if (paths_ensure_private_dir(runtime, geteuid(), 1, &why) < 0 ||
        paths_ensure_private_dir(record_dir, geteuid(), 1, &why) < 0) {
        log_warning("no process record: %s (processes of this mcpd may outlive a crash of it)",
                    why);
        free(record_dir);
        record_dir = NULL;
        return;
    }
    procs_reap_records(record_dir, NULL);
    record_path = paths_join(record_dir, instance);
    write_record();
}

void procs_shutdown(void)
{
    _cleanup_free_ char *prefix = NULL;
    _cleanup_free_ ProcId *all = NULL;
    ProcTarget t = {0};
    unsigned left = 0;

    if (!instance[0])
        return;
    prefix = xasprintf(PROCS_ENV_NAME "=%s-", instance);
    t.tag = prefix;
    t.tag_prefix = true;
    /* Children, what the last walk saw below them, and whatever else mcpd adopted. */
    all = xcalloc(n_live + n_desc + 1, sizeof(*all));
    if (n_live) /* live is NULL while no child ever ran */
        memcpy(all, live, n_live * sizeof(*all));
    if (n_desc)
        memcpy(all + n_live, desc, n_desc * sizeof(*all));
    t.exact = all;
    t.n_exact = n_live + n_desc;
    t.self_children = true;
    if (procs_signal(&t, SIGKILL))
        log_info("killed processes of servers that were still running at exit");
    /* Those adopted by us become our zombies: reap them, so nothing is left behind. */
    for (int waited = 0; waited < EXIT_REAP_MS; waited += EXIT_REAP_STEP_MS) {
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        t.exact = NULL;
        t.n_exact = 0;
        if ((left = procs_signal(&t, SIGKILL)) == 0)
            break;
        usleep(EXIT_REAP_STEP_MS * 1000);
    }
    if (left)
        log_warning("%u processes of this mcpd would not die; the next mcpd retries", left);
    else if (record_path)
        (void)unlink(record_path);
    free(record_path);
    free(record_dir);
    free(live);
    free(live_serial);
    free(desc);
    record_path = record_dir = NULL;
    live = desc = NULL;
    live_serial = NULL;
    n_live = cap_live = n_desc = 0;
    reserve_release();
    instance[0] = '\0';
}
