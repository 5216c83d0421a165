// SPDX-License-Identifier: MIT
// proctree: each child's whole process tree from one bounded walk of /proc: members and cost.

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/json.h"
#include "common/log.h"
#include "common/util.h"
#include "daemon/sys/proctree.h"

/*
 * The longest chain of parents followed up from one process: deeper trees do not occur (each
 * level is a process of the user), and a chain that loops through a pid reused during the walk
 * must end somewhere.
 */
#define DEPTH_MAX 1024
/* smaps_rollup is about 1 KiB of "Name: value kB" lines; Pss is among the first. */
#define ROLLUP_READ_MAX 4096
/* A walk slower than this is logged: it stalls the loop for that long. */
#define WALK_SLOW_US 50000
/* Owner of a process mcpd adopted whose server is unknown (no tag, no remembered parent). */
#define UNATTRIBUTED UINT64_MAX

/* A process of some child's tree: identity and the serial of that child. */
typedef struct Member {
    ProcId id;
    uint64_t serial;
} Member;

typedef struct Cost {
    uint64_t serial;
    ProcCost cost;
} Cost;

static struct event *ev_walk;
static uint64_t last_walk_ms;
static bool walked;
static Member *members; /* sorted by pid */
static size_t n_members;
static Cost *costs;
static size_t n_costs;
static ProcCost unattributed;

/* The walk's view: every process of the user, and for each its owner (0: not ours). */
typedef struct Walk {
    ProcInfo *p;
    size_t n;
    uint64_t *owner;
    unsigned char *state; /* 0 unknown, 1 on the chain being resolved, 2 resolved */
    pid_t self;
} Walk;

static ssize_t walk_find(const Walk *w, pid_t pid)
{
    size_t lo = 0, hi = w->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w->p[mid].pid == pid)
            return (ssize_t)mid;
        if (w->p[mid].pid < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

static const Member *member_find(pid_t pid, uint64_t start)
{
    size_t lo = 0, hi = n_members;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (members[mid].id.pid == pid)
            return members[mid].id.start == start ? &members[mid] : NULL;
        if (members[mid].id.pid < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/*
 * The server of a process mcpd adopted without a tag, from its session or group: a daemon's
 * middle process (fork, setsid, fork, exit) leads the session the daemon stays in, and the
 * kernel gives no new process that pid while the session lives, so a session or group id that
 * names a process the last walk attributed still names that process's server.
 */
static uint64_t owner_by_leader(const ProcInfo *pi)
{
    for (size_t i = 0; i < n_members; i++)
        if (members[i].id.pid == pi->sid || members[i].id.pid == pi->pgid)
            return members[i].serial;
    return 0;
}

static void walk_set(Walk *w, size_t i, uint64_t owner)
{
    w->owner[i] = owner;
    w->state[i] = 2;
}

/*
 * The owner of process i: that of its nearest ancestor already known, following parents. A
 * process adopted by mcpd (its parent died: mcpd is the subreaper) that no earlier walk saw
 * belongs to the server its tag names, or to none known.
 */
static void walk_resolve(Walk *w, size_t i)
{
    size_t chain[DEPTH_MAX], n = 0, j = i;
    uint64_t owner = 0;

    while (w->state[j] != 2 && n < DEPTH_MAX) {
        const ProcInfo *pi = &w->p[j];
        ssize_t k;
        if (w->state[j] == 1)
            break; /* a loop through a reused pid: not ours */
        w->state[j] = 1;
        chain[n++] = j;
        if (pi->ppid == w->self) {
            uint64_t serial = procs_tag_serial(pi->pid);
            if (!serial)
                serial = owner_by_leader(pi);
            owner = serial ? serial : UNATTRIBUTED;
            break;
        }
        if ((k = walk_find(w, pi->ppid)) < 0)
            break; /* its parent is not the user's, or is init: not ours */
        j = (size_t)k;
    }
    if (w->state[j] == 2)
        owner = w->owner[j];
    for (size_t c = 0; c < n; c++)
        walk_set(w, chain[c], owner);
}

static void add_root(pid_t pid, uint64_t serial, void *ud)
{
    Walk *w = ud;
    ssize_t k = walk_find(w, pid);

    if (k >= 0)
        walk_set(w, (size_t)k, serial);
}

/* The PSS of a process in bytes, or -1 when smaps_rollup cannot be read (another uid, gone). */
static int64_t read_pss(pid_t pid)
{
    char path[48], buf[ROLLUP_READ_MAX];
    const char *p;
    ssize_t n;
    int fd;

    snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return -1;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    if (!(p = strstr(buf, "\nPss:")))
        return -1;
    return strtoll(p + 5, NULL, 10) * 1024;
}

static ProcCost *cost_of(uint64_t serial)
{
    if (serial == UNATTRIBUTED)
        return &unattributed;
    for (size_t i = 0; i < n_costs; i++)
        if (costs[i].serial == serial)
            return &costs[i].cost;
    costs = xrealloc(costs, (n_costs + 1) * sizeof(*costs));
    costs[n_costs] = (Cost){.serial = serial};
    return &costs[n_costs++].cost;
}

static void account(const ProcInfo *pi, uint64_t serial)
{
    static long page, ticks;
    ProcCost *c = cost_of(serial);
    int64_t pss = read_pss(pi->pid);

    if (!page) {
        page = sysconf(_SC_PAGESIZE);
        ticks = sysconf(_SC_CLK_TCK);
    }
    c->n_procs++;
    c->cpu_ms += ticks > 0 ? pi->cpu_ticks * 1000 / (uint64_t)ticks : 0;
    if (pss >= 0) {
        c->mem_bytes += (uint64_t)pss;
    } else {
        c->mem_bytes += pi->rss_pages * (uint64_t)(page > 0 ? page : 4096);
        c->n_rss++;
    }
}

/* Keep what this walk found: members by pid for the next walk and the record, costs. */
static void walk_keep(const Walk *w)
{
    ProcId *desc = xcalloc(w->n ? w->n : 1, sizeof(*desc));
    size_t n_desc = 0;

    n_costs = 0;
    unattributed = (ProcCost){0};
    n_members = 0;
    members = xrealloc(members, (w->n ? w->n : 1) * sizeof(*members));
    for (size_t i = 0; i < w->n; i++) {
        if (!w->owner[i])
            continue;
        account(&w->p[i], w->owner[i]);
        members[n_members++] = (Member){{w->p[i].pid, w->p[i].start}, w->owner[i]};
        desc[n_desc++] = (ProcId){w->p[i].pid, w->p[i].start};
    }
    /* The record holds the children already; listing them again does no harm. */
    procs_note_descendants(desc, n_desc);
    free(desc);
}

static void walk(void)
{
    Walk w = {0};
    uint64_t t0 = now_us(), took;

    if (procs_scan(&w.p, &w.n) < 0)
        return;
    w.self = procs_self();
    w.owner = xcalloc(w.n ? w.n : 1, sizeof(*w.owner));
    w.state = xcalloc(w.n ? w.n : 1, 1);
    procs_foreach_child(add_root, &w);
    /* What an earlier walk attributed keeps its owner, also once its parent is gone. */
    for (size_t i = 0; i < w.n; i++) {
        const Member *m = w.state[i] ? NULL : member_find(w.p[i].pid, w.p[i].start);
        if (m)
            walk_set(&w, i, m->serial);
    }
    for (size_t i = 0; i < w.n; i++)
        if (!w.state[i])
            walk_resolve(&w, i);
    walk_keep(&w);
    free(w.p);
    free(w.owner);
    free(w.state);
    last_walk_ms = now_ms();
    walked = true;
    took = now_us() - t0;
    if (took > WALK_SLOW_US)
        log_info("walking /proc for the servers' processes took %llu ms (%zu processes)",
                 (unsigned long long)(took / 1000), w.n);
    else
        log_debug("walked /proc: %zu processes of the user, %zu of servers, in %llu us", w.n,
                  n_members, (unsigned long long)took);
}

static void arm(uint64_t ms)
{
    struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};

    if (ev_walk)
        evtimer_add(ev_walk, &tv);
}

static void on_walk(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
    walk();
    arm(PROCTREE_INTERVAL_MS);
}

void proctree_start(struct event_base *base)
{
    if (ev_walk)
        return;
    ev_walk = evtimer_new(base, on_walk, NULL);
    arm(PROCTREE_INTERVAL_MS);
}

void proctree_stop(void)
{
    if (ev_walk)
        event_free(ev_walk);
    ev_walk = NULL;
    free(members);
    free(costs);
    members = NULL;
    costs = NULL;
    n_members = n_costs = 0;
    walked = false;
}

void proctree_spawned(void)
{
    struct timeval left;

    /* Sooner than the periodic walk, never later than one already due. */
    if (ev_walk && (!evtimer_pending(ev_walk, &left) || !walked ||
                    now_ms() + PROCTREE_AFTER_SPAWN_MS < last_walk_ms + PROCTREE_INTERVAL_MS))
        arm(PROCTREE_AFTER_SPAWN_MS);
}

void proctree_refresh(uint64_t max_age_ms)
{
    if (!walked || now_ms() - last_walk_ms >= max_age_ms)
        walk();
}

bool proctree_cost(uint64_t serial, ProcCost *out)
{
    for (size_t i = 0; i < n_costs; i++)
        if (costs[i].serial == serial) {
            *out = costs[i].cost;
            return true;
        }
    return false;
}

void proctree_unattributed(ProcCost *out)
{
    *out = unattributed;
}

size_t proctree_members(uint64_t serial, ProcId **idsp)
{
    size_t n = 0;

    *idsp = xcalloc(n_members ? n_members : 1, sizeof(**idsp));
    for (size_t i = 0; i < n_members; i++)
        if (members[i].serial == serial)
            (*idsp)[n++] = members[i].id;
    return n;
}

void proctree_status(uint64_t serial, uint64_t started_ms, yajl_val obj)
{
    yajl_val o;
    ProcCost pc;

    proctree_refresh(PROCTREE_STATUS_MAX_AGE_MS);
    if (!proctree_cost(serial, &pc))
        return;
    o = json_object_new();
    json_object_set(o, "processes", json_int_new(pc.n_procs));
    json_object_set(o, "memoryBytes", json_int_new((int64_t)pc.mem_bytes));
    /* PSS, or PSS+RSS when some processes could only be counted by RSS (an overcount). */
    json_object_set(o, "measure", json_string_new(pc.n_rss ? "PSS+RSS" : "PSS"));
    json_object_set(o, "cpuMs", json_int_new((int64_t)pc.cpu_ms));
    json_object_set(o, "runningMs", json_int_new((int64_t)(now_ms() - started_ms)));
    json_object_set(o, "sampledMsAgo", json_int_new((int64_t)(now_ms() - last_walk_ms)));
    json_object_set(obj, "processTree", o);
}
