/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A JSON string literal from arbitrary bytes, for writers that must never
 * produce an unparsable document whatever they are handed (a hostile mount
 * point in the probe's report, a container's output quoted in the daemon's
 * JSON log): '"' and '\\' are escaped, control bytes become \u00XX, and
 * bytes that are not part of a well-formed UTF-8 sequence (base/utf8.h:
 * RFC 3629, no overlongs, no surrogates, <= U+10FFFF) become U+FFFD, one
 * per byte.
 * Everything else, valid multi-byte sequences and DEL included, is copied
 * as it is.
 */
#include <stddef.h>

#include "base/strbuf.h"

/* Appends s (NUL-terminated) as a JSON string literal, quotes included. */
void jstring_append(struct strbuf *sb, const char *s);
