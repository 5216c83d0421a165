// SPDX-License-Identifier: MIT
// ctl-pin: mcpctl pin and unpin, a server kept running (no idle stop) while a command holds it.
// mcpd's pins belong to the agent that made them (mcpd/pin, docs/processes.md): `mcpctl pin`
// is that agent for as long as it runs, and `mcpctl unpin` ends it.

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "client/ctl-pin.h"
#include "common/json.h"
#include "common/mcp.h"
#include "common/util.h"

/* How long unpin waits for the pinning commands to go when --timeout is not given: each ends
 * at once on SIGTERM, and mcpd sees its connection close in the same turn. */
#define UNPIN_WAIT_MS 10000
/* /proc/PID/cmdline read to match a pin's server: mcpctl's options and one name. */
#define PIN_CMDLINE_MAX 8192

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
    stop_signal = sig;
}

int ctl_verb_pin(Ctl *ctl, char **args, int n)
{
    mcpc_options o = {.client_name = CTL_PIN_CLIENT, .socket_path = ctl->socket};
    _cleanup_free_ char *out = NULL, *params = NULL;
    _cleanup_json_ yajl_val res = NULL;
    yajl_val p = json_object_new();
    struct sigaction sa = {.sa_handler = on_stop}; /* no SA_RESTART: poll returns */
    int code;

    (void)n;
    json_object_set(p, "server", json_string_new(args[0]));
    params = json_to_string(p);
    json_free(p);
    o.timeout_ms = ctl->timeout_ms;
    if (!(ctl->client = mcpc_new(&o)))
        return EXIT_FAILED;
    if (mcpc_connect(ctl->client) != 0)
        return ctl_fail(ctl, -ECONNREFUSED);
    if ((code = ctl_request(ctl, MCPD_METHOD_PIN, params, &out)) != EXIT_OK)
        return code;
    res = json_parse(out, NULL);
    if (ctl->json)
        printf("%s\n", out);
    else
        printf("pinned %s (%s): it keeps running while this command runs; Ctrl-C or `mcpctl "
               "unpin %s` ends it\n",
               args[0], json_get_string(res, "state") ?: "?", args[0]);
    fflush(stdout);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    /* Held: whatever mcpd sends (notifications) is read and dropped, until a signal or mcpd
     * closing the connection (it stopped: the pin went with it). */
    while (!stop_signal) {
        struct pollfd pfd = {mcpc_fd(ctl->client), POLLIN, 0};
        if (poll(&pfd, 1, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (mcpc_process(ctl->client, 0) < 0) {
            fprintf(stderr, "mcpctl: mcpd closed the connection: %s is no longer pinned\n",
                    args[0]);
            return EXIT_NOT_RUNNING;
        }
    }
    if (!ctl->json)
        printf("unpinned %s\n", args[0]);
    return EXIT_OK;
}

/* Whether pid's command line is `mcpctl ... pin SERVER` (the pin holder of SERVER). */
static bool holds(pid_t pid, const char *server)
{
    char path[64], buf[PIN_CMDLINE_MAX];
    FILE *f;
    size_t n;
    bool after_pin = false;

    snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
    if (!(f = fopen(path, "re")))
        return false;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    for (size_t at = 0; at < n; at += strlen(buf + at) + 1) {
        if (after_pin && streq(buf + at, server))
            return true;
        after_pin = after_pin || streq(buf + at, "pin");
    }
    return false;
}

/* The pids of the pin holders of server that mcpd lists now, into pids (at most max). */
static size_t holders(Ctl *ctl, const char *server, pid_t *pids, size_t max, int *codep)
{
    _cleanup_free_ char *out = NULL;
    _cleanup_json_ yajl_val st = NULL;
    yajl_val agents;
    size_t k = 0;

    if ((*codep = ctl_request(ctl, MCPD_METHOD_STATUS, NULL, &out)) != EXIT_OK)
        return 0;
    st = json_parse(out, NULL);
    agents = json_get_array(st, "agents");
    for (size_t i = 0; i < json_array_len(agents) && k < max; i++) {
        yajl_val a = json_array_at(agents, i);
        int64_t pid = 0;
        if (streq(json_get_string(a, "name") ?: "", CTL_PIN_CLIENT) &&
            json_get_int(a, "pid", &pid) == 0 && pid > 0 && holds((pid_t)pid, server))
            pids[k++] = (pid_t)pid;
    }
    return k;
}

int ctl_verb_unpin(Ctl *ctl, char **args, int n)
{
    /* More holders than anyone starts by hand; the rest go on a second unpin. */
    pid_t pids[64];
    int code = EXIT_OK, wait_ms = ctl->timeout_ms ? ctl->timeout_ms : UNPIN_WAIT_MS;
    size_t k = holders(ctl, args[0], pids, N_ELEMENTS(pids), &code);
    uint64_t end = now_ms() + (uint64_t)wait_ms;

    (void)n;
    if (code != EXIT_OK)
        return code;
    if (!k) {
        fprintf(stderr,
                "mcpctl: no `mcpctl pin %s` is running (an agent's own mcpd/pin ends when it "
                "unpins or disconnects)\n",
                args[0]);
        return EXIT_FAILED;
    }
    for (size_t i = 0; i < k; i++)
        kill(pids[i], SIGTERM);
    while (holders(ctl, args[0], pids, N_ELEMENTS(pids), &code) && code == EXIT_OK) {
        if (now_ms() > end) {
            fprintf(stderr, "mcpctl: `mcpctl pin %s` (pid %d) did not end within %d ms\n", args[0],
                    (int)pids[0], wait_ms);
            return EXIT_FAILED;
        }
        usleep(20000);
    }
    if (code == EXIT_OK && !ctl->json)
        printf("unpinned %s (%zu pin%s ended)\n", args[0], k, k == 1 ? "" : "s");
    return code;
}
