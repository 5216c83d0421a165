// SPDX-License-Identifier: MIT
// test-cache: the tool cache round-trips, and refuses what is not a private regular file.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "common/util.h"
#include "daemon/core/cache.h"
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

int main(void)
{
    RUN(test_round_trip);
    RUN(test_fifo_is_a_miss);
    RUN(test_symlink_is_a_miss);
    RUN(test_writable_file_is_unsafe);
    RUN(test_open_dir_is_unsafe);
    RUN(test_oversized_is_a_miss);
    RUN(test_missing_is_a_quiet_miss);
    return test_main_result();
}
