// SPDX-License-Identifier: MIT
// config-protocol: a server entry's "protocol" field (which MCP era it is spoken to in).
#pragma once

#include <yajl/yajl_tree.h>

#include "daemon/config/configset.h"

struct StrBuf;
/**
 * Read a server entry's "protocol" field into c->protocol ("auto" when absent); a value that is
 * none of "auto", MCP_PROTOCOL_2026_07_28, "2025", "legacy" is -EINVAL with the reason appended
 * to err.
 */
int server_config_take_protocol(ServerConfig *c, yajl_val obj, struct StrBuf *err);
