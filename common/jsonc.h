// SPDX-License-Identifier: MIT
// jsonc: JSON with comments and trailing commas (VS Code, Zed, OpenCode, Gemini CLI) to strict
// JSON.
#pragma once

#include <stddef.h>

#include <yajl/yajl_tree.h>

/*
 * JSONC as the editors read it: // line comments, block comments, and a comma before a
 * closing } or ]. Everything else is strict JSON.
 */

/**
 * Strict JSON text for len bytes of JSONC (to free): comments become spaces and a trailing
 * comma becomes a space, so every byte keeps its line and column. NULL on an unterminated
 * block comment or string, with *whyp (to free) naming the line and column where it began.
 */
char *jsonc_to_json(const char *text, size_t len, char **whyp);

/**
 * Parse JSONC (or plain JSON) into a tree. A duplicate key keeps its last value, as
 * JSON.parse does. NULL on failure with *whyp (to free): "line L, column C: what".
 */
yajl_val jsonc_parse(const char *text, size_t len, char **whyp);

/** Parse strict JSON (no comments) with the same line:column errors and duplicate rule. */
yajl_val jsonc_parse_strict(const char *text, size_t len, char **whyp);

/** Keep the last value of every duplicate key, recursively (JSON.parse's rule). */
void jsonc_dedupe(yajl_val v);

/** 1-based line and column (in bytes) of offset in text. */
void jsonc_position(const char *text, size_t offset, size_t *linep, size_t *colp);
