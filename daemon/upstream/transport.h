// SPDX-License-Identifier: MIT
// transport: the interface every upstream transport (stdio, http, sse) offers to upstream.c.
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <yajl/yajl_tree.h>

#include "common/strbuf.h"

typedef struct Transport Transport;

/* Events from a transport to its owner. After close() neither is called again. */
typedef struct TransportCallbacks {
    /* One complete message line (NUL-terminated); valid only during the call. */
    void (*message)(void *userdata, char *line, size_t len);
    /* The transport is dead (exit, EOF, HTTP failure); called at most once. */
    void (*closed)(void *userdata, const char *reason);
    /*
     * HTTP: the server wants authorization (401); challenge is the WWW-Authenticate text ("" if
     * none). closed() follows. May be NULL.
     */
    void (*auth)(void *userdata, const char *challenge);
} TransportCallbacks;

typedef struct TransportOps {
    const char *kind; /* shown in status: the transport in use */
    /* Queue one line (with its newline); return 0 or -errno. */
    int (*send)(Transport *t, const char *line, size_t len);
    /* Detach from the owner and shut down in the background; the transport frees itself. */
    void (*close)(Transport *t);
    /* Add transport details (pid, url, ...) to a status object. */
    void (*status)(Transport *t, yajl_val obj);
    /* Append the server's recent log output (stdio: stderr ring) to sb; may be NULL. */
    void (*logs)(Transport *t, StrBuf *sb);
} TransportOps;

struct Transport {
    const TransportOps *ops;
    TransportCallbacks cb;
    void *userdata;
    struct event_base *base;
    char *server; /* for log lines */
};

static inline int transport_send(Transport *t, const char *line, size_t len)
{
    return t->ops->send(t, line, len);
}

static inline void transport_close(Transport *t)
{
    if (t)
        t->ops->close(t);
}

/**
 * Did a transport fail to start for want of a resource the system may give back (fds, processes,
 * memory)? Then waiting and retrying is the cure, whatever the server's config says: such a
 * failure is no fault of the server's.
 */
static inline bool transport_error_is_transient(int r)
{
    return r == -EMFILE || r == -ENFILE || r == -EAGAIN || r == -ENOMEM;
}
