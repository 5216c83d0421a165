// SPDX-License-Identifier: MIT
// ctl-surface: mcpctl prompts, resources, read and prompt: the rest of what servers offer.

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/ctl-surface.h"
#include "common/json.h"
#include "common/util.h"

/* ---- prompts and resources ---- */

/* Every page of a list (the lister is one of mcpc_list_prompts and friends) into one array. */
static int list_all(Ctl *ctl, int (*lister)(mcpc_client *, const char *, char **), const char *key,
                    yajl_val *allp)
{
    _cleanup_free_ char *cursor = NULL;
    yajl_val all = json_array_new();

    do {
        _cleanup_free_ char *out = NULL;
        _cleanup_json_ yajl_val page = NULL;
        int r = lister(ctl->client, cursor, &out);
        if (r != 0) {
            json_free(all);
            return ctl_fail(ctl, r);
        }
        page = json_parse(out, NULL);
        yajl_val items = json_get_array(page, key);
        for (size_t i = 0; i < json_array_len(items); i++)
            json_array_push(all, json_copy(json_array_at(items, i)));
        const char *next = json_get_string(page, "nextCursor");
        free(cursor);
        cursor = next && *next ? xstrdup(next) : NULL;
    } while (cursor);
    *allp = all;
    return EXIT_OK;
}

static void print_wrapped(const char *key, yajl_val v)
{
    yajl_val o = json_object_new();
    _cleanup_free_ char *text = NULL;

    json_object_set(o, key, json_copy(v));
    text = json_to_string(o);
    printf("%s\n", text);
    json_free(o);
}

int ctl_verb_prompts(Ctl *ctl, char **args, int n)
{
    _cleanup_json_ yajl_val all = NULL;
    int code = list_all(ctl, mcpc_list_prompts, "prompts", &all);

    if (code != EXIT_OK)
        return code;
    if (ctl->json) {
        print_wrapped("prompts", all);
        return EXIT_OK;
    }
    for (size_t i = 0; i < json_array_len(all); i++) {
        yajl_val p = json_array_at(all, i), pargs = json_get_array(p, "arguments");
        const char *desc = json_get_string(p, "description");
        printf("%s", json_get_string(p, "name"));
        for (size_t j = 0; j < json_array_len(pargs); j++) {
            yajl_val a = json_array_at(pargs, j);
            printf(YAJL_IS_TRUE(json_get(a, "required")) ? " %s=" : " [%s=]",
                   json_get_string(a, "name"));
        }
        printf("%s%s\n", desc ? "\n    " : "", desc ? desc : "");
    }
    return EXIT_OK;
}

int ctl_verb_resources(Ctl *ctl, char **args, int n)
{
    _cleanup_json_ yajl_val res = NULL, tmpl = NULL;
    int code = list_all(ctl, mcpc_list_resources, "resources", &res);

    if (code != EXIT_OK ||
        (code = list_all(ctl, mcpc_list_resource_templates, "resourceTemplates", &tmpl)) != EXIT_OK)
        return code;
    if (ctl->json) {
        yajl_val o = json_object_new();
        _cleanup_free_ char *text = NULL;
        json_object_set(o, "resources", json_copy(res));
        json_object_set(o, "resourceTemplates", json_copy(tmpl));
        text = json_to_string(o);
        printf("%s\n", text);
        json_free(o);
        return EXIT_OK;
    }
    for (size_t i = 0; i < json_array_len(res); i++) {
        yajl_val r = json_array_at(res, i);
        const char *mime = json_get_string(r, "mimeType");
        printf("%s  %s%s%s%s\n", json_get_string(r, "uri"), json_get_string(r, "name"),
               mime ? " (" : "", mime ? mime : "", mime ? ")" : "");
    }
    for (size_t i = 0; i < json_array_len(tmpl); i++) {
        yajl_val t = json_array_at(tmpl, i);
        printf("%s  %s (template)\n", json_get_string(t, "uriTemplate"),
               json_get_string(t, "name"));
    }
    return EXIT_OK;
}

int ctl_verb_read(Ctl *ctl, char **args, int n)
{
    _cleanup_free_ char *out = NULL;
    _cleanup_json_ yajl_val r = NULL;
    yajl_val contents;
    int rc = mcpc_read_resource(ctl->client, args[0], &out);

    if (rc != 0)
        return ctl_fail(ctl, rc);
    if (ctl->json) {
        printf("%s\n", out);
        return EXIT_OK;
    }
    r = json_parse(out, NULL);
    contents = json_get_array(r, "contents");
    for (size_t i = 0; i < json_array_len(contents); i++) {
        yajl_val c = json_array_at(contents, i);
        const char *text = json_get_string(c, "text"), *blob = json_get_string(c, "blob");
        if (text)
            printf("%s%s", text, *text && text[strlen(text) - 1] == '\n' ? "" : "\n");
        else
            printf("(%zu bytes of base64 data, %s)\n", blob ? strlen(blob) : 0,
                   json_get_string(c, "mimeType") ? json_get_string(c, "mimeType") : "binary");
    }
    return EXIT_OK;
}

/* prompt NAME [KEY=VALUE... | JSON]: the prompt's messages. */
int ctl_verb_prompt(Ctl *ctl, char **args, int n)
{
    _cleanup_free_ char *out = NULL, *json = NULL;
    _cleanup_json_ yajl_val r = NULL;
    yajl_val msgs;
    int rc;

    if (n == 2 && args[1][0] == '{') {
        json = xstrdup(args[1]);
    } else if (n > 1) {
        yajl_val o = json_object_new();
        for (int i = 1; i < n; i++) {
            char *eq = strchr(args[i], '=');
            if (!eq) {
                fprintf(stderr,
                        "mcpctl: prompt arguments are KEY=VALUE or one JSON object, "
                        "not \"%s\"\n",
                        args[i]);
                json_free(o);
                return EXIT_USAGE;
            }
            _cleanup_free_ char *key = xstrndup(args[i], (size_t)(eq - args[i]));
            json_object_set(o, key, json_string_new(eq + 1));
        }
        json = json_to_string(o);
        json_free(o);
    }
    if ((rc = mcpc_get_prompt(ctl->client, args[0], json, &out)) != 0)
        return ctl_fail(ctl, rc);
    if (ctl->json) {
        printf("%s\n", out);
        return EXIT_OK;
    }
    r = json_parse(out, NULL);
    msgs = json_get_array(r, "messages");
    for (size_t i = 0; i < json_array_len(msgs); i++) {
        yajl_val m = json_array_at(msgs, i), c = json_get_object(m, "content");
        const char *text = json_get_string(c, "text");
        _cleanup_free_ char *raw = text ? NULL : json_to_string(c);
        printf("%s: %s\n", json_get_string(m, "role"), text ? text : raw);
    }
    return EXIT_OK;
}
