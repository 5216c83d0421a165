// SPDX-License-Identifier: MIT
// cache: the on-disk tool cache, one durable JSON file per server and config hash.

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "common/log.h"
#include "common/mcp.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/core/cache.h"
#include "daemon/sys/durable.h"

/*
 * A cache file larger than this is not ours: a list is bounded by maxListBytes (16 MiB by
 * default, see config.h), and the stored list is that list re-serialized, never larger.
 */
#define CACHE_MAX_FILE_BYTES (32u * 1024u * 1024u)

char *cache_dir(void)
{
    _cleanup_free_ char *base = paths_cache_home();
    return paths_join(base, "mcpd/tools");
}

char *cache_path(const char *dir, const ServerConfig *cfg)
{
    /* Names are checked to [A-Za-z0-9_.-] at discovery; the hash suffix keeps "." harmless. */
    return xasprintf("%s/%s-%s.json", dir, cfg->name, cfg->hash);
}

/* A file mcpd would use must be the user's own and writable by nobody else. */
static int check_private_file(const struct stat *st, const char *path, char **whyp)
{
    if (st->st_uid != getuid()) {
        *whyp = xasprintf("%s is owned by uid %u, not by uid %u: not used; remove it", path,
                          (unsigned)st->st_uid, (unsigned)getuid());
        return CACHE_E_UNSAFE;
    }
    if (st->st_mode & 0022) {
        *whyp = xasprintf("%s has mode %04o: not used; remove it (mcpd writes its files 0600)",
                          path, (unsigned)(st->st_mode & 07777));
        return CACHE_E_UNSAFE;
    }
    return 0;
}

/*
 * Read a cache file without ever blocking or following a link: a FIFO or a device planted
 * under the name would hang a blocking open() or read() (and start-up with it).
 */
static int slurp(const char *path, StrBuf *sb, char **whyp)
{
    _cleanup_close_ int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    int r;

    if (fd < 0 && errno == ENOENT)
        return CACHE_E_MISS;
    if (fd < 0) {
        r = errno;
        *whyp = xasprintf("%s: cannot open: %s", path,
                          r == ELOOP ? "it is a symbolic link" : strerror(r));
        return CACHE_E_STALE;
    }
    if (fstat(fd, &st) < 0) {
        *whyp = xasprintf("%s: cannot stat: %s", path, strerror(errno));
        return CACHE_E_STALE;
    }
    if (!S_ISREG(st.st_mode)) {
        *whyp = xasprintf("%s: not a regular file: not used; remove it", path);
        return CACHE_E_STALE;
    }
    if ((r = check_private_file(&st, path, whyp)) != 0)
        return r;
    if (st.st_size > (off_t)CACHE_MAX_FILE_BYTES) {
        *whyp = xasprintf("%s: larger than %u bytes: not used", path, CACHE_MAX_FILE_BYTES);
        return CACHE_E_STALE;
    }
    for (;;) {
        strbuf_reserve(sb, 65536);
        ssize_t n = read(fd, sb->data + sb->len, sb->cap - sb->len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            *whyp = xasprintf("%s: cannot read: %s", path, strerror(errno));
            return CACHE_E_STALE;
        }
        if (n == 0)
            return 0;
        sb->len += (size_t)n;
        sb->data[sb->len] = '\0';
        if (sb->len > CACHE_MAX_FILE_BYTES) {
            /* It grew after fstat: somebody is writing it, and it is not mcpd. */
            *whyp = xasprintf("%s: larger than %u bytes: not used", path, CACHE_MAX_FILE_BYTES);
            return CACHE_E_STALE;
        }
    }
}

int cache_check_dir(const char *dir, char **whyp)
{
    /* Creates it 0700 when missing; group- or other-writable or foreign dirs are refused. */
    return paths_ensure_private_dir(dir, getuid(), 0, whyp) < 0 ? CACHE_E_UNSAFE : 0;
}

/* Read an entry at path and check what every entry holds (version, config, expiry). */
static int entry_load(const char *dir, const char *path, const ServerConfig *cfg,
                      int64_t now_wall_ms, yajl_val *rootp, int64_t *saved_atp, char **whyp)
{
    _cleanup_free_ char *err = NULL;
    _cleanup_json_ yajl_val root = NULL;
    StrBuf sb = STRBUF_INIT;
    int64_t version = 0, saved = 0, expires = 0;
    int r;

    if ((r = cache_check_dir(dir, whyp)) != 0)
        return r;
    r = slurp(path, &sb, whyp);
    if (r != 0) {
        strbuf_deinit(&sb);
        return r;
    }
    root = json_parse(strbuf_str(&sb), &err);
    strbuf_deinit(&sb);
    if (!root) {
        *whyp = xasprintf("%s: corrupt (%s)", path, err);
        return CACHE_E_STALE;
    }
    if (json_get_int(root, "version", &version) < 0 || version != CACHE_VERSION) {
        *whyp = xasprintf("%s: version is not %d", path, CACHE_VERSION);
        return CACHE_E_STALE;
    }
    if (!streq(json_get_string(root, "configHash"), cfg->hash)) {
        *whyp = xasprintf("%s: written for another config", path);
        return CACHE_E_STALE;
    }
    if (json_get_int(root, "savedAt", &saved) < 0 ||
        json_get_int(root, "expiresAt", &expires) < 0 || expires <= now_wall_ms) {
        *whyp = xasprintf("%s: expired", path);
        return CACHE_E_STALE;
    }
    *rootp = root;
    root = NULL;
    *saved_atp = saved;
    return 0;
}

/*
 * An entry's "era": the words of the "protocol" config field, so a reader of the file sees the
 * same two eras the user can pin.
 */
#define CACHE_ERA_LEGACY "2025"
#define CACHE_ERA_MODERN MCP_PROTOCOL_2026_07_28

/* The stored era of an entry, or UNKNOWN: absent (an older mcpd wrote it) or not ours. */
static UpstreamEra entry_era(yajl_val root, const char *path, const ServerConfig *cfg)
{
    yajl_val v = json_get(root, "era");
    const char *s = YAJL_GET_STRING(v);
    _cleanup_free_ char *text = NULL;

    if (!v)
        return UPSTREAM_ERA_UNKNOWN;
    if (s && streq(s, CACHE_ERA_LEGACY))
        return UPSTREAM_ERA_LEGACY;
    if (s && streq(s, CACHE_ERA_MODERN))
        return UPSTREAM_ERA_MODERN;
    text = json_to_string(v);
    log_full(LOG_DEBUG, cfg->name, "cache",
             "%s: era %.64s is not \"" CACHE_ERA_LEGACY "\" or \"" CACHE_ERA_MODERN
             "\": ignored, the server's era will be probed",
             path, text ? text : "?");
    return UPSTREAM_ERA_UNKNOWN;
}

int cache_load(const char *dir, const ServerConfig *cfg, int64_t now_wall_ms, yajl_val *toolsp,
               int64_t *saved_atp, char **whyp)
{
    return cache_load_entry(dir, cfg, now_wall_ms, toolsp, saved_atp, NULL, whyp);
}

int cache_load_entry(const char *dir, const ServerConfig *cfg, int64_t now_wall_ms,
                     yajl_val *toolsp, int64_t *saved_atp, UpstreamEra *erap, char **whyp)
{
    _cleanup_free_ char *path = cache_path(dir, cfg);
    _cleanup_json_ yajl_val root = NULL;
    int64_t saved = 0;
    yajl_val tools;
    int r;

    if ((r = entry_load(dir, path, cfg, now_wall_ms, &root, &saved, whyp)) != 0)
        return r;
    tools = json_get_array(root, "tools");
    if (!tools) {
        *whyp = xasprintf("%s: has no tools array", path);
        return CACHE_E_STALE;
    }
    for (size_t i = 0; i < tools->u.array.len; i++)
        if (!json_get_string(tools->u.array.values[i], "name")) {
            *whyp = xasprintf("%s: tool %zu has no name", path, i);
            return CACHE_E_STALE;
        }
    if (erap)
        *erap = entry_era(root, path, cfg);
    *toolsp = json_object_take(root, "tools");
    *saved_atp = saved;
    return 0;
}

/* The members every entry starts with, after its opening brace. */
static void entry_head(StrBuf *sb, const ServerConfig *cfg, int64_t now_wall_ms, int64_t ttl_ms)
{
    strbuf_printf(sb, "{\"version\":%d,\"server\":", CACHE_VERSION);
    json_write_string(sb, cfg->name, strlen(cfg->name));
    strbuf_printf(sb, ",\"configHash\":\"%s\",\"savedAt\":%" PRId64 ",\"expiresAt\":%" PRId64,
                  cfg->hash, now_wall_ms, now_wall_ms + ttl_ms);
}

static int entry_write(const char *dir, const char *path, StrBuf *sbp, char **whyp);

int cache_store(const char *dir, const ServerConfig *cfg, yajl_val server_info, yajl_val tools,
                int64_t now_wall_ms, int64_t ttl_ms, char **whyp)
{
    StrBuf text = STRBUF_INIT;

    json_write(&text, tools);
    int r = cache_store_json(dir, cfg, server_info, text.data, text.len, UPSTREAM_ERA_UNKNOWN,
                             now_wall_ms, ttl_ms, whyp);
    strbuf_deinit(&text);
    return r;
}

int cache_store_json(const char *dir, const ServerConfig *cfg, yajl_val server_info,
                     const char *tools_json, size_t n, UpstreamEra era, int64_t now_wall_ms,
                     int64_t ttl_ms, char **whyp)
{
    _cleanup_free_ char *path = NULL;
    StrBuf sb = STRBUF_INIT;

    if (cache_check_dir(dir, whyp) != 0)
        return -EPERM;
    path = cache_path(dir, cfg);
    entry_head(&sb, cfg, now_wall_ms, ttl_ms);
    strbuf_puts(&sb, ",\"serverInfo\":");
    json_write(&sb, server_info);
    if (era != UPSTREAM_ERA_UNKNOWN)
        strbuf_printf(&sb, ",\"era\":\"%s\"",
                      era == UPSTREAM_ERA_MODERN ? CACHE_ERA_MODERN : CACHE_ERA_LEGACY);
    strbuf_puts(&sb, ",\"tools\":");
    strbuf_append(&sb, tools_json, n);
    strbuf_puts(&sb, "}\n");
    return entry_write(dir, path, &sb, whyp);
}

/* Write a whole entry durably (consumes sb), refusing one too large to be read back. */
static int entry_write(const char *dir, const char *path, StrBuf *sb, char **whyp)
{
    int r;

    if (sb->len > CACHE_MAX_FILE_BYTES) {
        /* It could never be read back: better no file than one that is refused each start. */
        *whyp = xasprintf("%s: %zu bytes is more than the %u a cache file may hold", path, sb->len,
                          CACHE_MAX_FILE_BYTES);
        strbuf_deinit(sb);
        return -EFBIG;
    }
    r = durable_write(dir, path, sb->data, sb->len, whyp);
    strbuf_deinit(sb);
    return r;
}

char *cache_surface_dir(const char *tools_dir)
{
    const char *slash = strrchr(tools_dir, '/');
    size_t n = slash ? (size_t)(slash - tools_dir) : 0;

    return n ? xasprintf("%.*s/surface", (int)n, tools_dir) : xstrdup("surface");
}

int cache_store_surface(const char *dir, const ServerConfig *cfg, yajl_val surface,
                        int64_t now_wall_ms, int64_t ttl_ms, char **whyp)
{
    _cleanup_free_ char *path = NULL;
    StrBuf sb = STRBUF_INIT;

    if (cache_check_dir(dir, whyp) != 0)
        return -EPERM;
    path = cache_path(dir, cfg);
    entry_head(&sb, cfg, now_wall_ms, ttl_ms);
    strbuf_puts(&sb, ",\"surface\":");
    json_write(&sb, surface);
    strbuf_puts(&sb, "}\n");
    return entry_write(dir, path, &sb, whyp);
}

int cache_load_surface(const char *dir, const ServerConfig *cfg, int64_t now_wall_ms,
                       yajl_val *surfacep, char **whyp)
{
    _cleanup_free_ char *path = cache_path(dir, cfg);
    _cleanup_json_ yajl_val root = NULL;
    int64_t saved;
    int r;

    if ((r = entry_load(dir, path, cfg, now_wall_ms, &root, &saved, whyp)) != 0)
        return r;
    if (!json_get_object(root, "surface")) {
        *whyp = xasprintf("%s: has no surface object", path);
        return CACHE_E_STALE;
    }
    *surfacep = json_object_take(root, "surface");
    return 0;
}

/*
 * Directory entries cache_prune looks at, at most: one per server and config, so a user has
 * dozens to hundreds; the bound keeps a dir someone filled with files from stalling start-up.
 */
#define CACHE_PRUNE_MAX_ENTRIES 100000

/* Whether name is an entry's file name: <something>.json, not a temp file or a dot file. */
static bool entry_name(const char *name)
{
    size_t n = strlen(name);

    return name[0] != '.' && n > 5 && streq(name + n - 5, ".json");
}

int cache_prune(const char *dir, int64_t now_wall_ms, int64_t max_age_ms)
{
    _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d;
    struct dirent *e;
    unsigned seen = 0;
    int removed = 0;

    if (dfd < 0 || !(d = fdopendir(dfd)))
        return 0;
    dfd = -1; /* d owns it now */
    while ((e = readdir(d)) && seen++ < CACHE_PRUNE_MAX_ENTRIES) {
        struct stat st;
        int64_t mtime_ms;

        if (!entry_name(e->d_name) || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            !S_ISREG(st.st_mode) || st.st_uid != getuid())
            continue;
        mtime_ms = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
        if (now_wall_ms - mtime_ms <= max_age_ms)
            continue;
        if (unlinkat(dirfd(d), e->d_name, 0) == 0) {
            removed++;
            log_debug("cache: removed %s/%s, not rewritten for %" PRId64 " days", dir, e->d_name,
                      (now_wall_ms - mtime_ms) / 86400000);
        }
    }
    closedir(d);
    return removed;
}
