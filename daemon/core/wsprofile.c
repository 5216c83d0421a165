// SPDX-License-Identifier: MIT
// wsprofile: the profile each agent was given (mcpd.json's profiles) and what it lets the agent
// see: its tools/list, the tools its searches rank, the tools it may call, auto's choice of mode.

/*
 * An agent keeps the name of its profile, not a pointer: a reload replaces mcpd.json's profiles
 * in place, and an agent whose profile is gone from it sees what an agent without one sees.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/log.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/core/agent.h"
#include "daemon/core/toolset.h"
#include "daemon/core/view.h"
#include "daemon/core/wsprofile.h"

typedef struct ProfileAgent {
    char *name;     /* NULL: chosen, and none */
    bool undecided; /* auto: its mode is chosen at its first tools/list */
} ProfileAgent;

static ProfileAgent *profile_agent(WorkspaceRegistry *wr, uint64_t peer_id)
{
    return wr->profile_agents.n ? idmap_get(&wr->profile_agents, peer_id) : NULL;
}

/* What to say of a name that is no profile: the name cut to PROFILE_NAME_MAX bytes (no
 * profile's is longer; an agent's 16 MiB name is not worth echoing). */
static char *unknown_profile(const Profiles *ps, const char *name)
{
    StrBuf sb = STRBUF_INIT;

    strbuf_printf(&sb, "profile \"%.64s\" is not in mcpd.json's \"profiles\" (known: ", name);
    for (size_t i = 0; ps && i < ps->n; i++)
        strbuf_printf(&sb, "%s%s", i ? ", " : "", ps->v[i].name);
    strbuf_puts(&sb,
                ps && ps->n ? "): ask for one of them, or add it there" : "none): add it there");
    return strbuf_detach(&sb, NULL);
}

int wsprofile_choose(WorkspaceRegistry *wr, Peer *p, const char *asked, char **whyp)
{
    Agent *a = agent_get(wr->agents, p->id);
    Workspace *ws = ws_of_peer(wr, p);
    _cleanup_free_ char *project = NULL;
    const char *name = asked, *how = "asked";
    const Profile *prof;
    ProfileAgent *pa;

    if (asked && !profiles_find(wr->profiles, asked)) {
        *whyp = unknown_profile(wr->profiles, asked);
        return -ENOENT;
    }
    if (!name && ws && ws->root && (project = profiles_project_choice(ws->root))) {
        if (profiles_find(wr->profiles, project)) {
            name = project;
            how = "its project's .mcpd/mcpd.json";
        } else {
            _cleanup_free_ char *why = unknown_profile(wr->profiles, project);
            log_warning("%s/.mcpd/mcpd.json: %s (ignored)", ws->root, why);
        }
    }
    if (!name && a && (name = profiles_for_client(wr->profiles, a->client_name)))
        how = "clientProfiles";
    wsprofile_forget(wr, p->id);
    pa = xcalloc(1, sizeof(*pa));
    idmap_put(&wr->profile_agents, p->id, pa);
    if (!name)
        return 0;
    prof = profiles_find(wr->profiles, name);
    pa->name = xstrdup(name);
    pa->undecided = prof->mode == PROFILE_MODE_AUTO;
    log_info("peer %llu (%s): profile %s (%s), mode %s", (unsigned long long)p->id,
             a && a->client_name ? a->client_name : "?", name, how, profile_mode_name(prof->mode));
    return 0;
}

bool wsprofile_chosen(WorkspaceRegistry *wr, uint64_t peer_id)
{
    return profile_agent(wr, peer_id) != NULL;
}

const Profile *wsprofile_of(WorkspaceRegistry *wr, uint64_t peer_id)
{
    ProfileAgent *pa = profile_agent(wr, peer_id);

    return pa && pa->name ? profiles_find(wr->profiles, pa->name) : NULL;
}

bool wsprofile_allows_tool(WorkspaceRegistry *wr, uint64_t peer_id, const char *server,
                           const char *tool)
{
    const Profile *prof = wsprofile_of(wr, peer_id);

    return !prof || (tool && profile_allows(prof, server, tool));
}

bool wsprofile_allows(WorkspaceRegistry *wr, uint64_t peer_id, Server *s, size_t j)
{
    return wsprofile_allows_tool(wr, peer_id, s->cfg->name, toolset_name(s->tools, j));
}

bool wsprofile_pinned(WorkspaceRegistry *wr, uint64_t peer_id, Server *s, size_t j)
{
    const Profile *prof = wsprofile_of(wr, peer_id);
    const char *tool;

    if (!prof)
        return false;
    tool = toolset_name(s->tools, j);
    return tool && profile_pinned(prof, s->cfg->name, tool);
}

/* Whether the profile narrows the tools an agent sees (a profile may only choose a mode). */
static bool narrows(const Profile *prof)
{
    return prof && (prof->n_servers || prof->n_tools);
}

typedef struct Keep {
    WorkspaceRegistry *wr;
    uint64_t peer_id;
} Keep;

static bool keep_allowed(void *ud, Server *s, size_t j)
{
    Keep *k = ud;
    return wsprofile_allows(k->wr, k->peer_id, s, j);
}

/* The agent's tools/list in all mode and what it costs (c may be NULL); text to free. */
static char *allowed_list(Workspace *ws, uint64_t peer_id, TokenCost *c, size_t *lenp)
{
    Keep k = {ws->reg, peer_id};
    char *text = ws_view_where(ws, keep_allowed, &k, lenp);
    _cleanup_json_ yajl_val v = c ? json_parse(text, NULL) : NULL;
    yajl_val tools = json_get_array(v, "tools");

    if (c)
        *c = (TokenCost){0};
    for (size_t i = 0; c && i < json_array_len(tools); i++)
        tokens_cost_add(c, NULL, json_array_at(tools, i));
    return text;
}

bool wsprofile_decide(Workspace *ws, Peer *p)
{
    ProfileAgent *pa = profile_agent(ws->reg, p->id);
    const Profile *prof = wsprofile_of(ws->reg, p->id);
    TokenCost c;
    int64_t budget;

    if (!pa || !pa->undecided || !prof)
        return false;
    pa->undecided = false;
    free(allowed_list(ws, p->id, &c, NULL));
    budget = profile_token_budget(ws->reg->profiles, prof);
    log_info("peer %llu: profile %s (auto): %zu tools, ~%zu tokens, budget %lld: %s mode",
             (unsigned long long)p->id, prof->name, c.tools, c.tokens, (long long)budget,
             (int64_t)c.tokens > budget ? "search" : "all");
    return (int64_t)c.tokens > budget;
}

bool wsprofile_send_list(Workspace *ws, Peer *p, yajl_val id)
{
    _cleanup_free_ char *text = NULL;
    size_t len;

    if (!narrows(wsprofile_of(ws->reg, p->id)))
        return false;
    text = allowed_list(ws, p->id, NULL, &len);
    agent_reply_raw(ws->reg->peers, p->id, id, text, len);
    return true;
}

bool wsprofile_agent_cost(Workspace *ws, uint64_t peer_id, TokenCost *c, const char **modep)
{
    ProfileAgent *pa = profile_agent(ws->reg, peer_id);
    const Profile *prof = wsprofile_of(ws->reg, peer_id);

    *modep = pa && pa->undecided && prof ? "auto" : "all";
    if (!narrows(prof))
        return false;
    free(allowed_list(ws, peer_id, c, NULL));
    return true;
}

void wsprofile_forget(WorkspaceRegistry *wr, uint64_t peer_id)
{
    ProfileAgent *pa = idmap_remove(&wr->profile_agents, peer_id);

    if (pa)
        free(pa->name);
    free(pa);
}

void wsprofile_registry_deinit(WorkspaceRegistry *wr)
{
    size_t pos = 0;
    void *v;

    while (idmap_next(&wr->profile_agents, &pos, NULL, &v)) {
        free(((ProfileAgent *)v)->name);
        free(v);
    }
    idmap_deinit(&wr->profile_agents);
}
