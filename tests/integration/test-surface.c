// SPDX-License-Identifier: MIT
// test-surface: prompts, resources, templates, subscriptions, completion and MCP Apps through
// mcpd, with two servers that collide on a URI, and the bad input the issue names.

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/harness.h"

#define CONTROL "mcp_alpha_echo"
/* Silence that ends a raw read of one answer: generous, a loaded box may be slow. */
#define RAW_QUIET_MS 3000
/* Resources the big server lists, and the per-server bound set for this test. */
#define BIG_RESOURCES  "3000"
#define MAX_PER_SERVER 1200
/* Time to wait for a notification that must come, and to be sure one that must not has not. */
#define NOTE_WAIT_MS  20000
#define NOTE_QUIET_MS 1500
/*
 * The slow server's start-up: far beyond the start-up gate (250 ms), so the first lists come
 * from the cache, and well within its timeout (60 s), so reads wait for it.
 */
#define SLOW_INIT_MS 8000

/* Notifications a client received, one "method params" line each. */
typedef struct Notes {
    StrBuf text;
} Notes;

static void on_note(void *ud, const char *method, const char *params)
{
    Notes *n = ud;

    strbuf_printf(&n->text, "%s %s\n", method, params ? params : "");
}

static bool wait_note(mcpc_client *c, Notes *n, const char *needle, int ms)
{
    for (int waited = 0; waited <= ms; waited += 50) {
        if (n->text.data && strstr(n->text.data, needle))
            return true;
        mcpc_process(c, 50);
    }
    return n->text.data && strstr(n->text.data, needle);
}

static yajl_val request(mcpc_client *c, const char *method, const char *params)
{
    _cleanup_free_ char *out = NULL;

    if (mcpc_request(c, method, params, &out) != 0)
        return NULL;
    return json_parse(out, NULL);
}

/* The error message of a request that must fail ("" when it did not). */
static char *request_error(mcpc_client *c, const char *method, const char *params)
{
    _cleanup_free_ char *out = NULL;

    if (mcpc_request(c, method, params, &out) == 0)
        return xstrdup("");
    return xstrdup(mcpc_errmsg(c));
}

static const char *text_of(yajl_val r)
{
    yajl_val first = json_array_at(json_get_array(r, "contents"), 0);
    return json_get_string(first, "text");
}

static yajl_val find_by(yajl_val arr, const char *key, const char *value)
{
    for (size_t i = 0; i < json_array_len(arr); i++)
        if (streq(json_get_string(json_array_at(arr, i), key), value))
            return json_array_at(arr, i);
    return NULL;
}

static int64_t server_int(mcpc_client *c, const char *server, const char *key)
{
    _cleanup_json_ yajl_val st = h_status(c);
    int64_t v = -1;
    json_get_int(h_server(st, server), key, &v);
    return v;
}

/* The subscriptions the server itself holds (its "subs" tool). */
static int upstream_subs(mcpc_client *c, const char *server)
{
    _cleanup_free_ char *tool = xasprintf("mcp_%s_subs", server);
    _cleanup_free_ char *t = h_call_text(c, tool, "{}", NULL);
    return atoi(t);
}

static void test_capabilities(Harness *h)
{
    int fd = h_raw_connect(h);
    _cleanup_free_ char *out = NULL;
    _cleanup_json_ yajl_val r = NULL;
    yajl_val caps, res;
    const char *instr;

    CHECK(fd >= 0 && h_raw_write(fd, h_raw_initialize, strlen(h_raw_initialize)));
    out = h_raw_read(fd, RAW_QUIET_MS);
    r = json_parse(out, NULL);
    caps = json_get_object(json_get_object(r, "result"), "capabilities");
    res = json_get_object(caps, "resources");
    CHECK_MSG(json_get_object(caps, "prompts") && res && json_get_object(caps, "completions"),
              "capabilities: %s", out);
    CHECK_MSG(json_get(res, "subscribe") && YAJL_IS_TRUE(json_get(res, "subscribe")),
              "resources.subscribe: %s", out);
    instr = json_get_string(json_get_object(r, "result"), "instructions");
    CHECK_MSG(instr && strstr(instr, "## alpha\nUse alpha well.") &&
                  strstr(instr, "## beta\nUse beta well."),
              "instructions: %s", instr ? instr : "(none)");
    close(fd);
}

static void test_prompts(mcpc_client *c)
{
    _cleanup_json_ yajl_val l = request(c, "prompts/list", NULL);
    _cleanup_json_ yajl_val g = NULL;
    yajl_val prompts = json_get_array(l, "prompts"), p, msgs;

    /* greet from alpha, beta and big */
    CHECK_MSG(json_array_len(prompts) == 3, "prompts: %zu", json_array_len(prompts));
    p = find_by(prompts, "name", "mcp_beta_greet");
    CHECK(p && streq(json_get_string(json_get_object(p, "_meta"), "mcpd/server"), "beta"));
    CHECK(p && streq(json_get_string(json_get_object(p, "_meta"), "mcpd/prompt"), "greet"));
    CHECK(find_by(prompts, "name", "mcp_alpha_greet"));
    g = request(c, "prompts/get", "{\"name\":\"mcp_beta_greet\",\"arguments\":{\"who\":\"ann\"}}");
    msgs = json_get_array(g, "messages");
    CHECK_MSG(streq(json_get_string(json_get_object(json_array_at(msgs, 0), "content"), "text"),
                    "Hello ann from beta"),
              "prompts/get routed to beta");
    /* beta lost the collision on mem://shared: its embedded resource is renamed too. */
    yajl_val emb = json_get_object(json_get_object(json_array_at(msgs, 1), "content"), "resource");
    CHECK_MSG(streq(json_get_string(emb, "uri"), "mcpd://beta/mem://shared"), "embedded uri %s",
              json_get_string(emb, "uri"));
}

static void test_resources(mcpc_client *c)
{
    _cleanup_json_ yajl_val l = request(c, "resources/list", NULL);
    _cleanup_json_ yajl_val t = request(c, "resources/templates/list", NULL);
    _cleanup_json_ yajl_val r1 = request(c, "resources/read", "{\"uri\":\"mem://shared\"}");
    _cleanup_json_ yajl_val r2 =
        request(c, "resources/read", "{\"uri\":\"mcpd://beta/mem://shared\"}");
    _cleanup_json_ yajl_val r3 = request(c, "resources/read", "{\"uri\":\"doc://beta/7\"}");
    yajl_val res = json_get_array(l, "resources");

    CHECK(find_by(res, "uri", "mem://shared"));
    CHECK(find_by(res, "uri", "mcpd://beta/mem://shared"));
    CHECK(find_by(res, "uri", "ui://alpha/widget/main.html"));
    CHECK(find_by(res, "uri", "ui://beta/widget/main.html"));
    CHECK(find_by(json_get_array(t, "resourceTemplates"), "uriTemplate", "doc://beta/{id}"));
    CHECK_MSG(streq(text_of(r1), "shared from alpha"), "r1 %s", text_of(r1));
    CHECK_MSG(streq(text_of(r2), "shared from beta"), "r2 %s", text_of(r2));
    CHECK_MSG(streq(text_of(r3), "doc 7 from beta"), "template read %s", text_of(r3));
    CHECK(streq(json_get_string(json_array_at(json_get_array(r2, "contents"), 0), "uri"),
                "mcpd://beta/mem://shared"));
}

/* MCP Apps: the tool's ui:// resource reads back, and result links are in the agent's view. */
static void test_apps(mcpc_client *c)
{
    _cleanup_free_ char *tools = NULL, *call = NULL;
    _cleanup_json_ yajl_val tl = NULL, cr = NULL, html = NULL;
    yajl_val w, ui, content;
    const char *uri;

    CHECK(mcpc_list_tools(c, &tools) == 0);
    tl = json_parse(tools, NULL);
    w = find_by(json_get_array(tl, "tools"), "name", "mcp_beta_widget");
    ui = json_get_object(json_get_object(w, "_meta"), "ui");
    uri = json_get_string(ui, "resourceUri");
    CHECK_MSG(streq(uri, "ui://beta/widget/main.html"), "resourceUri %s", uri ? uri : "-");
    _cleanup_free_ char *params = xasprintf("{\"uri\":\"%s\"}", uri ? uri : "");
    html = request(c, "resources/read", params);
    CHECK_MSG(text_of(html) && strstr(text_of(html), "widget of beta"), "html %s",
              text_of(html) ? text_of(html) : "-");
    CHECK(mcpc_call_tool(c, "mcp_beta_widget", "{}", &call, NULL) == 0);
    cr = json_parse(call, NULL);
    content = json_get_array(cr, "content");
    CHECK_MSG(streq(json_get_string(json_array_at(content, 1), "uri"), "mcpd://beta/mem://shared"),
              "resource_link: %s", call);
    CHECK_MSG(streq(json_get_string(json_get_object(json_array_at(content, 2), "resource"), "uri"),
                    "ui://beta/widget/main.html"),
              "embedded: %s", call);
}

static void test_completion(mcpc_client *c)
{
    _cleanup_json_ yajl_val p =
        request(c, "completion/complete",
                "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"mcp_alpha_greet\"},"
                "\"argument\":{\"name\":\"who\",\"value\":\"al\"}}");
    _cleanup_json_ yajl_val r =
        request(c, "completion/complete",
                "{\"ref\":{\"type\":\"ref/resource\",\"uri\":\"doc://beta/{id}\"},"
                "\"argument\":{\"name\":\"id\",\"value\":\"1\"}}");
    yajl_val pv = json_get_array(json_get_object(p, "completion"), "values");
    yajl_val rv = json_get_array(json_get_object(r, "completion"), "values");

    CHECK_MSG(json_array_len(pv) == 2 && streq(json_array_at(pv, 0)->u.string, "alice"),
              "prompt completion: %zu values", json_array_len(pv));
    CHECK_MSG(json_array_len(rv) == 2 && streq(json_array_at(rv, 1)->u.string, "10"),
              "template completion: %zu values", json_array_len(rv));
}

/* Two agents on one URI: one upstream subscription, updates to exactly those subscribed. */
static void test_subscriptions(Harness *h, mcpc_client *ctl)
{
    Notes na = {STRBUF_INIT}, nb = {STRBUF_INIT}, nc = {STRBUF_INIT};
    mcpc_client *a = h_client(h, "sub-a"), *b = h_client(h, "sub-b"), *x = h_client(h, "sub-x");
    _cleanup_json_ yajl_val r1 = NULL, r2 = NULL, r3 = NULL;
    const char *touch = "{\"uri\":\"mem://shared\"}";
    const char *note = "notifications/resources/updated {\"uri\":\"mem://shared\"}";

    mcpc_set_notify(a, on_note, &na);
    mcpc_set_notify(b, on_note, &nb);
    mcpc_set_notify(x, on_note, &nc);
    r1 = request(a, "resources/subscribe", "{\"uri\":\"mem://shared\"}");
    r2 = request(b, "resources/subscribe", "{\"uri\":\"mem://shared\"}");
    CHECK(r1 && r2);
    CHECK_MSG(upstream_subs(ctl, "alpha") == 1, "alpha holds %d subscriptions",
              upstream_subs(ctl, "alpha"));
    _cleanup_free_ char *t1 = h_call_text(ctl, "mcp_alpha_touch", touch, NULL);
    CHECK_MSG(streq(t1, "updated"), "touch: %s", t1);
    CHECK_MSG(wait_note(a, &na, note, NOTE_WAIT_MS), "a got: %s", na.text.data);
    CHECK_MSG(wait_note(b, &nb, note, NOTE_WAIT_MS), "b got: %s", nb.text.data);
    CHECK(!wait_note(x, &nc, "resources/updated", NOTE_QUIET_MS));

    /* b leaves: a still hears, b does not. */
    r3 = request(b, "resources/unsubscribe", "{\"uri\":\"mem://shared\"}");
    CHECK(r3);
    strbuf_reset(&na.text);
    strbuf_reset(&nb.text);
    CHECK(upstream_subs(ctl, "alpha") == 1);
    _cleanup_free_ char *t2 = h_call_text(ctl, "mcp_alpha_touch", touch, NULL);
    (void)t2; /* only its cleanup is wanted */
    CHECK(wait_note(a, &na, note, NOTE_WAIT_MS));
    CHECK(!wait_note(b, &nb, "resources/updated", NOTE_QUIET_MS));

    /* The last agent leaves: the server is unsubscribed. */
    mcpc_free(a);
    int subs = -1;
    for (int waited = 0; waited < H_WAIT_MS && (subs = upstream_subs(ctl, "alpha")) != 0;
         waited += 100)
        h_sleep_ms(100);
    CHECK_MSG(subs == 0, "alpha still holds %d subscriptions after the last agent left", subs);

    /* A subscription outlives its server's reconnect. */
    _cleanup_json_ yajl_val r4 = request(b, "resources/subscribe", "{\"uri\":\"doc://beta/5\"}");
    CHECK(r4);
    _cleanup_json_ yajl_val d = request(ctl, "mcpd/disconnect", "{\"server\":\"beta\"}");
    (void)d; /* only its cleanup is wanted */
    _cleanup_free_ char *gone =
        request_error(b, "resources/read", "{\"uri\":\"ui://beta/widget/main.html\"}");
    CHECK_MSG(strstr(gone, "not connected") && strstr(gone, "beta"), "read while gone: %s", gone);
    _cleanup_json_ yajl_val cn = request(ctl, "mcpd/connect", "{\"server\":\"beta\"}");
    (void)cn; /* only its cleanup is wanted */
    CHECK(h_wait_state(ctl, "beta", "connected", H_WAIT_MS));
    for (int waited = 0; waited < H_WAIT_MS && upstream_subs(ctl, "beta") != 1; waited += 100)
        h_sleep_ms(100);
    CHECK_MSG(upstream_subs(ctl, "beta") == 1, "beta resubscribed: %d", upstream_subs(ctl, "beta"));
    strbuf_reset(&nb.text);
    _cleanup_free_ char *t3 =
        h_call_text(ctl, "mcp_beta_touch", "{\"uri\":\"doc://beta/5\"}", NULL);
    (void)t3; /* only its cleanup is wanted */
    CHECK_MSG(wait_note(b, &nb, "\"doc://beta/5\"", NOTE_WAIT_MS), "b after reconnect: %s",
              nb.text.data);
    mcpc_free(b);
    mcpc_free(x);
    strbuf_deinit(&na.text);
    strbuf_deinit(&nb.text);
    strbuf_deinit(&nc.text);
}

/* The output of mcpctl with args (NULL-terminated), run against this harness's mcpd. */
static char *mcpctl(Harness *h, const char *args)
{
    _cleanup_free_ char *cmd =
        xasprintf("'%s' --socket '%s' %s 2>&1", getenv("MCPCTL_BINARY"), h->socket, args);
    FILE *f = popen(cmd, "r");
    StrBuf sb = STRBUF_INIT;
    char buf[4096];
    size_t n;

    while (f && (n = fread(buf, 1, sizeof(buf), f)) > 0)
        strbuf_append(&sb, buf, n);
    if (f)
        pclose(f);
    return sb.data ? strbuf_detach(&sb, NULL) : xstrdup("");
}

static void on_async(void *ud, unsigned long long id, int status, const char *json)
{
    char **out = ud;

    (void)id;
    *out = xasprintf("%d %s", status, json ? json : "");
}

/* The clients: libmcpc's calls (blocking and async) and mcpctl's verbs. */
static void test_clients(Harness *h, mcpc_client *c)
{
    _cleanup_free_ char *read = NULL, *prompt = NULL, *comp = NULL, *async = NULL;
    _cleanup_free_ char *o1 = mcpctl(h, "read ui://beta/widget/main.html");
    _cleanup_free_ char *o2 = mcpctl(h, "prompt mcp_alpha_greet who=zed");
    _cleanup_free_ char *o3 = mcpctl(h, "prompts");
    _cleanup_free_ char *o4 = mcpctl(h, "resources");
    _cleanup_free_ char *o5 = mcpctl(h, "read nosuch://x");

    CHECK(mcpc_read_resource(c, "doc://alpha/3", &read) == 0 && strstr(read, "doc 3 from alpha"));
    CHECK(mcpc_get_prompt(c, "mcp_beta_greet", "{\"who\":\"kim\"}", &prompt) == 0 &&
          strstr(prompt, "Hello kim from beta"));
    CHECK(mcpc_complete(c, "{\"type\":\"ref/prompt\",\"name\":\"mcp_beta_greet\"}", "who", "b",
                        &comp) == 0 &&
          strstr(comp, "\"bob\""));
    CHECK(mcpc_read_resource_async(c, "mem://shared", on_async, &async, NULL) == 0);
    for (int waited = 0; !async && waited < H_WAIT_MS; waited += 50)
        mcpc_process(c, 50);
    CHECK_MSG(async && !strncmp(async, "0 ", 2) && strstr(async, "shared from alpha"), "async: %s",
              async ? async : "(none)");
    CHECK_MSG(strstr(o1, "<html><body>widget of beta</body></html>"), "mcpctl read: %s", o1);
    CHECK_MSG(strstr(o2, "user: Hello zed from alpha"), "mcpctl prompt: %s", o2);
    CHECK_MSG(strstr(o3, "mcp_beta_greet who=") && strstr(o3, "Say hello"), "mcpctl prompts: %s",
              o3);
    CHECK_MSG(strstr(o4, "mcpd://beta/mem://shared  shared") &&
                  strstr(o4, "doc://beta/{id}  doc (template)"),
              "mcpctl resources: %s", o4);
    CHECK_MSG(strstr(o5, "Unknown resource: nosuch://x"), "mcpctl read unknown: %s", o5);
}

#define PASS_INIT(server)                                                                          \
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"     \
    "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"pass\",\"version\":\"1\"},"     \
    "\"_meta\":{\"mcpd/server\":\"" server "\"}}}\n"

/* The answer with this id among the lines a raw client read. */
static yajl_val answer(const char *out, int id)
{
    char key[32];
    int n = snprintf(key, sizeof(key), "\"id\":%d,", id);

    for (const char *l = out; l && *l;) {
        const char *nl = strchr(l, '\n');
        size_t len = nl ? (size_t)(nl - l) : strlen(l);
        if (memmem(l, len, key, (size_t)n)) {
            _cleanup_free_ char *line = xstrndup(l, len);
            return json_parse(line, NULL);
        }
        l = nl ? nl + 1 : NULL;
    }
    return NULL;
}

/* One server under its own names: initialize _meta["mcpd/server"], and mcpctl bridge --server. */
static void test_passthrough(Harness *h)
{
    static const char reqs[] =
        PASS_INIT("beta") "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n"
                          "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"prompts/list\"}\n"
                          "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/list\"}\n"
                          "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/read\",\"params\":"
                          "{\"uri\":\"ui://widget/main.html\"}}\n"
                          "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":"
                          "{\"name\":\"widget\"}}\n";
    int fd = h_raw_connect(h);
    _cleanup_free_ char *out = NULL, *bad = NULL;

    CHECK(fd >= 0 && h_raw_write(fd, reqs, strlen(reqs)));
    out = h_raw_read(fd, RAW_QUIET_MS);
    close(fd);
    _cleanup_json_ yajl_val init = answer(out, 0), tools = answer(out, 1), prompts = answer(out, 2);
    _cleanup_json_ yajl_val res = answer(out, 3), rd = answer(out, 4), call = answer(out, 5);
    const char *instr = json_get_string(json_get_object(init, "result"), "instructions");
    CHECK_MSG(streq(instr, "Use beta well."), "passthrough instructions: %s", out);
    CHECK_MSG(
        json_array_len(json_get_array(json_get_object(tools, "result"), "tools")) == 5 &&
            find_by(json_get_array(json_get_object(tools, "result"), "tools"), "name", "widget"),
        "passthrough tools: %s", out);
    CHECK(find_by(json_get_array(json_get_object(prompts, "result"), "prompts"), "name", "greet"));
    CHECK(find_by(json_get_array(json_get_object(res, "result"), "resources"), "uri",
                  "mem://shared"));
    CHECK_MSG(text_of(json_get_object(rd, "result")) &&
                  strstr(text_of(json_get_object(rd, "result")), "widget of beta"),
              "passthrough read: %s", out);
    yajl_val content = json_get_array(json_get_object(call, "result"), "content");
    CHECK_MSG(streq(json_get_string(json_array_at(content, 1), "uri"), "mem://shared"),
              "passthrough call keeps the server's URIs: %s", out);

    /* A server that is not there is refused, by name. */
    fd = h_raw_connect(h);
    CHECK(fd >= 0 && h_raw_write(fd, PASS_INIT("nosuch"), strlen(PASS_INIT("nosuch"))));
    bad = h_raw_read(fd, RAW_QUIET_MS);
    close(fd);
    CHECK_MSG(bad && strstr(bad, "no server \\\"nosuch\\\" in this agent's workspace"),
              "unknown passthrough server: %s", bad ? bad : "-");

    /* The bridge option: a host sees beta's tools under beta's names. */
    _cleanup_free_ char *args = xasprintf("bridge --server beta < '%s/pass-in.jsonl'", h->dir);
    _cleanup_free_ char *in = xasprintf("%s/pass-in.jsonl", h->dir);
    FILE *f = fopen(in, "w");
    CHECK(f);
    if (f) {
        fputs(h_raw_initialize, f);
        fputs("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n", f);
        fclose(f);
    }
    _cleanup_free_ char *bridged = mcpctl(h, args);
    _cleanup_json_ yajl_val bt = answer(bridged, 1);
    CHECK_MSG(find_by(json_get_array(json_get_object(bt, "result"), "tools"), "name", "echo") &&
                  !strstr(bridged, "mcp_alpha_echo"),
              "bridge --server: %s", bridged);
}

static void test_list_changed(Harness *h, mcpc_client *ctl)
{
    Notes n = {STRBUF_INIT};
    mcpc_client *a = h_client(h, "changes");
    _cleanup_json_ yajl_val first = request(a, "prompts/list", NULL);
    (void)first; /* only its cleanup is wanted */
    _cleanup_json_ yajl_val after = NULL;

    mcpc_set_notify(a, on_note, &n);
    _cleanup_free_ char *t = h_call_text(ctl, "mcp_alpha_change", "{}", NULL);
    (void)t; /* only its cleanup is wanted */
    CHECK_MSG(wait_note(a, &n, "notifications/prompts/list_changed", NOTE_WAIT_MS), "got: %s",
              n.text.data);
    after = request(a, "prompts/list", NULL);
    CHECK(find_by(json_get_array(after, "prompts"), "name", "mcp_alpha_extra"));
    mcpc_free(a);
    strbuf_deinit(&n.text);
}

/* Paged, bounded: the big server's list stops at the bound and status says so. */
static void test_bounds(mcpc_client *c)
{
    _cleanup_free_ char *cursor = NULL;
    size_t total = 0, pages = 0;

    do {
        _cleanup_free_ char *params =
            cursor ? xasprintf("{\"cursor\":\"%s\"}", cursor) : xstrdup("{}");
        _cleanup_json_ yajl_val page = request(c, "resources/list", params);
        const char *next = json_get_string(page, "nextCursor");
        CHECK(page);
        if (!page)
            break;
        total += json_array_len(json_get_array(page, "resources"));
        pages++;
        free(cursor);
        cursor = next ? xstrdup(next) : NULL;
    } while (cursor && pages < 100);
    /* alpha and beta list 2 each; big is cut at MAX_PER_SERVER. */
    CHECK_MSG(total == MAX_PER_SERVER + 4 && pages > 1, "%zu resources over %zu pages", total,
              pages);
    CHECK(server_int(c, "big", "resources") == MAX_PER_SERVER);
    _cleanup_json_ yajl_val st = h_status(c);
    const char *lim = json_get_string(h_server(st, "big"), "resourcesLimit");
    CHECK_MSG(lim && strstr(lim, "maxToolsPerServer"), "resourcesLimit: %s", lim ? lim : "-");
}

static void test_bad_input(mcpc_client *c)
{
    static const struct {
        const char *method, *params, *expect;
    } cases[] = {
        {"resources/read", "{\"uri\":\"not a uri\"}", "is not a URI"},
        {"resources/read", "{\"uri\":\"nosuch://x\"}", "Unknown resource: nosuch://x"},
        {"resources/read", "{\"uri\":\"doc://nobody/1\"}", "Unknown resource"},
        {"resources/subscribe", "{\"uri\":\"nosuch://x\"}", "Unknown resource"},
        {"resources/read", "{\"uri\":\"mem://nothing\"}", "Unknown resource"},
        {"prompts/get", "{\"name\":\"mcp_nobody_greet\"}", "Unknown prompt"},
        {"resources/list", "{\"cursor\":\"x1\"}", "invalid cursor"},
        {"completion/complete", "{\"ref\":{\"type\":\"ref/other\"}}", "params.ref"},
        {"resources/subscribe", "{\"uri\":\"ui://plain/x\"}", "does not offer resource"},
    };
    for (size_t i = 0; i < N_ELEMENTS(cases); i++) {
        _cleanup_free_ char *e = request_error(c, cases[i].method, cases[i].params);
        CHECK_MSG(strstr(e, cases[i].expect), "%s %s: got \"%s\"", cases[i].method, cases[i].params,
                  e);
    }
    /* An over-long URI is refused by its length, not routed. */
    StrBuf sb = STRBUF_INIT;
    strbuf_puts(&sb, "{\"uri\":\"mem://");
    for (int i = 0; i < 9000; i++)
        strbuf_putc(&sb, 'a');
    strbuf_puts(&sb, "\"}");
    _cleanup_free_ char *e = request_error(c, "resources/read", sb.data);
    CHECK_MSG(strstr(e, "at most 8192"), "long uri: %s", e);
    strbuf_deinit(&sb);
}

/* A workspace whose servers offer only tools advertises no prompts, resources or completion. */
static void test_tools_only(Harness *h, const char *server)
{
    _cleanup_free_ char *cfg = xasprintf(
        "{\"mcpServers\":{\"plain\":{\"command\":\"%s\",\"args\":[\"--tools-only\"]}}}", server);
    int fd;
    _cleanup_free_ char *out = NULL;
    _cleanup_json_ yajl_val r = NULL;
    yajl_val caps;

    h_write_config(h, cfg);
    h_start(h, NULL);
    mcpc_client *c = h_client(h, "plain");
    h_settle(h, c, "plain", NULL);
    fd = h_raw_connect(h);
    CHECK(fd >= 0 && h_raw_write(fd, h_raw_initialize, strlen(h_raw_initialize)));
    out = h_raw_read(fd, RAW_QUIET_MS);
    r = json_parse(out, NULL);
    caps = json_get_object(json_get_object(r, "result"), "capabilities");
    CHECK_MSG(caps && !json_get(caps, "prompts") && !json_get(caps, "resources") &&
                  !json_get(caps, "completions") && json_get(caps, "tools"),
              "tools-only capabilities: %s", out);
    close(fd);
    _cleanup_free_ char *e = request_error(c, "resources/read", "{\"uri\":\"mem://shared\"}");
    CHECK_MSG(strstr(e, "Unknown resource"), "read without resource servers: %s", e);
    mcpc_free(c);
    h_check_healthy(h, "tools-only", "mcp_plain_echo");
    CHECK(h_stop(h) == 0);
}

/*
 * A slow server's prompts, resources and capabilities come from the cache at the gate, marked
 * deferred; a read of its resource waits for it to connect.
 */
static void test_cache_gate(Harness *h, const char *server)
{
    _cleanup_free_ char *cfg =
        xasprintf("{\"mcpServers\":{\"slow\":{\"command\":\"%s\",\"timeout\":60000,"
                  "\"args\":[\"--name\",\"slow\",\"--init-delay-ms\",\"%d\"]}}}",
                  server, SLOW_INIT_MS);
    _cleanup_free_ char *file = NULL, *out = NULL;
    (void)file; /* only its cleanup is wanted */
    mcpc_client *c;

    h_write_config(h, cfg);
    h_start(h, NULL);
    c = h_client(h, "cold");
    h_settle(h, c, "slow", NULL);
    /* The surface cache is written after its debounce; wait for the file. */
    for (int waited = 0; waited < H_WAIT_MS && !out; waited += 100) {
        _cleanup_free_ char *cmd =
            xasprintf("ls %s/cache/mcpd/surface/ 2>/dev/null | grep -c '^slow-'", h->dir);
        FILE *f = popen(cmd, "r");
        char buf[16] = "";
        if (f && fgets(buf, sizeof(buf), f) && atoi(buf) > 0)
            out = xstrdup(buf);
        if (f)
            pclose(f);
        if (!out)
            h_sleep_ms(100);
    }
    CHECK_MSG(out, "no surface cache file was written");
    mcpc_free(c);
    CHECK(h_stop(h) == 0);

    h_start(h, NULL);
    int fd = h_raw_connect(h);
    CHECK(fd >= 0 && h_raw_write(fd, h_raw_initialize, strlen(h_raw_initialize)));
    static const char list[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"prompts/list\"}\n";
    CHECK(h_raw_write(fd, list, strlen(list)));
    _cleanup_free_ char *early = h_raw_read(fd, RAW_QUIET_MS);
    close(fd);
    _cleanup_json_ yajl_val init = answer(early, 0), pl = answer(early, 1);
    yajl_val caps = json_get_object(json_get_object(init, "result"), "capabilities");
    yajl_val p =
        find_by(json_get_array(json_get_object(pl, "result"), "prompts"), "name", "mcp_slow_greet");
    CHECK_MSG(json_get_object(caps, "prompts") && json_get_object(caps, "resources"),
              "capabilities from the cache: %s", early);
    CHECK_MSG(p && YAJL_IS_TRUE(json_get(json_get_object(p, "_meta"), "mcpd/deferred")),
              "deferred prompt from the cache: %s", early);
    c = h_client(h, "warm");
    _cleanup_json_ yajl_val rd =
        request(c, "resources/read", "{\"uri\":\"ui://slow/widget/main.html\"}");
    CHECK_MSG(text_of(rd) && strstr(text_of(rd), "widget of slow"), "read waited for slow: %s",
              text_of(rd) ? text_of(rd) : mcpc_errmsg(c));
    h_settle(h, c, "slow", NULL);
    mcpc_free(c);
    h_check_healthy(h, "cache-gate", "mcp_slow_echo");
    CHECK(h_stop(h) == 0);
}

int main(void)
{
    Harness h;
    const char *server = getenv("SURFACE_SERVER");
    mcpc_client *c;

    if (!server) {
        fprintf(stderr, "SURFACE_SERVER is not set\n");
        return 1;
    }
    h_setup(&h, "surface");
    _cleanup_free_ char *cfg = xasprintf(
        "{\"mcpServers\":{"
        "\"alpha\":{\"command\":\"%s\",\"args\":[\"--name\",\"alpha\"]},"
        "\"beta\":{\"command\":\"%s\",\"args\":[\"--name\",\"beta\"]},"
        "\"plain\":{\"command\":\"%s\",\"args\":[\"--tools-only\"]},"
        "\"big\":{\"command\":\"%s\",\"args\":[\"--name\",\"big\",\"--resources\",\"" BIG_RESOURCES
        "\"]}}}",
        server, server, server, server);
    h_write_config(&h, cfg);
    _cleanup_free_ char *settings =
        xasprintf("{\"maxToolsPerServer\": %d, \"start\": \"eager\"}", MAX_PER_SERVER);
    h_write_settings(&h, settings);
    h_start(&h, NULL);
    c = h_client(&h, "main");
    h_settle(&h, c, "alpha", "beta", "plain", "big", NULL);
    /* The lists after the connect come in the background: wait for the last of them. */
    for (int waited = 0; waited < H_WAIT_MS && server_int(c, "big", "resources") < MAX_PER_SERVER;
         waited += 100)
        h_sleep_ms(100);

    test_capabilities(&h);
    test_prompts(c);
    test_resources(c);
    test_apps(c);
    test_completion(c);
    test_bounds(c);
    test_bad_input(c);
    test_clients(&h, c);
    test_passthrough(&h);
    test_subscriptions(&h, c);
    test_list_changed(&h, c);
    mcpc_free(c);
    h_check_healthy(&h, "surface", CONTROL);
    CHECK(h_stop(&h) == 0);

    test_tools_only(&h, server);
    test_cache_gate(&h, server);
    h_teardown(&h);
    return h_finish("test-surface");
}
