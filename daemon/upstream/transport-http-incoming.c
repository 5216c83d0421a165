// SPDX-License-Identifier: MIT
// transport-http-incoming: the messages one response body or SSE event brings (a 2025-03-26
// batch taken entry by entry, within bounds), each noted against the requests in flight and
// handed up to upstream.c.

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <yajl/yajl_tree.h>

#include "common/idmap.h"
#include "common/json.h"
#include "common/jsonscan.h"
#include "common/log.h"
#include "common/util.h"
#include "daemon/upstream/transport-http-incoming.h"
#include "daemon/upstream/transport-http-modern.h"
#include "daemon/upstream/transport-http-upcall.h"
#include "daemon/upstream/transport.h"

/* Note what an incoming message answers, then queue it for upstream.c. */
static void take_one(HttpTransport *t, yajl_val m, const char *text, size_t len)
{
    yajl_val id = json_get(m, "id");

    if (YAJL_IS_OBJECT(m) && !json_get(m, "method") && YAJL_IS_INTEGER(id) && id->u.number.i > 0) {
        uint64_t rid = (uint64_t)id->u.number.i;
        uintptr_t page = (uintptr_t)idmap_remove(&t->list_ids, rid);
        idmap_remove(&t->outstanding, rid);
        if (page)
            htm_note_tools(t, json_get_object(m, "result"), page == 1);
        if (t->have_init_id && rid == t->init_id) {
            const char *v = json_get_string(json_get_object(m, "result"), "protocolVersion");
            if (v) {
                free(t->protocol_version);
                t->protocol_version = xstrdup(v);
            }
        }
    }
    ht_upcall(t, UP_MESSAGE, text, len);
}

/*
 * Where the batch entry starting at p ends: after its closing bracket, or at the ',' or ']' that
 * follows a scalar (the batch's own ']' when p is at it). Strings are stepped over and brackets
 * counted, not matched, so any depth costs no stack and nothing is allocated; a malformed entry
 * only ends early and is then refused by its own parse.
 */
static const char *entry_end(const char *p, const char *end)
{
    size_t depth = 0;

    for (; p < end; p++) {
        if (*p == '"') {
            for (p++; p < end && *p != '"'; p++)
                if (*p == '\\')
                    p++;
        } else if (*p == '[' || *p == '{') {
            depth++;
        } else if (*p == ']' || *p == '}') {
            if (depth == 0)
                return p;
            if (--depth == 0)
                return p + 1;
        } else if (*p == ',' && depth == 0) {
            return p;
        }
    }
    return end;
}

/*
 * Whether the batch entry s[0..n) (an object) is taken: within the first HT_BATCH_MAX, always;
 * past them only an answer to a request still in flight, told by a skim of its members that
 * builds nothing, so a million entries cost no memory.
 */
static bool entry_wanted(HttpTransport *t, const char *s, size_t n, size_t k)
{
    JsonSpan id, method;
    int64_t i;

    if (k < HT_BATCH_MAX)
        return true;
    return !jsonscan_skim_member(s, n, "method", &method) &&
           jsonscan_skim_member(s, n, "id", &id) && jsonscan_is_int(id, &i) && i > 0 &&
           idmap_get(&t->outstanding, (uint64_t)i);
}

/* Take the batch entry s[0..n), the k-th (from 0); return whether it was taken. */
static bool take_entry(HttpTransport *t, const char *s, size_t n, size_t k)
{
    _cleanup_json_ yajl_val m = NULL;

    /* Anything but an object is never a message. */
    if (*s != '{' || !entry_wanted(t, s, n, k) ||
        json_parse_full(&m, s, n, JSON_UTF8_REPAIR, NULL) != 0 || !YAJL_IS_OBJECT(m))
        return false;
    take_one(t, m, s, n);
    return true;
}

static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/*
 * One body or event holding a message (or, on 2025-03-26 sessions, an array of them). A batch is
 * never parsed whole: its entries are found by entry_end() and parsed one at a time, and only
 * those taken are, so a body of a million junk values costs its own bytes and no tree. Entries
 * dropped are counted in one warning rather than each reported on its own.
 */
void ht_take_messages(HttpTransport *t, const char *text, size_t len)
{
    const char *p = text, *end = text + len, *e;
    size_t n = 0, n_dropped = 0;
    bool closed;

    while (p < end && is_ws(*p))
        p++;
    if (p == end)
        return;
    if (*p != '[') {
        _cleanup_json_ yajl_val v = json_parse(text, NULL);
        /* Not JSON at all still goes up: upstream.c reports it like a bad stdout line. */
        take_one(t, v, p, (size_t)(end - p));
        return;
    }
    for (p++;; p++) {
        while (p < end && is_ws(*p))
            p++;
        if (p == end || *p == ']' || (e = entry_end(p, end)) == end)
            break;
        if (!take_entry(t, p, (size_t)(e - p), n++))
            n_dropped++;
        for (p = e; p < end && is_ws(*p); p++)
            ;
        if (p == end || *p != ',')
            break;
    }
    if (n_dropped)
        log_full(LOG_WARNING, t->base.server, "http",
                 "dropped %zu of the %zu entries of a JSON batch from %s: entries that are not "
                 "objects, and past the first %u, all but answers to requests in flight",
                 n_dropped, n, t->shown_url, HT_BATCH_MAX);
    closed = p < end && *p == ']';
    for (p += closed; p < end && is_ws(*p); p++)
        ;
    if (!closed || p != end)
        log_full(LOG_WARNING, t->base.server, "http",
                 "a JSON batch from %s is malformed or cut short (%zu entries read): the rest of "
                 "it was dropped; report it to the server's maintainers",
                 t->shown_url, n);
}
