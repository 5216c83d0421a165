// SPDX-License-Identifier: MIT
// check: the assertions of every test program (unit, integration, interop, bench), one way.
#pragma once

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/*
 * A failed check prints file:line and the expression, counts the failure and carries on, so one
 * run shows every broken expectation; the suite turns any failure into exit status 1. The
 * counters are shared by every file of one program (the harness counts too): weak, so each
 * file that includes this header may define them and the linker keeps one.
 */
__attribute__((weak)) int check_n_checks;
__attribute__((weak)) int check_n_failed;

static inline void check_fail(const char *file, int line, const char *what)
{
    check_n_failed++;
    fprintf(stderr, "%s:%d: CHECK failed: %s\n", file, line, what);
}

/* The same, followed by ": " and a printf-style explanation (what was seen instead). */
__attribute__((format(printf, 4, 5))) static inline void
check_failf(const char *file, int line, const char *what, const char *fmt, ...)
{
    va_list ap;

    check_n_failed++;
    fprintf(stderr, "%s:%d: CHECK failed: %s: ", file, line, what);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        check_n_checks++;                                                                          \
        if (!(cond))                                                                               \
            check_fail(__FILE__, __LINE__, #cond);                                                 \
    } while (0)

/* CHECK, and on failure a printf-style message: CHECK_MSG(ok, "got %s", text). */
#define CHECK_MSG(cond, ...)                                                                       \
    do {                                                                                           \
        check_n_checks++;                                                                          \
        if (!(cond))                                                                               \
            check_failf(__FILE__, __LINE__, #cond, __VA_ARGS__);                                   \
    } while (0)

/* Strings compare equal when both are NULL or both hold the same text. */
static inline void check_streq(const char *file, int line, const char *ea, const char *eb,
                               const char *a, const char *b)
{
    check_n_checks++;
    if ((!a && !b) || (a && b && strcmp(a, b) == 0))
        return;
    check_n_failed++;
    fprintf(stderr, "%s:%d: CHECK_STREQ(%s, %s) failed:\n  left:  %s%s%s\n  right: %s%s%s\n", file,
            line, ea, eb, a ? "\"" : "", a ? a : "NULL", a ? "\"" : "", b ? "\"" : "",
            b ? b : "NULL", b ? "\"" : "");
}

#define CHECK_STREQ(a, b) check_streq(__FILE__, __LINE__, #a, #b, (a), (b))

static inline void check_inteq(const char *file, int line, const char *ea, const char *eb,
                               intmax_t a, intmax_t b)
{
    check_n_checks++;
    if (a == b)
        return;
    check_n_failed++;
    fprintf(stderr, "%s:%d: CHECK_INTEQ(%s, %s) failed: %jd != %jd\n", file, line, ea, eb, a, b);
}

#define CHECK_INTEQ(a, b) check_inteq(__FILE__, __LINE__, #a, #b, (intmax_t)(a), (intmax_t)(b))
