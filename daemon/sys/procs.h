// SPDX-License-Identifier: MIT
// procs: every process mcpd starts and all their descendants: tagged, recorded, and ended.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Processes of one user looked at per scan; far above any desktop, bounds a fork bomb's cost. */
#define PROCS_SCAN_MAX 65536

/* The environment variable every child (and so every descendant) of mcpd carries. */
#define PROCS_ENV_NAME "MCPD_INSTANCE"

/* One process as /proc shows it. */
typedef struct ProcInfo {
    pid_t pid, ppid, pgid, sid;
    uint64_t start;     /* /proc/PID/stat field 22: clock ticks after boot */
    uint64_t cpu_ticks; /* fields 14-17: its user and system time and its reaped children's */
    uint64_t rss_pages; /* field 24 */
    char state;         /* field 3: R, S, D, Z, ... */
} ProcInfo;

/* A process by identity: its pid and start time (a pid alone may be reused). */
typedef struct ProcId {
    pid_t pid;
    uint64_t start;
} ProcId;

/* What a scan chooses; descendants (by parent pid) of every chosen process are chosen too. */
typedef struct ProcTarget {
    const char *tag;     /* environment entry to match exactly, or NULL */
    bool tag_prefix;     /* match entries that start with tag instead */
    pid_t pgid;          /* members of this group (its leader is known to be ours), or 0 */
    const ProcId *exact; /* these very processes and the members of their groups */
    size_t n_exact;
    /*
     * Also the members of a group or session an exact process led, once that leader is dead
     * (a crashed instance's): see in_orphaned_group() for why the id still proves it.
     */
    bool exact_orphaned_groups;
    bool self_children; /* every child of mcpd (as subreaper it adopts only its servers' orphans) */
} ProcTarget;

/**
 * Start tracking: make mcpd a child subreaper (orphans of its servers come back to it), pick
 * this instance's random tag, end what earlier instances that died left behind (from their
 * records under the runtime dir), and write this instance's record. Problems are logged; the
 * daemon runs on without a record rather than not at all.
 */
void procs_init(void);
/** At daemon exit: SIGKILL every process of this instance, reap them, remove the record. */
void procs_shutdown(void);
/** This boot's id (records of other boots name processes long gone), "-" if unknown. */
const char *procs_boot_id(void);
/** mcpd's own pid (a scan never lists it). */
pid_t procs_self(void);
/** This instance's tag (32 hex digits), or "" before procs_init. */
const char *procs_instance(void);
/** The environment entry for the child with this serial: "MCPD_INSTANCE=<instance>-<serial>". */
char *procs_child_env(uint64_t serial);
/** A child (serial: in its tag) was started: add it to the durable record. */
void procs_add(pid_t pid, uint64_t serial);
/** Call fn for every child added and not yet removed. */
void procs_foreach_child(void (*fn)(pid_t pid, uint64_t serial, void *ud), void *ud);
/** A child was reaped: drop it from the record. */
void procs_remove(pid_t pid);
/**
 * Send sig to every process of the child with this serial: its descendants that carry its tag
 * (also those that left its group with setsid), the members of group pgid (0 once its leader
 * was reaped) and the descendants of all these. SIGKILL repeats until no new process appears
 * (one may fork while we scan). Return how many processes were signalled.
 */
unsigned procs_signal_child(pid_t pgid, uint64_t serial, const ProcId *known, size_t n_known,
                            int sig);
/**
 * Every descendant of mcpd's children (those that left their groups or sessions, cleared their
 * environment or were adopted by mcpd included), as the latest walk of /proc saw them: written
 * to the durable record when the set changed, so that a crash of mcpd leaves their identities
 * for the next instance.
 */
void procs_note_descendants(const ProcId *ids, size_t n);
/**
 * Every live process of this uid but mcpd, sorted by pid, in *infop (to free); at most
 * PROCS_SCAN_MAX. Return 0 or -errno.
 */
int procs_scan(ProcInfo **infop, size_t *np);
/** Is this process's environment tagged by this instance? Return its serial, or 0. */
uint64_t procs_tag_serial(pid_t pid);

/** Read /proc/PID/stat; return 0 or -errno (-ENOENT: no such process). */
int procs_read_info(pid_t pid, ProcInfo *pi);
/** Does the environment of pid hold entry (exactly, or as a prefix)? False when unreadable. */
bool procs_env_has(pid_t pid, const char *entry, bool prefix);
/**
 * Send sig to every live process of this uid that target chooses (never mcpd itself); with
 * SIGKILL, scan again until no new one appears. Return how many were signalled.
 */
unsigned procs_signal(const ProcTarget *target, int sig);
/**
 * End what the records in dir say dead instances left behind (every record but the one named
 * keep), then remove those records. A record of a live mcpd is left alone. Return how many
 * processes were killed.
 */
unsigned procs_reap_records(const char *dir, const char *keep);
