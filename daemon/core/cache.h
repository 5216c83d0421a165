// SPDX-License-Identifier: MIT
// cache: the on-disk tool cache, one durable JSON file per server and config hash.
#pragma once

#include <stdint.h>

#include <yajl/yajl_tree.h>

#include "daemon/config/config.h"
#include "daemon/upstream/era.h"

#define CACHE_VERSION 1

/* Outcome of cache_load() beyond 0 (a hit). */
enum {
    CACHE_E_MISS = 1, /* no entry: nothing to say */
    CACHE_E_STALE,    /* an entry that may not be used (corrupt, expired, mismatched): *whyp */
    CACHE_E_UNSAFE,   /* the dir or file is not private (owner, mode): *whyp names it and the fix */
};

/** $XDG_CACHE_HOME/mcpd/tools (newly allocated). */
char *cache_dir(void);
/**
 * Create dir 0700 if missing and check it is the user's own and not writable by group or
 * others: 0, or CACHE_E_UNSAFE with *whyp naming the path and the fix.
 */
int cache_check_dir(const char *dir, char **whyp);
/** The file for a server: <dir>/<name>-<confighash>.json (newly allocated). */
char *cache_path(const char *dir, const ServerConfig *cfg);
/**
 * Read the entry for cfg. On a hit return 0 with *toolsp (owned by the caller) and *saved_atp
 * (wall ms). A corrupt, expired or mismatched entry, or a file that is not a regular file of
 * bounded size, is CACHE_E_STALE; a dir or file that is not private is CACHE_E_UNSAFE (*whyp set).
 */
int cache_load(const char *dir, const ServerConfig *cfg, int64_t now_wall_ms, yajl_val *toolsp,
               int64_t *saved_atp, char **whyp);
/**
 * cache_load() that also gives the era the server spoke when the entry was written (*erap):
 * UPSTREAM_ERA_UNKNOWN for an entry written before mcpd stored it, or for a value mcpd did not
 * write (logged at debug level, never trusted: the server is probed as if nothing were known).
 */
int cache_load_entry(const char *dir, const ServerConfig *cfg, int64_t now_wall_ms,
                     yajl_val *toolsp, int64_t *saved_atp, UpstreamEra *erap, char **whyp);
/**
 * Write the entry durably (temp file, fsync, rename, fsync of the directory), mode 0600.
 * Only tool definitions and serverInfo are stored: never resolved secrets. A dir that is not
 * private is -EPERM with *whyp naming it and the fix.
 */
int cache_store(const char *dir, const ServerConfig *cfg, yajl_val server_info, yajl_val tools,
                int64_t now_wall_ms, int64_t ttl_ms, char **whyp);
/**
 * cache_store() with the tools array already as JSON text (tools_json[0..n)), and the era the
 * server spoke (UPSTREAM_ERA_UNKNOWN stores none).
 */
int cache_store_json(const char *dir, const ServerConfig *cfg, yajl_val server_info,
                     const char *tools_json, size_t n, UpstreamEra era, int64_t now_wall_ms,
                     int64_t ttl_ms, char **whyp);
/**
 * Where surface entries live: the "surface" sibling of the tool cache dir (newly allocated).
 * Separate files in a separate dir, so a connect's tool write never waits for the lists that
 * come after it, and the tool dir holds exactly one entry per server.
 */
char *cache_surface_dir(const char *tools_dir);
/**
 * The same for a server's surface (capabilities, instructions, prompts, resources, resource
 * templates: an object), in dir (cache_surface_dir()).
 */
int cache_store_surface(const char *dir, const ServerConfig *cfg, yajl_val surface,
                        int64_t now_wall_ms, int64_t ttl_ms, char **whyp);
/** Read a server's surface entry: 0 with *surfacep (owned), or as cache_load(). */
int cache_load_surface(const char *dir, const ServerConfig *cfg, int64_t now_wall_ms,
                       yajl_val *surfacep, char **whyp);
/**
 * Remove the entries in dir (a tool or surface cache dir) not rewritten for longer than
 * max_age_ms: regular *.json files of the user's own whose mtime is older. An entry expires
 * cacheTtlDays after it was written, so with max_age_ms above the TTL only dead entries go (an
 * old config's, a removed server's). Links, other files and others' files are left alone. Gives
 * how many it removed; a missing dir is 0.
 */
int cache_prune(const char *dir, int64_t now_wall_ms, int64_t max_age_ms);
