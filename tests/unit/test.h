// SPDX-License-Identifier: MIT
// test: the unit tests' checks, test runner and temp-dir helpers (one executable per module).
#pragma once

#include <ftw.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * A failed check prints file:line and the expression, counts the failure and carries on, so one
 * run shows every broken expectation; test_main_result() turns any failure into exit status 1.
 */
static int test_n_checks;
static int test_n_failed_checks;
static int test_n_tests;
static int test_n_failed_tests;

static inline void test_fail(const char *file, int line, const char *what)
{
    test_n_failed_checks++;
    fprintf(stderr, "%s:%d: CHECK failed: %s\n", file, line, what);
}

#define CHECK(expr)                                                                                \
    do {                                                                                           \
        test_n_checks++;                                                                           \
        if (!(expr))                                                                               \
            test_fail(__FILE__, __LINE__, #expr);                                                  \
    } while (0)

/* Strings compare equal when both are NULL or both hold the same text. */
static inline void test_check_streq(const char *file, int line, const char *ea, const char *eb,
                                    const char *a, const char *b)
{
    test_n_checks++;
    if ((!a && !b) || (a && b && strcmp(a, b) == 0))
        return;
    test_n_failed_checks++;
    fprintf(stderr, "%s:%d: CHECK_STREQ(%s, %s) failed:\n  left:  %s%s%s\n  right: %s%s%s\n", file,
            line, ea, eb, a ? "\"" : "", a ? a : "NULL", a ? "\"" : "", b ? "\"" : "",
            b ? b : "NULL", b ? "\"" : "");
}

#define CHECK_STREQ(a, b) test_check_streq(__FILE__, __LINE__, #a, #b, (a), (b))

static inline void test_check_inteq(const char *file, int line, const char *ea, const char *eb,
                                    intmax_t a, intmax_t b)
{
    test_n_checks++;
    if (a == b)
        return;
    test_n_failed_checks++;
    fprintf(stderr, "%s:%d: CHECK_INTEQ(%s, %s) failed: %jd != %jd\n", file, line, ea, eb, a, b);
}

#define CHECK_INTEQ(a, b) test_check_inteq(__FILE__, __LINE__, #a, #b, (intmax_t)(a), (intmax_t)(b))

/* Run one test function and report it by name. */
static inline void test_run(const char *name, void (*fn)(void))
{
    int before = test_n_failed_checks;

    test_n_tests++;
    fn();
    if (test_n_failed_checks != before) {
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
    printf("%d tests, %d checks, %d failed checks, %d failed tests\n", test_n_tests, test_n_checks,
           test_n_failed_checks, test_n_failed_tests);
    fflush(stdout);
    return test_n_failed_checks ? 1 : 0;
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
