// SPDX-License-Identifier: MIT
// manager-control: what an agent asks of one server by its name (connect, disconnect, its logs,
// mcpd/wait).
#pragma once

#include <stdint.h>

#include <yajl/yajl_tree.h>

#include "daemon/core/manager.h"
#include "daemon/core/server.h"
#include "daemon/downstream/peer.h"

/*
 * Control by server name: the server of that name in the peer's workspace, else the first
 * of that name in any workspace.
 */
/* Outcomes of control by name the caller must handle (STYLE.md 5); *whyp says which server. */
enum {
    MANAGER_E_UNKNOWN_SERVER = 1, /* no server of that name */
    MANAGER_E_DISABLED,           /* its config disables it */
};

/** The server for a control request by name (the peer's workspace first). */
Server *manager_find_server(Manager *m, Peer *p, const char *name);
/** mcpd/connect: (re)connect one server, resetting its breaker; 0 or MANAGER_E_*. */
int manager_connect(Manager *m, Peer *p, const char *name, char **whyp);
/** mcpd/disconnect: stop one server and remove its tools; 0 or MANAGER_E_UNKNOWN_SERVER. */
int manager_disconnect(Manager *m, Peer *p, const char *name, char **whyp);
/**
 * mcpd/logs: a server's recorded runs from run `since` on (0: all kept), each with its exit and
 * stderr tail, plus "text": the stderr of the latest run (or the transport's log).
 */
int manager_logs(Manager *m, Peer *p, const char *name, uint64_t since, yajl_val *resultp,
                 char **whyp);
/** mcpd/wait: reply once the server settles (connected, failed) or timeout_ms passes. */
void manager_wait(Manager *m, Peer *p, yajl_val id, const char *name, int64_t timeout_ms);
