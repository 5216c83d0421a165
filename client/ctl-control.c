// SPDX-License-Identifier: MIT
// ctl-control: mcpctl reload, connect, disconnect and wait: changing what mcpd runs.

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/ctl-control.h"
#include "common/json.h"
#include "common/mcp.h"
#include "common/util.h"

/*
 * mcpd/wait is given this much less than --timeout, so that its answer (with the server's
 * state and error) arrives before mcpctl's own deadline: one local round trip, with room for
 * a loaded machine.
 */
#define WAIT_REPLY_MARGIN_MS 250

/* reload: what changed per server, then problems; 1 when anything was refused or wrong. */
int ctl_verb_reload(Ctl *ctl, char **args, int n)
{
    _cleanup_free_ char *out = NULL, *params = NULL;
    _cleanup_json_ yajl_val res = NULL;
    yajl_val servers, problems;
    int code;

    if (ctl->cwd) {
        _cleanup_free_ char *real = realpath(ctl->cwd, NULL);
        yajl_val p = json_object_new();
        json_object_set(p, "cwd", json_string_new(real ? real : ctl->cwd));
        params = json_to_string(p);
        json_free(p);
    }
    if ((code = ctl_request(ctl, MCPD_METHOD_RELOAD, params, &out)) != EXIT_OK)
        return code;
    res = json_parse(out, NULL);
    servers = json_get_object(res, "servers");
    problems = json_get_array(res, "problems");
    code = EXIT_OK;
    /* Warnings (an unknown field ignored) refuse nothing; any other problem does. */
    for (size_t i = 0; i < json_array_len(problems); i++)
        if (!streq(json_get_string(json_array_at(problems, i), "severity") ?: "", "warning"))
            code = EXIT_FAILED;
    for (size_t i = 0; servers && i < servers->u.object.len; i++)
        if (YAJL_IS_STRING(servers->u.object.values[i]) &&
            streq(servers->u.object.values[i]->u.string, "refused"))
            code = EXIT_FAILED;
    if (ctl->json) {
        printf("%s\n", out);
        return code;
    }
    int64_t n_ws = 0;
    json_get_int(res, "workspaces", &n_ws);
    printf("reloaded %lld workspace%s\n", (long long)n_ws, n_ws == 1 ? "" : "s");
    for (size_t i = 0; servers && i < servers->u.object.len; i++) {
        yajl_val v = servers->u.object.values[i];
        _cleanup_free_ char *s = YAJL_IS_STRING(v) ? NULL : json_to_string(v);
        printf("  %-24s %s\n", servers->u.object.keys[i], s ? s : v->u.string);
    }
    if (servers && !servers->u.object.len)
        printf("  (no server changed)\n");
    for (size_t i = 0; i < json_array_len(problems); i++)
        ctl_print_problem(stderr, "", json_array_at(problems, i));
    return code;
}

static char *params_server(const Ctl *ctl, const char *server, bool timeout)
{
    yajl_val p = json_object_new();
    char *s;

    json_object_set(p, "server", json_string_new(server));
    if (timeout && ctl->timeout_ms) {
        int t = ctl->timeout_ms > 2 * WAIT_REPLY_MARGIN_MS ? ctl->timeout_ms - WAIT_REPLY_MARGIN_MS
                                                           : ctl->timeout_ms / 2;
        json_object_set(p, "timeoutMs", json_int_new(t));
    }
    s = json_to_string(p);
    json_free(p);
    return s;
}

/* connect, disconnect: the answer is empty on success; say what happened. */
static int verb_connect(Ctl *ctl, char **args, int n, const char *method, const char *done)
{
    _cleanup_free_ char *out = NULL, *params = params_server(ctl, args[0], false);
    int code = ctl_request(ctl, method, params, &out);

    if (code != EXIT_OK)
        return code;
    if (ctl->json)
        printf("%s\n", out);
    else
        printf("%s: %s\n", args[0], done);
    return EXIT_OK;
}

int ctl_verb_connect_server(Ctl *ctl, char **args, int n)
{
    return verb_connect(ctl, args, n, MCPD_METHOD_CONNECT, "connecting (see `mcpctl wait`)");
}

int ctl_verb_disconnect(Ctl *ctl, char **args, int n)
{
    return verb_connect(ctl, args, n, MCPD_METHOD_DISCONNECT, "stopped, its tools removed");
}

/* A method on one server: its raw result in *outp and parsed in *resp (both to free). */
static int server_request(Ctl *ctl, const char *method, const char *server, bool timeout,
                          char **outp, yajl_val *resp)
{
    _cleanup_free_ char *params = params_server(ctl, server, timeout);
    int code = ctl_request(ctl, method, params, outp);

    if (code == EXIT_OK)
        *resp = json_parse(*outp, NULL);
    return code;
}

int ctl_verb_wait(Ctl *ctl, char **args, int n)
{
    _cleanup_free_ char *out = NULL;
    _cleanup_json_ yajl_val res = NULL;
    int code = server_request(ctl, MCPD_METHOD_WAIT, args[0], true, &out, &res);
    const char *state, *err;

    if (code != EXIT_OK)
        return code;
    code = YAJL_IS_TRUE(json_get(res, "connected")) ? EXIT_OK : EXIT_FAILED;
    if (ctl->json) {
        printf("%s\n", out);
        return code;
    }
    state = json_get_string(res, "state") ?: "unknown";
    err = json_get_string(res, "error");
    printf("%s: %s%s%s%s%s%s\n", args[0], ctl_color_of(ctl, state), state,
           ctl_color_off(ctl, state),
           YAJL_IS_TRUE(json_get(res, "timedOut")) ? " (timed out waiting)" : "", err ? ": " : "",
           err ? err : "");
    return code;
}
