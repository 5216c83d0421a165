// SPDX-License-Identifier: MIT
// trust-show: the text a person approves for a held-back entry: everything that decides what runs
// or where secrets go, as written, and which secrets it would send where.

#include <string.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/redact.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/config/config-expand.h"
#include "daemon/config/trust-show.h"

/* What one show is about: the entry, where its secrets go, and the list of them so far. */
typedef struct Show {
    const ConfigGateEntry *e;
    unsigned forms; /* the ${...} forms its agent fills: only those send anything */
    bool user_file; /* the user's own file: literal values may be secrets, shown as *** */
    char *dest;     /* where headers and the credential go: the URL's scheme and host */
    StrBuf sends;
} Show;

/* A word as a shell reads it back: plain, or in single quotes; a URL's password masked. */
static void put_word(StrBuf *sb, const char *a)
{
    _cleanup_free_ char *masked = strstr(a, "://") ? url_redact_secrets(a) : NULL;
    const char *w = masked ? masked : a;
    bool plain = w[0] && strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                   "0123456789-_./=:,@%+") == strlen(w);

    if (plain) {
        strbuf_puts(sb, w);
        return;
    }
    strbuf_putc(sb, '\'');
    for (const char *p = w; *p; p++) {
        if (*p == '\'')
            strbuf_puts(sb, "'\\''");
        else
            strbuf_putc(sb, *p);
    }
    strbuf_putc(sb, '\'');
}

/* The editor's predefined variables: paths, never secrets. */
static bool editor_name(const char *name, size_t n)
{
    static const char *const names[] = {"workspaceFolder", "workspaceFolderBasename",
                                        "pathSeparator", "/", "userHome"};

    for (size_t i = 0; i < N_ELEMENTS(names); i++)
        if (strlen(names[i]) == n && memcmp(names[i], name, n) == 0)
            return true;
    return false;
}

/* Each variable s names in a form its agent fills: "$NAME (field) to dest" in the sends list. */
static void note_refs(Show *sh, const char *s, const char *field, const char *dest)
{
    for (const char *p = strstr(s, "${"); p; p = strstr(p + 2, "${")) {
        const char *body = p + 2, *close = strchr(body, '}'), *name = body;
        unsigned form = EXPAND_VAR;
        size_t n;

        if (!close)
            return;
        n = (size_t)(close - body);
        for (size_t i = 0; i + 1 < n; i++)
            if (body[i] == ':' && body[i + 1] == '-') {
                n = i;
                break;
            }
        if (n > strlen(EXPAND_MCPD_ENV) && startswith(body, EXPAND_MCPD_ENV)) {
            form = EXPAND_MCPD;
            name += strlen(EXPAND_MCPD_ENV);
        } else if (n > 4 && startswith(body, "env:")) {
            form = EXPAND_ENV;
            name += 4;
        }
        n -= (size_t)(name - body);
        if (!(sh->forms & form) || (form == EXPAND_VAR && editor_name(name, n)))
            continue;
        strbuf_printf(&sh->sends, "%s$%.*s (%s) to %s", sh->sends.len ? ", " : "", (int)n, name,
                      field, dest);
    }
}

/* A value as the person should see it: as written, or *** for a literal of the user's own. */
static void put_value(Show *sh, StrBuf *sb, const char *v, bool secret)
{
    if (secret && sh->user_file && !strstr(v, "${"))
        strbuf_puts(sb, "***");
    else
        put_word(sb, v);
}

/* Keys whose values are secrets in an oauth object (the options oauth.c reads). */
static bool secret_key(const char *k)
{
    return strstr(k, "ecret") || strstr(k, "rivate") || strstr(k, "assword") ||
           streq(k, "idToken") || streq(k, "id_token");
}

/* "what k=v, k=v" for an object of strings (env, headers); refs noted as going to dest. */
static void put_map(Show *sh, StrBuf *sb, const char *what, yajl_val obj, const char *sep,
                    const char *dest)
{
    if (!YAJL_IS_OBJECT(obj) || !obj->u.object.len)
        return;
    strbuf_printf(sb, "; %s ", what);
    for (size_t i = 0; i < obj->u.object.len; i++) {
        const char *k = obj->u.object.keys[i];
        yajl_val v = obj->u.object.values[i];
        _cleanup_free_ char *field = xasprintf("%s.%s", what, k);
        if (i)
            strbuf_puts(sb, ", ");
        put_word(sb, k);
        strbuf_puts(sb, sep);
        if (!YAJL_IS_STRING(v)) {
            json_write(sb, v);
            continue;
        }
        put_value(sh, sb, v->u.string, true);
        note_refs(sh, v->u.string, field, dest);
        if (v->u.string[0] == '!' && streq(sh->e->src->provider, "mcpd"))
            strbuf_printf(&sh->sends, "%sthe output of the command in %s to %s",
                          sh->sends.len ? ", " : "", field, dest);
    }
}

/* The envFile: as written, the file read, and what it sets (names only outside the project). */
static void put_env_file(Show *sh, StrBuf *sb, const char *root)
{
    const ConfigGateEntry *e = sh->e;
    yajl_val v = json_get(e->written, "envFile");
    bool inside = e->env_file && root && paths_within(e->env_file, root);

    if (!YAJL_IS_STRING(v))
        return;
    strbuf_puts(sb, "; envFile ");
    put_word(sb, v->u.string);
    if (!e->env_file)
        return;
    strbuf_puts(sb, " (");
    put_word(sb, e->env_file);
    if (!e->env_text) {
        strbuf_puts(sb, ": missing, sets nothing)");
        return;
    }
    strbuf_puts(sb, inside ? ": sets " : ": sets the variables ");
    bool first = true;
    for (const char *p = e->env_text; p < e->env_text + e->env_len;) {
        const char *nl = memchr(p, '\n', (size_t)(e->env_text + e->env_len - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(e->env_text + e->env_len - p);
        _cleanup_free_ char *line = xstrndup(p, n);
        char *l = line + strspn(line, " \t"), *eq = strchr(l, '=');
        p += n + 1;
        if (!*l || *l == '#' || !eq)
            continue;
        if (!inside)
            *eq = '\0'; /* the user's own file outside the project: its values may be secrets */
        strbuf_puts(sb, first ? "" : ", ");
        put_word(sb, l);
        first = false;
    }
    strbuf_puts(sb, first ? "nothing)" : ")");
}

/* auth and oauth: as written, and the secrets they send. */
static void put_auth(Show *sh, StrBuf *sb)
{
    yajl_val auth = json_get(sh->e->written, "auth"), oauth = json_get(sh->e->written, "oauth");
    const char *id = json_get_string(auth, "credentialId");
    const char *token_url = json_get_string(oauth, "tokenUrl");
    _cleanup_free_ char *to_token = NULL;

    if (YAJL_IS_OBJECT(auth)) {
        strbuf_puts(sb, "; auth ");
        json_write_sorted(sb, auth);
    }
    if (id)
        strbuf_printf(&sh->sends, "%sthe stored credential \"%s\" (auth.credentialId) to %s",
                      sh->sends.len ? ", " : "", id, sh->dest);
    if (!YAJL_IS_OBJECT(oauth))
        return;
    if (!token_url)
        token_url = json_get_string(oauth, "token_url");
    if (token_url) {
        _cleanup_free_ char *masked = url_redact_secrets(token_url);
        to_token = xasprintf("the token URL %s", masked);
    } else {
        to_token = xstrdup("the token endpoint the server names");
    }
    strbuf_puts(sb, "; oauth ");
    for (size_t i = 0; i < oauth->u.object.len; i++) {
        const char *k = oauth->u.object.keys[i];
        yajl_val v = oauth->u.object.values[i];
        _cleanup_free_ char *field = xasprintf("oauth.%s", k);
        strbuf_printf(sb, "%s%s=", i ? ", " : "", k);
        if (!YAJL_IS_STRING(v)) {
            json_write(sb, v);
            continue;
        }
        put_value(sh, sb, v->u.string, secret_key(k));
        note_refs(sh, v->u.string, field, to_token);
        if (secret_key(k) && !strstr(v->u.string, "${"))
            strbuf_printf(&sh->sends, "%s%s as written to %s", sh->sends.len ? ", " : "", field,
                          to_token);
    }
}

/* The URL's scheme and host (its password masked): where headers and credentials go. */
static char *url_dest(const char *url)
{
    _cleanup_free_ char *masked = url_redact_secrets(url);
    const char *host = strstr(masked, "://");
    size_t n = host ? (size_t)(host + 3 - masked) + strcspn(host + 3, "/?#") : strlen(masked);

    return xasprintf("%.*s", (int)n, masked);
}

char *trust_show_entry(const ConfigGateEntry *e, const char *root)
{
    yajl_val w = e->written, args = json_get(w, "args");
    const char *command = json_get_string(w, "command"), *url = json_get_string(w, "url");
    const char *type = json_get_string(w, "type"), *cwd = json_get_string(w, "cwd");
    Show sh = {e, config_source_forms(e->src), e->src->level != CONFIG_LEVEL_PROJECT, NULL,
               STRBUF_INIT};
    StrBuf sb = STRBUF_INIT;
    const char *proc = "the server process";

    sh.dest = command || !url ? xstrdup(proc) : url_dest(url);
    if (command) {
        put_word(&sb, command);
        note_refs(&sh, command, "command", proc);
        for (size_t i = 0; i < json_array_len(args); i++) {
            yajl_val a = json_array_at(args, i);
            _cleanup_free_ char *field = xasprintf("args[%zu]", i);
            strbuf_putc(&sb, ' ');
            if (!YAJL_IS_STRING(a)) {
                json_write(&sb, a);
                continue;
            }
            put_word(&sb, a->u.string);
            note_refs(&sh, a->u.string, field, proc);
        }
    } else if (url) {
        put_word(&sb, url);
        if (type)
            strbuf_printf(&sb, " (type %s)", type);
        note_refs(&sh, url, "url", sh.dest);
    } else {
        strbuf_puts(&sb, "(nothing: a disabled entry)");
    }
    put_map(&sh, &sb, "env", json_get(w, "env"), "=", proc);
    put_env_file(&sh, &sb, root);
    if (cwd) {
        strbuf_puts(&sb, "; cwd ");
        put_word(&sb, cwd);
    }
    put_map(&sh, &sb, "headers", json_get(w, "headers"), ": ", sh.dest);
    put_auth(&sh, &sb);
    strbuf_printf(&sb, "; sends %s", sh.sends.len ? strbuf_str(&sh.sends) : "no variable");
    strbuf_deinit(&sh.sends);
    free(sh.dest);
    return strbuf_detach(&sb, NULL);
}
