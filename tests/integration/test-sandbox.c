// SPDX-License-Identifier: MIT
// test-sandbox: stdio servers in the real bubblewrap. A contained server cannot read a denied
// path (the secrets' places, mcpd's config, a profile's denyRead), cannot write outside its
// allowed paths, cannot connect out with the network off and can with it on, has a /tmp of its
// own, and works normally otherwise; the same from VS Code's mcp.json (sandboxEnabled, an
// entry's block and the file's). Status says how each runs; a server failing because of its
// sandbox is named in status and logs; without bwrap a contained server does not run at all;
// an approved project's entry whose sandbox is weakened is held until approved again.

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"
#include "tests/integration/harness.h"

/* What the fixtures hold: a denied read giving one of these back is a failure. */
#define SSH_SECRET     "ssh-secret-key"
#define PRIVATE_SECRET "project-private"

/* mcpctl against h's daemon; its stdout and stderr (to free). */
#define CTL(h, st, args, ...)                                                                      \
    h_shell(st, "'%s' --socket '%s' " args " 2>&1", getenv("MCPCTL_BINARY"), (h)->socket,          \
            ##__VA_ARGS__)

static char base[] = "/var/tmp/mcpd-it-sandbox-XXXXXX";
/* A project under /tmp: its sandbox's /tmp is private, yet the project shows there. */
static char tmp_proj[] = "/tmp/mcpd-it-sandbox-proj-XXXXXX";
static char *home, *proj, *out_dir, *probe;
static pid_t mcpd_pid;
/*
 * How mcpd contains the servers in this run: its own namespaces, or bubblewrap when asked
 * (MCPD_SANDBOX=bubblewrap) or when the kernel refuses user namespaces (SANDBOX_TEST_NO_USERNS
 * names a wrapper that makes it refuse them; valgrind refuses them too).
 */
static const char *how = "namespaces";

/* A loopback listener the servers try to reach; connections wait in its backlog. */
static int listen_loopback(int *portp)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 64) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) < 0) {
        perror("test-sandbox: listener");
        exit(99);
    }
    *portp = ntohs(sa.sin_port);
    return fd;
}

/* Call one of the probe's tools on server; its answer (to free). */
static char *probe_call(mcpc_client *c, const char *server, const char *tool, const char *key,
                        const char *value)
{
    _cleanup_free_ char *name = xasprintf("mcp_%s_%s", server, tool);
    _cleanup_free_ char *args = xasprintf("{\"%s\": \"%s\"}", key, value);
    int is_error = 0;
    char *text = h_call_text(c, name, args, &is_error);

    return text ? text : xstrdup("(no answer)");
}

#define EXPECT(c, server, tool, key, value, want)                                                  \
    do {                                                                                           \
        _cleanup_free_ char *got_ = probe_call(c, server, tool, key, value);                       \
        CHECK_MSG(startswith(got_, want), "%s %s %s: got \"%s\", want \"%s\"", server, tool,       \
                  value, got_, want);                                                              \
    } while (0)

/* What every contained server is refused and allowed, whatever its profile. */
static void check_contained_basics(mcpc_client *c, const char *server, const char *port)
{
    _cleanup_free_ char *ssh = paths_join(home, ".ssh/id_test");
    _cleanup_free_ char *aws = paths_join(home, ".aws/credentials");
    _cleanup_free_ char *mcpd_cfg = xasprintf("%s/config/mcpd/mcp.json", base);
    _cleanup_free_ char *file = paths_join(proj, "file");
    _cleanup_free_ char *outside = paths_join(home, "outside-write");
    _cleanup_free_ char *tmp = xasprintf("/tmp/mcpd-sandbox-%s-%d", server, (int)getpid());
    _cleanup_free_ char *mcpd_cache = xasprintf("%s/cache/mcpd/marker", base);
    _cleanup_free_ char *mcpd_state = xasprintf("%s/state/mcpd/marker", base);
    _cleanup_free_ char *mcpd_proc = xasprintf("/proc/%d/status", (int)mcpd_pid);
    _cleanup_free_ char *npm_file = xasprintf("%s/.npm/by-%s", home, server);

    EXPECT(c, server, "read", "path", ssh, "ERR:Permission denied");
    EXPECT(c, server, "read", "path", aws, "ERR:Permission denied");
    EXPECT(c, server, "read", "path", mcpd_cfg, "ERR:Permission denied");
    EXPECT(c, server, "read", "path", mcpd_cache, "ERR:Permission denied");
    EXPECT(c, server, "read", "path", mcpd_state, "ERR:Permission denied");
    /* Its own processes only: mcpd's /proc entry is not there. */
    EXPECT(c, server, "read", "path", mcpd_proc, "ERR:No such file or directory");
    /* The tool caches stay writable, for npx and uvx. */
    EXPECT(c, server, "write", "path", npm_file, "OK:written");
    EXPECT(c, server, "read", "path", file, "OK:hello");
    EXPECT(c, server, "read", "path", "/etc/passwd", "OK:");
    EXPECT(c, server, "write", "path", outside, "ERR:Read-only file system");
    CHECK_MSG(access(outside, F_OK) < 0, "%s wrote %s", server, outside);
    /* A /tmp of its own: writable, and nothing of it on the host. */
    EXPECT(c, server, "write", "path", tmp, "OK:written");
    CHECK_MSG(access(tmp, F_OK) < 0, "%s's /tmp is the host's: %s exists", server, tmp);
    EXPECT(c, server, "echo", "text", "still-serving", "OK:still-serving");
    (void)port;
}

static void test_native(Harness *h, mcpc_client *c, const char *port)
{
    _cleanup_free_ char *ssh = paths_join(home, ".ssh/id_test");
    _cleanup_free_ char *priv = paths_join(proj, "private/data");
    _cleanup_free_ char *in_proj = paths_join(proj, "written-by-contained");
    _cleanup_free_ char *in_out = paths_join(out_dir, "written-by-mine");
    _cleanup_free_ char *mine_proj = paths_join(proj, "written-by-mine");
    int st;

    /* The control: unconfined, the same probe reads the key and reaches the listener. */
    EXPECT(c, "open", "read", "path", ssh, "OK:" SSH_SECRET);
    EXPECT(c, "open", "connect", "port", port, "OK:connected");

    check_contained_basics(c, "contained", port);
    EXPECT(c, "contained", "write", "path", in_proj, "OK:written"); /* project-write */
    CHECK(access(in_proj, F_OK) == 0);
    EXPECT(c, "contained", "connect", "port", port, "ERR:");

    check_contained_basics(c, "online", port);
    EXPECT(c, "online", "connect", "port", port, "OK:connected");
    EXPECT(c, "online", "write", "path", in_proj, "ERR:Read-only file system");

    /* A profile of mcpd.json: its own denyRead and allowWrite, on top of read-only. */
    check_contained_basics(c, "mine", port);
    EXPECT(c, "mine", "read", "path", priv, "ERR:Permission denied");
    EXPECT(c, "mine", "write", "path", in_out, "OK:written");
    EXPECT(c, "mine", "write", "path", mine_proj, "ERR:Read-only file system");
    EXPECT(c, "mine", "connect", "port", port, "ERR:");
    /* Denials win over the allowance that holds them. */
    _cleanup_free_ char *hidden = paths_join(out_dir, "hidden/data");
    _cleanup_free_ char *locked = paths_join(out_dir, "locked/new");
    EXPECT(c, "mine", "read", "path", hidden, "ERR:Permission denied");
    EXPECT(c, "mine", "write", "path", locked, "ERR:Read-only file system");

    /* A project under /tmp is there, writable, in a sandbox whose /tmp is its own. */
    _cleanup_free_ char *in_tmp = paths_join(tmp_proj, "written-by-tmpcwd");
    _cleanup_free_ char *beside = xasprintf("%s-beside", tmp_proj);
    EXPECT(c, "tmpcwd", "write", "path", in_tmp, "OK:written");
    CHECK_MSG(access(in_tmp, F_OK) == 0, "tmpcwd's write is not in %s", tmp_proj);
    EXPECT(c, "tmpcwd", "write", "path", beside, "OK:written");
    CHECK_MSG(access(beside, F_OK) < 0, "tmpcwd's /tmp is the host's: %s exists", beside);

    /* projectWrite leaves a home-directory working directory read-only. */
    _cleanup_free_ char *in_home = paths_join(home, "written-by-homecwd");
    EXPECT(c, "homecwd", "write", "path", in_home, "ERR:Read-only file system");
    /* An entry's PATH does not choose the bwrap: still contained. */
    EXPECT(c, "envpath", "read", "path", ssh, "ERR:Permission denied");

    /* The refusals are in the server's stderr, as `mcpctl logs` shows it: path and connection. */
    _cleanup_free_ char *logs = CTL(h, &st, "logs contained");
    _cleanup_free_ char *refused = xasprintf("connect 127.0.0.1 %s: Connection refused", port);
    CHECK_MSG(strstr(logs, ssh) && strstr(logs, "Permission denied") &&
                  strstr(logs, "Read-only file system") && strstr(logs, refused),
              "logs contained:\n%s", logs);
}

static void test_vscode(mcpc_client *c, const char *port)
{
    _cleanup_free_ char *priv = paths_join(proj, "private/data");
    _cleanup_free_ char *in_proj = paths_join(proj, "written-by-vscode");
    _cleanup_free_ char *in_out = paths_join(out_dir, "written-by-vsroot");

    /* An entry's own block: denyRead, the working directory writable, no network. */
    check_contained_basics(c, "vscode", port);
    EXPECT(c, "vscode", "read", "path", priv, "ERR:Permission denied");
    EXPECT(c, "vscode", "write", "path", in_proj, "OK:written");
    EXPECT(c, "vscode", "connect", "port", port, "ERR:");
    /* The file's block, for an entry with sandboxEnabled and none of its own. */
    check_contained_basics(c, "vsroot", port);
    EXPECT(c, "vsroot", "write", "path", in_out, "OK:written");
    EXPECT(c, "vsroot", "read", "path", priv, "OK:" PRIVATE_SECRET);
    EXPECT(c, "vsroot", "connect", "port", port, "ERR:");
}

static void test_status(Harness *h, mcpc_client *c)
{
    _cleanup_json_ yajl_val st = h_status(c);
    yajl_val con = json_get_object(h_server(st, "contained"), "sandbox");
    int code;

    CHECK(!json_get(h_server(st, "open"), "sandbox"));
    CHECK(streq(json_get_string(con, "profile") ?: "", "project-write"));
    CHECK(YAJL_IS_FALSE(json_get(con, "network")));
    CHECK(YAJL_IS_TRUE(json_get(json_get_object(h_server(st, "online"), "sandbox"), "network")));
    CHECK(streq(json_get_string(json_get_object(h_server(st, "mine"), "sandbox"), "profile") ?: "",
                "mine"));
    CHECK(
        streq(json_get_string(json_get_object(h_server(st, "vscode"), "sandbox"), "profile") ?: "",
              "project-write"));
    CHECK(streq(json_get_string(h_server(st, "contained"), "sandboxedBy") ?: "", how));
    _cleanup_free_ char *text = CTL(h, &code, "status contained");
    _cleanup_free_ char *line = xasprintf("sandbox: \"project-write\" (%s): network off", how);
    CHECK_MSG(strstr(text, line), "status:\n%s", text);
    _cleanup_free_ char *json = CTL(h, &code, "status --json");
    CHECK_MSG(strstr(json, "\"sandbox\""), "status --json has no sandbox");
    /* What VS Code's block asks and mcpd cannot do is named. */
    yajl_val probs = json_get_array(st, "problems");
    bool named = false;
    for (size_t i = 0; i < json_array_len(probs); i++)
        named = named || strstr(json_get_string(json_array_at(probs, i), "error") ?: "",
                                "allowedDomains\" cannot be applied");
    CHECK_MSG(named, "no warning names sandbox.network.allowedDomains");
    /* An entry whose sandbox cannot be read is refused, not run unconfined. */
    CHECK(!h_server(st, "badprofile"));
    bool refused = false;
    for (size_t i = 0; i < json_array_len(probs); i++)
        refused = refused || strstr(json_get_string(json_array_at(probs, i), "error") ?: "",
                                    "no sandbox profile \"no-such-profile\"");
    CHECK_MSG(refused, "badprofile's problem not named");
}

/* A server that fails because of its sandbox: status and logs say so, with the refused path. */
static void test_dies(Harness *h, mcpc_client *c)
{
    int st;

    CHECK(h_wait_state(c, "dies", "failed", H_WAIT_MS));
    _cleanup_json_ yajl_val s = h_status(c);
    const char *err = json_get_string(h_server(s, "dies"), "lastError") ?: "";
    /* (Its last words are there too unless a slow mcpd saw its stdin closed first.) */
    CHECK_MSG(strstr(err, "it ran in a sandbox: `mcpctl logs dies`"), "lastError: %s", err);
    _cleanup_free_ char *logs = CTL(h, &st, "logs dies");
    /* mcpd's hint after its last words names the profile and how it was contained. */
    _cleanup_free_ char *hint =
        xasprintf("mcpd: it ran in a sandbox, \"read-only\" (%s; network "
                  "off): what the sandbox refused shows in `mcpctl logs dies`",
                  how);
    CHECK_MSG(strstr(logs, ".ssh/id_test: Permission denied") && strstr(logs, hint),
              "logs dies:\n%s", logs);
}

/* A contained server whose command is missing fails as an unconfined one would, not as a sandbox.
 */
static void test_missing(mcpc_client *c)
{
    CHECK(h_wait_state(c, "missing", "failed", H_WAIT_MS));
    _cleanup_json_ yajl_val s = h_status(c);
    const char *err = json_get_string(h_server(s, "missing"), "lastError") ?: "";
    /* Under bubblewrap, bwrap runs and its exec fails: the server's own exit, as unconfined. */
    CHECK_MSG(!strstr(err, "cannot set up") &&
                  (!streq(how, "namespaces") || strstr(err, "No such file or directory")),
              "lastError: %s", err);
}

/*
 * MCPD_WRAPPER's program (valgrind, in `meson test --setup valgrind`) by its absolute path, so
 * mcpd still starts under it with a PATH that finds nothing.
 */
static void wrapper_absolute(void)
{
    const char *w = getenv("MCPD_WRAPPER");
    _cleanup_free_ char *prog = NULL, *found = NULL;
    int st;

    if (!w || !w[0] || w[0] == '/')
        return;
    prog = xstrndup(w, strcspn(w, " "));
    found = h_shell(&st, "command -v '%s'", prog);
    found[strcspn(found, "\n")] = '\0';
    if (found[0] == '/') {
        _cleanup_free_ char *abs = xasprintf("%s%s", found, w + strlen(prog));
        setenv("MCPD_WRAPPER", abs, 1);
    }
}

/*
 * Without bwrap: where mcpd's own namespaces serve, a contained server runs contained all the
 * same; where bubblewrap is needed, it does not run, unconfined or at all; the others do.
 */
static void test_no_bwrap(Harness *h)
{
    _cleanup_free_ char *path = xstrdup(getenv("PATH") ?: "/usr/bin:/bin");
    _cleanup_free_ char *ssh = paths_join(home, ".ssh/id_test");

    CHECK(h_stop(h) == 0);
    wrapper_absolute();
    setenv("PATH", "/nonexistent-mcpd-sandbox-test", 1);
    h_start(h, NULL);
    setenv("PATH", path, 1);
    mcpc_client *c = h_client(h, "no-bwrap");
    CHECK(h_wait_state(c, "open", "connected", H_WAIT_MS));
    if (streq(how, "namespaces")) {
        CHECK(h_wait_state(c, "contained", "connected", H_WAIT_MS));
        EXPECT(c, "contained", "read", "path", ssh, "ERR:Permission denied");
        mcpc_free(c);
        return;
    }
    CHECK(h_wait_state(c, "contained", "failed", H_WAIT_MS));
    _cleanup_json_ yajl_val st = h_status(c);
    const char *err = json_get_string(h_server(st, "contained"), "lastError") ?: "";
    CHECK_MSG(strstr(err, "bubblewrap") && strstr(err, "does not run it unconfined"),
              "lastError: %s", err);
    bool found = true;
    h_list_count(c, "mcp_contained_read", &found);
    CHECK(!found);
    mcpc_free(c);
}

/* Where the kernel refuses mcpd's own sandbox, the log says so and bubblewrap serves. */
static void test_fallback_logged(Harness *h)
{
    int st;

    if (!getenv("SANDBOX_TEST_NO_USERNS"))
        return;
    _cleanup_free_ char *log = h_shell(&st, "cat '%s'", h->log);
    CHECK_MSG(strstr(log, "the kernel refused mcpd's own sandbox") &&
                  strstr(log, "contained servers start under bubblewrap instead"),
              "no fallback in the log");
}

/* An approved project's entry is approved with its sandbox: weakening it asks again. */
static void test_trust(Harness *h)
{
    _cleanup_free_ char *root = xasprintf("%s/repo", base);
    _cleanup_free_ char *file = xasprintf("%s/.vscode/mcp.json", root);
    _cleanup_free_ char *contained = xasprintf(
        "{\"sandbox\": {\"filesystem\": {\"denyRead\": [\"%s\"]}}, \"servers\": {\"repovs\": "
        "{\"type\": \"stdio\", \"command\": \"%s\", \"sandboxEnabled\": true}}}",
        proj, probe);
    _cleanup_free_ char *weakened =
        xasprintf("{\"servers\": {\"repovs\": {\"type\": \"stdio\", \"command\": \"%s\", "
                  "\"sandboxEnabled\": true}}}",
                  probe);
    _cleanup_free_ char *params = xasprintf("{\"cwd\": \"%s\"}", root), *out = NULL;
    int st;

    h_write_text(file, contained);
    mcpc_options o = {.socket_path = h->socket, .client_name = "agent-in-repo", .cwd = root};
    mcpc_client *agent = mcpc_new(&o);
    CHECK(mcpc_connect(agent) == 0);
    _cleanup_free_ char *ok = CTL(h, &st, "trust '%s'", root);
    CHECK_MSG(st == 0, "trust: %s", ok);
    CHECK(h_wait_state(agent, "repovs", "connected", H_WAIT_MS));
    _cleanup_free_ char *file_in = paths_join(proj, "file");
    EXPECT(agent, "repovs", "read", "path", file_in, "ERR:Permission denied");

    h_write_text(file, weakened);
    CHECK(mcpc_request(agent, "mcpd/reload", params, &out) == 0);
    bool held = false;
    for (int waited = 0; waited < H_WAIT_MS && !held; waited += 200) {
        _cleanup_json_ yajl_val s = h_status(agent);
        yajl_val probs = json_get_array(s, "problems");
        for (size_t i = 0; i < json_array_len(probs); i++) {
            yajl_val p = json_array_at(probs, i);
            held = held || (streq(json_get_string(p, "server") ?: "", "repovs") &&
                            strstr(json_get_string(p, "error") ?: "", "untrusted"));
        }
        held = held && !h_server(s, "repovs");
        if (!held)
            h_sleep_ms(200);
    }
    CHECK_MSG(held, "repovs ran with its sandbox weakened and no new approval");
    mcpc_free(agent);
}

static void write_fixtures(int port)
{
    _cleanup_free_ char *cfg = NULL, *settings = NULL, *vs = NULL, *vs_profile = NULL, *p = NULL;

    (void)port;
    home = xasprintf("%s/home", base);
    proj = xasprintf("%s/proj", home);
    out_dir = xasprintf("%s/out", base);
    probe = xstrdup(getenv("PROBE_SERVER"));
    p = paths_join(home, ".ssh/id_test");
    h_write_text(p, SSH_SECRET "\n");
    free(p), p = paths_join(home, ".aws/credentials");
    h_write_text(p, "aws-secret\n");
    free(p), p = paths_join(proj, "file");
    h_write_text(p, "hello\n");
    free(p), p = paths_join(proj, "private/data");
    h_write_text(p, PRIVATE_SECRET "\n");
    free(p), p = paths_join(out_dir, "hidden/data");
    h_write_text(p, "hidden-data\n");
    free(p), p = paths_join(out_dir, "locked/.keep");
    h_write_text(p, "\n");
    free(p), p = xasprintf("%s/cache/mcpd/marker", base);
    h_write_text(p, "mcpd-cache\n");
    free(p), p = xasprintf("%s/state/mcpd/marker", base);
    h_write_text(p, "mcpd-state\n");
    cfg = xasprintf(
        "{\"mcpServers\": {"
        "\"open\": {\"command\": \"%1$s\", \"cwd\": \"%2$s\"},"
        "\"contained\": {\"command\": \"%1$s\", \"cwd\": \"%2$s\", \"sandbox\": \"project-write\"},"
        "\"online\": {\"command\": \"%1$s\", \"cwd\": \"%2$s\", \"sandbox\": {\"profile\": "
        "\"network\"}},"
        "\"mine\": {\"command\": \"%1$s\", \"cwd\": \"%2$s\", \"sandbox\": \"mine\"},"
        "\"dies\": {\"command\": \"%1$s\", \"args\": [\"--read-at-start\", \"%3$s/.ssh/id_test\"], "
        "\"sandbox\": true, \"reconnect\": false},"
        "\"homecwd\": {\"command\": \"%1$s\", \"cwd\": \"%3$s\", \"sandbox\": \"project-write\"},"
        "\"envpath\": {\"command\": \"%1$s\", \"cwd\": \"%2$s\", \"sandbox\": true, "
        "\"env\": {\"PATH\": \"/nonexistent-bin\"}},"
        "\"badprofile\": {\"command\": \"%1$s\", \"sandbox\": \"no-such-profile\"},"
        "\"tmpcwd\": {\"command\": \"%1$s\", \"cwd\": \"%4$s\", \"sandbox\": \"project-write\"},"
        "\"missing\": {\"command\": \"/nonexistent-mcpd-test/server\", \"sandbox\": true, "
        "\"reconnect\": false}"
        "}}",
        probe, proj, home, tmp_proj);
    free(p), p = xasprintf("%s/config/mcpd/mcp.json", base);
    h_write_text(p, cfg);
    /* Eager, as the harness's own settings are: each test here restarts mcpd and waits for states.
     */
    settings = xasprintf(
        "{\"start\": \"eager\", \"sandboxProfiles\": {\"mine\": {\"denyRead\": [\"%1$s/private\", "
        "\"%2$s/hidden\"], \"allowWrite\": [\"%2$s\"], \"denyWrite\": "
        "[\"%2$s/locked\"]}}}",
        proj, out_dir);
    free(p), p = xasprintf("%s/config/mcpd/mcpd.json", base);
    h_write_text(p, settings);
    vs = xasprintf("{\"servers\": {\"vscode\": {\"type\": \"stdio\", \"command\": \"%s\", \"cwd\": "
                   "\"%s\", \"sandboxEnabled\": true, \"sandbox\": {\"filesystem\": "
                   "{\"denyRead\": [\"${userHome}/proj/private\"]}, \"network\": "
                   "{\"allowedDomains\": [\"example.com\"]}}}}}",
                   probe, proj);
    free(p), p = xasprintf("%s/config/Code/User/mcp.json", base);
    h_write_text(p, vs);
    vs_profile = xasprintf("{\"sandbox\": {\"filesystem\": {\"allowWrite\": [\"%s\"]}}, "
                           "\"servers\": {\"vsroot\": {\"type\": \"stdio\", \"command\": \"%s\", "
                           "\"cwd\": \"%s\", \"sandboxEnabled\": true}}}",
                           out_dir, probe, proj);
    free(p), p = xasprintf("%s/config/Code/User/profiles/p1/mcp.json", base);
    h_write_text(p, vs_profile);
    free(p), p = xasprintf("%s/config", base);
    setenv("XDG_CONFIG_HOME", p, 1);
    free(p), p = xasprintf("%s/cache", base);
    setenv("XDG_CACHE_HOME", p, 1);
    free(p), p = xasprintf("%s/state", base);
    setenv("XDG_STATE_HOME", p, 1);
    setenv("HOME", home, 1);
}

/* The first n bytes of word, found in this test's PATH: a path to free, or NULL. */
static char *in_path(const char *word, size_t n)
{
    const char *path = getenv("PATH") ?: "";

    for (const char *p = path; *p;) {
        size_t len = strcspn(p, ":");
        char *cand = xasprintf("%.*s/%.*s", (int)len, p, (int)n, word);
        if (len && access(cand, X_OK) == 0)
            return cand;
        free(cand);
        p += len + (p[len] == ':');
    }
    return NULL;
}

int main(void)
{
    static const char *const servers[] = {"open",   "contained", "online", "mine",
                                          "vscode", "vsroot",    "tmpcwd"};
    Harness h;
    int port, lfd;
    char port_s[16];

    if (!getenv("PROBE_SERVER")) {
        fprintf(stderr, "test-sandbox: PROBE_SERVER is not set (run through meson test)\n");
        return 99;
    }
    h_setup(&h, "sandbox");
    if (getenv("SANDBOX_TEST_NO_USERNS")) {
        const char *w = getenv("MCPD_WRAPPER") ?: "";
        size_t n = strcspn(w, " ");
        /* The script runs the wrapper with mcpd's PATH, which finds nothing: name it whole. */
        _cleanup_free_ char *tool = n && w[0] != '/' ? in_path(w, n) : NULL;
        _cleanup_free_ char *wrap = xasprintf("%s %s%s", getenv("SANDBOX_TEST_NO_USERNS"),
                                              tool ? tool : "", tool ? w + n : w);
        setenv("MCPD_WRAPPER", wrap, 1);
        how = "bubblewrap";
    } else if ((getenv("MCPD_SANDBOX") && streq(getenv("MCPD_SANDBOX"), "bubblewrap")) ||
               strstr(getenv("MCPD_WRAPPER") ?: "", "valgrind"))
        how = "bubblewrap"; /* valgrind runs no child in new namespaces: the fallback */
    if (!mkdtemp(base) || !mkdtemp(tmp_proj)) {
        perror("test-sandbox: mkdtemp");
        return 99;
    }
    lfd = listen_loopback(&port);
    snprintf(port_s, sizeof(port_s), "%d", port);
    write_fixtures(port);
    h_start(&h, NULL);
    mcpd_pid = h.pid;
    mcpc_client *c = h_client(&h, "sandbox");
    for (size_t i = 0; i < N_ELEMENTS(servers); i++)
        CHECK_MSG(h_wait_state(c, servers[i], "connected", H_WAIT_MS), "%s never connected",
                  servers[i]);
    test_native(&h, c, port_s);
    test_vscode(c, port_s);
    test_status(&h, c);
    test_dies(&h, c);
    test_missing(c);
    test_fallback_logged(&h);
    test_trust(&h);
    mcpc_free(c);
    test_no_bwrap(&h);
    close(lfd);
    h_teardown(&h);
    h_sh("rm -rf '%s' '%s'", base, tmp_proj);
    free(home), free(proj), free(out_dir), free(probe);
    return h_finish("test-sandbox");
}
