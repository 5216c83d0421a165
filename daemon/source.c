// SPDX-License-Identifier: MIT
// source: helpers the config providers share (paths under home, mapping entries).

#include <stdlib.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"
#include "daemon/source.h"

char *source_home_path(const char *rel)
{
    _cleanup_free_ char *home = paths_home();

    return paths_join(home, rel);
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
        if (!dropped)
            json_object_set(out, k, json_copy(obj->u.object.values[i]));
    }
    return out;
}

void source_load_pair(const ConfigSource *src, const DiscoverOptions *opt, const Settings *settings,
                      ConfigSet *set, const char *user_rel, const char *project_rel,
                      const char *key, ConfigMapFn map)
{
    SourceMeta meta = {(char *)src->id, (char *)src->name, NULL, CONFIG_LEVEL_USER};

    if (user_rel) {
        _cleanup_free_ char *user = source_home_path(user_rel);
        config_load_json_servers(set, user, key, &meta, settings, map);
    }
    if (project_rel && opt->root) {
        _cleanup_free_ char *project = paths_join(opt->root, project_rel);
        meta.level = CONFIG_LEVEL_PROJECT;
        config_load_json_servers(set, project, key, &meta, settings, map);
    }
}
