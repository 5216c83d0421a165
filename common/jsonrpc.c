// SPDX-License-Identifier: MIT
// jsonrpc: the JSON-RPC 2.0 message model and NDJSON framing (one message per line).

#include <errno.h>
#include <inttypes.h>

#include "common/jsonrpc.h"
#include "common/jsonscan.h"

static int invalid(JsonrpcMsg *m, char **errp, const char *why)
{
    if (errp)
        *errp = xstrdup(why);
    (void)m;
    return JSONRPC_E_INVALID;
}

static bool valid_id(yajl_val id)
{
    return id && (YAJL_IS_STRING(id) || YAJL_IS_INTEGER(id));
}

/*
 * Ids are short (mcpd's own are integers, agents' are integers or UUID-like strings); a longer
 * one in a refused message is not worth parsing just to echo it.
 */
#define REFUSED_ID_MAX 256

/* The id of a message the parser refused, recovered without limits, or NULL. */
static yajl_val refused_id(const char *line, size_t len)
{
    JsonSpan span;
    yajl_val id = NULL;

    if (!jsonscan_skim_member(line, len, "id", &span) || span.n > REFUSED_ID_MAX)
        return NULL;
    json_parse_full(&id, span.p, span.n, JSON_UTF8_REPAIR, NULL);
    return valid_id(id) ? id : json_free(id);
}

/* Make m an error response to id (taken) with code -32603 and message. */
static void as_error_response(JsonrpcMsg *m, yajl_val id, const char *message)
{
    yajl_val error = json_object_new();

    json_object_set(error, "code", json_int_new(JSONRPC_INTERNAL_ERROR));
    json_object_set(error, "message", json_string_new_lossy(message, strlen(message)));
    memset(m, 0, sizeof(*m));
    m->root = json_object_new();
    json_object_set(m->root, "jsonrpc", json_string_new("2.0"));
    json_object_set(m->root, "id", id);
    json_object_set(m->root, "error", error);
    m->id = id;
    m->error = error;
    m->kind = JSONRPC_ERROR_RESPONSE;
}

/*
 * The message is JSON-shaped but beyond a limit (depth, values, UTF-8 when refused). A request
 * or notification is refused as invalid, with its id when it can be found, so the sender gets
 * an answer naming the limit. A response is turned into an error response that names it, so
 * the call waiting for it fails at once with a clear message instead of timing out.
 */
static int refused(JsonrpcMsg *m, const char *line, size_t len, char **errp)
{
    JsonSpan span;

    m->root = refused_id(line, len);
    m->id = m->root;
    if (jsonscan_skim_member(line, len, "method", &span) ||
        !(jsonscan_skim_member(line, len, "result", &span) ||
          jsonscan_skim_member(line, len, "error", &span)) ||
        !m->id)
        return JSONRPC_E_INVALID;
    as_error_response(m, m->id, *errp); /* already says what and why */
    return 0;
}

/*
 * A message with an id, no "method" and a "result" or an "error", that breaks rule: the answer
 * to a request, but not a valid one. It becomes an error response to that id naming the rule,
 * so the request waiting for it fails at once instead of timing out; anything else is refused.
 */
static int bad_response(JsonrpcMsg *m, char **errp, const char *rule)
{
    yajl_val root = m->root;

    if (!m->id || json_get(root, "method") ||
        !(json_get(root, "result") || json_get(root, "error")))
        return invalid(m, errp, rule);
    _cleanup_free_ char *message = xasprintf("a malformed answer (%s)", rule);
    as_error_response(m, json_copy(m->id), message);
    json_free(root);
    return 0;
}

int jsonrpc_msg_parse(JsonrpcMsg *m, const char *line, size_t len, char **errp)
{
    return jsonrpc_msg_parse_mode(m, line, len, JSON_UTF8_REPAIR, errp);
}

int jsonrpc_msg_parse_mode(JsonrpcMsg *m, const char *line, size_t len, JsonUtf8Mode mode,
                           char **errp)
{
    _cleanup_free_ char *why = NULL;
    yajl_val version, id, method;
    int r;

    memset(m, 0, sizeof(*m));
    if (memchr(line, '\0', len)) {
        if (errp)
            *errp = xstrdup("NUL byte inside a message");
        return JSONRPC_E_PARSE;
    }
    r = json_parse_full(&m->root, line, len, mode, &why);
    if (r != 0) {
        r = r == JSON_E_SYNTAX ? JSONRPC_E_PARSE : refused(m, line, len, &why);
        if (r != 0 && errp) {
            *errp = why;
            why = NULL;
        }
        return r;
    }
    if (YAJL_IS_ARRAY(m->root)) {
        if (errp)
            *errp = xstrdup("batches are not supported");
        return JSONRPC_E_BATCH;
    }
    if (!YAJL_IS_OBJECT(m->root))
        return invalid(m, errp, "a message must be a JSON object");

    id = json_get(m->root, "id");
    if (valid_id(id))
        m->id = id;
    version = json_get(m->root, "jsonrpc");
    if (!YAJL_IS_STRING(version) || !streq(version->u.string, "2.0"))
        return bad_response(m, errp, "\"jsonrpc\" must be \"2.0\"");

    method = json_get(m->root, "method");
    if (method) {
        if (!YAJL_IS_STRING(method))
            return invalid(m, errp, "\"method\" must be a string");
        m->method = method->u.string;
        m->params = json_get(m->root, "params");
        if (m->params && !YAJL_IS_OBJECT(m->params) && !YAJL_IS_ARRAY(m->params))
            return invalid(m, errp, "\"params\" must be an object");
        /* An id of null is not a request id: MCP forbids it, so treat it as a notification. */
        if (!id || YAJL_IS_NULL(id)) {
            m->kind = JSONRPC_NOTIFICATION;
            return 0;
        }
        if (!m->id)
            return invalid(m, errp, "\"id\" must be a string or an integer");
        m->kind = JSONRPC_REQUEST;
        return 0;
    }
    m->result = json_get(m->root, "result");
    m->error = json_get(m->root, "error");
    if (m->result && !m->error) {
        if (!m->id)
            return invalid(m, errp, "a response needs a string or integer \"id\"");
        m->kind = JSONRPC_RESPONSE;
        return 0;
    }
    if (m->error && !m->result) {
        if (!YAJL_IS_OBJECT(m->error))
            return bad_response(m, errp, "\"error\" must be an object");
        m->kind = JSONRPC_ERROR_RESPONSE;
        return 0;
    }
    return bad_response(
        m, errp, "a message needs \"method\", \"result\" or \"error\", one of the last two only");
}

void jsonrpc_msg_deinit(JsonrpcMsg *m)
{
    json_free(m->root);
    memset(m, 0, sizeof(*m));
}

static void write_head(StrBuf *sb, yajl_val id)
{
    strbuf_puts(sb, "{\"jsonrpc\":\"2.0\",\"id\":");
    json_write(sb, id);
}

void jsonrpc_write_result(StrBuf *sb, yajl_val id, yajl_val result)
{
    write_head(sb, id);
    strbuf_puts(sb, ",\"result\":");
    if (result)
        json_write(sb, result);
    else
        strbuf_puts(sb, "{}");
    strbuf_puts(sb, "}\n");
}

void jsonrpc_write_result_raw(StrBuf *sb, yajl_val id, const char *result, size_t n)
{
    write_head(sb, id);
    strbuf_puts(sb, ",\"result\":");
    strbuf_append(sb, result, n);
    strbuf_puts(sb, "}\n");
}

void jsonrpc_write_error(StrBuf *sb, yajl_val id, int code, const char *message, yajl_val data)
{
    write_head(sb, id);
    strbuf_printf(sb, ",\"error\":{\"code\":%d,\"message\":", code);
    json_write_string(sb, message, strlen(message));
    if (data) {
        strbuf_puts(sb, ",\"data\":");
        json_write(sb, data);
    }
    strbuf_puts(sb, "}}\n");
}

void jsonrpc_write_request(StrBuf *sb, uint64_t id, const char *method, yajl_val params)
{
    strbuf_printf(sb, "{\"jsonrpc\":\"2.0\",\"id\":%" PRIu64 ",\"method\":", id);
    json_write_string(sb, method, strlen(method));
    if (params) {
        strbuf_puts(sb, ",\"params\":");
        json_write(sb, params);
    }
    strbuf_puts(sb, "}\n");
}

void jsonrpc_write_notification(StrBuf *sb, const char *method, yajl_val params)
{
    strbuf_puts(sb, "{\"jsonrpc\":\"2.0\",\"method\":");
    json_write_string(sb, method, strlen(method));
    if (params) {
        strbuf_puts(sb, ",\"params\":");
        json_write(sb, params);
    }
    strbuf_puts(sb, "}\n");
}

void framer_init(Framer *f, size_t max)
{
    memset(f, 0, sizeof(*f));
    f->max = max ? max : JSONRPC_MAX_LINE_DEFAULT;
}

void framer_deinit(Framer *f)
{
    free(f->buf);
    memset(f, 0, sizeof(*f));
}

/* Make room for n more bytes, moving the current line to the front first. */
static void framer_reserve(Framer *f, size_t n)
{
    if (f->start > 0) {
        size_t keep = f->len - f->start;
        memmove(f->buf, f->buf + f->start, keep);
        f->scan -= f->start;
        f->len = keep;
        f->start = 0;
    }
    if (f->len + n + 1 <= f->cap)
        return;
    size_t cap = f->cap ? f->cap : FRAMER_READ_CHUNK;
    while (cap < f->len + n + 1)
        cap *= 2;
    f->buf = xrealloc(f->buf, cap);
    f->cap = cap;
}

void framer_feed(Framer *f, const void *data, size_t n)
{
    if (f->cap - f->len < n + 1)
        framer_reserve(f, n);
    memcpy(f->buf + f->len, data, n);
    f->len += n;
}

ssize_t framer_read_fd(Framer *f, int fd)
{
    ssize_t r;

    /*
     * Everything read so far is taken: the next bytes go to the front of the buffer, whose
     * cache lines the last read warmed, not on past them through the whole buffer (a cold line
     * or two per message for the kernel's copy and the scan, until the buffer wrapped).
     */
    if (f->start == f->len)
        f->start = f->scan = f->len = 0;
    if (f->cap - f->len < FRAMER_READ_CHUNK + 1)
        framer_reserve(f, FRAMER_READ_CHUNK);
    do {
        r = read(fd, f->buf + f->len, f->cap - f->len - 1);
    } while (r < 0 && errno == EINTR);
    if (r < 0)
        return -errno;
    f->len += (size_t)r;
    return r;
}

int framer_next(Framer *f, char **linep, size_t *lenp)
{
    for (;;) {
        char *nl = f->scan < f->len ? memchr(f->buf + f->scan, '\n', f->len - f->scan) : NULL;

        if (!nl) {
            f->scan = f->len;
            if (f->discarding) {
                /* Keep nothing of a line being skipped. */
                f->start = f->scan = f->len = 0;
                return FRAMER_E_AGAIN;
            }
            if (f->len - f->start > f->max) {
                f->discarding = true;
                f->start = f->scan = f->len = 0;
                return FRAMER_E_TOOBIG;
            }
            return FRAMER_E_AGAIN;
        }
        size_t end = (size_t)(nl - f->buf);
        size_t begin = f->start;
        f->start = f->scan = end + 1;
        if (f->discarding) {
            f->discarding = false;
            continue;
        }
        size_t n = end - begin;
        if (n > f->max) {
            return FRAMER_E_TOOBIG;
        }
        /* A line of only whitespace (CRLF endings, a host's stray blank line) carries no
         * message: skipped, as an empty one is, rather than refused as malformed JSON. */
        size_t k = 0;
        while (k < n &&
               (f->buf[begin + k] == ' ' || f->buf[begin + k] == '\t' || f->buf[begin + k] == '\r'))
            k++;
        if (k == n)
            continue;
        if (f->buf[end - 1] == '\r')
            n--;
        f->buf[begin + n] = '\0';
        *linep = f->buf + begin;
        *lenp = n;
        return 0;
    }
}

void framer_release_big(Framer *f)
{
    if (f->cap <= FRAMER_KEEP_BYTES || f->start != f->len || f->discarding)
        return;
    free(f->buf);
    f->buf = NULL;
    f->cap = f->len = f->start = f->scan = 0;
}

bool jsonrpc_text_plain(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        /* One compare for the printable ASCII range [0x20, 0x80). */
        if ((unsigned)(c - 0x20) >= 0x60 || c == '"' || c == '\\')
            return false;
    }
    return true;
}
