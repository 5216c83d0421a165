// SPDX-License-Identifier: MIT
// test-trust: the project trust gate, mcpd's approval store and each agent's own approvals.

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
#include "daemon/config/config.h"
#include "daemon/config/source.h"
#include "daemon/config/tool-filter.h"
#include "daemon/config/trust.h"
#include "tests/unit/test.h"

static char *tmp, *home, *root, *state;

/* A whole small file (to free), or NULL. */
static char *read_all(const char *path)
{
    FILE *f = fopen(path, "r");
    char buf[65536];
    size_t n;

    if (!f)
        return NULL;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return xstrdup(buf);
}

static void setup(void)
{
    _cleanup_free_ char *proj = NULL, *conf = NULL;

    tmp = test_tmpdir();
    home = paths_join(tmp, "home");
    proj = paths_join(tmp, "proj");
    state = paths_join(tmp, "state");
    conf = paths_join(home, ".config");
    CHECK_INTEQ(paths_mkdir_p(proj, 0700), 0);
    CHECK_INTEQ(paths_mkdir_p(conf, 0700), 0);
    root = realpath(proj, NULL);
    setenv("HOME", home, 1);
    setenv("XDG_CONFIG_HOME", conf, 1);
    setenv("XDG_STATE_HOME", state, 1);
    unsetenv("CODEX_HOME");
    unsetenv("CLAUDE_CONFIG_DIR");
    _cleanup_free_ char *no_managed = paths_join(tmp, "no-managed-mcp.json");
    setenv("MCPD_CLAUDE_MANAGED_MCP", no_managed, 1); /* not the machine's own */
}

static void teardown(void)
{
    test_rm_rf(tmp);
    free(tmp);
    free(home);
    free(root);
    free(state);
}

/* Write text to dir/rel (dir: root or home), creating parents. */
static void put(const char *dir, const char *rel, const char *text)
{
    _cleanup_free_ char *path = paths_join(dir, rel), *parent = paths_dirname(path);

    CHECK_INTEQ(paths_mkdir_p(parent, 0700), 0);
    test_write_file(path, text);
}

static void discover(ConfigSet *set)
{
    DiscoverOptions opt = {NULL, root};
    Settings s;

    settings_init(&s);
    CHECK_INTEQ(config_discover(set, &opt, &s), 0);
}

static const ConfigSkip *skip_of(const ConfigSet *set, const char *name)
{
    for (size_t i = set->n_skipped; i-- > 0;)
        if (streq(set->skipped[i].name, name))
            return &set->skipped[i];
    return NULL;
}

/* name is held back and its reason says want. */
static void expect_held(const ConfigSet *set, const char *name, const char *want)
{
    const ConfigSkip *k = skip_of(set, name);
    bool ok = !config_set_find(set, name) && k && strstr(k->reason, want);

    CHECK(ok);
    if (!ok)
        fprintf(stderr, "  %s: want held back with \"%s\", got %s\n", name, want,
                k                            ? k->reason
                : config_set_find(set, name) ? "(a server)"
                                             : "(nothing)");
}

static int approve(const char *server)
{
    _cleanup_free_ char *why = NULL;
    _cleanup_json_ yajl_val list = NULL;
    Settings s;
    int r;

    settings_init(&s);
    r = trust_approve_root(root, &s, server, &list, NULL, &why);
    if (r == 0)
        CHECK(YAJL_IS_ARRAY(list));
    return r;
}

static void test_store(void)
{
    _cleanup_free_ char *store = paths_join(state, "mcpd/trust.json"), *why = NULL;
    ConfigSet set;
    struct stat st;
    size_t n = 0;

    put(root, ".mcpd/mcp.json",
        "{\"mcpServers\": {\"a\": {\"command\": \"x\", \"args\": [\"y z\", \"it's\"]},"
        " \"b\": {\"url\": \"http://h/mcp\"}}}");
    discover(&set);
    CHECK_INTEQ(set.n_servers, 0);
    expect_held(&set, "a", "would run x 'y z' 'it'\\''s'");
    expect_held(&set, "a", "mcpctl trust --server a ");
    expect_held(&set, "b", "would run http://h/mcp; sends no variable");
    CHECK_INTEQ(set.n_problems, 2);
    config_set_deinit(&set);

    CHECK_INTEQ(approve(NULL), 0);
    CHECK(stat(store, &st) == 0 && (st.st_mode & 0777) == 0600);
    discover(&set);
    CHECK_INTEQ(set.n_servers, 2);
    CHECK_INTEQ(set.n_problems, 0);
    config_set_deinit(&set);

    /* A changed entry is another entry; the unchanged one stays approved. */
    put(root, ".mcpd/mcp.json",
        "{\"mcpServers\": {\"a\": {\"command\": \"x\", \"args\": [\"other\"]},"
        " \"b\": {\"url\": \"http://h/mcp\"}}}");
    discover(&set);
    expect_held(&set, "a", "untrusted");
    CHECK(config_set_find(&set, "b") != NULL);
    config_set_deinit(&set);
    CHECK_INTEQ(approve("nope"), -ENOENT);
    CHECK_INTEQ(approve("a"), 0);
    discover(&set);
    CHECK_INTEQ(set.n_servers, 2);
    config_set_deinit(&set);

    /* Revoking: one server, then the whole project. */
    CHECK_INTEQ(trust_revoke_root(root, "b", &n, &why), 0);
    CHECK_INTEQ(n, 1);
    discover(&set);
    expect_held(&set, "b", "untrusted");
    CHECK(config_set_find(&set, "a") != NULL);
    config_set_deinit(&set);
    CHECK_INTEQ(trust_revoke_root(root, NULL, &n, &why), 0);
    discover(&set);
    CHECK_INTEQ(set.n_servers, 0);
    config_set_deinit(&set);

    /* Old approvals of a name are bounded. */
    for (int i = 0; i < TRUST_MAX_HASHES_PER_SERVER + 3; i++) {
        _cleanup_free_ char *text =
            xasprintf("{\"mcpServers\": {\"a\": {\"command\": \"x%d\"}}}", i);
        put(root, ".mcpd/mcp.json", text);
        CHECK_INTEQ(approve("a"), 0);
    }
    _cleanup_free_ char *stored = NULL;
    _cleanup_json_ yajl_val sv = NULL;
    CHECK((stored = read_all(store)) && (sv = json_parse(stored, NULL)));
    yajl_val list = json_get_array(json_get_object(json_get_object(sv, "projects"), root), "a");
    CHECK_INTEQ(json_array_len(list), TRUST_MAX_HASHES_PER_SERVER);
}

/* A broken store approves nothing, is reported, and is never overwritten. */
static void test_broken_store(void)
{
    _cleanup_free_ char *store = paths_join(state, "mcpd/trust.json");
    ConfigSet set;
    bool named = false;

    put(state, "mcpd/trust.json", "{not json");
    put(root, ".mcpd/mcp.json", "{\"mcpServers\": {\"a\": {\"command\": \"x\"}}}");
    discover(&set);
    CHECK_INTEQ(set.n_servers, 0);
    for (size_t i = 0; i < set.n_problems; i++)
        named = named || (strstr(set.problems[i].message, "project approvals not read") &&
                          strstr(set.problems[i].message, store));
    CHECK(named);
    config_set_deinit(&set);
    CHECK_INTEQ(approve(NULL), -EIO);
    _cleanup_free_ char *after = read_all(store);
    CHECK(after && streq(after, "{not json"));
    unlink(store);
}

/* Files another user owns, or anyone may write, run nothing even when approved. */
static void test_foreign_files(void)
{
    _cleanup_free_ char *path = paths_join(root, ".mcpd/mcp.json");
    ConfigSet set;

    put(root, ".mcpd/mcp.json", "{\"mcpServers\": {\"a\": {\"command\": \"x\"}}}");
    CHECK_INTEQ(approve(NULL), 0);
    CHECK_INTEQ(chmod(path, 0666), 0);
    discover(&set);
    expect_held(&set, "a", "writable by every user");
    config_set_deinit(&set);
    CHECK_INTEQ(chmod(path, 0644), 0);
    if (geteuid() == 0) {
        CHECK_INTEQ(chown(path, 4242, 4242), 0);
        discover(&set);
        expect_held(&set, "a", "owned by uid 4242");
        config_set_deinit(&set);
        CHECK_INTEQ(approve("a"), -ENOENT); /* nothing to approve: it can never run */
        CHECK_INTEQ(chown(path, 0, 0), 0);
    }
    unlink(path);
}

/* A file group-writable by a group that is not the user's own private group runs nothing. */
static void test_group_writable(void)
{
    _cleanup_free_ char *path = paths_join(root, ".mcpd/mcp.json");
    ConfigSet set;

    if (geteuid() != 0)
        return; /* giving a file to another group needs root */
    put(root, ".mcpd/mcp.json", "{\"mcpServers\": {\"g\": {\"command\": \"x\"}}}");
    CHECK_INTEQ(approve(NULL), 0);
    CHECK_INTEQ(chown(path, 0, 4243), 0);
    CHECK_INTEQ(chmod(path, 0664), 0);
    discover(&set);
    expect_held(&set, "g", "writable by group 4243");
    expect_held(&set, "g", "chmod go-w");
    config_set_deinit(&set);
    CHECK_INTEQ(chmod(path, 0644), 0);
    discover(&set);
    CHECK(config_set_find(&set, "g") != NULL);
    config_set_deinit(&set);
    unlink(path);
}

/* Discovery of project r with Claude Code approving name by name in ~/.claude.json. */
static void discover_approved(ConfigSet *set, const char *r, const char *name)
{
    _cleanup_free_ char *answers =
        xasprintf("{\"projects\": {\"%s\": {\"hasTrustDialogAccepted\": true, "
                  "\"enabledMcpjsonServers\": [\"%s\"]}}}",
                  r, name);
    DiscoverOptions opt = {NULL, r};
    Settings s;

    put(home, ".claude.json", answers);
    settings_init(&s);
    CHECK_INTEQ(config_discover(set, &opt, &s), 0);
}

/*
 * A .mcp.json above the project in a directory others may write (a shared team directory
 * without the sticky bit) is not the user's word, even when the file is the user's own: anyone
 * there could have put it (or a link to another of the user's files) in place.
 */
static void test_parent_dir_writable(void)
{
    _cleanup_free_ char *team = paths_join(tmp, "team"), *pkg = paths_join(team, "pkg");
    _cleanup_free_ char *r = NULL;
    ConfigSet set;

    CHECK_INTEQ(paths_mkdir_p(pkg, 0700), 0);
    put(team, ".mcp.json", "{\"mcpServers\": {\"shared\": {\"command\": \"x\"}}}");
    r = realpath(pkg, NULL);
    CHECK_INTEQ(chmod(team, 0777), 0);
    discover_approved(&set, r, "shared");
    expect_held(&set, "shared", "a directory above the project that every user may write");
    expect_held(&set, "shared", "chmod +t");
    config_set_deinit(&set);
    /* Sticky: others cannot replace the user's file. */
    CHECK_INTEQ(chmod(team, 01777), 0);
    discover_approved(&set, r, "shared");
    CHECK(config_set_find(&set, "shared") != NULL);
    config_set_deinit(&set);
    if (geteuid() == 0) {
        CHECK_INTEQ(chown(team, 0, 4243), 0);
        CHECK_INTEQ(chmod(team, 02775), 0);
        discover_approved(&set, r, "shared");
        expect_held(&set, "shared", "group 4243 may write");
        config_set_deinit(&set);
    }
    CHECK_INTEQ(chmod(team, 0700), 0);
    discover_approved(&set, r, "shared");
    CHECK(config_set_find(&set, "shared") != NULL);
    config_set_deinit(&set);
    test_rm_rf(team);
    _cleanup_free_ char *cj = paths_join(home, ".claude.json");
    unlink(cj);
}

static char *race_file, *race_aside, *race_target;
static bool race_swapped;

/* The gate, after the file was read: swap it for a link to a file the user owns. */
static bool swapping_gate(void *ctx, ConfigSet *set, const ConfigGateEntry *e)
{
    if (!race_swapped) {
        CHECK_INTEQ(rename(race_file, race_aside), 0);
        CHECK_INTEQ(symlink(race_target, race_file), 0);
        race_swapped = true;
    }
    return trust_gate_entry(ctx, set, e);
}

/*
 * The gate judges the file that was read: another user's .mcp.json, swapped for a link to the
 * user's own file between the read and the check, still runs nothing.
 */
static void test_swap_after_read(void)
{
    _cleanup_free_ char *dir = paths_join(tmp, "race"), *r = NULL, *why = NULL;
    _cleanup_free_ char *answers = NULL;
    DiscoverOptions opt = {NULL, NULL};
    ConfigSet set;
    Settings s;
    Trust t;

    if (geteuid() != 0)
        return; /* another user's file needs root */
    CHECK_INTEQ(paths_mkdir_p(dir, 0700), 0);
    r = realpath(dir, NULL);
    race_file = paths_join(r, ".mcp.json");
    race_aside = paths_join(tmp, "race-aside.json");
    race_target = paths_join(tmp, "mine.json");
    race_swapped = false;
    test_write_file(race_file, "{\"mcpServers\": {\"p\": {\"command\": \"theirs\"}}}");
    CHECK_INTEQ(chown(race_file, 4242, 4242), 0);
    test_write_file(race_target, "{}");
    answers = xasprintf("{\"projects\": {\"%s\": {\"enabledMcpjsonServers\": [\"p\"]}}}", r);
    put(home, ".claude.json", answers);
    trust_init(&t, r, &why);
    memset(&set, 0, sizeof(set));
    set.root = r;
    set.gate = swapping_gate;
    set.gate_ctx = &t;
    opt.root = r;
    settings_init(&s);
    int i = config_source_index("claude");
    CHECK(i >= 0);
    config_sources[i].collect(&config_sources[i], &opt, &s, &set);
    CHECK(race_swapped);
    CHECK(config_set_find(&set, "p") == NULL);
    expect_held(&set, "p", "owned by uid 4242");
    config_set_deinit(&set);
    trust_deinit(&t);
    test_rm_rf(dir);
    unlink(race_aside);
    unlink(race_target);
    free(race_file);
    free(race_aside);
    free(race_target);
    _cleanup_free_ char *cj = paths_join(home, ".claude.json");
    unlink(cj);
}

static void test_claude_answers(void)
{
    _cleanup_free_ char *cc = paths_join(tmp, "claude-dir");
    _cleanup_free_ char *answers =
        xasprintf("{\"projects\": {\"%s\": {\"hasTrustDialogAccepted\": true, "
                  "\"enabledMcpjsonServers\": [\"c1\"], "
                  "\"disabledMcpjsonServers\": [\"c2\"], \"mcpServers\": {\"local\": {\"command\": "
                  "\"l\"}}}}}",
                  root);
    _cleanup_free_ char *all =
        xasprintf("{\"projects\": {\"%s\": {\"enableAllProjectMcpServers\": true, "
                  "\"hasTrustDialogAccepted\": true, \"disabledMcpjsonServers\": [\"c2\"]}}}",
                  root);
    ConfigSet set;

    put(root, ".mcp.json",
        "{\"mcpServers\": {\"c1\": {\"command\": \"1\"}, \"c2\": {\"command\": \"2\"},"
        " \"c3\": {\"command\": \"3\"}}}");
    put(home, ".claude.json", answers);
    discover(&set);
    CHECK(config_set_find(&set, "c1") != NULL);
    expect_held(&set, "c2", "rejected in Claude Code (disabledMcpjsonServers)");
    expect_held(&set, "c3", "untrusted");
    /* projects[root].mcpServers live in the user's own file, outside the project: not gated. */
    CHECK(config_set_find(&set, "local") != NULL);
    config_set_deinit(&set);

    /* CLAUDE_CONFIG_DIR moves .claude.json. */
    put(cc, ".claude.json", all);
    setenv("CLAUDE_CONFIG_DIR", cc, 1);
    discover(&set);
    CHECK(config_set_find(&set, "c1") && config_set_find(&set, "c3"));
    expect_held(&set, "c2", "rejected");
    CHECK(config_set_find(&set, "local") == NULL);
    config_set_deinit(&set);
    unsetenv("CLAUDE_CONFIG_DIR");
    /* mcpd's own approval overrides Claude's no. */
    CHECK_INTEQ(approve("c2"), 0);
    discover(&set);
    CHECK(config_set_find(&set, "c2") != NULL);
    config_set_deinit(&set);
}

/*
 * Issue 39.1: Claude Code's approvals, wherever the user keeps them (the user settings'
 * enableAllProjectMcpServers or enabledMcpjsonServers, ~/.claude.json), count only once the user
 * accepted Claude Code's trust dialog for the folder or one above it, as Claude Code runs nothing
 * of a folder before.
 */
static void test_claude_folder_trust(void)
{
    _cleanup_free_ char *parent = paths_dirname(root);
    _cleanup_free_ char *above =
        xasprintf("{\"projects\": {\"%s\": {\"hasTrustDialogAccepted\": true}}}", parent);
    _cleanup_free_ char *other =
        xasprintf("{\"projects\": {\"%s/elsewhere\": {\"hasTrustDialogAccepted\": true}}}", parent);
    _cleanup_free_ char *user_settings = paths_join(home, ".claude/settings.json");
    ConfigSet set;

    put(root, ".mcp.json",
        "{\"mcpServers\": {\"github\": {\"command\": \"1\"}, \"c3\": {\"command\": \"3\"}}}");
    put(home, ".claude/settings.json", "{\"enabledMcpjsonServers\": [\"github\"]}");
    put(home, ".claude.json", "{\"projects\": {}}");
    discover(&set);
    expect_held(&set, "github", "counts only once you accept Claude Code's trust dialog");
    expect_held(&set, "c3", "untrusted");
    config_set_deinit(&set);
    put(home, ".claude/settings.json", "{\"enableAllProjectMcpServers\": true}");
    put(home, ".claude.json", other);
    discover(&set);
    expect_held(&set, "github", "trust dialog");
    expect_held(&set, "c3", "trust dialog");
    config_set_deinit(&set);
    /* Trusted in Claude Code (here for the folder above): its approvals count. */
    put(home, ".claude.json", above);
    discover(&set);
    CHECK(config_set_find(&set, "github") && config_set_find(&set, "c3"));
    config_set_deinit(&set);
    unlink(user_settings);
    _cleanup_free_ char *mcp = paths_join(root, ".mcp.json");
    unlink(mcp);
}

/* Claude Code's order: local (projects[root]) > project (.mcp.json) > user (top level). */
static void test_claude_precedence(void)
{
    _cleanup_free_ char *both =
        xasprintf("{\"mcpServers\": {\"p\": {\"command\": \"user\"}}, \"projects\": {\"%s\": "
                  "{\"enableAllProjectMcpServers\": true, \"hasTrustDialogAccepted\": true, "
                  "\"mcpServers\": {\"p\": {\"command\": \"local\"}}}}}",
                  root);
    _cleanup_free_ char *no_local =
        xasprintf("{\"mcpServers\": {\"p\": {\"command\": \"user\"}}, \"projects\": {\"%s\": "
                  "{\"enableAllProjectMcpServers\": true, \"hasTrustDialogAccepted\": true}}}",
                  root);
    ConfigSet set;
    ServerConfig *c;

    put(root, ".mcp.json", "{\"mcpServers\": {\"p\": {\"command\": \"project\"}}}");
    put(home, ".claude.json", both);
    discover(&set);
    CHECK((c = config_set_find(&set, "p")) && streq(c->command, "local"));
    config_set_deinit(&set);
    put(home, ".claude.json", no_local);
    discover(&set);
    CHECK((c = config_set_find(&set, "p")) && streq(c->command, "project") &&
          streq(c->source.provider, "claude"));
    config_set_deinit(&set);
    /* Not approved, the project entry masks nothing: the user's own wins. */
    put(home, ".claude.json", "{\"mcpServers\": {\"p\": {\"command\": \"user\"}}}");
    discover(&set);
    CHECK((c = config_set_find(&set, "p")) && streq(c->command, "user"));
    config_set_deinit(&set);
    _cleanup_free_ char *mcp = paths_join(root, ".mcp.json");
    unlink(mcp);
}

/* managed-mcp.json, when present, is all of Claude Code's servers. */
static void test_claude_managed(void)
{
    _cleanup_free_ char *managed = paths_join(tmp, "managed-mcp.json");
    ConfigSet set;

    put(home, ".claude.json", "{\"mcpServers\": {\"mine\": {\"command\": \"m\"}}}");
    test_write_file(managed, "{\"mcpServers\": {\"corp\": {\"command\": \"corp\"}}}");
    setenv("MCPD_CLAUDE_MANAGED_MCP", managed, 1);
    discover(&set);
    CHECK(config_set_find(&set, "corp") && !config_set_find(&set, "mine"));
    config_set_deinit(&set);
    unlink(managed);
    discover(&set);
    CHECK(!config_set_find(&set, "corp") && config_set_find(&set, "mine"));
    config_set_deinit(&set);
}

static void test_codex_and_gemini_answers(void)
{
    _cleanup_free_ char *trusted =
        xasprintf("[projects.\"%s\"]\ntrust_level = \"trusted\"\n", root);
    _cleanup_free_ char *untrusted =
        xasprintf("[projects.\"%s\"]\ntrust_level = \"untrusted\"\n", root);
    _cleanup_free_ char *parent_rule = xasprintf("{\"%s/sub\": \"TRUST_PARENT\"}", root);
    _cleanup_free_ char *no_rule = xasprintf("{\"%s\": \"DO_NOT_TRUST\"}", root);
    ConfigSet set;

    put(root, ".codex/config.toml", "[mcp_servers.k]\ncommand = \"k\"\n");
    put(root, ".gemini/settings.json", "{\"mcpServers\": {\"g\": {\"command\": \"g\"}}}");
    put(home, ".codex/config.toml", untrusted);
    put(home, ".gemini/trustedFolders.json", no_rule);
    discover(&set);
    expect_held(&set, "k", "untrusted");
    expect_held(&set, "g", "untrusted");
    config_set_deinit(&set);

    /* A key that is not an absolute path approves nothing (it would resolve against mcpd's cwd). */
    put(home, ".gemini/trustedFolders.json", "{\"\": \"TRUST_FOLDER\", \".\": \"TRUST_PARENT\"}");
    discover(&set);
    expect_held(&set, "g", "untrusted");
    config_set_deinit(&set);

    put(home, ".codex/config.toml", trusted);
    put(home, ".gemini/trustedFolders.json", parent_rule);
    discover(&set);
    CHECK(config_set_find(&set, "k") && config_set_find(&set, "g"));
    config_set_deinit(&set);

    /* Gemini with folder trust switched off reads every workspace. */
    put(home, ".gemini/trustedFolders.json", "{}");
    put(home, ".gemini/settings.json", "{\"security\": {\"folderTrust\": {\"enabled\": false}}}");
    discover(&set);
    CHECK(config_set_find(&set, "g") != NULL);
    config_set_deinit(&set);
}

/* {"enabled": false} alone masks, in mcpd's own file; "!cmd" runs only from mcpd's files. */
static void test_masks_and_commands(void)
{
    _cleanup_free_ char *user = paths_join(home, ".config/mcpd/mcp.json");
    ConfigSet set;
    ServerConfig *c;

    put(home, ".config/mcpd/mcp.json",
        "{\"mcpServers\": {\"m\": {\"enabled\": false}, \"own\": {\"command\": \"o\"}}}");
    put(home, ".claude.json",
        "{\"mcpServers\": {\"m\": {\"command\": \"claude-m\"}, \"cm\": {\"enabled\": false},"
        " \"theirs\": {\"command\": \"t\", \"env\": {\"K\": \"!x\"}}}}");
    discover(&set);
    c = config_set_find(&set, "m");
    CHECK(c && !c->enabled && streq(c->source.path, user));
    CHECK(skip_of(&set, "m") && strstr(skip_of(&set, "m")->reason, "masked by the disabled"));
    expect_held(&set, "cm", "requires \"command\"");
    CHECK((c = config_set_find(&set, "own")) && c->allow_commands);
    CHECK((c = config_set_find(&set, "theirs")) && !c->allow_commands);
    config_set_deinit(&set);
    unlink(user);
}

/* enabledTools / disabledTools as globs; a bad filter names the field; Claude's per-project off. */
static void test_filters(void)
{
    _cleanup_free_ char *user = paths_join(home, ".config/mcpd/mcp.json");
    _cleanup_free_ char *off =
        xasprintf("{\"mcpServers\": {\"co\": {\"command\": \"c\"}}, \"projects\": {\"%s\": "
                  "{\"disabledMcpServers\": [\"co\"]}}}",
                  root);
    _cleanup_json_ yajl_val tools = json_parse(
        "[{\"name\": \"read_a\"}, {\"name\": \"read_b\"}, {\"name\": \"write\"}, {}]", NULL);
    ConfigSet set;
    ServerConfig *c;

    put(home, ".config/mcpd/mcp.json",
        "{\"mcpServers\": {\"f\": {\"command\": \"f\", \"enabledTools\": [\"read_*\"],"
        " \"disabledTools\": [\"*_b\"]}, \"bad\": {\"command\": \"b\", \"disabledTools\": "
        "\"x\"}}}");
    put(home, ".claude.json", off);
    discover(&set);
    c = config_set_find(&set, "f");
    CHECK(c && config_tool_allowed(c, "read_a") && !config_tool_allowed(c, "read_b") &&
          !config_tool_allowed(c, "write"));
    CHECK(c && config_filter_tools(c, tools) == 2);
    CHECK_INTEQ(json_array_len(tools), 2); /* read_a, and the nameless one (not ours to judge) */
    expect_held(&set, "bad", "\"disabledTools\" must be an array of tool names");
    expect_held(&set, "co", "switched off in Claude Code for this project");
    config_set_deinit(&set);
    unlink(user);
}

/* A missing envFile is a problem naming the server, which still starts. */
/*
 * Approvals made under the first fingerprint (the file and the entry, no envFile contents):
 * one of an entry without an envFile still stands (the same bytes were hashed, and they were
 * all that decided what it runs); one of an entry with an envFile is asked for again, saying
 * why.
 */
static void test_old_approvals(void)
{
    _cleanup_free_ char *file = paths_join(root, ".mcpd/mcp.json");
    _cleanup_free_ char *store = paths_join(state, "mcpd/trust.json");
    const char *entries[] = {"{\"command\": \"plain\"}",
                             "{\"command\": \"withenv\", \"envFile\": \".env\"}"};
    TrustHash v1[2];
    ConfigSet set;

    put(root, ".mcpd/mcp.json",
        "{\"mcpServers\": {\"plain\": {\"command\": \"plain\"}, \"withenv\": "
        "{\"command\": \"withenv\", \"envFile\": \".env\"}}}");
    put(root, ".env", "NODE_OPTIONS=--require ./evil.js\n");
    for (size_t i = 0; i < 2; i++) {
        _cleanup_json_ yajl_val v = json_parse(entries[i], NULL);
        StrBuf sb = STRBUF_INIT;
        strbuf_printf(&sb, "%s\n", file);
        json_write_sorted(&sb, v);
        sha256_hex(v1[i], sb.data, sb.len);
        strbuf_deinit(&sb);
    }
    _cleanup_free_ char *old = xasprintf(
        "{\"version\": 1, \"projects\": {\"%s\": {\"plain\": [\"%s\"], \"withenv\": [\"%s\"]}}}",
        root, v1[0], v1[1]);
    put(state, "mcpd/trust.json", old);
    discover(&set);
    CHECK(config_set_find(&set, "plain") != NULL);
    expect_held(&set, "withenv",
                "approved before mcpd's approvals covered the contents of an "
                "envFile");
    expect_held(&set, "withenv", "sets 'NODE_OPTIONS=--require ./evil.js'");
    config_set_deinit(&set);
    unlink(store);
    unlink(file);
    _cleanup_free_ char *env = paths_join(root, ".env");
    unlink(env);
}

static void test_env_file_missing(void)
{
    _cleanup_free_ char *user = paths_join(home, ".config/mcpd/mcp.json");
    ConfigSet set;
    bool named = false;

    put(home, ".config/mcpd/mcp.json",
        "{\"mcpServers\": {\"ef\": {\"command\": \"e\", \"envFile\": \"no-such.env\"}}}");
    discover(&set);
    CHECK(config_set_find(&set, "ef") != NULL);
    for (size_t i = 0; i < set.n_problems; i++)
        named = named || (set.problems[i].server && streq(set.problems[i].server, "ef") &&
                          strstr(set.problems[i].message, "no-such.env does not exist"));
    CHECK(named);
    config_set_deinit(&set);
    unlink(user);
}

/* A root mcpd may not read gives no servers and one problem (not one per file). */
static void test_unreadable_root(void)
{
    ConfigSet set;
    DiscoverOptions opt = {NULL, root};
    Settings s;

    if (geteuid() == 0)
        return; /* root reads every directory: nothing to test */
    settings_init(&s);
    CHECK_INTEQ(chmod(root, 0), 0);
    CHECK_INTEQ(config_discover(&set, &opt, &s), -EACCES);
    CHECK_INTEQ(set.n_servers, 0);
    CHECK_INTEQ(set.n_problems, 1);
    config_set_deinit(&set);
    CHECK_INTEQ(chmod(root, 0700), 0);
}

int main(void)
{
    setup();
    RUN(test_store);
    RUN(test_broken_store);
    RUN(test_foreign_files);
    RUN(test_group_writable);
    RUN(test_parent_dir_writable);
    RUN(test_swap_after_read);
    RUN(test_claude_answers);
    RUN(test_claude_folder_trust);
    RUN(test_claude_precedence);
    RUN(test_claude_managed);
    RUN(test_codex_and_gemini_answers);
    RUN(test_masks_and_commands);
    RUN(test_filters);
    RUN(test_old_approvals);
    RUN(test_env_file_missing);
    RUN(test_unreadable_root);
    teardown();
    return test_main_result();
}
