// SPDX-License-Identifier: MIT
// profiles: named tool sets from mcpd.json (servers, tool globs, pinned tools, a mode), and which
// one an agent gets by its host's clientInfo.name or its project's own choice.

#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"
#include "daemon/config/collect.h"
#include "daemon/config/config-read.h"
#include "daemon/config/profiles.h"

bool profiles_setting_key(const char *key)
{
    return streq(key, "profiles") || streq(key, "clientProfiles") || streq(key, "toolTokenBudget");
}

static void strv_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void profiles_deinit(Profiles *ps)
{
    for (size_t i = 0; i < ps->n; i++) {
        Profile *p = &ps->v[i];
        free(p->name);
        strv_free(p->servers, p->n_servers);
        strv_free(p->tools, p->n_tools);
        strv_free(p->pinned, p->n_pinned);
    }
    free(ps->v);
    strv_free(ps->client_names, ps->n_clients);
    strv_free(ps->client_profiles, ps->n_clients);
    *ps = (Profiles){.token_budget = PROFILES_DEFAULT_TOKEN_BUDGET};
}

/* profiles.NAME.field: an array of at most PROFILE_ENTRIES_MAX strings, each a glob. */
static void load_globs(ConfigSet *set, const char *path, const char *name, yajl_val prof,
                       const char *field, char ***vp, size_t *np)
{
    yajl_val v = json_get(prof, field);

    if (!v)
        return;
    if (!YAJL_IS_ARRAY(v) || v->u.array.len > PROFILE_ENTRIES_MAX) {
        config_set_problem(set, path, NULL,
                           "profiles.%s.%s must be an array of at most %d strings (globs)", name,
                           field, PROFILE_ENTRIES_MAX);
        return;
    }
    *vp = xcalloc(v->u.array.len + 1, sizeof(**vp));
    for (size_t i = 0; i < v->u.array.len; i++) {
        yajl_val e = v->u.array.values[i];
        if (!YAJL_IS_STRING(e) || !*e->u.string || strlen(e->u.string) > PROFILE_GLOB_MAX) {
            config_set_problem(set, path, NULL,
                               "profiles.%s.%s[%zu] must be a non-empty string of at most %d "
                               "bytes (ignored)",
                               name, field, i, PROFILE_GLOB_MAX);
            continue;
        }
        (*vp)[(*np)++] = xstrdup(e->u.string);
    }
}

static bool mode_parse(const char *s, ProfileMode *mp)
{
    static const char *const names[] = {"all", "search", "auto"};

    for (size_t i = 0; s && i < N_ELEMENTS(names); i++)
        if (streq(s, names[i])) {
            *mp = (ProfileMode)i;
            return true;
        }
    return false;
}

const char *profile_mode_name(ProfileMode m)
{
    return m == PROFILE_MODE_SEARCH ? "search" : m == PROFILE_MODE_AUTO ? "auto" : "all";
}

bool profile_name_ok(const char *name)
{
    size_t n = strlen(name);

    if (n == 0 || n > PROFILE_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
              (name[i] >= '0' && name[i] <= '9') || strchr("-_.", name[i])))
            return false;
    return true;
}

static void load_profile(Profiles *ps, ConfigSet *set, const char *path, const char *name,
                         yajl_val v)
{
    static const char *const keys[] = {"servers", "tools", "pinned", "mode", "tokenBudget"};
    Profile p = {.mode = PROFILE_MODE_ALL, .token_budget = -1};
    yajl_val mode = json_get(v, "mode"), budget = json_get(v, "tokenBudget");

    if (!profile_name_ok(name) || !YAJL_IS_OBJECT(v)) {
        config_set_problem(set, path, NULL,
                           "profiles.%s: a profile is an object named by at most %d letters, "
                           "digits, '-', '_' or '.' (ignored)",
                           name, PROFILE_NAME_MAX);
        return;
    }
    for (size_t i = 0; i < v->u.object.len; i++) {
        bool known = false;
        for (size_t k = 0; k < N_ELEMENTS(keys) && !known; k++)
            known = streq(keys[k], v->u.object.keys[i]);
        if (!known)
            config_set_problem(set, path, NULL,
                               "profiles.%s: unknown field \"%s\" (known: servers, tools, "
                               "pinned, mode, tokenBudget; ignored)",
                               name, v->u.object.keys[i]);
    }
    if (mode && !mode_parse(YAJL_IS_STRING(mode) ? mode->u.string : NULL, &p.mode))
        config_set_problem(set, path, NULL,
                           "profiles.%s.mode must be \"all\", \"search\" or \"auto\" (all used)",
                           name);
    if (budget &&
        (!YAJL_IS_INTEGER(budget) || budget->u.number.i < 0 || budget->u.number.i > INT32_MAX))
        config_set_problem(set, path, NULL,
                           "profiles.%s.tokenBudget must be an integer of 0 or more (ignored)",
                           name);
    else if (budget)
        p.token_budget = budget->u.number.i;
    p.name = xstrdup(name);
    load_globs(set, path, name, v, "servers", &p.servers, &p.n_servers);
    load_globs(set, path, name, v, "tools", &p.tools, &p.n_tools);
    load_globs(set, path, name, v, "pinned", &p.pinned, &p.n_pinned);
    ps->v[ps->n++] = p;
}

static void load_clients(Profiles *ps, ConfigSet *set, const char *path, yajl_val v)
{
    if (!YAJL_IS_OBJECT(v) || v->u.object.len > PROFILES_MAX) {
        config_set_problem(set, path, NULL,
                           "\"clientProfiles\" must be an object of at most %d entries, "
                           "{\"<clientInfo.name>\": \"<profile>\"}",
                           PROFILES_MAX);
        return;
    }
    ps->client_names = xcalloc(v->u.object.len + 1, sizeof(char *));
    ps->client_profiles = xcalloc(v->u.object.len + 1, sizeof(char *));
    for (size_t i = 0; i < v->u.object.len; i++) {
        const char *client = v->u.object.keys[i];
        yajl_val e = v->u.object.values[i];
        if (!YAJL_IS_STRING(e) || !profiles_find(ps, e->u.string)) {
            config_set_problem(set, path, NULL,
                               "clientProfiles.%s must name a profile of \"profiles\" (ignored)",
                               client);
            continue;
        }
        ps->client_names[ps->n_clients] = xstrdup(client);
        ps->client_profiles[ps->n_clients++] = xstrdup(e->u.string);
    }
}

void profiles_load(Profiles *ps, const char *path, ConfigSet *problems)
{
    _cleanup_(config_set_deinit) ConfigSet scratch = {0};
    _cleanup_json_ yajl_val root = NULL;
    yajl_val profs, budget;

    profiles_deinit(ps);
    /* The file's own problems (unreadable, not JSON) are settings_load's to report. */
    if (config_read_json(&scratch, path, CONFIG_LEVEL_USER, &root) < 0 || !YAJL_IS_OBJECT(root))
        return;
    budget = json_get(root, "toolTokenBudget");
    if (budget &&
        (!YAJL_IS_INTEGER(budget) || budget->u.number.i < 0 || budget->u.number.i > INT32_MAX))
        config_set_problem(problems, path, NULL,
                           "\"toolTokenBudget\" must be an integer of 0 or more (the default, "
                           "%d, used)",
                           PROFILES_DEFAULT_TOKEN_BUDGET);
    else if (budget)
        ps->token_budget = budget->u.number.i;
    profs = json_get(root, "profiles");
    if (profs && (!YAJL_IS_OBJECT(profs) || profs->u.object.len > PROFILES_MAX)) {
        config_set_problem(problems, path, NULL,
                           "\"profiles\" must be an object of at most %d profiles (ignored)",
                           PROFILES_MAX);
        profs = NULL;
    }
    ps->v = xcalloc(profs ? profs->u.object.len + 1 : 1, sizeof(*ps->v));
    for (size_t i = 0; profs && i < profs->u.object.len; i++)
        load_profile(ps, problems, path, profs->u.object.keys[i], profs->u.object.values[i]);
    if (json_get(root, "clientProfiles"))
        load_clients(ps, problems, path, json_get(root, "clientProfiles"));
}

const Profile *profiles_find(const Profiles *ps, const char *name)
{
    for (size_t i = 0; ps && name && i < ps->n; i++)
        if (streq(ps->v[i].name, name))
            return &ps->v[i];
    return NULL;
}

const char *profiles_for_client(const Profiles *ps, const char *client_name)
{
    for (size_t i = 0; ps && client_name && i < ps->n_clients; i++)
        if (streq(ps->client_names[i], client_name))
            return ps->client_profiles[i];
    return NULL;
}

char *profiles_project_choice(const char *root)
{
    _cleanup_(config_set_deinit) ConfigSet scratch = {0};
    _cleanup_free_ char *path = root ? paths_join(root, ".mcpd/mcpd.json") : NULL;
    _cleanup_json_ yajl_val v = NULL;
    const char *name;

    if (!path || config_read_json(&scratch, path, CONFIG_LEVEL_PROJECT, &v) < 0)
        return NULL;
    name = json_get_string(v, "profile");
    return name && *name ? xstrdup(name) : NULL;
}

static bool any_match(char *const *globs, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (fnmatch(globs[i], s, 0) == 0)
            return true;
    return false;
}

bool profile_pinned(const Profile *p, const char *server, const char *tool)
{
    _cleanup_free_ char *label = NULL;

    if (!p->n_pinned)
        return false;
    label = xasprintf("%s/%s", server, tool);
    return any_match(p->pinned, p->n_pinned, label);
}

bool profile_allows(const Profile *p, const char *server, const char *tool)
{
    _cleanup_free_ char *label = NULL;

    if (profile_pinned(p, server, tool))
        return true;
    if (p->n_servers && !any_match(p->servers, p->n_servers, server))
        return false;
    if (!p->n_tools)
        return true;
    label = xasprintf("%s/%s", server, tool);
    return any_match(p->tools, p->n_tools, label);
}

int64_t profile_token_budget(const Profiles *ps, const Profile *p)
{
    return p && p->token_budget >= 0 ? p->token_budget : ps->token_budget;
}
