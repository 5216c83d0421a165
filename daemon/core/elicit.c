// SPDX-License-Identifier: MIT
// elicit: URL-mode elicitation between servers and agents (see elicit.h).

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/json.h"
#include "common/log.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/core/elicit.h"

/* A URL-mode elicitation went to agent peer_id: its completion will go there too. */
void elicit_url_note(Server *s, const char *eid, uint64_t peer_id)
{
    unsigned slot;

    if (!s->up || !eid || !*eid || strlen(eid) > SERVER_URL_ELICITATION_ID_MAX)
        return;
    slot = s->url_elicitation_next++ % SERVER_URL_ELICITATIONS;
    free(s->url_elicitations[slot].id);
    s->url_elicitations[slot].id = xstrdup(eid);
    s->url_elicitations[slot].peer_id = peer_id;
    s->url_elicitations[slot].upstream_id = s->up->id;
}

/*
 * The slot of the open URL-mode elicitation eid of s's current connection (the newest, should
 * a server reuse an id), or -1. A slot of an earlier connection never matches: a restarted
 * server numbering its elicitations afresh cannot reach the agent of the old one.
 */
static int url_find(const Server *s, const char *eid)
{
    for (unsigned k = 1; eid && s->up && k <= SERVER_URL_ELICITATIONS; k++) {
        unsigned i = (s->url_elicitation_next - k) % SERVER_URL_ELICITATIONS;
        if (s->url_elicitations[i].id && s->url_elicitations[i].upstream_id == s->up->id &&
            streq(s->url_elicitations[i].id, eid))
            return (int)i;
    }
    return -1;
}

void elicit_url_forget(Server *s, const char *eid)
{
    int i = url_find(s, eid);

    if (i >= 0) {
        free(s->url_elicitations[i].id);
        s->url_elicitations[i].id = NULL;
    }
}

/* notifications/elicitation/complete: to the agent that was sent that elicitation, once. */
void elicit_url_complete(PeerRegistry *peers, Server *s, yajl_val params)
{
    const char *eid = json_get_string(params, "elicitationId");
    int i = url_find(s, eid);

    if (i < 0) {
        log_debug("[%s] completion of an elicitation no agent is waiting for dropped",
                  s->cfg->name);
        return;
    }
    agent_notify(peers, s->url_elicitations[i].peer_id, "notifications/elicitation/complete",
                 params);
    elicit_url_forget(s, eid);
}

/*
 * A tools/call refused with -32042 (URL elicitation required): the agent's text names the
 * links, since a tool result cannot carry the error itself; an agent that declared url mode is
 * also sent each elicitation's completion. Links are listed up to a bound: the message is for a
 * person.
 */
#define URL_REQUIRED_LINKS_MAX 4
char *elicit_url_required_text(AgentRegistry *agents, uint64_t peer_id, Server *s,
                               const UpstreamReply *r)
{
    yajl_val els = json_get_array(r->data, "elicitations");
    Agent *a = agent_get(agents, peer_id);
    StrBuf sb = STRBUF_INIT;
    size_t links = 0;

    strbuf_printf(&sb, "MCP error %" PRId64 ": %s", r->code, r->message);
    for (size_t i = 0; i < json_array_len(els) && i < SERVER_URL_ELICITATIONS; i++) {
        yajl_val el = json_array_at(els, i);
        const char *url = json_get_string(el, "url");
        if (s && a && (a->caps & AGENT_CAP_ELICITATION_URL))
            elicit_url_note(s, json_get_string(el, "elicitationId"), peer_id);
        if (url && links < URL_REQUIRED_LINKS_MAX)
            strbuf_printf(&sb, "%s%.*s",
                          links++ ? ", " : " (open to continue: ", URL_REQUIRED_LINK_MAX, url);
    }
    if (links)
        strbuf_puts(&sb, ")");
    return strbuf_detach(&sb, NULL);
}

/*
 * A url-mode elicitation as a form for an agent that declared only forms: the message names the
 * link to open, nothing is asked but yes or no. The agent's accept then means what it means in
 * url mode: the person agreed to go there.
 */
yajl_val elicit_url_as_form(yajl_val params)
{
    const char *message = json_get_string(params, "message"), *url = json_get_string(params, "url");
    yajl_val out = json_object_new(), schema = json_object_new();
    _cleanup_free_ char *text = xasprintf(
        "%s%sTo continue, open this link in your browser: %.*s", message ? message : "",
        message ? "\n\n" : "", URL_REQUIRED_LINK_MAX, url ? url : "(the server gave no link)");

    json_object_set(out, "message", json_string_new(text));
    json_object_set(schema, "type", json_string_new("object"));
    json_object_set(schema, "properties", json_object_new());
    json_object_set(out, "requestedSchema", schema);
    return out;
}
