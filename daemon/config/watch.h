// SPDX-License-Identifier: MIT
// watch: hot reload; inotify on every config file discovery read or looked for, debounced.
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <event2/event.h>

/* Apply a change: reload the workspace of root (NULL: user-level files, so every workspace). */
typedef void (*WatchApplyFn)(const char *root, const char *why, void *userdata);
/* Is there still a workspace for root? Files of workspaces gone stop being watched. */
typedef bool (*WatchRootLiveFn)(const char *root, void *userdata);
/*
 * A judged file changed (watch_judge): what it feeds that changed, as roots to reload into
 * *rootsp (each to free; "" stands for the user level, so every workspace); none when only
 * what discovery does not read changed.
 */
typedef void (*WatchJudgeFn)(const char *path, char ***rootsp, size_t *np, void *userdata);

typedef struct WatchEntry {
    char *path;
    char *root; /* NULL: user level */
} WatchEntry;

typedef struct WatchDir {
    int wd;
    char *path;
} WatchDir;

typedef struct Watcher {
    struct event_base *base;
    int fd; /* inotify, or -1 when hot reload is unavailable */
    struct event *ev_read, *ev_sync, *ev_debounce;
    WatchEntry *entries;
    size_t n_entries;
    WatchDir *dirs;
    size_t n_dirs;
    char **dirty_roots; /* roots to reload; "" stands for the user level */
    size_t n_dirty;
    char *dirty_why; /* the first file that changed, for the log */
    uint64_t dirty_since_ms;
    WatchApplyFn apply;
    WatchRootLiveFn root_live;
    void *userdata;
    bool warned_full;
    char *judged;      /* a file whose changes its judge weighs (~/.claude.json), or NULL */
    char *judged_real; /* the same after links */
    WatchJudgeFn judge;
    bool judge_pending; /* the judged file changed since the last debounce */
} Watcher;

/**
 * Start watching (nothing yet: files come through watch_note). Without inotify, log why and
 * carry on without hot reload: return 0 either way, -errno only for a broken loop.
 */
int watch_init(Watcher *w, struct event_base *base, WatchApplyFn apply, WatchRootLiveFn live,
               void *userdata);
/**
 * Discovery read or looked for path for root (NULL: user level); watched from the next turn. A
 * path ending in '/' is a directory whose listing discovery read: any entry of it appearing,
 * going or changing counts.
 */
void watch_note(Watcher *w, const char *path, const char *root);
/**
 * Changes of path are weighed by judge at the end of the quiet time rather than reloading what
 * path feeds: a large file another program rewrites often (Claude Code's ~/.claude.json, its
 * counters every few seconds) reloads only the workspaces whose part of it changed.
 */
void watch_judge(Watcher *w, const char *path, WatchJudgeFn judge);
/** Stop watching and release; safe on a zeroed value. */
void watch_deinit(Watcher *w);
