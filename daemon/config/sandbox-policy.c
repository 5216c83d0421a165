// SPDX-License-Identifier: MIT
// sandbox-policy: a server entry's "sandbox" value (true, a profile's name, an object) and the
// named profiles (built in, and mcpd.json's "sandboxProfiles"), read into one policy.

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/config/sandbox-policy.h"

/*
 * Paths in one list of a policy, its base profiles' included. Real policies name a handful;
 * each is a mount of the server's sandbox (bwrap arguments), so a file may not make one start
 * build thousands of them.
 */
#define SANDBOX_MAX_PATHS 64
/*
 * Profiles in a chain of bases (a user's profile on a user's profile ...). Two or three is what
 * anyone writes; the bound ends a cycle ("a" on "b" on "a") with a message instead of a loop.
 */
#define SANDBOX_MAX_DEPTH 8
/* mcpd.json's profiles: a user names a few; the bound keeps a huge file from costing more. */
#define SANDBOX_MAX_PROFILES 100

/* The built-in profiles (docs/sandbox.md describes each). */
static const struct {
    const char *name;
    bool network, project_write;
} builtins[] = {
    {"read-only", false, false},
    {"project-write", false, true},
    {"network", true, false},
    {"project-write-network", true, true},
};

static const char *const builtin_names[] = {"read-only", "project-write", "network",
                                            "project-write-network", NULL};

static const char *const list_fields[] = {"allowWrite", "denyRead", "denyWrite"};

/*
 * Every set of profiles handed out, kept until sandbox_profiles_free_all: a Settings is copied
 * by value (the manager's, a discovery on a thread), so a reload cannot know when the last copy
 * of the old pointer is gone. A reload whose profiles did not change gets the same set again,
 * so only an edit of "sandboxProfiles" adds one.
 */
static yajl_val *generations;
static size_t n_generations;

const char *const *sandbox_builtin_profiles(void)
{
    return builtin_names;
}

/* A path as a policy keeps it: absolute, "~" and "~/..." made absolute; NULL when neither. */
static char *policy_path(const char *p)
{
    if (p[0] == '/')
        return xstrdup(p);
    if (streq(p, "~") || startswith(p, "~/")) {
        _cleanup_free_ char *home = paths_home();
        return p[1] ? paths_join(home, p + 2) : xstrdup(home);
    }
    return NULL;
}

/* Append the paths of field in obj to the policy's list of that name, checked and bounded. */
static int add_paths(yajl_val policy, yajl_val obj, const char *field, const char *where,
                     StrBuf *err)
{
    yajl_val v = json_get(obj, field), list = json_get_array(policy, field);

    if (!v)
        return 0;
    if (!YAJL_IS_ARRAY(v)) {
        strbuf_printf(err, "%s\"%s\" must be an array of paths, not %s", where, field,
                      json_type_name(v));
        return -EINVAL;
    }
    for (size_t i = 0; i < v->u.array.len; i++) {
        yajl_val e = v->u.array.values[i];
        _cleanup_free_ char *p = YAJL_IS_STRING(e) ? policy_path(e->u.string) : NULL;
        if (!p || strlen(p) >= PATH_MAX) {
            strbuf_printf(err, "%s\"%s[%zu]\" must be an absolute path or one starting with \"~/\"",
                          where, field, i);
            return -EINVAL;
        }
        if (!list) {
            list = json_array_new();
            json_object_set(policy, field, list);
        }
        if (json_array_len(list) >= SANDBOX_MAX_PATHS) {
            strbuf_printf(err, "%s\"%s\" holds more than %d paths (mounts) with its profile's",
                          where, field, SANDBOX_MAX_PATHS);
            return -EINVAL;
        }
        json_array_push(list, json_string_new(p));
    }
    return 0;
}

static yajl_val policy_new(const char *profile, bool network, bool project_write)
{
    yajl_val p = json_object_new();

    json_object_set(p, "profile", json_string_new(profile));
    json_object_set(p, "network", json_bool_new(network));
    json_object_set(p, "projectWrite", json_bool_new(project_write));
    return p;
}

static int from_object(yajl_val *outp, yajl_val obj, yajl_val profiles, unsigned depth,
                       const char *where, StrBuf *err, StrBuf *warn);

/* The policy a profile's name gives. */
static int from_name(yajl_val *outp, const char *name, yajl_val profiles, unsigned depth,
                     const char *where, StrBuf *err, StrBuf *warn)
{
    yajl_val user = json_get_object(profiles, name);

    for (size_t i = 0; i < N_ELEMENTS(builtins); i++)
        if (streq(builtins[i].name, name)) {
            *outp = policy_new(name, builtins[i].network, builtins[i].project_write);
            return 0;
        }
    if (!user) {
        strbuf_printf(err,
                      "%sno sandbox profile \"%s\" (built in: read-only, project-write, network, "
                      "project-write-network; others are defined in mcpd.json's "
                      "\"sandboxProfiles\")",
                      where, name);
        return -EINVAL;
    }
    if (depth >= SANDBOX_MAX_DEPTH) {
        strbuf_printf(err, "%ssandbox profile \"%s\" is based on itself (or %d deep)", where, name,
                      SANDBOX_MAX_DEPTH);
        return -EINVAL;
    }
    int r = from_object(outp, user, profiles, depth + 1, where, err, warn);
    if (r == 0)
        json_object_set(*outp, "profile", json_string_new(name));
    return r;
}

static int take_flag(yajl_val policy, yajl_val obj, const char *field, const char *where,
                     StrBuf *err)
{
    yajl_val v = json_get(obj, field);

    if (!v)
        return 0;
    if (!YAJL_IS_TRUE(v) && !YAJL_IS_FALSE(v)) {
        strbuf_printf(err, "%s\"%s\" must be true or false", where, field);
        return -EINVAL;
    }
    json_object_set(policy, field, json_bool_new(YAJL_IS_TRUE(v)));
    return 0;
}

static int from_object(yajl_val *outp, yajl_val obj, yajl_val profiles, unsigned depth,
                       const char *where, StrBuf *err, StrBuf *warn)
{
    yajl_val base = json_get(obj, "profile");
    _cleanup_json_ yajl_val p = NULL;
    int r;

    if (base && !YAJL_IS_STRING(base)) {
        strbuf_printf(err, "%s\"profile\" must be a profile's name", where);
        return -EINVAL;
    }
    r = from_name(&p, base ? base->u.string : SANDBOX_DEFAULT_PROFILE, profiles, depth, where, err,
                  warn);
    if (r < 0)
        return r;
    if ((r = take_flag(p, obj, "network", where, err)) < 0 ||
        (r = take_flag(p, obj, "projectWrite", where, err)) < 0)
        return r;
    for (size_t i = 0; i < N_ELEMENTS(list_fields); i++)
        if ((r = add_paths(p, obj, list_fields[i], where, err)) < 0)
            return r;
    for (size_t i = 0; i < obj->u.object.len && warn; i++) {
        const char *k = obj->u.object.keys[i];
        bool known = streq(k, "profile") || streq(k, "network") || streq(k, "projectWrite");
        for (size_t j = 0; j < N_ELEMENTS(list_fields) && !known; j++)
            known = streq(k, list_fields[j]);
        if (!known)
            strbuf_printf(warn,
                          "%sunknown field \"%s\" ignored (known: profile, network, "
                          "projectWrite, allowWrite, denyRead, denyWrite)\n",
                          where, k);
    }
    *outp = p;
    p = NULL;
    return 0;
}

int sandbox_policy_from_json(yajl_val *outp, yajl_val v, yajl_val profiles, const char *server,
                             StrBuf *err, StrBuf *warn)
{
    _cleanup_free_ char *where = xasprintf("Server \"%s\": \"sandbox\": ", server);

    *outp = NULL;
    if (!v || YAJL_IS_NULL(v) || YAJL_IS_FALSE(v))
        return 0;
    if (YAJL_IS_TRUE(v))
        return from_name(outp, SANDBOX_DEFAULT_PROFILE, profiles, 0, where, err, warn);
    if (YAJL_IS_STRING(v))
        return from_name(outp, v->u.string, profiles, 0, where, err, warn);
    if (YAJL_IS_OBJECT(v))
        return from_object(outp, v, profiles, 0, where, err, warn);
    strbuf_printf(err, "%smust be true, false, a profile's name or an object, not %s", where,
                  json_type_name(v));
    return -EINVAL;
}

void sandbox_profiles_load(yajl_val *outp, yajl_val v, StrBuf *problems)
{
    _cleanup_json_ yajl_val kept = NULL;

    *outp = NULL;
    if (!v)
        return;
    if (!YAJL_IS_OBJECT(v)) {
        strbuf_puts(problems, "\"sandboxProfiles\" must be an object of profiles (ignored)\n");
        return;
    }
    if (v->u.object.len > SANDBOX_MAX_PROFILES) {
        strbuf_printf(problems, "\"sandboxProfiles\" holds more than %d profiles (ignored)\n",
                      SANDBOX_MAX_PROFILES);
        return;
    }
    /* Checked against all of them, so one may be based on another whatever their order. */
    for (size_t i = 0; i < v->u.object.len; i++) {
        const char *name = v->u.object.keys[i];
        _cleanup_free_ char *where = xasprintf("\"sandboxProfiles.%s\": ", name);
        _cleanup_json_ yajl_val p = NULL;
        StrBuf err = STRBUF_INIT;
        bool builtin = false;

        for (size_t j = 0; j < N_ELEMENTS(builtins); j++)
            builtin = builtin || streq(builtins[j].name, name);
        if (builtin)
            strbuf_printf(problems, "%sa built-in profile's name cannot be redefined (ignored)\n",
                          where);
        else if (!YAJL_IS_OBJECT(v->u.object.values[i]))
            strbuf_printf(problems, "%smust be an object (ignored)\n", where);
        else if (from_object(&p, v->u.object.values[i], v, 1, where, &err, NULL) < 0)
            strbuf_printf(problems, "%s (profile ignored)\n", strbuf_str(&err));
        else {
            if (!kept)
                kept = json_object_new();
            json_object_set(kept, name, json_copy(v->u.object.values[i]));
        }
        strbuf_deinit(&err);
    }
    if (!kept)
        return;
    if (n_generations && json_equal(generations[n_generations - 1], kept)) {
        *outp = generations[n_generations - 1];
        return;
    }
    generations = xrealloc(generations, (n_generations + 1) * sizeof(*generations));
    generations[n_generations++] = *outp = kept;
    kept = NULL;
}

void sandbox_profiles_free_all(void)
{
    for (size_t i = 0; i < n_generations; i++)
        json_free(generations[i]);
    free(generations);
    generations = NULL;
    n_generations = 0;
}
