// SPDX-License-Identifier: MIT
// handoff: the exchange in which `mcpctl bridge` hands its host's stdin and stdout to mcpd
// (client/handoff.c and daemon/downstream/handoff.c), its names and bounds.
#pragma once

/*
 * On a fresh connection, the bridge's first line is a request HANDOFF_METHOD with params
 * {version, identity: {_meta members}, hostPrefix?, leaveOut?: [server names]}. An mcpd that
 * takes pipes answers {version}; any other answer (an older mcpd: Method not found) means the
 * bridge relays. The bridge then sends one byte, "\n", carrying its stdin and stdout
 * (SCM_RIGHTS); mcpd answers HANDOFF_TAKEN or HANDOFF_REFUSED {message}, and once it has
 * served the host to the end, HANDOFF_ENDED {status, message?}: the bridge's exit status.
 */
#define HANDOFF_METHOD  "mcpd/handoff"
#define HANDOFF_TAKEN   "mcpd/handoff/taken"
#define HANDOFF_REFUSED "mcpd/handoff/refused"
#define HANDOFF_ENDED   "mcpd/handoff/ended"
/* What this build speaks; a later change to the exchange gets a new number. */
#define HANDOFF_VERSION 1
/*
 * The longest line of the exchange either side reads: the identity is a few paths and names,
 * leaveOut the servers of a project's .mcp.json (some tens); 64 KiB holds a thousand of them.
 */
#define HANDOFF_LINE_MAX 65536
/*
 * How long either side waits for the other's next step: both answer at once, and a loaded
 * machine takes milliseconds; a peer silent this long is not going to take part.
 */
#define HANDOFF_STEP_MS 10000
