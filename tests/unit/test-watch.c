// SPDX-License-Identifier: MIT
// test-watch: hot reload's watcher on a real inotify and event loop: a change applies once per
// burst, to the right workspace; a file whose directory appears later; gone workspaces dropped.

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <event2/event.h>

#include "common/paths.h"
#include "common/util.h"
#include "daemon/config/watch.h"
#include "tests/unit/test.h"

/* How long a change may take to be applied on a loaded machine; the debounce is 500 ms. */
#define APPLY_WAIT_MS 20000
/* Quiet time after an apply in which no second one may come for the same burst. */
#define AFTER_MS 1500

typedef struct Seen {
    struct event_base *base;
    int n_applies;
    char *last_root; /* "" for the user level */
    char *last_why;
    bool proj_live;
} Seen;

static void on_apply(const char *root, const char *why, void *userdata)
{
    Seen *s = userdata;

    s->n_applies++;
    free(s->last_root);
    free(s->last_why);
    s->last_root = xstrdup(root ? root : "");
    s->last_why = xstrdup(why);
    event_base_loopbreak(s->base);
}

static bool on_live(const char *root, void *userdata)
{
    Seen *s = userdata;

    return s->proj_live || !streq(root, "/proj");
}

static void run_ms(struct event_base *base, int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};

    event_base_loopexit(base, &tv);
    event_base_dispatch(base);
}

/* Run until an apply (or APPLY_WAIT_MS), then AFTER_MS more; return the applies seen. */
static int wait_applies(Seen *s)
{
    int before = s->n_applies;

    run_ms(s->base, APPLY_WAIT_MS);
    if (s->n_applies > before) {
        struct timeval tv = {AFTER_MS / 1000, (AFTER_MS % 1000) * 1000};
        event_base_loopexit(s->base, &tv);
        /* loopbreak from a second apply would end this early: still counted. */
        event_base_dispatch(s->base);
    }
    return s->n_applies - before;
}

static void test_watch(void)
{
    _cleanup_free_ char *dir = test_tmpdir();
    _cleanup_free_ char *proj = paths_join(dir, "proj");
    _cleanup_free_ char *pfile = paths_join(proj, ".mcp.json");
    _cleanup_free_ char *home = paths_join(dir, "home");
    _cleanup_free_ char *agent = paths_join(home, ".gemini");
    _cleanup_free_ char *afile = paths_join(agent, "settings.json");
    Seen s = {.base = event_base_new(), .proj_live = true};
    Watcher w;

    mkdir(proj, 0700);
    mkdir(home, 0700);
    CHECK_INTEQ(watch_init(&w, s.base, on_apply, on_live, &s), 0);
    watch_note(&w, pfile, "/proj");
    watch_note(&w, afile, NULL);
    run_ms(s.base, 50); /* the watches are set from the loop */

    /* A burst of writes to a project file: one reload, of that workspace. */
    for (int i = 0; i < 5; i++)
        test_write_file(pfile, "{\"mcpServers\": {}}");
    CHECK_INTEQ(wait_applies(&s), 1);
    CHECK_STREQ(s.last_root, "/proj");
    CHECK_STREQ(s.last_why, pfile);

    /* An agent installed later: its directory did not exist when the file was looked for. */
    mkdir(agent, 0700);
    test_write_file(afile, "{}");
    CHECK(wait_applies(&s) >= 1);
    CHECK_STREQ(s.last_root, "");

    /* Editors replace files by renaming a temp file over them. */
    _cleanup_free_ char *tmp = paths_join(agent, "settings.json.swp");
    test_write_file(tmp, "{\"x\": 1}");
    CHECK(rename(tmp, afile) == 0);
    CHECK_INTEQ(wait_applies(&s), 1);

    /* Unrelated files in a watched directory change nothing. */
    _cleanup_free_ char *other = paths_join(proj, "README");
    test_write_file(other, "hello");
    run_ms(s.base, AFTER_MS);
    CHECK_INTEQ(s.n_applies, 3);

    /* A workspace gone: its files stop counting. */
    s.proj_live = false;
    test_write_file(pfile, "{}");
    run_ms(s.base, AFTER_MS);
    CHECK_INTEQ(s.n_applies, 3);

    watch_deinit(&w);
    free(s.last_root);
    free(s.last_why);
    event_base_free(s.base);
    test_rm_rf(dir);
}

/*
 * A listing (path noted with a trailing '/'): a new entry in that directory (a Gemini CLI
 * extension installed) applies a reload; so does the directory itself appearing later.
 */
static void test_watch_listing(void)
{
    _cleanup_free_ char *dir = test_tmpdir();
    _cleanup_free_ char *gemini = paths_join(dir, ".gemini");
    _cleanup_free_ char *exts = paths_join(gemini, "extensions");
    _cleanup_free_ char *listing = xasprintf("%s/", exts);
    _cleanup_free_ char *ext = paths_join(exts, "nanobanana");
    _cleanup_free_ char *other = paths_join(dir, "elsewhere");
    Seen s = {.base = event_base_new(), .proj_live = true};
    Watcher w;

    mkdir(gemini, 0700);
    CHECK_INTEQ(watch_init(&w, s.base, on_apply, on_live, &s), 0);
    watch_note(&w, listing, NULL);
    run_ms(s.base, 50);

    /* The extensions directory appears (the first `gemini extensions install`). */
    mkdir(exts, 0700);
    CHECK(wait_applies(&s) >= 1);
    CHECK_STREQ(s.last_root, "");
    run_ms(s.base, 50); /* the watch moves down to the new directory */

    /* An extension installed: its directory appears in the listing. */
    mkdir(ext, 0700);
    CHECK(wait_applies(&s) >= 1);
    CHECK_STREQ(s.last_why, ext);

    /* Another directory is not the listing's. */
    int before = s.n_applies;
    mkdir(other, 0700);
    run_ms(s.base, AFTER_MS);
    CHECK_INTEQ(s.n_applies, before);

    watch_deinit(&w);
    free(s.last_root);
    free(s.last_why);
    event_base_free(s.base);
    test_rm_rf(dir);
}

int main(void)
{
    RUN(test_watch);
    RUN(test_watch_listing);
    return test_main_result();
}
