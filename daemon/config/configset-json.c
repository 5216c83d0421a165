// SPDX-License-Identifier: MIT
// configset-json: a discovery's set as the JSON mcpd/discover shows, its secrets masked.

#include <string.h>

#include "common/json.h"
#include "common/redact.h"
#include "common/util.h"
#include "daemon/config/configset-json.h"

static void redact_url_secrets(yajl_val v)
{
    if (YAJL_IS_STRING(v) && strstr(v->u.string, "://")) {
        char *shown = url_redact_secrets(v->u.string);
        free(v->u.string);
        v->u.string = shown;
    }
    for (size_t i = 0; YAJL_IS_ARRAY(v) && i < v->u.array.len; i++)
        redact_url_secrets(v->u.array.values[i]);
    for (size_t i = 0; YAJL_IS_OBJECT(v) && i < v->u.object.len; i++)
        redact_url_secrets(v->u.object.values[i]);
}

/*
 * The entry as written, with every env, headers and oauth value shown as "***", and so the secrets
 * of any URL (the password in http://user:pw@host, an ?apiKey= parameter), in url or in a
 * proxy's args.
 */
static yajl_val masked_raw(yajl_val raw)
{
    static const char *const secret_maps[] = {"env", "headers", "oauth"};
    yajl_val out = json_copy(raw);

    redact_url_secrets(out);

    for (size_t i = 0; i < N_ELEMENTS(secret_maps); i++) {
        yajl_val m = json_get(out, secret_maps[i]);
        for (size_t j = 0; YAJL_IS_OBJECT(m) && j < m->u.object.len; j++) {
            json_free(m->u.object.values[j]);
            m->u.object.values[j] = json_string_new("***");
        }
    }
    return out;
}

static void describe_source(yajl_val o, const SourceMeta *src)
{
    json_object_set(o, "provider", json_string_new(src->provider));
    json_object_set(o, "providerName", json_string_new(src->provider_name));
    if (src->path)
        json_object_set(o, "path", json_string_new(src->path));
    json_object_set(o, "level", json_string_new(config_level_name(src->level)));
}

yajl_val config_problems_json(const ConfigSet *set)
{
    yajl_val arr = json_array_new();

    for (size_t i = 0; i < set->n_problems; i++) {
        const ConfigProblem *p = &set->problems[i];
        yajl_val o = json_object_new();
        if (p->path)
            json_object_set(o, "path", json_string_new(p->path));
        if (p->server)
            json_object_set(o, "server", json_string_new(p->server));
        if (p->field)
            json_object_set(o, "field", json_string_new(p->field));
        json_object_set(o, "error", json_string_new(p->message));
        if (p->warning)
            json_object_set(o, "severity", json_string_new("warning"));
        json_array_push(arr, o);
    }
    return arr;
}

yajl_val config_describe(const ConfigSet *set)
{
    yajl_val o = json_object_new(), servers = json_array_new(), skipped = json_array_new();

    for (size_t i = 0; i < set->n_servers; i++) {
        const ServerConfig *c = set->servers[i];
        yajl_val e = json_object_new();
        json_object_set(e, "name", json_string_new(c->name));
        describe_source(e, &c->source);
        json_object_set(e, "transport", json_string_new(transport_type_name(c->type)));
        json_object_set(e, "enabled", json_bool_new(c->enabled));
        json_object_set(e, "config", masked_raw(c->raw));
        json_array_push(servers, e);
    }
    for (size_t i = 0; i < set->n_skipped; i++) {
        const ConfigSkip *k = &set->skipped[i];
        yajl_val e = json_object_new();
        json_object_set(e, "name", json_string_new(k->name));
        describe_source(e, &k->source);
        json_object_set(e, "reason", json_string_new(k->reason));
        json_array_push(skipped, e);
    }
    json_object_set(o, "servers", servers);
    json_object_set(o, "skipped", skipped);
    json_object_set(o, "problems", config_problems_json(set));
    json_object_set(o, "exaApiKeysFound", json_int_new((int64_t)set->n_exa_api_keys));
    return o;
}
