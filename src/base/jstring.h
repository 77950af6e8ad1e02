/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A JSON string literal from arbitrary bytes, for writers that must never
 * produce an unparsable document whatever they are handed (a hostile mount
 * point in the probe's report, a container's output quoted in the daemon's
 * JSON log): '"' and '\\' are escaped, control bytes become \u00XX, and
 * bytes that are not part of a well-formed UTF-8 sequence (RFC 3629: no
 * overlongs, no surrogates, <= U+10FFFF) become U+FFFD, one per byte.
 * Everything else, valid multi-byte sequences and DEL included, is copied
 * as it is.
 */
#include <stddef.h>

#include "base/strbuf.h"

/* Length of the well-formed UTF-8 sequence at s (1..4), or 0. Reads no
 * further than the first byte that breaks the sequence, so a NUL
 * terminator stops it. */
size_t utf8_seq_len(const unsigned char *s);
/* Appends s (NUL-terminated) as a JSON string literal, quotes included. */
void jstring_append(struct strbuf *sb, const char *s);
