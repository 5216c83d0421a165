// SPDX-License-Identifier: MIT
// mcp: protocol constants shared by the daemon, libmcpc and the bridge (versions, _meta keys,
// codes).
#pragma once

#include <stdbool.h>
#include <stddef.h>

/*
 * Protocol versions. mcpd speaks the 2025 era (a session opened by initialize); it accepts and
 * offers every revision of that era that deployed software still sends, newest first. The
 * stateless 2026-07-28 revision is named here so both eras spell it one way.
 */
#define MCP_PROTOCOL_2025_11_25 "2025-11-25"
#define MCP_PROTOCOL_2025_06_18 "2025-06-18"
#define MCP_PROTOCOL_2025_03_26 "2025-03-26"
#define MCP_PROTOCOL_2024_11_05 "2024-11-05"
#define MCP_PROTOCOL_2026_07_28 "2026-07-28"
/* The version mcpd asks for and answers with when the peer asks for one it does not know. */
#define MCP_PROTOCOL_LATEST MCP_PROTOCOL_2025_11_25
/* The 2025-era list, newest first, as an initializer: { MCP_PROTOCOL_VERSIONS_2025, NULL }. */
#define MCP_PROTOCOL_VERSIONS_2025                                                                 \
    MCP_PROTOCOL_2025_11_25, MCP_PROTOCOL_2025_06_18, MCP_PROTOCOL_2025_03_26,                     \
        MCP_PROTOCOL_2024_11_05

/** The 2025-era versions mcpd accepts, newest first, ending in NULL. */
extern const char *const mcp_protocol_versions[];
/** Return the entry of mcp_protocol_versions equal to v, or NULL when mcpd does not speak it. */
const char *mcp_protocol_find(const char *v);

/* _meta keys defined by MCP (2025 era). */
#define MCP_META_PROGRESS_TOKEN "progressToken"
/* The _meta key that ties a message to a task (2025-11-25 tasks). */
#define MCP_META_RELATED_TASK "io.modelcontextprotocol/related-task"

/* _meta keys of the 2026-07-28 era: per-request state that replaces the session. */
#define MCP_META_PROTOCOL_VERSION    "io.modelcontextprotocol/protocolVersion"
#define MCP_META_CLIENT_CAPABILITIES "io.modelcontextprotocol/clientCapabilities"
#define MCP_META_CLIENT_INFO         "io.modelcontextprotocol/clientInfo"
#define MCP_META_SERVER_INFO         "io.modelcontextprotocol/serverInfo"
#define MCP_META_LOG_LEVEL           "io.modelcontextprotocol/logLevel"
#define MCP_META_SUBSCRIPTION_ID     "io.modelcontextprotocol/subscriptionId"

/* mcpd's own _meta keys: what agents send in initialize, and what mcpd adds to what it serves. */
#define MCPD_META_CWD          "mcpd/cwd"         /* initialize: the agent's project root */
#define MCPD_META_SESSION      "mcpd/session"     /* initialize, both ways: the session token */
#define MCPD_META_SERVER       "mcpd/server"      /* initialize: one server's passthrough; lists */
#define MCPD_META_TOOL         "mcpd/tool"        /* tools/list: the server's own tool name */
#define MCPD_META_LABEL        "mcpd/label"       /* tools/list: the server's label */
#define MCPD_META_PATH         "mcpd/path"        /* tools/list: where the server was found */
#define MCPD_META_DEFERRED     "mcpd/deferred"    /* lists: the server is not connected yet */
#define MCPD_META_PROMPT       "mcpd/prompt"      /* prompts/list: the server's prompt name */
#define MCPD_META_URI          "mcpd/uri"         /* resources/list: the server's uri */
#define MCPD_META_URI_TEMPLATE "mcpd/uriTemplate" /* resources/templates/list: its template */
#define MCPD_META_ERROR        "mcpd/error"       /* tools/call: the error a result stands for */
#define MCPD_META_TOOL_MODE    "mcpd/toolMode"    /* initialize: "search" or "all" (search.md) */
#define MCPD_META_PROFILE      "mcpd/profile"     /* initialize: a profile's name (search.md) */
#define MCPD_META_SCORE        "mcpd/score"       /* mcpd/searchTools: a found tool's rank score */
/* An error's data member: the HTTP stream of the request was lost (mcpd asks again). */
#define MCPD_DATA_STREAM_LOST "mcpd/streamLost"

/* mcpd's own methods (mcpctl, libmcpc). */
#define MCPD_METHOD_STATUS     "mcpd/status"
#define MCPD_METHOD_RELOAD     "mcpd/reload"
#define MCPD_METHOD_CONNECT    "mcpd/connect"
#define MCPD_METHOD_DISCONNECT "mcpd/disconnect"
#define MCPD_METHOD_WAIT       "mcpd/wait"
#define MCPD_METHOD_LOGS       "mcpd/logs"
#define MCPD_METHOD_DISCOVER   "mcpd/discover"
#define MCPD_METHOD_TRUST      "mcpd/trust"
#define MCPD_METHOD_LOGIN      "mcpd/login"
#define MCPD_METHOD_LOGIN_WAIT "mcpd/loginWait"
#define MCPD_METHOD_LOGOUT     "mcpd/logout"
#define MCPD_METHOD_SEARCH     "mcpd/searchTools"
#define MCPD_METHOD_TOOL_MODE  "mcpd/toolMode"
#define MCPD_METHOD_PIN        "mcpd/pin" /* keep a server running while the agent is connected */

/* Error codes. */
enum {
    /* JSON-RPC 2.0. */
    JSONRPC_PARSE_ERROR = -32700,
    JSONRPC_INVALID_REQUEST = -32600,
    JSONRPC_METHOD_NOT_FOUND = -32601,
    JSONRPC_INVALID_PARAMS = -32602,
    JSONRPC_INTERNAL_ERROR = -32603,
    /*
     * -32000 and -32001 are the SDKs' ConnectionClosed and RequestTimeout (not in the spec; the
     * 2026-07-28 text calls -32000..-32019 implementation-defined). mcpd answers a call with them
     * when its server closed or failed to take it (-32000), or when the server or an agent did
     * not answer in time (-32001), so SDK clients show their usual message.
     */
    MCP_ERROR_CONNECTION_CLOSED = -32000,
    MCP_ERROR_REQUEST_TIMEOUT = -32001,
    /* resources/read of an unknown resource, 2024-11-05 .. 2025-11-25 (then -32602). */
    MCP_ERROR_RESOURCE_NOT_FOUND = -32002,
    /* 2025-11-25 only: the request needs a URL-mode elicitation first (error.data.elicitations). */
    MCP_ERROR_URL_ELICITATION_REQUIRED = -32042,
    /* 2026-07-28 only. */
    MCP_ERROR_HEADER_MISMATCH = -32020,
    MCP_ERROR_MISSING_CLIENT_CAPABILITY = -32021,
    MCP_ERROR_UNSUPPORTED_PROTOCOL_VERSION = -32022,
    /*
     * mcpd's own codes, in the implementation-defined range. -32002 to an agent that calls before
     * initialize is what mcpd has always sent; it only answers requests that are not
     * resources/read.
     */
    MCPD_ERROR_NOT_INITIALIZED = -32002,
    MCPD_ERROR_TOO_MANY_CALLS = -32003,
    MCPD_ERROR_UNAVAILABLE = -32004,
};

/*
 * Log levels of MCP (logging/setLevel, notifications/message): the RFC 5424 names, least severe
 * first, so a level's index orders them.
 */
enum {
    MCP_LEVEL_DEBUG,
    MCP_LEVEL_INFO,
    MCP_LEVEL_NOTICE,
    MCP_LEVEL_WARNING,
    MCP_LEVEL_ERROR,
    MCP_LEVEL_CRITICAL,
    MCP_LEVEL_ALERT,
    MCP_LEVEL_EMERGENCY,
    MCP_N_LEVELS,
};

/** Return the MCP_LEVEL_* of a level name, or -1 for NULL or a name MCP does not define. */
int mcp_level_from_name(const char *name);
/** Return the name of an MCP_LEVEL_*, or NULL when out of range. */
const char *mcp_level_name(int level);
