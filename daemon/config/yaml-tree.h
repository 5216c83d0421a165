// SPDX-License-Identifier: MIT
// yaml-tree: a YAML document (through libyaml) as a JSON tree, for agents that write YAML.
#pragma once

#include <stddef.h>

#include <yajl/yajl_tree.h>

/**
 * The first document of len bytes of YAML as a JSON tree: mappings become objects (a
 * duplicate key keeps its last value), sequences arrays; a plain scalar that is null, true,
 * false or a JSON number becomes that, anything else (and every quoted scalar) a string.
 * An empty document is null. NULL on failure with *whyp (to free): "line L, column C: what".
 */
yajl_val yaml_tree_parse(const char *text, size_t len, char **whyp);
