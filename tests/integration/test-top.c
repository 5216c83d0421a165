// SPDX-License-Identifier: MIT
// test-top: mcpctl top in a terminal (tmux): sorted by memory or calls, keys, q, NO_COLOR.

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "tests/integration/harness.h"

/* Memory of the "big" server: enough to sort it above an idle fake-server by memory. */
#define BIG_MB 32
/* Calls made to the echo server's tools: it sorts above "big" by calls. */
#define ECHO_CALLS 6
/* A screen refresh is 2 s; a condition on the screen gets this long. */
#define SCREEN_WAIT_MS 20000

/* The pane's text (with escape sequences when escapes), to free. */
static char *capture(const Harness *h, bool escapes)
{
    int status = 0;
    return h_shell(&status, "tmux -S '%s/tmux.sock' capture-pane -p %s -t top 2>/dev/null", h->dir,
                   escapes ? "-e" : "");
}

/* Does the line holding first come before the line holding second on the screen? */
static bool above(const char *screen, const char *first, const char *second)
{
    const char *a = strstr(screen, first), *b = strstr(screen, second);
    return a && b && a < b;
}

/* Wait until the screen shows want, and when first is given, first's row above second's. */
static bool wait_screen(const Harness *h, const char *want, const char *first, const char *second)
{
    for (int waited = 0; waited < SCREEN_WAIT_MS; waited += 100) {
        _cleanup_free_ char *s = capture(h, false);
        if (s && strstr(s, want) && (!first || above(s, first, second)))
            return true;
        h_sleep_ms(100);
    }
    _cleanup_free_ char *s = capture(h, false);
    fprintf(stderr, "test-top: waiting for \"%s\"; the screen:\n%s\n", want, s ? s : "-");
    return false;
}

static bool session_gone(const Harness *h)
{
    for (int waited = 0; waited < SCREEN_WAIT_MS; waited += 100) {
        int status = 0;
        _cleanup_free_ char *out =
            h_shell(&status, "tmux -S '%s/tmux.sock' has-session -t top 2>&1", h->dir);
        (void)out; /* only its cleanup is wanted */
        if (status != 0)
            return true;
        h_sleep_ms(100);
    }
    return false;
}

/* Start top in a tmux session; NO_COLOR set or not. */
static void start_top(const Harness *h, bool no_color)
{
    h_sh("tmux -S '%s/tmux.sock' new-session -d -s top -x 150 -y 40 "
         "\"env %s TERM=xterm-256color '%s' --socket '%s' top; echo exit=\\$? > '%s/top.exit'\"",
         h->dir, no_color ? "NO_COLOR=1" : "-u NO_COLOR", getenv("MCPCTL_BINARY"), h->socket,
         h->dir);
}

static void test_keys(Harness *h)
{
    _cleanup_free_ char *colored = NULL, *exit_file = NULL, *path = NULL;

    start_top(h, false);
    CHECK(wait_screen(h, "sorted by memory", "big ", "echo "));
    colored = capture(h, true);
    /* The state word is coloured in a terminal without NO_COLOR (SGR 3x: a foreground). */
    CHECK_MSG(colored && strstr(colored, "\033[3"), "no colour: %s", colored ? colored : "-");
    h_sh("tmux -S '%s/tmux.sock' send-keys -t top c", h->dir);
    CHECK(wait_screen(h, "sorted by calls", "echo ", "big "));
    h_sh("tmux -S '%s/tmux.sock' send-keys -t top m", h->dir);
    CHECK(wait_screen(h, "sorted by memory", "big ", "echo "));
    h_sh("tmux -S '%s/tmux.sock' send-keys -t top q", h->dir);
    CHECK_MSG(session_gone(h), "q did not end mcpctl top");
    path = xasprintf("%s/top.exit", h->dir);
    exit_file = h_read_file(path);
    CHECK_MSG(exit_file && strstr(exit_file, "exit=0"), "top ended with %s",
              exit_file ? exit_file : "-");
}

static void test_no_color(Harness *h)
{
    _cleanup_free_ char *screen = NULL;

    start_top(h, true);
    CHECK(wait_screen(h, "sorted by memory", "big ", "echo "));
    screen = capture(h, true);
    CHECK_MSG(screen && !strstr(screen, "\033[3"), "colour under NO_COLOR: %s",
              screen ? screen : "-");
    h_sh("tmux -S '%s/tmux.sock' send-keys -t top q", h->dir);
    CHECK(session_gone(h));
}

/* Not a terminal: one snapshot, no screen control, and the command ends by itself. */
static void test_snapshot(Harness *h)
{
    int status = 0;
    _cleanup_free_ char *out = h_shell(&status, "timeout 20 '%s' --socket '%s' top </dev/null",
                                       getenv("MCPCTL_BINARY"), h->socket);

    CHECK_MSG(status == 0 && out && strstr(out, "sorted by memory"), "top | cat: %d %s", status,
              out ? out : "-");
    CHECK(out && !strstr(out, "\033[") && !strstr(out, "(m: memory"));
    CHECK(out && above(out, "big ", "echo "));
    /* The tools table lists the echo server's tool with its calls. */
    const char *tools = out ? strstr(out, "TOOL") : NULL;
    CHECK_MSG(tools && strstr(tools, "echo ") && strstr(tools, " 6 "), "%s", out ? out : "-");
}

int main(void)
{
    Harness h;
    _cleanup_free_ char *cfg = NULL;
    int status = 0;

    _cleanup_free_ char *have = h_shell(&status, "command -v tmux");
    (void)have; /* only its cleanup is wanted */
    if (status != 0) {
        printf("test-top: tmux is not installed (bash .ci/deps installs it)\n");
        return 77;
    }
    h_setup(&h, "top");
    cfg = xasprintf("{\"mcpServers\": {\"echo\": {\"command\": \"%s\"}, \"big\": {\"command\": "
                    "\"%s\", \"args\": [\"--name\", \"big\", \"--touch-mb\", \"%d\"]}}}",
                    h_fake(), h_fake(), BIG_MB);
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    mcpc_client *c = h_client(&h, "test");
    h_settle(&h, c, "echo", "big", NULL);
    for (int i = 0; i < ECHO_CALLS; i++) {
        int is_error = 0;
        _cleanup_free_ char *text = h_call_text(c, "mcp_echo_echo", "{\"text\":\"hi\"}", &is_error);
        CHECK(text && !is_error);
    }
    test_keys(&h);
    test_no_color(&h);
    test_snapshot(&h);
    h_sh("tmux -S '%s/tmux.sock' kill-server 2>/dev/null || true", h.dir);
    mcpc_free(c);
    h_teardown(&h);
    return h_finish("test-top");
}
