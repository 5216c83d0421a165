// SPDX-License-Identifier: MIT
// test-config-stall-files: a cloned repository's YAML and TOML files built to stall the daemon.

/*
 * Round 4 of the attacks on the files mcpd reads (task h-red4). Continue's block files (the YAML
 * files in <root>/.continue/mcpServers/) are read from any repository an agent works in. libyaml
 * scans nested [ and { in time that grows with the square of their depth (100 000 levels, 200
 * KB: 35 s of CPU under ASan) and loads every node of a file before mcpd could count them (4 MiB
 * of short list items: about a minute), while the daemon, single-threaded, served nobody. A
 * config.toml for Codex of 690000 [[a]] headers took over two minutes and 2 GiB (a set searched
 * from the start for each table, arrays grown one element at a time). Now the YAML tokens are
 * measured first and TOML values counted: each file is refused at once with a problem naming
 * it, and the daemon serves the others.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"
#include "tests/integration/harness.h"

#define CONTROL "mcp_steady_echo"
/* Nested flow levels: far past the tree's 64, where libyaml's scan took 35 s under ASan. */
#define DEEP_LEVELS 100000
/* List items: 3.6 MiB, under the 4 MiB file bound, far past the 100 000 values kept. */
#define FLAT_ITEMS 900000
/* TOML [[a]] headers: 4 MB, under the 4 MiB file bound, far past TOML_MAX_VALUES (65536). */
#define TOML_TABLES 690000
/*
 * The discovery's time allowed: generous for a loaded machine; without the measure first it
 * took minutes.
 */
#define DISCOVER_MS_MAX 20000

static void write_file(const char *path, const char *head, const char *unit, size_t n,
                       const char *tail_unit, size_t n_tail)
{
    _cleanup_free_ char *dir = paths_dirname(path);
    FILE *f;

    CHECK(paths_mkdir_p(dir, 0700) == 0);
    f = fopen(path, "w");
    CHECK_MSG(f != NULL, "open %s: %s", path, strerror(errno));
    if (!f)
        return;
    fputs(head, f);
    for (size_t i = 0; i < n; i++)
        fputs(unit, f);
    for (size_t i = 0; i < n_tail; i++)
        fputs(tail_unit, f);
    fputc('\n', f);
    fclose(f);
}

/* The problem about file (by its name) in a discovery's JSON answer, or NULL. */
static const char *problem_for(const char *out, const char *file)
{
    const char *p = out ? strstr(out, file) : NULL;

    return p ? strstr(p, "\"error\"") : NULL;
}

int main(void)
{
    _cleanup_free_ char *cfg = NULL, *params = NULL, *out = NULL;
    Harness h;
    mcpc_client *c;

    h_setup(&h, "config-stall-files");
    cfg = xasprintf("{\"mcpServers\": {\"steady\": {\"command\": \"%s\"}}}", h_fake());
    h_write_config(&h, cfg);
    _cleanup_free_ char *root = paths_join(h.dir, "cloned");
    _cleanup_free_ char *deep = paths_join(root, ".continue/mcpServers/deep.yaml");
    _cleanup_free_ char *flat = paths_join(root, ".continue/mcpServers/flat.yaml");
    /* A project's .codex/config.toml is read once the project is trusted: the user's here. */
    _cleanup_free_ char *toml = paths_join(h.dir, "home/.codex/config.toml");
    write_file(deep, "name: x\nversion: 1\nschema: v1\nmcpServers: ", "[", DEEP_LEVELS, "]",
               DEEP_LEVELS);
    write_file(flat, "name: y\nversion: 1\nschema: v1\nmcpServers:\n", "- 1\n", FLAT_ITEMS, "", 0);
    write_file(toml, "", "[[a]]\n", TOML_TABLES, "", 0);
    h_start(&h, NULL);
    c = h_client(&h, "config-stall-files");
    h_settle(&h, c, "steady", NULL);

    uint64_t t0 = now_ms();
    params = xasprintf("{\"cwd\":\"%s\"}", root);
    CHECK(mcpc_request(c, "mcpd/discover", params, &out) == 0);
    uint64_t ms = now_ms() - t0;
    fprintf(stderr, "  discovery of the hostile repository: %llu ms\n", (unsigned long long)ms);
    const char *e_deep = problem_for(out, "deep.yaml"), *e_flat = problem_for(out, "flat.yaml");
    /* The user's files are read at start: the problem is in mcpd's status. */
    yajl_val st = h_status(c);
    _cleanup_free_ char *st_text = st ? json_to_string(st) : NULL;
    json_free(st);
    const char *e_toml = problem_for(st_text, ".codex/config.toml");
    CHECK_MSG(e_deep && strstr(e_deep, "[ ] and { } nested more than 64 levels deep"), "%s: %.300s",
              deep, e_deep ? e_deep : "(no problem)");
    CHECK_MSG(e_flat && strstr(e_flat, "more than 400000 tokens"), "%s: %.300s", flat,
              e_flat ? e_flat : "(no problem)");
    CHECK_MSG(e_toml && strstr(e_toml, "more than 65536 values and tables"), "%s: %.300s", toml,
              e_toml ? e_toml : "(no problem)");
    CHECK_MSG(!h_measurable("the discovery's time bound") || ms < DISCOVER_MS_MAX,
              "the discovery held the daemon %llu ms", (unsigned long long)ms);
    h_check_healthy(&h, "a repository of YAML built to stall the scanner", CONTROL);

    mcpc_free(c);
    CHECK(h_stop(&h) == 0);
    h_teardown(&h);
    return h_finish("test-config-stall-files");
}
