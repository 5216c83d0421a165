// SPDX-License-Identifier: MIT
// cache: the on-disk tool cache, one durable JSON file per server and config hash.

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/cache.h"

/* A cache file larger than this is not ours: 1000 tools with big schemas stay far below. */
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

static int slurp(const char *path, StrBuf *sb)
{
    _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

    if (fd < 0)
        return -errno;
    for (;;) {
        strbuf_reserve(sb, 65536);
        ssize_t n = read(fd, sb->data + sb->len, sb->cap - sb->len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            return 0;
        sb->len += (size_t)n;
        sb->data[sb->len] = '\0';
        if (sb->len > CACHE_MAX_FILE_BYTES)
            return -EFBIG;
    }
}

int cache_load(const char *dir, const ServerConfig *cfg, int64_t now_wall_ms, yajl_val *toolsp,
               int64_t *saved_atp, char **whyp)
{
    _cleanup_free_ char *path = cache_path(dir, cfg), *err = NULL;
    _cleanup_json_ yajl_val root = NULL;
    StrBuf sb = STRBUF_INIT;
    int64_t version = 0, saved = 0, expires = 0;
    yajl_val tools;
    int r;

    r = slurp(path, &sb);
    if (r == -ENOENT) {
        strbuf_deinit(&sb);
        return CACHE_E_MISS;
    }
    if (r < 0) {
        strbuf_deinit(&sb);
        *whyp = xasprintf("%s: cannot read: %s", path, strerror(-r));
        return CACHE_E_STALE;
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
    *toolsp = json_object_take(root, "tools");
    *saved_atp = saved;
    return 0;
}

int cache_write_durably(const char *dir, const char *path, const StrBuf *sb, char **whyp)
{
    _cleanup_free_ char *tmp = xasprintf("%s.tmp.%d", path, (int)getpid());
    _cleanup_close_ int dfd = -1;
    int fd, r = 0;

    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0 && errno == EEXIST) {
        /* A temp file left by a crash of this very pid number: it is ours to replace. */
        unlink(tmp);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    }
    if (fd < 0) {
        r = -errno;
        *whyp = xasprintf("cannot create %s: %s", tmp, strerror(-r));
        return r;
    }
    if ((r = fd_write_all(fd, sb->data, sb->len)) < 0 || (fsync(fd) < 0 && (r = -errno))) {
        *whyp = xasprintf("cannot write %s: %s", tmp, strerror(-r));
        close(fd);
        unlink(tmp);
        return r;
    }
    close(fd);
    if (rename(tmp, path) < 0) {
        r = -errno;
        *whyp = xasprintf("cannot rename %s: %s", tmp, strerror(-r));
        unlink(tmp);
        return r;
    }
    /* The rename is durable only once the directory is. */
    dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0)
        (void)fsync(dfd);
    return 0;
}

int cache_store(const char *dir, const ServerConfig *cfg, yajl_val server_info, yajl_val tools,
                int64_t now_wall_ms, int64_t ttl_ms, char **whyp)
{
    _cleanup_free_ char *path = NULL;
    StrBuf sb = STRBUF_INIT;
    int r;

    if ((r = paths_mkdir_p(dir, 0700)) < 0) {
        *whyp = xasprintf("cannot create %s: %s", dir, strerror(-r));
        return r;
    }
    path = cache_path(dir, cfg);
    strbuf_printf(&sb, "{\"version\":%d,\"server\":", CACHE_VERSION);
    json_write_string(&sb, cfg->name, strlen(cfg->name));
    strbuf_printf(&sb,
                  ",\"configHash\":\"%s\",\"savedAt\":%" PRId64 ",\"expiresAt\":%" PRId64
                  ",\"serverInfo\":",
                  cfg->hash, now_wall_ms, now_wall_ms + ttl_ms);
    json_write(&sb, server_info);
    strbuf_puts(&sb, ",\"tools\":");
    json_write(&sb, tools);
    strbuf_puts(&sb, "}\n");
    r = cache_write_durably(dir, path, &sb, whyp);
    strbuf_deinit(&sb);
    return r;
}
