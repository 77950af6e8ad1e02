/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "base/strbuf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

void strbuf_init(struct strbuf *sb)
{
        *sb = (struct strbuf) STRBUF_INIT;
}

void strbuf_release(struct strbuf *sb)
{
        if (sb->alloc)
                free(sb->buf);
        strbuf_init(sb);
}

void strbuf_grow(struct strbuf *sb, size_t extra)
{
        size_t need;

        if (__builtin_add_overflow(sb->len, extra, &need) || __builtin_add_overflow(need, 1, &need))
                oom();
        if (need <= sb->alloc)
                return;
        size_t n = sb->alloc ? sb->alloc : 64;
        while (n < need) {
                if (__builtin_mul_overflow(n, 2, &n))
                        oom();
        }
        char *p = realloc(sb->alloc ? sb->buf : NULL, n);
        if (!p)
                oom();
        if (!sb->alloc)
                p[0] = '\0';
        sb->buf = p;
        sb->alloc = n;
}

void strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
        if (len == 0)
                return;
        strbuf_grow(sb, len);
        memcpy(sb->buf + sb->len, data, len);
        sb->len += len;
        sb->buf[sb->len] = '\0';
}

void strbuf_adds(struct strbuf *sb, const char *s)
{
        strbuf_add(sb, s, strlen(s));
}

void strbuf_addch(struct strbuf *sb, char c)
{
        strbuf_add(sb, &c, 1);
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
        va_list cp;
        int n;

        /* Measure, then format. gcc's -Wformat-truncation misreads the
         * measuring call under the sanitizers ("null format string"). */
        va_copy(cp, ap);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif
        n = vsnprintf(NULL, 0, fmt, cp);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
        va_end(cp);
        if (n < 0)
                return;
        /* %m formats errno, which growing may change: the second pass must
         * print what the first one measured. */
        int saved_errno = errno;
        strbuf_grow(sb, (size_t) n);
        errno = saved_errno;
        (void) vsnprintf(sb->buf + sb->len, (size_t) n + 1, fmt, ap);
        sb->len += (size_t) n;
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        strbuf_vaddf(sb, fmt, ap);
        va_end(ap);
}

void strbuf_reset(struct strbuf *sb)
{
        sb->len = 0;
        if (sb->alloc)
                sb->buf[0] = '\0';
}

char *strbuf_detach(struct strbuf *sb, size_t *ret_len)
{
        char *p;

        if (!sb->alloc)
                strbuf_grow(sb, 0);
        p = sb->buf;
        if (ret_len)
                *ret_len = sb->len;
        strbuf_init(sb);
        return p;
}
