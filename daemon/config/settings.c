// SPDX-License-Identifier: MIT
// settings: the daemon's own settings (mcpd.json's top-level keys): defaults, and the file read
// over them with a problem named for each key that is wrong.

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/config/collect.h"
#include "daemon/config/config-read.h"
#include "daemon/config/profiles.h"
#include "daemon/config/sandbox-policy.h"
#include "daemon/config/server-entry.h"
#include "daemon/config/settings.h"
#include "daemon/config/source.h"

void settings_init(Settings *s)
{
    *s = (Settings){
        .enable_project_config = true,
        .startup_timeout_ms = CONFIG_DEFAULT_STARTUP_MS,
        .max_message_bytes = JSONRPC_MAX_LINE_DEFAULT,
        .cache_ttl_days = 30,
        .timeout_ms = CONFIG_DEFAULT_TIMEOUT_MS,
        .call_timeout_ms = CONFIG_DEFAULT_CALL_TIMEOUT_MS,
        .max_call_timeout_ms = CONFIG_MAX_CALL_TIMEOUT_MS,
        .idle_timeout_ms = CONFIG_DEFAULT_IDLE_TIMEOUT_MS,
        .start = CONFIG_START_LAZY,
        .workspace_linger_ms = CONFIG_DEFAULT_LINGER_MS,
        .max_tools_per_server = CONFIG_DEFAULT_MAX_TOOLS,
        .max_list_pages = CONFIG_DEFAULT_MAX_PAGES,
        .max_list_bytes = CONFIG_DEFAULT_LIST_BYTES,
        .reconnect = true,
        .filter_exa = true,
        .hot_reload = true,
        .disabled_providers = 0,
        .partial_line_timeout_ms = CONFIG_DEFAULT_PARTIAL_LINE_MS,
    };
}

static int settings_ms(ConfigSet *set, const char *path, yajl_val root, const char *key,
                       int64_t min, int64_t max, int64_t *outp)
{
    yajl_val v = json_get(root, key);

    if (!v)
        return 0;
    if (!YAJL_IS_INTEGER(v) || v->u.number.i < min || v->u.number.i > max) {
        config_set_problem(set, path, NULL, "\"%s\" must be an integer from %lld to %lld", key,
                           (long long)min, (long long)max);
        return -EINVAL;
    }
    *outp = v->u.number.i;
    return 0;
}

static void settings_bool(ConfigSet *set, const char *path, yajl_val root, const char *key,
                          bool *outp)
{
    if (json_get_bool(root, key, outp) == -EINVAL)
        config_set_problem(set, path, NULL, "\"%s\" must be true or false", key);
}

/* audit: one of the names of SettingsAudit, in its order. */
static void settings_audit(ConfigSet *set, const char *path, yajl_val root, SettingsAudit *outp)
{
    static const char *const names[] = {"auto", "off", "log", "file"};
    yajl_val v = json_get(root, "audit");

    for (size_t i = 0; v && YAJL_IS_STRING(v) && i < N_ELEMENTS(names); i++)
        if (streq(v->u.string, names[i])) {
            *outp = (SettingsAudit)i;
            return;
        }
    if (v)
        config_set_problem(set, path, NULL,
                           "\"audit\" must be \"auto\", \"off\", \"log\" or \"file\"");
}

/* listen: "127.0.0.1:PORT" (docs/http.md); checked as an address when mcpd binds it. */
static void settings_listen(ConfigSet *set, const char *path, yajl_val root, char *out, size_t n)
{
    yajl_val v = json_get(root, "listen");

    if (!v)
        return;
    if (!YAJL_IS_STRING(v) || strlen(v->u.string) >= n)
        config_set_problem(set, path, NULL,
                           "\"listen\" must be a loopback address and port, such as "
                           "\"127.0.0.1:8765\"");
    else
        snprintf(out, n, "%s", v->u.string);
}

/* "start": the servers' default, "lazy" or "eager". */
static void settings_start(ConfigSet *set, const char *path, yajl_val root, ServerStart *outp)
{
    yajl_val v = json_get(root, "start");

    if (v && config_parse_start(YAJL_IS_STRING(v) ? v->u.string : NULL, outp) < 0)
        config_set_problem(set, path, NULL, "\"start\" must be \"lazy\" or \"eager\"");
}

/* disabledProviders: an array of provider ids from config_sources[]. */
static void settings_providers(ConfigSet *set, const char *path, yajl_val root, unsigned *outp)
{
    yajl_val v = json_get(root, "disabledProviders");
    StrBuf known = STRBUF_INIT;
    unsigned mask = 0;

    if (!v)
        return;
    for (int i = 0; config_sources[i].id; i++)
        strbuf_printf(&known, "%s\"%s\"", i ? ", " : "", config_sources[i].id);
    if (!YAJL_IS_ARRAY(v)) {
        config_set_problem(set, path, NULL,
                           "\"disabledProviders\" must be an array of provider ids (%s)",
                           strbuf_str(&known));
        strbuf_deinit(&known);
        return;
    }
    for (size_t i = 0; i < v->u.array.len; i++) {
        yajl_val e = v->u.array.values[i];
        int k = YAJL_IS_STRING(e) ? config_source_index(e->u.string) : -1;
        if (k < 0) {
            _cleanup_free_ char *shown = json_to_string(e);
            config_set_problem(set, path, NULL,
                               "\"disabledProviders[%zu]\": unknown provider %s (known: %s)", i,
                               shown, strbuf_str(&known));
            continue;
        }
        mask |= 1u << k;
    }
    *outp = mask;
    strbuf_deinit(&known);
}

static const char *const settings_keys[] = {
    "enableProjectConfig",
    "filterExa",
    "disabledProviders",
    "startupTimeoutMs",
    "maxMessageBytes",
    "cacheTtlDays",
    "timeout",
    "callTimeout",
    "maxCallTimeout",
    "idleTimeoutMs",
    "reconnect",
    "workspaceLingerMs",
    "partialLineTimeoutMs",
    "maxToolsPerServer", /* the bounds on one server's tool list: config.h
                          */
    "maxListPages",
    "maxListBytes",
    "hotReload",
    "start",
    NULL,
};

/* The call audit's settings (daemon/core/audit.h). */
static const char *const settings_keys_audit[] = {"audit", "auditArguments", NULL};

/* A typo in a key would silently do nothing: say so. */
static void settings_unknown_keys(ConfigSet *set, const char *path, yajl_val root)
{
    for (size_t i = 0; i < root->u.object.len; i++) {
        const char *k = root->u.object.keys[i];
        bool known = streq(k, "listen"); /* read at start-up only: docs/http.md */
        for (size_t j = 0; settings_keys[j] && !known; j++)
            known = streq(settings_keys[j], k);
        known = known || profiles_setting_key(k);     /* read by daemon/config/profiles.c */
        known = known || streq(k, "sandboxProfiles"); /* sandbox-policy.h reads it */
        for (size_t j = 0; settings_keys_audit[j] && !known; j++)
            known = streq(settings_keys_audit[j], k);
        if (!known && k[0] != '$') /* "$schema" and the like are comments */
            config_set_problem(set, path, NULL, "unknown setting \"%s\" (ignored)", k);
    }
}

int settings_load(Settings *s, const char *path, ConfigSet *problems)
{
    _cleanup_json_ yajl_val root = NULL;
    int r = config_read_json(problems, path, CONFIG_LEVEL_USER, &root);

    if (r == -ENOENT)
        return 0;
    if (r < 0)
        return r;
    if (!YAJL_IS_OBJECT(root)) {
        config_set_problem(problems, path, NULL, "the top level must be an object");
        return -EINVAL;
    }
    settings_unknown_keys(problems, path, root);
    settings_bool(problems, path, root, "enableProjectConfig", &s->enable_project_config);
    settings_bool(problems, path, root, "filterExa", &s->filter_exa);
    settings_bool(problems, path, root, "reconnect", &s->reconnect);
    settings_bool(problems, path, root, "hotReload", &s->hot_reload);
    settings_audit(problems, path, root, &s->audit);
    settings_bool(problems, path, root, "auditArguments", &s->audit_arguments);
    settings_providers(problems, path, root, &s->disabled_providers);
    settings_listen(problems, path, root, s->listen, sizeof(s->listen));
    settings_start(problems, path, root, &s->start);
    settings_ms(problems, path, root, "startupTimeoutMs", 0, 600000, &s->startup_timeout_ms);
    settings_ms(problems, path, root, "maxMessageBytes", 4096, INT32_MAX, &s->max_message_bytes);
    settings_ms(problems, path, root, "cacheTtlDays", 0, 3650, &s->cache_ttl_days);
    settings_ms(problems, path, root, "timeout", 0, INT32_MAX, &s->timeout_ms);
    settings_ms(problems, path, root, "callTimeout", 0, INT32_MAX, &s->call_timeout_ms);
    settings_ms(problems, path, root, "maxCallTimeout", 0, INT32_MAX, &s->max_call_timeout_ms);
    settings_ms(problems, path, root, "idleTimeoutMs", 0, INT32_MAX, &s->idle_timeout_ms);
    settings_ms(problems, path, root, "workspaceLingerMs", 0, INT32_MAX, &s->workspace_linger_ms);
    settings_ms(problems, path, root, "partialLineTimeoutMs", 100, INT32_MAX,
                &s->partial_line_timeout_ms);
    /* Raising these is for a user who trusts a server with a very large tool list. */
    settings_ms(problems, path, root, "maxToolsPerServer", 1, 1000000, &s->max_tools_per_server);
    settings_ms(problems, path, root, "maxListPages", 1, 100000, &s->max_list_pages);
    settings_ms(problems, path, root, "maxListBytes", 4096, CONFIG_MAX_LIST_BYTES,
                &s->max_list_bytes);
    StrBuf bad = STRBUF_INIT;
    sandbox_profiles_load(&s->sandbox_profiles, json_get(root, "sandboxProfiles"), &bad);
    for (char *l = bad.data, *nl; l && (nl = strchr(l, '\n')); l = nl + 1) {
        *nl = '\0';
        config_set_problem(problems, path, NULL, "%s", l);
    }
    strbuf_deinit(&bad);
    return 0;
}
