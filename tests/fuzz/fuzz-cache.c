// SPDX-License-Identifier: MIT
// fuzz-cache: libFuzzer target for the tool cache loader, fed a cache file of any bytes.

/*
 * The input is written as the cache file of one server and read back with cache_load(), the
 * call the daemon makes at start-up: the real read, size handling, parse and checks. A hit must
 * give an array of named tools; anything else must be a miss or a stale entry that says which
 * file and why.
 */

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "common/json.h"
#include "common/log.h"
#include "common/util.h"
#include "daemon/core/cache.h"

/* A fixed clock, so an input's outcome does not depend on when it runs. */
#define FUZZ_NOW_WALL_MS 1700000000000LL

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64] = "/tmp/mcpd-fuzz-cache-XXXXXX";
static char *path;
static char name[] = "fuzz";

static ServerConfig cfg = {
    .name = name,
    /* The hash the seeds carry in configHash. */
    .hash = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    yajl_val tools = NULL;
    int64_t saved = 0;
    char *why = NULL;
    int fd, r;

    if (!path) {
        log_set_level(LOG_EMERG);
        if (!mkdtemp(dir))
            abort();
        path = cache_path(dir, &cfg);
    }
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, data, size) != (ssize_t)size)
        abort();
    close(fd);
    r = cache_load(dir, &cfg, FUZZ_NOW_WALL_MS, &tools, &saved, &why);
    if (r == 0) {
        if (why || !YAJL_IS_ARRAY(tools))
            abort();
        for (size_t i = 0; i < json_array_len(tools); i++)
            if (!json_get_string(json_array_at(tools, i), "name"))
                abort();
    } else if (r != CACHE_E_STALE || !why || !startswith(why, path) || tools) {
        abort(); /* the file exists: never a quiet miss, always a reason naming it */
    }
    json_free(tools);
    free(why);
    return 0;
}
