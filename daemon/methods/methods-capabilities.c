// SPDX-License-Identifier: MIT
// methods-capabilities: what mcpd declares of itself to an agent, the same for both eras: its
// capabilities and its Implementation object (initialize, server/discover).

#include "common/json.h"
#include "common/version.h"
#include "daemon/core/surface.h"
#include "daemon/methods/methods-capabilities.h"

yajl_val methods_capabilities(Manager *mg, Peer *p)
{
    yajl_val caps = json_object_new(), tools = json_object_new(), exp = json_object_new();
    yajl_val mcpd = json_object_new();

    json_object_set(tools, "listChanged", json_bool_new(true));
    json_object_set(caps, "tools", tools);
    json_object_set(caps, "logging", json_object_new());
    surface_capabilities(mg, p, caps);
    json_object_set(mcpd, "protocol", json_int_new(1));
    json_object_set(exp, "mcpd", mcpd);
    json_object_set(caps, "experimental", exp);
    return caps;
}

yajl_val methods_server_info(void)
{
    yajl_val info = json_object_new();

    json_object_set(info, "name", json_string_new("mcpd"));
    json_object_set(info, "version", json_string_new(mcpd_version));
    return info;
}
