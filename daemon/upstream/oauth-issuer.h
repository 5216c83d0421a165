// SPDX-License-Identifier: MIT
// oauth-issuer: what a sign-in takes from a server. The issuer checks (SEP-2468): the
// authorization server metadata must name the issuer it was fetched for (RFC 8414 3.3), and the
// authorization response's "iss" must be that issuer (RFC 9207). Which URLs may receive a
// sign-in's secrets: https, or plain http only to a loopback address (decided on addresses,
// never on names) or to the server's own host. Server text made safe to show. Pure functions,
// so the unit tests reach every case.
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <netinet/in.h>
#include <sys/socket.h>

/*
 * The longest URL a sign-in takes from a server or a config: browsers and common front ends
 * handle 8 KiB request lines, and no metadata endpoint comes near this; longer is a server
 * filling mcpd's messages and logs.
 */
#define OAUTH_URL_MAX 2048

/* Why oauth_url_verdict refused a URL. */
#define OAUTH_URL_BAD_TEXT   1 /* empty, too long, spaces, control or non-ASCII bytes */
#define OAUTH_URL_NOT_HTTP   2
#define OAUTH_URL_DOWNGRADE  3 /* plain http for an https resource */
#define OAUTH_URL_THIRD_HOST 4 /* plain http to an address not on this machine */

/**
 * A copy of server text safe to put in a log line or before a person: control characters (C0,
 * DEL, C1: every escape sequence, ESC[8m hidden text included) become '?', cut after max bytes
 * (never inside a UTF-8 character) with "..." added. Newly allocated; s may be NULL.
 */
char *oauth_text_shown(const char *s, size_t max);
/** Whether url is 1..OAUTH_URL_MAX bytes of printable ASCII without spaces. */
bool oauth_url_text_ok(const char *url);
/** Whether s is a scope list (RFC 6749 3.3: printable ASCII, no '"' or '\\') of sane length. */
bool oauth_scope_text_ok(const char *s);
/** Whether sa is a loopback address: 127.0.0.0/8, ::1, or ::ffff:127.x.y.z. */
bool oauth_sockaddr_is_loopback(const struct sockaddr *sa);
/** The same for an IPv6 address. */
bool oauth_in6_is_loopback(const struct in6_addr *a);
/**
 * 0 when url may be used for a sign-in to resource, else an OAUTH_URL_* reason: https, or plain
 * http to a loopback address literal, to the resource's own host, or to a name, which is then
 * only connected to where it resolves to a loopback address (oauth_url_needs_loopback).
 */
int oauth_url_verdict(const char *resource, const char *url);
/**
 * Whether a fetch of url for resource must connect only to loopback addresses: plain http to
 * a host that is not the resource's own (by name) nor a loopback address literal.
 */
bool oauth_url_needs_loopback(const char *resource, const char *url);

/**
 * Whether the metadata fetched from meta_url for the issuer expected may be used: its "issuer"
 * (got, NULL when absent) must be exactly expected. Return 0, or -EPERM with *whyp set (newly
 * allocated) saying which issuer was found and what to do.
 */
int oauth_check_metadata_issuer(const char *expected, const char *got, const char *meta_url,
                                char **whyp);
/**
 * Whether an authorization response may go on to the token endpoint (RFC 9207 2.4): an "iss"
 * (NULL when absent) must equal issuer by simple string comparison; an absent one is refused
 * when the metadata said the server sends it (advertised). Return 0, or -EPERM with *whyp set.
 */
int oauth_check_response_iss(const char *issuer, const char *iss, bool advertised, char **whyp);
/**
 * Whether a URL a sign-in learned from the server (what: "resource_metadata", "token_endpoint",
 * ...) may be used for resource: it must be http(s), and https when the resource is (a plain
 * http step would let anyone on the path swap the authorization server and read the sign-in);
 * plain http only on this machine (loopback) or on the resource's own host, which the user
 * chose to reach in plain http: never on a third host the server names.
 * Return 0, or -EPERM with *whyp set (newly allocated) naming the URL and what to do.
 */
int oauth_check_url_scheme(const char *resource, const char *what, const char *url, char **whyp);
/**
 * The same checks for a URL the user's config gives (field: "tokenUrl", ...) for server: a
 * config names where secrets go as surely as a server does. Return 0, or -EPERM with *whyp
 * naming the server and field and saying what to fix.
 */
int oauth_check_config_url(const char *server, const char *resource, const char *field,
                           const char *url, char **whyp);
