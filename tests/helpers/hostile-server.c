// SPDX-License-Identifier: MIT
// hostile-server: an MCP stdio server whose answers test mcpd's JSON limits on purpose.

/*
 * Options (any mix):
 *   --deep-schema N   tools/list offers "deep_schema", its inputSchema nested N levels
 *   --deep-result N   tool "deep" answers with a structuredContent nested N levels
 *   --big-result N    tool "big" answers with a structuredContent array of N zeros
 *   --bad-utf8        tool "bad_utf8" has a description of invalid UTF-8 (overlong, raw and
 *                     escaped surrogates, past U+10FFFF, truncated) and answers with such text
 *   --stray N         around each echo answer: N replies to ids never sent, one with the id's
 *                     other JSON type, N requests to the client and N log notifications, and
 *                     after it a duplicate answer ("again:")
 *   --log-flood N     tool "flood" first sends N log notifications (level "error") of 1 KiB
 * Tool "echo" always answers "echo:" and its argument "text". Standalone on purpose (libc and
 * yajl only), like fake-server.c, so it shares no JSON code with mcpd.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#include "tests/helpers/stdio-server.h"

/* The invalid sequences a description carries: each must come out as U+FFFD, never raw. */
#define BAD_UTF8_TEXT                                                                              \
    "overlong \xc0\xaf, surrogate \xed\xa0\x80, escaped \\ud800 and \\udc00x, big "                \
    "\xf4\x90\x80\x80"                                                                             \
    ", cut \xe2\x82"

typedef struct Options {
    long deep_schema, deep_result, big_result;
    int bad_utf8;
    long stray; /* --stray N: around each echo answer, N of each stray message (see put_strays) */
    long log_flood; /* --log-flood N: tool "flood" sends N log notifications before its answer */
} Options;

static void put_repeat(const char *s, long n)
{
    for (long i = 0; i < n; i++)
        fputs(s, stdout);
}

/* A value nested n levels: arrays around a 0. */
static void put_nested(long n)
{
    put_repeat("[", n);
    putchar('0');
    put_repeat("]", n);
}

static void begin_result(yajl_val id)
{
    fputs("{\"jsonrpc\":\"2.0\",\"id\":", stdout);
    stdio_server_put_id(id);
    fputs(",\"result\":", stdout);
}

static void end_message(void)
{
    fputs("}\n", stdout);
    fflush(stdout);
}

static void tools_list(const Options *o, yajl_val id)
{
    static const char echo[] = "{\"name\":\"echo\",\"description\":\"Echo text\",\"inputSchema\":"
                               "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":"
                               "\"string\"}}}}";

    begin_result(id);
    fputs("{\"tools\":[", stdout);
    fputs(echo, stdout);
    fputs(",{\"name\":\"deep\",\"inputSchema\":{\"type\":\"object\"}}", stdout);
    fputs(",{\"name\":\"big\",\"inputSchema\":{\"type\":\"object\"}}", stdout);
    fputs(",{\"name\":\"flood\",\"inputSchema\":{\"type\":\"object\"}}", stdout);
    if (o->bad_utf8)
        fputs(",{\"name\":\"bad_utf8\",\"description\":\"" BAD_UTF8_TEXT
              "\",\"inputSchema\":{\"type\":\"object\"}}",
              stdout);
    if (o->deep_schema > 0) {
        fputs(",{\"name\":\"deep_schema\",\"inputSchema\":{\"type\":\"object\",\"x\":", stdout);
        put_nested(o->deep_schema);
        fputs("}}", stdout);
    }
    fputs("]}", stdout);
    end_message();
}

static void text_result(yajl_val id, const char *prefix, const char *text)
{
    begin_result(id);
    printf("{\"content\":[{\"type\":\"text\",\"text\":\"%s%s\"}]}", prefix, text);
    end_message();
}

/*
 * --stray N, before an echo answer: N replies to ids never sent (integers and strings), N
 * errors with id null, the answer's id as the other JSON type, N requests to the client
 * (sampling, roots, elicitation and an unknown method, none waited for) and N log
 * notifications.
 */
static void put_strays(const Options *o, yajl_val id)
{
    static const char *const methods[] = {"sampling/createMessage", "roots/list",
                                          "elicitation/create", "hostile/unknown"};

    for (long i = 0; i < o->stray; i++) {
        printf("{\"jsonrpc\":\"2.0\",\"id\":%ld,\"result\":{}}\n", 1000000000L + i);
        printf("{\"jsonrpc\":\"2.0\",\"id\":\"never-%ld\",\"error\":{\"code\":-1,"
               "\"message\":\"x\"}}\n",
               i);
        /* What a server answers to a line it could not read: an error with id null. */
        printf("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"
               "\"message\":\"Parse error %ld\"}}\n",
               i);
        for (size_t k = 0; k < sizeof(methods) / sizeof(*methods); k++)
            printf("{\"jsonrpc\":\"2.0\",\"id\":\"h-%ld-%zu\",\"method\":\"%s\",\"params\":{}}\n",
                   i, k, methods[k]);
        printf("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{"
               "\"level\":\"info\",\"data\":\"stray %ld\"}}\n",
               i);
    }
    if (o->stray > 0 && YAJL_IS_NUMBER(id))
        printf("{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"result\":{\"content\":[{\"type\":\"text\","
               "\"text\":\"wrong id type\"}]}}\n",
               id->u.number.r);
    fflush(stdout);
}

static void tools_call(const Options *o, yajl_val id, yajl_val params)
{
    const char *name_path[] = {"name", NULL}, *text_path[] = {"arguments", "text", NULL};
    yajl_val name = yajl_tree_get(params, name_path, yajl_t_string);
    yajl_val text = yajl_tree_get(params, text_path, yajl_t_string);
    const char *n = name ? name->u.string : "";

    if (strcmp(n, "deep") == 0 || strcmp(n, "big") == 0) {
        begin_result(id);
        fputs("{\"content\":[{\"type\":\"text\",\"text\":\"x\"}],\"structuredContent\":{\"v\":",
              stdout);
        if (n[0] == 'd') {
            put_nested(o->deep_result);
        } else {
            fputs("[0", stdout);
            put_repeat(",0", o->big_result - 1);
            putchar(']');
        }
        fputs("}}", stdout);
        end_message();
    } else if (strcmp(n, "bad_utf8") == 0) {
        text_result(id, "", BAD_UTF8_TEXT);
    } else if (strcmp(n, "flood") == 0) {
        char data[1024];
        memset(data, 'x', sizeof(data) - 1);
        data[sizeof(data) - 1] = '\0';
        for (long i = 0; i < o->log_flood; i++)
            printf("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{"
                   "\"level\":\"error\",\"data\":\"%ld %s\"}}\n",
                   i, data);
        text_result(id, "", "flooded");
    } else {
        /* Plain text only: the tests send letters and digits. */
        put_strays(o, id);
        text_result(id, "echo:", text ? text->u.string : "");
        if (o->stray > 0)
            text_result(id, "again:", text ? text->u.string : ""); /* a duplicate answer */
    }
}

static void handle(const Options *o, yajl_val msg)
{
    const char *method_path[] = {"method", NULL}, *id_path[] = {"id", NULL},
               *params_path[] = {"params", NULL};
    yajl_val method = yajl_tree_get(msg, method_path, yajl_t_string);
    yajl_val id = yajl_tree_get(msg, id_path, yajl_t_any);
    yajl_val params = yajl_tree_get(msg, params_path, yajl_t_any);
    const char *m = method ? method->u.string : "";

    if (!id)
        return; /* notifications need no answer */
    if (strcmp(m, "initialize") == 0) {
        begin_result(id);
        fputs("{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"tools\":{}},"
              "\"serverInfo\":{\"name\":\"hostile\",\"version\":\"1\"}}",
              stdout);
        end_message();
    } else if (strcmp(m, "tools/list") == 0) {
        tools_list(o, id);
    } else if (strcmp(m, "tools/call") == 0) {
        tools_call(o, id, params);
    } else if (strcmp(m, "ping") == 0) {
        begin_result(id);
        fputs("{}", stdout);
        end_message();
    } else {
        fputs("{\"jsonrpc\":\"2.0\",\"id\":", stdout);
        stdio_server_put_id(id);
        fputs(",\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}\n", stdout);
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    Options o = {0};
    char *line = NULL;
    size_t cap = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        long *target = strcmp(a, "--deep-schema") == 0   ? &o.deep_schema
                       : strcmp(a, "--deep-result") == 0 ? &o.deep_result
                       : strcmp(a, "--big-result") == 0  ? &o.big_result
                       : strcmp(a, "--stray") == 0       ? &o.stray
                       : strcmp(a, "--log-flood") == 0   ? &o.log_flood
                                                         : NULL;
        if (target && i + 1 < argc) {
            *target = strtol(argv[++i], NULL, 10);
        } else if (strcmp(a, "--bad-utf8") == 0) {
            o.bad_utf8 = 1;
        } else {
            fprintf(stderr, "hostile-server: unknown option %s\n", a);
            return 2;
        }
    }
    if (o.big_result < 1)
        o.big_result = 1;
    while (getline(&line, &cap, stdin) > 0) {
        char err[256];
        yajl_val msg = yajl_tree_parse(line, err, sizeof(err));
        if (!msg) {
            fprintf(stderr, "hostile-server: bad request: %s\n", err);
            continue;
        }
        handle(&o, msg);
        yajl_tree_free(msg);
    }
    free(line);
    return 0;
}
