// SPDX-License-Identifier: MIT
// profiles: named tool sets from mcpd.json (servers, tool globs, pinned tools, a mode), and which
// one an agent gets by its host's clientInfo.name or its project's own choice.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/config/configset.h"

typedef enum ProfileMode {
    PROFILE_MODE_ALL,    /* every tool the profile allows */
    PROFILE_MODE_SEARCH, /* mcpd's search tools, the pinned tools and what searches found */
    PROFILE_MODE_AUTO,   /* search when the allowed tools cost more than the token budget */
} ProfileMode;

typedef struct Profile {
    char *name;
    char **servers; /* globs over server names; none: every server */
    size_t n_servers;
    char **tools; /* globs over "server/tool"; none: every tool of those servers */
    size_t n_tools;
    char **pinned; /* globs over "server/tool": always shown, in every mode */
    size_t n_pinned;
    ProfileMode mode;
    int64_t token_budget; /* auto: tokens past which search is chosen; -1: toolTokenBudget */
} Profile;

typedef struct Profiles {
    Profile *v;
    size_t n;
    char **client_names;    /* clientProfiles: a host's clientInfo.name ... */
    char **client_profiles; /* ... and the profile its agents get */
    size_t n_clients;
    int64_t token_budget; /* toolTokenBudget */
} Profiles;

/*
 * The token budget of auto mode when mcpd.json names none: 10,000 tokens is 5 % of a
 * 200,000-token context window, about 40 tool definitions of the corpus's average (240 tokens,
 * docs/search.md). Past it a model pays more for tool definitions on every turn than a search
 * and its few results cost (some 200 tokens for mcpd's two tools, 1,200 for five found tools).
 */
#define PROFILES_DEFAULT_TOKEN_BUDGET 10000
/*
 * Bounds on what mcpd.json may hold: a person writes a few profiles of a few entries each; these
 * are ten times that, and keep a profile's check of each tool (every glob tried) cheap.
 */
#define PROFILES_MAX        64  /* profiles, and clientProfiles entries */
#define PROFILE_ENTRIES_MAX 256 /* entries of one profile's servers, tools or pinned */
#define PROFILE_NAME_MAX    64  /* bytes of a profile's name */
#define PROFILE_GLOB_MAX    256 /* bytes of one glob */

/** Whether name may name a profile: letters, digits, '-', '_', '.', at most PROFILE_NAME_MAX. */
bool profile_name_ok(const char *name);
/** Whether key is one of mcpd.json's settings that profiles_load() reads. */
bool profiles_setting_key(const char *key);
/** Release the profiles; safe on a zeroed value (then zeroed again). */
void profiles_deinit(Profiles *ps);
/**
 * Read "profiles", "clientProfiles" and "toolTokenBudget" of the settings file at path into ps
 * (deinit first); each problem goes to problems, naming the profile and field. A missing file
 * leaves no profiles and the default budget.
 */
void profiles_load(Profiles *ps, const char *path, ConfigSet *problems);
/** The profile called name, or NULL. */
const Profile *profiles_find(const Profiles *ps, const char *name);
/** The profile name clientProfiles gives a host called client_name, or NULL. */
const char *profiles_for_client(const Profiles *ps, const char *client_name);
/**
 * The profile a project chooses for its agents: "profile" in <root>/.mcpd/mcpd.json (to free),
 * or NULL when it names none. A project only chooses among the user's profiles.
 */
char *profiles_project_choice(const char *root);
/** Whether p lets its agents see server's tool (its servers and tools, or pinned). */
bool profile_allows(const Profile *p, const char *server, const char *tool);
/** Whether p pins server's tool. */
bool profile_pinned(const Profile *p, const char *server, const char *tool);
/** The budget auto mode compares with for p. */
int64_t profile_token_budget(const Profiles *ps, const Profile *p);
/** "all", "search" or "auto". */
const char *profile_mode_name(ProfileMode m);
