// SPDX-License-Identifier: MIT
// fuzz-config: libFuzzer target for the native config provider (mcp.json) and mcpd.json.

/*
 * The input is written to a memfd and read back through /proc/self/fd/N, so the real file
 * entry points run end to end (read, size limit, parse, per-entry checks) with no test-only
 * parser path. Every recorded problem must name its file, and every accepted server must come
 * out with a name, a hash and its source.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <syslog.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "daemon/config/config.h"
#include "daemon/config/sandbox-policy.h"
#include "daemon/config/server-entry.h"
#include "daemon/config/server-identity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int memfd = -1;
static char path[64];

static void check_set(const ConfigSet *set)
{
    for (size_t i = 0; i < set->n_problems; i++)
        if (!set->problems[i].path || !streq(set->problems[i].path, path) ||
            !set->problems[i].message)
            abort();
    for (size_t i = 0; i < set->n_servers; i++) {
        const ServerConfig *c = set->servers[i];
        if (!c->name || !c->hash[0] || !streq(c->source.path, path) || config_check_name(c->name))
            abort();
        ServerConfig *copy = server_config_copy(c);
        if (!server_config_same(c, copy))
            abort();
        server_config_free(copy);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ConfigSet set = {0}, problems = {0};
    Settings settings;

    if (memfd < 0) {
        log_set_level(LOG_EMERG); /* problems are checked, not printed */
        if ((memfd = memfd_create("fuzz-config", MFD_CLOEXEC)) < 0)
            abort();
        snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
    }
    if (ftruncate(memfd, 0) < 0 || pwrite(memfd, data, size, 0) != (ssize_t)size)
        abort();
    settings_init(&settings);
    settings_load(&settings, path, &problems);
    check_set(&problems);
    config_load_native_file(&set, path, "mcpd", "mcpd (user)", CONFIG_LEVEL_USER, &settings);
    check_set(&set);
    config_set_deinit(&set);
    config_set_deinit(&problems);
    sandbox_profiles_free_all();
    return 0;
}
