// SPDX-License-Identifier: MIT
// test-child-env: a child's environment, mcpd's own with a config entry's env laid over it:
// the edge cases by hand, then random ones against the first (quadratic) way of building it.

#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/sys/child-env.h"
#include "tests/unit/test.h"

#define TAG "MCPD_INSTANCE"

/* The whole environment as one text, entries split by '|', to compare at a glance. */
static char *joined(char **env)
{
    StrBuf sb = STRBUF_INIT;

    for (char **p = env; *p; p++)
        strbuf_printf(&sb, "%s%s", p == env ? "" : "|", *p);
    for (char **p = env; *p; p++)
        free(*p);
    free(env);
    return strbuf_detach(&sb, NULL);
}

static char *merged(char *const *base, const char *over_json, const char *first)
{
    _cleanup_json_ yajl_val over = over_json ? json_parse(over_json, NULL) : NULL;

    return joined(child_env_merge(base, over, TAG, first ? xstrdup(first) : NULL));
}

static void test_edges(void)
{
    char *base[] = {"A=1",   "B=",     "A=2",  "NOEQ", TAG "=forged", TAG,
                    "C=x=y", "=weird", "AB=3", "D=4",  NULL};
    char *empty[] = {NULL};
    char *t;

    /* Nothing laid over: all kept in order (duplicates too) but the forged tag. */
    t = merged(base, NULL, NULL);
    CHECK_STREQ(t, "A=1|B=|A=2|NOEQ|" TAG "|C=x=y|=weird|AB=3|D=4");
    free(t);
    /* An override drops every entry of its name (both A), not a prefix (AB stays); an empty value
     * overrides; a name without '=' in base is overridden by its whole text. */
    t = merged(base, "{\"A\":\"9\",\"B\":\"\",\"NOEQ\":\"now\"}", "TAGGED=1");
    CHECK_STREQ(t, "TAGGED=1|" TAG "|C=x=y|=weird|AB=3|D=4|A=9|B=|NOEQ=now");
    free(t);
    /* The tag is never taken from the config (its name there still drops a bare TAG, as any
     * name does). */
    t = merged(base, "{\"" TAG "\":\"forged\",\"D\":\"5\"}", NULL);
    CHECK_STREQ(t, "A=1|B=|A=2|NOEQ|C=x=y|=weird|AB=3|D=5");
    free(t);
    /* A name set twice: both written, as before; the base entry dropped once. */
    t = merged(base, "{\"D\":\"5\",\"D\":\"6\"}", NULL);
    CHECK_STREQ(t, "A=1|B=|A=2|NOEQ|" TAG "|C=x=y|=weird|AB=3|D=5|D=6");
    free(t);
    /* The empty name overrides "=weird". */
    t = merged(base, "{\"\":\"e\"}", NULL);
    CHECK_STREQ(t, "A=1|B=|A=2|NOEQ|" TAG "|C=x=y|AB=3|D=4|=e");
    free(t);
    /* Empty on both sides. */
    t = merged(empty, "{}", NULL);
    CHECK_STREQ(t, "");
    free(t);
    t = merged(empty, NULL, "ONLY=1");
    CHECK_STREQ(t, "ONLY=1");
    free(t);
}

/* The first way: every base entry against every override (kept as the oracle). */
static char *quadratic(char *const *base, yajl_val over)
{
    size_t n_over = over ? over->u.object.len : 0;
    StrBuf sb = STRBUF_INIT;
    size_t n_out = 0;

    for (size_t i = 0; base[i]; i++) {
        const char *eq = strchr(base[i], '=');
        size_t kl = eq ? (size_t)(eq - base[i]) : strlen(base[i]);
        bool drop = startswith(base[i], TAG "=");
        for (size_t j = 0; j < n_over && !drop; j++)
            drop = strlen(over->u.object.keys[j]) == kl &&
                   strncmp(over->u.object.keys[j], base[i], kl) == 0;
        if (!drop)
            strbuf_printf(&sb, "%s%s", n_out++ ? "|" : "", base[i]);
    }
    for (size_t j = 0; j < n_over; j++)
        if (!streq(over->u.object.keys[j], TAG))
            strbuf_printf(&sb, "%s%s=%s", n_out++ ? "|" : "", over->u.object.keys[j],
                          over->u.object.values[j]->u.string);
    return strbuf_detach(&sb, NULL);
}

/* Random environments from a small alphabet of names, so that names collide often. */
static void test_against_quadratic(void)
{
    static const char *const names[] = {"A", "B", "AB", "BA", "", TAG, "PATH", "HOME", "X1"};
    unsigned seed = 1;

    for (int round = 0; round < 500; round++) {
        size_t n_base = (size_t)rand_r(&seed) % 40, n_over = (size_t)rand_r(&seed) % 20;
        char **base = xcalloc(n_base + 1, sizeof(char *));
        StrBuf over = STRBUF_INIT;

        for (size_t i = 0; i < n_base; i++) {
            const char *name = names[(size_t)rand_r(&seed) % N_ELEMENTS(names)];
            base[i] = rand_r(&seed) % 8 ? xasprintf("%s=v%zu", name, i) : xstrdup(name);
        }
        strbuf_putc(&over, '{');
        for (size_t j = 0; j < n_over; j++)
            strbuf_printf(&over, "%s\"%s\":\"o%zu\"", j ? "," : "",
                          names[(size_t)rand_r(&seed) % N_ELEMENTS(names)], j);
        strbuf_putc(&over, '}');
        _cleanup_json_ yajl_val o = json_parse(over.data, NULL);
        _cleanup_free_ char *want = quadratic(base, o);
        _cleanup_free_ char *got = joined(child_env_merge(base, o, TAG, NULL));
        CHECK_MSG(streq(got, want), "round %d, over %s: got %s, want %s", round, over.data, got,
                  want);
        for (size_t i = 0; i < n_base; i++)
            free(base[i]);
        free(base);
        strbuf_deinit(&over);
    }
}

/* Many names each side (a large env file): the same answer as the oracle. */
static void test_large(void)
{
    enum { N = 5000 };
    char **base = xcalloc(N + 1, sizeof(char *));
    StrBuf over = STRBUF_INIT;

    strbuf_putc(&over, '{');
    for (size_t i = 0; i < N; i++) {
        base[i] = xasprintf("VAR%zu=%zu", i, i);
        if (i % 3 == 0)
            strbuf_printf(&over, "%s\"VAR%zu\":\"new\"", i ? "," : "", i);
    }
    strbuf_putc(&over, '}');
    _cleanup_json_ yajl_val o = json_parse(over.data, NULL);
    _cleanup_free_ char *want = quadratic(base, o);
    _cleanup_free_ char *got = joined(child_env_merge(base, o, TAG, NULL));
    CHECK(streq(got, want));
    for (size_t i = 0; i < N; i++)
        free(base[i]);
    free(base);
    strbuf_deinit(&over);
}

int main(void)
{
    RUN(test_edges);
    RUN(test_against_quadratic);
    RUN(test_large);
    return test_main_result();
}
