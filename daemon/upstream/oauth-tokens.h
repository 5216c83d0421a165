// SPDX-License-Identifier: MIT
// oauth-tokens: a token endpoint's answer (RFC 6749 5.1) checked and taken into the store.
#pragma once

#include "daemon/upstream/oauth-fetch.h"
#include "daemon/upstream/oauth-store.h"

/**
 * Take a token endpoint answer into the store, on top of base_tok (the sign-in's client and
 * endpoints, or the entry refreshed): a rotated refresh token replaces the old one.
 */
int oauth_tokens_take(Fetch *x, const OAuthToken *base_tok, char **whyp);
