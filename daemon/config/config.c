// SPDX-License-Identifier: MIT
// config: the discovery driver: the providers of config_sources[] in priority order (or one
// explicit file) over a project root, through its trust gate (mcpd.json's keys: settings.c).

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/paths.h"
#include "common/util.h"
#include "daemon/config/config.h"
#include "daemon/config/source.h"
#include "daemon/config/trust-gate.h"

/*
 * Priority order: DESIGN section 6. The forms each agent fills, from its own documentation and
 * code (docs/configuration.md): Claude Code ${VAR} and ${VAR:-default} only
 * (code.claude.com/docs/en/mcp, "Environment variable expansion in .mcp.json"; a ${env:X} is
 * looked up as a variable named "env:X" and stays as written); Cursor documents ${env:NAME} and its
 * predefined variables, not a bare ${NAME}; Windsurf ${env:NAME} (and ${file:}, which mcpd does not
 * read); Gemini CLI $NAME, ${NAME} and ${NAME:-default} (packages/cli/src/utils/envVarResolver.ts),
 * not ${env:}; Cline ${env:NAME} only (apps/vscode/src/utils/envExpansion.ts); OpenCode its own
 * {env:NAME} only, which source-opencode.c turns into ${env:NAME:-} (so ${env:} stays on for it).
 */
const ConfigSource config_sources[] = {
    {"mcpd", "mcpd", source_native_collect, 0},
    {"imported", "mcpctl setup", source_imported_collect, 0},
    {"claude", "Claude Code", source_claude_collect, EXPAND_ENV | EXPAND_EDITOR},
    {"codex", "OpenAI Codex", source_codex_collect, 0},
    {"gemini", "Gemini CLI", source_gemini_collect, EXPAND_ENV | EXPAND_EDITOR},
    {"cursor", "Cursor", source_cursor_collect, EXPAND_VAR},
    {"windsurf", "Windsurf", source_windsurf_collect, EXPAND_VAR | EXPAND_EDITOR},
    {"vscode", "VS Code", source_vscode_collect, 0},
    {"mcp-json", "MCP Config", source_plain_collect, 0},
    {"copilot", "GitHub Copilot CLI", source_copilot_collect, 0},
    {"claude-desktop", "Claude Desktop", source_claude_desktop_collect, 0},
    {"opencode", "OpenCode", source_opencode_collect, EXPAND_VAR | EXPAND_EDITOR},
    {"zed", "Zed", source_zed_collect, 0},
    {"cline", "Cline", source_cline_collect, EXPAND_VAR | EXPAND_EDITOR},
    {"roo", "Roo Code", source_roo_collect, 0},
    {"kiro", "Kiro", source_kiro_collect, 0},
    {"antigravity", "Google Antigravity", source_antigravity_collect, 0},
    {"antigravity-cli", "Antigravity CLI", source_antigravity_cli_collect, 0},
    {"goose", "Goose", source_goose_collect, 0},
    {"continue", "Continue", source_continue_collect, 0},
    {NULL, NULL, NULL, 0},
};

int config_source_index(const char *id)
{
    for (int i = 0; config_sources[i].id; i++)
        if (streq(config_sources[i].id, id))
            return i;
    return -1;
}

/* A switched-off provider is still read, so discover can show what it would have given. */
static void collect_disabled(const ConfigSource *s, const DiscoverOptions *opt,
                             const Settings *settings, ConfigSet *out)
{
    ConfigSet tmp = {.quiet = true,
                     .root = out->root,
                     .gate = out->gate,
                     .gate_ctx = out->gate_ctx,
                     .folder_trust = out->folder_trust,
                     .root_is_home = out->root_is_home};

    s->collect(s, opt, settings, &tmp);
    for (size_t i = 0; i < tmp.n_servers; i++)
        config_set_skip(out, tmp.servers[i]->name, &tmp.servers[i]->source,
                        "provider \"%s\" is in disabledProviders", s->id);
    config_set_deinit(&tmp);
}

/*
 * The seed's critical discovery failure: a root that is not a readable directory gives the
 * workspace no servers at all and one error, filed under the project's .mcp.json, rather
 * than a partial set.
 */
static int check_root(ConfigSet *out, const char *root)
{
    _cleanup_free_ char *mcp = NULL;
    struct stat st;
    int r = stat(root, &st) < 0 ? -errno : S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;

    /* A directory mcpd may not list or enter would give a partial set and an error per file. */
    if (r == 0 && access(root, R_OK | X_OK) < 0)
        r = -errno;

    if (r == 0)
        return 0;
    mcp = paths_join(root, ".mcp.json");
    config_set_problem(out, mcp, NULL, "discovery failed for %s: %s; no servers for it", root,
                       strerror(-r));
    return r;
}

/* Whether root (a realpath, or NULL) is the user's home directory. */
static bool root_is_home(const char *root)
{
    _cleanup_free_ char *home = root ? paths_home() : NULL;
    _cleanup_free_ char *real = home ? realpath(home, NULL) : NULL;

    return real && streq(real, root);
}

static int discover(ConfigSet *out, const DiscoverOptions *opt, const Settings *settings,
                    bool quiet, Trust *trust, bool defer_notes)
{
    int r;

    memset(out, 0, sizeof(*out));
    out->quiet = quiet;
    out->defer_notes = defer_notes;
    out->keep_last_good = true;
    out->root = opt->root;
    out->root_is_home = root_is_home(opt->root);
    if (trust) {
        out->gate = trust_gate_entry;
        out->gate_ctx = trust;
        out->folder_trust = trust->folder_trust;
    }
    if (opt->root && !opt->config_file && (r = check_root(out, opt->root)) < 0)
        return r;
    if (opt->config_file) {
        config_load_native_file(out, opt->config_file, "mcpd", "mcpd (--config)", CONFIG_LEVEL_USER,
                                settings);
        return 0;
    }
    for (int i = 0; config_sources[i].id; i++) {
        const ConfigSource *s = &config_sources[i];
        if (settings->disabled_providers & (1u << i))
            collect_disabled(s, opt, settings, out);
        else
            s->collect(s, opt, settings, out);
    }
    return 0;
}

/* Discovery for a project goes through its trust gate, loaded fresh each time. */
static int discover_gated(ConfigSet *out, const DiscoverOptions *opt, const Settings *settings,
                          bool quiet, bool defer_notes)
{
    _cleanup_free_ char *why = NULL;
    Trust trust;
    int r;

    if (!opt->root || opt->config_file) {
        r = discover(out, opt, settings, quiet, NULL, defer_notes);
        return r;
    }
    trust_init(&trust, opt->root, &why);
    r = discover(out, opt, settings, quiet, &trust, defer_notes);
    out->gate = NULL;
    out->gate_ctx = NULL;
    if (why)
        config_set_problem(out, NULL, NULL,
                           "project approvals not read (nothing they approve runs): %s", why);
    trust_deinit(&trust);
    return r;
}

int config_discover(ConfigSet *out, const DiscoverOptions *opt, const Settings *settings)
{
    return discover_gated(out, opt, settings, false, false);
}

int config_discover_off_loop(ConfigSet *out, const DiscoverOptions *opt, const Settings *settings)
{
    return discover_gated(out, opt, settings, false, true);
}

int config_discover_quiet(ConfigSet *out, const DiscoverOptions *opt, const Settings *settings)
{
    return discover_gated(out, opt, settings, true, false);
}

int config_discover_trust(ConfigSet *out, const DiscoverOptions *opt, const Settings *settings,
                          Trust *trust)
{
    return discover(out, opt, settings, true, trust, false);
}
