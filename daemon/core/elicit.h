// SPDX-License-Identifier: MIT
// elicit: URL-mode elicitation (MCP 2025-11-25) between servers and agents: which agent a
// server's notifications/elicitation/complete goes to, a -32042 refusal told to a person, and a
// url-mode request shown as a form to an agent that declared only forms.
#pragma once

#include <stdint.h>

#include <yajl/yajl_tree.h>

#include "daemon/core/agent.h"
#include "daemon/core/server.h"
#include "daemon/upstream/upstream.h"

/* Bytes of one link shown to a person; a longer one is cut. */
#define URL_REQUIRED_LINK_MAX 2048

/** A url-mode elicitation eid of s's current connection went to agent peer_id. */
void elicit_url_note(Server *s, const char *eid, uint64_t peer_id);
/** Forget eid (declined, cancelled, failed: no completion follows). */
void elicit_url_forget(Server *s, const char *eid);
/** notifications/elicitation/complete from s: to the agent that got that elicitation, once. */
void elicit_url_complete(PeerRegistry *peers, Server *s, yajl_val params);
/**
 * The agent's text for a tools/call refused with -32042 (r): the error and its links; an agent
 * that declared url mode (peer_id in agents) also gets each elicitation's completion. Free it.
 */
char *elicit_url_required_text(AgentRegistry *agents, uint64_t peer_id, Server *s,
                               const UpstreamReply *r);
/** The params of elicitation/create in url mode as a form-mode request naming the link. */
yajl_val elicit_url_as_form(yajl_val params);
