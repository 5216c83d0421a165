// SPDX-License-Identifier: MIT
// setup-claude: Claude Code's per-project switches for .mcp.json servers, followed where Claude
// Code moves them. Claude Code 2.1.x moves a project's enabledMcpjsonServers and
// disabledMcpjsonServers out of ~/.claude.json into <project>/.claude/settings.local.json the
// next time it runs there (non-empty lists; an empty one stays), and honours that file's lists
// once the user accepted the folder's trust dialog (projects["<dir>"].hasTrustDialogAccepted in
// ~/.claude.json). So the switch setup adds may end up in that file, and undo must take it back
// there, and the approvals Claude moved there count as approvals.

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "client/setup-claude.h"
#include "client/setup-edit.h"
#include "common/durable.h"
#include "common/json.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"

/*
 * A project's settings.local.json and setup's own record are small files a person or a tool
 * writes a few keys into; 16 MiB is far above any real one and keeps a hostile one bounded.
 */
#define LOCAL_FILE_MAX (16 * 1024 * 1024)
/* Directories walked up from a project: PATH_MAX (4096) allows no more than 2048 levels. */
#define SETUP_CLAUDE_MAX_DEPTH 2048

static char *local_settings_path(const char *root)
{
    return paths_join(root, ".claude/settings.local.json");
}

/* The file's text and its members (0 on success; -ENOENT when it is not there). */
static int read_local(const char *path, char **textp, size_t *np, SetupMember **msp, size_t *nmp,
                      mode_t *modep)
{
    _cleanup_free_ char *why = NULL;
    _cleanup_json_ yajl_val v = NULL;
    struct stat st;
    int r = paths_read_regular(path, false, LOCAL_FILE_MAX, &st, textp, np, &why);

    if (r < 0)
        return r;
    v = json_parse(*textp, NULL);
    if (!YAJL_IS_OBJECT(v) ||
        setup_json_members(*textp, *np, setup_json_start(*textp, *np), msp, nmp) < 0) {
        free(*textp);
        *textp = NULL;
        return -EINVAL;
    }
    *modep = st.st_mode;
    return 0;
}

/* The member of ms named key, or -1. */
static ssize_t find_member(const char *s, const SetupMember *ms, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (setup_json_key_is(s, &ms[i], key))
            return (ssize_t)i;
    return -1;
}

/* The member's value, parsed (to free; NULL if it is not an array). */
static yajl_val member_array(const char *s, const SetupMember *m)
{
    _cleanup_free_ char *text = xstrndup(s + m->val_start, m->val_end - m->val_start);
    yajl_val v = json_parse(text, NULL);

    if (!YAJL_IS_ARRAY(v))
        return json_free(v);
    return v;
}

static bool has_name(yajl_val arr, const char *name)
{
    for (size_t i = 0; i < json_array_len(arr); i++)
        if (YAJL_IS_STRING(json_array_at(arr, i)) && streq(json_array_at(arr, i)->u.string, name))
            return true;
    return false;
}

bool setup_claude_local_approves(const char *root, const char *name)
{
    _cleanup_free_ char *path = local_settings_path(root), *text = NULL;
    _cleanup_free_ SetupMember *ms = NULL;
    size_t n = 0, nm = 0;
    mode_t mode;

    if (read_local(path, &text, &n, &ms, &nm, &mode) < 0)
        return false;
    ssize_t i = find_member(text, ms, nm, SETUP_CLAUDE_APPROVED);
    _cleanup_json_ yajl_val on = i >= 0 ? member_array(text, &ms[i]) : NULL;
    return has_name(on, name);
}

/*
 * One project's settings.local.json: the names setup switched off leave its
 * disabledMcpjsonServers (the member goes when nothing else is in it), and those the user had
 * approved are approved there again. Only when the switch is there: otherwise Claude Code did
 * not move it, and the file is not setup's business.
 */
static int undo_local(const char *root, yajl_val names, bool dry_run)
{
    _cleanup_free_ char *path = local_settings_path(root), *text = NULL, *out = NULL;
    _cleanup_free_ SetupMember *ms = NULL;
    _cleanup_json_ yajl_val off = NULL, on = NULL, kept = json_array_new();
    SetupEdits edits = {0};
    size_t n = 0, nm = 0, n_out = 0;
    mode_t mode = 0600;
    bool taken = false;

    if (read_local(path, &text, &n, &ms, &nm, &mode) < 0)
        return 0;
    ssize_t d = find_member(text, ms, nm, SETUP_CLAUDE_SWITCH),
            e = find_member(text, ms, nm, SETUP_CLAUDE_APPROVED);
    off = d >= 0 ? member_array(text, &ms[d]) : NULL;
    on = e >= 0 ? member_array(text, &ms[e]) : NULL;
    for (size_t i = 0; i < json_array_len(off); i++) {
        yajl_val v = json_array_at(off, i);
        if (YAJL_IS_STRING(v) && json_get(names, v->u.string))
            taken = true;
        else
            json_array_push(kept, json_copy(v));
    }
    if (!taken)
        return 0;
    /* The approvals setup took away, where Claude Code keeps them now. */
    _cleanup_json_ yajl_val add = json_array_new();
    for (size_t i = 0; i < names->u.object.len; i++)
        if (streq(json_get_string(names, names->u.object.keys[i]) ?: "", "approved") &&
            !has_name(on, names->u.object.keys[i]))
            json_array_push(add, json_string_new(names->u.object.keys[i]));
    _cleanup_free_ char *arr = json_to_string(add);
    bool add_member = json_array_len(add) && !on;
    if (json_array_len(add) && on) {
        for (size_t i = 0; i < json_array_len(add); i++)
            json_array_push(on, json_copy(json_array_at(add, i)));
        setup_edits_add(&edits, ms[e].val_start, ms[e].val_end, json_to_string(on));
    }
    if (json_array_len(kept)) {
        setup_edits_add(&edits, ms[d].val_start, ms[d].val_end, json_to_string(kept));
    } else if (add_member) {
        /* The switch's place (its layout, its comma) goes to the approvals. */
        setup_edits_add(&edits, ms[d].key_start - 1, ms[d].val_end,
                        xasprintf("\"" SETUP_CLAUDE_APPROVED "\": %s", arr));
        add_member = false;
    } else {
        setup_json_remove_member(ms, nm, (size_t)d, &edits);
    }
    if (add_member) {
        size_t start = setup_json_start(text, n);
        setup_edits_add(&edits, start + 1, start + 1,
                        xasprintf("\n  \"" SETUP_CLAUDE_APPROVED "\": %s,", arr));
    }
    out = setup_edits_apply(text, n, &edits, &n_out);
    setup_edits_deinit(&edits);
    _cleanup_json_ yajl_val check = json_parse(out, NULL);
    if (!YAJL_IS_OBJECT(check)) {
        fprintf(stderr,
                "mcpctl setup: Claude Code: %s: taking back the switch setup added would not "
                "leave JSON; remove %s from its " SETUP_CLAUDE_SWITCH " by hand\n",
                path, "the servers of .mcp.json");
        return -EINVAL;
    }
    if (dry_run) {
        printf("Claude Code: %s would become:\n%s", path, out);
        return 0;
    }
    _cleanup_free_ char *dir = paths_dirname(path);
    int r = durable_write_mode(dir, path, out, n_out, mode, NULL);
    if (r < 0) {
        fprintf(stderr, "mcpctl setup: Claude Code: restoring %s failed: %s\n", path, strerror(-r));
        return r;
    }
    printf("Claude Code: %s: the switch setup added, which Claude Code moved there, is taken "
           "back\n",
           path);
    return 0;
}

int setup_claude_undo_local(const char *imported_path, bool dry_run)
{
    _cleanup_free_ char *text = NULL, *why = NULL;
    _cleanup_json_ yajl_val v = NULL;
    size_t n = 0;
    int failed = 0;

    if (paths_read_regular(imported_path, false, LOCAL_FILE_MAX, NULL, &text, &n, &why) < 0)
        return 0;
    v = json_parse(text, NULL);
    yajl_val switches = json_get_object(v, "claudeProjectSwitches");
    for (size_t i = 0; switches && i < switches->u.object.len; i++)
        if (YAJL_IS_OBJECT(switches->u.object.values[i]) &&
            undo_local(switches->u.object.keys[i], switches->u.object.values[i], dry_run) < 0)
            failed++;
    return failed ? -EIO : 0;
}

void setup_claude_readd_moved(const char *cur, const SetupMember *cm, size_t ncm, const char *orig,
                              const SetupMember *om, size_t nom, SetupEdits *edits)
{
    static const char *const keys[] = {SETUP_CLAUDE_SWITCH, SETUP_CLAUDE_APPROVED};

    for (size_t k = 0; k < N_ELEMENTS(keys); k++) {
        ssize_t o = find_member(orig, om, nom, keys[k]);
        if (o < 0 || find_member(cur, cm, ncm, keys[k]) >= 0)
            continue;
        /* Back after the member it followed, with the bytes that were between them. */
        if (o > 0) {
            _cleanup_free_ char *prev = setup_json_key(orig, &om[o - 1]);
            ssize_t c = find_member(cur, cm, ncm, prev);
            if (c >= 0) {
                setup_edits_add(
                    edits, cm[c].val_end, cm[c].val_end,
                    xstrndup(orig + om[o - 1].val_end, om[o].val_end - om[o - 1].val_end));
                continue;
            }
        }
        /* Else first, before the first member now there. */
        if (ncm)
            setup_edits_add(edits, cm[0].key_start - 1, cm[0].key_start - 1,
                            xasprintf("%.*s, ", (int)(om[o].val_end - om[o].key_start + 1),
                                      orig + om[o].key_start - 1));
    }
}

/* A small JSON file, parsed (to free), or NULL when it is not there or not JSON. */
static yajl_val read_small_json(const char *path)
{
    _cleanup_free_ char *text = NULL, *why = NULL;
    size_t n = 0;

    if (paths_read_regular(path, true, LOCAL_FILE_MAX, NULL, &text, &n, &why) < 0)
        return NULL;
    return json_parse(text, NULL);
}

/* The names of a JSON file's object at key (top level) into out, unless out has them. */
static void add_keys(const char *path, const char *key, yajl_val out)
{
    _cleanup_json_ yajl_val v = read_small_json(path);
    yajl_val obj = json_get_object(v, key);

    for (size_t i = 0; obj && i < obj->u.object.len; i++)
        if (!has_name(out, obj->u.object.keys[i]))
            json_array_push(out, json_string_new(obj->u.object.keys[i]));
}

/* The strings of a JSON file's array at key (top level) into out. */
static void add_listed(const char *path, const char *key, yajl_val out)
{
    _cleanup_json_ yajl_val v = read_small_json(path);
    yajl_val arr = json_get_array(v, key);

    for (size_t i = 0; i < json_array_len(arr); i++)
        if (YAJL_IS_STRING(json_array_at(arr, i)))
            json_array_push(out, json_copy(json_array_at(arr, i)));
}

yajl_val setup_claude_own_servers(const char *root)
{
    yajl_val own = json_array_new(), not_run = json_array_new(), out = json_array_new();
    _cleanup_free_ char *dir = xstrdup(root), *conf = paths_config_home();
    _cleanup_free_ char *record = paths_join(conf, "mcpd/imported/claude.json");

    /* Claude Code reads .mcp.json from where it starts up to the root of the file system. */
    for (int depth = 0; depth < SETUP_CLAUDE_MAX_DEPTH; depth++) {
        _cleanup_free_ char *file = paths_join(dir, ".mcp.json"), *up = paths_dirname(dir);
        add_keys(file, "mcpServers", own);
        if (streq(up, dir))
            break;
        free(dir);
        dir = xstrdup(up);
    }
    /* Those it does not run: the project's own refusals, and those setup gave to mcpd. */
    _cleanup_free_ char *local = local_settings_path(root),
                        *shared = paths_join(root, ".claude/settings.json");
    add_listed(local, SETUP_CLAUDE_SWITCH, not_run);
    add_listed(shared, SETUP_CLAUDE_SWITCH, not_run);
    _cleanup_json_ yajl_val rec = read_small_json(record);
    yajl_val sw = json_get_object(json_get_object(rec, "claudeProjectSwitches"), root);
    for (size_t i = 0; sw && i < sw->u.object.len; i++)
        json_array_push(not_run, json_string_new(sw->u.object.keys[i]));
    for (size_t i = 0; i < json_array_len(own); i++)
        if (!has_name(not_run, json_array_at(own, i)->u.string))
            json_array_push(out, json_copy(json_array_at(own, i)));
    json_free(own);
    json_free(not_run);
    return out;
}
