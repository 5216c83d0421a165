// SPDX-License-Identifier: MIT
// test-gitindex: whether a repository tracks a file, from git's own index in each of its
// versions, against what git itself wrote.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/paths.h"
#include "common/util.h"
#include "daemon/config/gitindex.h"
#include "tests/unit/test.h"

static char *tmp;

/* Run a shell command in dir (git with no user or system config of the machine's). */
static int sh(const char *dir, const char *cmd)
{
    _cleanup_free_ char *line = xasprintf(
        "cd '%s' && GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null HOME='%s' %s >/dev/null 2>&1",
        dir, tmp, cmd);

    return system(line);
}

/* A repository at dir holding a.txt, sub/.claude/x.json, and an untracked local file. */
static char *make_repo(const char *name, const char *init)
{
    _cleanup_free_ char *dir = paths_join(tmp, name);
    char *real;

    CHECK_INTEQ(paths_mkdir_p(dir, 0700), 0);
    real = realpath(dir, NULL);
    CHECK_INTEQ(sh(real, init), 0);
    _cleanup_free_ char *a = paths_join(real, "a.txt"), *x = paths_join(real, ".claude/x.json");
    _cleanup_free_ char *l = paths_join(real, ".claude/settings.local.json");
    _cleanup_free_ char *cdir = paths_join(real, ".claude");
    CHECK_INTEQ(paths_mkdir_p(cdir, 0700), 0);
    test_write_file(a, "a");
    test_write_file(x, "{}");
    test_write_file(l, "{}");
    CHECK_INTEQ(sh(real, "git add a.txt .claude/x.json"), 0);
    return real;
}

static void expect(const char *repo, const char *rel, GitTracked want)
{
    _cleanup_free_ char *path = paths_join(repo, rel);

    CHECK_MSG(gitindex_tracks(path) == want, "%s: got %d, want %d", path, gitindex_tracks(path),
              want);
}

static void test_versions(void)
{
    static const char *const inits[] = {
        "git init -q",
        "git init -q && git config index.version 3",
        "git init -q && git config index.version 4",
        "git init -q --object-format=sha256",
    };

    for (size_t i = 0; i < N_ELEMENTS(inits); i++) {
        _cleanup_free_ char *name = xasprintf("repo%zu", i);
        _cleanup_free_ char *repo = make_repo(name, inits[i]);
        expect(repo, "a.txt", GIT_TRACKED);
        expect(repo, ".claude/x.json", GIT_TRACKED);
        expect(repo, ".claude/settings.local.json", GIT_UNTRACKED);
        /* Added (a commit is not needed: the index is what a clone leaves). */
        CHECK_INTEQ(sh(repo, "git add -f .claude/settings.local.json"), 0);
        expect(repo, ".claude/settings.local.json", GIT_TRACKED);
        /* Intent-to-add sets the extended flags (version 3 and later). */
        CHECK_INTEQ(sh(repo, "git rm -q --cached .claude/settings.local.json && "
                             "git add -N -f .claude/settings.local.json"),
                    0);
        expect(repo, ".claude/settings.local.json", GIT_TRACKED);
        expect(repo, ".claude/settings.json", GIT_UNTRACKED);
    }
}

static void test_no_repository_and_garbage(void)
{
    _cleanup_free_ char *plain = paths_join(tmp, "plain/.claude/settings.local.json");
    _cleanup_free_ char *bad_git = paths_join(tmp, "bad/.git");
    _cleanup_free_ char *index = paths_join(tmp, "bad/.git/index");
    _cleanup_free_ char *file = paths_join(tmp, "bad/.claude/settings.local.json");

    _cleanup_free_ char *plain_dir = paths_dirname(plain);
    CHECK_INTEQ(paths_mkdir_p(plain_dir, 0700), 0);
    test_write_file(plain, "{}");
    CHECK(gitindex_tracks(plain) == GIT_UNTRACKED);
    CHECK_INTEQ(paths_mkdir_p(bad_git, 0700), 0);
    test_write_file(index, "DIRC, then no index at all");
    CHECK(gitindex_tracks(file) == GIT_UNKNOWN);
    /* A worktree's .git file points at its git directory. */
    _cleanup_free_ char *repo = make_repo("main-wt", "git init -q");
    CHECK_INTEQ(sh(repo, "git add -f .claude/settings.local.json && git -c user.name=t "
                         "-c user.email=t@t commit -qm x && git worktree add -q ../wt"),
                0);
    _cleanup_free_ char *wt = paths_join(tmp, "wt/.claude/settings.local.json");
    CHECK(gitindex_tracks(wt) == GIT_TRACKED);
}

int main(void)
{
    tmp = test_tmpdir();
    RUN(test_versions);
    RUN(test_no_repository_and_garbage);
    test_rm_rf(tmp);
    free(tmp);
    return test_main_result();
}
