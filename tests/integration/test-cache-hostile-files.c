// SPDX-License-Identifier: MIT
// test-cache-hostile-files: tool cache files that a hostile hand left (link, truncated, deep, huge,
// junk).

/*
 * Round 2 of the attacks on the files mcpd reads (task h-red2); test-bounds covers a FIFO, a
 * foreign owner, mode 0666 and an open directory. Here the cache file of a server that now
 * fails at once is replaced, between two starts, by: a link to a good copy, its first half,
 * 100k nested arrays, a sparse 40 MiB file, a valid JSON text of the wrong shape. None may be
 * served, each is named in the log, and mcpd serves the others.
 */

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "tests/integration/harness.h"

#define CONTROL "mcp_steady_echo"
#define TOOL    "mcp_cached_echo"
/* Past the cache's 32 MiB bound; sparse, so it costs no disk. */
#define HUGE_SIZE "40M"

static const struct {
    const char *name;
    const char *shell; /* run with $F the cache file, $G a good copy */
    const char *want;  /* in the log, with the file's path */
} cases[] = {
    {"link", "rm -f \"$F\" && ln -s \"$G\" \"$F\"", "symbolic link"},
    {"truncated", "head -c $(( $(stat -c %s \"$G\") / 2 )) \"$G\" > \"$F\"", NULL},
    /* 100k nested arrays: past JSON_MAX_DEPTH (128) many times over. */
    {"deep", "head -c 100000 /dev/zero | tr '\\0' '[' > \"$F\"", NULL},
    {"huge", "cp \"$G\" \"$F\" && truncate -s " HUGE_SIZE " \"$F\"", "larger than 33554432"},
    {"shape", "echo '{\"version\":1,\"tools\":\"nope\"}' > \"$F\"", NULL},
};

/* The cache file of server "cached" in dir, or NULL. */
static char *find_entry(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char *found = NULL;

    while (d && (e = readdir(d)))
        if (strncmp(e->d_name, "cached-", 7) == 0 && !strstr(e->d_name, ".tmp"))
            found = xasprintf("%s/%s", dir, e->d_name);
    if (d)
        closedir(d);
    return found;
}

int main(void)
{
    _cleanup_free_ char *script = NULL, *cfg = NULL, *dir = NULL, *file = NULL, *good = NULL;
    Harness h;
    mcpc_client *c;
    bool found = false;

    h_setup(&h, "cache-hostile-files");
    script = xasprintf("%s/cached.sh", h.dir);
    dir = xasprintf("%s/cache/mcpd/tools", h.dir);
    good = xasprintf("%s/good-entry.json", h.dir);
    h_sh("printf '#!/bin/sh\\nexec %s --name cached\\n' > '%s'", h_fake(), script);
    cfg = xasprintf("{\"mcpServers\": {\"steady\": {\"command\": \"%s\"},"
                    " \"cached\": {\"command\": \"/bin/sh\", \"args\": [\"%s\"],"
                    " \"timeout\": 3000}}}",
                    h_fake(), script);
    h_write_config(&h, cfg);

    /* First start: the cache entry is written; then the server fails at once for good. */
    h_start(&h, NULL);
    c = h_client(&h, "cache-hostile-files");
    h_settle(&h, c, "steady", "cached", NULL);
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    file = find_entry(dir);
    CHECK_MSG(file, "no cache entry in %s", dir);
    if (!file) {
        h_teardown(&h);
        return h_finish("test-cache-hostile-files");
    }
    h_sh("cp -p '%s' '%s' && printf '#!/bin/sh\\nexit 3\\n' > '%s'", file, good, script);

    for (size_t i = 0; i < N_ELEMENTS(cases); i++) {
        h_sh("F='%s' G='%s'; %s; : > '%s'", file, good, cases[i].shell, h.log);
        h_start(&h, NULL);
        c = h_client(&h, "cache-hostile-files");
        found = false;
        h_list_count(c, TOOL, &found);
        CHECK_MSG(!found, "%s: the planted cache entry was served", cases[i].name);
        h_settle(&h, c, "steady", NULL);
        h_check_healthy(&h, cases[i].name, CONTROL);
        mcpc_free(c);
        CHECK(h_stop(&h) == 0);
        _cleanup_free_ char *log = h_read_file(h.log);
        CHECK_MSG(log && strstr(log, file) && (!cases[i].want || strstr(log, cases[i].want)),
                  "%s: the log does not name %s%s%s", cases[i].name, file,
                  cases[i].want ? " and " : "", cases[i].want ? cases[i].want : "");
        h_sh("rm -f '%s' && cp -p '%s' '%s'", file, good, file);
    }

    /* Control: the good copy put back is served, so the checks above could fail. */
    h_start(&h, NULL);
    c = h_client(&h, "cache-hostile-files");
    h_list_count(c, TOOL, &found);
    CHECK_MSG(found, "control: the good cache entry was not served");
    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("test-cache-hostile-files");
}
