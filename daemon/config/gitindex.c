// SPDX-License-Identifier: MIT
// gitindex: whether a repository tracks a file, read from git's index without running git (which
// can run a repository's code: core.fsmonitor, hooks).
//
// Format: git's Documentation/gitformat-index.txt: "DIRC", version, entry count; each entry
// 40 bytes of stat data, the object name (20 or 32 bytes), 16 bits of flags (a second 16 in
// version 3 and later when the extended bit is set), then the path: NUL-terminated and padded
// to a multiple of 8 in versions 2 and 3; in version 4 a varint of bytes to drop from the end of
// the previous path, then the rest of this one, NUL-terminated.

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/paths.h"
#include "common/util.h"
#include "daemon/config/gitindex.h"

/* A path in the index is at most this long (git's own PATH_MAX-bound names). */
#define GITINDEX_MAX_PATH 4096

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The repository's git directory: <root>/.git, or where a .git file points (to free). */
static char *git_dir(const char *root)
{
    _cleanup_free_ char *dot = paths_join(root, ".git"), *text = NULL, *why = NULL;
    struct stat st;
    size_t len = 0;

    if (lstat(dot, &st) < 0)
        return NULL;
    if (S_ISDIR(st.st_mode))
        return xstrdup(dot);
    if (paths_read_regular(dot, false, 4096, &st, &text, &len, &why) < 0 ||
        !startswith(text, "gitdir: "))
        return xstrdup(dot); /* unreadable: its index is unreadable too, so "unknown" */
    char *p = text + strlen("gitdir: ");
    p[strcspn(p, "\r\n")] = '\0';
    return p[0] == '/' ? xstrdup(p) : paths_join(root, p);
}

/* Object names are SHA-256 when the repository's config says so (extensions.objectformat). */
static size_t hash_size(const char *gitdir)
{
    _cleanup_free_ char *path = paths_join(gitdir, "config"), *text = NULL, *why = NULL;
    struct stat st;
    size_t len = 0;
    const char *k;

    if (paths_read_regular(path, false, 1024 * 1024, &st, &text, &len, &why) == 0 &&
        (k = strstr(text, "objectformat"))) {
        _cleanup_free_ char *line = xstrndup(k, strcspn(k, "\n"));
        if (strstr(line, "sha256"))
            return 32;
    }
    return 20;
}

/* A version 4 path-prefix varint at *pp (before end); -1 when it runs off the end. */
static int64_t varint(const unsigned char **pp, const unsigned char *end)
{
    const unsigned char *p = *pp;
    uint64_t v;

    if (p >= end)
        return -1;
    v = *p & 127;
    while (*p++ & 128) {
        if (p >= end || v > (UINT64_MAX >> 8))
            return -1;
        v = ((v + 1) << 7) | (*p & 127);
    }
    *pp = p;
    return v > GITINDEX_MAX_PATH ? -1 : (int64_t)v;
}

/* Walk the entries of an index; whether one is rel, or GIT_UNKNOWN for a malformed index. */
static GitTracked find(const unsigned char *data, size_t len, size_t hlen, const char *rel)
{
    const unsigned char *p = data + 12, *end = data + len;
    char name[GITINDEX_MAX_PATH + 1] = "";
    size_t prev = 0;
    uint32_t version, count;

    if (len < 12 || memcmp(data, "DIRC", 4) != 0)
        return GIT_UNKNOWN;
    version = be32(data + 4);
    count = be32(data + 8);
    if (version < 2 || version > 4)
        return GIT_UNKNOWN;
    for (uint32_t i = 0; i < count; i++) {
        const unsigned char *start = p;
        size_t fixed = 40 + hlen + 2;
        if ((size_t)(end - p) < fixed)
            return GIT_UNKNOWN;
        unsigned flags = (unsigned)p[fixed - 2] << 8 | p[fixed - 1];
        p += fixed;
        if (version >= 3 && (flags & 0x4000)) {
            if (end - p < 2)
                return GIT_UNKNOWN;
            p += 2;
        }
        if (version == 4) {
            int64_t drop = varint(&p, end);
            if (drop < 0 || (size_t)drop > prev)
                return GIT_UNKNOWN;
            prev -= (size_t)drop;
        } else {
            prev = 0;
        }
        const unsigned char *nul = memchr(p, '\0', (size_t)(end - p));
        if (!nul || prev + (size_t)(nul - p) > GITINDEX_MAX_PATH)
            return GIT_UNKNOWN;
        memcpy(name + prev, p, (size_t)(nul - p));
        prev += (size_t)(nul - p);
        name[prev] = '\0';
        p = nul + 1;
        if (version < 4) /* padded with NULs to a multiple of 8 */
            p = start + (((size_t)(p - start) + 7) & ~(size_t)7);
        if (p > end)
            return GIT_UNKNOWN;
        if (streq(name, rel))
            return GIT_TRACKED;
    }
    return GIT_UNTRACKED;
}

/* The index at gitdir: whether it lists rel. */
static GitTracked index_lists(const char *gitdir, const char *rel)
{
    _cleanup_free_ char *index = paths_join(gitdir, "index"), *text = NULL, *why = NULL;
    struct stat st;
    size_t len = 0;
    int r = paths_read_regular(index, false, GITINDEX_MAX_BYTES, &st, &text, &len, &why);

    if (r == -ENOENT)
        return GIT_UNTRACKED; /* a repository with nothing added yet */
    if (r < 0)
        return GIT_UNKNOWN;
    return find((const unsigned char *)text, len, hash_size(gitdir), rel);
}

GitTracked gitindex_tracks(const char *path)
{
    _cleanup_free_ char *dir = paths_dirname(path);

    /* The nearest directory above the file holding .git is its repository's top. */
    for (;;) {
        _cleanup_free_ char *gitdir = git_dir(dir);
        if (gitdir)
            return index_lists(gitdir, path + strlen(dir) + (streq(dir, "/") ? 0 : 1));
        if (streq(dir, "/") || dir[0] != '/')
            return GIT_UNTRACKED; /* in no repository: nothing came with one */
        char *up = paths_dirname(dir);
        free(dir);
        dir = up;
    }
}
