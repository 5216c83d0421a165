// SPDX-License-Identifier: MIT
// trust: what mcpd/trust does to a project root: approve the entries discovery held back there,
// or revoke approvals.

#include <errno.h>
#include <string.h>

#include "common/json.h"
#include "common/util.h"
#include "daemon/config/config.h"
#include "daemon/config/trust.h"

/*
 * The approvals made (chosen: each pending entry trust_approve took, with what it runs), or
 * those it left (!chosen: entries of files above the root, which need their name).
 */
static yajl_val pending_list(const Trust *t, const char *server, bool chosen)
{
    yajl_val arr = json_array_new();

    for (size_t i = 0; i < t->n_pending; i++) {
        const TrustPending *e = &t->pending[i];
        if (trust_pending_chosen(e, server) != chosen || (!chosen && !e->above))
            continue;
        yajl_val o = json_object_new();
        json_object_set(o, "name", json_string_new(e->name));
        json_object_set(o, "path", json_string_new(e->path));
        json_object_set(o, "command", json_string_new(e->shown));
        json_array_push(arr, o);
    }
    return arr;
}

int trust_approve_root(const char *root, const Settings *settings, const char *server,
                       yajl_val *approvedp, yajl_val *abovep, char **whyp)
{
    _cleanup_free_ char *load_why = NULL;
    DiscoverOptions opt = {NULL, root};
    ConfigSet set;
    size_t n = 0;
    Trust t;
    int r;

    trust_init(&t, root, &load_why);
    r = config_discover_trust(&set, &opt, settings, &t);
    config_set_deinit(&set);
    if (r < 0)
        *whyp = xasprintf("cannot read the project %s: %s", root, strerror(-r));
    else if ((r = trust_approve(&t, server, &n, whyp)) == 0 && server && n == 0) {
        *whyp = xasprintf("no project server \"%s\" of %s is waiting for approval (mcpctl "
                          "config --cwd %s lists its servers and why each is not used)",
                          server, root, root);
        r = -ENOENT;
    }
    if (r == 0 && approvedp)
        *approvedp = pending_list(&t, server, true);
    if (r == 0 && abovep)
        *abovep = pending_list(&t, server, false);
    trust_deinit(&t);
    return r;
}

int trust_revoke_root(const char *root, const char *server, size_t *np, char **whyp)
{
    _cleanup_free_ char *load_why = NULL;
    Trust t;
    int r;

    trust_init(&t, root, &load_why);
    r = trust_revoke(&t, server, np, whyp);
    trust_deinit(&t);
    return r;
}
