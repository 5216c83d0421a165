// SPDX-License-Identifier: MIT
// test: the unit tests' runner and temp-dir helpers (one executable per module); checks:
// tests/check.h.
#pragma once

#include <ftw.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/check.h"

/* Tests run and failed; the checks are counted by tests/check.h. */
static int test_n_tests;
static int test_n_failed_tests;

/* Run one test function and report it by name; with TEST_ONLY set, only the tests whose name
 * holds it (TEST_ONLY=test_expand meson test -C build unit-config -v). */
static inline void test_run(const char *name, void (*fn)(void))
{
    const char *only = getenv("TEST_ONLY");
    int before = check_n_failed;

    if (only && *only && !strstr(name, only))
        return;
    test_n_tests++;
    fn();
    if (check_n_failed != before) {
        test_n_failed_tests++;
        fprintf(stderr, "FAIL %s\n", name);
    } else {
        printf("ok   %s\n", name);
    }
}

#define RUN(fn) test_run(#fn, fn)

/* Summary line and exit status for main(). */
static inline int test_main_result(void)
{
    printf("%d tests, %d checks, %d failed checks, %d failed tests\n", test_n_tests, check_n_checks,
           check_n_failed, test_n_failed_tests);
    fflush(stdout);
    return check_n_failed ? 1 : 0;
}

/* A fresh private directory under /tmp (newly allocated); aborts when none can be made. */
static inline char *test_tmpdir(void)
{
    char *dir = strdup("/tmp/mcpd-unit-XXXXXX");

    if (!dir || !mkdtemp(dir)) {
        perror("mkdtemp");
        abort();
    }
    return dir;
}

static inline int test_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* rm -rf dir (a tree the test made; symlinks are removed, not followed). */
static inline void test_rm_rf(const char *dir)
{
    nftw(dir, test_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Write text to path (created or truncated); aborts on failure. */
static inline void test_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
        perror(path);
        abort();
    }
}
