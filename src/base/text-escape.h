/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Text that a less trusted party made (a workspace file name, a container's
 * output, an env's message), made safe to show on one line of the daemon's
 * text log and in any JSON string: every byte that could end a line, move a
 * terminal's cursor, reorder what a reader sees, or is not well-formed
 * UTF-8 becomes "\xNN" (one per byte); everything else is copied as it is.
 *
 * Escaped: C0 controls and DEL, bytes of no well-formed UTF-8 sequence
 * (base/utf8.h's utf8_seq_len()), C1 controls (U+0080..U+009F), the line
 * and paragraph separators U+2028/U+2029 and the bidirectional controls
 * U+202A..U+202E and U+2066..U+2069.
 *
 * A backslash is copied as it is, on purpose: the escaping is idempotent
 * (its output contains nothing it would escape), so text escaped where it
 * enters (a verdict's reason) and again where it leaves (the text log) is
 * escaped once. The price: a name spelled "a\x0ab" reads like an escaped
 * "a<LF>b" - it can still forge no line.
 */
#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"

/* True when s (NUL-terminated) has nothing text_escape() would change. */
bool text_is_safe(const char *s);
/* Appends s (NUL-terminated), escaped. */
void text_escape_append(struct strbuf *sb, const char *s);
/* Appends the len bytes at s, escaped; a NUL among them is "\x00" (a
 * container's output is bytes, NULs included, not a C string). */
void text_escape_mem_append(struct strbuf *sb, const char *s, size_t len);
/* s escaped, in a new string (never NULL). */
char *text_escape(const char *s);

/*
 * The same, but a backslash becomes "\\" too: reversible, so two different
 * byte strings never read the same (a file name with byte 0xff is "\xff", one
 * spelled backslash-x-f-f is "\\xff", one with U+FFFD shows U+FFFD). For
 * text that is evidence (validate's reports); not idempotent, so it is
 * applied once, where the bytes are read. Its output is text_is_safe().
 */
void text_escape_exact_append(struct strbuf *sb, const char *s);
char *text_escape_exact(const char *s);
