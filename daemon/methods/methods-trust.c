// SPDX-License-Identifier: MIT
// methods-trust: mcpd/trust, approving (or withdrawing approval of) a project's servers.

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/util.h"
#include "daemon/methods/methods-trust.h"
#include "daemon/config/trust.h"

void methods_trust(MethodsCtx *d, Peer *p, JsonrpcMsg *m)
{
    const char *cwd = json_get_string(m->params, "cwd"), *server = NULL;
    _cleanup_free_ char *root = NULL, *why = NULL;
    yajl_val sv = json_get(m->params, "server"), result, approved = NULL, above = NULL;
    bool revoke = false;
    size_t n = 0;
    int r;

    if (!cwd || cwd[0] != '/' || json_get_bool(m->params, "revoke", &revoke) == -EINVAL ||
        (sv && !(YAJL_IS_STRING(sv) && sv->u.string[0]))) {
        methods_error(d, p, m->id, JSONRPC_INVALID_PARAMS,
                      "params: cwd must be an absolute path, server a non-empty string, revoke "
                      "true or false");
        return;
    }
    server = sv ? sv->u.string : NULL;
    if (!(root = realpath(cwd, NULL))) {
        _cleanup_free_ char *msg = xasprintf("cwd \"%s\": %s", cwd, strerror(errno));
        methods_error(d, p, m->id, JSONRPC_INVALID_PARAMS, msg);
        return;
    }
    r = revoke ? trust_revoke_root(root, server, &n, &why)
               : trust_approve_root(root, d->settings, server, &approved, &above, &why);
    if (r < 0) {
        methods_error(d, p, m->id, JSONRPC_INVALID_PARAMS, why ? why : strerror(-r));
        return;
    }
    result = json_object_new();
    json_object_set(result, "root", json_string_new(root));
    if (revoke) {
        json_object_set(result, "revoked", json_int_new((int64_t)n));
    } else {
        json_object_set(result, "approved", approved);
        json_object_set(result, "notApproved", above);
    }
    /* The workspace of that root picks the change up now, as a reload would; the answer waits
     * for it, with its outcome under "reload". */
    d->reload(d->ud, root, methods_reload_answer, methods_reload_answer_new(d, p, m->id, result));
}
