// SPDX-License-Identifier: MIT
// fuzz-agents: libFuzzer target for every provider's reading and mapping (JSONC, YAML, TOML,
// the streaming ~/.claude.json reader), through the real collect functions.

/*
 * The first byte picks a provider file; the rest is written there, in a private home, config
 * home and project, and that provider's collect runs end to end (read, parse, map, validate,
 * first wins). Every problem must name a file and every server must come out whole. The
 * three parsers also see every input directly.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "common/json.h"
#include "common/jsonc.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/util.h"
#include "daemon/config/claude-json.h"
#include "daemon/config/config.h"
#include "daemon/config/server-entry.h"
#include "daemon/config/source.h"
#include "daemon/config/yaml-tree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A provider and one of its files: under home ("~/"), config home ("@/") or the project. */
typedef struct Target {
    const char *provider;
    const char *file;
} Target;

static const Target targets[] = {
    {"claude", "~/.claude.json"},
    {"codex", "~/.codex/config.toml"},
    {"gemini", "~/.gemini/settings.json"},
    {"cursor", "~/.cursor/mcp.json"},
    {"windsurf", "~/.codeium/windsurf/mcp_config.json"},
    {"vscode", ".vscode/mcp.json"},
    {"vscode", "@/Code/User/mcp.json"},
    {"mcp-json", ".mcp.json"},
    {"copilot", "~/.copilot/mcp-config.json"},
    {"claude-desktop", "@/Claude/claude_desktop_config.json"},
    {"opencode", "opencode.json"},
    {"opencode", "@/opencode/opencode.jsonc"},
    {"zed", "@/zed/settings.json"},
    {"cline", "~/.cline/data/settings/cline_mcp_settings.json"},
    {"roo", ".roo/mcp.json"},
    {"kiro", "~/.kiro/settings/mcp.json"},
    {"antigravity", "~/.gemini/antigravity/mcp_config.json"},
    {"antigravity-cli", "~/.gemini/config/mcp_config.json"},
    {"goose", "@/goose/config.yaml"},
    {"continue", ".continue/mcpServers/block.yaml"},
    {"continue", ".continue/mcpServers/block.json"},
    {"mcpd", "@/mcpd/mcp.json"},
};

static char *home, *config, *root, *paths[N_ELEMENTS(targets)];

static void setup(void)
{
    char tmpl[] = "/tmp/fuzz-agents-XXXXXX";

    log_set_level(LOG_EMERG); /* problems are checked, not printed */
    if (!mkdtemp(tmpl))
        abort();
    home = paths_join(tmpl, "home");
    config = paths_join(tmpl, "config");
    root = paths_join(tmpl, "project");
    setenv("HOME", home, 1);
    setenv("XDG_CONFIG_HOME", config, 1);
    unsetenv("CODEX_HOME");
    unsetenv("COPILOT_HOME");
    for (size_t i = 0; i < N_ELEMENTS(targets); i++) {
        const char *f = targets[i].file;
        paths[i] = f[0] == '~'   ? paths_join(home, f + 2)
                   : f[0] == '@' ? paths_join(config, f + 2)
                                 : paths_join(root, f);
        _cleanup_free_ char *dir = paths_dirname(paths[i]);
        if (paths_mkdir_p(dir, 0700) < 0)
            abort();
    }
}

static void check_set(const ConfigSet *set)
{
    for (size_t i = 0; i < set->n_problems; i++)
        if (!set->problems[i].path || !set->problems[i].message)
            abort();
    for (size_t i = 0; i < set->n_servers; i++) {
        const ServerConfig *c = set->servers[i];
        if (!c->name || !c->hash[0] || !c->source.path || config_check_name(c->name))
            abort();
        /* A disabled entry may be a bare mask ({"enabled": false}) with neither. */
        if (c->enabled && (c->type == TRANSPORT_STDIO ? !c->command : !c->url))
            abort();
    }
}

static void parsers(const char *text, size_t len)
{
    _cleanup_free_ char *why1 = NULL, *why2 = NULL, *why3 = NULL;
    yajl_val v = NULL;

    json_free(jsonc_parse(text, len, &why1));
    if (claude_json_parse(text, len, &v, &why2) == 0)
        json_free(v);
    json_free(yaml_tree_parse(text, len, &why3));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    DiscoverOptions opt = {NULL, NULL};
    ConfigSet set = {.quiet = true};
    Settings settings;
    size_t t;
    FILE *f;

    if (!home)
        setup();
    if (size == 0)
        return 0;
    t = data[0] % N_ELEMENTS(targets);
    parsers((const char *)data + 1, size - 1);
    if (!(f = fopen(paths[t], "w")))
        abort();
    if (fwrite(data + 1, 1, size - 1, f) != size - 1)
        abort();
    fclose(f);
    settings_init(&settings);
    opt.root = root;
    set.root = root;
    const ConfigSource *src = &config_sources[config_source_index(targets[t].provider)];
    src->collect(src, &opt, &settings, &set);
    check_set(&set);
    config_set_deinit(&set);
    unlink(paths[t]);
    return 0;
}
