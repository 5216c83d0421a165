// SPDX-License-Identifier: MIT
// runlog: per server, a bounded record of its last process runs that outlives each process.
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <yajl/yajl_tree.h>

#include "common/strbuf.h"

/* Runs kept per server: enough to see a crash loop from its first failure to its last. */
#define RUNLOG_MAX_RUNS 20

/* One process run: when, how it ended, and the tail of its stderr. */
typedef struct Run {
    uint64_t serial; /* 1 for the server's first spawn in this daemon, then counting */
    pid_t pid;       /* 0: it never started (spawn_error says why) */
    int64_t started_wall_ms;
    int64_t ended_wall_ms; /* 0: still running */
    int status;            /* waitpid() status, once ended */
    char *spawn_error;
    bool unknown_end; /* read back from disk still running: mcpd stopped before reaping it */
    char *tail;       /* the last bytes of stderr (a linear buffer of tail_cap bytes) */
    size_t tail_len, tail_cap;
    uint64_t stderr_bytes; /* everything it wrote, kept or not */
} Run;

/* The runs of one server, found by its name and the directory it starts in. */
typedef struct RunLog RunLog;

/**
 * The record of a server (name plus start directory), created when new; takes a reference.
 * Unreferenced records stay for `mcpctl logs` until the registry is full.
 */
RunLog *runlog_get(const char *name, const char *start_dir);
/** Drop a reference from runlog_get; NULL is allowed. Returns NULL. */
RunLog *runlog_unref(RunLog *rl);
/** The record of a server, or NULL; no reference taken. */
RunLog *runlog_find(const char *name, const char *start_dir);
/** Begin a run of a started process; return its serial. */
uint64_t runlog_begin(RunLog *rl, pid_t pid);
/** Record a spawn that failed before the process ran. */
void runlog_spawn_failed(RunLog *rl, const char *why);
/** Append stderr bytes to run serial (ignored once the run has been pushed out). */
void runlog_append(RunLog *rl, uint64_t serial, const char *data, size_t n);
/** The process of run serial was reaped with a waitpid() status. */
void runlog_end(RunLog *rl, uint64_t serial, int status);
/** The stderr tail of run serial, appended to sb. */
void runlog_tail(RunLog *rl, uint64_t serial, StrBuf *sb);
/** Spawns ever recorded (failed ones included). */
uint64_t runlog_spawns(const RunLog *rl);
/** The latest run that has ended, or NULL. */
const Run *runlog_last_ended(const RunLog *rl);
/**
 * The runs with serial >= since (all for 0), oldest first, as a JSON array of
 * {run, pid, startedAt, endedAt, durationMs, exit, exitCode|signal, spawnError, stderr,
 * stderrBytes, running}.
 */
yajl_val runlog_json(const RunLog *rl, uint64_t since);
/** Describe how a run ended ("exited with status 3", "running"); to free. */
char *runlog_describe(const Run *r);
/**
 * Keep records in dir too ($XDG_STATE_HOME/mcpd/runs), so they outlive mcpd: each record is
 * read back when its server is first seen and written after each run ends. Records not written
 * for RUNLOG_KEEP_DAYS are removed. Without a usable dir records stay in memory; *whyp says why.
 */
int runlog_set_dir(const char *dir, char **whyp);
/** Forget every record (daemon exit). */
void runlog_clear(void);
