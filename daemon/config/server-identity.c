// SPDX-License-Identifier: MIT
// server-identity: when two server entries are the same server (server_config_hash), whatever
// the form they are written in.

#include <inttypes.h>
#include <string.h>

#include "common/hash.h"
#include "common/json.h"
#include "common/mcp.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/config/server-identity.h"

/* A member of the identity text: "key": value, with the comma before all but the first. */
static void identity_key(StrBuf *sb, const char *key)
{
    if (sb->len > 1)
        strbuf_putc(sb, ',');
    json_write_string(sb, key, strlen(key));
    strbuf_putc(sb, ':');
}

static void identity_string(StrBuf *sb, const char *key, const char *value)
{
    if (!value)
        return;
    identity_key(sb, key);
    json_write_string(sb, value, strlen(value));
}

/* An object or array, sorted; absent and empty are the same ("env": {} is no env). */
static void identity_json(StrBuf *sb, const char *key, yajl_val v)
{
    if (!v || YAJL_IS_NULL(v) || (YAJL_IS_OBJECT(v) && !v->u.object.len))
        return;
    identity_key(sb, key);
    json_write_sorted(sb, v);
}

/* A tuning value, only when it is not the default every entry gets from the settings. */
static void identity_ms(StrBuf *sb, const char *key, int64_t v, int64_t dflt)
{
    if (v == dflt)
        return;
    identity_key(sb, key);
    strbuf_printf(sb, "%" PRId64, v);
}

/* Whether a value of env or headers is one mcpd's own "!command" or variable-name rule reads. */
static bool has_command_or_name(yajl_val map)
{
    for (size_t i = 0; YAJL_IS_OBJECT(map) && i < map->u.object.len; i++) {
        const char *v =
            YAJL_IS_STRING(map->u.object.values[i]) ? map->u.object.values[i]->u.string : "";
        size_t n = strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
        if (v[0] == '!' || (n && !v[n] && !(v[0] >= '0' && v[0] <= '9')))
            return true;
    }
    return false;
}

void server_config_hash(ServerConfig *c, const Settings *settings)
{
    static const char *const protocols[] = {"auto", MCP_PROTOCOL_2026_07_28, "legacy"};
    StrBuf sb = STRBUF_INIT;

    /*
     * What the server is, whoever wrote it and however: the transport as resolved, the values
     * after expansion, env and headers by name, empty and absent alike, and the settings'
     * defaults left out. Two agents' entries that differ only in form ("type": "stdio" given or
     * not, "env": {}, key order, another provider) are one server, so a reload that makes
     * another of them win restarts nothing (issue 38 item 5).
     */
    strbuf_putc(&sb, '{');
    identity_string(&sb, "type", transport_type_name(c->type));
    identity_string(&sb, "command", c->command);
    if (c->n_args) {
        identity_key(&sb, "args");
        strbuf_putc(&sb, '[');
        for (size_t i = 0; i < c->n_args; i++) {
            if (i)
                strbuf_putc(&sb, ',');
            json_write_string(&sb, c->args[i], strlen(c->args[i]));
        }
        strbuf_putc(&sb, ']');
    }
    identity_json(&sb, "env", c->env);
    identity_string(&sb, "cwd", c->cwd);
    identity_string(&sb, "url", c->url);
    identity_json(&sb, "headers", c->headers);
    identity_string(&sb, "auth", c->auth_type);
    identity_string(&sb, "credentialId", c->credential_id);
    identity_string(&sb, "headersHelper", c->headers_helper);
    identity_json(&sb, "oauth", c->oauth);
    if (c->protocol != PROTOCOL_AUTO)
        identity_string(&sb, "protocol", protocols[c->protocol]);
    identity_json(&sb, "enabledTools", c->enabled_tools);
    identity_json(&sb, "disabledTools", c->disabled_tools);
    identity_json(&sb, "sandbox", c->sandbox);
    identity_ms(&sb, "timeout", c->timeout_ms, settings->timeout_ms);
    identity_ms(&sb, "callTimeout", c->call_timeout_ms, settings->call_timeout_ms);
    identity_ms(&sb, "idleTimeoutMs", c->idle_timeout_ms, settings->idle_timeout_ms);
    identity_ms(&sb, "pingIntervalMs", c->ping_interval_ms, 0);
    identity_ms(&sb, "reconnect", c->reconnect, settings->reconnect);
    /* Only mcpd's own files run "!commands" and read variable names: it matters only then. */
    if (c->allow_commands && (has_command_or_name(c->env) || has_command_or_name(c->headers)))
        identity_string(&sb, "commands", "mcpd");
    strbuf_putc(&sb, '}');
    sha256_hex(c->hash, sb.data, sb.len);
    strbuf_deinit(&sb);
}

bool server_config_same(const ServerConfig *a, const ServerConfig *b)
{
    return streq(a->name, b->name) && streq(a->hash, b->hash);
}
