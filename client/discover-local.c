// SPDX-License-Identifier: MIT
// discover-local: mcpctl config without a daemon: run discovery in this process.

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#include "client/discover-local.h"
#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"
#include "daemon/config/config.h"
#include "daemon/config/configset-json.h"
#include "daemon/config/sandbox-policy.h"

yajl_val discover_local(const char *root, char **whyp)
{
    _cleanup_free_ char *real = NULL, *conf = paths_config_home(), *settings_path = NULL;
    ConfigSet settings_problems = {.quiet = true}, set = {0};
    DiscoverOptions opt = {NULL, NULL};
    Settings settings;
    yajl_val r, sp, problems;

    if (root && !(real = realpath(root, NULL))) {
        *whyp = xasprintf("cwd \"%s\": %s", root, strerror(errno));
        return NULL;
    }
    /* The daemon's own default: $XDG_CONFIG_HOME/mcpd/mcpd.json over built-in defaults. */
    settings_path = paths_join(conf, "mcpd/mcpd.json");
    settings_init(&settings);
    settings_load(&settings, settings_path, &settings_problems);
    opt.root = real;
    config_discover_quiet(&set, &opt, &settings);
    r = config_describe(&set);
    config_set_deinit(&set);
    json_object_set(r, "root", real ? json_string_new(real) : json_null_new());
    json_object_set(r, "settingsFile", json_string_new(settings_path));
    json_object_set(r, "daemon", json_bool_new(false));
    sp = config_problems_json(&settings_problems);
    problems = json_get_array(r, "problems");
    for (size_t i = 0; problems && i < json_array_len(sp); i++) {
        json_array_push(problems, sp->u.array.values[i]);
        sp->u.array.values[i] = NULL;
    }
    json_free(sp);
    config_set_deinit(&settings_problems);
    sandbox_profiles_free_all();
    return r;
}
