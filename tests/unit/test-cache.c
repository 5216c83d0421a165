// SPDX-License-Identifier: MIT
// test-cache: the tool cache round-trips, refuses what is not a private regular file or not its
// own entry, stays within its bounds, and writes durably (daemon/sys/durable.c).

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "common/util.h"
#include "daemon/core/cache.h"
#include "daemon/sys/durable.h"
#include "tests/unit/test.h"

#define NOW_MS 1700000000000LL
#define TTL_MS 86400000LL

static ServerConfig test_cfg = {.name = "srv", .hash = "abc123"};

/* A fresh cache dir <tmp>/tools (created by cache_store, 0700); *rootp is its parent. */
static char *store_one(char **rootp)
{
    _cleanup_free_ char *why = NULL;
    _cleanup_json_ yajl_val tools = json_parse("[{\"name\":\"t1\"},{\"name\":\"t2\"}]", NULL);
    char *dir;

    *rootp = test_tmpdir();
    dir = xasprintf("%s/tools", *rootp);
    CHECK_INTEQ(cache_store(dir, &test_cfg, NULL, tools, NOW_MS, TTL_MS, &why), 0);
    CHECK_STREQ(why, NULL);
    return dir;
}

static int load(const char *dir, char **whyp)
{
    yajl_val tools = NULL;
    int64_t saved = 0;
    int r = cache_load(dir, &test_cfg, NOW_MS + 1, &tools, &saved, whyp);

    if (r == 0) {
        CHECK_INTEQ(json_array_len(tools), 2);
        CHECK_INTEQ(saved, NOW_MS);
    }
    json_free(tools);
    return r;
}

static void test_round_trip(void)
{
    _cleanup_free_ char *root = NULL, *dir = store_one(&root), *why = NULL;
    struct stat st;

    CHECK(stat(dir, &st) == 0 && (st.st_mode & 07777) == 0700);
    CHECK_INTEQ(load(dir, &why), 0);
    test_rm_rf(root);
}

static void test_fifo_is_a_miss(void)
{
    _cleanup_free_ char *root = NULL, *dir = store_one(&root), *why = NULL;
    _cleanup_free_ char *path = cache_path(dir, &test_cfg);

    /* A blocking open() of a FIFO with no writer would never return. */
    CHECK(unlink(path) == 0 && mkfifo(path, 0600) == 0);
    CHECK_INTEQ(load(dir, &why), CACHE_E_STALE);
    CHECK(why && strstr(why, path) && strstr(why, "not a regular file"));
    test_rm_rf(root);
}

static void test_symlink_is_a_miss(void)
{
    _cleanup_free_ char *root = NULL, *dir = store_one(&root), *why = NULL;
    _cleanup_free_ char *path = cache_path(dir, &test_cfg);
    _cleanup_free_ char *real = xasprintf("%s/elsewhere.json", root);

    CHECK(rename(path, real) == 0 && symlink(real, path) == 0);
    CHECK_INTEQ(load(dir, &why), CACHE_E_STALE);
    CHECK(why && strstr(why, path) && strstr(why, "symbolic link"));
    test_rm_rf(root);
}

static void test_writable_file_is_unsafe(void)
{
    _cleanup_free_ char *root = NULL, *dir = store_one(&root), *why = NULL;
    _cleanup_free_ char *path = cache_path(dir, &test_cfg);

    CHECK(chmod(path, 0620) == 0);
    CHECK_INTEQ(load(dir, &why), CACHE_E_UNSAFE);
    CHECK(why && strstr(why, path) && strstr(why, "0620"));
    test_rm_rf(root);
}

static void test_open_dir_is_unsafe(void)
{
    _cleanup_free_ char *root = NULL, *dir = store_one(&root), *why = NULL, *why2 = NULL;
    _cleanup_json_ yajl_val tools = json_array_new();

    CHECK(chmod(dir, 0777) == 0);
    CHECK_INTEQ(load(dir, &why), CACHE_E_UNSAFE);
    CHECK(why && strstr(why, dir) && strstr(why, "chmod 0700"));
    /* Nor is anything written there. */
    CHECK(cache_store(dir, &test_cfg, NULL, tools, NOW_MS, TTL_MS, &why2) < 0);
    CHECK(why2 && strstr(why2, dir));
    test_rm_rf(root);
}

static void test_oversized_is_a_miss(void)
{
    _cleanup_free_ char *root = NULL, *dir = store_one(&root), *why = NULL;
    _cleanup_free_ char *path = cache_path(dir, &test_cfg);
    int fd = open(path, O_WRONLY | O_TRUNC);

    /* A sparse file: its size is what counts, never read. */
    CHECK(fd >= 0 && ftruncate(fd, 64LL * 1024 * 1024) == 0);
    if (fd >= 0)
        close(fd);
    CHECK_INTEQ(load(dir, &why), CACHE_E_STALE);
    CHECK(why && strstr(why, path) && strstr(why, "larger than"));
    test_rm_rf(root);
}

static void test_missing_is_a_quiet_miss(void)
{
    _cleanup_free_ char *root = NULL, *dir = store_one(&root), *why = NULL;
    _cleanup_free_ char *path = cache_path(dir, &test_cfg);

    CHECK(unlink(path) == 0);
    CHECK_INTEQ(load(dir, &why), CACHE_E_MISS);
    CHECK_STREQ(why, NULL);
    test_rm_rf(root);
}

/* Replace the stored entry's text (cache_store wrote it: the file is private). */
static void rewrite(const char *dir, const char *text)
{
    _cleanup_free_ char *path = cache_path(dir, &test_cfg);

    test_write_file(path, text);
    CHECK(chmod(path, 0600) == 0);
}

static void test_foreign_entries_are_stale(void)
{
    static const struct {
        const char *text, *why;
    } cases[] = {
        {"{not json", "corrupt"},
        {"{\"version\":99,\"configHash\":\"abc123\",\"savedAt\":1,\"expiresAt\":9e18,\"tools\":[]}",
         "version is not 1"},
        {"{\"version\":1,\"configHash\":\"other\",\"savedAt\":1,\"expiresAt\":2000000000000,"
         "\"tools\":[]}",
         "written for another config"},
        {"{\"version\":1,\"configHash\":\"abc123\",\"savedAt\":1,\"expiresAt\":2000000000000}",
         "has no tools array"},
        {"{\"version\":1,\"configHash\":\"abc123\",\"savedAt\":1,\"expiresAt\":2000000000000,"
         "\"tools\":[{\"name\":\"a\"},{\"title\":\"no name\"}]}",
         "tool 1 has no name"},
        {"{\"version\":1,\"configHash\":\"abc123\",\"savedAt\":1,\"tools\":[]}", "expired"},
    };
    _cleanup_free_ char *root = NULL, *dir = store_one(&root);

    for (size_t i = 0; i < N_ELEMENTS(cases); i++) {
        _cleanup_free_ char *why = NULL;
        rewrite(dir, cases[i].text);
        CHECK_INTEQ(load(dir, &why), CACHE_E_STALE);
        CHECK_MSG(why && strstr(why, cases[i].why), "case %zu: %s", i, why ? why : "NULL");
    }
    test_rm_rf(root);
}

static void test_expiry(void)
{
    _cleanup_free_ char *root = NULL, *dir = store_one(&root), *why = NULL;
    yajl_val tools = NULL;
    int64_t saved = 0;

    /* Good up to the last millisecond of its TTL, stale from then on. */
    CHECK_INTEQ(cache_load(dir, &test_cfg, NOW_MS + TTL_MS - 1, &tools, &saved, &why), 0);
    json_free(tools);
    tools = NULL;
    CHECK_INTEQ(cache_load(dir, &test_cfg, NOW_MS + TTL_MS, &tools, &saved, &why), CACHE_E_STALE);
    CHECK(tools == NULL);
    CHECK(why && strstr(why, "expired"));
    test_rm_rf(root);
}

static void test_another_config_is_a_miss(void)
{
    _cleanup_free_ char *root = NULL, *dir = store_one(&root), *why = NULL;
    ServerConfig other = {.name = "srv", .hash = "def456"};
    yajl_val tools = NULL;
    int64_t saved = 0;

    /* A changed config is another file: the old entry is never served for it. */
    CHECK_INTEQ(cache_load(dir, &other, NOW_MS + 1, &tools, &saved, &why), CACHE_E_MISS);
    CHECK(tools == NULL);
    test_rm_rf(root);
}

static void test_surface_round_trip(void)
{
    _cleanup_free_ char *root = test_tmpdir(), *tdir = xasprintf("%s/tools", root);
    _cleanup_free_ char *sdir = cache_surface_dir(tdir), *why = NULL, *text = NULL;
    _cleanup_json_ yajl_val surface =
        json_parse("{\"instructions\":\"hi\",\"prompts\":[{\"name\":\"p\"}]}", NULL);
    yajl_val got = NULL, tools = NULL;
    int64_t saved = 0;

    CHECK_STREQ(sdir, text = xasprintf("%s/surface", root));
    CHECK_INTEQ(cache_store_surface(sdir, &test_cfg, surface, NOW_MS, TTL_MS, &why), 0);
    CHECK_INTEQ(cache_load_surface(sdir, &test_cfg, NOW_MS + 1, &got, &why), 0);
    CHECK_STREQ(json_get_string(got, "instructions"), "hi");
    CHECK_INTEQ(json_array_len(json_get_array(got, "prompts")), 1);
    json_free(got);
    /* A surface entry is not a tool entry: no tools array, so never served as one. */
    CHECK_INTEQ(cache_load(sdir, &test_cfg, NOW_MS + 1, &tools, &saved, &why), CACHE_E_STALE);
    CHECK(why && strstr(why, "has no tools array"));
    test_rm_rf(root);
}

static void test_too_large_to_store(void)
{
    _cleanup_free_ char *root = NULL, *dir = store_one(&root), *why = NULL, *big = NULL;
    _cleanup_free_ char *path = cache_path(dir, &test_cfg);
    _cleanup_json_ yajl_val tools = json_array_new();
    /* Past the 32 MiB a cache file may hold (CACHE_MAX_FILE_BYTES in cache.c). */
    size_t n = 33u * 1024u * 1024u;
    yajl_val t = json_object_new();

    big = xmalloc(n + 1);
    memset(big, 'x', n);
    big[n] = '\0';
    json_object_set(t, "name", json_string_new("huge"));
    json_object_set(t, "description", json_string_new(big));
    json_array_push(tools, t);
    CHECK_INTEQ(cache_store(dir, &test_cfg, NULL, tools, NOW_MS, TTL_MS, &why), -EFBIG);
    CHECK(why && strstr(why, path) && strstr(why, "more than"));
    /* The entry stored before is untouched: better the old list than none. */
    free(why);
    why = NULL;
    CHECK_INTEQ(load(dir, &why), 0);
    test_rm_rf(root);
}

static void test_foreign_dir_is_unsafe(void)
{
    _cleanup_free_ char *why = NULL;

    /* "/" belongs to root: as anyone else it is not a dir mcpd may keep files in. */
    if (getuid() == 0)
        return;
    CHECK_INTEQ(cache_check_dir("/", &why), CACHE_E_UNSAFE);
    CHECK(why && strstr(why, "/"));
}

/* The names in dir other than . and .. */
static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    if (!d)
        return -1;
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

static void test_durable_write(void)
{
    _cleanup_free_ char *dir = test_tmpdir(), *path = xasprintf("%s/f.json", dir);
    _cleanup_free_ char *tmp = xasprintf("%s.tmp.%d", path, (int)getpid());
    _cleanup_free_ char *why = NULL, *text = NULL;
    (void)text; /* only its cleanup is wanted */
    struct stat st;

    CHECK_INTEQ(durable_write(dir, path, "one\n", 4, &why), 0);
    CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0600 && st.st_size == 4);
    /* Replaced whole; a temp file left by a crash of this pid is taken over, not an error. */
    test_write_file(tmp, "stale");
    CHECK_INTEQ(durable_write(dir, path, "second\n", 7, &why), 0);
    CHECK(stat(path, &st) == 0 && st.st_size == 7);
    CHECK_INTEQ(count_entries(dir), 1);
    /* A link planted at the temp name is removed, never written through. */
    _cleanup_free_ char *target = xasprintf("%s/target", dir);
    test_write_file(target, "keep");
    CHECK(symlink(target, tmp) == 0);
    CHECK_INTEQ(durable_write(dir, path, "third\n", 6, &why), 0);
    CHECK(stat(target, &st) == 0 && st.st_size == 4);
    CHECK(stat(path, &st) == 0 && st.st_size == 6);
    CHECK_INTEQ(count_entries(dir), 2);
    test_rm_rf(dir);
}

static void test_durable_write_failures(void)
{
    _cleanup_free_ char *dir = test_tmpdir(), *why = NULL;
    _cleanup_free_ char *missing = xasprintf("%s/no/such/f.json", dir);
    _cleanup_free_ char *sub = xasprintf("%s/sub", dir);

    /* Nowhere to create the temp file: -errno, and the message names it. */
    CHECK_INTEQ(durable_write(dir, missing, "x", 1, &why), -ENOENT);
    CHECK(why && strstr(why, "cannot create") && strstr(why, missing));
    free(why);
    why = NULL;
    /* A directory in the way of the rename: it stays, and no temp file is left behind. */
    CHECK(mkdir(sub, 0700) == 0);
    CHECK(durable_write(dir, sub, "x", 1, &why) < 0);
    CHECK(why && strstr(why, "cannot rename"));
    CHECK_INTEQ(count_entries(dir), 1);
    /* Without whyp the caller words the failure itself. */
    CHECK_INTEQ(durable_write(dir, missing, "x", 1, NULL), -ENOENT);
    test_rm_rf(dir);
}

/* Set path's mtime to when_ms (wall), without following a link. */
static void set_mtime(const char *path, int64_t when_ms)
{
    struct timespec ts[2] = {{when_ms / 1000, 0}, {when_ms / 1000, 0}};

    CHECK(utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW) == 0);
}

/* Prune takes old entries only: not fresh ones, links, other files or a missing dir. */
static void test_prune(void)
{
    _cleanup_free_ char *root = NULL, *dir = store_one(&root);
    _cleanup_free_ char *fresh = cache_path(dir, &test_cfg);
    _cleanup_free_ char *old = xasprintf("%s/gone-0123.json", dir);
    _cleanup_free_ char *link = xasprintf("%s/link-4567.json", dir);
    _cleanup_free_ char *other = xasprintf("%s/notes.txt", dir);
    _cleanup_free_ char *missing = xasprintf("%s/none", root);
    int64_t now = wall_ms(), day = 86400000LL;

    CHECK(durable_write(dir, old, "{}", 2, NULL) == 0);
    CHECK(durable_write(dir, other, "x", 1, NULL) == 0);
    CHECK(symlink(old, link) == 0);
    set_mtime(old, now - 40 * day);
    set_mtime(other, now - 40 * day);
    set_mtime(link, now - 40 * day);
    set_mtime(fresh, now - 2 * day);
    /* Older than 31 days: only the old entry goes. */
    CHECK_INTEQ(cache_prune(dir, now, 31 * day), 1);
    CHECK(access(old, F_OK) < 0 && errno == ENOENT);
    CHECK(access(fresh, F_OK) == 0 && access(other, F_OK) == 0);
    CHECK(faccessat(AT_FDCWD, link, F_OK, AT_SYMLINK_NOFOLLOW) == 0);
    /* A second pass finds nothing more; a dir that does not exist is nothing to do. */
    CHECK_INTEQ(cache_prune(dir, now, 31 * day), 0);
    CHECK_INTEQ(cache_prune(missing, now, 31 * day), 0);
    /* With a 1-day bound the 2-day-old entry goes too. */
    CHECK_INTEQ(cache_prune(dir, now, day), 1);
    CHECK(access(fresh, F_OK) < 0);
    test_rm_rf(root);
}

int main(void)
{
    RUN(test_round_trip);
    RUN(test_fifo_is_a_miss);
    RUN(test_symlink_is_a_miss);
    RUN(test_writable_file_is_unsafe);
    RUN(test_open_dir_is_unsafe);
    RUN(test_oversized_is_a_miss);
    RUN(test_missing_is_a_quiet_miss);
    RUN(test_foreign_entries_are_stale);
    RUN(test_expiry);
    RUN(test_another_config_is_a_miss);
    RUN(test_surface_round_trip);
    RUN(test_too_large_to_store);
    RUN(test_foreign_dir_is_unsafe);
    RUN(test_durable_write);
    RUN(test_durable_write_failures);
    RUN(test_prune);
    return test_main_result();
}
