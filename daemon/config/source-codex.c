// SPDX-License-Identifier: MIT
// source-codex: OpenAI Codex's config.toml ($CODEX_HOME or ~/.codex, and <root>/.codex),
// [mcp_servers.<name>].

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/toml.h"
#include "common/util.h"
#include "daemon/config/config-read.h"
#include "daemon/config/source.h"

/* The system-wide layer Codex reads on Unix, below the user's own. */
#define CODEX_SYSTEM_CONFIG "/etc/codex/config.toml"

/* Members copied as they are: they mean the same in mcpd. */
static const char *const codex_same[] = {"command", "args", "cwd", "url", "enabled", NULL};

/* A timeout in seconds (integer or float) as whole milliseconds. */
static int take_seconds(yajl_val in, const char *key, const char *to, yajl_val out, char **whyp)
{
    yajl_val v = json_get(in, key);
    double sec;

    if (!v)
        return 0;
    sec = YAJL_IS_INTEGER(v) ? (double)v->u.number.i : YAJL_IS_DOUBLE(v) ? v->u.number.d : -1;
    if (sec < 0 || sec > 2147483.0 || isnan(sec)) {
        *whyp = xasprintf("\"%s\" must be a non-negative number of seconds", key);
        return -EINVAL;
    }
    json_object_set(out, to, json_int_new((int64_t)(sec * 1000.0 + 0.5)));
    return 0;
}

/* A table of strings (env, http_headers) copied into dst. */
static int take_table(yajl_val in, const char *key, yajl_val dst, char **whyp)
{
    yajl_val t = json_get(in, key);

    if (!t)
        return 0;
    for (size_t i = 0; YAJL_IS_OBJECT(t) && i < t->u.object.len; i++)
        if (!YAJL_IS_STRING(t->u.object.values[i])) {
            *whyp = xasprintf("\"%s.%s\" must be a string", key, t->u.object.keys[i]);
            return -EINVAL;
        }
    if (!YAJL_IS_OBJECT(t)) {
        *whyp = xasprintf("\"%s\" must be a table of strings", key);
        return -EINVAL;
    }
    for (size_t i = 0; i < t->u.object.len; i++) /* dst is new: take_env_names dedupes */
        json_object_append(dst, t->u.object.keys[i], json_copy(t->u.object.values[i]));
    return 0;
}

/*
 * Variables named in the config, copied from mcpd's environment when set. They are written as
 * ${mcpd:env:NAME} (EXPAND_MCPD) so the value is filled in by expansion and never appears in
 * the entry as shown, while a ${NAME} the file holds stays as written, as Codex passes it.
 */
static int take_env_names(yajl_val in, yajl_val env, yajl_val headers, char **whyp)
{
    yajl_val names = json_get(in, "env_vars"), hdr = json_get(in, "env_http_headers"),
             bearer = json_get(in, "bearer_token_env_var");

    if (names && !YAJL_IS_ARRAY(names))
        goto bad_names;
    for (size_t i = 0; i < json_array_len(names); i++) {
        yajl_val n = json_array_at(names, i);
        /* An entry is "NAME" or a table {name = "NAME", source = ...}; mcpd has one source. */
        if (YAJL_IS_OBJECT(n))
            n = json_get(n, "name");
        if (!YAJL_IS_STRING(n) || !n->u.string[0])
            goto bad_names;
        if (getenv(n->u.string)) {
            _cleanup_free_ char *ref = xasprintf("${" EXPAND_MCPD_ENV "%s}", n->u.string);
            json_object_append(env, n->u.string, json_string_new(ref));
        }
    }
    if (hdr && !YAJL_IS_OBJECT(hdr)) {
        *whyp = xstrdup("\"env_http_headers\" must be a table of header = \"VARIABLE\"");
        return -EINVAL;
    }
    for (size_t i = 0; hdr && i < hdr->u.object.len; i++) {
        yajl_val var = hdr->u.object.values[i];
        if (!YAJL_IS_STRING(var)) {
            *whyp = xasprintf("\"env_http_headers.%s\" must be a string", hdr->u.object.keys[i]);
            return -EINVAL;
        }
        if (getenv(var->u.string)) {
            _cleanup_free_ char *ref = xasprintf("${" EXPAND_MCPD_ENV "%s}", var->u.string);
            json_object_append(headers, hdr->u.object.keys[i], json_string_new(ref));
        }
    }
    if (bearer && !YAJL_IS_STRING(bearer)) {
        *whyp = xstrdup("\"bearer_token_env_var\" must be a string");
        return -EINVAL;
    }
    if (bearer && getenv(bearer->u.string)) {
        _cleanup_free_ char *ref = xasprintf("Bearer ${" EXPAND_MCPD_ENV "%s}", bearer->u.string);
        json_object_append(headers, "Authorization", json_string_new(ref));
    }
    /* A later source of a name wins (env_vars over env, the bearer over the headers): appended
     * in that order, then one sort, where a search per name was quadratic. */
    json_object_dedupe(env, JSON_DUP_KEEP_LAST);
    json_object_dedupe(headers, JSON_DUP_KEEP_LAST);
    return 0;
bad_names:
    *whyp = xstrdup("\"env_vars\" must be an array of variable names or {name = \"NAME\"} "
                    "tables");
    return -EINVAL;
}

/*
 * Every field of Codex's server table (codex-rs/config/src/mcp_types.rs, RawMcpServerConfig),
 * besides codex_same: read by map_codex, or Codex's own business (required makes `codex exec`
 * fail, the rest are approval and scheduling hints), so not worth a note.
 */
static const char *const codex_known[] = {
    "env",
    "env_vars",
    "http_headers",
    "env_http_headers",
    "bearer_token_env_var",
    "startup_timeout_sec",
    "startup_timeout_ms",
    "tool_timeout_sec",
    "enabled_tools",
    "disabled_tools",
    "scopes",
    "oauth",
    "name",
    "required",
    "supports_parallel_tool_calls",
    "default_tools_approval_mode",
    "tools",
    NULL,
};

/* Codex's fields mcpd knows and cannot honour, with what they would have done. */
static const char *const codex_unsupported[][2] = {
    {"oauth_resource", "the OAuth resource Codex asks for (mcpd asks for the server's own URL)"},
    {"experimental_environment", "where Codex starts the server (mcpd starts it here)"},
};

/*
 * OAuth sign-in options: scopes = [...] and [oauth] client_id become mcpd's "oauth" object
 * (clientId, scopes), read by daemon/upstream/oauth.c when the server asks for a sign-in.
 */
static int take_oauth(yajl_val in, yajl_val out, char **whyp)
{
    yajl_val scopes = json_get(in, "scopes"), oauth = json_get(in, "oauth");
    yajl_val id = json_get(oauth, "client_id"), o;
    bool scopes_ok = !scopes || YAJL_IS_ARRAY(scopes);

    for (size_t i = 0; scopes_ok && i < json_array_len(scopes); i++)
        scopes_ok = YAJL_IS_STRING(json_array_at(scopes, i));
    if (!scopes_ok) {
        *whyp = xstrdup("\"scopes\" must be an array of OAuth scope names");
        return -EINVAL;
    }
    if ((oauth && !YAJL_IS_OBJECT(oauth)) || (id && !YAJL_IS_STRING(id))) {
        *whyp = xstrdup("\"oauth\" must be a table with client_id = \"...\"");
        return -EINVAL;
    }
    if (!scopes && !id)
        return 0;
    o = json_object_new();
    if (id)
        json_object_set(o, "clientId", json_copy(id));
    if (scopes)
        json_object_set(o, "scopes", json_copy(scopes));
    json_object_set(out, "oauth", o);
    return 0;
}

/* What the entry says that mcpd does not honour, one note a line (NULL: nothing). */
static char *codex_notes(yajl_val in)
{
    StrBuf sb = STRBUF_INIT;
    const char *bearer = json_get_string(in, "bearer_token_env_var");

    if (bearer && !getenv(bearer))
        strbuf_printf(&sb,
                      "\"bearer_token_env_var\": %s is not set in mcpd's environment, so no "
                      "Authorization header is sent; set it where mcpd starts (systemctl --user "
                      "set-environment %s=...)\n",
                      bearer, bearer);
    for (size_t i = 0; i < in->u.object.len; i++) {
        const char *k = in->u.object.keys[i];
        bool known = false;
        for (const char *const *c = codex_same; *c && !known; c++)
            known = streq(*c, k);
        for (const char *const *c = codex_known; *c && !known; c++)
            known = streq(*c, k);
        for (size_t j = 0; j < N_ELEMENTS(codex_unsupported) && !known; j++) {
            if (streq(codex_unsupported[j][0], k)) {
                strbuf_printf(&sb, "\"%s\" (%s) is not supported and is ignored\n", k,
                              codex_unsupported[j][1]);
                known = true;
            }
        }
        if (!known)
            strbuf_printf(&sb, "unknown field \"%s\" ignored (Codex itself refuses it)\n", k);
    }
    if (!sb.len) {
        strbuf_deinit(&sb);
        return NULL;
    }
    return strbuf_detach(&sb, NULL);
}

/*
 * Codex's fields to mcpd's (seed 1.2, with B13 fixed: cwd, enabled and both timeouts are
 * honoured). A url means Streamable HTTP, which is all Codex speaks. enabled_tools and
 * disabled_tools become enabledTools and disabledTools. A literal bearer_token is refused, as
 * Codex refuses it; other fields mcpd cannot honour are noted in *whyp (ConfigMapFn).
 */
/*
 * Whether a string under v holds mcpd's own reference form: the mapping below writes it for the
 * variables Codex names, and mcpd fills it; written in the file, Codex passes it as text, so a
 * repository could have mcpd fill in any variable of the user's (a token, into a header).
 */
static bool holds_mcpd_ref(yajl_val v)
{
    if (YAJL_IS_STRING(v))
        return strstr(v->u.string, "${" EXPAND_MCPD_ENV) != NULL;
    for (size_t i = 0; YAJL_IS_OBJECT(v) && i < v->u.object.len; i++)
        if (holds_mcpd_ref(v->u.object.values[i]))
            return true;
    for (size_t i = 0; YAJL_IS_ARRAY(v) && i < v->u.array.len; i++)
        if (holds_mcpd_ref(v->u.array.values[i]))
            return true;
    return false;
}

static int map_codex(const char *name, yajl_val in, yajl_val *outp, char **whyp)
{
    _cleanup_json_ yajl_val out = json_object_new(), env = json_object_new(),
                            headers = json_object_new();

    (void)name;
    if (holds_mcpd_ref(in)) {
        *whyp = xstrdup("holds \"${" EXPAND_MCPD_ENV "...}\", which Codex passes on as text and "
                        "mcpd would fill from its environment: name the variable in env_vars, "
                        "env_http_headers or bearer_token_env_var instead");
        return -EINVAL;
    }
    if (json_get(in, "bearer_token")) {
        *whyp = xstrdup("\"bearer_token\" is not supported (Codex refuses it too): put the "
                        "token in an environment variable and name it in "
                        "\"bearer_token_env_var\"");
        return -EINVAL;
    }
    if (take_oauth(in, out, whyp) < 0)
        return -EINVAL;
    for (const char *const *k = codex_same; *k; k++)
        if (json_get(in, *k))
            json_object_set(out, *k, json_copy(json_get(in, *k)));
    if (take_table(in, "env", env, whyp) < 0 || take_table(in, "http_headers", headers, whyp) < 0 ||
        take_env_names(in, env, headers, whyp) < 0 ||
        take_seconds(in, "startup_timeout_sec", "timeout", out, whyp) < 0 ||
        take_seconds(in, "tool_timeout_sec", "callTimeout", out, whyp) < 0)
        return -EINVAL;
    /* Codex reads startup_timeout_sec first; the older _ms spelling only without it. */
    if (json_get(in, "startup_timeout_ms") && !json_get(in, "startup_timeout_sec"))
        json_object_set(out, "timeout", json_copy(json_get(in, "startup_timeout_ms")));
    if (json_get(in, "url"))
        json_object_set(out, "type", json_string_new("http"));
    /* Codex's tool filters are mcpd's (disabled_tools applies after enabled_tools). */
    if (json_get(in, "enabled_tools"))
        json_object_set(out, "enabledTools", json_copy(json_get(in, "enabled_tools")));
    if (json_get(in, "disabled_tools"))
        json_object_set(out, "disabledTools", json_copy(json_get(in, "disabled_tools")));
    if (env->u.object.len) {
        json_object_set(out, "env", env);
        env = NULL;
    }
    if (headers->u.object.len) {
        json_object_set(out, "headers", headers);
        headers = NULL;
    }
    *outp = out;
    out = NULL;
    *whyp = codex_notes(in);
    return 0;
}

static void load_toml(const ConfigSource *src, const char *path, ConfigLevel level,
                      const Settings *settings, ConfigSet *set)
{
    _cleanup_free_ char *text = NULL, *err = NULL;
    _cleanup_json_ yajl_val root = NULL;
    /*
     * Codex expands nothing: env values go to the server as written (codex-rs rmcp-client
     * utils.rs create_env_for_mcp_server chains the config's env unchanged), and so do args,
     * url and headers. A variable reaches the server only through env_vars.
     */
    SourceMeta meta = {(char *)src->id, (char *)src->name, (char *)path, level,
                       EXPAND_ALL | SOURCE_MCPD_REFS};
    size_t len = 0;

    if (config_read_text(set, path, level, &text, &len) < 0)
        return;
    root = toml_parse(text, len, &err);
    if (!root) {
        config_set_problem(set, path, NULL, "invalid TOML: %s; fix the file or move it away", err);
        return;
    }
    config_add_entries(set, json_get(root, "mcp_servers"), "mcp_servers", &meta, settings,
                       map_codex);
}

char *source_codex_config_path(void)
{
    return source_agent_file("codex");
}

/*
 * Codex's layers, strongest first (developers.openai.com/codex/config-reference: a trusted
 * project's .codex/config.toml over the user's config.toml over /etc/codex/config.toml). A
 * project file is read only once trusted (daemon/config/trust.c). Each layer gives whole entries:
 * Codex merges one server's fields across layers, mcpd takes the strongest layer's entry.
 */
void source_codex_collect(const ConfigSource *src, const DiscoverOptions *opt,
                          const Settings *settings, ConfigSet *set)
{
    _cleanup_free_ char *user = source_codex_config_path();

    if (opt->root) {
        _cleanup_free_ char *project = paths_join(opt->root, ".codex/config.toml");
        load_toml(src, project, CONFIG_LEVEL_PROJECT, settings, set);
    }
    load_toml(src, user, CONFIG_LEVEL_USER, settings, set);
    load_toml(src, CODEX_SYSTEM_CONFIG, CONFIG_LEVEL_USER, settings, set);
}

/* The same mapping for the servers mcpctl setup moved out of this agent's file. */
int source_codex_map(const char *name, yajl_val in, yajl_val *outp, char **whyp)
{
    return map_codex(name, in, outp, whyp);
}
