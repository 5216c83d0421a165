// SPDX-License-Identifier: MIT
// configset-json: a discovery's set as the JSON mcpd/discover shows, its secrets masked.
#pragma once

#include <yajl/yajl_tree.h>

#include "daemon/config/configset.h"

/** Problems as a JSON array of {path?, server?, field?, error, severity?: "warning"}. */
yajl_val config_problems_json(const ConfigSet *set);
/**
 * A set as JSON for mcpd/discover: {servers: [{name, provider, providerName, path, level,
 * transport, enabled, config}], skipped: [{name, ..., reason}], problems, exaApiKeysFound}.
 * config is the entry as written with env and headers values shown as "***".
 */
yajl_val config_describe(const ConfigSet *set);
