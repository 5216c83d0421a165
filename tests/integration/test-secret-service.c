// SPDX-License-Identifier: MIT
// test-secret-service: sign-ins kept in a real Secret Service (a private session bus with
// gnome-keyring-daemon, unlocked by the test): a login stores its tokens there and nowhere on
// disk, a restart finds them, a refresh updates them, an old token file is moved in once and
// removed, and removing the item makes the server needs-auth; an auth.credentialId credential
// of credentials.json is moved in once, read from there, and found again after a restart.

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "common/util.h"
#include "tests/integration/bg.h"
#include "tests/integration/harness.h"

#define CONTROL "mcp_steady_echo"
/* Access tokens live this long: the daemon refreshes after four fifths of it (3.2 s). */
#define TOKEN_LIFETIME_S  "4"
#define TOKEN_LIFETIME_MS 4000
/* The auth.credentialId credential of the server "cred", first in credentials.json. */
#define CRED_TOKEN "cred-token-of-the-test"

static char g_url[128];
static pid_t g_keyring_pid;

/* An untagged helper: the test's own environment, not a process of mcpd's. */
static pid_t spawn_untagged(char *const argv[], const char *log)
{
    _cleanup_free_ char *tag = xstrdup(getenv("MCPD_TEST_TAG"));
    pid_t pid;

    unsetenv("MCPD_TEST_TAG");
    pid = bg_spawn(argv, NULL, log);
    setenv("MCPD_TEST_TAG", tag, 1);
    return pid;
}

static bool have(const char *prog)
{
    _cleanup_free_ char *cmd = xasprintf("command -v %s >/dev/null 2>&1", prog);
    return system(cmd) == 0;
}

/* The entry (JSON text) the Secret Service holds for the server, or NULL. */
static char *keyring_entry(void)
{
    int st = -1;
    char *out = h_shell(&st,
                        "secret-tool lookup xdg:schema io.github.mcpd.OAuthToken "
                        "application mcpd resource '%s' 2>/dev/null",
                        g_url);
    if (st != 0 || !out || !*out) {
        free(out);
        return NULL;
    }
    return out;
}

/* The credential's item (its secret, JSON text), or NULL. */
static char *credential_item(void)
{
    int st = -1;
    char *out = h_shell(&st, "secret-tool lookup xdg:schema io.github.mcpd.Credential "
                             "application mcpd credential ct 2>/dev/null");
    if (st != 0 || !out || !*out) {
        free(out);
        return NULL;
    }
    return out;
}

static char *entry_field(const char *entry, const char *key)
{
    _cleanup_json_ yajl_val o = json_parse(entry ? entry : "", NULL);
    const char *v = json_get_string(o, key);
    return v ? xstrdup(v) : NULL;
}

/* The credential reaches the server "cred" (as OAUTH_ACCESS_TOKEN: a stdio server). */
static void check_credential(mcpc_client *c, const char *when)
{
    int is_error = -1;

    CHECK_MSG(h_wait_state(c, "cred", "connected", H_WAIT_MS), "%s: cred is not connected", when);
    _cleanup_free_ char *v =
        h_call_text(c, "mcp_cred_env", "{\"name\": \"OAUTH_ACCESS_TOKEN\"}", &is_error);
    CHECK_MSG(v && streq(v, CRED_TOKEN), "%s: cred got %s", when, v ? v : "(null)");
}

/* mcpctl disconnect NAME && mcpctl connect NAME: the next connection reads the keyring again. */
static void reconnect(mcpc_client *c, const char *server)
{
    _cleanup_free_ char *params = xasprintf("{\"server\":\"%s\"}", server);
    char *out = NULL;

    CHECK(mcpc_request(c, "mcpd/disconnect", params, &out) == 0);
    free(out);
    out = NULL;
    CHECK(mcpc_request(c, "mcpd/connect", params, &out) == 0);
    free(out);
}

/* Neither token is in any file of mcpd's (config, state, cache, its log). */
static void check_nowhere_on_disk(Harness *h, const char *at, const char *rt, const char *when)
{
    int st = -1;
    _cleanup_free_ char *out =
        h_shell(&st, "grep -rl -e '%s' -e '%s' '%s/state' '%s/config' '%s/cache' '%s' 2>/dev/null",
                at, rt, h->dir, h->dir, h->dir, h->log);
    CHECK_MSG(st == 1, "%s: a token is on disk in: %s", when, out ? out : "?");
}

static bool call_ok(mcpc_client *c)
{
    int is_error = -1;
    for (int waited = 0; waited < H_WAIT_MS; waited += 100) {
        _cleanup_free_ char *t = h_call_text(c, "mcp_o_whoami", NULL, &is_error);
        if (is_error == 0 && t && strstr(t, "signed-in call"))
            return true;
        h_sleep_ms(100);
    }
    return false;
}

static pid_t start_keyring(Harness *h)
{
    char bus[400], pw[400], log[400], addr[450];
    _cleanup_free_ char *gk_cmd = NULL;
    pid_t bus_pid, gk_pid;

    snprintf(bus, sizeof(bus), "%s/run/bus", h->dir);
    snprintf(log, sizeof(log), "%s/keyring.log", h->dir);
    snprintf(pw, sizeof(pw), "%s/keyring.pw", h->dir);
    snprintf(addr, sizeof(addr), "--address=unix:path=%s", bus);
    char *dbus_argv[] = {"dbus-daemon", "--session", "--nofork", "--nopidfile", addr, NULL};
    bus_pid = spawn_untagged(dbus_argv, log);
    for (int waited = 0; access(bus, F_OK) != 0 && waited < H_WAIT_MS; waited += 20)
        h_sleep_ms(20);
    snprintf(addr, sizeof(addr), "unix:path=%s", bus);
    setenv("DBUS_SESSION_BUS_ADDRESS", addr, 1);
    /* The keyring's files (encrypted) under the test's HOME; the password on its stdin. */
    h_sh("printf 'test-password' > '%s'", pw);
    gk_cmd = xasprintf("exec gnome-keyring-daemon --foreground --unlock --components=secrets "
                       "< '%s'",
                       pw);
    char *gk_argv[] = {"sh", "-c", gk_cmd, NULL};
    gk_pid = spawn_untagged(gk_argv, log);
    for (int waited = 0; waited < H_WAIT_MS; waited += 50) {
        int st = -1;
        _cleanup_free_ char *out =
            h_shell(&st, "dbus-send --session --print-reply --dest=org.freedesktop.DBus "
                         "/org/freedesktop/DBus org.freedesktop.DBus.NameHasOwner "
                         "string:org.freedesktop.secrets 2>/dev/null");
        if (out && strstr(out, "boolean true"))
            break;
        h_sleep_ms(50);
    }
    g_keyring_pid = gk_pid;
    return bus_pid;
}

int main(void)
{
    Harness h;
    const char *bin = getenv("OAUTH_SERVER");
    char port_file[400], srv_log[400], out_file[400], store[400], cred_file[400];
    _cleanup_free_ char *cfg = NULL, *out = NULL, *entry = NULL, *at = NULL, *rt = NULL;
    _cleanup_free_ char *entry2 = NULL, *rt2 = NULL, *at2 = NULL;
    pid_t pid, bus_pid;
    int port;
    mcpc_client *c;

    if (!have("dbus-daemon") || !have("gnome-keyring-daemon") || !have("secret-tool") ||
        !have("dbus-send")) {
        fprintf(stderr, "dbus-daemon, gnome-keyring-daemon, secret-tool or dbus-send missing "
                        "(bash .ci/deps installs them)\n");
        return getenv("CI") ? 1 : 77;
    }
    h_setup(&h, "secret-service");
    bus_pid = start_keyring(&h);
    snprintf(port_file, sizeof(port_file), "%s/oauth.port", h.dir);
    snprintf(srv_log, sizeof(srv_log), "%s/oauth.log", h.dir);
    snprintf(out_file, sizeof(out_file), "%s/oauth.out", h.dir);
    snprintf(store, sizeof(store), "%s/state/mcpd/oauth-tokens.json", h.dir);
    char *argv[] = {(char *)bin, "--port-file",  port_file,        "--log",
                    srv_log,     "--expires-in", TOKEN_LIFETIME_S, NULL};
    pid = spawn_untagged(argv, out_file);
    port = bg_wait_port_file(port_file, H_WAIT_MS);
    if (port < 0) {
        fprintf(stderr, "oauth-server did not start\n");
        return 99;
    }
    snprintf(g_url, sizeof(g_url), "http://127.0.0.1:%d/mcp", port);
    /* ${keyring:NAME} in mcpd's own file is the item's secret; in Claude Code's, text. */
    cfg = xasprintf("{\"mcpServers\": {\"steady\": {\"command\": \"%s\"}, \"o\": {\"url\": "
                    "\"%s\", \"timeout\": 20000},"
                    " \"kr\": {\"command\": \"%s\", \"env\": {\"FROM\": \"x-${keyring:kr-test}\"}},"
                    " \"krmiss\": {\"command\": \"%s\", \"env\": {\"FROM\": \"${keyring:none}\"}},"
                    " \"cred\": {\"command\": \"%s\", \"auth\": {\"type\": \"oauth\", "
                    "\"credentialId\": \"ct\"}},"
                    " \"bare\": {\"command\": \"%s\", \"auth\": {\"type\": \"oauth\", "
                    "\"credentialId\": \"bt\"}}}}",
                    h_fake(), g_url, h_fake(), h_fake(), h_fake(), h_fake());
    h_write_config(&h, cfg);
    snprintf(cred_file, sizeof(cred_file), "%s/config/mcpd/credentials.json", h.dir);
    h_sh("umask 077 && printf '{\"ct\": {\"accessToken\": \"%s\"}}' > '%s'", CRED_TOKEN, cred_file);
    /* A credential stored by hand: the bare token, as secret-tool takes it from a terminal. */
    h_sh("printf 'bare-token-of-the-test\\n' | secret-tool store --label='mcpd credential bt' "
         "xdg:schema io.github.mcpd.Credential application mcpd credential bt");
    h_sh("printf 'kr-secret-value' | secret-tool store --label='mcpd test' mcpd kr-test");
    /* goose's secrets as goose (the keyring crate) keeps them: one item, a JSON object. */
    h_sh("printf '{\"GOOSE_KEY\": \"goose-value\"}' | secret-tool store --label='goose secrets' "
         "target default service goose username secrets");
    h_sh("mkdir -p '%s/config/goose' && printf 'extensions:\\n  gx:\\n    enabled: true\\n    "
         "type: stdio\\n    name: gx\\n    cmd: %s\\n    args: []\\n    env_keys: "
         "[GOOSE_KEY]\\n    timeout: 300\\n' > '%s/config/goose/config.yaml'",
         h.dir, h_fake(), h.dir);
    {
        _cleanup_free_ char *claude =
            xasprintf("{\"mcpServers\": {\"krclaude\": {\"command\": \"%s\", \"env\": {\"FROM\": "
                      "\"${keyring:kr-test}\"}}}}",
                      h_fake());
        _cleanup_free_ char *p = xasprintf("%s/home/.claude.json", h.dir);
        FILE *f = fopen(p, "w");
        if (f) {
            fputs(claude, f);
            fclose(f);
        }
    }
    h_start(&h, NULL);
    c = h_client(&h, "agent");

    /* 0. ${keyring:NAME}: filled in mcpd's own file, text in Claude Code's, a missing one named. */
    {
        int is_error = -1;
        CHECK(h_wait_state(c, "kr", "connected", H_WAIT_MS));
        _cleanup_free_ char *v = h_call_text(c, "mcp_kr_env", "{\"name\": \"FROM\"}", &is_error);
        CHECK_MSG(v && streq(v, "x-kr-secret-value"), "kr got %s", v ? v : "(null)");
        CHECK(h_wait_state(c, "krclaude", "connected", H_WAIT_MS));
        _cleanup_free_ char *w =
            h_call_text(c, "mcp_krclaude_env", "{\"name\": \"FROM\"}", &is_error);
        CHECK_MSG(w && streq(w, "${keyring:kr-test}"), "krclaude got %s", w ? w : "(null)");
        CHECK(h_wait_state(c, "gx", "connected", H_WAIT_MS));
        _cleanup_free_ char *g =
            h_call_text(c, "mcp_gx_env", "{\"name\": \"GOOSE_KEY\"}", &is_error);
        CHECK_MSG(g && streq(g, "goose-value"), "goose's extension got %s", g ? g : "(null)");
        CHECK(h_wait_state(c, "krmiss", "failed", H_WAIT_MS));
        _cleanup_json_ yajl_val st = h_status(c);
        const char *e = json_get_string(h_server(st, "krmiss"), "lastError");
        CHECK_MSG(
            e && strstr(e, "env.FROM: ${keyring:none}: no item with the attribute mcpd=<name>"),
            "krmiss: %s", e ? e : "(none)");
    }

    /* 0b. The credential file is moved into the Secret Service once, and read from there. */
    check_credential(c, "after the move");
    CHECK_MSG(access(cred_file, F_OK) != 0, "%s was not removed after the move", cred_file);
    {
        _cleanup_free_ char *item = credential_item();
        _cleanup_free_ char *tok = entry_field(item, "accessToken");
        CHECK_MSG(tok && streq(tok, CRED_TOKEN), "the credential's item: %s",
                  item ? item : "(none)");
        CHECK(h_wait_log(&h, "moved 1 credentials from", H_WAIT_MS));
        check_nowhere_on_disk(&h, CRED_TOKEN, CRED_TOKEN, "after the credential's move");
        int is_error = -1;
        CHECK(h_wait_state(c, "bare", "connected", H_WAIT_MS));
        _cleanup_free_ char *v =
            h_call_text(c, "mcp_bare_env", "{\"name\": \"OAUTH_ACCESS_TOKEN\"}", &is_error);
        CHECK_MSG(v && streq(v, "bare-token-of-the-test"), "bare got %s", v ? v : "(null)");
    }

    /* 1. A login stores its tokens in the Secret Service and nowhere on disk. */
    CHECK(h_wait_needs_auth(c, "o", H_WAIT_MS));
    CHECK(mcpc_request(c, "mcpd/login", "{\"server\":\"o\",\"headless\":true}", &out) == 0);
    CHECK_MSG(out && strstr(out, "\"signedIn\":true"), "login gave %s", out ? out : "(null)");
    CHECK(h_wait_state(c, "o", "connected", H_WAIT_MS));
    CHECK(call_ok(c));
    entry = keyring_entry();
    at = entry_field(entry, "accessToken");
    rt = entry_field(entry, "refreshToken");
    CHECK_MSG(at && rt, "no sign-in in the Secret Service: %s", entry ? entry : "(none)");
    if (!at || !rt)
        return h_finish("test-secret-service");
    CHECK_MSG(access(store, F_OK) != 0, "%s exists after a sign-in into the keyring", store);
    check_nowhere_on_disk(&h, at, rt, "after the login");
    {
        _cleanup_json_ yajl_val st = h_status(c);
        yajl_val si = json_get_object(h_server(st, "o"), "signIn");
        CHECK_MSG(streq(json_get_string(si, "keptIn"), "Secret Service"),
                  "status does not say the sign-in is in the Secret Service");
    }

    /* 2. A refresh (before expiry) updates the item: a rotated refresh token, a new access one. */
    for (int waited = 0; waited < 3 * TOKEN_LIFETIME_MS; waited += 200) {
        free(entry2);
        entry2 = keyring_entry();
        free(rt2);
        rt2 = entry_field(entry2, "refreshToken");
        if (rt2 && !streq(rt2, rt))
            break;
        h_sleep_ms(200);
    }
    CHECK_MSG(rt2 && !streq(rt2, rt), "no refresh reached the Secret Service");
    at2 = entry_field(entry2, "accessToken");
    CHECK(at2 && !streq(at2, at));
    CHECK(call_ok(c));
    if (at2 && rt2)
        check_nowhere_on_disk(&h, at2, rt2, "after the refresh");

    /* 3. A restart finds the sign-in there: connected with no login. */
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    h_start(&h, NULL);
    c = h_client(&h, "agent");
    CHECK_MSG(h_wait_state(c, "o", "connected", H_WAIT_MS), "no sign-in found after a restart");
    CHECK(call_ok(c));
    check_credential(c, "after a restart");
    CHECK(access(cred_file, F_OK) != 0);

    /* 4. An old token file is moved into the Secret Service once, and removed. */
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    free(entry);
    entry = keyring_entry();
    CHECK(entry != NULL);
    h_sh("secret-tool clear xdg:schema io.github.mcpd.OAuthToken application mcpd resource '%s'",
         g_url);
    CHECK(keyring_entry() == NULL);
    {
        _cleanup_free_ char *file =
            xasprintf("{\"version\":1,\"tokens\":[%s],\"clients\":[]}", entry ? entry : "{}");
        h_sh("mkdir -p '%s/state/mcpd' && umask 077 && cat > '%s' <<'EOF'\n%s\nEOF", h.dir, store,
             file);
    }
    h_start(&h, NULL);
    c = h_client(&h, "agent");
    CHECK_MSG(h_wait_state(c, "o", "connected", H_WAIT_MS), "the moved sign-in does not work");
    CHECK(call_ok(c));
    CHECK_MSG(access(store, F_OK) != 0, "%s was not removed after the move", store);
    {
        _cleanup_free_ char *moved = keyring_entry();
        CHECK_MSG(moved != NULL, "the file's sign-in is not in the Secret Service");
    }
    CHECK(h_wait_log(&h, "into the Secret Service; the file holds them no more", H_WAIT_MS));

    /* 5. The item removed (by a person, with secret-tool): the next connection needs-auth. */
    h_sh("secret-tool clear xdg:schema io.github.mcpd.OAuthToken application mcpd resource '%s'",
         g_url);
    reconnect(c, "o");
    CHECK_MSG(h_wait_needs_auth(c, "o", H_WAIT_MS),
              "the server did not need a sign-in without its item");
    /* The credential's item removed: the next connection fails, naming where to put one. */
    h_sh("secret-tool clear xdg:schema io.github.mcpd.Credential application mcpd credential ct");
    reconnect(c, "cred");
    CHECK(h_wait_state(c, "cred", "failed", H_WAIT_MS));
    {
        _cleanup_json_ yajl_val st = h_status(c);
        const char *e = json_get_string(h_server(st, "cred"), "lastError");
        CHECK_MSG(e && strstr(e, "credential \"ct\" is not in the Secret Service"), "cred: %s",
                  e ? e : "(none)");
    }
    /* The baseline holds the bus connection and curl's cached connections by now. */
    h_settle(&h, c, "steady", NULL);

    h_check_healthy(&h, "sign-ins in the Secret Service", CONTROL);
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    bg_stop(pid);
    bg_stop(g_keyring_pid);
    bg_stop(bus_pid);
    h_teardown(&h);
    return h_finish("test-secret-service");
}
