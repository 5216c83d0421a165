// SPDX-License-Identifier: MIT
// test-source-imported: servers moved by mcpctl setup, read back with their provenance, and the
// record of Claude Code switches setup made (not the user's refusal).

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "common/paths.h"
#include "common/util.h"
#include "daemon/config/config.h"
#include "daemon/config/source-imported.h"
#include "daemon/config/source.h"
#include "tests/unit/test.h"

static char *tmp, *project;

static void write_imported(const char *agent, const char *text)
{
    _cleanup_free_ char *dir = xasprintf("%s/config/mcpd/imported", tmp);
    _cleanup_free_ char *path = xasprintf("%s/%s.json", dir, agent);

    paths_mkdir_p(dir, 0700);
    test_write_file(path, text);
}

static void test_collect_with_provenance(void)
{
    DiscoverOptions opt = {.root = project};
    Settings settings;
    ConfigSet set = {.quiet = true, .root = project};
    int i = config_source_index("imported");
    _cleanup_free_ char *gemini = xasprintf("%s/config/mcpd/imported/gemini.json", tmp);
    _cleanup_free_ char *claude =
        xasprintf("{\"importedFrom\": {\"agent\": \"claude\"}, \"mcpServers\": {\"u\": "
                  "{\"command\": \"u\"}}, \"projects\": {\"%s\": {\"mcpServers\": {\"l\": "
                  "{\"command\": \"l\"}}}, \"/other\": {\"mcpServers\": {\"x\": {\"command\": "
                  "\"x\"}}}}}",
                  project);

    settings_init(&settings);
    write_imported("claude", claude);
    write_imported("gemini", "{\"mcpServers\": {\"g\": {\"httpUrl\": \"https://g.example/mcp\"}}}");
    CHECK(i >= 0);
    config_sources[i].collect(&config_sources[i], &opt, &settings, &set);
    CHECK_INTEQ(set.n_servers, 3);
    ServerConfig *u = config_set_find(&set, "u"), *l = config_set_find(&set, "l"),
                 *g = config_set_find(&set, "g");
    CHECK(u && streq(u->source.provider_name, "Claude Code (moved here by mcpctl setup)"));
    CHECK(l && l->source.level == CONFIG_LEVEL_PROJECT);
    /* Gemini's own mapping applies: httpUrl is Streamable HTTP. */
    CHECK(g && g->type == TRANSPORT_HTTP && streq(g->source.path, gemini));
    CHECK(!config_set_find(&set, "x"));
    config_set_deinit(&set);
}

/* A bridge entry in an imported file is still mcpd's own, never a server. */
static void test_bridge_never_a_server(void)
{
    DiscoverOptions opt = {.root = NULL};
    Settings settings;
    ConfigSet set = {.quiet = true};
    int i = config_source_index("imported");

    settings_init(&settings);
    write_imported("cursor", "{\"mcpServers\": {\"self\": {\"command\": \"/usr/bin/mcpctl\", "
                             "\"args\": [\"--socket\", \"/s\", \"bridge\"]}}}");
    config_sources[i].collect(&config_sources[i], &opt, &settings, &set);
    CHECK(!config_set_find(&set, "self"));
    bool listed = false;
    for (size_t k = 0; k < set.n_skipped; k++)
        listed |= streq(set.skipped[k].name, "self") &&
                  strstr(set.skipped[k].reason, "mcpd's own bridge") != NULL;
    CHECK(listed);
    config_set_deinit(&set);
}

/* VS Code's moved entries (here VSCodium's) are mapped as VS Code's file is: its sandbox too. */
static void test_vscode_mapped(void)
{
    DiscoverOptions opt = {.root = NULL};
    Settings settings;
    ConfigSet set = {.quiet = true};
    int i = config_source_index("imported");
    _cleanup_free_ char *denied = xasprintf("%s/home/p", tmp);

    settings_init(&settings);
    write_imported("vscodium",
                   "{\"mcpServers\": {\"v\": {\"type\": \"stdio\", \"command\": \"x\", "
                   "\"dev\": {\"watch\": \"*.js\"}, \"sandboxEnabled\": true, \"sandbox\": "
                   "{\"filesystem\": {\"denyRead\": [\"${userHome}/p\"]}}}, "
                   "\"r\": {\"type\": \"http\", \"url\": \"https://r.example/mcp\"}}}");
    config_sources[i].collect(&config_sources[i], &opt, &settings, &set);
    ServerConfig *v = config_set_find(&set, "v"), *r = config_set_find(&set, "r");
    CHECK(v && streq(v->source.provider_name, "VSCodium (moved here by mcpctl setup)"));
    CHECK(v && streq(json_get_string(v->sandbox, "profile") ?: "", "project-write"));
    yajl_val deny = v ? json_get_array(v->sandbox, "denyRead") : NULL;
    CHECK(json_array_len(deny) == 1 && streq(json_array_at(deny, 0)->u.string, denied));
    CHECK(r && r->type == TRANSPORT_HTTP && !r->sandbox);
    config_set_deinit(&set);
}

static void test_claude_switch_record(void)
{
    _cleanup_free_ char *link = xasprintf("%s/link", tmp);
    _cleanup_free_ char *text = xasprintf(
        "{\"mcpServers\": {}, \"claudeProjectSwitches\": {\"%s\": {\"a\": \"approved\", \"p\": "
        "\"pending\"}}}",
        link);

    CHECK(symlink(project, link) == 0);
    CHECK_INTEQ(source_imported_claude_switch(project, "a"), IMPORTED_SWITCH_NONE);
    write_imported("claude", text);
    /* Keyed through a link, asked by the real path. */
    CHECK_INTEQ(source_imported_claude_switch(project, "a"), IMPORTED_SWITCH_APPROVED);
    CHECK_INTEQ(source_imported_claude_switch(project, "p"), IMPORTED_SWITCH_PENDING);
    CHECK_INTEQ(source_imported_claude_switch(project, "other"), IMPORTED_SWITCH_NONE);
    CHECK_INTEQ(source_imported_claude_switch("/nowhere", "a"), IMPORTED_SWITCH_NONE);
}

int main(void)
{
    tmp = test_tmpdir();
    project = xasprintf("%s/project", tmp);
    mkdir(project, 0700);
    _cleanup_free_ char *conf = xasprintf("%s/config", tmp);
    _cleanup_free_ char *home = xasprintf("%s/home", tmp);
    setenv("XDG_CONFIG_HOME", conf, 1);
    setenv("HOME", home, 1); /* ${userHome} in VS Code's entries */
    RUN(test_collect_with_provenance);
    RUN(test_bridge_never_a_server);
    RUN(test_claude_switch_record);
    RUN(test_vscode_mapped);
    test_rm_rf(tmp);
    free(tmp);
    free(project);
    return test_main_result();
}
