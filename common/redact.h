// SPDX-License-Identifier: MIT
// redact: text meant for people with the secrets of the URLs in it shown as "***".
#pragma once

/*
 * A copy of s with the secrets of every URL in it shown as "***": the password of its
 * userinfo ("scheme://user:***@host") and the value of any query parameter whose name says it
 * is one ("?api_key=***", "&exaApiKey=***": names holding key, token, secret, password, auth
 * or sig). For showing config values that may carry URLs (a url, an argument of a proxy
 * command); everything else is kept as written. Newly allocated.
 */
char *url_redact_secrets(const char *s);
