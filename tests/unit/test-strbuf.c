// SPDX-License-Identifier: MIT
// test-strbuf: unit tests for the growable byte buffer.

#include <stdio.h>
#include <string.h>

#include "common/strbuf.h"
#include "tests/unit/test.h"

static void test_zeroed_value(void)
{
    StrBuf sb = STRBUF_INIT;

    CHECK_STREQ(strbuf_str(&sb), "");
    CHECK_INTEQ(sb.len, 0);
    /* deinit on a never-used value is a no-op, and may be repeated. */
    strbuf_deinit(&sb);
    strbuf_deinit(&sb);
    CHECK(sb.data == NULL);
    CHECK_INTEQ(sb.cap, 0);
}

static void test_append_growth(void)
{
    StrBuf sb = STRBUF_INIT;
    char expect[10001];

    for (size_t i = 0; i < 10000; i++) {
        char c = (char)('a' + i % 26);
        strbuf_append(&sb, &c, 1);
        expect[i] = c;
        /* Always NUL-terminated, always with room for the NUL. */
        CHECK(sb.data[sb.len] == '\0');
        CHECK(sb.cap > sb.len);
    }
    expect[10000] = '\0';
    CHECK_INTEQ(sb.len, 10000);
    CHECK_INTEQ(strlen(sb.data), 10000);
    CHECK(memcmp(sb.data, expect, 10000) == 0);
    strbuf_deinit(&sb);
}

static void test_append_binary_and_empty(void)
{
    StrBuf sb = STRBUF_INIT;

    /* Appending nothing still yields a valid string. */
    strbuf_append(&sb, NULL, 0);
    CHECK(sb.data != NULL);
    CHECK_STREQ(strbuf_str(&sb), "");
    strbuf_append(&sb, "a\0b", 3);
    CHECK_INTEQ(sb.len, 3);
    CHECK(memcmp(sb.data, "a\0b", 4) == 0);
    strbuf_deinit(&sb);
}

static void test_puts_putc(void)
{
    StrBuf sb = STRBUF_INIT;

    strbuf_puts(&sb, "hello");
    strbuf_putc(&sb, ',');
    strbuf_putc(&sb, ' ');
    strbuf_puts(&sb, "world");
    CHECK_STREQ(strbuf_str(&sb), "hello, world");
    CHECK_INTEQ(sb.len, 12);
    strbuf_deinit(&sb);
}

static void test_printf_growth(void)
{
    StrBuf sb = STRBUF_INIT;
    char big[5000];

    strbuf_printf(&sb, "%d-%s-%zu", 42, "x", (size_t)7);
    CHECK_STREQ(strbuf_str(&sb), "42-x-7");
    CHECK_INTEQ(sb.len, 6);

    /* A single printf far larger than the current capacity. */
    memset(big, 'z', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    strbuf_printf(&sb, "[%s]", big);
    CHECK_INTEQ(sb.len, 6 + 2 + 4999);
    CHECK_INTEQ(strlen(sb.data), sb.len);
    CHECK(sb.data[6] == '[' && sb.data[sb.len - 1] == ']');
    CHECK(sb.data[7] == 'z' && sb.data[6 + 4999] == 'z');

    /* An empty format appends nothing but keeps the string valid. */
    size_t len = sb.len;
    strbuf_printf(&sb, "%s", "");
    CHECK_INTEQ(sb.len, len);
    strbuf_deinit(&sb);

    StrBuf e = STRBUF_INIT;
    strbuf_printf(&e, "%s", "");
    CHECK_STREQ(strbuf_str(&e), "");
    CHECK_INTEQ(e.len, 0);
    strbuf_deinit(&e);
}

static void test_printf_many(void)
{
    StrBuf sb = STRBUF_INIT;
    char expect[64];
    size_t off = 0;
    int ok = 1;

    for (int i = 0; i < 2000; i++)
        strbuf_printf(&sb, "%d,", i);
    for (int i = 0; i < 2000; i++) {
        int n = snprintf(expect, sizeof(expect), "%d,", i);
        if (memcmp(sb.data + off, expect, (size_t)n) != 0)
            ok = 0;
        off += (size_t)n;
    }
    CHECK(ok);
    CHECK_INTEQ(off, sb.len);
    strbuf_deinit(&sb);
}

static void test_reset_keeps_allocation(void)
{
    StrBuf sb = STRBUF_INIT;

    strbuf_puts(&sb, "some text that is long enough");
    char *data = sb.data;
    size_t cap = sb.cap;
    strbuf_reset(&sb);
    CHECK_INTEQ(sb.len, 0);
    CHECK_STREQ(strbuf_str(&sb), "");
    CHECK(sb.data == data);
    CHECK_INTEQ(sb.cap, cap);
    strbuf_puts(&sb, "new");
    CHECK_STREQ(strbuf_str(&sb), "new");
    strbuf_deinit(&sb);

    /* reset on a zeroed value is fine too. */
    StrBuf z = STRBUF_INIT;
    strbuf_reset(&z);
    CHECK_STREQ(strbuf_str(&z), "");
    strbuf_deinit(&z);
}

static void test_detach(void)
{
    StrBuf sb = STRBUF_INIT;
    size_t len = 99;

    strbuf_puts(&sb, "detached");
    char *s = strbuf_detach(&sb, &len);
    CHECK_STREQ(s, "detached");
    CHECK_INTEQ(len, 8);
    /* The buffer is empty and reusable afterwards. */
    CHECK(sb.data == NULL);
    CHECK_INTEQ(sb.len, 0);
    CHECK_INTEQ(sb.cap, 0);
    strbuf_puts(&sb, "again");
    CHECK_STREQ(strbuf_str(&sb), "again");
    CHECK(sb.data != s);
    free(s);
    strbuf_deinit(&sb);

    /* Detaching an empty buffer gives "" (never NULL). */
    StrBuf e = STRBUF_INIT;
    len = 99;
    s = strbuf_detach(&e, &len);
    CHECK(s != NULL);
    CHECK_STREQ(s, "");
    CHECK_INTEQ(len, 0);
    free(s);
    s = strbuf_detach(&e, NULL);
    CHECK_STREQ(s, "");
    free(s);
}

static void test_reserve(void)
{
    StrBuf sb = STRBUF_INIT;

    strbuf_reserve(&sb, 1000);
    CHECK(sb.cap >= 1001);
    size_t cap = sb.cap;
    char *data = sb.data;
    /* Appends within the reservation do not reallocate. */
    for (int i = 0; i < 1000; i++)
        strbuf_putc(&sb, 'x');
    CHECK(sb.data == data);
    CHECK_INTEQ(sb.cap, cap);
    CHECK_INTEQ(sb.len, 1000);
    strbuf_deinit(&sb);

    /* Reserving alone already gives a valid empty string ("always NUL-terminated"). */
    StrBuf r = STRBUF_INIT;
    strbuf_reserve(&r, 100);
    CHECK(r.data != NULL);
    CHECK_STREQ(strbuf_str(&r), "");
    char *s = strbuf_detach(&r, NULL);
    CHECK_STREQ(s, "");
    free(s);
}

int main(void)
{
    RUN(test_zeroed_value);
    RUN(test_append_growth);
    RUN(test_append_binary_and_empty);
    RUN(test_puts_putc);
    RUN(test_printf_growth);
    RUN(test_printf_many);
    RUN(test_reset_keeps_allocation);
    RUN(test_detach);
    RUN(test_reserve);
    return test_main_result();
}
