/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A growable, always NUL-terminated byte buffer (after git's strbuf.h).
 *
 * Invariants: buf is never NULL after strbuf_init() (it points at a static
 * empty string until the first growth), buf[len] == '\0', len < alloc or
 * alloc == 0. Allocation failure aborts: out of memory is not an error the
 * daemon can handle meaningfully in these small buffers, and it keeps every
 * caller free of one error path. Sizes coming from untrusted parties must be
 * bounded by the caller before they reach a strbuf.
 */
#include <stdarg.h>
#include <stddef.h>

#include "base/macro.h"

struct strbuf {
        char *buf; /* owned, unless alloc == 0 */
        size_t len;
        size_t alloc;
};

#define STRBUF_INIT                                      \
        {                                                \
                .buf = (char *) "", .len = 0, .alloc = 0 \
        }

void strbuf_init(struct strbuf *sb);
void strbuf_release(struct strbuf *sb);
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_adds(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, char c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) printf_fmt(2, 3);
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap) printf_fmt(2, 0);
void strbuf_reset(struct strbuf *sb);
/* Hands the buffer to the caller (always malloc'ed) and resets sb. */
char *strbuf_detach(struct strbuf *sb, size_t *ret_len);

static inline void strbuf_releasep(struct strbuf *sb)
{
        strbuf_release(sb);
}
#define cleanup_strbuf cleanup(strbuf_releasep)
