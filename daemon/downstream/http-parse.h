// SPDX-License-Identifier: MIT
// http-parse: the head of one HTTP/1.1 request (request line and header fields), checked and
// bounded, parsed in place without allocation.
#pragma once

#include <stdbool.h>
#include <stddef.h>

/*
 * A request's head (request line and fields) is at most this long: an MCP client sends a dozen
 * short fields (Host, Accept, Content-Type, Authorization, Mcp-Session-Id, MCP-Protocol-Version,
 * Mcp-Method, Mcp-Name, a few of its own), well under 2 KiB; 16 KiB is the common server default
 * (nginx's large_client_header_buffers is 4 x 8 KiB, Node's --max-http-header-size 16 KiB).
 */
#define HTTP_MAX_HEAD 16384
/* Header fields per request: what an MCP client sends is a dozen or two; 64 is far beyond. */
#define HTTP_MAX_FIELDS 64
/* Bytes of a request target: the endpoint paths are short; a long one is not ours (414). */
#define HTTP_MAX_TARGET 2048

/* Outcomes of http_parse_head() besides an HTTP status code for a refusal. */
enum {
    HTTP_PARSE_OK = 0,
    HTTP_PARSE_AGAIN = 1, /* the head has not ended yet */
};

typedef struct HttpField {
    const char *name, *value; /* in the request's buffer, not NUL-terminated */
    size_t name_len, value_len;
} HttpField;

typedef struct HttpHead {
    const char *method, *target;
    size_t method_len, target_len;
    int minor; /* HTTP/1.minor */
    HttpField fields[HTTP_MAX_FIELDS];
    size_t n_fields;
    size_t head_len;       /* bytes of the head, up to and with its empty line */
    size_t content_length; /* 0 without a Content-Length */
    bool chunked;          /* Transfer-Encoding: chunked (http-chunked.c decodes the body) */
    bool keep_alive;       /* the connection may carry another request after this one */
} HttpHead;

/**
 * Parse the head at buf[0..n). Returns HTTP_PARSE_OK with *h filled (pointing into buf),
 * HTTP_PARSE_AGAIN when the empty line ending it is not there yet (and n is still under
 * HTTP_MAX_HEAD), or the status code to refuse it with: 400 (malformed), 414 (target too long),
 * 431 (head or field count too large), 501 (a transfer coding other than chunked alone), 505
 * (not HTTP/1.x).
 * *scanp carries where the search for the head's end resumes (0 for a new request).
 */
int http_parse_head(HttpHead *h, const char *buf, size_t n, size_t *scanp);
/** The value of field name (case-insensitive), or NULL; *lenp gets its length. */
const char *http_field(const HttpHead *h, const char *name, size_t *lenp);
/** Whether field name's value is text (case-insensitive, whole value). */
bool http_field_is(const HttpHead *h, const char *name, const char *text);
/** Whether the method is m. */
bool http_method_is(const HttpHead *h, const char *m);
/** Whether a comma-separated field (Accept) lists the media type type (parameters ignored). */
bool http_field_lists(const HttpHead *h, const char *name, const char *type);
