// SPDX-License-Identifier: MIT
// source-gemini: Gemini CLI's ~/.gemini/settings.json and <root>/.gemini/settings.json.

#include <errno.h>
#include <stdlib.h>

#include "common/json.h"
#include "common/util.h"
#include "daemon/source.h"

/*
 * Gemini CLI names the transport by the key: httpUrl is Streamable HTTP, url is the legacy
 * HTTP+SSE endpoint, command is stdio. Its timeout is in ms, like mcpd's; cwd, env, headers,
 * args carry over as they are, and so does oauth (clientId, clientSecret, scopes,
 * authorizationUrl, tokenUrl, redirectUri: daemon/oauth.c reads them). trust, includeTools and
 * excludeTools have no mcpd meaning.
 */
static int map_gemini(const char *name, yajl_val in, yajl_val *outp, char **whyp)
{
    static const char *const drop[] = {"httpUrl",      "url",          "trust",
                                       "includeTools", "excludeTools", NULL};
    yajl_val http = json_get(in, "httpUrl"), sse = json_get(in, "url"), out;

    (void)name;
    if ((http && !YAJL_IS_STRING(http)) || (sse && !YAJL_IS_STRING(sse))) {
        *whyp = xstrdup(http && !YAJL_IS_STRING(http) ? "\"httpUrl\" must be a string"
                                                      : "\"url\" must be a string");
        return -EINVAL;
    }
    out = source_copy_without(in, drop);
    if (http || sse) {
        json_object_set(out, "url", json_copy(http ? http : sse));
        if (!json_get(in, "type"))
            json_object_set(out, "type", json_string_new(http ? "http" : "sse"));
    }
    *outp = out;
    return 0;
}

void source_gemini_collect(const ConfigSource *src, const DiscoverOptions *opt,
                           const Settings *settings, ConfigSet *set)
{
    source_load_pair(src, opt, settings, set, ".gemini/settings.json", ".gemini/settings.json",
                     "mcpServers", map_gemini);
}
