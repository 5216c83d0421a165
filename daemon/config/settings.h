// SPDX-License-Identifier: MIT
// settings: the daemon's own settings (mcpd.json's top-level keys): defaults, and the file read
// over them with a problem named for each key that is wrong.
#pragma once

#include "daemon/config/configset.h"

/** Fill settings with defaults. */
void settings_init(Settings *s);
/** Load $XDG_CONFIG_HOME/mcpd/mcpd.json (or path) over the defaults; problems go to out. */
int settings_load(Settings *s, const char *path, ConfigSet *problems);
