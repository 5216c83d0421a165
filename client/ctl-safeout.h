// SPDX-License-Identifier: MIT
// ctl-safeout: what mcpctl prints for a person carries no terminal control sequences but its own
// colours (none that could hide text). Server names, tool descriptions, a server's stderr and
// config values come from files and programs mcpd does not trust; printed raw, an escape sequence
// in them could retitle the terminal, hide lines, move the cursor or write to the clipboard.
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/strbuf.h"

/*
 * The longest escape sequence passed through: ESC [ then parameters (digits and ';') then 'm'
 * (SGR: colours and weights, which only change how text looks). mcpctl's own are 5 bytes; this
 * leaves room for any colour a terminal knows ("ESC[38;5;255m" is 11) and bounds what is held
 * back while a sequence is undecided.
 */
#define SAFEOUT_MAX_SEQ 24

/* A filter's state between chunks: an undecided escape sequence or UTF-8 lead byte. */
typedef struct SafeOut {
    char held[SAFEOUT_MAX_SEQ];
    size_t n_held;
} SafeOut;

/*
 * Append in[0..n) to out with every control character shown instead of sent: C0 controls other
 * than newline and tab as ^X (ESC as ^[, CR as ^M), DEL as ^?, the C1 controls U+0080-U+009F as
 * \u0080-style text. Only SGR sequences (ESC [ digits/';' m) that set nothing but mcpctl's own
 * colours (reset, bold, red, green, yellow, default) pass unchanged; any other, which could hide
 * text (concealed ESC[8m, a background, a dark foreground), is shown like every escape. A
 * sequence or UTF-8 character cut by the chunk's end is held for the next call.
 */
void safeout_filter(SafeOut *st, const char *in, size_t n, StrBuf *out);
/* Append what is still held, shown as text (the stream ends). */
void safeout_flush(SafeOut *st, StrBuf *out);
/*
 * From now on stdout (unless keep_stdout: it carries JSON) and stderr pass through the filter.
 * Returns false if a stream could not be wrapped (it is then left as it was).
 */
bool safeout_install(bool keep_stdout);
