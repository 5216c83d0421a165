// SPDX-License-Identifier: MIT
// config-read: how discovery reads a config file: bounded, regular files only, noted for hot
// reload, a JSON file's last good version kept.

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "common/json.h"
#include "common/jsonc.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/config/config-read.h"

/* A config file larger than this is not a config file; refuse rather than slurp it. */
#define CONFIG_MAX_FILE_BYTES (4u * 1024u * 1024u)
/*
 * Config files whose last good text is kept for safe reload: every provider's user and project
 * files for a few dozen live projects; and at most this many bytes of them in all (the largest
 * usual file, ~/.claude.json with its history, is a few MiB).
 */
#define CONFIG_GOOD_MAX       64
#define CONFIG_GOOD_MAX_BYTES (32u * 1024u * 1024u)

/* Kept as text, not as a parsed tree: a tree of a large ~/.claude.json is several times larger. */
typedef struct GoodFile {
    char *path;
    char *text;
} GoodFile;

/* Discovery runs on the loop and on threads (discover-async.c): good[] is used under good_lock. */
static pthread_mutex_t good_lock = PTHREAD_MUTEX_INITIALIZER;
static GoodFile good[CONFIG_GOOD_MAX];
static size_t n_good, good_bytes;
static ConfigReadHook read_hook;
static void *read_hook_ud;

void config_set_read_hook(ConfigReadHook fn, void *userdata)
{
    read_hook = fn;
    read_hook_ud = userdata;
}

void config_note_listing(ConfigSet *set, const char *dir)
{
    _cleanup_free_ char *listing = xasprintf("%s/", dir);

    config_note_file(set, listing);
}

/*
 * Project-level files sit inside a repository someone else may have written: a link there
 * could point at any file of the user's (a key, another agent's config full of tokens) and
 * have it parsed and quoted back in errors, so it is not followed. User-level files are the
 * user's own, and dotfile managers (stow, chezmoi, home-manager) commonly make ~/.claude.json
 * or ~/.codex/config.toml links into a dotfiles repository: those are followed, but the target
 * must still be a regular file. Either way nothing but a regular file is read, so a FIFO or a
 * device never blocks the loop.
 */
void config_note_file(ConfigSet *set, const char *path)
{
    /* Hot reload watches what discovery looked at, found or not. */
    if (set->quiet)
        return;
    if (set->defer_notes) {
        ConfigNote *n;
        set->notes = xrealloc(set->notes, (set->n_notes + 1) * sizeof(*set->notes));
        n = &set->notes[set->n_notes++];
        n->path = xstrdup(path);
        /* Before the read: a change after this point makes the set stale, never lost. */
        n->found = stat(path, &n->st) == 0;
    } else if (read_hook) {
        read_hook(path, set->root, read_hook_ud);
    }
}

void config_set_pass_notes(ConfigSet *set)
{
    for (size_t i = 0; read_hook && i < set->n_notes; i++)
        read_hook(set->notes[i].path, set->root, read_hook_ud);
}

int config_read_text(ConfigSet *set, const char *path, ConfigLevel level, char **textp,
                     size_t *lenp)
{
    _cleanup_free_ char *why = NULL;
    struct stat st;
    int r;

    config_note_file(set, path);
    /* $HOME is never a project of its own files (~/.codex/config.toml is the user's). */
    if (level == CONFIG_LEVEL_PROJECT && set->root_is_home)
        return -ENOENT;
    r = paths_read_regular(path, level != CONFIG_LEVEL_PROJECT, CONFIG_MAX_FILE_BYTES, &st, textp,
                           lenp, &why);
    if (r == 0)
        config_set_note_read(set, path, &st); /* the trust gate judges this file, not the path */
    if (r == -ENOENT || r == -ENOTDIR)
        return -ENOENT;
    if (r < 0)
        config_set_problem(set, path, NULL, "%s", why ? why : strerror(-r));
    return r;
}

/*
 * "LINE:COLUMN" of a jsonc error ("line L, column C: what"), so the problem reads like a
 * compiler's path:line:column; NULL when the text failed a limit rather than the syntax.
 */
static char *json_error_where(const char *why)
{
    size_t line, col;

    if (!why || sscanf(why, "line %zu, column %zu", &line, &col) != 2)
        return NULL;
    return xasprintf("%zu:%zu", line, col);
}

/* The last version of a JSON file that parsed, kept by path. */
static const GoodFile *good_find(const char *path)
{
    for (size_t i = 0; i < n_good; i++)
        if (streq(good[i].path, path))
            return &good[i];
    return NULL;
}

static void good_forget(const char *path)
{
    for (size_t i = 0; i < n_good; i++)
        if (streq(good[i].path, path)) {
            good_bytes -= strlen(good[i].text);
            free(good[i].path);
            free(good[i].text);
            good[i] = good[--n_good];
            return;
        }
}

static void good_keep(const char *path, const char *text)
{
    const GoodFile *g = good_find(path);

    if (g && streq(g->text, text))
        return;
    good_forget(path);
    /* The oldest kept go first: they are the least likely to be mid-edit. */
    while (n_good &&
           (n_good >= CONFIG_GOOD_MAX || good_bytes + strlen(text) > CONFIG_GOOD_MAX_BYTES)) {
        good_bytes -= strlen(good[0].text);
        free(good[0].path);
        free(good[0].text);
        memmove(good, good + 1, (n_good - 1) * sizeof(*good));
        n_good--;
    }
    good[n_good].path = xstrdup(path);
    good[n_good++].text = xstrdup(text);
    good_bytes += strlen(text);
}

void config_forget_good(void)
{
    pthread_mutex_lock(&good_lock);
    while (n_good)
        good_forget(good[0].path);
    pthread_mutex_unlock(&good_lock);
}

/**
 * Read and parse a JSON config file. A missing file returns -ENOENT quietly; every other
 * failure is recorded in set with the path. A file that parsed before and does not now (a
 * typo, an editor's half-written save) gives its last good version instead, and says so with
 * file:line:column: one typo never takes away every server of a file.
 */
int config_read_json(ConfigSet *set, const char *path, ConfigLevel level, yajl_val *outp)
{
    _cleanup_free_ char *text = NULL, *why = NULL, *where = NULL;
    const GoodFile *g;
    size_t len = 0;
    _cleanup_free_ char *kept = NULL;
    int r = config_read_text(set, path, level, &text, &len);

    if (r == -ENOENT) {
        pthread_mutex_lock(&good_lock);
        good_forget(path);
        pthread_mutex_unlock(&good_lock);
    }
    if (r < 0)
        return r;
    /* Errors name the line and column; a duplicate key keeps its last value (JSON.parse). */
    *outp = jsonc_parse_strict(text, len, &why);
    if (*outp) {
        if (set->keep_last_good) {
            pthread_mutex_lock(&good_lock);
            good_keep(path, text);
            pthread_mutex_unlock(&good_lock);
        }
        return 0;
    }
    where = json_error_where(why);
    /* Only discovery falls back: approvals (trust.json) and settings must not outlive a typo. */
    if (set->keep_last_good) {
        pthread_mutex_lock(&good_lock);
        g = good_find(path);
        kept = g ? xstrdup(g->text) : NULL;
        pthread_mutex_unlock(&good_lock);
    }
    if (kept) {
        config_set_problem(set, path, NULL,
                           "invalid JSON at %s%s%s: %s; kept its servers as they were before "
                           "this change (fix the file and reload)",
                           path, where ? ":" : "", where ? where : "", why);
        *outp = jsonc_parse_strict(kept, strlen(kept), NULL);
        return *outp ? 0 : -EINVAL;
    }
    config_set_problem(set, path, NULL, "invalid JSON at %s%s%s: %s; fix the file or move it away",
                       path, where ? ":" : "", where ? where : "", why);
    return -EINVAL;
}
