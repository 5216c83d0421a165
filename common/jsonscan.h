// SPDX-License-Identifier: MIT
// jsonscan: a validating JSON scanner that allocates nothing and records where members are.
// It lets the hot path (tools/call and its answer) forward bytes without building trees.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/json.h"

/*
 * The scanner refuses whatever json_parse_full() refuses (nesting past JSON_MAX_DEPTH, more than
 * JSON_MAX_VALUES values, invalid UTF-8, lone surrogate escapes), so bytes it accepts may be
 * forwarded as they are; the caller then falls back to the tree parser, which names the problem.
 */
#define JSONSCAN_MAX_DEPTH JSON_MAX_DEPTH

/* Bytes of one JSON value inside a buffer; p == NULL: absent. */
typedef struct JsonSpan {
    const char *p;
    size_t n;
} JsonSpan;

/** Whether s[0..n) is exactly one valid JSON value (RFC 8259, UTF-8 checked), with whitespace. */
bool jsonscan_valid(const char *s, size_t n);
/**
 * s[0..n) must be one valid JSON object. For each of names (all distinct), out[i] is the span of
 * that member's value, or absent. Returns the number of members, or -1 when s is not one valid
 * object, when a wanted member appears twice, or when a member name uses escapes (any of these: use
 * a full parser; every span is then absent).
 */
int jsonscan_members(const char *s, size_t n, const char *const *names, size_t n_names,
                     JsonSpan *out);
/**
 * jsonscan_members() and, in the same pass, jsonscan_members() of the value of names[nested]
 * when it is an object: its members inner_names into inner_out, their count into *inner_countp
 * (-1 when that member is absent or not an object, inner_out then all absent). Returns -1 as
 * jsonscan_members() does, also for an escaped name or a duplicate wanted name inside it.
 */
int jsonscan_members_nested(const char *s, size_t n, const char *const *names, size_t n_names,
                            JsonSpan *out, size_t nested, const char *const *inner_names,
                            size_t n_inner, JsonSpan *inner_out, int *inner_countp);
/* Values of names past this many are not reported in JsonscanLevel.plain (its bits). */
#define JSONSCAN_PLAIN_MAX 32

/* One level of an object as jsonscan_object() looks into it: what is wanted, what was found. */
typedef struct JsonscanLevel {
    const char *const *names; /* in: the member names wanted, all distinct */
    size_t n_names;
    JsonSpan *out;  /* out: n_names spans, each absent when that member is not there */
    int count;      /* out: members of the object; -1 when invalid, or (inner) not looked into */
    uint32_t plain; /* out: bit i (i < JSONSCAN_PLAIN_MAX) when out[i] is a string without
                       escapes, as jsonscan_is_plain_string(out[i]) would say */
} JsonscanLevel;
/**
 * jsonscan_members_nested() with each level in a JsonscanLevel, also telling which recorded
 * values are strings without escapes, so that the caller need not scan them again with
 * jsonscan_is_plain_string(). inner may be NULL: then nothing is looked into. Returns
 * top->count: the number of members, or -1 as jsonscan_members() (every span is then absent,
 * both counts -1).
 */
int jsonscan_object(const char *s, size_t n, JsonscanLevel *top, size_t nested,
                    JsonscanLevel *inner);
/** A string value without escapes (so its bytes are its canonical JSON text). */
bool jsonscan_is_plain_string(JsonSpan v);
/** An integer written as one (no fraction or exponent), small enough for int64. */
bool jsonscan_is_int(JsonSpan v, int64_t *outp);
/** The span is exactly text (inline: for a literal text its length is known at compile time). */
static inline bool jsonscan_span_eq(JsonSpan v, const char *text)
{
    size_t n = strlen(text);

    return v.p && v.n == n && memcmp(v.p, text, n) == 0;
}
/**
 * Find the top-level member name of the object s[0..n) without validating or limiting it:
 * brackets are counted, not matched, so any depth costs no stack. For recovering the id of a
 * message the parser refused (too deep, too large, bad UTF-8) so the refusal can answer it;
 * the span found must still be parsed. Returns whether the member was found.
 */
bool jsonscan_skim_member(const char *s, size_t n, const char *name, JsonSpan *outp);
