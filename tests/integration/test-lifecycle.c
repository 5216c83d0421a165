// SPDX-License-Identifier: MIT
// test-lifecycle: the socket (refuse a second daemon, take over a stale one) and clean shutdown.

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/harness.h"

static void test_socket_rules(Harness *h)
{
    struct stat st;
    char dir[400];
    int status;

    CHECK(stat(h->socket, &st) == 0 && (st.st_mode & 0777) == 0600);
    snprintf(dir, sizeof(dir), "%s/run/mcpd", h->dir);
    CHECK(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700);

    /* A second mcpd on the same socket refuses to start and says why. */
    status = h_run_expect_exit(h, H_WAIT_MS, NULL);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 1, "second mcpd status 0x%x", status);
    _cleanup_free_ char *log = h_read_file(h->log);
    CHECK(log && strstr(log, "another mcpd is already serving"));

    /* The first one still serves. */
    mcpc_client *c = h_client(h, "still");
    mcpc_free(c);
}

static void test_stale_takeover(Harness *h)
{
    int status;

    /* A daemon killed hard leaves its socket file behind; the next one takes it over. */
    kill(h->pid, SIGKILL);
    waitpid(h->pid, &status, 0);
    h->pid = -1;
    h_sleep_ms(200); /* its children die by PDEATHSIG */
    /*
     * Grandchildren have no PDEATHSIG: after a SIGKILL of the daemon only a cgroup (the
     * systemd unit's KillMode=control-group) reaps them. Do that job here.
     */
    for (int i = 0; i < 3; i++)
        h_kill_tagged(h);
    CHECK(access(h->socket, F_OK) == 0);
    h_start(h, NULL);
    mcpc_client *c = h_client(h, "after-stale");
    CHECK(h_wait_state(c, "stubborn", "connected", H_WAIT_MS));
    mcpc_free(c);
    _cleanup_free_ char *log = h_read_file(h->log);
    CHECK(log && strstr(log, "removing stale socket"));
}

static void test_refuse_open_dir(Harness *h)
{
    char dir[400];
    int status;

    /* A runtime dir others can enter is refused with a clear error. */
    snprintf(dir, sizeof(dir), "%s/run/mcpd", h->dir);
    chmod(dir, 0755);
    status = h_run_expect_exit(h, H_WAIT_MS, NULL);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status 0x%x", status);
    _cleanup_free_ char *log = h_read_file(h->log);
    CHECK(log && strstr(log, "it must not be accessible by others"));
    chmod(dir, 0700);
}

/* SIGTERM stops everything: servers that ignore SIGTERM and leave grandchildren included. */
static void test_shutdown(Harness *h)
{
    mcpc_client *c = h_client(h, "shutdown");
    int status;

    CHECK(h_wait_state(c, "stubborn", "connected", H_WAIT_MS));
    CHECK(h_wait_state(c, "forker", "connected", H_WAIT_MS));
    CHECK(h_tagged_processes(h, false) >= 3);
    mcpc_free(c);
    status = h_stop(h);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "mcpd status 0x%x", status);
    CHECK(h_tagged_processes(h, true) == 0);
    CHECK(access(h->socket, F_OK) != 0);
}

int main(void)
{
    Harness h;
    _cleanup_free_ char *cfg =
        xasprintf("{\"mcpServers\": {"
                  "\"stubborn\": {\"command\": \"%1$s\", \"args\": [\"--ignore-sigterm\", "
                  "\"--ignore-stdin-eof\"]},"
                  "\"forker\": {\"command\": \"%1$s\", \"args\": [\"--fork-grandchild\"]}"
                  "}}",
                  h_fake());

    h_setup(&h, "lifecycle");
    /* Its servers start with mcpd (the warm start from the cache is what it checks), not on
     * their first call: lazy start has its own test (test-ondemand). */
    h_write_settings(&h, "{\"start\": \"eager\"}");
    h_write_config(&h, cfg);
    h_start(&h, NULL);
    test_socket_rules(&h);
    test_stale_takeover(&h);
    test_shutdown(&h);
    test_refuse_open_dir(&h);
    h_teardown(&h);
    return h_finish("test-lifecycle");
}
