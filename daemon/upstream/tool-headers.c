// SPDX-License-Identifier: MIT
// tool-headers: whether a tool's x-mcp-header annotations (2026-07-28, SEP-2243) are well formed.

#include <strings.h>

#include "common/json.h"
#include "common/util.h"
#include "daemon/upstream/tool-headers.h"

/*
 * 2026-07-28 (SEP-2243): a parameter mirrored into a header by x-mcp-header must name a header
 * (visible ASCII, no colon), once per tool whatever the case, on a string, integer or boolean.
 * A tool that breaks this is not served; the rest of the list is. NULL: nothing wrong.
 */
const char *tool_headers_problem(yajl_val tool)
{
    yajl_val props = json_get_object(json_get_object(tool, "inputSchema"), "properties");

    for (size_t i = 0; props && i < props->u.object.len; i++) {
        yajl_val p = props->u.object.values[i], h = json_get(p, "x-mcp-header");
        const char *name = YAJL_GET_STRING(h), *type = json_get_string(p, "type");
        if (!h)
            continue;
        if (!name || !*name)
            return "an x-mcp-header that is empty or not a string";
        for (const char *c = name; *c; c++)
            if ((unsigned char)*c <= 0x20 || (unsigned char)*c >= 0x7f || *c == ':')
                return "an x-mcp-header that is not a header name";
        if (!streq(type, "string") && !streq(type, "integer") && !streq(type, "boolean"))
            return "an x-mcp-header on a parameter that is not a string, integer or boolean";
        for (size_t j = 0; j < i; j++) {
            const char *other = json_get_string(props->u.object.values[j], "x-mcp-header");
            if (other && strcasecmp(other, name) == 0)
                return "the same x-mcp-header on two parameters";
        }
    }
    return NULL;
}
