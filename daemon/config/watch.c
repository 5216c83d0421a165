// SPDX-License-Identifier: MIT
// watch: hot reload; inotify on every config file discovery read or looked for, and on the
// directories whose listing it read (an agent's extensions), debounced.

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/log.h"
#include "common/paths.h"
#include "common/util.h"
#include "daemon/config/watch.h"

/*
 * Quiet time before a change is applied: editors save in several steps (write a temp file,
 * rename, chmod) and tools rewrite a file twice in a row; half a second joins them into one
 * reload and is still "at once" to a person.
 */
#define WATCH_DEBOUNCE_MS 500
/* A file that never stops changing is still applied this often. */
#define WATCH_DEBOUNCE_MAX_MS 3000
/*
 * Files remembered: every provider's user and project files (about 20 per workspace) for a
 * hundred live projects.
 */
#define WATCH_MAX_ENTRIES 2048
/*
 * Directories watched at once. fs.inotify.max_user_watches is shared by every program of the
 * user (editors, file managers) and was 8192 on older kernels: take a small share of it.
 */
#define WATCH_MAX_DIRS 512
/* One read takes this many events at most; more stay queued for the next read. */
#define WATCH_READ_BYTES (64u * 1024u)

#define WATCH_DIR_EVENTS                                                                           \
    (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_MODIFY |            \
     IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

static bool streq_null(const char *a, const char *b)
{
    return a == b || (a && b && streq(a, b));
}

/* Start or restart the quiet time; why names the first file that changed in it. */
static void arm_debounce(Watcher *w, const char *why)
{
    struct timeval tv = {WATCH_DEBOUNCE_MS / 1000, (WATCH_DEBOUNCE_MS % 1000) * 1000};

    if (!w->dirty_why) {
        w->dirty_why = xstrdup(why);
        w->dirty_since_ms = now_ms();
    }
    /* Each change restarts the quiet time, up to WATCH_DEBOUNCE_MAX_MS after the first. */
    if (now_ms() - w->dirty_since_ms < WATCH_DEBOUNCE_MAX_MS)
        evtimer_add(w->ev_debounce, &tv);
}

/* A root ("" for the user level) to reload at the end of the quiet time. */
static void add_dirty_root(Watcher *w, const char *key)
{
    for (size_t i = 0; i < w->n_dirty; i++)
        if (streq(w->dirty_roots[i], key))
            return;
    w->dirty_roots = xrealloc(w->dirty_roots, (w->n_dirty + 1) * sizeof(char *));
    w->dirty_roots[w->n_dirty++] = xstrdup(key);
}

static void mark_dirty(Watcher *w, const char *root, const char *why)
{
    /* A judged file is weighed once the quiet time is over, not reloaded for (watch_judge). */
    if (w->judged && (streq(why, w->judged) || streq_null(why, w->judged_real)))
        w->judge_pending = true;
    else
        add_dirty_root(w, root ? root : "");
    arm_debounce(w, why);
}

/* The directory to watch for path: its own, or the nearest one that exists. */
static char *dir_for(const char *path)
{
    char *d = paths_dirname(path);
    struct stat st;

    while (stat(d, &st) < 0 || !S_ISDIR(st.st_mode)) {
        char *up = paths_dirname(d);
        bool top = streq(up, d);
        free(d);
        d = up;
        if (top)
            break;
    }
    return d;
}

static WatchDir *dir_find_wd(Watcher *w, int wd)
{
    for (size_t i = 0; i < w->n_dirs; i++)
        if (w->dirs[i].wd == wd)
            return &w->dirs[i];
    return NULL;
}

static void dir_remove_at(Watcher *w, size_t i, bool rm)
{
    if (rm)
        inotify_rm_watch(w->fd, w->dirs[i].wd);
    free(w->dirs[i].path);
    w->dirs[i] = w->dirs[--w->n_dirs];
}

static void entry_remove_at(Watcher *w, size_t i)
{
    free(w->entries[i].path);
    free(w->entries[i].root);
    w->entries[i] = w->entries[--w->n_entries];
}

static void warn_full(Watcher *w, const char *what, size_t max, const char *path)
{
    if (w->warned_full)
        return;
    w->warned_full = true;
    log_full(LOG_WARNING, NULL, "watch",
             "hot reload: more than %zu %s to watch; %s and others are not watched: use "
             "`mcpctl reload` after editing them",
             max, what, path);
}

/* Add the watches entries need that are missing; drop those no entry needs any more. */
static void watch_sync(Watcher *w)
{
    size_t n_needed = 0;
    _cleanup_free_ char **needed = NULL;

    /* Files of workspaces that are gone stop mattering. */
    for (size_t i = 0; i < w->n_entries;)
        if (w->entries[i].root && !w->root_live(w->entries[i].root, w->userdata))
            entry_remove_at(w, i);
        else
            i++;
    needed = xcalloc(w->n_entries + 1, sizeof(char *));
    for (size_t i = 0; i < w->n_entries; i++) {
        char *d = dir_for(w->entries[i].path);
        bool dup = false;
        for (size_t k = 0; k < n_needed && !dup; k++)
            dup = streq(needed[k], d);
        if (dup)
            free(d);
        else
            needed[n_needed++] = d;
    }
    for (size_t i = 0; i < w->n_dirs;) {
        bool keep = false;
        for (size_t k = 0; k < n_needed && !keep; k++)
            keep = streq(needed[k], w->dirs[i].path);
        if (keep)
            i++;
        else
            dir_remove_at(w, i, true);
    }
    for (size_t k = 0; k < n_needed; k++) {
        bool have = false;
        for (size_t i = 0; i < w->n_dirs && !have; i++)
            have = streq(w->dirs[i].path, needed[k]);
        if (!have && w->n_dirs >= WATCH_MAX_DIRS) {
            warn_full(w, "directories", WATCH_MAX_DIRS, needed[k]);
        } else if (!have) {
            int wd = inotify_add_watch(w->fd, needed[k], WATCH_DIR_EVENTS);
            if (wd < 0) {
                log_full(LOG_DEBUG, NULL, "watch", "cannot watch %s: %s", needed[k],
                         strerror(errno));
            } else {
                w->dirs = xrealloc(w->dirs, (w->n_dirs + 1) * sizeof(*w->dirs));
                w->dirs[w->n_dirs++] = (WatchDir){wd, needed[k]};
                needed[k] = NULL;
            }
        }
        free(needed[k]);
    }
}

static void on_sync(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what;
    watch_sync(arg);
}

/* Something in dir d changed (name, or d itself when name is NULL): mark whose files it touches. */
static void dir_changed(Watcher *w, const char *d, const char *name)
{
    _cleanup_free_ char *full = name ? paths_join(d, name) : xstrdup(d);
    size_t n = strlen(full);

    for (size_t i = 0; i < w->n_entries; i++) {
        const char *p = w->entries[i].path;
        size_t lp = strlen(p);
        /* The file itself, or a directory on the way to it appeared or went. */
        if (streq(p, full) || (strncmp(p, full, n) == 0 && p[n] == '/'))
            mark_dirty(w, w->entries[i].root, p);
        /* A listing (path ending in '/'): an entry of that directory came, went or changed. */
        else if (lp > 1 && p[lp - 1] == '/' && n > lp && strncmp(full, p, lp) == 0 &&
                 !strchr(full + lp, '/'))
            mark_dirty(w, w->entries[i].root, full);
    }
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
    Watcher *w = arg;
    _cleanup_free_ char *buf = xmalloc(WATCH_READ_BYTES);
    ssize_t n = read(fd, buf, WATCH_READ_BYTES);
    bool resync = false;

    (void)what;
    if (n <= 0)
        return;
    for (char *p = buf; p < buf + n;) {
        struct inotify_event ev;
        memcpy(&ev, p, sizeof(ev));
        const char *name = ev.len ? p + sizeof(ev) : NULL;
        WatchDir *d = dir_find_wd(w, ev.wd);
        p += sizeof(ev) + ev.len;
        if (ev.mask & IN_Q_OVERFLOW) {
            /* Events were lost: assume everything changed. */
            for (size_t i = 0; i < w->n_entries; i++)
                mark_dirty(w, w->entries[i].root, w->entries[i].path);
            resync = true;
            continue;
        }
        if (!d)
            continue;
        if (ev.mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)) {
            dir_changed(w, d->path, NULL);
            if (ev.mask & IN_IGNORED)
                dir_remove_at(w, (size_t)(d - w->dirs), false);
            resync = true;
            continue;
        }
        dir_changed(w, d->path, name);
        /* A directory created or removed may move a watch up or down the tree. */
        if (ev.mask & IN_ISDIR)
            resync = true;
    }
    if (resync)
        event_active(w->ev_sync, EV_TIMEOUT, 0);
}

static void on_debounce(evutil_socket_t fd, short what, void *arg)
{
    Watcher *w = arg;
    char **roots = w->dirty_roots;
    size_t n = w->n_dirty;
    _cleanup_free_ char *why = w->dirty_why;
    bool user = false;

    (void)fd, (void)what;
    if (w->judge_pending) {
        char **judged = NULL;
        size_t n_judged = 0;
        w->judge_pending = false;
        w->judge(w->judged, &judged, &n_judged, w->userdata);
        for (size_t i = 0; i < n_judged; i++) {
            add_dirty_root(w, judged[i]);
            free(judged[i]);
        }
        free(judged);
        roots = w->dirty_roots;
        n = w->n_dirty;
    }
    w->dirty_roots = NULL;
    w->n_dirty = 0;
    w->dirty_why = NULL;
    for (size_t i = 0; i < n; i++)
        user |= !roots[i][0];
    /* A user-level file feeds every workspace: one reload of all of them covers the rest. */
    if (user)
        w->apply(NULL, why, w->userdata);
    for (size_t i = 0; i < n; i++) {
        if (!user && w->root_live(roots[i], w->userdata))
            w->apply(roots[i], why, w->userdata);
        free(roots[i]);
    }
    free(roots);
    event_active(w->ev_sync, EV_TIMEOUT, 0);
}

static void entry_add(Watcher *w, const char *path, const char *root)
{
    for (size_t i = 0; i < w->n_entries; i++)
        if (streq(w->entries[i].path, path) && streq_null(w->entries[i].root, root))
            return;
    if (w->n_entries >= WATCH_MAX_ENTRIES) {
        warn_full(w, "config files", WATCH_MAX_ENTRIES, path);
        return;
    }
    w->entries = xrealloc(w->entries, (w->n_entries + 1) * sizeof(*w->entries));
    w->entries[w->n_entries++] = (WatchEntry){xstrdup(path), root ? xstrdup(root) : NULL};
    event_active(w->ev_sync, EV_TIMEOUT, 0);
}

void watch_note(Watcher *w, const char *path, const char *root)
{
    char real[PATH_MAX];

    if (w->fd < 0 || !path || path[0] != '/')
        return;
    entry_add(w, path, root);
    /* A link (a dotfile manager's) is edited at its target: watch there too. */
    if (realpath(path, real) && !streq(real, path))
        entry_add(w, real, root);
}

int watch_init(Watcher *w, struct event_base *base, WatchApplyFn apply, WatchRootLiveFn live,
               void *userdata)
{
    memset(w, 0, sizeof(*w));
    w->base = base;
    w->apply = apply;
    w->root_live = live;
    w->userdata = userdata;
    w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (w->fd < 0) {
        log_full(LOG_WARNING, NULL, "watch",
                 "hot reload is off: inotify: %s; use `mcpctl reload` after editing config files",
                 strerror(errno));
        return 0;
    }
    w->ev_read = event_new(base, w->fd, EV_READ | EV_PERSIST, on_read, w);
    w->ev_sync = evtimer_new(base, on_sync, w);
    w->ev_debounce = evtimer_new(base, on_debounce, w);
    if (!w->ev_read || !w->ev_sync || !w->ev_debounce) {
        watch_deinit(w);
        return -ENOMEM;
    }
    event_add(w->ev_read, NULL);
    return 0;
}

void watch_judge(Watcher *w, const char *path, WatchJudgeFn judge)
{
    char real[PATH_MAX];

    free(w->judged);
    free(w->judged_real);
    w->judged = path ? xstrdup(path) : NULL;
    w->judged_real = path && realpath(path, real) && !streq(real, path) ? xstrdup(real) : NULL;
    w->judge = judge;
}

void watch_deinit(Watcher *w)
{
    if (w->ev_read)
        event_free(w->ev_read);
    if (w->ev_sync)
        event_free(w->ev_sync);
    if (w->ev_debounce)
        event_free(w->ev_debounce);
    while (w->n_dirs)
        dir_remove_at(w, 0, false);
    while (w->n_entries)
        entry_remove_at(w, 0);
    free(w->dirs);
    free(w->entries);
    for (size_t i = 0; i < w->n_dirty; i++)
        free(w->dirty_roots[i]);
    free(w->dirty_roots);
    free(w->dirty_why);
    free(w->judged);
    free(w->judged_real);
    if (w->base && w->fd >= 0)
        close(w->fd);
    memset(w, 0, sizeof(*w));
    w->fd = -1;
}
