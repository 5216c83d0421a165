// SPDX-License-Identifier: MIT
// oauth-parse: the sign-in's small pure helpers: WWW-Authenticate parameters, PKCE, random
// tokens, URL origins and paths, resource matching, scope lists.

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <yajl/yajl_tree.h>

#include "common/base64.h"
#include "common/hash.h"
#include "common/json.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/upstream/oauth-issuer.h"
#include "daemon/upstream/oauth-parse.h"

char *oauth_challenge_param(const char *challenge, const char *name)
{
    size_t k = strlen(name);

    for (const char *p = challenge; p && *p; p++) {
        const char *v, *e;
        if (strncasecmp(p, name, k) != 0 ||
            (p != challenge && (isalnum((unsigned char)p[-1]) || p[-1] == '_')))
            continue;
        v = p + k;
        while (*v == ' ')
            v++;
        if (*v != '=')
            continue;
        v++;
        while (*v == ' ')
            v++;
        if (*v == '"') {
            e = strchr(++v, '"');
            return e ? xstrndup(v, (size_t)(e - v)) : NULL;
        }
        e = v + strcspn(v, ", \t");
        return xstrndup(v, (size_t)(e - v));
    }
    return NULL;
}

char *oauth_pkce_challenge(const char *verifier)
{
    unsigned char d[SHA256_DIGEST_SIZE];
    Sha256 s;

    sha256_init(&s);
    sha256_update(&s, verifier, strlen(verifier));
    sha256_final(&s, d);
    return base64_encode(d, sizeof(d), true);
}

char *oauth_random_token(size_t n)
{
    unsigned char b[64];

    if (n > sizeof(b) || random_bytes(b, n) < 0)
        return NULL;
    return base64_encode(b, n, true);
}

/* scheme://host[:port] of url, newly allocated, or NULL. */
char *oauth_url_origin(const char *url)
{
    CURLU *u = curl_url();
    char *s = NULL, *out = NULL;

    if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK) {
        curl_url_set(u, CURLUPART_PATH, "/", 0);
        curl_url_set(u, CURLUPART_QUERY, NULL, 0);
        curl_url_set(u, CURLUPART_FRAGMENT, NULL, 0);
        curl_url_set(u, CURLUPART_USER, NULL, 0);
        curl_url_set(u, CURLUPART_PASSWORD, NULL, 0);
        if (curl_url_get(u, CURLUPART_URL, &s, 0) == CURLUE_OK) {
            size_t n = strlen(s);
            out = xstrndup(s, n && s[n - 1] == '/' ? n - 1 : n);
        }
        curl_free(s);
    }
    curl_url_cleanup(u);
    return out;
}

/* The path of url without a trailing slash ("" for the root), newly allocated, or NULL. */
char *oauth_url_path(const char *url)
{
    CURLU *u = curl_url();
    char *s = NULL, *out = NULL;

    if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_PATH, &s, 0) == CURLUE_OK) {
        size_t n = strlen(s);
        while (n && s[n - 1] == '/')
            n--;
        out = xstrndup(s, n);
    }
    curl_free(s);
    curl_url_cleanup(u);
    return out;
}

bool oauth_resource_matches(const char *prm_resource, const char *url)
{
    _cleanup_free_ char *oa = oauth_url_origin(prm_resource), *ob = oauth_url_origin(url);
    _cleanup_free_ char *pa = oauth_url_path(prm_resource), *pb = oauth_url_path(url);
    size_t n;

    if (!oa || !ob || !pa || !pb || strcasecmp(oa, ob) != 0)
        return false;
    n = strlen(pa);
    return strncmp(pa, pb, n) == 0 && (pb[n] == '\0' || pb[n] == '/');
}

char *oauth_str_or_list(yajl_val v)
{
    StrBuf sb = STRBUF_INIT;

    if (YAJL_IS_STRING(v))
        return v->u.string[0] ? xstrdup(v->u.string) : NULL;
    for (size_t i = 0; YAJL_IS_ARRAY(v) && i < v->u.array.len; i++) {
        const char *s = YAJL_GET_STRING(v->u.array.values[i]);
        if (s && oauth_url_text_ok(s))
            strbuf_printf(&sb, "%s%s", sb.len ? " " : "", s);
    }
    return sb.len ? strbuf_detach(&sb, NULL) : NULL;
}

/* Whether the space-separated list has the word w. */
static bool words_have(const char *list, const char *w, size_t n)
{
    for (const char *p = list; p && *p; p += strspn(p, " ")) {
        size_t k = strcspn(p, " ");
        if (k == n && strncmp(p, w, n) == 0)
            return true;
        p += k;
    }
    return false;
}

char *oauth_scope_union(const char *a, const char *b)
{
    const char *lists[] = {a ? a : "", b ? b : ""};
    StrBuf sb = STRBUF_INIT;

    for (size_t i = 0; i < N_ELEMENTS(lists); i++)
        for (const char *p = lists[i]; *p; p += strspn(p, " ")) {
            size_t k = strcspn(p, " ");
            if (!words_have(strbuf_str(&sb), p, k))
                strbuf_printf(&sb, "%s%.*s", sb.len ? " " : "", (int)k, p);
            p += k;
        }
    if (sb.len)
        return strbuf_detach(&sb, NULL);
    strbuf_deinit(&sb);
    return NULL;
}

bool oauth_list_has(yajl_val arr, const char *s)
{
    for (size_t i = 0; YAJL_IS_ARRAY(arr) && i < arr->u.array.len; i++)
        if (streq(YAJL_GET_STRING(arr->u.array.values[i]), s))
            return true;
    return false;
}
