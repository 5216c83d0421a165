// SPDX-License-Identifier: MIT
// hostline: what a stdio host's stream needs on its way to and from mcpd, line by line (the
// agent's identity in its initialize, the host's short tool names, the servers the host runs
// itself left out, the host's requests not answered yet), kept once for the bridge's relay and
// for a host's pipes handed to mcpd.
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <yajl/yajl_tree.h>

#include "common/strbuf.h"

/* The longest tool name MCP hosts accept (the same cap mcpd applies to its own names). */
#define HOSTLINE_NAME_MAX 64
/* Hex digits of the hash that ends a cut short name: mcpd's own scheme (daemon/core/naming.c). */
#define HOSTLINE_HASH_DIGITS 6
/* A host prefix must leave room for a few characters besides "_" and the hash digits. */
#define HOSTLINE_NAME_MIN_ROOM (HOSTLINE_HASH_DIGITS + 1 + 8)

/*
 * After the host closes stdin, how long replies to requests it sent are still awaited. mcpd
 * answers every request within its call timeout (callTimeout, 60 s by default) or reports it
 * failed; a few seconds more cover a loaded machine. Past that mcpd is not going to answer.
 */
#define HOSTLINE_DRAIN_MS 65000

/* Texts of JSON-RPC ids, each canonical (the host's 1 matches mcpd's 1, "a" matches "a"). */
typedef struct HostIds {
    char **ids;
    size_t n_ids, cap;
} HostIds;

typedef struct HostShortName {
    char *full, *brief;
} HostShortName;

/* Short names for a host's prefix (--host-prefix) and the servers it runs itself. */
typedef struct HostNames {
    size_t room;   /* characters left for a name after the host's prefix; 0: names unchanged */
    yajl_val left; /* servers whose tools the host runs itself (--host claude): not listed */
    HostIds lists; /* ids of the host's tools/list requests not answered yet */
    HostShortName *map;
    size_t n_map, cap;
} HostNames;

typedef struct HostLine {
    /* Members an initialize (or a 2026-07-28 host's requests until it is placed) gains in its
     * _meta where it has none of that name: mcpd/cwd, mcpd/session, mcpd/server, ... */
    yajl_val identity;
    bool attached;   /* the identity has reached mcpd: nothing more to add */
    HostIds pending; /* the host's requests not answered yet */
    HostNames names;
} HostLine;

typedef enum HostLineAction {
    HOSTLINE_PASS,      /* the line goes on as it is */
    HOSTLINE_REWRITTEN, /* what goes on instead was appended to out (whole lines) */
    HOSTLINE_SKIP,      /* nothing goes on (a blank line) */
} HostLineAction;

/** Set up h with identity (an object of _meta members, consumed; NULL: none). */
void hostline_init(HostLine *h, yajl_val identity);
/**
 * Short names for a host that puts prefix before every tool name: 0, or -EINVAL with *whyp (to
 * free) when the prefix leaves too little room for a name.
 */
int hostline_set_prefix(HostLine *h, const char *prefix, char **whyp);
/** Leave the tools of these servers (an array of names, consumed) out of tools/list. */
void hostline_leave_out(HostLine *h, yajl_val servers);
/** Whether lines to the host may be rewritten: they must then reach it whole. */
bool hostline_rewrites_replies(const HostLine *h);
/** One line from the host (without its newline): what goes to mcpd; its id noted if a request. */
HostLineAction hostline_from_host(HostLine *h, StrBuf *out, const char *line, size_t len);
/**
 * One complete line to the host (line[len] is its newline, which may be replaced by a NUL while
 * it is read): an answer settles its id; a tools/list answer that must change is appended to out
 * with its newline, and true returned.
 */
bool hostline_to_host(HostLine *h, StrBuf *out, char *line, size_t len);
/**
 * The start of a line to the host that is not whole yet (what mcpd writes begins with its id):
 * settles the id it answers when that is in the first n bytes. For a reader that sees only
 * the lines' starts; false when it cannot tell (the line must then be given whole).
 */
bool hostline_to_host_start(HostLine *h, const char *p, size_t n);
/** Requests of the host not answered yet. */
size_t hostline_unanswered(const HostLine *h);
/** Release h; safe on a zeroed value. */
void hostline_deinit(HostLine *h);
/** The id (canonical text, to free) of a line that is a request, or NULL. */
char *hostline_request_id(const char *line, size_t len);
