/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "base/text-escape.h"

#include <stddef.h>
#include <string.h>

#include "base/utf8.h"

/* Bytes of the well-formed sequence at p that is to be shown as it is (its
 * length), or 0 when its first byte is to be escaped. */
static size_t shown_len(const unsigned char *p)
{
        size_t n = utf8_seq_len(p);

        if (n == 0 || *p < 0x20 || *p == 0x7f)
                return 0;
        if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0) /* C1 controls */
                return 0;
        if (n == 3 && p[0] == 0xe2 && p[1] == 0x80 && p[2] >= 0xa8 && p[2] <= 0xae)
                return 0; /* U+2028..U+202E: separators, bidi embeddings/overrides */
        if (n == 3 && p[0] == 0xe2 && p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9)
                return 0; /* U+2066..U+2069: bidi isolates */
        return n;
}

bool text_is_safe(const char *s)
{
        const unsigned char *p = (const unsigned char *) s;

        /* The NUL terminator stops utf8_seq_len's continuation checks. */
        while (*p) {
                size_t n = shown_len(p);
                if (n == 0)
                        return false;
                p += n;
        }
        return true;
}

/* Bytes of the sequence at p, end - p of them left, to be shown as they are
 * (shown_len()) without reading past end: a sequence cut by end is looked
 * at in a NUL-padded copy, where the NUL breaks it. */
static size_t shown_len_bounded(const unsigned char *p, const unsigned char *end)
{
        unsigned char tail[4] = {};

        if (end - p >= (ptrdiff_t) sizeof(tail))
                return shown_len(p);
        memcpy(tail, p, (size_t) (end - p));
        return shown_len(tail);
}

static void escape_append(struct strbuf *sb, const char *s, size_t len, bool exact)
{
        const unsigned char *p = (const unsigned char *) s, *end = p + len;

        while (p < end) {
                /* A NUL is a C0 control like any other here (shown_len()
                 * refuses it): text with a length may hold one. */
                size_t n = shown_len_bounded(p, end);

                if (exact && *p == '\\') {
                        strbuf_adds(sb, "\\\\");
                        p++;
                        continue;
                }
                if (n == 0) {
                        /* One byte at a time: the rest of a refused sequence
                         * is looked at again (and escaped: it cannot start
                         * a shown one). */
                        strbuf_addf(sb, "\\x%02x", *p++);
                        continue;
                }
                strbuf_add(sb, p, n);
                p += n;
        }
}

void text_escape_append(struct strbuf *sb, const char *s)
{
        escape_append(sb, s, strlen(s), false);
}

void text_escape_mem_append(struct strbuf *sb, const char *s, size_t len)
{
        escape_append(sb, s, len, false);
}

void text_escape_exact_append(struct strbuf *sb, const char *s)
{
        escape_append(sb, s, strlen(s), true);
}

char *text_escape(const char *s)
{
        struct strbuf sb = STRBUF_INIT;

        text_escape_append(&sb, s);
        return strbuf_detach(&sb, NULL);
}

char *text_escape_exact(const char *s)
{
        struct strbuf sb = STRBUF_INIT;

        text_escape_exact_append(&sb, s);
        return strbuf_detach(&sb, NULL);
}
