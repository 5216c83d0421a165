// SPDX-License-Identifier: MIT
// config-expand: the ${...} forms of a server entry filled in, each agent's own (seed 1.3).

#include <string.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/config/config-expand.h"

/* How one config_expand call expands: the forms it fills, the project root, $HOME once. */
typedef struct Expander {
    unsigned forms;
    const char *root;
    char *home;
} Expander;

/* The value of one ${...} body, or NULL when unset and without a default (or not filled). */
static const char *expand_lookup(const char *body, size_t n, Expander *x)
{
    _cleanup_free_ char *name = NULL;
    const char *dflt = NULL, *v;
    size_t name_len = n;

    for (size_t i = 0; i + 1 < n; i++)
        if (body[i] == ':' && body[i + 1] == '-') {
            name_len = i;
            dflt = body + i + 2;
            break;
        }
    name = xstrndup(body, name_len);
    /* VS Code's and Cursor's predefined variables (their variables reference), then the env. */
    bool editor = streq(name, "workspaceFolder") || streq(name, "workspaceFolderBasename") ||
                  streq(name, "pathSeparator") || streq(name, "/") || streq(name, "userHome");
    bool own = startswith(name, EXPAND_MCPD_ENV);
    unsigned form = editor                     ? EXPAND_EDITOR
                    : own                      ? EXPAND_MCPD
                    : startswith(name, "env:") ? EXPAND_ENV
                                               : EXPAND_VAR;
    /* A form the agent does not fill is passed as written, default and all (VS Code: "match"). */
    if (!(x->forms & form))
        return NULL;
    if (streq(name, "workspaceFolder"))
        v = x->root;
    else if (streq(name, "workspaceFolderBasename"))
        v = x->root && strrchr(x->root, '/') ? strrchr(x->root, '/') + 1 : NULL;
    else if (streq(name, "pathSeparator") || streq(name, "/"))
        v = "/";
    else if (streq(name, "userHome"))
        v = x->home ? x->home : (x->home = paths_home());
    else
        v = getenv(own                        ? name + strlen(EXPAND_MCPD_ENV)
                   : startswith(name, "env:") ? name + 4
                                              : name);
    /*
     * A variable set to "" is set: the agents substitute it empty, default or not (Claude Code's
     * envExpansion.ts: envValue !== undefined; Gemini CLI, VS Code, OpenCode likewise).
     */
    if (v)
        return v;
    return dflt; /* points into body: the caller copies up to the closing brace */
}

static char *expand_string(const char *s, Expander *x)
{
    StrBuf sb = STRBUF_INIT;

    for (const char *p = s; *p;) {
        const char *close = NULL;
        if (p[0] == '$' && p[1] == '{' && !(close = strchr(p + 2, '}'))) {
            /* No '}' after here: nothing more expands (looking again for each "${" of the rest
             * made a string of many of them quadratic). */
            strbuf_puts(&sb, p);
            break;
        }
        if (!close || close == p + 2) {
            strbuf_putc(&sb, *p++);
            continue;
        }
        const char *body = p + 2, *v = expand_lookup(body, (size_t)(close - body), x);
        if (!v)
            strbuf_append(&sb, p, (size_t)(close + 1 - p)); /* unset: left as written */
        else if (v >= body && v <= close)
            strbuf_append(&sb, v, (size_t)(close - v)); /* the default */
        else
            strbuf_puts(&sb, v);
        p = close + 1;
    }
    return strbuf_detach(&sb, NULL);
}

static yajl_val expand_value(yajl_val v, Expander *x)
{
    yajl_val out;

    if (YAJL_IS_STRING(v)) {
        if (!strstr(v->u.string, "${"))
            return json_string_new(v->u.string);
        out = json_string_new("");
        free(out->u.string);
        out->u.string = expand_string(v->u.string, x);
        return out;
    }
    if (YAJL_IS_OBJECT(v)) {
        out = json_object_new();
        for (size_t i = 0; i < v->u.object.len; i++)
            json_object_append(out, v->u.object.keys[i], expand_value(v->u.object.values[i], x));
        return out;
    }
    if (YAJL_IS_ARRAY(v)) {
        out = json_array_new();
        for (size_t i = 0; i < v->u.array.len; i++)
            json_array_push(out, expand_value(v->u.array.values[i], x));
        return out;
    }
    return json_copy(v);
}

yajl_val config_expand_forms(yajl_val v, const char *root, unsigned forms)
{
    Expander x = {forms, root, NULL};
    yajl_val out = expand_value(v, &x);

    free(x.home);
    return out;
}

yajl_val config_expand(yajl_val v, const char *root)
{
    return config_expand_forms(v, root, EXPAND_ALL | EXPAND_MCPD);
}

unsigned config_source_forms(const SourceMeta *src)
{
    return (EXPAND_ALL & ~src->expand_off) | (src->expand_off & SOURCE_MCPD_REFS ? EXPAND_MCPD : 0);
}
