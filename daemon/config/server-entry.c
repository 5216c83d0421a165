// SPDX-License-Identifier: MIT
// server-entry: one server entry's JSON read into a ServerConfig, each field checked (an error
// refuses the entry, a warning names what is ignored).

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>

#include "common/json.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/config/config-protocol.h"
#include "daemon/config/sandbox-policy.h"
#include "daemon/config/server-entry.h"
#include "daemon/config/server-identity.h"

static bool name_char_plain(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '-';
}

const char *config_check_name(const char *name)
{
    if (!name[0])
        return "Server name cannot be empty";
    if (strlen(name) > CONFIG_MAX_SERVER_NAME)
        return "Server name is too long (max 100 characters)";
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return "Server name cannot contain control characters";
    return NULL;
}

char *config_plain_name(const char *name)
{
    char *plain;
    const char *p = name;

    while (*p && name_char_plain(*p))
        p++;
    if (!*p)
        return NULL;
    plain = xstrdup(name);
    for (char *q = plain; *q; q++)
        if (!name_char_plain(*q))
            *q = '_';
    return plain;
}

/* A field that must be an object of strings (env, headers). */
static int take_string_map(ServerConfig *c, yajl_val obj, const char *field, yajl_val *outp,
                           StrBuf *err)
{
    yajl_val v = json_get(obj, field);

    if (!v || YAJL_IS_NULL(v))
        return 0;
    if (!YAJL_IS_OBJECT(v)) {
        strbuf_printf(err, "Server \"%s\": \"%s\" must be an object of strings", c->name, field);
        return -EINVAL;
    }
    for (size_t i = 0; i < v->u.object.len; i++)
        if (!YAJL_IS_STRING(v->u.object.values[i])) {
            strbuf_printf(err, "Server \"%s\": \"%s.%s\" must be a string", c->name, field,
                          v->u.object.keys[i]);
            return -EINVAL;
        }
    *outp = json_copy(v);
    return 0;
}

/*
 * An optional number of milliseconds. A wrong value is a warning naming the field, and the
 * default stays: a tuning knob written wrong must not take the server away.
 */
static void take_ms(ServerConfig *c, yajl_val obj, const char *field, int64_t *outp, StrBuf *warn)
{
    yajl_val v = json_get(obj, field);

    if (!v || YAJL_IS_NULL(v))
        return;
    if (!YAJL_IS_INTEGER(v) || v->u.number.i < 0 || v->u.number.i > INT32_MAX) {
        strbuf_printf(warn,
                      "Server \"%s\": \"%s\" must be a non-negative number of milliseconds, not "
                      "%s; using the default %" PRId64 "\n",
                      c->name, field, json_type_name(v), *outp);
        return;
    }
    *outp = v->u.number.i;
}

static int take_bool(ServerConfig *c, yajl_val obj, const char *field, bool *outp, StrBuf *err)
{
    int r = json_get_bool(obj, field, outp);

    if (r == -EINVAL) {
        strbuf_printf(err, "Server \"%s\": \"%s\" must be true or false", c->name, field);
        return r;
    }
    return 0;
}

int config_parse_start(const char *text, ServerStart *outp)
{
    if (text && streq(text, "lazy"))
        *outp = CONFIG_START_LAZY;
    else if (text && streq(text, "eager"))
        *outp = CONFIG_START_EAGER;
    else
        return -EINVAL;
    return 0;
}

/* "start": "lazy" or "eager"; absent: the settings' default (already set). */
static int take_start(ServerConfig *c, yajl_val obj, StrBuf *err)
{
    yajl_val v = json_get(obj, "start");

    if (!v || YAJL_IS_NULL(v))
        return 0;
    if (config_parse_start(YAJL_IS_STRING(v) ? v->u.string : NULL, &c->start) < 0) {
        strbuf_printf(err, "Server \"%s\": \"start\" must be \"lazy\" or \"eager\"", c->name);
        return -EINVAL;
    }
    return 0;
}

/* enabledTools / disabledTools: arrays of non-empty glob strings. */
static int take_globs(ServerConfig *c, yajl_val obj, const char *field, yajl_val *outp, StrBuf *err)
{
    yajl_val v = json_get(obj, field);

    if (!v || YAJL_IS_NULL(v))
        return 0;
    for (size_t i = 0; YAJL_IS_ARRAY(v) && i < v->u.array.len; i++)
        if (!YAJL_IS_STRING(v->u.array.values[i]) || !v->u.array.values[i]->u.string[0])
            v = NULL;
    if (!YAJL_IS_ARRAY(v)) {
        strbuf_printf(err,
                      "Server \"%s\": \"%s\" must be an array of tool names (globs such as "
                      "\"read_*\")",
                      c->name, field);
        return -EINVAL;
    }
    *outp = json_copy(v);
    return 0;
}

static int take_type(ServerConfig *c, yajl_val obj, StrBuf *err)
{
    yajl_val t = json_get(obj, "type");
    const char *s;

    if (!t || YAJL_IS_NULL(t)) {
        c->type = c->command || !c->url ? TRANSPORT_STDIO : TRANSPORT_AUTO;
        return 0;
    }
    if (!YAJL_IS_STRING(t)) {
        strbuf_printf(err, "Server \"%s\": \"type\" must be a string", c->name);
        return -EINVAL;
    }
    s = t->u.string;
    if (streq(s, "stdio"))
        c->type = TRANSPORT_STDIO;
    else if (streq(s, "http") || streq(s, "streamable-http") || streq(s, "streamableHttp"))
        c->type = TRANSPORT_HTTP;
    else if (streq(s, "sse"))
        c->type = TRANSPORT_SSE;
    else if (streq(s, "auto"))
        c->type = TRANSPORT_AUTO;
    else if (streq(s, "ws")) {
        /* Claude Code's WebSocket transport (code.claude.com/docs/en/mcp). */
        strbuf_printf(err,
                      "Server \"%s\": unknown server type \"ws\": mcpd does not speak "
                      "WebSocket, so it does not start this server; if the server also serves "
                      "Streamable HTTP or SSE, give that url with \"type\": \"http\" or "
                      "\"sse\", otherwise use it from the agent directly",
                      c->name);
        return -EINVAL;
    } else {
        strbuf_printf(err, "Server \"%s\": unknown server type \"%s\"", c->name, s);
        return -EINVAL;
    }
    return 0;
}

/* A string member of the entry into *out (empty: left unset); null is absent. */
static int take_string(const ServerConfig *c, yajl_val obj, const char *key, char **out,
                       StrBuf *err)
{
    yajl_val v = json_get(obj, key);

    if (!v || YAJL_IS_NULL(v))
        return 0;
    if (!YAJL_IS_STRING(v)) {
        strbuf_printf(err, "Server \"%s\": \"%s\" must be a string", c->name, key);
        return -EINVAL;
    }
    if (v->u.string[0])
        *out = xstrdup(v->u.string);
    return 0;
}

static int take_strings(ServerConfig *c, yajl_val obj, StrBuf *err)
{
    yajl_val v;

    if (take_string(c, obj, "command", &c->command, err) < 0 ||
        take_string(c, obj, "url", &c->url, err) < 0 ||
        take_string(c, obj, "cwd", &c->cwd, err) < 0)
        return -EINVAL;
    if ((v = json_get(obj, "args")) && !YAJL_IS_NULL(v)) {
        if (!YAJL_IS_ARRAY(v)) {
            strbuf_printf(err, "Server \"%s\": \"args\" must be an array of strings", c->name);
            return -EINVAL;
        }
        c->args = v->u.array.len ? xcalloc(v->u.array.len, sizeof(char *)) : NULL;
        for (size_t i = 0; i < v->u.array.len; i++) {
            yajl_val a = v->u.array.values[i];
            if (!YAJL_IS_STRING(a)) {
                strbuf_printf(err, "Server \"%s\": \"args[%zu]\" must be a string", c->name, i);
                return -EINVAL;
            }
            c->args[c->n_args++] = xstrdup(a->u.string);
        }
    }
    return 0;
}

/* auth: {type: "oauth" | "apikey", credentialId?: string} (seed 1.5). */
static int take_auth(ServerConfig *c, yajl_val obj, StrBuf *err)
{
    yajl_val a = json_get(obj, "auth"), t, id;

    c->oauth = YAJL_IS_OBJECT(json_get(obj, "oauth")) ? json_copy(json_get(obj, "oauth")) : NULL;
    if (!a || YAJL_IS_NULL(a))
        return 0;
    t = json_get(a, "type");
    id = json_get(a, "credentialId");
    if (!YAJL_IS_OBJECT(a) || (t && !YAJL_IS_STRING(t)) || (id && !YAJL_IS_STRING(id))) {
        strbuf_printf(err,
                      "Server \"%s\": \"auth\" must be an object {\"type\": \"oauth\" or "
                      "\"apikey\", \"credentialId\": string}",
                      c->name);
        return -EINVAL;
    }
    if (t && !streq(t->u.string, "oauth") && !streq(t->u.string, "apikey")) {
        strbuf_printf(err, "Server \"%s\": unknown auth type \"%s\" (oauth or apikey)", c->name,
                      t->u.string);
        return -EINVAL;
    }
    c->auth_type = t ? xstrdup(t->u.string) : NULL;
    c->credential_id = id && id->u.string[0] ? xstrdup(id->u.string) : NULL;
    return 0;
}

/*
 * headersHelper: Claude Code's command whose stdout gives a remote server's headers (resolve.c
 * runs it at connect). Only Claude Code's entries (and mcpd's own, which may copy one) mean it:
 * another agent never runs it, so neither does mcpd.
 */
static int take_headers_helper(ServerConfig *c, yajl_val obj, StrBuf *err, StrBuf *warn)
{
    yajl_val h = json_get(obj, "headersHelper");

    if (!h || YAJL_IS_NULL(h))
        return 0;
    if (!YAJL_IS_STRING(h) || !h->u.string[0]) {
        strbuf_printf(err,
                      "Server \"%s\": \"headersHelper\" must be a command (a non-empty string)",
                      c->name);
        return -EINVAL;
    }
    if (!streq(c->source.provider, "claude") && !streq(c->source.provider, "mcpd"))
        strbuf_printf(warn,
                      "Server \"%s\": \"headersHelper\" is ignored (Claude Code's command that "
                      "prints request headers; %s does not run it, so neither does mcpd)\n",
                      c->name, c->source.provider_name);
    else if (c->type == TRANSPORT_STDIO)
        strbuf_printf(warn,
                      "Server \"%s\": \"headersHelper\" is ignored (it gives the headers of a "
                      "remote server; this one runs a command)\n",
                      c->name);
    else
        c->headers_helper = xstrdup(h->u.string);
    return 0;
}

/* The seed's validateServerConfig messages (reference/seed-origin.md 2.1). */
static int validate(ServerConfig *c, StrBuf *err)
{
    /* In mcpd's own file {"enabled": false} alone is a mask: it names a server to switch off. */
    if (!c->enabled && !c->command && !c->url && streq(c->source.provider, "mcpd"))
        return 0;
    if (c->command && c->url) {
        strbuf_printf(err,
                      "Server \"%s\": both \"command\" and \"url\" are set - server should be "
                      "either stdio (command) OR http/sse (url), not both",
                      c->name);
        return -EINVAL;
    }
    if (c->type == TRANSPORT_STDIO && !c->command) {
        strbuf_printf(err, "Server \"%s\": stdio server requires \"command\" field", c->name);
        return -EINVAL;
    }
    if (c->type != TRANSPORT_STDIO && !c->url) {
        strbuf_printf(err, "Server \"%s\": %s server requires \"url\" field", c->name,
                      c->type == TRANSPORT_SSE ? "sse" : "http");
        return -EINVAL;
    }
    return 0;
}

/* Fields mcpd reads from a server entry. */
static const char *const known_fields[] = {
    "type",         "command",       "args",           "env",       "cwd",
    "url",          "headers",       "enabled",        "reconnect", "timeout",
    "callTimeout",  "idleTimeoutMs", "pingIntervalMs", "auth",      "oauth",
    "enabledTools", "disabledTools", "protocol",       "sandbox",   "start",
};

/*
 * Fields other agents keep in the same entries for themselves: not mcpd's, not typos, so not
 * worth a warning (Cline/Roo, Windsurf, Gemini CLI, VS Code, Claude Desktop extensions).
 */
static const char *const foreign_fields[] = {
    "disabled",     "autoApprove", "alwaysAllow", "description", "trust", "includeTools",
    "excludeTools", "envFile",     "httpUrl",     "serverUrl",   "name",  "transport",
    "timeoutMs",    "gallery",     "version",     "id",          "dev",   "note",
    "comment",      "$comment",    "metadata",    "tools",
};

static bool in_list(const char *const *list, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (streq(list[i], s))
            return true;
    return false;
}

/* Edit distance, capped: only near misses matter for "did you mean". */
static unsigned edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    unsigned row[32], prev_diag, tmp;

    if (lb >= N_ELEMENTS(row) || la >= 64)
        return 99;
    for (size_t j = 0; j <= lb; j++)
        row[j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++) {
        prev_diag = row[0];
        row[0] = (unsigned)i;
        for (size_t j = 1; j <= lb; j++) {
            tmp = row[j];
            unsigned sub =
                prev_diag + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            row[j] = MIN(MIN(row[j] + 1, row[j - 1] + 1), sub);
            prev_diag = tmp;
        }
    }
    return row[lb];
}

/*
 * Agents' fields that change how the server is reached and that mcpd does not honour: each is
 * a warning saying what it does and what to write instead (not a "did you mean").
 */
static const char *const unhonoured_fields[][2] = {
    {"sandboxEnabled", "VS Code's switch, read in VS Code's own files only: in this file write "
                       "mcpd's \"sandbox\" (docs/sandbox.md)"},
};

/*
 * Members of an "oauth" object other agents write that mcpd's sign-in (daemon/upstream/oauth.c)
 * does not read, with what to write instead: each is a warning, the rest of the object stands.
 */
static const char *const unhonoured_oauth[][2] = {
    {"authServerMetadataUrl",
     "Claude Code's override of where the authorization server's metadata is: mcpd finds it from "
     "the server (RFC 9728, then RFC 8414); if that fails, give \"oauth.authorizationUrl\" and "
     "\"oauth.tokenUrl\""},
};

static void check_oauth(ServerConfig *c, StrBuf *warn)
{
    for (size_t i = 0; i < N_ELEMENTS(unhonoured_oauth); i++)
        if (json_get(c->oauth, unhonoured_oauth[i][0]))
            strbuf_printf(warn, "Server \"%s\": \"oauth.%s\" is ignored (%s)\n", c->name,
                          unhonoured_oauth[i][0], unhonoured_oauth[i][1]);
}

/* Unknown fields are ignored, with a warning that names them (and the near miss, if any). */
static void check_unknown_fields(ServerConfig *c, yajl_val obj, StrBuf *warn)
{
    for (size_t i = 0; i < obj->u.object.len; i++) {
        const char *k = obj->u.object.keys[i], *best = NULL;
        unsigned best_d = 3; /* a typo is one or two edits away */
        bool unhonoured = false;

        if (in_list(known_fields, N_ELEMENTS(known_fields), k) ||
            in_list(foreign_fields, N_ELEMENTS(foreign_fields), k))
            continue;
        if (streq(k, "headersHelper"))
            continue; /* take_headers_helper says where it is ignored */
        for (size_t j = 0; j < N_ELEMENTS(unhonoured_fields) && !unhonoured; j++) {
            if (streq(unhonoured_fields[j][0], k)) {
                strbuf_printf(warn, "Server \"%s\": \"%s\" (%s) is ignored\n", c->name, k,
                              unhonoured_fields[j][1]);
                unhonoured = true;
            }
        }
        if (unhonoured)
            continue;
        for (size_t j = 0; j < N_ELEMENTS(known_fields); j++) {
            unsigned d = edit_distance(k, known_fields[j]);
            if (d < best_d) {
                best_d = d;
                best = known_fields[j];
            }
        }
        strbuf_printf(warn, "Server \"%s\": unknown field \"%s\" ignored%s%s%s\n", c->name, k,
                      best ? " (did you mean \"" : "", best ? best : "", best ? "\"?)" : "");
    }
}

/* Errors refuse the entry (err); warnings (warn, one per line) leave it usable. */
static int fill_fields(ServerConfig *c, yajl_val obj, StrBuf *err, StrBuf *warn)
{
    int r;

    check_unknown_fields(c, obj, warn);
    take_ms(c, obj, "timeout", &c->timeout_ms, warn);
    take_ms(c, obj, "callTimeout", &c->call_timeout_ms, warn);
    take_ms(c, obj, "idleTimeoutMs", &c->idle_timeout_ms, warn);
    c->idle_timeout_set = json_get(obj, "idleTimeoutMs") != NULL;
    take_ms(c, obj, "pingIntervalMs", &c->ping_interval_ms, warn);
    if ((r = take_strings(c, obj, err)) < 0 || (r = take_type(c, obj, err)) < 0 ||
        (r = take_string_map(c, obj, "env", &c->env, err)) < 0 ||
        (r = take_string_map(c, obj, "headers", &c->headers, err)) < 0 ||
        (r = take_bool(c, obj, "enabled", &c->enabled, err)) < 0 ||
        (r = take_bool(c, obj, "reconnect", &c->reconnect, err)) < 0 ||
        (r = take_start(c, obj, err)) < 0 || (r = take_auth(c, obj, err)) < 0 ||
        (r = server_config_take_protocol(c, obj, err)) < 0 ||
        (r = take_headers_helper(c, obj, err, warn)) < 0 ||
        (r = take_globs(c, obj, "enabledTools", &c->enabled_tools, err)) < 0 ||
        (r = take_globs(c, obj, "disabledTools", &c->disabled_tools, err)) < 0)
        return r;
    check_oauth(c, warn);
    return validate(c, err);
}

/* Each line of warn as a warning about the entry. */
static void add_warnings(ConfigSet *set, const SourceMeta *src, const char *name, StrBuf *warn)
{
    char *line = warn->data, *nl;

    while (line && (nl = strchr(line, '\n'))) {
        *nl = '\0';
        config_set_warning(set, src->path, name, "%s", line);
        line = nl + 1;
    }
}

ServerConfig *server_config_from_json(const char *name, yajl_val obj, const SourceMeta *src,
                                      const Settings *settings, ConfigSet *set)
{
    return server_config_build(name, obj, obj, src, settings, set);
}

ServerConfig *server_config_build(const char *name, yajl_val written, yajl_val obj,
                                  const SourceMeta *src, const Settings *settings, ConfigSet *set)
{
    ServerConfig *c;
    StrBuf err = STRBUF_INIT, warn = STRBUF_INIT;
    const char *bad_name = config_check_name(name);
    _cleanup_free_ char *plain = NULL;

    if (bad_name) {
        config_set_problem(set, src->path, name, "%s", bad_name);
        return NULL;
    }
    if ((plain = config_plain_name(name))) {
        /* Served under a name that is safe in tool names, file names and URIs; said once. */
        config_set_warning(set, src->path, plain,
                           "Server \"%s\" is served as \"%s\" (mcpctl commands take that "
                           "name): mcpd names hold only letters, digits, '-', '_' and '.'",
                           name, plain);
        name = plain;
    }
    if (!YAJL_IS_OBJECT(obj)) {
        config_set_problem(set, src->path, name, "Server \"%s\": entry must be an object, not %s",
                           name, json_type_name(obj));
        return NULL;
    }
    c = server_config_new(name, src, settings);
    c->allow_commands = streq(src->provider, "mcpd");
    if (fill_fields(c, obj, &err, &warn) < 0 ||
        sandbox_policy_from_json(&c->sandbox, json_get(obj, "sandbox"), settings->sandbox_profiles,
                                 name, &err, &warn) < 0) {
        config_set_problem(set, src->path, name, "%s", strbuf_str(&err));
        strbuf_deinit(&err);
        strbuf_deinit(&warn);
        return server_config_free(c);
    }
    if (c->sandbox && c->type != TRANSPORT_STDIO) {
        /* Nothing of a remote server runs here: there is no process to contain. */
        strbuf_printf(&warn,
                      "Server \"%s\": \"sandbox\" is ignored: only a stdio server's "
                      "process runs in a sandbox\n",
                      name);
        c->sandbox = json_free(c->sandbox);
    }
    add_warnings(set, src, name, &warn);
    strbuf_deinit(&warn);
    if (c->call_timeout_ms > settings->max_call_timeout_ms)
        c->call_timeout_ms = settings->max_call_timeout_ms;
    c->raw = json_copy(written);
    server_config_hash(c, settings);
    return c;
}
