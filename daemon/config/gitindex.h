// SPDX-License-Identifier: MIT
// gitindex: whether a repository tracks a file, read from git's index without running git (which
// can run a repository's code: core.fsmonitor, hooks).
#pragma once

/*
 * The largest index read: a repository of a few hundred thousand files has an index of tens of
 * MiB; beyond this the answer is "cannot tell" rather than a long read on the loop.
 */
#define GITINDEX_MAX_BYTES (32u * 1024u * 1024u)

typedef enum GitTracked {
    GIT_UNTRACKED, /* no repository at root, or its index does not list the file */
    GIT_TRACKED,   /* the index lists it: it came with the repository (or was added to it) */
    GIT_UNKNOWN,   /* a repository whose index could not be read or understood */
} GitTracked;

/**
 * Whether the git repository path (absolute) lies in tracks it: the nearest directory above it
 * holding .git (a directory, or a file "gitdir: PATH" as in a worktree) is the repository's top.
 * Index versions 2, 3 and 4, SHA-1 or SHA-256 object names.
 */
GitTracked gitindex_tracks(const char *path);
