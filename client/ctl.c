// SPDX-License-Identifier: MIT
// ctl: what mcpctl's verbs share: the options, the exit codes, the connection and the output.

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "client/ctl.h"
#include "common/json.h"
#include "common/util.h"

/* ANSI colour for a state word, only when ctl->color (a tty and no NO_COLOR). */
const char *ctl_color_of(const Ctl *ctl, const char *state)
{
    if (!ctl->color || !state)
        return "";
    if (streq(state, "connected"))
        return "\033[32m";
    if (streq(state, "failed") || streq(state, "needs-auth"))
        return "\033[31m";
    return "\033[33m";
}

const char *ctl_color_off(const Ctl *ctl, const char *state)
{
    return ctl->color && state ? "\033[0m" : "";
}

/* The daemon could not be reached (3), or the request failed (1); the message says which. */
int ctl_fail(Ctl *ctl, int r)
{
    fprintf(stderr, "mcpctl: %s\n", mcpc_errmsg(ctl->client));
    return r == -ECONNRESET || r == -ECONNREFUSED || r == -ENOENT ? EXIT_NOT_RUNNING : EXIT_FAILED;
}

/* Connect on first use; on failure print why and return NULL. */
mcpc_client *ctl_client(Ctl *ctl, bool quiet)
{
    mcpc_options o = {.client_name = "mcpctl", .socket_path = ctl->socket};

    if (ctl->client)
        return ctl->client;
    o.timeout_ms = ctl->timeout_ms;
    ctl->client = mcpc_new(&o);
    if (!ctl->client)
        return NULL;
    if (mcpc_connect(ctl->client) != 0) {
        if (!quiet)
            fprintf(stderr, "mcpctl: %s\n", mcpc_errmsg(ctl->client));
        mcpc_free(ctl->client);
        ctl->client = NULL;
        return NULL;
    }
    return ctl->client;
}

/* One request whose result is printed as JSON or handed to show; 3/1 on failure. */
int ctl_request(Ctl *ctl, const char *method, const char *params, char **outp)
{
    int r = mcpc_request(ctl->client, method, params, outp);

    return r == 0 ? EXIT_OK : ctl_fail(ctl, r);
}

void ctl_fmt_age(char *buf, size_t n, int64_t since_ms)
{
    int64_t s = (wall_ms() - since_ms) / 1000;

    if (s < 0)
        s = 0;
    if (s < 120)
        snprintf(buf, n, "%llds", (long long)s);
    else if (s < 7200)
        snprintf(buf, n, "%lldm", (long long)(s / 60));
    else if (s < 172800)
        snprintf(buf, n, "%lldh", (long long)(s / 3600));
    else
        snprintf(buf, n, "%lldd", (long long)(s / 86400));
}

/* Print JSON text as one line (for --json), or hand the parsed value to show. */
void ctl_print_json(yajl_val v)
{
    _cleanup_free_ char *s = json_to_string(v);

    printf("%s\n", s);
}

void ctl_print_problem(FILE *out, const char *lead, yajl_val p)
{
    const char *path = json_get_string(p, "path"), *err = json_get_string(p, "error") ?: "";
    const char *server = json_get_string(p, "server"), *field = json_get_string(p, "field");
    bool warning = streq(json_get_string(p, "severity") ?: "", "warning");
    _cleanup_free_ char *prefix = server ? xasprintf("Server \"%s\": ", server) : NULL;

    if (prefix && startswith(err, prefix))
        err += strlen(prefix);
    fprintf(out, "%s%s: ", lead, warning ? "warning" : "problem");
    /* Messages that give their file:line:column say where already. */
    if (path && !strstr(err, path))
        fprintf(out, "%s: ", path);
    if (server)
        fprintf(out, "server \"%s\"%s", server, field ? ", " : ": ");
    if (field)
        fprintf(out, "field \"%s\": ", field);
    fprintf(out, "%s\n", err);
}
