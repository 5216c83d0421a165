// SPDX-License-Identifier: MIT
// fuzz-source: libFuzzer target for the provider mappings (source-*.c): any bytes as any
// provider's file, read by that provider's own collect function.

/*
 * The first byte picks a provider file (each provider's user-level and project-level files,
 * under a private home, config home and project root); the rest is written there and the
 * provider collects. "@ROOT@" in the input becomes the project root, so Claude Code's
 * projects["<root>"] shape is reachable. Every problem must name a file of that provider and
 * say something; every server must come out named, hashed and attributed to that provider.
 */

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "common/log.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/config.h"
#include "daemon/source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One file a provider reads: its provider id, and where it lives (home, config home, root). */
typedef struct FuzzFile {
    const char *provider;
    enum { IN_HOME, IN_XDG, IN_ROOT } base;
    const char *rel;
} FuzzFile;

static const FuzzFile files[] = {
    {"mcpd", IN_XDG, "mcpd/mcp.json"},
    {"mcpd", IN_ROOT, ".mcpd/mcp.json"},
    {"claude", IN_HOME, ".claude.json"},
    {"claude", IN_HOME, ".claude/mcp.json"},
    {"claude", IN_ROOT, ".claude/mcp.json"},
    {"codex", IN_HOME, ".codex/config.toml"},
    {"codex", IN_ROOT, ".codex/config.toml"},
    {"gemini", IN_HOME, ".gemini/settings.json"},
    {"gemini", IN_ROOT, ".gemini/settings.json"},
    {"cursor", IN_HOME, ".cursor/mcp.json"},
    {"cursor", IN_ROOT, ".cursor/mcp.json"},
    {"windsurf", IN_HOME, ".codeium/windsurf/mcp_config.json"},
    {"windsurf", IN_ROOT, ".windsurf/mcp_config.json"},
    {"vscode", IN_ROOT, ".vscode/mcp.json"},
    {"mcp-json", IN_ROOT, "mcp.json"},
    {"claude", IN_ROOT, ".mcp.json"}, /* Claude Code's project scope */
};

static char top[64] = "/tmp/mcpd-fuzz-source-XXXXXX";
static char *bases[3];
static char *paths[N_ELEMENTS(files)];

static void mkdirs(const char *path)
{
    _cleanup_free_ char *p = xstrdup(path);

    for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = '\0';
        if (mkdir(p, 0700) < 0 && access(p, F_OK) < 0)
            abort();
        *s = '/';
    }
}

static void setup(void)
{
    log_set_level(LOG_EMERG); /* problems are checked, not printed */
    if (!mkdtemp(top))
        abort();
    bases[IN_HOME] = xasprintf("%s/home", top);
    bases[IN_XDG] = xasprintf("%s/config", top);
    bases[IN_ROOT] = xasprintf("%s/project", top);
    setenv("HOME", bases[IN_HOME], 1);
    setenv("XDG_CONFIG_HOME", bases[IN_XDG], 1);
    unsetenv("CODEX_HOME");
    for (size_t i = 0; i < N_ELEMENTS(files); i++) {
        paths[i] = xasprintf("%s/%s", bases[files[i].base], files[i].rel);
        mkdirs(paths[i]);
    }
}

static void check_set(const ConfigSet *set, const char *provider)
{
    for (size_t i = 0; i < set->n_problems; i++)
        if (!set->problems[i].path || !startswith(set->problems[i].path, top) ||
            !set->problems[i].message || !set->problems[i].message[0])
            abort();
    for (size_t i = 0; i < set->n_servers; i++) {
        const ServerConfig *c = set->servers[i];
        if (!c->name || !c->hash[0] || config_check_name(c->name) ||
            !streq(c->source.provider, provider) || !startswith(c->source.path, top))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ConfigSet set = {0};
    Settings settings;
    StrBuf text = STRBUF_INIT;
    const char *at;
    int fd, src;

    if (size < 1)
        return 0;
    if (!bases[0])
        setup();
    size_t k = data[0] % N_ELEMENTS(files);
    const char *in = (const char *)data + 1, *end = (const char *)data + size;
    while ((at = memmem(in, (size_t)(end - in), "@ROOT@", 6))) {
        strbuf_append(&text, in, (size_t)(at - in));
        strbuf_puts(&text, bases[IN_ROOT]);
        in = at + 6;
    }
    strbuf_append(&text, in, (size_t)(end - in));
    fd = open(paths[k], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, text.data ? text.data : "", text.len) != (ssize_t)text.len)
        abort();
    close(fd);
    src = config_source_index(files[k].provider);
    if (src < 0)
        abort();
    DiscoverOptions opt = {NULL, bases[IN_ROOT]};
    settings_init(&settings);
    config_sources[src].collect(&config_sources[src], &opt, &settings, &set);
    check_set(&set, files[k].provider);
    config_set_deinit(&set);
    unlink(paths[k]);
    strbuf_deinit(&text);
    return 0;
}
