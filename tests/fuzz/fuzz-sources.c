// SPDX-License-Identifier: MIT
// fuzz-sources: libFuzzer target for every provider's mapping and the project trust gate.

/*
 * The input is written as every file discovery reads, in a private home and project: each
 * agent's user and project files, ~/.claude.json (servers and approvals), Claude Code's plugin
 * list and settings, Gemini's trusted folders, Codex's config.toml. Discovery then runs end to end through each provider's own
 * mapping and the trust gate. What must hold whatever the bytes: every server has a name, a
 * hash and a source file; a problem names its file (or, for approvals that could not be read,
 * says so); and with mcpd's approval store absent, no file inside the project that only mcpd
 * can approve (.mcpd, .vscode, .cursor, .windsurf, mcp.json) ever yields a server.
 */

#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "common/log.h"
#include "common/paths.h"
#include "common/util.h"
#include "daemon/config/config.h"
#include "daemon/config/server-entry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *home, *root, *top;

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* The private tree goes when the fuzzer exits. */
static void cleanup(void)
{
    nftw(top, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Files under home (user level) and under the project root that get the input. */
static const char *const home_files[] = {
    ".claude.json",
    ".codex/config.toml",
    ".gemini/settings.json",
    ".cursor/mcp.json",
    ".gemini/trustedFolders.json",
    ".codeium/windsurf/mcp_config.json",
    ".config/mcpd/mcp.json",
    /* Claude Code plugins, Continue's older file, VS Code's older settings, OpenCode. */
    ".claude/plugins/installed_plugins.json",
    ".claude/settings.json",
    ".continue/config.json",
    ".config/Code/User/settings.json",
    ".config/opencode/opencode.json",
};
static const char *const project_files[] = {
    ".mcpd/mcp.json",
    ".mcp.json",
    "mcp.json",
    ".codex/config.toml",
    ".gemini/settings.json",
    ".cursor/mcp.json",
    ".windsurf/mcp_config.json",
    ".vscode/mcp.json",
};
/* Only mcpd's store approves these; the store never exists here. */
static const char *const mcpd_only[] = {
    ".mcpd/mcp.json",   "mcp.json", ".cursor/mcp.json", ".windsurf/mcp_config.json",
    ".vscode/mcp.json",
};

static void put(const char *dir, const char *rel, const uint8_t *data, size_t size)
{
    _cleanup_free_ char *path = paths_join(dir, rel), *parent = paths_dirname(path);
    FILE *f;

    if (paths_mkdir_p(parent, 0700) < 0 || !(f = fopen(path, "w")))
        abort();
    if (size && fwrite(data, 1, size, f) != size)
        abort();
    fclose(f);
}

static void setup(void)
{
    char tmpl[] = "/tmp/fuzz-sources-XXXXXX";
    char *tmp = mkdtemp(tmpl);

    if (!tmp)
        abort();
    top = xstrdup(tmp);
    atexit(cleanup);
    log_set_level(LOG_EMERG); /* problems are checked, not printed */
    home = paths_join(tmp, "home");
    root = paths_join(tmp, "project");
    _cleanup_free_ char *conf = paths_join(home, ".config"), *state = paths_join(tmp, "state");
    _cleanup_free_ char *sys = paths_join(tmp, "none.json");
    if (paths_mkdir_p(conf, 0700) < 0 || paths_mkdir_p(root, 0700) < 0)
        abort();
    setenv("HOME", home, 1);
    setenv("XDG_CONFIG_HOME", conf, 1);
    setenv("XDG_STATE_HOME", state, 1);
    setenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH", sys, 1);
    setenv("MCPD_CLAUDE_MANAGED_MCP", sys, 1);
    unsetenv("CODEX_HOME");
    unsetenv("CLAUDE_CONFIG_DIR");
}

static void check_set(const ConfigSet *set)
{
    for (size_t i = 0; i < set->n_problems; i++)
        if (!set->problems[i].message ||
            (!set->problems[i].path &&
             !strstr(set->problems[i].message, "project approvals not read")))
            abort();
    for (size_t i = 0; i < set->n_servers; i++) {
        const ServerConfig *c = set->servers[i];
        if (!c->name || !c->hash[0] || !c->source.path || config_check_name(c->name))
            abort();
        for (size_t j = 0; j < N_ELEMENTS(mcpd_only); j++) {
            _cleanup_free_ char *p = paths_join(root, mcpd_only[j]);
            if (streq(c->source.path, p))
                abort(); /* ran without approval */
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    DiscoverOptions opt = {NULL, NULL};
    ConfigSet set;
    Settings settings;

    if (!home)
        setup();
    for (size_t i = 0; i < N_ELEMENTS(home_files); i++)
        put(home, home_files[i], data, size);
    for (size_t i = 0; i < N_ELEMENTS(project_files); i++)
        put(root, project_files[i], data, size);
    settings_init(&settings);
    opt.root = root;
    config_discover(&set, &opt, &settings);
    check_set(&set);
    config_set_deinit(&set);
    opt.root = NULL;
    config_discover(&set, &opt, &settings);
    check_set(&set);
    config_set_deinit(&set);
    return 0;
}
