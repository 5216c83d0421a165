// SPDX-License-Identifier: MIT
// server-identity: when two server entries are the same server (server_config_hash), whatever
// the form they are written in.
#pragma once

#include <stdbool.h>

#include "daemon/config/configset.h"

/**
 * (Re)compute c->hash from its fields (after ${VAR} expansion, an envFile, an absolute cwd): the
 * same for two entries that start the same process or reach the same server the same way.
 */
void server_config_hash(ServerConfig *c, const Settings *settings);
/** Whether two entries are the same server (name and unresolved config hash). */
bool server_config_same(const ServerConfig *a, const ServerConfig *b);
