// SPDX-License-Identifier: MIT
// modern-state: requestState tokens for 2026-07-28 agents (methods-modern.c): mcpd's own
// unguessable tokens, and a modern server's requestStates kept under them for the retry.

#include <stdlib.h>

#include "common/json.h"
#include "common/log.h"
#include "common/util.h"
#include "daemon/methods/modern-state.h"

/* A modern server's requestState, handed to one agent under a token of mcpd's. */
struct Wrapped {
    struct Wrapped *next;
    char token[2 * MODERN_TOKEN_BYTES + 1];
    yajl_val state;
    int64_t expires_ms;
};

bool modern_new_token(char *out)
{
    unsigned char raw[MODERN_TOKEN_BYTES];

    if (random_bytes(raw, sizeof(raw)) < 0) {
        log_error("no randomness for a requestState token");
        return false;
    }
    hex_encode(out, raw, sizeof(raw));
    return true;
}

static void wrap_table_expire(WrapTable *t, int64_t now)
{
    for (Wrapped **wp = &t->head; *wp;) {
        Wrapped *w = *wp;
        if (w->expires_ms > now) {
            wp = &w->next;
            continue;
        }
        *wp = w->next;
        t->n--;
        json_free(w->state);
        free(w);
    }
}

const char *wrap_table_put(WrapTable *t, yajl_val state)
{
    Wrapped *w = xcalloc(1, sizeof(*w)), **last;

    wrap_table_expire(t, now_ms());
    if (t->n >= MODERN_MAX_WRAPPED) {
        for (last = &t->head; (*last)->next; last = &(*last)->next)
            ;
        json_free((*last)->state);
        free(*last);
        *last = NULL;
        t->n--;
    }
    if (!modern_new_token(w->token)) {
        free(w);
        return NULL;
    }
    w->state = json_copy(state);
    w->expires_ms = now_ms() + MODERN_RETRY_WAIT_MS;
    w->next = t->head;
    t->head = w;
    t->n++;
    return w->token;
}

yajl_val wrap_table_take(WrapTable *t, const char *token)
{
    wrap_table_expire(t, now_ms());
    for (Wrapped **wp = &t->head; *wp; wp = &(*wp)->next) {
        Wrapped *w = *wp;
        if (streq(w->token, token)) {
            yajl_val v = w->state;
            *wp = w->next;
            t->n--;
            free(w);
            return v;
        }
    }
    return NULL;
}

void wrap_table_clear(WrapTable *t)
{
    wrap_table_expire(t, INT64_MAX);
}
