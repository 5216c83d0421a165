// SPDX-License-Identifier: MIT
// trust-show: the text a person approves for a held-back entry: everything that decides what runs
// or where secrets go, as written, and which secrets it would send where.
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "daemon/config/configset.h"

/*
 * An envFile held in a gated entry is shown whole for approval; one larger than this is no .env
 * a person reads before saying yes (real ones are a few dozen lines), so it approves nothing.
 */
#define TRUST_MAX_ENV_FILE_BYTES (64u * 1024u)

/**
 * The entry e as a person must see it before approving it (newly allocated): the command line
 * or URL, then env (names and values as written), envFile (its path as written and as read,
 * and what it sets), cwd, headers, auth and oauth, each as written, never expanded; a URL's
 * password masked. Values of the user's own files (not the repository's) are shown as "***"
 * unless they name a variable. Then "sends ..." lists every variable the agent would fill in
 * and the stored credential, with the field and where it goes (the server process, or the
 * URL's host, or the token URL). root: the project (what lies inside it is shown whole).
 */
char *trust_show_entry(const ConfigGateEntry *e, const char *root);
