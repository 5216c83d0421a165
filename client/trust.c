// SPDX-License-Identifier: MIT
// trust: mcpctl trust / untrust, approving a project's servers through mcpd.

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/trust.h"
#include "common/json.h"
#include "common/mcp.h"
#include "common/util.h"

/* The exit statuses mcpctl documents. */
enum {
    TRUST_EXIT_OK = 0,
    TRUST_EXIT_FAILED = 1,
    TRUST_EXIT_NO_DAEMON = 3,
};

/* Each entry's name, file and what it runs. */
static void print_entries(yajl_val list)
{
    for (size_t i = 0; i < json_array_len(list); i++) {
        yajl_val e = json_array_at(list, i);
        printf("  %-24s %s\n  %-24s runs: %s\n", json_get_string(e, "name"),
               json_get_string(e, "path"), "", json_get_string(e, "command"));
    }
}

static void show(bool untrust, const char *text)
{
    _cleanup_json_ yajl_val r = json_parse(text, NULL);
    yajl_val list = json_get_array(r, "approved");
    int64_t n = 0;

    if (untrust) {
        json_get_int(r, "revoked", &n);
        printf("removed %lld approval%s for %s; its servers are untrusted again\n", (long long)n,
               n == 1 ? "" : "s", json_get_string(r, "root"));
        return;
    }
    yajl_val above = json_get_array(r, "notApproved");
    const char *root = json_get_string(r, "root");

    if (!json_array_len(list))
        printf("nothing of %s is waiting for approval\n", root);
    else
        printf("approved for %s (until an entry changes):\n", root);
    print_entries(list);
    if (json_array_len(above))
        printf("not approved: these come from a .mcp.json above the project, which trusting the "
               "project does not cover; approve each by name (mcpctl trust --server NAME %s):\n",
               root);
    print_entries(above);
}

int trust_run(mcpc_client *c, bool untrust, const char *dir, const char *server, bool json)
{
    _cleanup_free_ char *real = NULL, *params = NULL, *out = NULL;
    yajl_val p;
    int r;

    real = dir ? (realpath(dir, NULL) ?: xstrdup(dir)) : getcwd(NULL, 0);
    if (!real) {
        fprintf(stderr, "mcpctl: cannot tell the current directory: %s\n", strerror(errno));
        return TRUST_EXIT_FAILED;
    }
    p = json_object_new();
    json_object_set(p, "cwd", json_string_new(real));
    if (server)
        json_object_set(p, "server", json_string_new(server));
    if (untrust)
        json_object_set(p, "revoke", json_bool_new(true));
    params = json_to_string(p);
    json_free(p);
    if ((r = mcpc_request(c, MCPD_METHOD_TRUST, params, &out)) != 0) {
        fprintf(stderr, "mcpctl: %s\n", mcpc_errmsg(c));
        return r == -ECONNRESET || r == -ECONNREFUSED ? TRUST_EXIT_NO_DAEMON : TRUST_EXIT_FAILED;
    }
    if (json)
        printf("%s\n", out);
    else
        show(untrust, out);
    return TRUST_EXIT_OK;
}
