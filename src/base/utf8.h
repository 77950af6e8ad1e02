/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The one UTF-8 validator. Well-formed is RFC 3629's table (Unicode's table
 * 3-7): no overlong forms, no surrogates (U+D800..U+DFFF), nothing above
 * U+10FFFF, no truncated sequence. One rule, two ways in: byte by byte with
 * a small state, for bytes that arrive in pieces (a WebSocket text message
 * split over frames and reads), and one sequence at a pointer, for the
 * escapers that replace what is not well-formed (base/jstring.h,
 * base/text-escape.h, base/prom-text.h, base/json-util.h).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where a byte-by-byte check stands; zero-initialised: between characters. */
struct utf8_check {
        uint8_t need;   /* continuation bytes still to come */
        uint8_t lo, hi; /* the range the next one must be in */
};

/* Feeds one byte: false when b cannot continue well-formed UTF-8 (the
 * check then says nothing more: start a new one). */
bool utf8_check_byte(struct utf8_check *c, uint8_t b);
/* Whether the check stands between characters: the bytes fed so far do not
 * end inside a sequence. */
static inline bool utf8_check_complete(const struct utf8_check *c)
{
        return c->need == 0;
}
/* Whether buf[0..len) is well-formed UTF-8 from end to end (a NUL byte is
 * U+0000: well-formed). */
bool utf8_valid(const void *buf, size_t len);
/* Length of the well-formed UTF-8 sequence at s (1..4), or 0. Reads no
 * further than the first byte that breaks the sequence, so a NUL
 * terminator stops it. */
size_t utf8_seq_len(const unsigned char *s);
