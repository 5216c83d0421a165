// SPDX-License-Identifier: MIT
// surface-server: an MCP stdio server with prompts, resources, templates, subscriptions,
// completion and an MCP Apps tool, for the surface tests. Standalone: libc and yajl only.
//
// Options: --name NAME (in every text it returns, default "s"), --resources N (extra resources
// mem://NAME/item<i>, listed 100 per page), --tools-only (no prompts, resources or completion),
// --init-delay-ms N (a slow start: initialize is answered after N ms), --reverse (resources listed
// in reverse order).

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <yajl/yajl_tree.h>

/* Resources per page of resources/list, so that a long list is paged. */
#define PAGE 100
/* Longest line read: tests send small requests. */
#define MAX_LINE (1 << 20)
/* URIs the server remembers as subscribed. */
#define MAX_SUBS 64

static const char *name = "s";
static long n_extra;
static bool tools_only;
static bool extra_prompt;
static long init_delay_ms;
/* --reverse: resources listed in reverse order (mcpd's merged order must not depend on it) */
static bool reverse;
static char *subs[MAX_SUBS];
static int n_subs;

static void put_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", *s);
        else
            putchar(*s);
    }
    putchar('"');
}

static void put_id(yajl_val id)
{
    if (YAJL_IS_STRING(id))
        put_str(id->u.string);
    else if (YAJL_IS_INTEGER(id))
        printf("%lld", id->u.number.i);
    else
        printf("null");
}

static void begin(yajl_val id)
{
    printf("{\"jsonrpc\":\"2.0\",\"id\":");
    put_id(id);
    printf(",\"result\":");
}

static void end(void)
{
    printf("}\n");
    fflush(stdout);
}

static void error(yajl_val id, int code, const char *msg)
{
    printf("{\"jsonrpc\":\"2.0\",\"id\":");
    put_id(id);
    printf(",\"error\":{\"code\":%d,\"message\":", code);
    put_str(msg);
    printf("}}\n");
    fflush(stdout);
}

static const char *get_str(yajl_val o, const char *a, const char *b)
{
    const char *path[] = {a, b, NULL};
    yajl_val v = yajl_tree_get(o, path, yajl_t_string);

    return v ? v->u.string : NULL;
}

static void initialize(yajl_val id)
{
    if (init_delay_ms > 0) {
        struct timespec ts = {init_delay_ms / 1000, (init_delay_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    begin(id);
    printf("{\"protocolVersion\":\"2025-11-25\",\"serverInfo\":{\"name\":");
    put_str(name);
    printf(",\"version\":\"1\"},\"capabilities\":{\"tools\":{}");
    if (!tools_only)
        printf(",\"prompts\":{\"listChanged\":true},\"resources\":{\"subscribe\":true,"
               "\"listChanged\":true},\"completions\":{}");
    printf("},\"instructions\":\"Use %s well.\"}", name);
    end();
}

static void tools_list(yajl_val id)
{
    begin(id);
    printf("{\"tools\":[{\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}},"
           "{\"name\":\"widget\",\"inputSchema\":{\"type\":\"object\"},"
           "\"_meta\":{\"ui\":{\"resourceUri\":\"ui://widget/main.html\"}}},"
           "{\"name\":\"touch\",\"inputSchema\":{\"type\":\"object\"}},"
           "{\"name\":\"subs\",\"inputSchema\":{\"type\":\"object\"}},"
           "{\"name\":\"change\",\"inputSchema\":{\"type\":\"object\"}}]}");
    end();
}

static bool subscribed(const char *uri)
{
    for (int i = 0; i < n_subs; i++)
        if (!strcmp(subs[i], uri))
            return true;
    return false;
}

static void text_result(yajl_val id, const char *text)
{
    begin(id);
    printf("{\"content\":[{\"type\":\"text\",\"text\":");
    put_str(text);
    printf("}]}");
    end();
}

static void tools_call(yajl_val id, yajl_val params)
{
    const char *tool = get_str(params, "name", NULL);
    const char *uri = get_str(params, "arguments", "uri");
    char buf[256];

    if (!tool) {
        error(id, -32602, "no tool name");
    } else if (!strcmp(tool, "echo")) {
        const char *text = get_str(params, "arguments", "text");
        snprintf(buf, sizeof(buf), "echo from %s", name);
        text_result(id, text ? text : buf);
    } else if (!strcmp(tool, "widget")) {
        begin(id);
        printf("{\"content\":[{\"type\":\"text\",\"text\":\"see the link\"},"
               "{\"type\":\"resource_link\",\"uri\":\"mem://shared\",\"name\":\"shared\"},"
               "{\"type\":\"resource\",\"resource\":{\"uri\":\"ui://widget/main.html\","
               "\"text\":\"<p>inline</p>\"}}]}");
        end();
    } else if (!strcmp(tool, "touch") && uri) {
        /* An update for a subscribed URI only, as the spec asks. */
        if (subscribed(uri)) {
            printf("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/updated\","
                   "\"params\":{\"uri\":");
            put_str(uri);
            printf("}}\n");
        }
        text_result(id, subscribed(uri) ? "updated" : "not subscribed");
    } else if (!strcmp(tool, "subs")) {
        snprintf(buf, sizeof(buf), "%d", n_subs);
        text_result(id, buf);
    } else if (!strcmp(tool, "change")) {
        extra_prompt = true;
        printf("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/prompts/list_changed\"}\n");
        text_result(id, "changed");
    } else {
        error(id, -32602, "unknown tool");
    }
}

static void prompts_list(yajl_val id)
{
    begin(id);
    printf("{\"prompts\":[{\"name\":\"greet\",\"description\":\"Say hello\","
           "\"arguments\":[{\"name\":\"who\",\"required\":true}]}%s]}",
           extra_prompt ? ",{\"name\":\"extra\"}" : "");
    end();
}

static void prompts_get(yajl_val id, yajl_val params)
{
    const char *prompt = get_str(params, "name", NULL);
    const char *who = get_str(params, "arguments", "who");
    char buf[256];

    if (!prompt || strcmp(prompt, "greet")) {
        error(id, -32602, "unknown prompt");
        return;
    }
    snprintf(buf, sizeof(buf), "Hello %s from %s", who ? who : "nobody", name);
    begin(id);
    printf("{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":");
    put_str(buf);
    printf("}},{\"role\":\"user\",\"content\":{\"type\":\"resource\",\"resource\":"
           "{\"uri\":\"mem://shared\",\"text\":\"shared\"}}}]}");
    end();
}

static void resources_list(yajl_val id, yajl_val params)
{
    const char *cursor = get_str(params, "cursor", NULL);
    long from = cursor ? atol(cursor) : 0, i;

    static const char shared[] = "{\"uri\":\"mem://shared\",\"name\":\"shared\"}",
                      widget[] = "{\"uri\":\"ui://widget/main.html\",\"name\":\"widget\","
                                 "\"mimeType\":\"text/html;profile=mcp-app\"}";
    long last;

    begin(id);
    printf("{\"resources\":[");
    if (!from)
        printf("%s,%s%s", reverse ? widget : shared, reverse ? shared : widget, n_extra ? "," : "");
    last = n_extra < from + PAGE ? n_extra : from + PAGE;
    for (i = from; i < last; i++)
        printf("%s{\"uri\":\"mem://%s/item%ld\",\"name\":\"item%ld\"}", i > from ? "," : "", name,
               reverse ? last - 1 - (i - from) : i, reverse ? last - 1 - (i - from) : i);
    printf("]");
    if (i < n_extra)
        printf(",\"nextCursor\":\"%ld\"", i);
    printf("}");
    end();
}

static void templates_list(yajl_val id)
{
    begin(id);
    printf("{\"resourceTemplates\":[{\"uriTemplate\":\"doc://%s/{id}\",\"name\":\"doc\"}]}", name);
    end();
}

static void resources_read(yajl_val id, yajl_val params)
{
    const char *uri = get_str(params, "uri", NULL);
    char prefix[128], buf[512];

    snprintf(prefix, sizeof(prefix), "doc://%s/", name);
    if (!uri) {
        error(id, -32602, "no uri");
        return;
    }
    if (!strcmp(uri, "ui://widget/main.html"))
        snprintf(buf, sizeof(buf), "<html><body>widget of %s</body></html>", name);
    else if (!strcmp(uri, "mem://shared"))
        snprintf(buf, sizeof(buf), "shared from %s", name);
    else if (!strncmp(uri, prefix, strlen(prefix)))
        snprintf(buf, sizeof(buf), "doc %s from %s", uri + strlen(prefix), name);
    else if (!strncmp(uri, "mem://", 6) && strstr(uri, "/item"))
        snprintf(buf, sizeof(buf), "item from %s", name);
    else {
        error(id, -32002, "Resource not found");
        return;
    }
    begin(id);
    printf("{\"contents\":[{\"uri\":");
    put_str(uri);
    printf(",\"mimeType\":\"%s\",\"text\":",
           strncmp(uri, "ui://", 5) ? "text/plain" : "text/html;profile=mcp-app");
    put_str(buf);
    printf("}]}");
    end();
}

static void subscribe(yajl_val id, yajl_val params, bool on)
{
    const char *uri = get_str(params, "uri", NULL);

    if (!uri) {
        error(id, -32602, "no uri");
        return;
    }
    for (int i = 0; i < n_subs; i++)
        if (!strcmp(subs[i], uri)) {
            if (!on) {
                free(subs[i]);
                subs[i] = subs[--n_subs];
            }
            on = false;
            break;
        }
    if (on && n_subs < MAX_SUBS)
        subs[n_subs++] = strdup(uri);
    begin(id);
    printf("{}");
    end();
}

static void complete(yajl_val id, yajl_val params)
{
    static const char *const who[] = {"alice", "albert", "bob"};
    static const char *const ids[] = {"1", "2", "10"};
    const char *type = get_str(params, "ref", "type");
    const char *value = get_str(params, "argument", "value");
    const char *const *set = type && !strcmp(type, "ref/prompt") ? who : ids;
    bool first = true;

    begin(id);
    printf("{\"completion\":{\"values\":[");
    for (int i = 0; i < 3; i++)
        if (!value || !strncmp(set[i], value, strlen(value))) {
            printf("%s", first ? "" : ",");
            put_str(set[i]);
            first = false;
        }
    printf("]}}");
    end();
}

static void handle(yajl_val msg)
{
    const char *method = get_str(msg, "method", NULL);
    const char *ip[] = {"id", NULL}, *pp[] = {"params", NULL};
    yajl_val id = yajl_tree_get(msg, ip, yajl_t_any), params = yajl_tree_get(msg, pp, yajl_t_any);

    if (!method || !id)
        return; /* notifications and responses */
    if (!strcmp(method, "initialize"))
        initialize(id);
    else if (!strcmp(method, "ping")) {
        begin(id);
        printf("{}");
        end();
    } else if (!strcmp(method, "tools/list"))
        tools_list(id);
    else if (!strcmp(method, "tools/call"))
        tools_call(id, params);
    else if (tools_only)
        error(id, -32601, "Method not found");
    else if (!strcmp(method, "prompts/list"))
        prompts_list(id);
    else if (!strcmp(method, "prompts/get"))
        prompts_get(id, params);
    else if (!strcmp(method, "resources/list"))
        resources_list(id, params);
    else if (!strcmp(method, "resources/templates/list"))
        templates_list(id);
    else if (!strcmp(method, "resources/read"))
        resources_read(id, params);
    else if (!strcmp(method, "resources/subscribe"))
        subscribe(id, params, true);
    else if (!strcmp(method, "resources/unsubscribe"))
        subscribe(id, params, false);
    else if (!strcmp(method, "completion/complete"))
        complete(id, params);
    else
        error(id, -32601, "Method not found");
}

int main(int argc, char **argv)
{
    static char line[MAX_LINE];

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--name") && i + 1 < argc)
            name = argv[++i];
        else if (!strcmp(argv[i], "--resources") && i + 1 < argc)
            n_extra = atol(argv[++i]);
        else if (!strcmp(argv[i], "--init-delay-ms") && i + 1 < argc)
            init_delay_ms = atol(argv[++i]);
        else if (!strcmp(argv[i], "--reverse"))
            reverse = true;
        else if (!strcmp(argv[i], "--tools-only"))
            tools_only = true;
        else {
            fprintf(stderr, "surface-server: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    while (fgets(line, sizeof(line), stdin)) {
        char err[256];
        yajl_val msg = yajl_tree_parse(line, err, sizeof(err));
        if (msg)
            handle(msg);
        yajl_tree_free(msg);
    }
    return 0;
}
