// SPDX-License-Identifier: MIT
// ctl: what mcpctl's verbs share: the options, the exit codes, the connection and the output.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <yajl/yajl_tree.h>

#include "client/include/mcpc.h"
#include "client/login.h"

/* Exit codes a script can branch on; status follows `systemctl status` (LSB: 3 and 4). */
enum {
    EXIT_OK = 0,
    EXIT_FAILED = 1, /* the request failed, the tool returned isError, reload refused something */
    EXIT_USAGE = 2,
    EXIT_NOT_RUNNING = 3, /* mcpd not reachable, or (status) a server is not connected */
    EXIT_NO_SUCH = 4,     /* status: a server name that is not configured */
};

/* Options, accepted before or after the verb, as --opt=value or --opt value. */
typedef struct Ctl {
    bool json;
    bool color;
    int timeout_ms; /* 0: not given */
    long lines;     /* logs -n; -1: all */
    bool follow;    /* logs -f */
    long run;       /* logs --run K; 0: every run kept */
    const char *socket;
    const char *cwd;
    const char *server;      /* trust, untrust, bridge: --server NAME */
    const char *host_prefix; /* bridge: --host-prefix PREFIX */
    const char *host;        /* bridge: --host NAME */
    const char *profile;     /* bridge: --profile NAME (mcpd.json's profiles) */
    LoginMode login_mode;
    mcpc_client *client;
} Ctl;

/** ANSI colour for a state word, only when ctl->color (a tty and no NO_COLOR); "" otherwise. */
const char *ctl_color_of(const Ctl *ctl, const char *state);
/** The colour reset after ctl_color_of's word. */
const char *ctl_color_off(const Ctl *ctl, const char *state);
/** Print why a request failed: EXIT_NOT_RUNNING when mcpd could not be reached, else EXIT_FAILED.
 */
int ctl_fail(Ctl *ctl, int r);
/** Connect on first use; on failure print why (unless quiet) and return NULL. */
mcpc_client *ctl_client(Ctl *ctl, bool quiet);
/** One request; its result in *outp (to free). EXIT_OK, or ctl_fail's code. */
int ctl_request(Ctl *ctl, const char *method, const char *params, char **outp);
/** How long ago since_ms (wall clock) was, as "42s", "5m", "3h" or "2d". */
void ctl_fmt_age(char *buf, size_t n, int64_t since_ms);
/** Print a value as one line of JSON (--json). */
void ctl_print_json(yajl_val v);
/**
 * Print one config problem of mcpd ({path, server, field, error, severity}) on one line:
 * "<lead><warning|problem>: <file>: server "<name>", field "<field>": <what and what to do>".
 * The file is left out when the message places itself (file:line:column), the server's
 * 'Server "<name>": ' lead-in of the message when the line names the server already.
 */
void ctl_print_problem(FILE *out, const char *lead, yajl_val problem);
