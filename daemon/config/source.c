// SPDX-License-Identifier: MIT
// source: helpers the config providers share (paths under home, mapping entries).

#include <stdlib.h>

#include "common/agents.h"
#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"
#include "daemon/config/source.h"

char *source_home_path(const char *rel)
{
    _cleanup_free_ char *home = paths_home();

    return paths_join(home, rel);
}

static const AgentInfo *table_agent(const char *id)
{
    const AgentInfo *a = agents_find(id);

    if (!a)
        abort(); /* a provider names an agent the table lacks: a bug, caught by every test */
    return a;
}

char *source_agent_file(const char *id)
{
    return agents_user_file(table_agent(id));
}

char *source_agent_more_file(const char *id, size_t i)
{
    return agents_more_file(table_agent(id), i);
}

yajl_val source_project_entry(yajl_val projects, const char *root)
{
    yajl_val exact = json_get(projects, root);

    if (exact || !YAJL_IS_OBJECT(projects))
        return exact;
    for (size_t i = 0; i < projects->u.object.len; i++) {
        _cleanup_free_ char *real = realpath(projects->u.object.keys[i], NULL);
        if (real && streq(real, root))
            return projects->u.object.values[i];
    }
    return NULL;
}

yajl_val source_copy_without(yajl_val obj, const char *const *drop)
{
    yajl_val out = json_object_new();

    for (size_t i = 0; i < obj->u.object.len; i++) {
        const char *k = obj->u.object.keys[i];
        bool dropped = false;
        for (const char *const *d = drop; *d && !dropped; d++)
            dropped = streq(*d, k);
        if (!dropped) /* keys of a parsed object: unique, no search needed */
            json_object_append(out, k, json_copy(obj->u.object.values[i]));
    }
    return out;
}

void source_load_pair(const ConfigSource *src, const DiscoverOptions *opt, const Settings *settings,
                      ConfigSet *set, const char *user_path, const char *project_rel,
                      const char *key, ConfigMapFn map)
{
    SourceMeta meta = {(char *)src->id, (char *)src->name, NULL, CONFIG_LEVEL_USER,
                       src->expand_off};

    if (user_path)
        config_load_json_servers(set, user_path, key, &meta, settings, map);
    if (project_rel && opt->root) {
        _cleanup_free_ char *project = paths_join(opt->root, project_rel);
        meta.level = CONFIG_LEVEL_PROJECT;
        config_load_json_servers(set, project, key, &meta, settings, map);
    }
}

bool source_names_contain(yajl_val arr, const char *s)
{
    for (size_t i = 0; YAJL_IS_ARRAY(arr) && i < arr->u.array.len; i++)
        if (YAJL_IS_STRING(arr->u.array.values[i]) && streq(arr->u.array.values[i]->u.string, s))
            return true;
    return false;
}

void source_add_selected(ConfigSet *set, yajl_val servers, const char *key, const SourceMeta *src,
                         const Settings *settings, ConfigMapFn map, yajl_val only, yajl_val off,
                         const char *why_only, const char *why_off)
{
    _cleanup_json_ yajl_val kept = NULL;

    if ((!YAJL_IS_ARRAY(only) && !YAJL_IS_ARRAY(off)) || !YAJL_IS_OBJECT(servers)) {
        config_add_entries(set, servers, key, src, settings, map);
        return;
    }
    if (config_too_many_servers(set, src->path, servers->u.object.len))
        return;
    kept = json_object_new();
    for (size_t i = 0; i < servers->u.object.len; i++) {
        const char *name = servers->u.object.keys[i];
        if (source_names_contain(off, name))
            config_set_skip(set, name, src, "%s", why_off);
        else if (YAJL_IS_ARRAY(only) && !source_names_contain(only, name))
            config_set_skip(set, name, src, "%s", why_only);
        else
            json_object_append(kept, name, json_copy(servers->u.object.values[i]));
    }
    config_add_entries(set, kept, key, src, settings, map);
}
