// SPDX-License-Identifier: MIT
// claude-json: a streaming reader for ~/.claude.json that keeps only what discovery needs.

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yajl/yajl_parse.h>

#include "common/json.h"
#include "common/jsonc.h"
#include "common/paths.h"
#include "common/util.h"
#include "daemon/config/claude-json.h"

/*
 * What is kept may not exceed this. Real files keep a few kilobytes (a handful of servers,
 * a few hundred projects with mostly empty lists); 16 MiB is thousands of times that and
 * still bounds what a hostile file can make mcpd hold.
 */
#define CLAUDE_JSON_MAX_KEPT_BYTES (16u * 1024u * 1024u)
/* Read size: large enough that a 240 MB file is a few thousand reads, small on the stack. */
#define CLAUDE_JSON_CHUNK_BYTES (64u * 1024u)
/* Nesting kept values may have (servers sit 2-3 levels down): json.h's bound for every tree. */
#define CLAUDE_JSON_MAX_DEPTH JSON_MAX_DEPTH

/* The levels of the document that are walked rather than kept or skipped. */
enum { LEVEL_OUTSIDE, LEVEL_ROOT, LEVEL_PROJECTS, LEVEL_PROJECT };

/* Per project: its servers and the keys that say which .mcp.json servers are approved. */
static const char *const project_keys[] = {
    "mcpServers",
    "enableAllProjectMcpServers",
    "enabledMcpjsonServers",
    "disabledMcpjsonServers",
    "disabledMcpServers",
    /* Whether the user trusted the folder: Claude Code reads project settings only then. */
    "hasTrustDialogAccepted",
    NULL,
};

typedef struct Frame {
    yajl_val node;
    char *key; /* for an object: the member whose value comes next */
} Frame;

typedef struct Reader {
    yajl_val root;                      /* what is kept */
    yajl_val project;                   /* the project object being walked */
    int level;                          /* LEVEL_* while walking */
    char *key;                          /* the last key seen at the walked level */
    size_t skip;                        /* >0: inside a value that is not kept, this deep */
    Frame build[CLAUDE_JSON_MAX_DEPTH]; /* the kept value being built */
    size_t n_build;
    yajl_val target; /* where a kept value goes (under target_key) */
    char *target_key;
    size_t kept;
    const char *error; /* why parsing was cancelled */
} Reader;

static bool kept_key(const char *key)
{
    for (const char *const *k = project_keys; *k; k++)
        if (streq(*k, key))
            return true;
    return false;
}

static void reader_deinit(Reader *r)
{
    json_free(r->root);
    free(r->key);
    free(r->target_key);
    for (size_t i = 0; i < r->n_build; i++)
        free(r->build[i].key);
}

/* Put v where the value being kept belongs; containers are also pushed to be filled. */
static int keep(Reader *r, yajl_val v, size_t weight)
{
    bool container = YAJL_IS_OBJECT(v) || YAJL_IS_ARRAY(v);

    r->kept += weight + sizeof(*v);
    if (r->kept > CLAUDE_JSON_MAX_KEPT_BYTES) {
        r->error = "the servers and approvals it holds exceed 16 MiB; that is not a real "
                   "~/.claude.json";
        json_free(v);
        return 0;
    }
    /* Appended: a repeated key is dropped once the file is read (reader_dedupe), as a search
     * per member made a kept object of many members quadratic. */
    if (r->n_build == 0) {
        json_object_append(r->target, r->target_key, v);
    } else {
        Frame *top = &r->build[r->n_build - 1];
        if (YAJL_IS_ARRAY(top->node)) {
            json_array_push(top->node, v);
        } else {
            json_object_append(top->node, top->key ? top->key : "", v);
            free(top->key);
            top->key = NULL;
        }
    }
    if (!container)
        return 1;
    if (r->n_build == CLAUDE_JSON_MAX_DEPTH) {
        r->error = "nested more than 128 levels deep";
        return 0;
    }
    r->build[r->n_build++] = (Frame){v, NULL};
    return 1;
}

/* A value starts at the walked level: walk into it, keep it, or skip it. */
static int begin_walked(Reader *r, yajl_val v, bool map)
{
    bool container = map || (v && YAJL_IS_ARRAY(v));

    switch (r->level) {
    case LEVEL_OUTSIDE:
        if (!map) {
            r->error = "the top level must be an object";
            json_free(v);
            return 0;
        }
        r->level = LEVEL_ROOT;
        return 1;
    case LEVEL_ROOT:
        if (map && streq(r->key, "projects")) {
            json_object_append(r->root, "projects", json_object_new());
            r->level = LEVEL_PROJECTS;
            return 1;
        }
        /* Not an object: kept as it is, so the provider can say what is wrong with it. */
        if (streq(r->key, "mcpServers") || streq(r->key, "projects"))
            goto take;
        break;
    case LEVEL_PROJECTS:
        if (map) {
            r->project = json_object_new();
            /* The last "projects" is the one being read: a repeated one is dropped later. */
            yajl_val projects = r->root->u.object.values[r->root->u.object.len - 1];
            json_object_append(projects, r->key, r->project);
            r->level = LEVEL_PROJECT;
            return 1;
        }
        break;
    case LEVEL_PROJECT:
        if (kept_key(r->key))
            goto take;
        break;
    }
    json_free(v);
    if (container)
        r->skip = 1;
    return 1;
take:
    r->target = r->level == LEVEL_ROOT ? r->root : r->project;
    free(r->target_key);
    r->target_key = xstrdup(r->key);
    return keep(r, v ? v : json_object_new(), 0);
}

static int on_value(Reader *r, yajl_val v, size_t weight)
{
    if (r->n_build)
        return keep(r, v, weight);
    return begin_walked(r, v, false);
}

/* Every callback returns at once inside a skipped value: most of the file is skipped. */
static int cb_null(void *ctx)
{
    Reader *r = ctx;
    return r->skip ? 1 : on_value(r, json_null_new(), 0);
}

static int cb_boolean(void *ctx, int b)
{
    Reader *r = ctx;
    return r->skip ? 1 : on_value(r, json_bool_new(b), 0);
}

static int cb_number(void *ctx, const char *s, size_t n)
{
    Reader *r = ctx;
    if (r->skip)
        return 1;
    _cleanup_free_ char *text = xstrndup(s, n);
    return on_value(r, json_number_new_raw(text), n);
}

static int cb_string(void *ctx, const unsigned char *s, size_t n)
{
    Reader *r = ctx;
    return r->skip ? 1 : on_value(r, json_string_new_lossy((const char *)s, n), n);
}

static int cb_start(void *ctx, bool map)
{
    Reader *r = ctx;

    if (r->skip) {
        r->skip++;
        return 1;
    }
    if (r->n_build)
        return keep(r, map ? json_object_new() : json_array_new(), 0);
    return begin_walked(r, map ? NULL : json_array_new(), map);
}

static int cb_start_map(void *ctx)
{
    return cb_start(ctx, true);
}

static int cb_start_array(void *ctx)
{
    return cb_start(ctx, false);
}

/* A key as text, invalid UTF-8 repaired (the parser does not check it: see stream_init). */
static char *key_text(const unsigned char *s, size_t n)
{
    yajl_val v = json_string_new_lossy((const char *)s, n);
    char *k = xstrdup(v->u.string);

    json_free(v);
    return k;
}

static int cb_map_key(void *ctx, const unsigned char *s, size_t n)
{
    Reader *r = ctx;

    if (r->skip)
        return 1;
    if (r->n_build) {
        Frame *top = &r->build[r->n_build - 1];
        free(top->key);
        top->key = key_text(s, n);
        r->kept += n;
        return 1;
    }
    free(r->key);
    r->key = key_text(s, n);
    return 1;
}

static int cb_end(void *ctx)
{
    Reader *r = ctx;

    if (r->skip) {
        r->skip--;
        return 1;
    }
    if (r->n_build) {
        free(r->build[--r->n_build].key);
        return 1;
    }
    r->level--;
    return 1;
}

static const yajl_callbacks callbacks = {
    .yajl_null = cb_null,
    .yajl_boolean = cb_boolean,
    .yajl_number = cb_number,
    .yajl_string = cb_string,
    .yajl_start_map = cb_start_map,
    .yajl_map_key = cb_map_key,
    .yajl_end_map = cb_end,
    .yajl_start_array = cb_start_array,
    .yajl_end_array = cb_end,
};

/* Line and column carried over the chunks already parsed, for error messages. */
typedef struct Position {
    size_t line, col;
} Position;

static void position_advance(Position *p, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n') {
            p->line++;
            p->col = 1;
        } else {
            p->col++;
        }
    }
}

/* Feed one chunk (or the end, when n is 0 and last); on failure *whyp says where and why. */
static int feed(yajl_handle h, Reader *r, Position *pos, const char *s, size_t n, bool last,
                char **whyp)
{
    yajl_status st = last ? yajl_complete_parse(h) : yajl_parse(h, (const unsigned char *)s, n);
    size_t at;

    if (st == yajl_status_ok) {
        position_advance(pos, s, n);
        return 0;
    }
    at = last ? 0 : yajl_get_bytes_consumed(h);
    position_advance(pos, s, at > 0 ? at - 1 : 0);
    if (st == yajl_status_client_canceled) {
        *whyp = xasprintf("line %zu, column %zu: %s", pos->line, pos->col, r->error);
    } else {
        unsigned char *msg = yajl_get_error(h, 0, NULL, 0);
        char *nl = strchr((char *)msg, '\n');
        if (nl)
            *nl = '\0';
        const char *m = (const char *)msg;
        *whyp = xasprintf("line %zu, column %zu: invalid JSON: %s", pos->line, pos->col,
                          startswith(m, "parse error: ") ? m + 13 : m);
        yajl_free_error(h, msg);
    }
    return -EINVAL;
}

typedef struct Stream {
    yajl_handle h;
    Reader r;
    Position pos;
} Stream;

static void stream_init(Stream *s)
{
    memset(s, 0, sizeof(*s));
    s->r.root = json_object_new();
    s->pos = (Position){1, 1};
    s->h = yajl_alloc(&callbacks, NULL, &s->r);
    /*
     * Most of the file is chat history that is skipped: checking its UTF-8 costs time and
     * protects nothing. What is kept is repaired instead (json_string_new_lossy, key_text),
     * the rule json.h sets for files.
     */
    yajl_config(s->h, yajl_dont_validate_strings, 1);
}

static void stream_deinit(Stream *s)
{
    yajl_free(s->h);
    reader_deinit(&s->r);
}

static int stream_finish(Stream *s, yajl_val *outp, char **whyp)
{
    int r = feed(s->h, &s->r, &s->pos, NULL, 0, true, whyp);

    if (r < 0)
        return r;
    /* A duplicate key keeps its last value (JSON.parse), in O(n log n). */
    jsonc_dedupe(s->r.root);
    *outp = s->r.root;
    s->r.root = NULL;
    return 0;
}

int claude_json_parse(const char *text, size_t len, yajl_val *outp, char **whyp)
{
    Stream s;
    int r;

    stream_init(&s);
    r = feed(s.h, &s.r, &s.pos, text, len, false, whyp);
    if (r == 0)
        r = stream_finish(&s, outp, whyp);
    stream_deinit(&s);
    return r;
}

/* Open a regular file without blocking on what is not one (paths_read_regular's rules). */
static int open_regular(const char *path, bool follow, char **whyp)
{
    struct stat st;
    int fd, r;

    if ((follow ? stat(path, &st) : lstat(path, &st)) < 0)
        goto fail;
    if (!S_ISREG(st.st_mode))
        goto refuse;
    fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | (follow ? 0 : O_NOFOLLOW));
    if (fd < 0)
        goto fail;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        goto refuse;
    }
    return fd;
refuse:
    *whyp = xasprintf("not read: it is %s, not a regular file; replace it with a file",
                      paths_type_name(st.st_mode));
    return -EINVAL;
fail:
    r = -errno;
    if (r != -ENOENT && r != -ENOTDIR)
        *whyp = xasprintf("cannot open: %s", strerror(-r));
    return r;
}

/*
 * The last file read, by identity, size and change times, with what was kept. A reload, or
 * agents opening several projects at once, then reads a 240 MB file once rather than once
 * per workspace; any write to the file (Claude Code writes it after every message) changes
 * its mtime and size, and the next read parses it again.
 */
static struct {
    char *path;
    struct stat st;
    yajl_val kept;
} cache;
/* Discovery runs on the loop and on threads (discover-async.c): the cache is used under it. */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static bool cache_hit(const char *path, const struct stat *st)
{
    return cache.path && streq(cache.path, path) && cache.st.st_dev == st->st_dev &&
           cache.st.st_ino == st->st_ino && cache.st.st_size == st->st_size &&
           cache.st.st_mtim.tv_sec == st->st_mtim.tv_sec &&
           cache.st.st_mtim.tv_nsec == st->st_mtim.tv_nsec &&
           cache.st.st_ctim.tv_sec == st->st_ctim.tv_sec &&
           cache.st.st_ctim.tv_nsec == st->st_ctim.tv_nsec;
}

static void cache_store(const char *path, const struct stat *st, yajl_val kept)
{
    free(cache.path);
    json_free(cache.kept);
    cache.path = xstrdup(path);
    cache.st = *st;
    cache.kept = json_copy(kept);
}

static void roots_add(char ***rootsp, size_t *np, const char *root)
{
    char real[PATH_MAX];

    *rootsp = xrealloc(*rootsp, (*np + 1) * sizeof(char *));
    /* Workspaces are known by their real path; Claude Code writes the project's own. */
    (*rootsp)[(*np)++] = xstrdup(root[0] && realpath(root, real) ? real : root);
}

/* The member named key of obj, looked for at index i first: files are rewritten in order. */
static yajl_val member_near(yajl_val obj, size_t i, const char *key)
{
    if (YAJL_IS_OBJECT(obj) && i < obj->u.object.len && streq(obj->u.object.keys[i], key))
        return obj->u.object.values[i];
    return json_get(obj, key);
}

/* Each project of a whose kept keys differ in b (or that b lacks) into roots. */
static void projects_changed(yajl_val a, yajl_val b, char ***rootsp, size_t *np)
{
    for (size_t i = 0; YAJL_IS_OBJECT(a) && i < a->u.object.len; i++) {
        yajl_val other = member_near(b, i, a->u.object.keys[i]);
        if (!other || !json_equal(a->u.object.values[i], other))
            roots_add(rootsp, np, a->u.object.keys[i]);
    }
}

void claude_json_changes(const char *path, char ***rootsp, size_t *np)
{
    _cleanup_json_ yajl_val before = NULL, now = NULL;
    _cleanup_free_ char *why = NULL;

    *rootsp = NULL;
    *np = 0;
    pthread_mutex_lock(&cache_lock);
    if (cache.path && streq(cache.path, path))
        before = json_copy(cache.kept);
    pthread_mutex_unlock(&cache_lock);
    if (claude_json_read(path, true, &now, &why) < 0)
        now = NULL;
    if (!before || !now ||
        !json_equal(json_get(before, "mcpServers"), json_get(now, "mcpServers"))) {
        roots_add(rootsp, np, "");
        return;
    }
    yajl_val was = json_get(before, "projects"), is = json_get(now, "projects");
    if (!YAJL_IS_OBJECT(was) || !YAJL_IS_OBJECT(is)) {
        if (!json_equal(was, is))
            roots_add(rootsp, np, "");
        return;
    }
    projects_changed(is, was, rootsp, np);
    /* A project that went: its servers go too. Those in both were compared already. */
    for (size_t i = 0; i < was->u.object.len; i++)
        if (!member_near(is, i, was->u.object.keys[i]))
            roots_add(rootsp, np, was->u.object.keys[i]);
}

int claude_json_read(const char *path, bool follow, yajl_val *outp, char **whyp)
{
    _cleanup_close_ int fd = open_regular(path, follow, whyp);
    char buf[CLAUDE_JSON_CHUNK_BYTES];
    struct stat st;
    Stream s;
    ssize_t n;
    int r = 0;

    if (fd < 0)
        return fd;
    if (fstat(fd, &st) < 0) {
        r = -errno;
        *whyp = xasprintf("cannot stat: %s", strerror(-r));
        return r;
    }
    pthread_mutex_lock(&cache_lock);
    bool hit = cache_hit(path, &st);
    if (hit)
        *outp = json_copy(cache.kept);
    pthread_mutex_unlock(&cache_lock);
    if (hit)
        return 0;
    stream_init(&s);
    while (r == 0 && (n = read(fd, buf, sizeof(buf))) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            r = -errno;
            *whyp = xasprintf("cannot read: %s", strerror(-r));
            break;
        }
        r = feed(s.h, &s.r, &s.pos, buf, (size_t)n, false, whyp);
    }
    if (r == 0)
        r = stream_finish(&s, outp, whyp);
    stream_deinit(&s);
    if (r == 0) {
        pthread_mutex_lock(&cache_lock);
        cache_store(path, &st, *outp);
        pthread_mutex_unlock(&cache_lock);
    }
    return r;
}
