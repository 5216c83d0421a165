// SPDX-License-Identifier: MIT
// trust-gate: the gate for project-level servers (mcpd's approval store and the agents' own
// approvals), consulted by discovery for every project entry.

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/toml.h"
#include "common/util.h"
#include "daemon/config/claude-policy.h"
#include "daemon/config/collect.h"
#include "daemon/config/config-expand.h"
#include "daemon/config/config-read.h"
#include "daemon/config/configset.h"
#include "daemon/config/gitindex.h"
#include "daemon/config/source-imported.h"
#include "daemon/config/source.h"
#include "daemon/config/trust-gate.h"
#include "daemon/config/trust-show.h"
#include "daemon/sys/durable.h"

char *trust_store_path(void)
{
    const char *state = getenv("XDG_STATE_HOME");
    _cleanup_free_ char *dir =
        state && state[0] == '/' ? xstrdup(state) : source_home_path(".local/state");

    return paths_join(dir, "mcpd/trust.json");
}

/*
 * Parse a JSON file quietly: a missing file is no answer, anything else wrong is noted in
 * problems (NULL for files a provider reads and reports anyway).
 */
static yajl_val read_json(const char *path, StrBuf *problems)
{
    ConfigSet tmp = {.quiet = true};
    yajl_val v = NULL;

    if (config_read_json(&tmp, path, CONFIG_LEVEL_USER, &v) < 0)
        v = NULL;
    for (size_t i = 0; problems && i < tmp.n_problems; i++)
        strbuf_printf(problems, "%s%s: %s", problems->len ? "; " : "", path,
                      tmp.problems[i].message);
    config_set_deinit(&tmp);
    return v;
}

/* Append the strings of names (an array, or anything else: nothing) to *listp. */
static void names_append(yajl_val *listp, yajl_val names)
{
    for (size_t i = 0; i < json_array_len(names); i++) {
        yajl_val n = json_array_at(names, i);
        if (!YAJL_IS_STRING(n))
            continue;
        if (!*listp)
            *listp = json_array_new();
        json_array_push(*listp, json_string_new(n->u.string));
    }
}

static int check_owner(const char *path, const struct stat *st, bool above, char **whyp);

/*
 * The same answers in Claude Code's settings files (code.claude.com/docs/en/settings:
 * enableAllProjectMcpServers, enabledMcpjsonServers, disabledMcpjsonServers), strongest first:
 * managed settings, the project's .claude/settings.local.json, its .claude/settings.json, the
 * user's <claude dir>/settings.json. Claude Code reads a folder's own files only once the user
 * accepted its trust dialog for the folder (folder_trusted), and so does mcpd:
 * - settings.local.json is where Claude Code 2.1 keeps the approvals it asked for (it moves
 *   them there from ~/.claude.json after the trust dialog): they count, as in Claude Code, once
 *   the folder is trusted, and only from a file that is the user's own (owner, mode).
 * - settings.json is the repository's, committed for everyone: it may only reject. Claude Code
 *   would also take its approvals once the folder is trusted; mcpd does not, on purpose: the
 *   trust dialog says "trust the files", not "run these commands", so `mcpctl trust` does.
 * The lists merge; enableAllProjectMcpServers is decided by the strongest file that sets it.
 */
static void load_claude_settings(Trust *t, bool folder_trusted, bool *all_setp)
{
    _cleanup_free_ char *dir = claude_config_dir();
    enum { MANAGED, LOCAL, PROJECT, USER };
    char *files[] = {
        [MANAGED] = claude_managed_settings_path(),
        [LOCAL] = folder_trusted ? paths_join(t->root, ".claude/settings.local.json") : NULL,
        [PROJECT] = folder_trusted ? paths_join(t->root, ".claude/settings.json") : NULL,
        [USER] = paths_join(dir, "settings.json"),
    };

    for (size_t i = 0; i < N_ELEMENTS(files); i++) {
        ConfigSet quiet = {.quiet = true};
        _cleanup_free_ char *why = NULL;
        yajl_val v = NULL;
        bool all, approves = i != PROJECT;
        /* Broken files are reported by the claude provider, which reads them too. */
        int r =
            !files[i] ? -ENOENT
            : i == MANAGED
                ? claude_managed_read(&quiet, files[i], &v, NULL)
                : source_read_json(&quiet, files[i],
                                   i == USER ? CONFIG_LEVEL_USER : CONFIG_LEVEL_PROJECT, false, &v);
        /*
         * Someone else's settings.local.json is not the user's answer, and one the repository
         * tracks came with it: like settings.json, it may only reject (Claude Code too takes
         * approvals only from an untracked one; git's index is read, git is not run).
         */
        if (r == 0 && i == LOCAL &&
            (check_owner(files[i], config_set_read_stat(&quiet, files[i]), false, &why) < 0 ||
             gitindex_tracks(files[i]) != GIT_UNTRACKED))
            approves = false;
        if (r == 0) {
            if (approves && !*all_setp &&
                json_get_bool(v, "enableAllProjectMcpServers", &all) == 0) {
                t->claude_all = all;
                *all_setp = true;
            }
            if (approves)
                names_append(&t->claude_enabled, json_get(v, "enabledMcpjsonServers"));
            names_append(&t->claude_disabled, json_get(v, "disabledMcpjsonServers"));
        }
        json_free(v);
        config_set_deinit(&quiet);
        free(files[i]);
    }
}

/*
 * Whether the user accepted Claude Code's trust dialog for root or a folder above it
 * (projects[dir].hasTrustDialogAccepted in the user's own ~/.claude.json): Claude Code asks it
 * before it reads anything of a folder, and a yes for a parent covers its children
 * (code.claude.com/docs/en/mcp: "a trust dialog for that folder or one of its parent
 * directories"). Keys are the directories Claude Code started in, maybe through a link.
 */
static bool claude_folder_trusted(yajl_val projects, const char *root)
{
    for (size_t i = 0; YAJL_IS_OBJECT(projects) && i < projects->u.object.len; i++) {
        const char *key = projects->u.object.keys[i];
        bool yes = false;
        if (key[0] != '/' ||
            json_get_bool(projects->u.object.values[i], "hasTrustDialogAccepted", &yes) < 0 || !yes)
            continue;
        if (paths_within(root, key))
            return true;
        _cleanup_free_ char *real = realpath(key, NULL);
        if (real && paths_within(root, real))
            return true;
    }
    return false;
}

/*
 * Claude Code asks before it runs a project's .mcp.json servers and keeps the answers here. Its
 * answers, wherever written (~/.claude.json, the user's or managed settings, or the project's
 * settings.local.json), approve nothing until the user accepted Claude Code's trust dialog for
 * the folder: Claude Code runs nothing of an untrusted folder, approved or not.
 */
static void load_claude(Trust *t)
{
    _cleanup_free_ char *path = source_claude_json_path();
    _cleanup_json_ yajl_val root = NULL;
    ConfigSet quiet = {.quiet = true};
    bool all_set;

    /* Streamed, with no size cap: the file holds Claude Code's chat history (claude-json.h). */
    if (source_read_claude_json(&quiet, path, &root) < 0)
        root = NULL;
    config_set_deinit(&quiet);
    yajl_val projects = json_get_object(root, "projects");
    yajl_val p = source_project_entry(projects, t->root);

    t->claude_folder = claude_folder_trusted(projects, t->root);
    all_set = json_get_bool(p, "enableAllProjectMcpServers", &t->claude_all) == 0;
    names_append(&t->claude_enabled, json_get(p, "enabledMcpjsonServers"));
    names_append(&t->claude_disabled, json_get(p, "disabledMcpjsonServers"));
    /* A yes in ~/.claude.json stands; the settings files may add theirs. */
    if (!t->claude_all)
        all_set = false;
    load_claude_settings(t, t->claude_folder, &all_set);
}

/* Codex reads a project's .codex/config.toml only when the user config trusts the project. */
static void load_codex(Trust *t)
{
    _cleanup_free_ char *path = source_codex_config_path(), *text = NULL, *err = NULL;
    _cleanup_json_ yajl_val root = NULL;
    ConfigSet tmp = {.quiet = true};
    size_t len = 0;

    /* A broken file is reported by the codex provider, which reads it too. */
    if (config_read_text(&tmp, path, CONFIG_LEVEL_USER, &text, &len) == 0)
        root = toml_parse(text, len, &err);
    config_set_deinit(&tmp);
    yajl_val p = source_project_entry(json_get_object(root, "projects"), t->root);
    const char *level = json_get_string(p, "trust_level");
    t->codex_trusted = level && streq(level, "trusted");
}

/*
 * Gemini CLI's folder trust (on unless security.folderTrust.enabled is false): a
 * trustedFolders.json rule TRUST_FOLDER trusts its path and everything below, TRUST_PARENT
 * the path's parent and everything below; DO_NOT_TRUST trusts nothing.
 */
static void load_gemini(Trust *t, StrBuf *problems)
{
    _cleanup_free_ char *spath = source_home_path(".gemini/settings.json");
    _cleanup_free_ char *fpath = source_home_path(".gemini/trustedFolders.json");
    _cleanup_json_ yajl_val settings = read_json(spath, NULL); /* gemini reports it */
    _cleanup_json_ yajl_val folders = NULL;
    bool enabled = true;

    json_get_bool(json_get_object(json_get_object(settings, "security"), "folderTrust"), "enabled",
                  &enabled);
    if (!enabled) {
        t->gemini_trusted = true;
        return;
    }
    folders = read_json(fpath, problems);
    for (size_t i = 0; YAJL_IS_OBJECT(folders) && i < folders->u.object.len; i++) {
        const char *key = folders->u.object.keys[i];
        /* Gemini writes absolute paths; anything else ("", "foo") would resolve against mcpd's
         * own directory and could approve every project. */
        if (key[0] != '/')
            continue;
        const char *rule = YAJL_IS_STRING(folders->u.object.values[i])
                               ? folders->u.object.values[i]->u.string
                               : "";
        _cleanup_free_ char *real = realpath(key, NULL);
        _cleanup_free_ char *dir = NULL;
        if (streq(rule, "TRUST_FOLDER"))
            dir = xstrdup(real ? real : key);
        else if (streq(rule, "TRUST_PARENT"))
            dir = paths_dirname(real ? real : key);
        if (dir && paths_within(t->root, dir))
            t->gemini_trusted = true;
    }
}

static void load_store(Trust *t, StrBuf *problems)
{
    size_t before = problems->len;

    t->store_path = trust_store_path();
    t->store = read_json(t->store_path, problems);
    t->store_broken = problems->len > before;
    if (t->store && !YAJL_IS_OBJECT(json_get(t->store, "projects"))) {
        t->store_broken = true;
        strbuf_printf(problems, "%s%s: \"projects\" must be an object; approvals in it are ignored",
                      problems->len ? "; " : "", t->store_path);
        t->store = json_free(t->store);
    }
    if (!t->store) {
        t->store = json_object_new();
        json_object_set(t->store, "version", json_int_new(1));
        json_object_set(t->store, "projects", json_object_new());
    }
}

void trust_init(Trust *t, const char *root, char **whyp)
{
    StrBuf problems = STRBUF_INIT;

    memset(t, 0, sizeof(*t));
    t->root = xstrdup(root);
    load_store(t, &problems);
    load_claude(t);
    load_codex(t);
    load_gemini(t, &problems);
    t->folder_trust = (t->claude_folder ? CONFIG_FOLDER_TRUST_CLAUDE : 0) |
                      (t->gemini_trusted ? CONFIG_FOLDER_TRUST_GEMINI : 0);
    *whyp = problems.len ? strbuf_detach(&problems, NULL) : NULL;
    strbuf_deinit(&problems);
}

void trust_deinit(Trust *t)
{
    free(t->root);
    free(t->store_path);
    json_free(t->store);
    json_free(t->claude_enabled);
    json_free(t->claude_disabled);
    for (size_t i = 0; i < t->n_pending; i++) {
        free(t->pending[i].name);
        free(t->pending[i].path);
        free(t->pending[i].shown);
    }
    free(t->pending);
    memset(t, 0, sizeof(*t));
}

/*
 * An approval's fingerprint: the file, then the entry as written with sorted keys, which holds
 * everything that decides what runs or where secrets go (command, args, env, cwd, url,
 * headers, auth, oauth). An entry with an envFile adds the path read and its bytes (version 2):
 * an edit of the .env alone is a new entry. Without one the text hashed is what version 1
 * hashed (nothing else decided what such an entry runs), so those approvals stand; a version 1
 * approval of an entry with an envFile did not cover the file and is asked for again.
 */
static void entry_hash(TrustHash out, const ConfigGateEntry *e, bool v1)
{
    StrBuf sb = STRBUF_INIT;

    strbuf_puts(&sb, e->src->path);
    strbuf_putc(&sb, '\n');
    json_write_sorted(&sb, e->written);
    if (e->env_file && !v1) {
        strbuf_printf(&sb, "\nmcpd-trust-v2 envFile %s\n", e->env_file);
        if (e->env_text)
            strbuf_append(&sb, e->env_text, e->env_len);
        else
            strbuf_puts(&sb, "(missing)");
    }
    sha256_hex(out, sb.data, sb.len);
    strbuf_deinit(&sb);
}

static yajl_val store_hashes(const Trust *t, const char *name)
{
    return json_get_array(json_get_object(json_get_object(t->store, "projects"), t->root), name);
}

/*
 * Whether group gid is the user's private group (the user-private-group scheme of most
 * distributions, whose umask 002 leaves new files group-writable): the user's primary group,
 * named after the user, with no other member. Group write by such a group is the user's own.
 */
static bool private_group(gid_t gid)
{
    /* The _r forms: the trust gate runs on discovery's thread too. A passwd entry fits in 16
     * KiB; a group's member list may not (large groups), and a group that does not fit is not a
     * private group anyway (ERANGE: false). */
    char pbuf[16384], gbuf[65536];
    struct passwd pwd, *pw = NULL;
    struct group grp, *gr = NULL;
    const char *user;

    if (getpwuid_r(geteuid(), &pwd, pbuf, sizeof(pbuf), &pw) != 0 || !pw || !pw->pw_name)
        return false;
    user = pw->pw_name;
    if (gid != pw->pw_gid || getgrgid_r(gid, &grp, gbuf, sizeof(gbuf), &gr) != 0 || !gr ||
        !gr->gr_name || !streq(gr->gr_name, user))
        return false;
    for (char **m = gr->gr_mem; m && *m; m++)
        if (!streq(*m, user))
            return false;
    return true;
}

/* Who besides the user may write what st describes: "every user", "group N", or NULL. */
static char *others_writing(const struct stat *st)
{
    if (st->st_mode & S_IWOTH)
        return xstrdup("every user");
    if ((st->st_mode & S_IWGRP) && !private_group(st->st_gid)) {
        char buf[65536]; /* see private_group */
        struct group grp, *gr = NULL;

        if (getgrgid_r(st->st_gid, &grp, buf, sizeof(buf), &gr) != 0)
            gr = NULL;
        return gr && gr->gr_name ? xasprintf("group %s", gr->gr_name)
                                 : xasprintf("group %u", (unsigned)st->st_gid);
    }
    return NULL;
}

/*
 * A directory above the project holding a .mcp.json: whoever else may write it (without the
 * sticky bit) or owns it can put any file of the user's there (a link to another project's
 * .mcp.json the user approved by name), so nothing in it is the user's word.
 */
static int check_parent_dir(const char *path, char **whyp)
{
    _cleanup_free_ char *dir = paths_dirname(path), *who = NULL;
    struct stat st;

    if (lstat(dir, &st) < 0) {
        *whyp = xasprintf("cannot check who may write %s: %s; mcpd runs nothing from %s", dir,
                          strerror(errno), path);
        return -EPERM;
    }
    if (st.st_uid != geteuid() && st.st_uid != 0) {
        *whyp = xasprintf("%s is in %s, a directory above the project owned by uid %u, not by "
                          "you or root: mcpd runs nothing from it; move the file into your "
                          "project, or chown the directory",
                          path, dir, (unsigned)st.st_uid);
        return -EPERM;
    }
    if (!(st.st_mode & S_ISVTX) && (who = others_writing(&st))) {
        *whyp = xasprintf("%s is in %s, a directory above the project that %s may write (mode "
                          "%04o, no sticky bit): anyone there can replace the file, so mcpd "
                          "runs nothing from it; run chmod go-w %s (or chmod +t %s), or move "
                          "the file into your project",
                          path, dir, who, (unsigned)(st.st_mode & 07777), dir, dir);
        return -EPERM;
    }
    return 0;
}

/*
 * A file another user owns, or someone else may write, is not the user's word. st is the fstat
 * of the descriptor discovery read the file from (ConfigSet.read_files): the file judged is the
 * one whose bytes were parsed, whatever the path names now. Without it (a file read elsewhere)
 * the path is looked at without following a link. above: the file is in a directory above the
 * project root, whose own writers count too.
 */
static int check_owner(const char *path, const struct stat *st, bool above, char **whyp)
{
    _cleanup_free_ char *who = NULL;
    struct stat own;

    if (!st) {
        if (lstat(path, &own) < 0) {
            *whyp = xasprintf("cannot check who owns %s: %s", path, strerror(errno));
            return -EPERM;
        }
        st = &own;
    }
    if (st->st_uid != geteuid()) {
        *whyp = xasprintf("%s is owned by uid %u, not by you (uid %u): mcpd runs nothing from "
                          "another user's file; if it is yours, chown it",
                          path, (unsigned)st->st_uid, (unsigned)geteuid());
        return -EPERM;
    }
    if ((who = others_writing(st))) {
        *whyp = xasprintf("%s is writable by %s (mode %04o): mcpd runs nothing from a project "
                          "file someone else may change; run chmod go-w %s",
                          path, who, (unsigned)(st->st_mode & 07777), path);
        return -EPERM;
    }
    return above ? check_parent_dir(path, whyp) : 0;
}

/*
 * Where a project-level file sits for the gate: its path under the root, or ".mcp.json" for the
 * .mcp.json of a directory above the root (Claude Code reads those too, and a repository or
 * whoever can write a parent directory may have put it there). NULL: not the project's file
 * (the user's own, such as ~/.claude.json's projects[root] entries).
 */
static const char *project_rel(const Trust *t, const char *path)
{
    _cleanup_free_ char *dir = NULL;
    size_t n;

    if (!t->root || !path)
        return NULL;
    if (paths_within(path, t->root) && !streq(path, t->root))
        return path + strlen(t->root) + (streq(t->root, "/") ? 0 : 1);
    n = strlen(path);
    if (n < 10 || !streq(path + n - 10, "/.mcp.json"))
        return NULL;
    dir = paths_dirname(path);
    return paths_within(t->root, dir) ? ".mcp.json" : NULL;
}

/*
 * What the owning agent said about this entry: 1 approved, -1 rejected, 0 nothing. *heldp: its
 * agent approved it, but the folder is not trusted there, so the approval does not count yet.
 */
static int agent_answer(const Trust *t, const char *rel, const char *name, const char **whop,
                        bool *heldp)
{
    if (streq(rel, ".mcp.json")) {
        *whop = "Claude Code";
        if (source_names_contain(t->claude_disabled, name)) {
            /* mcpctl setup may have switched it off so that only mcpd starts it. */
            ImportedSwitch was = source_imported_claude_switch(t->root, name);
            if (was == IMPORTED_SWITCH_APPROVED && !t->claude_folder)
                *heldp = true;
            return was == IMPORTED_SWITCH_APPROVED && t->claude_folder                 ? 1
                   : was == IMPORTED_SWITCH_APPROVED || was == IMPORTED_SWITCH_PENDING ? 0
                                                                                       : -1;
        }
        bool yes = t->claude_all || source_names_contain(t->claude_enabled, name);
        *heldp = yes && !t->claude_folder;
        return yes && t->claude_folder ? 1 : 0;
    }
    if (streq(rel, ".codex/config.toml"))
        return t->codex_trusted ? 1 : 0;
    if (streq(rel, ".gemini/settings.json"))
        return t->gemini_trusted ? 1 : 0;
    return 0;
}

static TrustPending *pending_add(Trust *t, const ConfigGateEntry *e, const TrustHash hash,
                                 bool reads_project)
{
    TrustPending *p;

    t->pending = xrealloc(t->pending, (t->n_pending + 1) * sizeof(*t->pending));
    p = &t->pending[t->n_pending++];
    p->name = xstrdup(e->name);
    p->path = xstrdup(e->src->path);
    p->shown = trust_show_entry(e, t->root);
    memcpy(p->hash, hash, sizeof(TrustHash));
    p->reads_project = reads_project;
    p->above = !reads_project && !paths_within(e->src->path, t->root);
    return p;
}

/* Whether the root's approvals of name hold hash. */
static bool store_has(const Trust *t, const char *name, const char *hash)
{
    yajl_val hashes = store_hashes(t, name);

    for (size_t i = 0; i < json_array_len(hashes); i++)
        if (YAJL_IS_STRING(json_array_at(hashes, i)) &&
            streq(json_array_at(hashes, i)->u.string, hash))
            return true;
    return false;
}

/*
 * The project file a user's own entry reads, which makes it the project's word as much as the
 * user's: an envFile inside the root (a repository's .env sets NODE_OPTIONS as easily as any
 * entry), or a command written as ${workspaceFolder}/... (whatever the opened project holds
 * there runs). NULL: it reads none.
 */
static const char *project_file_read(const Trust *t, const ConfigGateEntry *e)
{
    const char *command = json_get_string(e->written, "command");

    if (e->env_file && paths_within(e->env_file, t->root))
        return e->env_file;
    if (command && (config_source_forms(e->src) & EXPAND_EDITOR) &&
        strstr(command, "${workspaceFolder}"))
        return command;
    return NULL;
}

/* Why an entry waits, what it would run and send, and how to approve it (to free). */
static char *pending_why(const Trust *t, const TrustPending *p, const char *reads, bool held,
                         bool was_v1)
{
    _cleanup_free_ char *held_note = NULL, *old_note = NULL;

    if (held)
        held_note = xasprintf(" (Claude Code's own approval of it counts only once you accept "
                              "Claude Code's trust dialog for %s: run claude there)",
                              t->root);
    if (was_v1)
        old_note = xstrdup(" (approved before mcpd's approvals covered the contents of an "
                           "envFile: read them and approve again)");
    if (p->reads_project)
        return xasprintf("untrusted: your own entry reads %s inside the project, which decides "
                         "what it runs; it would run %s; nothing of it runs here until you "
                         "approve it%s: mcpctl trust %s (all of the project's servers) or mcpctl "
                         "trust --server %s %s",
                         reads, p->shown, old_note ? old_note : "", t->root, p->name, t->root);
    if (p->above)
        return xasprintf("untrusted: this entry of a .mcp.json above the project would run %s; "
                         "nothing from it runs until you approve it by name (trusting the "
                         "project does not cover it)%s%s: mcpctl trust --server %s %s",
                         p->shown, held_note ? held_note : "", old_note ? old_note : "", p->name,
                         t->root);
    return xasprintf("untrusted: this project's entry would run %s; nothing from a project runs "
                     "until you approve it%s%s: mcpctl trust %s (all of its servers) or mcpctl "
                     "trust --server %s %s",
                     p->shown, held_note ? held_note : "", old_note ? old_note : "", t->root,
                     p->name, t->root);
}

TrustVerdict trust_check(Trust *t, const ConfigGateEntry *e, const struct stat *st,
                         const struct stat *env_st, char **whyp)
{
    const char *who = NULL, *reads = NULL;
    const char *rel = t ? project_rel(t, e->src->path) : NULL;
    TrustHash hash, old;
    bool held = false;
    int answer = 0;

    if (e->src->level != CONFIG_LEVEL_PROJECT || !rel)
        rel = NULL;
    if (!rel && !(t && (reads = project_file_read(t, e))))
        return TRUST_APPROVED;
    if (rel && check_owner(e->src->path, st, !paths_within(e->src->path, t->root), whyp) < 0)
        return TRUST_FOREIGN;
    /* The .env a project entry (or the user's) reads is a project file like any other. */
    if (e->env_text && e->env_file && paths_within(e->env_file, t->root) &&
        check_owner(e->env_file, env_st, false, whyp) < 0)
        return TRUST_FOREIGN;
    if (e->env_text && e->env_len > TRUST_MAX_ENV_FILE_BYTES) {
        *whyp = xasprintf("envFile %s holds %zu bytes, more than mcpd shows for approval (%u): "
                          "nothing of this entry runs; make the file smaller",
                          e->env_file, e->env_len, TRUST_MAX_ENV_FILE_BYTES);
        return TRUST_FOREIGN;
    }
    entry_hash(hash, e, false);
    if (store_has(t, e->name, hash))
        return TRUST_APPROVED;
    if (rel && (answer = agent_answer(t, rel, e->name, &who, &held)) > 0)
        return TRUST_APPROVED;
    entry_hash(old, e, true);
    TrustPending *p = pending_add(t, e, hash, reads != NULL);
    if (answer < 0) {
        *whyp = xasprintf("rejected in %s (disabledMcpjsonServers); to run it through mcpd "
                          "anyway: mcpctl trust --server %s %s",
                          who, e->name, t->root);
        return TRUST_REJECTED;
    }
    *whyp = pending_why(t, p, reads, held, e->env_file && store_has(t, e->name, old));
    return TRUST_PENDING;
}

static int store_write(Trust *t, char **whyp)
{
    _cleanup_free_ char *dir = paths_dirname(t->store_path);
    StrBuf sb = STRBUF_INIT;
    int r;

    if ((r = paths_mkdir_p(dir, 0700)) < 0) {
        *whyp = xasprintf("cannot create %s: %s", dir, strerror(-r));
        return r;
    }
    json_write(&sb, t->store);
    strbuf_putc(&sb, '\n');
    r = durable_write(dir, t->store_path, sb.data, sb.len, NULL);
    strbuf_deinit(&sb);
    if (r < 0)
        *whyp = xasprintf("cannot write %s: %s", t->store_path, strerror(-r));
    return r;
}

static int store_save(Trust *t, char **whyp)
{
    if (t->store_broken) {
        *whyp = xasprintf("%s could not be read (see mcpctl status); fix or remove it first, "
                          "so no approval in it is lost",
                          t->store_path);
        return -EIO;
    }
    return store_write(t, whyp);
}

/* Add hash to the root's list for name, dropping the oldest beyond the bound. */
static void store_add(Trust *t, const char *name, const char *hash)
{
    yajl_val projects = json_get_object(t->store, "projects"), proj, old, list;

    if (!(proj = json_get_object(projects, t->root))) {
        json_object_set(projects, t->root, json_object_new());
        proj = json_get_object(projects, t->root);
    }
    old = json_get_array(proj, name);
    if (source_names_contain(old, hash))
        return;
    list = json_array_new();
    size_t n = json_array_len(old),
           first = n >= TRUST_MAX_HASHES_PER_SERVER ? n - TRUST_MAX_HASHES_PER_SERVER + 1 : 0;
    for (size_t i = first; i < n; i++)
        json_array_push(list, json_copy(json_array_at(old, i)));
    json_array_push(list, json_string_new(hash));
    json_object_set(proj, name, list);
}

/*
 * Trusting a project trusts what is in it: a .mcp.json above it (a parent directory, perhaps a
 * monorepo's or a shared one) holds other people's choices too, so its entries are approved only
 * by name.
 */
bool trust_pending_chosen(const TrustPending *p, const char *server)
{
    return server ? streq(server, p->name) : !p->above;
}

int trust_approve(Trust *t, const char *server, size_t *np, char **whyp)
{
    *np = 0;
    for (size_t i = 0; i < t->n_pending; i++) {
        if (!trust_pending_chosen(&t->pending[i], server))
            continue;
        store_add(t, t->pending[i].name, t->pending[i].hash);
        (*np)++;
    }
    return *np ? store_save(t, whyp) : 0;
}

int trust_revoke(Trust *t, const char *server, size_t *np, char **whyp)
{
    yajl_val projects = json_get_object(t->store, "projects");
    yajl_val proj = json_get_object(projects, t->root), gone;

    *np = 0;
    if (!proj)
        return 0;
    gone = server ? json_object_take(proj, server) : json_object_take(projects, t->root);
    if (!gone)
        return 0;
    *np = server ? 1 : gone->u.object.len;
    json_free(gone);
    return store_save(t, whyp);
}

/*
 * The project trust gate: an entry from a file inside the project runs only once approved
 * (mcpd's store or the owning agent's own answer), and never from a file another user owns.
 * Held-back entries mask nothing and are both a skip (mcpctl config) and a problem (status).
 */
bool trust_gate_entry(void *ctx, ConfigSet *set, const ConfigGateEntry *e)
{
    Trust *t = ctx;
    _cleanup_free_ char *why = NULL;
    TrustVerdict v;

    /* In $HOME every file is the user's own: no project file is read there, none is gated. */
    if (set->root_is_home)
        return true;
    v = trust_check(t, e, config_set_read_stat(set, e->src->path),
                    e->env_file ? config_set_read_stat(set, e->env_file) : NULL, &why);
    if (v == TRUST_APPROVED)
        return true;
    config_set_problem(set, e->src->path, e->name, "%s", why);
    config_set_skip(set, e->name, e->src, "%s", why);
    return false;
}
