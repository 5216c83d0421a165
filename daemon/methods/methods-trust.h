// SPDX-License-Identifier: MIT
// methods-trust: mcpd/trust, approving (or withdrawing approval of) a project's servers.
#pragma once

#include "common/jsonrpc.h"
#include "daemon/methods/methods.h"
#include "daemon/downstream/peer.h"

/**
 * mcpd/trust {cwd, server?, revoke?}: approve the project's servers the trust gate holds back
 * (all, or server), or with revoke remove mcpd's approvals; then reload that workspace. The
 * reply lists what changed: {root, approved | revoked: [{name, path, command}], reload}.
 */
void methods_trust(MethodsCtx *d, Peer *p, JsonrpcMsg *m);
