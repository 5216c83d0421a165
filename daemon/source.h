// SPDX-License-Identifier: MIT
// source: the config provider interface and the provider table, in priority order.
#pragma once

#include <yajl/yajl_tree.h>

#include "daemon/config.h"

typedef struct ConfigSource ConfigSource;

/* One provider: collect its servers into set (first wins; invalid entries reported). */
struct ConfigSource {
    const char *id;
    const char *name;
    void (*collect)(const ConfigSource *src, const DiscoverOptions *opt, const Settings *settings,
                    ConfigSet *set);
};

/** The providers, highest priority first, ending with a zeroed entry. */
extern const ConfigSource config_sources[];

/** Read and parse a JSON file; -ENOENT quietly when missing, other failures recorded in set. */
int config_read_json(ConfigSet *set, const char *path, yajl_val *outp);
/** Add the entries of one "mcpServers"-shaped object from a source. */
void config_add_entries(ConfigSet *set, yajl_val servers, const SourceMeta *src,
                        const Settings *settings);

/* Provider entry points (one source-*.c each). */
void source_native_collect(const ConfigSource *src, const DiscoverOptions *opt,
                           const Settings *settings, ConfigSet *set);
