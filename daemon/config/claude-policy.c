// SPDX-License-Identifier: MIT
// claude-policy: Claude Code's settings files as discovery needs them: which plugins are on, and
// the MCP server policy an administrator (or the user) set in them.

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/config/claude-policy.h"
#include "daemon/config/config-expand.h"
#include "daemon/config/source.h"

/*
 * What this follows (code.claude.com/docs/en/managed-mcp, "Policy-based control with allowlists
 * and denylists", "How a server is evaluated", "Provide servers through managed settings";
 * code.claude.com/docs/en/settings, "settings precedence"; Claude Code's
 * utils/plugins/pluginDirectories.ts for the plugin directory):
 *
 * - Settings files, strongest first: managed (/etc/claude-code/managed-settings.json on Linux),
 *   <root>/.claude/settings.local.json, <root>/.claude/settings.json, <dir>/settings.json.
 * - deniedMcpServers of every file merge; a server matching any entry never loads.
 * - allowedMcpServers of every file merge, unless the managed file sets
 *   allowManagedMcpServersOnly: then only its list counts. When a list is set anywhere (even
 *   empty), a remote server must match a serverUrl entry (a serverName entry counts only while
 *   there is no serverUrl entry) and a stdio server a serverCommand entry (likewise). The
 *   organization's own servers skip the allowlist: managedMcpServers entries and managed-mcp.json
 *   entries that use no ${VAR}.
 * - serverName matches exactly; serverCommand matches [command, args...] exactly, both sides
 *   ${VAR}-expanded; serverUrl has '*' wildcards anywhere, a case-insensitive host that may end
 *   in a dot, and a pattern without a path matches every path.
 * - strictPluginOnlyCustomization (managed only; true, or a list naming "mcp") leaves out the
 *   servers of ~/.claude.json and .mcp.json; plugins and managed servers still load.
 */

/* The managed settings file on Linux (code.claude.com/docs/en/settings). */
#define CLAUDE_MANAGED_SETTINGS "/etc/claude-code/managed-settings.json"

char *claude_managed_settings_path(void)
{
    const char *env = getenv("MCPD_CLAUDE_MANAGED_SETTINGS");
    const char *mcp = getenv("MCPD_CLAUDE_MANAGED_MCP");

    if (env && env[0])
        return xstrdup(env);
    /* Both files live in one directory; a test or an unusual install that moved one moved both. */
    if (mcp && mcp[0]) {
        _cleanup_free_ char *dir = paths_dirname(mcp);
        return paths_join(dir, "managed-settings.json");
    }
    return xstrdup(CLAUDE_MANAGED_SETTINGS);
}

/*
 * Drop-in files read from managed-settings.d: Claude Code sets no limit, but the directory is an
 * administrator's, one fragment per team or policy (a few, in practice); 256 keeps a stray
 * directory of generated files from costing a discovery more than 256 small parses.
 */
#define CLAUDE_MAX_DROP_INS 256
/* The policy lists a settings file may hold. */
static const char *const list_keys[] = {"allowedMcpServers", "deniedMcpServers"};

/* Nesting followed when merging a fragment: settings are a few levels deep (hooks: 4). */
#define CLAUDE_MERGE_DEPTH 64

/* Whether arr holds a scalar equal to v (objects and arrays are never the same, as in lodash). */
static bool array_has_scalar(yajl_val arr, yajl_val v)
{
    if (YAJL_IS_OBJECT(v) || YAJL_IS_ARRAY(v))
        return false;
    for (size_t i = 0; i < arr->u.array.len; i++)
        if (json_equal(arr->u.array.values[i], v))
            return true;
    return false;
}

/*
 * Claude Code's merge of one settings source over another (lodash mergeWith with its
 * customizer): objects merge key by key, arrays concatenate with repeated scalars dropped,
 * anything else is replaced. Takes over and returns the merged value.
 */
static yajl_val settings_merge(yajl_val base, yajl_val over, int depth)
{
    if (YAJL_IS_OBJECT(base) && YAJL_IS_OBJECT(over) && depth < CLAUDE_MERGE_DEPTH) {
        for (size_t i = 0; i < over->u.object.len; i++) {
            const char *k = over->u.object.keys[i];
            yajl_val theirs = over->u.object.values[i];
            size_t j = 0;
            over->u.object.values[i] = NULL; /* taken */
            while (j < base->u.object.len && !streq(base->u.object.keys[j], k))
                j++;
            if (j == base->u.object.len)
                json_object_set(base, k, theirs);
            else
                base->u.object.values[j] =
                    settings_merge(base->u.object.values[j], theirs, depth + 1);
        }
        json_free(over);
        return base;
    }
    if (YAJL_IS_ARRAY(base) && YAJL_IS_ARRAY(over)) {
        for (size_t i = 0; i < over->u.array.len; i++) {
            yajl_val v = over->u.array.values[i];
            if (array_has_scalar(base, v))
                continue;
            json_array_push(base, json_copy(v));
        }
        json_free(over);
        return base;
    }
    json_free(base);
    return over;
}

/*
 * A managed file's policy list that is there but not a list: the merge would let it replace (or
 * drop) the lists before it, widening the policy, so the managed scope is taken as broken.
 */
static int bad_lists(ConfigSet *set, const char *path, yajl_val v)
{
    int r = 0;

    for (size_t i = 0; i < N_ELEMENTS(list_keys); i++) {
        yajl_val l = json_get(v, list_keys[i]);
        if (!l || YAJL_IS_ARRAY(l))
            continue;
        config_set_problem(set, path, NULL,
                           "\"%s\" must be a list of {\"serverName\"}, {\"serverCommand\"} or "
                           "{\"serverUrl\"} entries, not %s; the managed MCP policy is unknown "
                           "while it is wrong, so mcpd runs none of Claude Code's servers but the "
                           "organization's own (fix the value, or remove the key)",
                           list_keys[i], json_type_name(l));
        r = -EINVAL;
    }
    return r;
}

int claude_managed_read(ConfigSet *set, const char *path, yajl_val *outp, yajl_val *partsp)
{
    _cleanup_free_ char *base_dir = paths_dirname(path);
    _cleanup_free_ char *dir = paths_join(base_dir, "managed-settings.d");
    /* One more than read: a directory over the bound is refused whole, not cut in readdir order. */
    char *names[CLAUDE_MAX_DROP_INS + 1];
    yajl_val root = NULL;
    int r = source_read_json(set, path, CONFIG_LEVEL_USER, false, &root), bad = 0;
    size_t n = source_list_dir(set, dir, ".json", names, N_ELEMENTS(names),
                               "managed-settings.d fragments");

    if (partsp) {
        *partsp = json_object_new();
        if (r == 0)
            json_object_set(*partsp, path, json_copy(root));
    }
    if (n > CLAUDE_MAX_DROP_INS) {
        config_set_problem(set, dir, NULL,
                           "more than %d fragments: which of them apply would be arbitrary, so "
                           "the managed MCP policy is unknown and mcpd runs none of Claude Code's "
                           "servers but the organization's own; merge or remove fragments",
                           CLAUDE_MAX_DROP_INS);
        bad = -E2BIG;
    }
    if (r < 0 && r != -ENOENT)
        bad = r; /* a broken base file: reported, and the managed scope stays broken */
    if (r == 0)
        bad = bad ? bad : bad_lists(set, path, root);

    for (size_t i = 0; i < n; i++) {
        _cleanup_free_ char *frag = paths_join(dir, names[i]);
        yajl_val v = NULL;
        int fr;
        free(names[i]);
        if (bad)
            continue;
        /*
         * A fragment that cannot be read whole may be the one holding a denylist: leaving it out
         * while the others apply would silently widen the policy, so, like a broken base file, it
         * makes the managed scope broken (fail closed). One gone since the listing is not there.
         */
        if ((fr = source_read_json(set, frag, CONFIG_LEVEL_USER, false, &v)) == -ENOENT)
            continue;
        if (fr < 0 || !YAJL_IS_OBJECT(v)) {
            config_set_problem(set, frag, NULL,
                               "this managed-settings.d fragment %s%s, so the managed MCP "
                               "policy is unknown and mcpd runs none of Claude Code's servers "
                               "but the organization's own: fix the fragment or remove it",
                               fr < 0 ? "cannot be read" : "must be an object, not ",
                               fr < 0 ? "" : json_type_name(v));
            bad = fr < 0 ? fr : -EINVAL;
            json_free(v);
            continue;
        }
        if ((bad = bad_lists(set, frag, v)) < 0) {
            json_free(v);
            continue;
        }
        if (partsp)
            json_object_set(*partsp, frag, json_copy(v));
        if (root)
            root = YAJL_IS_OBJECT(root) ? settings_merge(root, v, 0) : root;
        else
            root = v;
        if (root != v && !YAJL_IS_OBJECT(root))
            json_free(v); /* a base that is not an object is reported by the caller */
        r = 0;
    }
    if (bad)
        r = bad;
    *outp = r == 0 ? root : json_free(root);
    return r;
}

/* A directory from the environment, "~" and "~/..." being home (Claude Code's expandTilde). */
static char *env_dir(const char *value)
{
    if (streq(value, "~"))
        return paths_home();
    if (startswith(value, "~/"))
        return source_home_path(value + 2);
    return xstrdup(value);
}

/*
 * $CLAUDE_CODE_PLUGIN_SEED_DIR: read-only plugin directories, separated by ':', empty parts
 * skipped, "~" being home (Claude Code's pluginDirectories.ts, getPluginSeedDirs).
 */
static void seeds_load(ClaudeSettings *cs, ConfigSet *set)
{
    const char *env = getenv("CLAUDE_CODE_PLUGIN_SEED_DIR");
    size_t over = 0;

    for (const char *p = env; p && *p;) {
        size_t n = strcspn(p, ":");
        if (n && cs->n_seeds == CLAUDE_MAX_SEEDS)
            over++;
        else if (n) {
            _cleanup_free_ char *one = xstrndup(p, n);
            cs->seeds[cs->n_seeds++] = env_dir(one);
        }
        p += n + (p[n] == ':');
    }
    if (over)
        config_set_problem(set, NULL, NULL,
                           "CLAUDE_CODE_PLUGIN_SEED_DIR names %zu more directories than the %d "
                           "read; the last ones are left out",
                           over, CLAUDE_MAX_SEEDS);
}

static void scope_load(ClaudeSettings *cs, ConfigSet *set, ClaudeScopeId id, ConfigLevel level)
{
    ClaudeScope *sc = &cs->scopes[id];
    /* Claude Code reads its settings files as plain JSON; managed-settings.d/ merges over one. */
    int r = id == CLAUDE_SCOPE_MANAGED
                ? claude_managed_read(set, sc->path, &sc->root, &cs->managed_parts)
                : source_read_json(set, sc->path, level, false, &sc->root);

    if (r < 0) {
        sc->broken = r != -ENOENT;
        return;
    }
    if (!YAJL_IS_OBJECT(sc->root)) {
        config_set_problem(set, sc->path, NULL,
                           "the top level must be an object, not %s; Claude Code ignores it, and "
                           "so does mcpd",
                           json_type_name(sc->root));
        sc->root = json_free(sc->root);
        sc->broken = true;
    }
    for (size_t i = 0; id != CLAUDE_SCOPE_MANAGED && i < N_ELEMENTS(list_keys); i++) {
        yajl_val v = json_get(sc->root, list_keys[i]);
        if (v && !YAJL_IS_ARRAY(v))
            config_set_problem(set, sc->path, NULL,
                               "\"%s\" must be a list of {\"serverName\"}, {\"serverCommand\"} or "
                               "{\"serverUrl\"} entries, not %s; it is ignored",
                               list_keys[i], json_type_name(v));
    }
    if (id != CLAUDE_SCOPE_MANAGED && json_get(sc->root, "managedMcpServers"))
        config_set_warning(set, sc->path, NULL,
                           "\"managedMcpServers\" is ignored here: Claude Code reads it from "
                           "managed settings only");
}

/* Whether the managed settings lock the "mcp" surface to plugins and managed servers. */
static bool strict_mcp(ConfigSet *set, const ClaudeScope *managed)
{
    yajl_val v = json_get(managed->root, "strictPluginOnlyCustomization");

    if (!v || YAJL_IS_FALSE(v))
        return false;
    if (YAJL_IS_TRUE(v))
        return true;
    if (YAJL_IS_ARRAY(v))
        return source_names_contain(v, "mcp");
    config_set_warning(set, managed->path, NULL,
                       "\"strictPluginOnlyCustomization\" must be true or a list of surfaces "
                       "(\"mcp\", ...), not %s; ignored, as Claude Code ignores it",
                       json_type_name(v));
    return false;
}

char *claude_config_dir(void)
{
    const char *dir = getenv("CLAUDE_CONFIG_DIR");

    return dir && dir[0] ? xstrdup(dir) : source_home_path(".claude");
}

void claude_settings_load(ClaudeSettings *cs, ConfigSet *set, const char *root)
{
    const char *cache = getenv("CLAUDE_CODE_PLUGIN_CACHE_DIR");

    memset(cs, 0, sizeof(*cs));
    cs->root = root;
    cs->project_lists = config_folder_trusted(set, CONFIG_FOLDER_TRUST_CLAUDE);
    cs->dir = claude_config_dir();
    cs->plugins = cache && cache[0] ? env_dir(cache) : paths_join(cs->dir, "plugins");
    seeds_load(cs, set);
    cs->scopes[CLAUDE_SCOPE_MANAGED].path = claude_managed_settings_path();
    cs->scopes[CLAUDE_SCOPE_USER].path = paths_join(cs->dir, "settings.json");
    if (root) {
        cs->scopes[CLAUDE_SCOPE_PROJECT].path = paths_join(root, ".claude/settings.json");
        cs->scopes[CLAUDE_SCOPE_LOCAL].path = paths_join(root, ".claude/settings.local.json");
        /* An agent started in home: its project file is the user's own, read once as such. */
        if (streq(cs->scopes[CLAUDE_SCOPE_PROJECT].path, cs->scopes[CLAUDE_SCOPE_USER].path)) {
            free(cs->scopes[CLAUDE_SCOPE_PROJECT].path);
            cs->scopes[CLAUDE_SCOPE_PROJECT].path = NULL;
        }
    }
    for (int i = 0; i < CLAUDE_N_SCOPES; i++)
        if (cs->scopes[i].path)
            scope_load(cs, set, i,
                       i == CLAUDE_SCOPE_LOCAL || i == CLAUDE_SCOPE_PROJECT ? CONFIG_LEVEL_PROJECT
                                                                            : CONFIG_LEVEL_USER);
    cs->strict_mcp = strict_mcp(set, &cs->scopes[CLAUDE_SCOPE_MANAGED]);
}

void claude_settings_deinit(ClaudeSettings *cs)
{
    for (int i = 0; i < CLAUDE_N_SCOPES; i++) {
        free(cs->scopes[i].path);
        json_free(cs->scopes[i].root);
    }
    free(cs->dir);
    free(cs->plugins);
    for (size_t i = 0; i < cs->n_seeds; i++)
        free(cs->seeds[i]);
    json_free(cs->provided_urls);
    json_free(cs->managed_parts);
    memset(cs, 0, sizeof(*cs));
}

/* ---- matching ---- */

/* '*' matches any run of characters, none included; nothing else is special. */
static bool star_match(const char *p, size_t pn, const char *s, size_t sn, bool icase)
{
    size_t pi = 0, si = 0, star = SIZE_MAX, mark = 0;

    while (si < sn) {
        if (pi < pn && p[pi] == '*') {
            star = pi++;
            mark = si;
        } else if (pi < pn &&
                   (icase ? tolower((unsigned char)p[pi]) == tolower((unsigned char)s[si])
                          : p[pi] == s[si])) {
            pi++;
            si++;
        } else if (star != SIZE_MAX) {
            pi = star + 1;
            si = ++mark;
        } else {
            return false;
        }
    }
    while (pi < pn && p[pi] == '*')
        pi++;
    return pi == pn;
}

typedef struct UrlParts {
    const char *scheme, *host, *rest;
    size_t n_scheme, n_host, n_rest;
} UrlParts;

/* scheme://authority then the rest (path, query); a host's final dot is left out. */
static bool url_split(const char *u, UrlParts *p)
{
    const char *sep = strstr(u, "://");

    if (!sep)
        return false;
    p->scheme = u;
    p->n_scheme = (size_t)(sep - u);
    p->host = sep + 3;
    p->n_host = strcspn(p->host, "/?#");
    p->rest = p->host + p->n_host;
    p->n_rest = strlen(p->rest);
    if (p->n_host && p->host[p->n_host - 1] == '.')
        p->n_host--;
    return true;
}

static bool url_match(const char *pattern, const char *url)
{
    UrlParts p, u;

    if (!url_split(pattern, &p) || !url_split(url, &u))
        return streq(pattern, url);
    return star_match(p.scheme, p.n_scheme, u.scheme, u.n_scheme, true) &&
           star_match(p.host, p.n_host, u.host, u.n_host, true) &&
           (!p.n_rest || star_match(p.rest, p.n_rest, u.rest, u.n_rest, false));
}

/* What a server is, as the policy sees it (values ${VAR}-expanded). */
typedef struct Seen {
    const char *name;
    yajl_val argv; /* [command, args...] (owned), or NULL for a remote server */
    char *url;     /* the expanded url, or NULL */
} Seen;

static void seen_init(Seen *s, const char *name, yajl_val entry, const char *root)
{
    const char *cmd = json_get_string(entry, "command");
    const char *url = json_get_string(entry, "url");
    yajl_val args = json_get_array(entry, "args");

    memset(s, 0, sizeof(*s));
    s->name = name;
    if (cmd) {
        _cleanup_json_ yajl_val raw = json_array_new();
        json_array_push(raw, json_string_new(cmd));
        for (size_t i = 0; i < json_array_len(args); i++)
            json_array_push(raw, json_copy(json_array_at(args, i)));
        s->argv = config_expand(raw, root);
    } else if (url) {
        _cleanup_json_ yajl_val raw = json_string_new(url);
        _cleanup_json_ yajl_val v = config_expand(raw, root);
        s->url = xstrdup(YAJL_IS_STRING(v) ? v->u.string : url);
    }
}

static void seen_deinit(Seen *s)
{
    json_free(s->argv);
    free(s->url);
}

/* The kinds of policy entries, by their one key. */
typedef enum Kind { KIND_NAME, KIND_COMMAND, KIND_URL, KIND_NONE } Kind;

static Kind entry_kind(yajl_val e)
{
    if (YAJL_IS_STRING(json_get(e, "serverName")))
        return KIND_NAME;
    if (YAJL_IS_ARRAY(json_get(e, "serverCommand")))
        return KIND_COMMAND;
    if (YAJL_IS_STRING(json_get(e, "serverUrl")))
        return KIND_URL;
    return KIND_NONE;
}

static bool entry_matches(yajl_val e, const Seen *s, const char *root)
{
    switch (entry_kind(e)) {
    case KIND_NAME:
        return streq(json_get_string(e, "serverName"), s->name);
    case KIND_COMMAND: {
        if (!s->argv)
            return false;
        _cleanup_json_ yajl_val want = config_expand(json_get(e, "serverCommand"), root);
        return json_equal(want, s->argv);
    }
    case KIND_URL: {
        if (!s->url)
            return false;
        _cleanup_json_ yajl_val want = config_expand(json_get(e, "serverUrl"), root);
        return YAJL_IS_STRING(want) && url_match(want->u.string, s->url);
    }
    case KIND_NONE:
        break;
    }
    return false;
}

/* The list key of scope i, when it is an array (a wrong type is reported once, at load). */
static yajl_val scope_list(const ClaudeSettings *cs, int i, const char *key)
{
    if ((i == CLAUDE_SCOPE_PROJECT || i == CLAUDE_SCOPE_LOCAL) && !cs->project_lists)
        return NULL;
    return json_get_array(cs->scopes[i].root, key);
}

/*
 * Which managed file (the base or a managed-settings.d fragment) sets key, holding rule in it
 * when rule is not NULL: the last one, as the last one decides a scalar. The base path when
 * none does.
 */
static const char *managed_file(const ClaudeSettings *cs, const char *key, yajl_val rule)
{
    yajl_val parts = cs->managed_parts;

    for (size_t i = YAJL_IS_OBJECT(parts) ? parts->u.object.len : 0; i-- > 0;) {
        yajl_val v = json_get(parts->u.object.values[i], key);
        bool holds = v && !rule;
        for (size_t j = 0; rule && j < json_array_len(v); j++)
            holds |= json_equal(json_array_at(v, j), rule);
        if (holds)
            return parts->u.object.keys[i];
    }
    return cs->scopes[CLAUDE_SCOPE_MANAGED].path;
}

/* Whether a deniedMcpServers entry matches: *fromp the file, *entryp the entry. */
static bool denied(const ClaudeSettings *cs, const Seen *s, const char **fromp, yajl_val *entryp)
{
    for (int i = 0; i < CLAUDE_N_SCOPES; i++) {
        yajl_val list = scope_list(cs, i, "deniedMcpServers");
        for (size_t j = 0; j < json_array_len(list); j++)
            if (entry_matches(json_array_at(list, j), s, cs->root)) {
                *entryp = json_array_at(list, j);
                *fromp = i == CLAUDE_SCOPE_MANAGED ? managed_file(cs, "deniedMcpServers", *entryp)
                                                   : cs->scopes[i].path;
                return true;
            }
    }
    return false;
}

/* Whether the merged allowlist lets s through; *listedp: whether a list is set at all. */
static bool allowed(const ClaudeSettings *cs, const Seen *s, bool *setp, StrBuf *files)
{
    bool only =
        YAJL_IS_TRUE(json_get(cs->scopes[CLAUDE_SCOPE_MANAGED].root, "allowManagedMcpServersOnly"));
    Kind strict = s->argv ? KIND_COMMAND : KIND_URL;
    bool has_strict = false, ok_strict = false, ok_name = false;

    *setp = false;
    for (int i = 0; i < (only ? 1 : CLAUDE_N_SCOPES); i++) {
        yajl_val list = scope_list(cs, i, "allowedMcpServers");
        if (!list)
            continue;
        *setp = true;
        strbuf_printf(files, "%s%s", files->len ? ", " : "",
                      i == CLAUDE_SCOPE_MANAGED ? managed_file(cs, "allowedMcpServers", NULL)
                                                : cs->scopes[i].path);
        for (size_t j = 0; j < json_array_len(list); j++) {
            yajl_val e = json_array_at(list, j);
            Kind k = entry_kind(e);
            if (k == strict) {
                has_strict = true;
                ok_strict |= entry_matches(e, s, cs->root);
            } else if (k == KIND_NAME) {
                ok_name |= entry_matches(e, s, cs->root);
            }
        }
    }
    return !*setp || (has_strict ? ok_strict : ok_name);
}

bool claude_value_holds(yajl_val v, const char *needle)
{
    if (YAJL_IS_STRING(v))
        return strstr(v->u.string, needle) != NULL;
    for (size_t i = 0; YAJL_IS_OBJECT(v) && i < v->u.object.len; i++)
        if (claude_value_holds(v->u.object.values[i], needle))
            return true;
    for (size_t i = 0; i < json_array_len(v); i++)
        if (claude_value_holds(json_array_at(v, i), needle))
            return true;
    return false;
}

/* Whether a value (keys aside) holds a ${...} reference. */
static bool uses_vars(yajl_val v)
{
    return claude_value_holds(v, "${");
}

bool claude_policy_blocks(const ClaudeSettings *cs, const char *name, yajl_val entry,
                          ClaudeOrigin origin, char **whyp)
{
    _cleanup_free_ char *shown = NULL;
    StrBuf files = STRBUF_INIT;
    const char *from = NULL;
    yajl_val rule = NULL;
    bool set_anywhere, ok;
    Seen s;

    *whyp = NULL;
    /*
     * Fail closed: managed settings that exist but could not be read whole (a broken file, a
     * policy list that is not a list, too many fragments) may hold a denylist or an allowlist.
     * The organization's own servers (managed-mcp.json, managedMcpServers) are its word anyway.
     */
    if ((origin == CLAUDE_ORIGIN_USER || origin == CLAUDE_ORIGIN_PLUGIN) &&
        cs->scopes[CLAUDE_SCOPE_MANAGED].broken) {
        *whyp = xasprintf("\"%s\" is held back: Claude Code's managed settings (%s) could not be "
                          "read as a whole (see the problem reported for them), so the "
                          "organization's MCP policy is unknown and mcpd runs none of Claude "
                          "Code's servers but the organization's own until they are fixed",
                          name, cs->scopes[CLAUDE_SCOPE_MANAGED].path);
        return true;
    }
    if (origin == CLAUDE_ORIGIN_USER && cs->strict_mcp) {
        *whyp = xasprintf("\"%s\" is left out by Claude Code's managed settings (%s): "
                          "strictPluginOnlyCustomization lets MCP servers come only from plugins "
                          "and managed settings, so Claude Code does not load it and neither "
                          "does mcpd",
                          name, managed_file(cs, "strictPluginOnlyCustomization", NULL));
        return true;
    }
    seen_init(&s, name, entry, cs->root);
    if (denied(cs, &s, &from, &rule)) {
        shown = json_to_string(rule);
        *whyp =
            xasprintf("\"%s\" is blocked by Claude Code's policy: deniedMcpServers in %s has %s; "
                      "Claude Code never runs it, so neither does mcpd (remove that entry to "
                      "allow it)",
                      name, from, shown);
        seen_deinit(&s);
        return true;
    }
    bool own =
        origin == CLAUDE_ORIGIN_PROVIDED || (origin == CLAUDE_ORIGIN_MANAGED && !uses_vars(entry));
    ok = own || allowed(cs, &s, &set_anywhere, &files);
    if (!ok)
        *whyp = xasprintf(
            "\"%s\" is not allowed by Claude Code's policy: allowedMcpServers (%s) has no %s entry "
            "matching it%s; Claude Code does not run it, so neither does mcpd (add an entry for "
            "it there)",
            name, strbuf_str(&files),
            s.argv ? "serverCommand (or serverName)" : "serverUrl (or serverName)",
            YAJL_IS_TRUE(
                json_get(cs->scopes[CLAUDE_SCOPE_MANAGED].root, "allowManagedMcpServersOnly"))
                ? " (allowManagedMcpServersOnly: only the managed list counts)"
                : "");
    strbuf_deinit(&files);
    seen_deinit(&s);
    return !ok;
}

/* Whether a plugin's remote server points at a URL the organization provides already. */
static const char *provided_same_url(const ClaudeSettings *cs, yajl_val entry)
{
    const char *url = json_get_string(entry, "url");

    for (size_t i = 0; url && i < json_array_len(cs->provided_urls); i++) {
        yajl_val u = json_array_at(cs->provided_urls, i);
        if (YAJL_IS_STRING(u) && streq(u->u.string, url))
            return url;
    }
    return NULL;
}

yajl_val claude_policy_filter(ClaudeSettings *cs, ConfigSet *set, yajl_val servers,
                              const SourceMeta *src, ClaudeOrigin origin)
{
    yajl_val kept;

    if (!YAJL_IS_OBJECT(servers))
        return NULL;
    kept = json_object_new();
    if (config_too_many_servers(set, src->path, servers->u.object.len))
        return kept;
    for (size_t i = 0; i < servers->u.object.len; i++) {
        const char *name = servers->u.object.keys[i];
        yajl_val entry = servers->u.object.values[i];
        _cleanup_free_ char *why = NULL;
        const char *same = NULL;
        if (origin == CLAUDE_ORIGIN_PLUGIN && (same = provided_same_url(cs, entry))) {
            config_set_skip(set, name, src,
                            "the organization provides %s already (managedMcpServers in %s), "
                            "which Claude Code uses instead of a plugin's server",
                            same, cs->scopes[CLAUDE_SCOPE_MANAGED].path);
            continue;
        }
        if (YAJL_IS_OBJECT(entry) && claude_policy_blocks(cs, name, entry, origin, &why)) {
            config_set_problem(set, src->path, name, "%s", why);
            config_set_skip(set, name, src, "%s", why);
            continue;
        }
        json_object_append(kept, name, json_copy(entry)); /* names unique */
    }
    return kept;
}

/* ---- managedMcpServers ---- */

/* Whether any key or string value holds a control character. */
static bool has_control(yajl_val v)
{
    if (YAJL_IS_STRING(v)) {
        for (const unsigned char *c = (const unsigned char *)v->u.string; *c; c++)
            if (*c < 0x20 || *c == 0x7f)
                return true;
        return false;
    }
    for (size_t i = 0; YAJL_IS_OBJECT(v) && i < v->u.object.len; i++) {
        _cleanup_json_ yajl_val k = json_string_new(v->u.object.keys[i]);
        if (has_control(k) || has_control(v->u.object.values[i]))
            return true;
    }
    for (size_t i = 0; i < json_array_len(v); i++)
        if (has_control(json_array_at(v, i)))
            return true;
    return false;
}

/* Why Claude Code refuses a managedMcpServers entry, or NULL when it loads it. */
static const char *provided_refusal(const char *name, yajl_val e)
{
    static const char *const forbidden[] = {"command", "args", "env", "headersHelper"};
    const char *type = json_get_string(e, "type");
    const char *url = json_get_string(e, "url");

    if (!name[0] ||
        strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") !=
            strlen(name))
        return "the name may hold only letters, digits, '-' and '_'";
    if (!YAJL_IS_OBJECT(e))
        return "an entry must be an object";
    if (!type || !(streq(type, "http") || streq(type, "sse") || streq(type, "streamable-http")))
        return "\"type\" must be \"http\" (or \"streamable-http\") or \"sse\"";
    if (!url || !startswith(url, "https://"))
        return "\"url\" must be an https:// URL";
    for (size_t i = 0; i < N_ELEMENTS(forbidden); i++)
        if (json_get(e, forbidden[i]))
            return "an entry may not name a program to run (command, args, env, headersHelper)";
    if (uses_vars(e))
        return "Claude Code does not expand ${VAR} here: write literal values";
    if (has_control(e))
        return "a key or value holds a control character";
    return NULL;
}

yajl_val claude_managed_servers(ClaudeSettings *cs, ConfigSet *set)
{
    const ClaudeScope *m = &cs->scopes[CLAUDE_SCOPE_MANAGED];
    yajl_val v = json_get(m->root, "managedMcpServers"), out;

    if (!v)
        return NULL;
    if (!YAJL_IS_OBJECT(v)) {
        config_set_problem(set, m->path, NULL,
                           "\"managedMcpServers\" must be an object of servers by name, not %s "
                           "(Claude Desktop's list form is not Claude Code's); none is loaded",
                           json_type_name(v));
        return NULL;
    }
    out = json_object_new();
    json_free(cs->provided_urls);
    cs->provided_urls = json_array_new();
    for (size_t i = 0; i < v->u.object.len; i++) {
        const char *name = v->u.object.keys[i];
        yajl_val e = v->u.object.values[i];
        const char *why = provided_refusal(name, e);
        if (why) {
            config_set_problem(set, m->path, name,
                               "managedMcpServers: %s; Claude Code does not load it, and neither "
                               "does mcpd",
                               why);
            continue;
        }
        json_object_append(out, name, json_copy(e)); /* names unique */
        json_array_push(cs->provided_urls, json_string_new(json_get_string(e, "url")));
    }
    return out;
}
