// SPDX-License-Identifier: MIT
// agents: the MCP hosts whose files mcpd reads, where each keeps its user-level servers, and
// how each is set up to start only mcpd's bridge (mcpctl setup), or why it is not.

#include <stdlib.h>
#include <string.h>

#include "common/agents.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"

/*
 * The bridge lists tools under names that fit 64 characters after the host's own prefix
 * (client/bridge.c). Claude Code names a tool mcp__<server>__<tool> (code.claude.com/docs/en/mcp),
 * so for the server "mcpd" it adds "mcp__mcpd__". The other agents' prefixes are not pinned down
 * by their documentation; the same 11 characters are assumed for them, as long as or longer than
 * what each is known to add (nothing, or "<server>__" or "<server>_"), so their names fit too.
 */
#define PREFIX_CLAUDE       "mcp__mcpd__"
#define PREFIX_CONSERVATIVE "mcp__mcpd__"
#define BRIDGE_ARGS         "[\"bridge\", \"--host-prefix\", \"" PREFIX_CONSERVATIVE "\"]"

/* A plain "mcpServers" entry (Claude Desktop, Cline, Roo Code, Kiro, Antigravity). */
#define BY_HAND_MCPSERVERS                                                                         \
    "\"mcpServers\": {\"mcpd\": {\"command\": \"@MCPCTL@\", \"args\": " BRIDGE_ARGS "}}"

/*
 * Why setup leaves an agent to the user. Setup moves an agent's servers to
 * $XDG_CONFIG_HOME/mcpd/imported/<agent>.json, and mcpd's discovery reads that file for the
 * agents setup covers only (daemon/config/source-imported.c, each with its own provider's
 * mapping); moving another agent's servers there would stop them.
 */
#define WHY_NOT_READ                                                                               \
    "mcpd does not read servers moved out of this agent's file yet, so setup would stop them"

/*
 * Where each agent keeps its user-level servers, as mcpd's discovery reads them
 * (docs/configuration.md has the table; daemon/config/source-*.c the readers):
 * - Claude Code: ~/.claude.json, "mcpServers" at the top (user scope) and under
 *   "projects"["<dir>"] (local scope) (code.claude.com/docs/en/mcp, "MCP installation scopes").
 * - Codex: $CODEX_HOME/config.toml (default ~/.codex), [mcp_servers.<name>] tables
 *   (developers.openai.com/codex/mcp).
 * - Gemini CLI: ~/.gemini/settings.json, "mcpServers" (geminicli.com/docs/tools/mcp-server).
 * - Cursor: ~/.cursor/mcp.json; Windsurf: ~/.codeium/windsurf/mcp_config.json ("mcpServers").
 * - OpenCode: $XDG_CONFIG_HOME/opencode/opencode.json[c], "mcp", each {"type": "local",
 *   "command": [...]} (opencode.ai/docs/mcp-servers).
 * - VS Code: $XDG_CONFIG_HOME/Code/User/mcp.json, "servers" with "type" (code.visualstudio.com,
 *   "MCP configuration reference"); VS Code Insiders and VSCodium the same under
 *   "Code - Insiders" and "VSCodium".
 * - Claude Desktop: $XDG_CONFIG_HOME/Claude/claude_desktop_config.json, "mcpServers".
 * - Zed: $XDG_CONFIG_HOME/zed/settings.json, "context_servers" (zed.dev/docs/ai/mcp).
 * - Cline: ~/.cline/data/settings/cline_mcp_settings.json; Roo Code: the VS Code extension's
 *   mcp_settings.json; Kiro: ~/.kiro/settings/mcp.json; Antigravity:
 *   ~/.gemini/antigravity/mcp_config.json, and the Antigravity CLI (agy)
 *   ~/.gemini/config/mcp_config.json ("mcpServers").
 * - Copilot CLI: $COPILOT_HOME/mcp-config.json (default ~/.copilot), "mcpServers" with "type"
 *   and "tools".
 * - goose: $XDG_CONFIG_HOME/goose/config.yaml, "extensions"; Continue: ~/.continue/config.yaml,
 *   "mcpServers" as a list (YAML: setup's byte-exact edits cover JSON and TOML only).
 */
/* An agent whose servers sit in a plain "mcpServers" object, set up like Cursor. */
#define SETUP_PLAIN(id, name, base, rel, more)                                                     \
    {                                                                                              \
        id, name, AGENT_FORMAT_JSON, base, rel, NULL, "mcpServers", "one server, mcpd",            \
            PREFIX_CONSERVATIVE, false, NULL, BY_HAND_MCPSERVERS, more                             \
    }

/*
 * The VS Code builds, by their directories under the XDG config home (Electron's appData on
 * Linux): https://code.visualstudio.com/docs/configure/settings#_settings-file-locations
 */
#define VSCODE_CODE     "Code"
#define VSCODE_INSIDERS "Code - Insiders"
#define VSCODE_CODIUM   "VSCodium"

const char *const agents_vscode_builds[] = {VSCODE_CODE, VSCODE_INSIDERS, VSCODE_CODIUM, NULL};

/* A VS Code extension's file in the builds after the first (the first's is the agent's rel). */
#define IN_OTHER_VSCODE_BUILDS(rel)                                                                \
    {AGENT_BASE_CONFIG, VSCODE_INSIDERS "/User/" rel},                                             \
    {                                                                                              \
        AGENT_BASE_CONFIG, VSCODE_CODIUM "/User/" rel                                              \
    }

/* Where Cline and Roo Code keep their servers inside a VS Code build's User directory. */
#define CLINE_STORAGE "globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"
#define ROO_STORAGE   "globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json"

/*
 * A VS Code build's user mcp.json ("servers", each with a "type"; daemon/config/source-vscode.c
 * reads the same three builds). Setup moves the servers mcpd can run and leaves those holding
 * what only VS Code fills in (client/setup-vscode.c).
 */
#define SETUP_VSCODE(id, name, build)                                                              \
    {                                                                                              \
        id, name, AGENT_FORMAT_JSON, AGENT_BASE_CONFIG, build "/User/mcp.json", NULL, "servers",   \
            "one server, mcpd", PREFIX_CONSERVATIVE, false, NULL,                                  \
            "\"servers\": {\"mcpd\": {\"type\": \"stdio\", \"command\": \"@MCPCTL@\", "            \
            "\"args\": " BRIDGE_ARGS "}}",                                                         \
            NULL                                                                                   \
    }

static const AgentInfo agents[] = {
    {"claude", "Claude Code", AGENT_FORMAT_JSON, AGENT_BASE_HOME, ".claude.json",
     "CLAUDE_CONFIG_DIR", "mcpServers", "one server, mcpd", PREFIX_CLAUDE, false, NULL,
     "\"mcpServers\": {\"mcpd\": {\"command\": \"@MCPCTL@\", \"args\": [\"bridge\", "
     "\"--host-prefix\", \"" PREFIX_CLAUDE "\", \"--host\", \"claude\"]}}",
     NULL},
    {"codex", "OpenAI Codex", AGENT_FORMAT_TOML, AGENT_BASE_HOME, ".codex/config.toml",
     "CODEX_HOME", "mcp_servers", "mcp_servers.mcpd", PREFIX_CONSERVATIVE, true, NULL,
     "[mcp_servers.mcpd]\ncommand = \"@MCPCTL@\"\nargs = " BRIDGE_ARGS
     "\nenv_vars = [\"XDG_RUNTIME_DIR\", \"MCPD_SOCKET\"]",
     NULL},
    {"gemini", "Gemini CLI", AGENT_FORMAT_JSON, AGENT_BASE_HOME, ".gemini/settings.json", NULL,
     "mcpServers", "one server, mcpd", PREFIX_CONSERVATIVE, false, NULL, BY_HAND_MCPSERVERS, NULL},
    {"cursor", "Cursor", AGENT_FORMAT_JSON, AGENT_BASE_HOME, ".cursor/mcp.json", NULL, "mcpServers",
     "one server, mcpd", PREFIX_CONSERVATIVE, false, NULL, BY_HAND_MCPSERVERS, NULL},
    {"windsurf", "Windsurf", AGENT_FORMAT_JSON, AGENT_BASE_HOME,
     ".codeium/windsurf/mcp_config.json", NULL, "mcpServers", "one server, mcpd",
     PREFIX_CONSERVATIVE, false, NULL, BY_HAND_MCPSERVERS,
     /* Windsurf's JetBrains plugin (docs.windsurf.com/plugins/cascade/mcp), the same shape. */
     (const AgentFile[]){{AGENT_BASE_HOME, ".codeium/mcp_config.json"}, {0}}},
    {"opencode", "OpenCode", AGENT_FORMAT_JSON, AGENT_BASE_CONFIG, "opencode/opencode.json", NULL,
     "mcp", "one server, mcpd", PREFIX_CONSERVATIVE, false, WHY_NOT_READ,
     "\"mcp\": {\"mcpd\": {\"type\": \"local\", \"command\": [\"@MCPCTL@\", \"bridge\", "
     "\"--host-prefix\", \"" PREFIX_CONSERVATIVE "\"]}}",
     /* OpenCode's other global files: read first and last (source-opencode.c says why). */
     (const AgentFile[]){{AGENT_BASE_CONFIG, "opencode/opencode.jsonc"},
                         {AGENT_BASE_CONFIG, "opencode/config.json"},
                         {0}}},
    SETUP_VSCODE("vscode", "VS Code", VSCODE_CODE),
    SETUP_VSCODE("vscode-insiders", "VS Code Insiders", VSCODE_INSIDERS),
    SETUP_VSCODE("vscodium", "VSCodium", VSCODE_CODIUM),
    SETUP_PLAIN("claude-desktop", "Claude Desktop", AGENT_BASE_CONFIG,
                "Claude/claude_desktop_config.json", NULL),
    {"zed", "Zed", AGENT_FORMAT_JSON, AGENT_BASE_CONFIG, "zed/settings.json", NULL,
     "context_servers", "one server, mcpd", PREFIX_CONSERVATIVE, false, WHY_NOT_READ,
     "\"context_servers\": {\"mcpd\": {\"source\": \"custom\", \"command\": \"@MCPCTL@\", "
     "\"args\": " BRIDGE_ARGS "}}",
     NULL},
    /* Cline's own file (shared by its CLI and IDE), then the VS Code extension's storage. */
    SETUP_PLAIN("cline", "Cline", AGENT_BASE_HOME, ".cline/data/settings/cline_mcp_settings.json",
                ((const AgentFile[]){{AGENT_BASE_CONFIG, VSCODE_CODE "/User/" CLINE_STORAGE},
                                     IN_OTHER_VSCODE_BUILDS(CLINE_STORAGE),
                                     {0}})),
    SETUP_PLAIN("roo", "Roo Code", AGENT_BASE_CONFIG, VSCODE_CODE "/User/" ROO_STORAGE,
                ((const AgentFile[]){IN_OTHER_VSCODE_BUILDS(ROO_STORAGE), {0}})),
    SETUP_PLAIN("kiro", "Kiro", AGENT_BASE_HOME, ".kiro/settings/mcp.json", NULL),
    SETUP_PLAIN("antigravity", "Antigravity", AGENT_BASE_HOME,
                ".gemini/antigravity/mcp_config.json", NULL),
    SETUP_PLAIN("antigravity-cli", "Antigravity CLI", AGENT_BASE_HOME,
                ".gemini/config/mcp_config.json", NULL),
    {"copilot", "GitHub Copilot CLI", AGENT_FORMAT_JSON, AGENT_BASE_HOME,
     ".copilot/mcp-config.json", "COPILOT_HOME", "mcpServers", "one server, mcpd",
     PREFIX_CONSERVATIVE, false, WHY_NOT_READ,
     "\"mcpServers\": {\"mcpd\": {\"type\": \"local\", \"command\": \"@MCPCTL@\", "
     "\"args\": " BRIDGE_ARGS ", \"tools\": [\"*\"]}}",
     NULL},
    {"goose", "goose", AGENT_FORMAT_YAML, AGENT_BASE_CONFIG, "goose/config.yaml", NULL,
     "extensions", "one extension, mcpd", PREFIX_CONSERVATIVE, false, WHY_NOT_READ,
     "extensions:\n  mcpd:\n    name: mcpd\n    type: stdio\n    enabled: true\n    cmd: "
     "@MCPCTL@\n    args: [bridge, --host-prefix, " PREFIX_CONSERVATIVE "]\n    timeout: 300",
     NULL},
    {"continue", "Continue", AGENT_FORMAT_YAML, AGENT_BASE_HOME, ".continue/config.yaml", NULL,
     "mcpServers", "one server, mcpd", PREFIX_CONSERVATIVE, false, WHY_NOT_READ,
     "mcpServers:\n  - name: mcpd\n    command: @MCPCTL@\n    args: [bridge, "
     "--host-prefix, " PREFIX_CONSERVATIVE "]",
     NULL},
};

const AgentInfo *agents_all(size_t *np)
{
    *np = N_ELEMENTS(agents);
    return agents;
}

const AgentInfo *agents_find(const char *id)
{
    for (size_t i = 0; i < N_ELEMENTS(agents); i++)
        if (streq(agents[i].id, id))
            return &agents[i];
    return NULL;
}

static char *file_path(AgentBase base, const char *rel)
{
    _cleanup_free_ char *dir = base == AGENT_BASE_CONFIG ? paths_config_home() : paths_home();

    return paths_join(dir, rel);
}

char *agents_user_file(const AgentInfo *a)
{
    const char *dir = a->env_dir ? getenv(a->env_dir) : NULL;
    const char *slash = strrchr(a->rel, '/');

    /* The variable names the file's own directory: only the file name is kept. */
    if (dir && dir[0] == '/')
        return paths_join(dir, slash ? slash + 1 : a->rel);
    return file_path(a->base, a->rel);
}

char *agents_more_file(const AgentInfo *a, size_t i)
{
    for (size_t k = 0; a->more && a->more[k].rel; k++)
        if (k == i)
            return file_path(a->more[k].base, a->more[k].rel);
    return NULL;
}

char *agents_by_hand(const AgentInfo *a, const char *mcpctl)
{
    StrBuf sb = STRBUF_INIT;
    const char *s = a->by_hand, *at;

    while ((at = strstr(s, "@MCPCTL@"))) {
        strbuf_append(&sb, s, (size_t)(at - s));
        strbuf_puts(&sb, mcpctl);
        s = at + strlen("@MCPCTL@");
    }
    strbuf_puts(&sb, s);
    return strbuf_detach(&sb, NULL);
}
