// SPDX-License-Identifier: MIT
// sandbox-policy: a server entry's "sandbox" value (true, a profile's name, an object) and the
// named profiles (built in, and mcpd.json's "sandboxProfiles"), read into one policy.
#pragma once

#include <stdbool.h>

#include <yajl/yajl_tree.h>

struct StrBuf;

/*
 * A policy is a JSON object, so copying, hashing and showing it need nothing new:
 *   {"profile": NAME, "network": bool, "projectWrite": bool,
 *    "allowWrite": [abs path...], "denyRead": [...], "denyWrite": [...]}
 * the lists present only when not empty, every path absolute ("~" expanded). What every policy
 * denies besides (the secrets' places) is the spawn's business: daemon/upstream/sandbox.c.
 */

/* The profile a bare "sandbox": true names. */
#define SANDBOX_DEFAULT_PROFILE "read-only"

/**
 * Read a "sandbox" value: false or null give *outp NULL (unconfined); true, a profile's name or
 * an object give a policy (to free). profiles: mcpd.json's "sandboxProfiles" as
 * sandbox_profiles_load kept them, or NULL. An unknown profile or a malformed value is -EINVAL
 * with the reason appended to err (the entry is refused: a server that asked for a sandbox
 * never runs without one); fields mcpd does not know are a line each in warn.
 */
int sandbox_policy_from_json(yajl_val *outp, yajl_val v, yajl_val profiles, const char *server,
                             struct StrBuf *err, struct StrBuf *warn);
/**
 * Check mcpd.json's "sandboxProfiles" (an object of profile objects): every good one goes into
 * *outp (an object owned by this module, kept until sandbox_profiles_free_all; NULL when there
 * are none), every bad one is a line in problems. Not thread-safe: settings load on the loop.
 */
void sandbox_profiles_load(yajl_val *outp, yajl_val v, struct StrBuf *problems);
/** Release every set of profiles sandbox_profiles_load handed out (at exit). */
void sandbox_profiles_free_all(void);
/** The built-in profiles' names, NULL-terminated (docs and tests). */
const char *const *sandbox_builtin_profiles(void);
