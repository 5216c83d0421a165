// SPDX-License-Identifier: MIT
// credentials: the store of auth.credentialId credentials: the Secret Service when the session
// has one (the file's entries moved in once), else $XDG_CONFIG_HOME/mcpd/credentials.json.
#pragma once

/* The xdg:schema of a credential's item (secret-tool and seahorse show it). */
#define CREDENTIALS_KEYRING_SCHEMA "io.github.mcpd.Credential"

/**
 * The accessToken of credential id into *tokenp (to free). With a usable Secret Service, the
 * entries of the file at path are first moved into it (each written there, then the file
 * removed), and the credential is read from its item; without one, from the file, which must
 * be owned by the user and not readable by group or others. Return 0 or -errno with *whyp set
 * (to free), naming where the credential was looked for and what to do.
 */
int credentials_lookup(const char *path, const char *id, char **tokenp, char **whyp);
