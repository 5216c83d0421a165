// SPDX-License-Identifier: MIT
// httpc: a raw HTTP/1.1 client for the tests of mcpd's own HTTP endpoint: one request on a
// connection, its response read whole (Content-Length, chunked, or to the close).
#pragma once

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "common/util.h"
#include "tests/integration/harness.h"

typedef struct HcResponse {
    int status; /* 0: no response */
    char *head; /* status line and fields */
    char *body; /* the body, de-chunked */
} HcResponse;

static inline void hc_free(HcResponse *r)
{
    free(r->head);
    free(r->body);
    *r = (HcResponse){0};
}

/* A connection to mcpd's loopback port. */
static inline int hc_tcp(int port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The port mcpd logged for its loopback endpoint, or -1. */
static inline int hc_port(const Harness *h)
{
    if (!h_wait_log(h, "serving MCP over HTTP on", H_WAIT_MS))
        return -1;
    _cleanup_free_ char *log = h_read_file(h->log);
    const char *p = log ? strstr(log, "serving MCP over HTTP on") : NULL;
    p = p ? strstr(p, " port ") : NULL;
    return p ? atoi(p + 6) : -1;
}

/* A field's value in a response head (case-insensitive), copied, or NULL. */
static inline char *hc_field(const HcResponse *r, const char *name)
{
    size_t n = strlen(name);

    for (const char *l = r->head ? strstr(r->head, "\r\n") : NULL; l; l = strstr(l + 2, "\r\n"))
        if (strncasecmp(l + 2, name, n) == 0 && l[2 + n] == ':') {
            const char *v = l + 3 + n, *e;
            while (*v == ' ')
                v++;
            e = strstr(v, "\r\n");
            return xstrndup(v, e ? (size_t)(e - v) : strlen(v));
        }
    return NULL;
}

/* Whether buf[0..n) holds a whole response; the de-chunked body goes to *bodyp then. */
static inline bool hc_complete(const char *buf, size_t n, char **bodyp)
{
    const char *end = memmem(buf, n, "\r\n\r\n", 4);

    if (!end)
        return false;
    size_t head = (size_t)(end - buf) + 4;
    _cleanup_free_ char *h = xstrndup(buf, head);
    HcResponse tmp = {.head = h};
    _cleanup_free_ char *cl = hc_field(&tmp, "Content-Length"),
                        *te = hc_field(&tmp, "Transfer-Encoding");
    tmp.head = NULL;
    if (cl) {
        size_t len = (size_t)atol(cl);
        if (n < head + len)
            return false;
        *bodyp = xstrndup(buf + head, len);
        return true;
    }
    if (!te)
        return false; /* to the close */
    StrBuf sb = STRBUF_INIT;
    size_t pos = head;
    for (;;) {
        const char *crlf = memmem(buf + pos, n - pos, "\r\n", 2);
        if (!crlf)
            break;
        size_t len = strtoul(buf + pos, NULL, 16), at = (size_t)(crlf - buf) + 2;
        if (len == 0) {
            if (n < at + 2)
                break;
            strbuf_putc(&sb, 0);
            *bodyp = strbuf_detach(&sb, NULL);
            return true;
        }
        if (n < at + len + 2)
            break;
        strbuf_append(&sb, buf + at, len);
        pos = at + len + 2;
    }
    strbuf_deinit(&sb);
    return false;
}

/* Read one response from fd, for at most timeout_ms. */
static inline HcResponse hc_read(int fd, int timeout_ms)
{
    StrBuf sb = STRBUF_INIT;
    HcResponse r = {0};
    char buf[65536], *body = NULL;
    uint64_t end = now_ms() + (uint64_t)timeout_ms;

    while (now_ms() < end) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 50) <= 0)
            continue;
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0) {
            const char *e = sb.len ? memmem(sb.data, sb.len, "\r\n\r\n", 4) : NULL;
            if (e)
                body = xstrndup(e + 4, sb.len - (size_t)(e + 4 - sb.data));
            break;
        }
        strbuf_append(&sb, buf, (size_t)n);
        if (hc_complete(sb.data, sb.len, &body))
            break;
    }
    if (sb.len > 12 && memcmp(sb.data, "HTTP/1.1 ", 9) == 0) {
        r.status = atoi(sb.data + 9);
        const char *e = memmem(sb.data, sb.len, "\r\n\r\n", 4);
        r.head = xstrndup(sb.data, e ? (size_t)(e - sb.data) + 2 : sb.len);
        r.body = body ? body : xstrdup("");
        body = NULL;
    }
    free(body);
    strbuf_deinit(&sb);
    return r;
}

/* Send raw bytes and read one response. */
static inline HcResponse hc_raw(int fd, const char *req, size_t n)
{
    if (!h_raw_write(fd, req, n))
        return (HcResponse){0};
    return hc_read(fd, H_WAIT_MS);
}

/*
 * A POST of body to path with extra header lines (each ending in \r\n), on fd; Host
 * "127.0.0.1:port" (port 0: "localhost").
 */
static inline HcResponse hc_post(int fd, int port, const char *path, const char *headers,
                                 const char *body)
{
    _cleanup_free_ char *host = port ? xasprintf("127.0.0.1:%d", port) : xstrdup("localhost");
    _cleanup_free_ char *req =
        xasprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
                  "Accept: application/json, text/event-stream\r\n%sContent-Length: %zu\r\n\r\n%s",
                  path, host, headers ? headers : "", strlen(body), body);
    return hc_raw(fd, req, strlen(req));
}

#define HC_INITIALIZE                                                                              \
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"     \
    "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"httpc\",\"version\":\"1\"}}}"
