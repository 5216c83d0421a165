// SPDX-License-Identifier: MIT
// tokens: an estimate of the tokens a model's tokenizer makes of a text (tool definitions).

#include <stdbool.h>
#include <string.h>

#include "common/json.h"
#include "common/tokens.h"

/* Letters per token in a word, digits per token in a number, other bytes per token. */
#define LETTERS_PER_TOKEN 8
#define DIGITS_PER_TOKEN  3
#define OTHER_PER_TOKEN   4

static bool is_lower(unsigned char c)
{
    return c >= 'a' && c <= 'z';
}

static bool is_upper(unsigned char c)
{
    return c >= 'A' && c <= 'Z';
}

static bool is_letter(unsigned char c)
{
    return is_lower(c) || is_upper(c) || c >= 0x80;
}

static bool is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static size_t per(size_t n, size_t k)
{
    return (n + k - 1) / k;
}

size_t tokens_estimate(const char *text, size_t len)
{
    const unsigned char *p = (const unsigned char *)text, *end = p + len;
    size_t tokens = 0;

    while (p < end) {
        const unsigned char *s = p;
        if (*p == ' ' && p + 1 < end && is_letter(p[1]))
            p++, s++; /* " word" is one piece */
        if (is_letter(*p)) {
            p++;
            /* a camelCase part ends at a capital after a small letter */
            while (p < end && is_letter(*p) && !(is_upper(*p) && is_lower(p[-1])))
                p++;
            tokens += per((size_t)(p - s), LETTERS_PER_TOKEN);
        } else if (is_digit(*p)) {
            while (p < end && is_digit(*p))
                p++;
            tokens += per((size_t)(p - s), DIGITS_PER_TOKEN);
        } else {
            while (p < end && !is_letter(*p) && !is_digit(*p) &&
                   !(*p == ' ' && p + 1 < end && is_letter(p[1])))
                p++;
            tokens += per((size_t)(p - s), OTHER_PER_TOKEN);
        }
    }
    return tokens;
}

void tokens_tool_text(StrBuf *sb, const char *name, yajl_val tool)
{
    const char *d = json_get_string(tool, "description");
    yajl_val schema = json_get(tool, "inputSchema");

    if (!name)
        name = json_get_string(tool, "name");
    strbuf_puts(sb, "{\"name\":");
    json_write_string(sb, name ? name : "", name ? strlen(name) : 0);
    if (d) {
        strbuf_puts(sb, ",\"description\":");
        json_write_string(sb, d, strlen(d));
    }
    if (schema) {
        strbuf_puts(sb, ",\"inputSchema\":");
        json_write(sb, schema);
    }
    strbuf_putc(sb, '}');
}

void tokens_cost_add(TokenCost *c, const char *name, yajl_val tool)
{
    StrBuf sb = STRBUF_INIT;

    tokens_tool_text(&sb, name, tool);
    c->tools++;
    c->bytes += sb.len;
    c->tokens += tokens_estimate(sb.data, sb.len);
    strbuf_deinit(&sb);
}
