// SPDX-License-Identifier: MIT
// jsonrpc: the JSON-RPC 2.0 message model and NDJSON framing (one message per line).
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/json.h"
#include "common/mcp.h"
#include "common/strbuf.h"

/*
 * Default bound on one message line. MCP gives no limit; 16 MiB holds the largest tool results
 * seen in practice (base64 screenshots, file dumps) while keeping one hostile peer from making
 * the daemon buffer without end. DESIGN section 3; the setting maxMessageBytes overrides it.
 */
#define JSONRPC_MAX_LINE_DEFAULT (16u * 1024u * 1024u)

/* Bytes asked of read(2) at a time: large enough that a 16 MiB message needs few calls. */
#define FRAMER_READ_CHUNK (64u * 1024u)

/* Error codes (JSONRPC_*, MCP_ERROR_*, MCPD_ERROR_*) are in common/mcp.h. */

typedef enum JsonrpcKind {
    JSONRPC_REQUEST,
    JSONRPC_NOTIFICATION,
    JSONRPC_RESPONSE,
    JSONRPC_ERROR_RESPONSE,
} JsonrpcKind;

/* One parsed message. Pointers borrow from root, which the message owns. */
typedef struct JsonrpcMsg {
    JsonrpcKind kind;
    yajl_val root;
    yajl_val id;        /* string or integer; NULL for notifications */
    const char *method; /* requests and notifications */
    yajl_val params;    /* may be NULL */
    yajl_val result;    /* responses */
    yajl_val error;     /* error responses: object with code and message */
} JsonrpcMsg;

/* Outcome of jsonrpc_msg_parse() beyond 0 (ok). */
enum {
    JSONRPC_E_PARSE = 1, /* not JSON */
    JSONRPC_E_INVALID,   /* JSON, but not a JSON-RPC 2.0 message */
    JSONRPC_E_BATCH,     /* an array: batches are not supported */
};

/**
 * Parse one line (NUL-terminated, without the newline) into m. Return 0, or a positive
 * JSONRPC_E_* with *errp set to a message (to free) and m->id set when it could be read.
 */
int jsonrpc_msg_parse(JsonrpcMsg *m, const char *line, size_t len, char **errp);
/**
 * The same with a choice of UTF-8 handling (jsonrpc_msg_parse repairs). A message past a
 * parser limit (JSON_MAX_DEPTH, JSON_MAX_VALUES, or invalid UTF-8 when refused) is
 * JSONRPC_E_INVALID with its id when it is a request or notification; when it is a response it
 * comes back (0) as an error response to the same id whose message names the limit.
 */
int jsonrpc_msg_parse_mode(JsonrpcMsg *m, const char *line, size_t len, JsonUtf8Mode mode,
                           char **errp);
/** Release a message; safe on a zeroed value. */
void jsonrpc_msg_deinit(JsonrpcMsg *m);

/** Append a result response line (with "\n"). id may be NULL (written as null). */
void jsonrpc_write_result(StrBuf *sb, yajl_val id, yajl_val result);
/** Append a result response line whose result is already serialised JSON text. */
void jsonrpc_write_result_raw(StrBuf *sb, yajl_val id, const char *result, size_t n);
/** Append an error response line. data may be NULL. */
void jsonrpc_write_error(StrBuf *sb, yajl_val id, int code, const char *message, yajl_val data);
/** Append a request line with an integer id. params may be NULL. */
void jsonrpc_write_request(StrBuf *sb, uint64_t id, const char *method, yajl_val params);
/** Append a notification line. params may be NULL. */
void jsonrpc_write_notification(StrBuf *sb, const char *method, yajl_val params);
/**
 * Whether s[0..n) can go between quotes as it is: printable ASCII without '"' or '\\' (a name
 * checked once, then copied with memcpy instead of escaped per message).
 */
bool jsonrpc_text_plain(const char *s, size_t n);

/*
 * NDJSON framer: bytes in, complete lines out. The scan position is kept so every byte is
 * looked at once, however the line arrives. A line longer than max is reported once and then
 * discarded up to its newline, so a reader may either drop the peer or skip the line.
 */
typedef struct Framer {
    char *buf;
    size_t start; /* first byte of the current line */
    size_t len;   /* end of valid data */
    size_t cap;
    size_t scan; /* next byte to look at for '\n' */
    size_t max;
    bool discarding;
} Framer;

/* Outcomes of framer_next() beyond 0 (a line). */
enum {
    FRAMER_E_AGAIN = 1, /* no complete line yet */
    FRAMER_E_TOOBIG,    /* a line exceeded max; it is being skipped */
};

/** Set up an empty framer with a line limit. */
void framer_init(Framer *f, size_t max);
/** Release the buffer; safe on a zeroed value. */
void framer_deinit(Framer *f);
/** Copy n bytes in. */
void framer_feed(Framer *f, const void *data, size_t n);
/**
 * read(2) once from fd into the framer. Return bytes read (> 0), 0 on EOF, or -errno
 * (-EAGAIN when a non-blocking fd has nothing).
 */
ssize_t framer_read_fd(Framer *f, int fd);
/**
 * Take the next complete line: *linep points into the framer (NUL-terminated, trailing CR
 * removed) and stays valid until the next call. Blank lines are skipped.
 */
int framer_next(Framer *f, char **linep, size_t *lenp);
/*
 * A read buffer past this grew for a line longer than a read (a tools/list page, a large
 * result); ordinary messages fit in one. Kept, it would hold megabytes per connection for good.
 */
#define FRAMER_KEEP_BYTES (2 * FRAMER_READ_CHUNK)
/**
 * Free a buffer grown past FRAMER_KEEP_BYTES once it holds nothing pending (call between reads,
 * after the lines are handled); the next read starts a fresh chunk.
 */
void framer_release_big(Framer *f);
/** Bytes buffered that are not yet a complete line. */
static inline size_t framer_pending(const Framer *f)
{
    return f->len - f->start;
}
