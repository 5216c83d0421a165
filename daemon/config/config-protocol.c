// SPDX-License-Identifier: MIT
// config-protocol: a server entry's "protocol" field (which MCP era it is spoken to in).

#include <errno.h>

#include "common/json.h"
#include "common/mcp.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/config/config-protocol.h"

/* protocol: "auto" (the default), "2026-07-28", or "2025"/"legacy" for the initialize era. */
int server_config_take_protocol(ServerConfig *c, yajl_val obj, StrBuf *err)
{
    const char *s = json_get_string(obj, "protocol");

    if (!json_get(obj, "protocol") || YAJL_IS_NULL(json_get(obj, "protocol")) || streq(s, "auto"))
        c->protocol = PROTOCOL_AUTO;
    else if (streq(s, MCP_PROTOCOL_2026_07_28))
        c->protocol = PROTOCOL_MODERN;
    else if (streq(s, "2025") || streq(s, "legacy"))
        c->protocol = PROTOCOL_LEGACY;
    else {
        strbuf_printf(err,
                      "Server \"%s\": \"protocol\" must be \"auto\", \"" MCP_PROTOCOL_2026_07_28
                      "\" or "
                      "\"2025\" (also \"legacy\")",
                      c->name);
        return -EINVAL;
    }
    return 0;
}
