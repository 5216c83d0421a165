// SPDX-License-Identifier: MIT
// test-setup-vscode: `mcpctl setup vscode` over a real-shaped user mcp.json of VS Code: the
// servers mcpd can start move, with their sandbox, and stay contained under mcpd (the real
// bubblewrap); those holding ${input:...} stay with VS Code; the file stays VS Code's; undo.

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "tests/integration/harness.h"

/* Under /var/tmp: a contained server gets a /tmp of its own, so nothing of the test may be there.
 */
static char base[] = "/var/tmp/mcpd-it-setup-vscode-XXXXXX";
static char *home, *proj, *out_dir, *probe, *vscode_file, *imported_file;

#define SSH_SECRET     "ssh-secret-of-the-test"
#define PRIVATE_SECRET "private-data-of-the-test"

/*
 * A user mcp.json as VS Code writes it (tabs, comments, "inputs" before "servers"), with the
 * kinds of entries users have: a plain one, one sandboxed with its own block, one sandboxed by
 * the file's block, one asking for an input, and a remote one.
 */
static char *vscode_text(void)
{
    return xasprintf(
        "// VS Code: MCP: Open User Configuration\n"
        "{\n"
        "\t\"inputs\": [\n"
        "\t\t{\n"
        "\t\t\t\"type\": \"promptString\",\n"
        "\t\t\t\"id\": \"api-key\",\n"
        "\t\t\t\"description\": \"Example API key\",\n"
        "\t\t\t\"password\": true\n"
        "\t\t}\n"
        "\t],\n"
        "\t\"servers\": {\n"
        "\t\t\"vsplain\": {\n"
        "\t\t\t\"type\": \"stdio\",\n"
        "\t\t\t\"command\": \"%1$s\",\n"
        "\t\t\t\"cwd\": \"%2$s\"\n"
        "\t\t},\n"
        "\t\t\"vsown\": {\n"
        "\t\t\t\"type\": \"stdio\",\n"
        "\t\t\t\"command\": \"%1$s\",\n"
        "\t\t\t\"cwd\": \"%2$s\",\n"
        "\t\t\t\"sandboxEnabled\": true,\n"
        "\t\t\t\"sandbox\": {\"filesystem\": {\"denyRead\": [\"${userHome}/proj/private\"]}}\n"
        "\t\t},\n"
        "\t\t\"vsfile\": {\n"
        "\t\t\t\"type\": \"stdio\",\n"
        "\t\t\t\"command\": \"%1$s\",\n"
        "\t\t\t\"cwd\": \"%2$s\",\n"
        "\t\t\t\"sandboxEnabled\": true\n"
        "\t\t},\n"
        "\t\t// asks in VS Code's window\n"
        "\t\t\"vsinput\": {\n"
        "\t\t\t\"type\": \"stdio\",\n"
        "\t\t\t\"command\": \"%1$s\",\n"
        "\t\t\t\"env\": {\"API_KEY\": \"${input:api-key}\"}\n"
        "\t\t},\n"
        "\t\t\"vsremote\": {\n"
        "\t\t\t\"type\": \"http\",\n"
        "\t\t\t\"url\": \"http://127.0.0.1:9/mcp\"\n"
        "\t\t}\n"
        "\t},\n"
        "\t\"sandbox\": {\"filesystem\": {\"allowWrite\": [\"%3$s\"]}}\n"
        "}\n",
        probe, proj, out_dir);
}

static void write_fixtures(void)
{
    _cleanup_free_ char *p = NULL, *text = NULL;

    home = xasprintf("%s/home", base);
    proj = xasprintf("%s/proj", home);
    out_dir = xasprintf("%s/out", base);
    probe = xstrdup(getenv("PROBE_SERVER"));
    p = paths_join(home, ".ssh/id_test");
    h_write_text(p, SSH_SECRET "\n");
    free(p), p = paths_join(proj, "private/data");
    h_write_text(p, PRIVATE_SECRET "\n");
    free(p), p = paths_join(out_dir, ".keep");
    h_write_text(p, "\n");
    free(p), p = xasprintf("%s/config/mcpd/mcpd.json", base);
    h_write_text(p, "{\"start\": \"eager\"}");
    vscode_file = xasprintf("%s/config/Code/User/mcp.json", base);
    imported_file = xasprintf("%s/config/mcpd/imported/vscode.json", base);
    text = vscode_text();
    h_write_text(vscode_file, text);
    free(p), p = xasprintf("%s/config", base);
    setenv("XDG_CONFIG_HOME", p, 1);
    free(p), p = xasprintf("%s/cache", base);
    setenv("XDG_CACHE_HOME", p, 1);
    free(p), p = xasprintf("%s/state", base);
    setenv("XDG_STATE_HOME", p, 1);
    setenv("HOME", home, 1);
}

#define CTL(st, args, ...) h_shell(st, "'%s' " args " 2>&1", getenv("MCPCTL_BINARY"), ##__VA_ARGS__)

static yajl_val parse_file(const char *path)
{
    _cleanup_free_ char *text = h_read_file(path);

    return text ? json_parse(text, NULL) : NULL;
}

/*
 * The file as VS Code reads it (its reference, "Configuration file"): an object with "servers"
 * (each entry a "type" of stdio, http or sse; stdio with a "command" string and "args" of
 * strings), "inputs" as before; here also the same "sandbox" block, and mcpd's entry.
 */
static void check_vscode_shape(yajl_val now, yajl_val orig)
{
    yajl_val servers = json_get_object(now, "servers");

    CHECK_MSG(servers, "no \"servers\" object after setup");
    CHECK(json_equal(json_get(now, "inputs"), json_get(orig, "inputs")));
    CHECK(json_equal(json_get(now, "sandbox"), json_get(orig, "sandbox")));
    for (size_t i = 0; servers && i < servers->u.object.len; i++) {
        yajl_val e = servers->u.object.values[i];
        const char *type = json_get_string(e, "type");
        CHECK_MSG(type && (streq(type, "stdio") || streq(type, "http") || streq(type, "sse")),
                  "%s has no VS Code type", servers->u.object.keys[i]);
        if (!type || !streq(type, "stdio"))
            continue;
        CHECK_MSG(json_get_string(e, "command"), "%s has no command", servers->u.object.keys[i]);
        yajl_val args = json_get(e, "args");
        for (size_t j = 0; j < json_array_len(args); j++)
            CHECK(YAJL_IS_STRING(json_array_at(args, j)));
    }
    yajl_val bridge = json_get(servers, "mcpd");
    CHECK_MSG(bridge && streq(json_get_string(bridge, "type") ?: "", "stdio") &&
                  strstr(json_get_string(bridge, "command") ?: "", "mcpctl"),
              "no stdio entry for mcpd's bridge");
    CHECK_MSG(servers && servers->u.object.len == 2 &&
                  json_equal(json_get(servers, "vsinput"),
                             json_get(json_get(orig, "servers"), "vsinput")),
              "VS Code's file should hold the bridge and vsinput as it was");
}

/* mcpd's copy: the servers mcpd can start, in VS Code's shape, each with its sandbox. */
static void check_imported(yajl_val orig)
{
    _cleanup_json_ yajl_val imp = parse_file(imported_file);
    yajl_val moved = json_get_object(imp, "mcpServers"), os = json_get(orig, "servers");

    CHECK_MSG(moved && moved->u.object.len == 4, "imported: %zu servers",
              moved ? moved->u.object.len : 0);
    CHECK(json_equal(json_get(moved, "vsplain"), json_get(os, "vsplain")));
    CHECK(json_equal(json_get(moved, "vsown"), json_get(os, "vsown")));
    CHECK(json_equal(json_get(moved, "vsremote"), json_get(os, "vsremote")));
    CHECK(!json_get(moved, "vsinput"));
    /* The file's block is folded into the entry that used it. */
    CHECK_MSG(json_equal(json_get(json_get(moved, "vsfile"), "sandbox"), json_get(orig, "sandbox")),
              "vsfile did not take the file's sandbox block");
    CHECK(YAJL_IS_TRUE(json_get(json_get(moved, "vsfile"), "sandboxEnabled")));
}

static char *probe_call(mcpc_client *c, const char *server, const char *tool, const char *path)
{
    _cleanup_free_ char *name = xasprintf("mcp_%s_%s", server, tool);
    _cleanup_free_ char *args = xasprintf("{\"path\": \"%s\"}", path);
    int is_error = 0;
    char *text = h_call_text(c, name, args, &is_error);

    return text ? text : xstrdup("(no answer)");
}

#define EXPECT(c, server, tool, path, want)                                                        \
    do {                                                                                           \
        _cleanup_free_ char *got_ = probe_call(c, server, tool, path);                             \
        CHECK_MSG(startswith(got_, want), "%s %s %s: got \"%s\", want \"%s\"", server, tool, path, \
                  got_, want);                                                                     \
    } while (0)

/* Under mcpd, the moved servers run contained as VS Code contained them, the plain one not. */
static void check_contained(Harness *h)
{
    _cleanup_free_ char *ssh = paths_join(home, ".ssh/id_test");
    _cleanup_free_ char *priv = paths_join(proj, "private/data");
    _cleanup_free_ char *in_out = paths_join(out_dir, "written-by-vsfile");
    _cleanup_free_ char *outside = paths_join(home, "written-outside");
    _cleanup_free_ char *in_proj = paths_join(proj, "written-by-vsown");
    mcpc_client *c = h_client(h, "setup-vscode");

    for (const char *const *s = (const char *const[]){"vsplain", "vsown", "vsfile", NULL}; *s; s++)
        CHECK_MSG(h_wait_state(c, *s, "connected", H_WAIT_MS), "%s never connected", *s);
    _cleanup_json_ yajl_val st = h_status(c);
    CHECK_MSG(!json_get(h_server(st, "vsplain"), "sandbox"), "vsplain is shown contained");
    CHECK_MSG(streq(json_get_string(json_get(h_server(st, "vsown"), "sandbox"), "profile") ?: "",
                    "project-write"),
              "vsown is not shown contained");
    CHECK_MSG(streq(json_get_string(json_get(h_server(st, "vsfile"), "sandbox"), "profile") ?: "",
                    "project-write"),
              "vsfile is not shown contained");

    EXPECT(c, "vsplain", "read", ssh, "OK:" SSH_SECRET);
    EXPECT(c, "vsown", "read", ssh, "ERR:Permission denied");
    EXPECT(c, "vsown", "read", priv, "ERR:Permission denied");
    EXPECT(c, "vsown", "write", in_proj, "OK:written");
    EXPECT(c, "vsown", "write", outside, "ERR:Read-only file system");
    EXPECT(c, "vsfile", "read", ssh, "ERR:Permission denied");
    EXPECT(c, "vsfile", "write", in_out, "OK:written");
    EXPECT(c, "vsfile", "write", outside, "ERR:Read-only file system");
    CHECK_MSG(access(outside, F_OK) < 0, "a contained server wrote %s", outside);
    mcpc_free(c);

    int status;
    _cleanup_free_ char *cfg = CTL(&status, "--socket '%s' --json config", h->socket);
    CHECK_MSG(cfg && strstr(cfg, "VS Code (moved here by mcpctl setup)"),
              "config does not name the moved servers' source: %s", cfg ? cfg : "");
}

static void test_setup_undo(Harness *h)
{
    _cleanup_free_ char *orig_text = h_read_file(vscode_file);
    _cleanup_json_ yajl_val orig = json_parse(orig_text, NULL);
    int status;

    _cleanup_free_ char *dry = CTL(&status, "setup vscode --dry-run");
    CHECK_MSG(status == 0 && dry && strstr(dry, "+++"), "dry run exited %d: %s", status, dry);
    _cleanup_free_ char *same = h_read_file(vscode_file);
    CHECK_MSG(same && streq(same, orig_text), "--dry-run changed VS Code's file");

    _cleanup_free_ char *out = CTL(&status, "setup vscode");
    CHECK_MSG(status == 0, "setup vscode exited %d: %s", status, out ? out : "");
    CHECK_MSG(out && strstr(out, "\"vsinput\" stays in") && strstr(out, "${input:"),
              "setup does not say vsinput stays with VS Code: %s", out ? out : "");
    _cleanup_free_ char *after = h_read_file(vscode_file);
    _cleanup_json_ yajl_val now = after ? json_parse(after, NULL) : NULL;
    CHECK_MSG(now, "VS Code's file does not parse after setup:\n%s", after ? after : "");
    CHECK_MSG(after &&
                  startswith(after, "// VS Code: MCP: Open User Configuration\n{\n\t\"inputs\""),
              "setup did not keep the file's own bytes around its servers:\n%s", after);
    check_vscode_shape(now, orig);
    check_imported(orig);

    h_start(h, NULL);
    check_contained(h);
    h_stop(h);

    /* Again: nothing to change. */
    _cleanup_free_ char *again = CTL(&status, "setup vscode");
    CHECK_MSG(status == 0 && again && strstr(again, "already set up; nothing to change"),
              "a second setup exited %d: %s", status, again ? again : "");
    _cleanup_free_ char *after2 = h_read_file(vscode_file);
    CHECK(after2 && after && streq(after2, after));

    _cleanup_free_ char *undo = CTL(&status, "setup --undo vscode");
    CHECK_MSG(status == 0, "undo exited %d: %s", status, undo ? undo : "");
    _cleanup_free_ char *restored = h_read_file(vscode_file);
    CHECK_MSG(restored && streq(restored, orig_text),
              "undo did not restore the file byte for byte");
    CHECK_MSG(access(imported_file, F_OK) < 0, "undo left %s", imported_file);
}

/* VS Code rewrote its file after setup (an input edited): undo puts the servers back into it. */
static void test_undo_after_vscode_wrote(void)
{
    _cleanup_free_ char *orig_text = h_read_file(vscode_file);
    _cleanup_json_ yajl_val orig = json_parse(orig_text, NULL);
    int status;

    _cleanup_free_ char *out = CTL(&status, "setup vscode");
    CHECK_MSG(status == 0, "setup vscode exited %d: %s", status, out ? out : "");
    _cleanup_free_ char *set_up = h_read_file(vscode_file);
    _cleanup_free_ char *edited = set_up ? xstrdup(set_up) : NULL;
    char *at = edited ? strstr(edited, "Example API key") : NULL;
    CHECK(at);
    if (at)
        memcpy(at, "Changed API key", strlen("Changed API key"));
    h_write_text(vscode_file, edited ? edited : "");

    _cleanup_free_ char *undo = CTL(&status, "setup --undo vscode");
    CHECK_MSG(status == 0, "undo exited %d: %s", status, undo ? undo : "");
    _cleanup_json_ yajl_val now = parse_file(vscode_file);
    CHECK_MSG(json_equal(json_get(now, "servers"), json_get(orig, "servers")),
              "undo did not put VS Code's servers back");
    _cleanup_free_ char *text = h_read_file(vscode_file);
    CHECK_MSG(text && strstr(text, "Changed API key"), "undo lost VS Code's own edit");

    /* A server added next to the bridge since: undo refuses and changes nothing. */
    _cleanup_free_ char *out2 = CTL(&status, "setup vscode");
    CHECK_MSG(status == 0, "setup vscode exited %d: %s", status, out2 ? out2 : "");
    _cleanup_free_ char *set_up2 = h_read_file(vscode_file);
    char *servers = set_up2 ? strstr(set_up2, "\"servers\": {") : NULL;
    CHECK(servers);
    if (servers) {
        _cleanup_free_ char *added =
            xasprintf("%.*s\"new\": {\"type\": \"stdio\", \"command\": \"x\"}, %s",
                      (int)(servers - set_up2 + strlen("\"servers\": {")), set_up2,
                      servers + strlen("\"servers\": {"));
        h_write_text(vscode_file, added);
        _cleanup_free_ char *undo2 = CTL(&status, "setup --undo vscode");
        CHECK_MSG(status != 0 && undo2 && strstr(undo2, "nothing restored"),
                  "undo with a server added exited %d: %s", status, undo2 ? undo2 : "");
        _cleanup_free_ char *still = h_read_file(vscode_file);
        CHECK(still && streq(still, added));
    }
}

int main(void)
{
    Harness h;

    if (!getenv("PROBE_SERVER")) {
        fprintf(stderr, "test-setup-vscode: PROBE_SERVER is not set (run through meson test)\n");
        return 99;
    }
    if (access("/usr/bin/bwrap", X_OK) < 0 && !getenv("CI")) {
        fprintf(stderr, "test-setup-vscode: no bubblewrap\n");
        return 77;
    }
    h_setup(&h, "setup-vscode");
    if (!mkdtemp(base)) {
        perror("test-setup-vscode: mkdtemp");
        return 99;
    }
    write_fixtures();
    test_setup_undo(&h);
    test_undo_after_vscode_wrote();
    h_teardown(&h);
    h_sh("rm -rf '%s'", base);
    free(home), free(proj), free(out_dir), free(probe), free(vscode_file), free(imported_file);
    return h_finish("test-setup-vscode");
}
