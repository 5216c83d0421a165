// SPDX-License-Identifier: MIT
// setup: `mcpctl setup AGENT|--all [--dry-run] [--undo] [--profile NAME]`: an agent starts mcpd's
// bridge only.

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "client/bridge.h"
#include "client/setup-claude.h"
#include "client/setup-edit.h"
#include "client/setup-vscode.h"
#include "client/setup.h"
#include "common/agents.h"
#include "common/durable.h"
#include "common/hash.h"
#include "common/json.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/toml.h"
#include "common/util.h"
#include "daemon/config/profiles.h"

extern char **environ;

enum { SETUP_OK = 0, SETUP_FAILED = 1, SETUP_USAGE = 2 };

typedef AgentInfo SetupAgent;

/* Room for every agent of common/agents.c (checked in setup_main). */
#define SETUP_AGENTS_MAX 32

/* What to do, appended to each refusal. */
#define HOW_TO_FIX  "; fix the file (the agent cannot read it either) and run setup again"
#define HOW_BY_HAND "; set this agent up by hand (docs/agents.md, \"Other hosts\")"

/* What setup will do to one agent, worked out completely before anything is written. */
typedef struct Plan {
    const SetupAgent *agent;
    char *path; /* the agent's file (through a symlink inside home: its target) */
    bool exists;
    mode_t mode;
    char *orig, *updated;
    size_t n_orig, n_updated;
    yajl_val imported; /* the file mcpd will read the moved servers from */
    size_t n_moved;
    yajl_val kept; /* VS Code's servers that only VS Code can start: they stay (or NULL) */
    bool already;  /* set up before, and the file is still just what setup wrote: nothing to do */
} Plan;

static void plan_deinit(Plan *p)
{
    free(p->path);
    free(p->orig);
    free(p->updated);
    json_free(p->imported);
    json_free(p->kept);
    memset(p, 0, sizeof(*p));
}

static char *agent_path(const SetupAgent *a)
{
    return agents_user_file(a);
}

/* $XDG_STATE_HOME/mcpd/setup: backups and what each setup wrote. */
static char *state_dir(void)
{
    const char *v = getenv("XDG_STATE_HOME");
    _cleanup_free_ char *home = paths_home();

    if (v && v[0] == '/')
        return paths_join(v, "mcpd/setup");
    return paths_join(home, ".local/state/mcpd/setup");
}

static char *state_file(const SetupAgent *a, const char *ext)
{
    _cleanup_free_ char *dir = state_dir();
    _cleanup_free_ char *name = xasprintf("%s.%s", a->id, ext);

    return paths_join(dir, name);
}

static char *imported_file(const SetupAgent *a)
{
    _cleanup_free_ char *conf = paths_config_home();
    _cleanup_free_ char *rel = xasprintf("mcpd/imported/%s.json", a->id);

    return paths_join(conf, rel);
}

static int read_all(const char *path, char **textp, size_t *lenp)
{
    _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    StrBuf sb = STRBUF_INIT;
    char buf[65536];
    ssize_t n;

    if (fd < 0)
        return -errno;
    while ((n = read(fd, buf, sizeof(buf))) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || sb.len + (size_t)n > SETUP_MAX_FILE_BYTES) {
            int r = n < 0 ? -errno : -EFBIG;
            strbuf_deinit(&sb);
            return r;
        }
        strbuf_append(&sb, buf, (size_t)n);
    }
    *textp = strbuf_detach(&sb, lenp);
    return 0;
}

/* The durable-write recipe (common/durable.c), the directory made first. */
static int write_durable(const char *path, const char *data, size_t n, mode_t mode)
{
    _cleanup_free_ char *dir = paths_dirname(path);
    int r = paths_mkdir_p(dir, 0700);

    return r < 0 ? r : durable_write_mode(dir, path, data, n, mode, NULL);
}

static bool is_bridge_entry(yajl_val e)
{
    const char *cmd = json_get_string(e, "command");
    yajl_val args = json_get_array(e, "args");
    const char *base = cmd ? strrchr(cmd, '/') : NULL;

    base = base ? base + 1 : cmd;
    for (size_t i = 0; base && streq(base, "mcpctl") && i < json_array_len(args); i++) {
        yajl_val a = json_array_at(args, i);
        if (YAJL_IS_STRING(a) && a->u.string[0] != '-')
            return streq(a->u.string, "bridge");
    }
    return false;
}

/*
 * servers without the entries that are already mcpd's bridge. With kept (VS Code), an entry
 * only VS Code can fill in goes there instead: it stays in VS Code's file.
 */
static yajl_val servers_to_move(yajl_val servers, size_t *np, yajl_val kept)
{
    yajl_val out = json_object_new();

    for (size_t i = 0; YAJL_IS_OBJECT(servers) && i < servers->u.object.len; i++) {
        yajl_val e = servers->u.object.values[i];
        if (is_bridge_entry(e))
            continue;
        json_object_set(kept && setup_vscode_unfilled(e) ? kept : out, servers->u.object.keys[i],
                        json_copy(e));
    }
    *np += out->u.object.len;
    return out;
}

/*
 * The variables that tell the bridge where mcpd's socket is. Codex starts a server with a short
 * list of its own (HOME, PATH, SHELL, TERM, LANG, ...; XDG_RUNTIME_DIR is not among them) plus
 * the names in the entry's env_vars (developers.openai.com/codex/mcp); a name that is unset is
 * simply not passed. Without them the bridge still finds /run/user/<uid>/mcpd/mcpd.sock
 * (common/paths.c), but not a runtime directory set elsewhere or an MCPD_SOCKET.
 */
static const char *const socket_vars[] = {"XDG_RUNTIME_DIR", "MCPD_SOCKET"};

/* setup --profile NAME: the profile of mcpd.json the agent's bridge asks for (docs/search.md). */
static const char *setup_profile;

static yajl_val bridge_entry(const SetupAgent *a, const char *mcpctl)
{
    yajl_val e = json_object_new(), args = json_array_new();

    if (setup_vscode_agent(a)) /* VS Code's entries name their type */
        json_object_set(e, "type", json_string_new("stdio"));
    json_object_set(e, "command", json_string_new(mcpctl));
    json_array_push(args, json_string_new("bridge"));
    json_array_push(args, json_string_new("--host-prefix"));
    json_array_push(args, json_string_new(a->prefix));
    if (setup_profile) {
        json_array_push(args, json_string_new("--profile"));
        json_array_push(args, json_string_new(setup_profile));
    }
    if (streq(a->id, "claude")) {
        /* Claude Code runs the project's .mcp.json servers it approved: not listed twice. */
        json_array_push(args, json_string_new("--host"));
        json_array_push(args, json_string_new("claude"));
    }
    json_object_set(e, "args", args);
    if (a->short_env) {
        yajl_val vars = json_array_new();
        for (size_t i = 0; i < N_ELEMENTS(socket_vars); i++)
            json_array_push(vars, json_string_new(socket_vars[i]));
        json_object_set(e, "env_vars", vars);
    }
    return e;
}

static yajl_val bridge_servers(const SetupAgent *a, const char *mcpctl)
{
    yajl_val s = json_object_new();

    json_object_set(s, "mcpd", bridge_entry(a, mcpctl));
    return s;
}

/* The agent's servers once set up: the bridge, then those that stay (VS Code's), in order. */
static yajl_val servers_after(const Plan *p, const char *mcpctl)
{
    yajl_val s = bridge_servers(p->agent, mcpctl);

    for (size_t i = 0; p->kept && i < p->kept->u.object.len; i++)
        json_object_set(s, p->kept->u.object.keys[i], json_copy(p->kept->u.object.values[i]));
    return s;
}

/* Claude Code's per-project switch: names listed there are servers of .mcp.json it won't start. */
#define CLAUDE_SWITCH SETUP_CLAUDE_SWITCH

/* The servers of <root>/.mcp.json other than mcpd's bridge, as an array of names (or NULL). */
static yajl_val project_file_servers(const char *root)
{
    _cleanup_free_ char *path = paths_join(root, ".mcp.json"), *text = NULL;
    _cleanup_json_ yajl_val v = NULL;
    yajl_val servers, names;
    size_t n = 0;

    if (read_all(path, &text, &n) < 0 || !(v = json_parse(text, NULL)))
        return NULL;
    servers = json_get_object(v, "mcpServers");
    names = json_array_new();
    for (size_t i = 0; servers && i < servers->u.object.len; i++)
        if (!is_bridge_entry(servers->u.object.values[i]))
            json_array_push(names, json_string_new(servers->u.object.keys[i]));
    if (json_array_len(names) == 0)
        names = json_free(names);
    return names;
}

static bool array_has(yajl_val arr, yajl_val v)
{
    for (size_t i = 0; i < json_array_len(arr); i++)
        if (json_equal(json_array_at(arr, i), v))
            return true;
    return false;
}

/* Claude Code's list of approved .mcp.json servers loses the names setup switches off. */
#define CLAUDE_APPROVED SETUP_CLAUDE_APPROVED

static void drop_from_enabled(Plan *p, const SetupMember *pm, size_t k, yajl_val names,
                              SetupEdits *edits)
{
    for (size_t j = 0; j < k; j++) {
        if (!setup_json_key_is(p->orig, &pm[j], CLAUDE_APPROVED))
            continue;
        _cleanup_free_ char *text =
            xstrndup(p->orig + pm[j].val_start, pm[j].val_end - pm[j].val_start);
        _cleanup_json_ yajl_val old = json_parse(text, NULL), kept = json_array_new();
        for (size_t i = 0; i < json_array_len(old); i++)
            if (!array_has(names, json_array_at(old, i)))
                json_array_push(kept, json_copy(json_array_at(old, i)));
        if (json_array_len(kept) != json_array_len(old))
            setup_edits_add(edits, pm[j].val_start, pm[j].val_end, json_to_string(kept));
    }
}

/*
 * For mcpd's trust gate: each name setup put on the switch, and whether Claude Code had it
 * approved before ("approved") or not yet ("pending"). The switch then means "mcpd serves it",
 * not the user's refusal.
 */
static yajl_val switch_record(const Plan *p, const SetupMember *proj, yajl_val names)
{
    _cleanup_free_ char *text =
        xstrndup(p->orig + proj->val_start, proj->val_end - proj->val_start);
    _cleanup_json_ yajl_val entry = json_parse(text, NULL);
    yajl_val rec = json_object_new(), approved = json_get(entry, CLAUDE_APPROVED);
    bool all = YAJL_IS_TRUE(json_get(entry, "enableAllProjectMcpServers"));
    /* Claude Code honours the project's settings.local.json once its folder is trusted. */
    bool trusted = YAJL_IS_TRUE(json_get(entry, "hasTrustDialogAccepted"));
    _cleanup_free_ char *root = setup_json_key(p->orig, proj);

    for (size_t i = 0; i < json_array_len(names); i++) {
        yajl_val name = json_array_at(names, i);
        bool yes = all || array_has(approved, name) ||
                   (trusted && setup_claude_local_approves(root, name->u.string));
        json_object_set(rec, name->u.string, json_string_new(yes ? "approved" : "pending"));
    }
    return rec;
}

/*
 * The project's .mcp.json stays as it is (it lives in git); its servers go on the project's
 * disabledMcpjsonServers in ~/.claude.json, so Claude Code stops starting them itself while
 * mcpd, which never reads that list, keeps serving them through the bridge.
 */
static void plan_claude_switch(Plan *p, const SetupMember *proj, const SetupMember *pm, size_t k,
                               SetupEdits *edits, yajl_val switched)
{
    _cleanup_free_ char *root = setup_json_key(p->orig, proj);
    _cleanup_json_ yajl_val names = project_file_servers(root), list = json_array_new();
    const SetupMember *cur = NULL;
    size_t before;

    if (!names)
        return;
    for (size_t j = 0; j < k; j++)
        if (setup_json_key_is(p->orig, &pm[j], CLAUDE_SWITCH))
            cur = &pm[j];
    if (cur) {
        _cleanup_free_ char *text =
            xstrndup(p->orig + cur->val_start, cur->val_end - cur->val_start);
        _cleanup_json_ yajl_val old = json_parse(text, NULL);
        for (size_t i = 0; i < json_array_len(old); i++)
            json_array_push(list, json_copy(json_array_at(old, i)));
    }
    before = json_array_len(list);
    for (size_t i = 0; i < json_array_len(names); i++)
        if (!array_has(list, json_array_at(names, i)))
            json_array_push(list, json_copy(json_array_at(names, i)));
    if (json_array_len(list) == before)
        return;
    drop_from_enabled(p, pm, k, names, edits);
    json_object_set(switched, root, switch_record(p, proj, names));
    _cleanup_free_ char *value = json_to_string(list);
    if (cur) {
        setup_edits_add(edits, cur->val_start, cur->val_end, xstrdup(value));
        return;
    }
    /* Added as the project's first member, indented like the next one. */
    _cleanup_free_ char *indent = k ? setup_json_line_indent(p->orig, pm[0].key_start - 1) : NULL;
    setup_edits_add(edits, proj->val_start + 1, proj->val_start + 1,
                    indent ? xasprintf("\n%s\"" CLAUDE_SWITCH "\": %s,", indent, value)
                           : xasprintf("\"" CLAUDE_SWITCH "\": %s%s", value, k ? ", " : ""));
}

/* Claude Code's local-scope servers: each project's mcpServers moves, and is left empty. */
static void plan_claude_projects(Plan *p, const SetupMember *projects, SetupEdits *edits,
                                 yajl_val moved_projects, yajl_val switched)
{
    _cleanup_free_ SetupMember *ms = NULL;
    size_t n = 0;

    if (setup_json_members(p->orig, p->n_orig, projects->val_start, &ms, &n) < 0)
        return;
    for (size_t i = 0; i < n; i++) {
        _cleanup_free_ SetupMember *pm = NULL;
        size_t k = 0;
        if (setup_json_members(p->orig, p->n_orig, ms[i].val_start, &pm, &k) < 0)
            continue;
        plan_claude_switch(p, &ms[i], pm, k, edits, switched);
        for (size_t j = 0; j < k; j++) {
            if (!setup_json_key_is(p->orig, &pm[j], "mcpServers"))
                continue;
            _cleanup_free_ char *root = setup_json_key(p->orig, &ms[i]);
            _cleanup_free_ char *text =
                xstrndup(p->orig + pm[j].val_start, pm[j].val_end - pm[j].val_start);
            _cleanup_json_ yajl_val servers = json_parse(text, NULL);
            if (!YAJL_IS_OBJECT(servers) || servers->u.object.len == 0)
                continue;
            yajl_val entry = json_object_new();
            json_object_set(entry, "mcpServers", servers_to_move(servers, &p->n_moved, NULL));
            json_object_set(moved_projects, root, entry);
            setup_edits_add(edits, pm[j].val_start, pm[j].val_end, xstrdup("{}"));
        }
    }
}

/* Everything but the servers, so an edit that touched anything else is caught. */
static void strip_servers(yajl_val root, const char *key, bool projects)
{
    yajl_val pr = projects ? json_get_object(root, "projects") : NULL;

    json_free(json_object_take(root, key));
    for (size_t i = 0; pr && i < pr->u.object.len; i++) {
        if (!YAJL_IS_OBJECT(pr->u.object.values[i]))
            continue;
        json_free(json_object_take(pr->u.object.values[i], key));
        json_free(json_object_take(pr->u.object.values[i], CLAUDE_SWITCH));
        json_free(json_object_take(pr->u.object.values[i], CLAUDE_APPROVED));
    }
}

/*
 * The agent's file after the edits must hold exactly the bridge as its servers and be, apart
 * from the servers, the same document as before; anything else means the edit misread the
 * file, and nothing is written.
 */
static int check_round_trip(const Plan *p, yajl_val before, yajl_val after, const char *key,
                            const char *mcpctl, char **whyp)
{
    _cleanup_json_ yajl_val want = servers_after(p, mcpctl);
    bool projects = streq(p->agent->id, "claude");

    if (!after || !json_equal(json_get(after, key), want)) {
        *whyp = xstrdup("the rewritten file would not hold exactly mcpd's bridge (and the "
                        "servers that stay)" HOW_BY_HAND);
        return -EINVAL;
    }
    strip_servers(before, key, projects);
    strip_servers(after, key, projects);
    if (!json_equal(before, after)) {
        *whyp = xstrdup("the rewritten file would differ in more than its servers (a layout "
                        "these edits cannot round-trip)" HOW_BY_HAND);
        return -EINVAL;
    }
    return 0;
}

static int plan_json(Plan *p, const char *mcpctl, yajl_val moved_projects, char **whyp)
{
    const char *key = p->agent->servers_key;
    _cleanup_json_ yajl_val switched = json_object_new(), bridge = NULL;
    _cleanup_free_ char *err = NULL, *value = NULL, *indent = NULL;
    _cleanup_json_ yajl_val root = json_parse(p->orig, &err), after = NULL, moved = NULL;
    _cleanup_free_ SetupMember *ms = NULL;
    SetupEdits edits = {0};
    size_t start = setup_json_start(p->orig, p->n_orig), n = 0;
    const SetupMember *servers = NULL;
    int r;

    if (!root || !YAJL_IS_OBJECT(root)) {
        *whyp = root ? xstrdup("the top level is not an object" HOW_TO_FIX)
                     : xasprintf("it does not parse as JSON (%s)" HOW_TO_FIX, err ? err : "?");
        return -EINVAL;
    }
    if (json_get(root, key) && !json_get_object(root, key) && !YAJL_IS_NULL(json_get(root, key))) {
        *whyp = xasprintf("\"%s\" is not an object" HOW_TO_FIX, key);
        return -EINVAL;
    }
    setup_json_members(p->orig, p->n_orig, start, &ms, &n);
    for (size_t i = 0; i < n; i++) {
        if (setup_json_key_is(p->orig, &ms[i], key))
            servers = &ms[i];
        else if (streq(p->agent->id, "claude") && setup_json_key_is(p->orig, &ms[i], "projects") &&
                 json_get_object(root, "projects"))
            plan_claude_projects(p, &ms[i], &edits, moved_projects, switched);
    }
    if (setup_vscode_agent(p->agent))
        p->kept = json_object_new();
    moved = servers_to_move(json_get(root, key), &p->n_moved, p->kept);
    /* mcpd's copy is always "mcpServers" (source-imported.c), in the agent's own entry shape. */
    json_object_set(p->imported, "mcpServers",
                    p->kept ? setup_vscode_moved(root, moved) : json_copy(moved));
    bridge = servers_after(p, mcpctl);
    if (switched->u.object.len) {
        /* A record only (mcpd reads .mcp.json itself): which names setup switched off. */
        json_object_set(p->imported, "claudeProjectSwitches", switched);
        switched = NULL;
    }
    if (servers) {
        indent = setup_json_line_indent(p->orig, servers->key_start - 1);
        value = setup_json_format(bridge, indent, indent);
        setup_edits_add(&edits, servers->val_start, servers->val_end, value);
        value = NULL;
    } else {
        /* Added as the first member, indented like the next one (or two spaces). */
        indent = n ? setup_json_line_indent(p->orig, ms[0].key_start - 1) : NULL;
        if (!indent)
            indent = xstrdup("  ");
        _cleanup_free_ char *fmt = setup_json_format(bridge, indent, indent);
        setup_edits_add(&edits, start + 1, start + 1,
                        xasprintf("\n%s\"%s\": %s%s", indent, key, fmt, n ? "," : "\n"));
    }
    p->updated = setup_edits_apply(p->orig, p->n_orig, &edits, &p->n_updated);
    setup_edits_deinit(&edits);
    after = json_parse(p->updated, NULL);
    r = check_round_trip(p, root, after, key, mcpctl, whyp);
    return r;
}

/* A block's end moves back over trailing comments and blank lines: they introduce what follows. */
static size_t block_end(const char *s, const SetupTomlBlock *b)
{
    size_t end = b->end;

    while (end > b->start) {
        size_t ls = end - 1;
        while (ls > b->start && s[ls - 1] != '\n')
            ls--;
        size_t i = ls;
        while (i < end && (s[i] == ' ' || s[i] == '\t'))
            i++;
        if (i < end && s[i] != '#' && s[i] != '\n' && s[i] != '\r')
            break;
        end = ls;
    }
    return end;
}

static int plan_toml(Plan *p, const char *mcpctl, char **whyp)
{
    _cleanup_free_ char *err = NULL, *cmd = setup_toml_string(mcpctl);
    _cleanup_free_ SetupTomlBlock *blocks = NULL;
    _cleanup_json_ yajl_val root = toml_parse(p->orig, p->n_orig, &err), after = NULL;
    SetupEdits edits = {0};
    size_t n = 0;
    _cleanup_free_ char *vars = p->agent->short_env ? xasprintf("env_vars = [\"%s\", \"%s\"]\n",
                                                                socket_vars[0], socket_vars[1])
                                                    : xstrdup("");
    _cleanup_free_ char *profile = setup_profile ? setup_toml_string(setup_profile) : NULL;
    _cleanup_free_ char *profile_args =
        profile ? xasprintf(", \"--profile\", %s", profile) : xstrdup("");
    char *table = xasprintf("[mcp_servers.mcpd]\ncommand = %s\nargs = [\"bridge\", "
                            "\"--host-prefix\", \"%s\"%s]\n%s",
                            cmd, p->agent->prefix, profile_args, vars);

    if (!root) {
        *whyp = xasprintf("it does not parse as TOML (%s)" HOW_TO_FIX, err ? err : "?");
        free(table);
        return -EINVAL;
    }
    if (setup_toml_blocks(p->orig, p->n_orig, &blocks, &n, whyp) < 0) {
        free(table);
        return -EINVAL;
    }
    json_object_set(p->imported, "mcpServers",
                    servers_to_move(json_get_object(root, "mcp_servers"), &p->n_moved, NULL));
    for (size_t i = 0; i < n; i++)
        setup_edits_add(&edits, blocks[i].start, block_end(p->orig, &blocks[i]),
                        i == 0 ? table : xstrdup(""));
    if (n == 0) {
        bool nl = p->n_orig && p->orig[p->n_orig - 1] != '\n';
        setup_edits_add(&edits, p->n_orig, p->n_orig,
                        xasprintf("%s%s%s", nl ? "\n" : "", p->n_orig ? "\n" : "", table));
        free(table);
    }
    p->updated = setup_edits_apply(p->orig, p->n_orig, &edits, &p->n_updated);
    setup_edits_deinit(&edits);
    after = toml_parse(p->updated, p->n_updated, NULL);
    return check_round_trip(p, root, after, "mcp_servers", mcpctl, whyp);
}

/*
 * The file must be the user's own regular file. A symlink is followed only when it stays in
 * the home directory (a dotfiles checkout there); one into another tree is someone else's.
 */
static int check_file(Plan *p, char **whyp)
{
    _cleanup_free_ char *home = paths_home();
    _cleanup_free_ char *real_home = realpath(home, NULL);
    struct stat st;

    if (lstat(p->path, &st) < 0) {
        if (errno == ENOENT)
            return 0;
        *whyp = xasprintf("cannot read it: %s", strerror(errno));
        return -errno;
    }
    if (S_ISLNK(st.st_mode)) {
        char *target = realpath(p->path, NULL);
        size_t hl = real_home ? strlen(real_home) : 0;
        if (!target || !real_home || strncmp(target, real_home, hl) != 0 || target[hl] != '/') {
            *whyp = xasprintf("it is a symlink into another tree (%s); edit that file by hand "
                              "or replace the link with a copy",
                              target ? target : "a missing target");
            free(target);
            return -EPERM;
        }
        free(p->path);
        p->path = target;
        if (stat(p->path, &st) < 0) {
            *whyp = xasprintf("cannot read it: %s", strerror(errno));
            return -errno;
        }
    }
    if (!S_ISREG(st.st_mode)) {
        *whyp = xstrdup("it is not a regular file");
        return -EINVAL;
    }
    if (st.st_uid != getuid()) {
        *whyp = xasprintf("it belongs to uid %u, not to you (uid %u); setup edits only your "
                          "own files",
                          (unsigned)st.st_uid, (unsigned)getuid());
        return -EPERM;
    }
    p->exists = true;
    p->mode = st.st_mode;
    return 0;
}

static yajl_val provenance(const Plan *p)
{
    yajl_val from = json_object_new();
    char when[64];
    time_t now = time(NULL);
    struct tm tm;

    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    json_object_set(from, "agent", json_string_new(p->agent->id));
    json_object_set(from, "agentName", json_string_new(p->agent->name));
    json_object_set(from, "path", json_string_new(p->path));
    json_object_set(from, "by", json_string_new("mcpctl setup"));
    json_object_set(from, "at", json_string_new(when));
    return from;
}

static int plan_agent(Plan *p, const SetupAgent *a, const char *mcpctl, char **whyp)
{
    _cleanup_free_ char *manifest = state_file(a, "json"), *imported = imported_file(a);
    yajl_val projects = json_object_new();
    int r;

    p->agent = a;
    p->path = agent_path(a);
    p->mode = 0600;
    p->already = access(manifest, F_OK) == 0;
    if (!p->already && access(imported, F_OK) == 0) {
        /* Its servers may be nowhere else: never overwritten. */
        *whyp = xasprintf("%s is left from an earlier setup whose record is gone; move its "
                          "servers back into the agent's file or to mcpd's own mcp.json, "
                          "remove it, and run setup again",
                          imported);
        json_free(projects);
        return -EEXIST;
    }
    if ((r = check_file(p, whyp)) < 0) {
        json_free(projects);
        return r;
    }
    if (p->exists && (r = read_all(p->path, &p->orig, &p->n_orig)) < 0) {
        *whyp = xasprintf("cannot read it: %s", strerror(-r));
        json_free(projects);
        return r;
    }
    if (!p->exists)
        p->orig = xstrdup(a->format == AGENT_FORMAT_JSON ? "{}\n" : "");
    if (!p->exists)
        p->n_orig = strlen(p->orig);
    p->imported = json_object_new();
    json_object_set(p->imported, "importedFrom", provenance(p));
    r = a->format == AGENT_FORMAT_JSON ? plan_json(p, mcpctl, projects, whyp)
                                       : plan_toml(p, mcpctl, whyp);
    if (projects->u.object.len)
        json_object_set(p->imported, "projects", projects);
    else
        json_free(projects);
    if (r < 0 || !p->already)
        return r;
    /*
     * Set up before. Running setup again is a no-op when setup would leave the file exactly as
     * it is (it holds only the bridge). Servers added since cannot join the earlier record (its
     * undo restores the file as it was then), so they are named; a bridge entry that differs
     * (mcpctl moved) is rewritten by undoing and setting up again.
     */
    if (p->n_moved == 0 && p->n_updated == p->n_orig && memcmp(p->updated, p->orig, p->n_orig) == 0)
        return 0;
    p->already = false;
    if (p->n_moved == 0) {
        *whyp = xasprintf("it is already set up (%s), but its mcpd entry is not the one setup "
                          "would write now; run mcpctl setup --undo %s, then setup again",
                          manifest, a->id);
        return -EEXIST;
    }
    *whyp = xasprintf("it is already set up (%s), and the file changed since: %zu server%s "
                      "added, which the agent starts itself besides mcpd; move %s to mcpd's own "
                      "mcp.json (mcpctl config shows where) and run setup again",
                      manifest, p->n_moved, p->n_moved == 1 ? "" : "s",
                      p->n_moved == 1 ? "it" : "them");
    return -EEXIST;
}

/* diff -u of two texts, for --dry-run. */
static void print_diff(const char *path, const char *a, size_t na, const char *b, size_t nb)
{
    char fa[] = "/tmp/mcpd-setup-a.XXXXXX", fb[] = "/tmp/mcpd-setup-b.XXXXXX";
    int da = mkstemp(fa), db = mkstemp(fb), status;
    _cleanup_free_ char *la = xasprintf("%s (now)", path), *lb = xasprintf("%s (after)", path);
    char *argv[] = {"diff", "-u", "--label", la, "--label", lb, fa, fb, NULL};
    pid_t pid;

    fflush(stdout);
    if (da >= 0 && db >= 0 && fd_write_all(da, a, na) == 0 && fd_write_all(db, b, nb) == 0 &&
        posix_spawnp(&pid, "diff", NULL, NULL, argv, environ) == 0)
        waitpid(pid, &status, 0);
    else
        printf("(diff unavailable; the new file would be:)\n%.*s", (int)nb, b);
    if (da >= 0)
        close(da), unlink(fa);
    if (db >= 0)
        close(db), unlink(fb);
}

static int write_json_file(const char *path, yajl_val v)
{
    StrBuf sb = STRBUF_INIT;
    _cleanup_free_ char *text = setup_json_format(v, "", "  ");
    int r;

    strbuf_printf(&sb, "%s\n", text);
    r = write_durable(path, sb.data, sb.len, 0600);
    strbuf_deinit(&sb);
    return r;
}

/*
 * VS Code's servers that stay in its file, each named with why: the user must know which
 * servers VS Code still starts itself.
 */
static void print_kept(const Plan *p)
{
    for (size_t i = 0; p->kept && i < p->kept->u.object.len; i++)
        printf("%s: server \"%s\" stays in %s: it holds %s, so VS Code keeps starting it "
               "itself (to have mcpd start it, move it to mcpd's own mcp.json with the value "
               "written out or as ${keyring:NAME}: docs/secrets.md)\n",
               p->agent->name, p->kept->u.object.keys[i], p->path,
               setup_vscode_unfilled(p->kept->u.object.values[i]));
}

/* Backup, then what was done (so undo can always run), then mcpd's copy, then the agent's file. */
static int apply_plan(const Plan *p)
{
    _cleanup_free_ char *backup = state_file(p->agent, "orig"),
                        *manifest = state_file(p->agent, "json"),
                        *imported = imported_file(p->agent);
    _cleanup_json_ yajl_val m = json_object_new();
    char hash[2 * SHA256_DIGEST_SIZE + 1];
    int r;

    sha256_hex(hash, p->updated, p->n_updated);
    json_object_set(m, "agent", json_string_new(p->agent->id));
    json_object_set(m, "path", json_string_new(p->path));
    json_object_set(m, "existed", json_bool_new(p->exists));
    json_object_set(m, "backup", p->exists ? json_string_new(backup) : json_null_new());
    json_object_set(m, "imported", json_string_new(imported));
    json_object_set(m, "written", json_string_new(hash));
    if ((p->exists && (r = write_durable(backup, p->orig, p->n_orig, 0600)) < 0) ||
        (r = write_json_file(manifest, m)) < 0 ||
        (r = write_json_file(imported, p->imported)) < 0 ||
        (r = write_durable(p->path, p->updated, p->n_updated, p->mode)) < 0) {
        fprintf(stderr, "mcpctl setup: %s: writing failed: %s\n", p->agent->name, strerror(-r));
        return r;
    }
    bool kept = p->kept && p->kept->u.object.len;
    _cleanup_free_ char *starts =
        kept ? xasprintf("mcpd's bridge and the servers only %s can start (below)", p->agent->name)
             : xasprintf("only mcpd's bridge (%s)", p->agent->shows);

    printf("%s: %s now starts %s; %zu server%s moved to %s, which mcpd "
           "reads. Original kept at %s. Undo: mcpctl setup --undo %s\n",
           p->agent->name, p->path, starts, p->n_moved, p->n_moved == 1 ? "" : "s", imported,
           p->exists ? backup : "(none: the file was created)", p->agent->id);
    print_kept(p);
    return 0;
}

/* The top-level member key of a JSON text, or NULL (the array *allp to free). */
static const SetupMember *top_member(const char *s, size_t n, const char *key, SetupMember **allp)
{
    size_t count = 0;

    *allp = NULL;
    if (setup_json_members(s, n, setup_json_start(s, n), allp, &count) < 0)
        return NULL;
    for (size_t i = 0; i < count; i++)
        if (setup_json_key_is(s, &(*allp)[i], key))
            return &(*allp)[i];
    return NULL;
}

static bool only_bridges(yajl_val servers)
{
    for (size_t i = 0; YAJL_IS_OBJECT(servers) && i < servers->u.object.len; i++)
        if (!is_bridge_entry(servers->u.object.values[i]))
            return false;
    return YAJL_IS_OBJECT(servers);
}

/*
 * The servers are still what setup left: bridges, and (VS Code) the servers that stayed, each
 * as the original had it.
 */
static bool only_what_setup_left(const SetupAgent *a, yajl_val now, yajl_val orig)
{
    if (!setup_vscode_agent(a))
        return only_bridges(now);
    for (size_t i = 0; YAJL_IS_OBJECT(now) && i < now->u.object.len; i++) {
        yajl_val e = now->u.object.values[i];
        if (!is_bridge_entry(e) &&
            !(setup_vscode_unfilled(e) && json_equal(e, json_get(orig, now->u.object.keys[i]))))
            return false;
    }
    return YAJL_IS_OBJECT(now);
}

/*
 * One member of a project in the file as it is now: an emptied mcpServers gets the original
 * value back; the switch setup added gets its original value, or goes when it had none.
 */
static void merge_project_member(const char *cur, const SetupMember *cm, size_t ncm, size_t a,
                                 const char *orig, const SetupMember *om, size_t nom,
                                 SetupEdits *edits)
{
    bool servers = setup_json_key_is(cur, &cm[a], "mcpServers");
    const char *key = servers                                           ? "mcpServers"
                      : setup_json_key_is(cur, &cm[a], CLAUDE_SWITCH)   ? CLAUDE_SWITCH
                      : setup_json_key_is(cur, &cm[a], CLAUDE_APPROVED) ? CLAUDE_APPROVED
                                                                        : NULL;
    const SetupMember *o = NULL;

    if (!key)
        return;
    for (size_t b = 0; b < nom; b++)
        if (setup_json_key_is(orig, &om[b], key))
            o = &om[b];
    if (o && (!servers || cm[a].val_end - cm[a].val_start == 2))
        setup_edits_add(edits, cm[a].val_start, cm[a].val_end,
                        xstrndup(orig + o->val_start, o->val_end - o->val_start));
    else if (!o && streq(key, CLAUDE_SWITCH))
        setup_json_remove_member(cm, ncm, a, edits);
}

/* Claude Code's per-project servers go back into the projects that still exist. */
static void merge_claude_projects(const char *cur, size_t n_cur, const char *orig, size_t n_orig,
                                  SetupEdits *edits)
{
    _cleanup_free_ SetupMember *ctop = NULL, *otop = NULL, *cps = NULL, *ops = NULL;
    const SetupMember *cp = top_member(cur, n_cur, "projects", &ctop),
                      *op = top_member(orig, n_orig, "projects", &otop);
    size_t nc = 0, no = 0;

    if (!cp || !op || setup_json_members(cur, n_cur, cp->val_start, &cps, &nc) < 0 ||
        setup_json_members(orig, n_orig, op->val_start, &ops, &no) < 0)
        return;
    for (size_t i = 0; i < nc; i++) {
        _cleanup_free_ char *ck = setup_json_key(cur, &cps[i]);
        for (size_t j = 0; j < no; j++) {
            _cleanup_free_ char *ok = setup_json_key(orig, &ops[j]);
            _cleanup_free_ SetupMember *cm = NULL, *om = NULL;
            size_t ncm = 0, nom = 0;
            if (!streq(ck, ok) || setup_json_members(cur, n_cur, cps[i].val_start, &cm, &ncm) < 0 ||
                setup_json_members(orig, n_orig, ops[j].val_start, &om, &nom) < 0)
                continue;
            for (size_t a = 0; a < ncm; a++)
                merge_project_member(cur, cm, ncm, a, orig, om, nom, edits);
            setup_claude_readd_moved(cur, cm, ncm, orig, om, nom, edits);
        }
    }
}

static int merge_json(const SetupAgent *a, const char *cur, size_t n_cur, const char *orig,
                      size_t n_orig, SetupEdits *edits, char **whyp)
{
    _cleanup_free_ SetupMember *ctop = NULL, *otop = NULL;
    _cleanup_json_ yajl_val now = json_parse(cur, NULL), was = json_parse(orig, NULL);
    const SetupMember *cs = top_member(cur, n_cur, a->servers_key, &ctop),
                      *os = top_member(orig, n_orig, a->servers_key, &otop);

    if (!cs ||
        !only_what_setup_left(a, json_get(now, a->servers_key), json_get(was, a->servers_key))) {
        *whyp = xstrdup("its servers are no longer just mcpd's bridge");
        return -EBUSY;
    }
    setup_edits_add(edits, cs->val_start, cs->val_end,
                    os ? xstrndup(orig + os->val_start, os->val_end - os->val_start)
                       : xstrdup("{}"));
    if (streq(a->id, "claude"))
        merge_claude_projects(cur, n_cur, orig, n_orig, edits);
    return 0;
}

static int merge_toml(const char *cur, size_t n_cur, const char *orig, size_t n_orig,
                      SetupEdits *edits, char **whyp)
{
    _cleanup_free_ SetupTomlBlock *cb = NULL, *ob = NULL;
    _cleanup_json_ yajl_val now = toml_parse(cur, n_cur, NULL);
    StrBuf sb = STRBUF_INIT;
    size_t nc = 0, no = 0;

    if (setup_toml_blocks(cur, n_cur, &cb, &nc, whyp) < 0 ||
        setup_toml_blocks(orig, n_orig, &ob, &no, whyp) < 0)
        return -EBUSY;
    if (nc != 1 || !only_bridges(json_get(now, "mcp_servers"))) {
        *whyp = xstrdup("its servers are no longer just mcpd's bridge");
        return -EBUSY;
    }
    for (size_t i = 0; i < no; i++) {
        size_t end = block_end(orig, &ob[i]);
        strbuf_append(&sb, orig + ob[i].start, end - ob[i].start);
    }
    setup_edits_add(edits, cb[0].start, block_end(cur, &cb[0]), strbuf_detach(&sb, NULL));
    return 0;
}

/*
 * The agent rewrote its file after setup (Claude Code does, as it runs): the original servers
 * go back into the file as it is now. The result must hold the original servers and, apart
 * from them, be the file as it is now; otherwise nothing is written.
 */
static int merge_back(const SetupAgent *a, const char *cur, size_t n_cur, const char *orig,
                      size_t n_orig, char **outp, size_t *np, char **whyp)
{
    const char *key = a->servers_key;
    SetupEdits edits = {0};
    _cleanup_json_ yajl_val before = NULL, after = NULL, want = NULL;
    int r = a->format == AGENT_FORMAT_JSON ? merge_json(a, cur, n_cur, orig, n_orig, &edits, whyp)
                                           : merge_toml(cur, n_cur, orig, n_orig, &edits, whyp);

    if (r < 0) {
        setup_edits_deinit(&edits);
        return r;
    }
    *outp = setup_edits_apply(cur, n_cur, &edits, np);
    setup_edits_deinit(&edits);
    if (a->format == AGENT_FORMAT_JSON) {
        before = json_parse(cur, NULL), after = json_parse(*outp, NULL),
        want = json_parse(orig, NULL);
    } else {
        before = toml_parse(cur, n_cur, NULL), after = toml_parse(*outp, *np, NULL),
        want = toml_parse(orig, n_orig, NULL);
    }
    if (after && want && json_get(want, key) &&
        !json_equal(json_get(after, key), json_get(want, key)))
        r = -EBUSY;
    if (after && before) {
        strip_servers(before, key, streq(a->id, "claude"));
        strip_servers(after, key, streq(a->id, "claude"));
    }
    if (r < 0 || !after || !before || !json_equal(before, after)) {
        *whyp = xstrdup("putting the servers back would change more than the servers");
        free(*outp);
        *outp = NULL;
        return -EBUSY;
    }
    return 0;
}

static int undo_agent(const SetupAgent *a, bool dry_run)
{
    _cleanup_free_ char *manifest = state_file(a, "json"), *mtext = NULL, *cur = NULL, *orig = NULL,
                        *merged = NULL;
    _cleanup_json_ yajl_val m = NULL;
    size_t n_m = 0, n_cur = 0, n_orig = 0, n_merged = 0;
    const char *path, *backup, *imported, *written;
    char hash[2 * SHA256_DIGEST_SIZE + 1] = "";
    bool existed, merged_back = false;
    struct stat st;

    if (read_all(manifest, &mtext, &n_m) < 0)
        return 1; /* never set up: nothing to undo */
    m = json_parse(mtext, NULL);
    path = json_get_string(m, "path");
    backup = json_get_string(m, "backup");
    imported = json_get_string(m, "imported");
    written = json_get_string(m, "written");
    existed = YAJL_IS_TRUE(json_get(m, "existed"));
    if (!path || !imported || !written || (existed && !backup) ||
        (existed && read_all(backup, &orig, &n_orig) < 0)) {
        fprintf(stderr,
                "mcpctl setup: %s: %s is damaged or its backup is missing; restore %s by "
                "hand, then remove %s\n",
                a->name, manifest, path ? path : "the agent's file", manifest);
        return -EINVAL;
    }
    if (read_all(path, &cur, &n_cur) == 0)
        sha256_hex(hash, cur, n_cur);
    if (cur && !streq(hash, written) &&
        !(existed && n_cur == n_orig && !memcmp(cur, orig, n_cur))) {
        _cleanup_free_ char *why = NULL;
        if (!existed || merge_back(a, cur, n_cur, orig, n_orig, &merged, &n_merged, &why) < 0) {
            fprintf(stderr,
                    "mcpctl setup: %s: %s changed since setup wrote it and %s; nothing "
                    "restored. The original is at %s: merge your changes into it by hand, "
                    "copy it back, then remove %s\n",
                    a->name, path, why ? why : "setup had created it", backup ? backup : "(none)",
                    manifest);
            return -EBUSY;
        }
        /* From here on, "the original" is the file as it is now with its servers back. */
        free(orig);
        orig = merged;
        n_orig = n_merged;
        merged = NULL;
        merged_back = true;
    }
    if (streq(a->id, "claude") && setup_claude_undo_local(imported, dry_run) < 0)
        return -EIO; /* said which file; nothing else undone yet, so undo can run again */
    if (dry_run) {
        print_diff(path, cur ? cur : "", n_cur, existed ? orig : "", n_orig);
        return 0;
    }
    if (existed) {
        int r = write_durable(path, orig, n_orig, stat(path, &st) == 0 ? st.st_mode : 0600);
        if (r < 0) {
            fprintf(stderr, "mcpctl setup: %s: restoring %s failed: %s\n", a->name, path,
                    strerror(-r));
            return r;
        }
    } else {
        unlink(path);
    }
    unlink(imported);
    if (backup)
        unlink(backup);
    unlink(manifest);
    /* The folders setup made go too when nothing else is in them. */
    _cleanup_free_ char *imported_dir = paths_dirname(imported), *dir = state_dir();
    (void)rmdir(imported_dir);
    (void)rmdir(dir);
    printf("%s: %s restored%s; mcpd no longer reads %s\n", a->name, path,
           !existed      ? " (removed: setup had created it)"
           : merged_back ? " (its servers put back into the file as the agent left it)"
                         : " byte for byte",
           imported);
    return 0;
}

static void setup_usage(FILE *f)
{
    size_t n;
    const SetupAgent *all = agents_all(&n);

    fprintf(f, "Usage: mcpctl setup AGENT|--all [--dry-run] [--undo] [--profile NAME]\n"
               "Agents:");
    for (size_t i = 0; i < n; i++)
        if (!all[i].why_not)
            fprintf(f, " %s", all[i].id);
    fprintf(f, "\nSet up by hand (mcpctl setup AGENT prints the entry):");
    for (size_t i = 0; i < n; i++)
        if (all[i].why_not)
            fprintf(f, " %s", all[i].id);
    fprintf(f, "\n");
}

/* The agents named (or all); -1 on an unknown name. */
static int select_agents(const char *which, bool all, bool picked[SETUP_AGENTS_MAX])
{
    size_t n;
    const SetupAgent *agents = agents_all(&n);

    for (size_t i = 0; i < n; i++)
        picked[i] = all || streq(which, agents[i].id);
    for (size_t i = 0; i < n; i++)
        if (picked[i])
            return 0;
    return -1;
}

/* An agent setup leaves to the user: why, and the entry to write by hand. */
static void print_by_hand(FILE *f, const SetupAgent *a, const char *mcpctl)
{
    _cleanup_free_ char *path = agents_user_file(a), *entry = agents_by_hand(a, mcpctl);
    _cleanup_free_ char *conf = paths_config_home(), *native = paths_join(conf, "mcpd/mcp.json");

    fprintf(f,
            "%s: %s not set up: %s. By hand: put its servers in %s (\"mcpServers\", so mcpd "
            "starts them once) and leave the agent only this entry in %s (docs/agents.md, "
            "\"Other hosts\"):\n%s\n",
            a->name, path, a->why_not, native, path, entry);
}

/* --all: each agent left to the user whose file exists, then the names of all of them. */
static void print_skipped(const char *mcpctl)
{
    size_t n;
    const SetupAgent *agents = agents_all(&n);
    StrBuf names = STRBUF_INIT;

    for (size_t i = 0; i < n; i++) {
        _cleanup_free_ char *path = agents_user_file(&agents[i]);
        if (!agents[i].why_not)
            continue;
        strbuf_printf(&names, "%s%s", names.len ? ", " : "", agents[i].id);
        if (access(path, F_OK) == 0)
            print_by_hand(stdout, &agents[i], mcpctl);
    }
    printf("Skipped (not set up by mcpctl setup; mcpctl setup AGENT prints the entry to add by "
           "hand): %s\n",
           strbuf_str(&names));
    strbuf_deinit(&names);
}

/*
 * The agents now start only the bridge, which answers them with an error while mcpd is not
 * running: say so here, where the user reads it, rather than in hosts that show "connection
 * closed" at best.
 */
static void warn_if_not_running(void)
{
    _cleanup_free_ char *sock = paths_socket(), *why = NULL;

    if (bridge_reach(sock, &why) < 0)
        fprintf(stderr,
                "mcpctl setup: note: %s.\nUntil mcpd runs, the agents set up here reach none of "
                "their servers; the bridge tells them so when they start it.\n",
                why);
}

static int run_setup(const bool picked[SETUP_AGENTS_MAX], bool all, bool dry_run,
                     const char *mcpctl)
{
    size_t n;
    const SetupAgent *agents = agents_all(&n);
    Plan plans[SETUP_AGENTS_MAX] = {0};
    int refused = 0, failed = 0, by_hand = 0;

    /* Every plan first: one refusal and nothing is written for any agent. */
    for (size_t i = 0; i < n; i++) {
        _cleanup_free_ char *why = NULL;
        if (!picked[i] || agents[i].why_not)
            continue;
        if (plan_agent(&plans[i], &agents[i], mcpctl, &why) < 0) {
            fprintf(stderr, "mcpctl setup: %s: %s: %s\n", agents[i].name, plans[i].path,
                    why ? why : "refused");
            refused++;
        }
    }
    for (size_t i = 0; i < n; i++) {
        Plan *p = &plans[i];
        if (picked[i] && agents[i].why_not && !all) {
            print_by_hand(stderr, &agents[i], mcpctl);
            by_hand++;
            continue;
        }
        if (!picked[i] || refused || agents[i].why_not) {
            plan_deinit(p);
            continue;
        }
        if (!p->exists && all) {
            printf("%s: no %s; not set up\n", p->agent->name, p->path);
        } else if (p->already) {
            printf("%s: %s is already set up; nothing to change\n", p->agent->name, p->path);
        } else if (dry_run) {
            _cleanup_free_ char *imp = imported_file(p->agent);
            printf("%s: %zu server%s would move to %s\n", p->agent->name, p->n_moved,
                   p->n_moved == 1 ? "" : "s", imp);
            print_kept(p);
            print_diff(p->path, p->orig, p->exists ? p->n_orig : 0, p->updated, p->n_updated);
        } else if (apply_plan(p) < 0) {
            failed++;
        }
        plan_deinit(p);
    }
    if (all && !refused)
        print_skipped(mcpctl);
    if (refused)
        fprintf(stderr, "mcpctl setup: nothing was changed\n");
    else if (!dry_run && !by_hand)
        warn_if_not_running();
    return refused || failed || by_hand ? SETUP_FAILED : SETUP_OK;
}

int setup_main(int argc, char **argv)
{
    bool all = false, dry_run = false, undo = false, picked[SETUP_AGENTS_MAX] = {false};
    const char *which = NULL;
    _cleanup_free_ char *mcpctl = realpath("/proc/self/exe", NULL);
    int failed = 0;
    size_t n;
    const SetupAgent *agents = agents_all(&n);

    if (n > SETUP_AGENTS_MAX) {
        fprintf(stderr, "mcpctl setup: %zu agents, more than SETUP_AGENTS_MAX\n", n);
        return SETUP_FAILED;
    }

    for (int i = 1; i < argc; i++) {
        if (streq(argv[i], "--all"))
            all = true;
        else if (streq(argv[i], "--dry-run"))
            dry_run = true;
        else if (streq(argv[i], "--undo"))
            undo = true;
        else if (streq(argv[i], "--profile") && i + 1 < argc && profile_name_ok(argv[i + 1]))
            setup_profile = argv[++i];
        else if (argv[i][0] != '-' && !which)
            which = argv[i];
        else
            goto usage;
    }
    if (all == !!which || select_agents(which, all, picked) < 0 || !mcpctl)
        goto usage;
    if (!undo)
        return run_setup(picked, all, dry_run, mcpctl);
    for (size_t i = 0; i < n; i++) {
        int r = picked[i] ? undo_agent(&agents[i], dry_run) : 0;
        if (r == 1 && !all)
            printf("%s: not set up; nothing to undo\n", agents[i].name);
        failed += r < 0;
    }
    return failed ? SETUP_FAILED : SETUP_OK;
usage:
    setup_usage(stderr);
    return SETUP_USAGE;
}
