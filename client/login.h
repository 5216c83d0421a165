// SPDX-License-Identifier: MIT
// login: mcpctl login and logout (sign-in to remote MCP servers through mcpd).
#pragma once

#include <stdbool.h>

#include "client/include/mcpc.h"

/* A sign-in in a browser may take a person minutes: mcpctl waits this long unless told. */
#define LOGIN_TIMEOUT_MS (5 * 60 * 1000)

typedef enum LoginMode {
    LOGIN_BROWSER,    /* print the URL and open it with xdg-open when there is a display */
    LOGIN_NO_BROWSER, /* print the URL only */
    LOGIN_HEADLESS,   /* mcpd follows the redirect itself (tests, authorization servers that
                         redirect at once) */
} LoginMode;

/** Sign in to server; return a process exit code (0 signed in, 1 failed, 3 no mcpd). */
int login_run(mcpc_client *c, const char *server, LoginMode mode, bool json);
/** Forget the sign-in to server; return a process exit code. */
int logout_run(mcpc_client *c, const char *server, bool json);
