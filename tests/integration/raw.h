// SPDX-License-Identifier: MIT
// raw: an agent on mcpd's socket that writes exact bytes and reads every message, for the tests
// that choose their own ids, tokens and answers (multiplex, tasks).
#pragma once

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/json.h"
#include "common/jsonrpc.h"
#include "common/util.h"
#include "tests/integration/harness.h"

/* ---- a raw agent: exact bytes on the socket, ids and tokens of our choosing ---- */

typedef struct Raw {
    int fd;
    Framer in;
} Raw;

static inline void raw_open(Raw *r, const Harness *h)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};

    r->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (strlen(h->socket) >= sizeof(sa.sun_path))
        abort();
    memcpy(sa.sun_path, h->socket, strlen(h->socket) + 1);
    if (connect(r->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        fprintf(stderr, "connect: %s\n", strerror(errno));
        exit(1);
    }
    framer_init(&r->in, JSONRPC_MAX_LINE_DEFAULT);
}

static inline void raw_close(Raw *r)
{
    if (r->fd >= 0)
        close(r->fd);
    r->fd = -1;
    framer_deinit(&r->in);
}

static inline void raw_send(Raw *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void raw_send(Raw *r, const char *fmt, ...)
{
    _cleanup_free_ char *line = NULL;
    va_list ap;

    va_start(ap, fmt);
    if (vasprintf(&line, fmt, ap) < 0)
        abort();
    va_end(ap);
    size_t n = strlen(line);
    line = realloc(line, n + 2);
    line[n] = '\n';
    CHECK(write(r->fd, line, n + 1) == (ssize_t)(n + 1));
}

/* The next line as mcpd wrote it (to free), or NULL when none arrives within timeout_ms. */
static inline char *raw_read_text(Raw *r, int timeout_ms)
{
    uint64_t deadline = now_ms() + (uint64_t)timeout_ms;

    for (;;) {
        char *line;
        size_t len;
        if (framer_next(&r->in, &line, &len) == 0)
            return xstrndup(line, len);
        uint64_t now = now_ms();
        if (now >= deadline)
            return NULL;
        struct pollfd pfd = {r->fd, POLLIN, 0};
        if (poll(&pfd, 1, (int)(deadline - now)) <= 0)
            continue;
        ssize_t n = framer_read_fd(&r->in, r->fd);
        if (n == 0 || (n < 0 && n != -EAGAIN && n != -EINTR))
            return NULL;
    }
}

/* The next message, or NULL when none arrives within timeout_ms (or the link closed). */
static inline yajl_val raw_read(Raw *r, int timeout_ms)
{
    _cleanup_free_ char *line = raw_read_text(r, timeout_ms);

    return line ? json_parse(line, NULL) : NULL;
}

/* The next message that is not a notification of the given method. */
static inline yajl_val raw_read_skip(Raw *r, int timeout_ms, const char *skip)
{
    for (;;) {
        yajl_val m = raw_read(r, timeout_ms);
        if (!m || !streq(json_get_string(m, "method"), skip))
            return m;
        json_free(m);
    }
}

/* Open and initialize an agent with the given capabilities (JSON text) and _meta (NULL: {}). */
static inline void raw_init_caps(Raw *r, const Harness *h, const char *name, const char *meta,
                                 const char *caps)
{
    raw_open(r, h);
    raw_send(r,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
             "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":%s,"
             "\"clientInfo\":{\"name\":\"%s\",\"version\":\"1\"},\"_meta\":%s}}",
             caps, name, meta ? meta : "{}");
    yajl_val m = raw_read(r, H_WAIT_MS);
    CHECK_MSG(m && json_get_object(m, "result"), "initialize of %s failed", name);
    json_free(m);
    raw_send(r, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
}

static inline void raw_init(Raw *r, const Harness *h, const char *name, const char *meta)
{
    raw_init_caps(r, h, name, meta, "{}");
}

static inline const char *result_text(yajl_val m)
{
    yajl_val content = json_get_array(json_get_object(m, "result"), "content");
    return json_get_string(json_array_at(content, 0), "text");
}
