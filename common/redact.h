// SPDX-License-Identifier: MIT
// redact: text meant for people with the secrets of the URLs in it shown as "***".
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <yajl/yajl_tree.h>

/*
 * A copy of s with the secrets of every URL in it shown as "***": the password of its
 * userinfo ("scheme://user:***@host") and the value of any query parameter whose name says it
 * is one ("?api_key=***", "&exaApiKey=***": names holding key, token, secret, password, auth
 * or sig). For showing config values that may carry URLs (a url, an argument of a proxy
 * command); everything else is kept as written. Newly allocated.
 */
char *url_redact_secrets(const char *s);
/** Whether a name (a query parameter's, a JSON member's) says its value is a secret. */
bool redact_name_is_secret(const char *name, size_t n);
/**
 * The same rules over a JSON value, in place: the value of every member whose name says it is a
 * secret becomes "***", and every string has its URLs' secrets masked (url_redact_secrets).
 * Recursion follows the value's depth, which the parser bounds (JSON_MAX_DEPTH).
 */
void redact_json_secrets(yajl_val v);
