// SPDX-License-Identifier: MIT
// test-naming: unit tests for exposed tool names: sanitising, capping and collisions.

#include <stdio.h>
#include <string.h>

#include "common/hash.h"
#include "common/util.h"
#include "daemon/core/naming.h"
#include "tests/unit/test.h"

#define CHECK_NAME(expr, want)                                                                     \
    do {                                                                                           \
        char *got_ = (expr);                                                                       \
        CHECK_STREQ(got_, want);                                                                   \
        free(got_);                                                                                \
    } while (0)

/* True when s matches ^[a-z0-9_]+$. */
static bool name_chars_ok(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    return true;
}

static void test_sanitize(void)
{
    CHECK_NAME(naming_sanitize("GitHub2", "x"), "github2");
    CHECK_NAME(naming_sanitize("get-v2-data", "x"), "get_v2_data");
    CHECK_NAME(naming_sanitize("already_ok", "x"), "already_ok");
    CHECK_NAME(naming_sanitize("a  -- b..c", "x"), "a_b_c");
    CHECK_NAME(naming_sanitize("__trim__me__", "x"), "trim_me");
    CHECK_NAME(naming_sanitize("  Leading and trailing!  ", "x"), "leading_and_trailing");
    CHECK_NAME(naming_sanitize("UPPER", "x"), "upper");
    CHECK_NAME(naming_sanitize("v1.2.3", "x"), "v1_2_3");
    CHECK_NAME(naming_sanitize("123", "x"), "123");
    /* Non-ASCII bytes are junk too. */
    CHECK_NAME(naming_sanitize("caf\xc3\xa9-menu", "x"), "caf_menu");
    /* Nothing left: the fallback. */
    CHECK_NAME(naming_sanitize("", "server"), "server");
    CHECK_NAME(naming_sanitize("---", "tool"), "tool");
    CHECK_NAME(naming_sanitize("___", "tool"), "tool");
    CHECK_NAME(naming_sanitize("\xe2\x82\xac", "tool"), "tool");
}

static void test_tool_name(void)
{
    CHECK_NAME(naming_tool_name("puppeteer", "puppeteer_screenshot"), "mcp_puppeteer_screenshot");
    CHECK_NAME(naming_tool_name("puppeteer", "navigate"), "mcp_puppeteer_navigate");
    /* The prefix is matched after sanitising both parts. */
    CHECK_NAME(naming_tool_name("GitHub", "github-create-issue"), "mcp_github_create_issue");
    CHECK_NAME(naming_tool_name("my-server", "My Server: list"), "mcp_my_server_list");
    CHECK_NAME(naming_tool_name("GitHub2", "get-v2-data"), "mcp_github2_get_v2_data");
    /* Only a whole-word prefix is stripped, and never down to nothing. */
    CHECK_NAME(naming_tool_name("pup", "puppeteer_x"), "mcp_pup_puppeteer_x");
    CHECK_NAME(naming_tool_name("puppeteer", "puppeteer"), "mcp_puppeteer_puppeteer");
    CHECK_NAME(naming_tool_name("puppeteer", "puppeteer_"), "mcp_puppeteer_puppeteer");
    /* Empty parts take fallbacks. */
    CHECK_NAME(naming_tool_name("!!!", "???"), "mcp_server_tool");
}

static void test_tool_name_cap(void)
{
    char tool[200], exact[100], hex[65];

    /* A name of exactly 64 characters is kept as it is. */
    memset(exact, 'e', sizeof(exact));
    exact[64 - strlen("mcp_s_")] = '\0';
    char *name = naming_tool_name("s", exact);
    CHECK_INTEQ(strlen(name), 64);
    CHECK(startswith(name, "mcp_s_eee"));
    free(name);

    /* 65 and more: cut to 57, then "_" and 6 hex digits of the full name's SHA-256. */
    memset(tool, 't', sizeof(tool));
    tool[sizeof(tool) - 1] = '\0';
    _cleanup_free_ char *full = xasprintf("mcp_srv_%s", tool);
    sha256_hex(hex, full, strlen(full));
    _cleanup_free_ char *want = xasprintf("%.57s_%.6s", full, hex);
    _cleanup_free_ char *got = naming_tool_name("srv", tool);
    CHECK_STREQ(got, want);
    CHECK_INTEQ(strlen(got), NAMING_MAX_LEN);
    CHECK(name_chars_ok(got));

    /* Deterministic, and names differing only past the cut still differ. */
    _cleanup_free_ char *again = naming_tool_name("srv", tool);
    CHECK_STREQ(again, got);
    tool[150] = 'u';
    _cleanup_free_ char *other = naming_tool_name("srv", tool);
    CHECK(strlen(other) == NAMING_MAX_LEN);
    CHECK(strncmp(other, got, 57) == 0);
    CHECK(strcmp(other, got) != 0);

    /* A cut that lands on "_" does not leave "__" before the suffix. */
    char parts[200];
    memset(parts, 'a', sizeof(parts));
    parts[sizeof(parts) - 1] = '\0';
    parts[57 - strlen("mcp_s_") - 1] = '-'; /* becomes '_' at index 56 of the full name */
    _cleanup_free_ char *cut = naming_tool_name("s", parts);
    CHECK(strstr(cut, "__") == NULL);
    CHECK(strlen(cut) <= NAMING_MAX_LEN);
    CHECK(name_chars_ok(cut));
}

static void free_names(NamingEntry *e, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(e[i].name);
        e[i].name = NULL;
    }
}

static void test_assign_collision(void)
{
    int da, db;
    NamingEntry e[] = {
        {.server = "a_b", .tool = "x", .data = &db},
        {.server = "a-b", .tool = "x", .data = &da},
    };
    char hex[65];

    naming_assign(e, N_ELEMENTS(e));
    /* "a-b" < "a_b" in (server, tool) order, so "a-b" keeps the plain name. */
    CHECK_STREQ(e[0].name, "mcp_a_b_x");
    CHECK_STREQ(e[0].server, "a-b");
    CHECK(e[0].data == &da);
    CHECK_INTEQ(e[0].collided, 0);

    CHECK_STREQ(e[1].server, "a_b");
    CHECK(e[1].data == &db);
    CHECK_INTEQ(e[1].collided, 1);
    CHECK(e[1].name && startswith(e[1].name, "mcp_a_b_x_"));
    CHECK_INTEQ(strlen(e[1].name), strlen("mcp_a_b_x_") + NAMING_HASH_DIGITS);
    CHECK(name_chars_ok(e[1].name));
    CHECK(strcmp(e[0].name, e[1].name) != 0);
    /* The suffix is keyed on the entry's own identity. */
    sha256_hex(hex,
               "a_b\x1fx\x1f"
               "0",
               7);
    _cleanup_free_ char *want = xasprintf("mcp_a_b_x_%.6s", hex);
    CHECK_STREQ(e[1].name, want);
    free_names(e, N_ELEMENTS(e));
}

/* Name the same entries given in a different order; check names and data stay together. */
static void test_assign_stable_across_orders(void)
{
    static const char *const servers[] = {"a-b", "a_b", "A.B", "github", "git-hub", "zeta", "a b"};
    static const char *const tools[] = {"x", "X", "list", "get-data"};
    enum { N_S = N_ELEMENTS(servers), N_T = N_ELEMENTS(tools), N = N_S * N_T };
    NamingEntry ref[N], e[N];
    int data[N];
    unsigned seed = 12345;

    for (size_t i = 0; i < N; i++) {
        ref[i] =
            (NamingEntry){.server = servers[i / N_T], .tool = tools[i % N_T], .data = &data[i]};
        data[i] = (int)i;
    }
    naming_assign(ref, N);

    /* Sorted by name, all distinct, all within the limit. */
    int bad = 0;
    for (size_t i = 0; i < N; i++) {
        if (!name_chars_ok(ref[i].name) || strlen(ref[i].name) > NAMING_MAX_LEN)
            bad++;
        if (i > 0 && strcmp(ref[i - 1].name, ref[i].name) >= 0)
            bad++;
        /* data still belongs to its (server, tool). */
        int d = *(int *)ref[i].data;
        if (!streq(ref[i].server, servers[d / N_T]) || !streq(ref[i].tool, tools[d % N_T]))
            bad++;
    }
    CHECK_INTEQ(bad, 0);

    for (int round = 0; round < 20; round++) {
        for (size_t i = 0; i < N; i++)
            e[i] =
                (NamingEntry){.server = servers[i / N_T], .tool = tools[i % N_T], .data = &data[i]};
        /* A pseudo-random shuffle (fixed seed: reproducible). */
        for (size_t i = N - 1; i > 0; i--) {
            seed = seed * 1103515245u + 12345u;
            size_t j = (seed >> 16) % (i + 1);
            NamingEntry t = e[i];
            e[i] = e[j];
            e[j] = t;
        }
        naming_assign(e, N);
        for (size_t i = 0; i < N; i++)
            if (!streq(e[i].name, ref[i].name) || e[i].data != ref[i].data ||
                e[i].collided != ref[i].collided)
                bad++;
        free_names(e, N);
    }
    CHECK_INTEQ(bad, 0);
    free_names(ref, N);
}

static void test_assign_suffix_never_reuses_a_name(void)
{
    /* A later entry whose plain name equals an earlier one's suffixed name still ends unique. */
    char hex[65];
    sha256_hex(hex,
               "a_b\x1fx\x1f"
               "0",
               7);
    _cleanup_free_ char *tool = xasprintf("x_%.6s", hex);
    NamingEntry e[] = {
        {.server = "a-b", .tool = "x"},
        {.server = "a_b", .tool = "x"},
        {.server = "a_b", .tool = tool},
    };

    naming_assign(e, N_ELEMENTS(e));
    for (size_t i = 0; i < N_ELEMENTS(e); i++)
        for (size_t j = i + 1; j < N_ELEMENTS(e); j++)
            CHECK(strcmp(e[i].name, e[j].name) != 0);
    for (size_t i = 1; i < N_ELEMENTS(e); i++)
        CHECK(strcmp(e[i - 1].name, e[i].name) < 0);
    /* Both a_b entries had their names taken. */
    CHECK_INTEQ(e[0].collided + e[1].collided + e[2].collided, 2);
    free_names(e, N_ELEMENTS(e));
}

static void test_assign_long_collisions(void)
{
    /* Two long names that are cut to the same prefix and whose full names also collide. */
    char tool[120];
    memset(tool, 'k', sizeof(tool));
    tool[sizeof(tool) - 1] = '\0';
    NamingEntry e[] = {
        {.server = "s-1", .tool = tool},
        {.server = "s_1", .tool = tool},
        {.server = "S.1", .tool = tool},
    };

    naming_assign(e, N_ELEMENTS(e));
    for (size_t i = 0; i < N_ELEMENTS(e); i++) {
        CHECK(strlen(e[i].name) <= NAMING_MAX_LEN);
        CHECK(name_chars_ok(e[i].name));
    }
    CHECK(strcmp(e[0].name, e[1].name) < 0);
    CHECK(strcmp(e[1].name, e[2].name) < 0);
    int n_collided = e[0].collided + e[1].collided + e[2].collided;
    CHECK_INTEQ(n_collided, 2);
    free_names(e, N_ELEMENTS(e));
}

static void test_assign_empty_and_single(void)
{
    NamingEntry one = {.server = "puppeteer", .tool = "puppeteer_click", .collided = 1};

    naming_assign(NULL, 0);
    naming_assign(&one, 1);
    CHECK_STREQ(one.name, "mcp_puppeteer_click");
    CHECK_INTEQ(one.collided, 0);
    free(one.name);
}

int main(void)
{
    RUN(test_sanitize);
    RUN(test_tool_name);
    RUN(test_tool_name_cap);
    RUN(test_assign_collision);
    RUN(test_assign_stable_across_orders);
    RUN(test_assign_suffix_never_reuses_a_name);
    RUN(test_assign_long_collisions);
    RUN(test_assign_empty_and_single);
    return test_main_result();
}
