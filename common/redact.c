// SPDX-License-Identifier: MIT
// redact: text meant for people with the secrets of the URLs in it shown as "***".

#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "common/json.h"
#include "common/redact.h"
#include "common/strbuf.h"
#include "common/util.h"

/* The end of a URL's authority (RFC 3986 3.2): a path, query or fragment starts, or the text
 * around the URL resumes (a space or a quote in a command line). */
static size_t authority_len(const char *a)
{
    return strcspn(a, "/?#\\ \t\r\n\"'<>");
}

/* Words that make a query parameter's value a secret (matched case-insensitively). */
static const char *const secret_param_words[] = {"key", "token", "secret", "passw", "auth", "sig"};

bool redact_name_is_secret(const char *name, size_t n)
{
    for (size_t i = 0; i < N_ELEMENTS(secret_param_words); i++)
        for (size_t k = 0, w = strlen(secret_param_words[i]); k + w <= n; k++)
            if (strncasecmp(name + k, secret_param_words[i], w) == 0)
                return true;
    return false;
}

/* Takes s (from the userinfo pass): each "?name=value" or "&name=value" with a secret name. */
static char *redact_query_params(char *s)
{
    StrBuf sb = STRBUF_INIT;
    const char *p = s;
    bool changed = false;

    while (*p) {
        size_t lit = strcspn(p, "?&");
        strbuf_append(&sb, p, lit);
        p += lit;
        if (!*p)
            break;
        strbuf_putc(&sb, *p++); /* the '?' or '&' */
        size_t name = strcspn(p, "=&#? \t\r\n\"'");
        if (p[name] != '=' || !name || !redact_name_is_secret(p, name))
            continue;
        size_t value = strcspn(p + name + 1, "&# \t\r\n\"'");
        if (!value)
            continue;
        strbuf_append(&sb, p, name + 1);
        strbuf_puts(&sb, "***");
        p += name + 1 + value;
        changed = true;
    }
    if (!changed) {
        strbuf_deinit(&sb);
        return s;
    }
    free(s);
    return strbuf_detach(&sb, NULL);
}

char *url_redact_secrets(const char *s)
{
    static const char mask[] = "***";
    size_t n = strlen(s), len = 0, cap = n + 1;
    char *out = xmalloc(cap);
    const char *p = s;

    for (;;) {
        const char *sep = strstr(p, "://");
        if (!sep)
            break;
        const char *auth = sep + 3, *at = NULL;
        size_t alen = authority_len(auth);
        /* userinfo ends at the last '@' of the authority; its password after its first ':'. */
        for (size_t i = 0; i < alen; i++)
            if (auth[i] == '@')
                at = auth + i;
        const char *colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
        const char *copy_to = colon && colon + 1 < at ? colon + 1 : auth + alen;
        size_t keep = (size_t)(copy_to - p);
        if (len + keep + sizeof(mask) > cap) {
            cap = len + keep + sizeof(mask) + (n - (size_t)(copy_to - s)) + 1;
            out = xrealloc(out, cap);
        }
        memcpy(out + len, p, keep);
        len += keep;
        if (copy_to != auth + alen) {
            memcpy(out + len, mask, sizeof(mask) - 1);
            len += sizeof(mask) - 1;
            p = at;
        } else {
            p = copy_to;
        }
    }
    size_t rest = strlen(p);
    if (len + rest + 1 > cap)
        out = xrealloc(out, len + rest + 1);
    memcpy(out + len, p, rest + 1);
    return strstr(out, "://") ? redact_query_params(out) : out;
}

/* A string of v's with its URLs' secrets masked, in place. */
static void redact_string(yajl_val v)
{
    char *shown = url_redact_secrets(v->u.string);

    free(v->u.string);
    v->u.string = shown;
}

void redact_json_secrets(yajl_val v)
{
    if (YAJL_IS_STRING(v)) {
        redact_string(v);
    } else if (YAJL_IS_ARRAY(v)) {
        for (size_t i = 0; i < v->u.array.len; i++)
            redact_json_secrets(v->u.array.values[i]);
    } else if (YAJL_IS_OBJECT(v)) {
        for (size_t i = 0; i < v->u.object.len; i++) {
            const char *k = v->u.object.keys[i];
            yajl_val m = v->u.object.values[i];
            if (!redact_name_is_secret(k, strlen(k))) {
                redact_json_secrets(m);
                continue;
            }
            /* Whatever it holds, a secret's value is not shown, not even its shape. */
            json_free(m);
            v->u.object.values[i] = json_string_new("***");
        }
    }
}
