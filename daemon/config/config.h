// SPDX-License-Identifier: MIT
// config: the discovery driver: the providers of config_sources[] in priority order (or one
// explicit file) over a project root, through its trust gate (mcpd.json's keys: settings.c).
#pragma once

#include "daemon/config/collect.h"
#include "daemon/config/configset.h"
/* Discovery is given the settings: whoever runs it loads them, so their header comes along. */
#include "daemon/config/settings.h"

struct Trust;

/**
 * Run discovery: the providers in priority order (or one explicit file). A project root that
 * is not a readable directory is a critical failure: no servers, one problem, -errno.
 */
int config_discover(ConfigSet *out, const DiscoverOptions *opt, const Settings *settings);
/**
 * The same on a thread other than the loop's: the files read are noted in out, for
 * config_set_pass_notes to give the read hook on the loop (discover-async.c).
 */
int config_discover_off_loop(ConfigSet *out, const DiscoverOptions *opt, const Settings *settings);
/** The same without logging the problems (mcpd/discover: a preview, not a load). */
int config_discover_quiet(ConfigSet *out, const DiscoverOptions *opt, const Settings *settings);
/**
 * A quiet discovery through a trust gate the caller holds (trust_init for opt->root), so the
 * caller can read and approve what the gate held back (mcpd/trust).
 */
int config_discover_trust(ConfigSet *out, const DiscoverOptions *opt, const Settings *settings,
                          struct Trust *trust);
