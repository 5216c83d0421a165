// SPDX-License-Identifier: MIT
// ctl-control: mcpctl reload, connect, disconnect and wait: changing what mcpd runs.
#pragma once

#include "client/ctl.h"

/** reload: discovery again, and what changed; 1 when something was refused. */
int ctl_verb_reload(Ctl *ctl, char **args, int n);
/** connect NAME: start a server now. */
int ctl_verb_connect_server(Ctl *ctl, char **args, int n);
/** disconnect NAME: stop a server and remove its tools. */
int ctl_verb_disconnect(Ctl *ctl, char **args, int n);
/** wait NAME: until the server is connected or failed (--timeout). */
int ctl_verb_wait(Ctl *ctl, char **args, int n);
