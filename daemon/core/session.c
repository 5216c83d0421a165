// SPDX-License-Identifier: MIT
// session: agent sessions, opened by an agent and joined by its subagents through its token.

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "daemon/core/session.h"

Session *session_get(SessionRegistry *sr, uint64_t id)
{
    return id ? idmap_get(&sr->by_id, id) : NULL;
}

int session_open(SessionRegistry *sr, const Peer *p, uint64_t workspace_id, Session **sep,
                 char **whyp)
{
    unsigned char raw[SESSION_TOKEN_BYTES];
    Session *se;

    if (random_bytes(raw, sizeof(raw)) < 0) {
        *whyp = xstrdup("no randomness for a session token");
        return -EIO;
    }
    se = xcalloc(1, sizeof(*se));
    se->id = ++sr->next_id;
    hex_encode(se->token, raw, sizeof(raw));
    se->uid = p->uid;
    se->owner_peer_id = p->id;
    se->workspace_id = workspace_id;
    se->n_members = 1;
    idmap_put(&sr->by_id, se->id, se);
    *sep = se;
    return 0;
}

Session *session_find_token(SessionRegistry *sr, const char *token, uid_t uid)
{
    size_t pos = 0, n = strlen(token);
    Session *found = NULL;
    void *v;

    /* Every session is compared, in constant time, so timing tells nothing of the tokens. */
    while (idmap_next(&sr->by_id, &pos, NULL, &v)) {
        Session *se = v;
        if (n == sizeof(se->token) - 1 && mem_equal_consttime(se->token, token, n))
            found = se;
    }
    return found && found->uid == uid ? found : NULL;
}

static void session_free(Session *se)
{
    explicit_bzero(se->token, sizeof(se->token));
    free(se);
}

void session_leave(SessionRegistry *sr, uint64_t id, const Peer *p)
{
    Session *se = session_get(sr, id);

    if (se && se->n_members)
        se->n_members--;
    if (se && se->owner_peer_id == p->id) {
        /* A token dies with the agent that owns it; joined subagents keep their workspace. */
        idmap_remove(&sr->by_id, se->id);
        session_free(se);
    }
}

void session_registry_deinit(SessionRegistry *sr)
{
    size_t pos = 0;
    void *v;

    while (idmap_next(&sr->by_id, &pos, NULL, &v))
        session_free(v);
    idmap_deinit(&sr->by_id);
}
