// SPDX-License-Identifier: MIT
// source-cursor: Cursor's ~/.cursor/mcp.json and <root>/.cursor/mcp.json.

#include <errno.h>

#include "common/json.h"
#include "common/util.h"
#include "daemon/config/source.h"

/*
 * Cursor's entries are mcpServers-shaped already: command/args/env, or url (+ headers) with
 * the transport found by probing, which is what mcpd's "auto" does for a url without a type.
 * One field differs (https://cursor.com/docs/context/mcp, "Static OAuth"): Cursor's "auth" is
 * {"CLIENT_ID", "CLIENT_SECRET", "scopes"}, a pre-registered OAuth client, where mcpd's "auth"
 * names a stored credential. It becomes mcpd's "oauth" {clientId, clientSecret, scopes}; read
 * as mcpd's own, it would be taken for an empty credential and the client silently lost.
 */
static int map_cursor(const char *name, yajl_val in, yajl_val *outp, char **whyp)
{
    static const char *const drop[] = {"auth", NULL};
    static const char *const keys[][2] = {
        {"CLIENT_ID", "clientId"}, {"CLIENT_SECRET", "clientSecret"}, {"scopes", "scopes"}};
    yajl_val auth = json_get(in, "auth"), oauth;

    (void)name;
    if (!auth || json_get(auth, "type") || json_get(auth, "credentialId")) {
        *outp = json_copy(in); /* mcpd's own auth (an imported or hand-written entry) */
        return 0;
    }
    if (!YAJL_IS_OBJECT(auth)) {
        *whyp = xstrdup("\"auth\" must be an object {\"CLIENT_ID\", \"CLIENT_SECRET\", "
                        "\"scopes\"}");
        return -EINVAL;
    }
    oauth = json_object_new();
    for (size_t i = 0; i < N_ELEMENTS(keys); i++)
        if (json_get(auth, keys[i][0]))
            json_object_set(oauth, keys[i][1], json_copy(json_get(auth, keys[i][0])));
    *outp = source_copy_without(in, drop);
    if (!json_get(in, "oauth"))
        json_object_set(*outp, "oauth", oauth);
    else
        json_free(oauth);
    return 0;
}

void source_cursor_collect(const ConfigSource *src, const DiscoverOptions *opt,
                           const Settings *settings, ConfigSet *set)
{
    _cleanup_free_ char *user = source_agent_file("cursor");

    source_load_pair(src, opt, settings, set, user, ".cursor/mcp.json", "mcpServers", map_cursor);
}
