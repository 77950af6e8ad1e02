/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "relay/http-chunked.h"

#include <errno.h>
#include <string.h>

#include "base/limits.h"
#include "base/macro.h"

enum {
        CH_SIZE,    /* hex digits */
        CH_EXT,     /* after ';' up to CR */
        CH_SIZE_LF, /* CR seen after size line */
        CH_DATA,
        CH_DATA_CR,
        CH_DATA_LF,
        CH_TRAILER_START, /* start of a trailer line (or the final CRLF) */
        CH_TRAILER,       /* inside a trailer line */
        CH_TRAILER_LF,
        CH_FINAL_LF,
};

void http_chunked_init(struct http_chunked *c)
{
        *c = (struct http_chunked){ .state = CH_SIZE };
}

int http_chunked_feed(struct http_chunked *c, const char *buf, size_t len,
                      http_chunked_data_fn on_data, void *userdata, size_t *ret_used)
{
        size_t i = 0;

        while (i < len) {
                char ch = buf[i];

                if (c->state == CH_DATA) {
                        size_t n = (size_t) MIN((uint64_t) (len - i), c->remaining);
                        if (on_data)
                                on_data(userdata, buf + i, n);
                        c->remaining -= n;
                        i += n;
                        if (c->remaining == 0)
                                c->state = CH_DATA_CR;
                        continue;
                }
                if (c->state == CH_TRAILER_START && c->stop_at_trailer && ch != '\r') {
                        *ret_used = i;
                        return HTTP_CHUNKED_TRAILER;
                }
                i++;
                if (c->state == CH_SIZE || c->state == CH_EXT || c->state == CH_TRAILER) {
                        if (++c->line_len > (c->state == CH_TRAILER ? (size_t) HTTP_MAX_HEAD_BYTES
                                                                    : (size_t) HTTP_MAX_CHUNK_LINE))
                                return -EBADMSG;
                }
                switch (c->state) {
                case CH_SIZE: {
                        int v = http_hexval(ch);
                        if (v >= 0) {
                                /* 15 digits keep the size below 2^60: no overflow. */
                                if (++c->digits > 15)
                                        return -EBADMSG;
                                c->remaining = c->remaining * 16 + (uint64_t) v;
                        } else if (c->digits > 0 && (ch == ';' || ch == ' ' || ch == '\t'))
                                c->state = CH_EXT;
                        else if (c->digits > 0 && ch == '\r')
                                c->state = CH_SIZE_LF;
                        else
                                return -EBADMSG; /* no size digits, or a stray byte */
                        break;
                }
                case CH_EXT:
                        if (ch == '\r')
                                c->state = CH_SIZE_LF;
                        else if (ch == '\n' || ch == 0)
                                return -EBADMSG;
                        break;
                case CH_SIZE_LF:
                        if (ch != '\n')
                                return -EBADMSG;
                        c->digits = 0;
                        c->line_len = 0;
                        c->state = c->remaining > 0 ? CH_DATA : CH_TRAILER_START;
                        break;
                case CH_DATA_CR:
                        if (ch != '\r')
                                return -EBADMSG;
                        c->state = CH_DATA_LF;
                        break;
                case CH_DATA_LF:
                        if (ch != '\n')
                                return -EBADMSG;
                        c->state = CH_SIZE;
                        break;
                case CH_TRAILER_START:
                        if (ch == '\r')
                                c->state = CH_FINAL_LF;
                        else if (ch == '\n' || ch == ' ' || ch == '\t' || ch == 0)
                                return -EBADMSG;
                        else {
                                c->state = CH_TRAILER;
                                if (++c->line_len > HTTP_MAX_HEAD_BYTES)
                                        return -EBADMSG;
                        }
                        break;
                case CH_TRAILER:
                        if (ch == '\r')
                                c->state = CH_TRAILER_LF;
                        else if (ch == '\n' || ch == 0)
                                return -EBADMSG;
                        break;
                case CH_TRAILER_LF:
                        if (ch != '\n')
                                return -EBADMSG;
                        c->state = CH_TRAILER_START;
                        break;
                case CH_FINAL_LF:
                        if (ch != '\n')
                                return -EBADMSG;
                        *ret_used = i;
                        http_chunked_init(c);
                        return 1;
                default:
                        return -EBADMSG;
                }
        }
        *ret_used = len;
        return 0;
}

int http_chunked_trailer_line(struct http_chunked *c, const char *buf, size_t len, size_t *ret_len)
{
        const char *lf = memchr(buf, '\n', len);
        size_t n = lf ? (size_t) (lf - buf) + 1 : len;

        if (c->line_len + n > HTTP_MAX_HEAD_BYTES)
                return -EBADMSG;
        if (len > 0 && (buf[0] == ' ' || buf[0] == '\t'))
                return -EBADMSG; /* obs-fold */
        if (memchr(buf, 0, n))
                return -EBADMSG;
        if (!lf)
                return memchr(buf, '\r', len) && buf[len - 1] != '\r' ? -EBADMSG : 0;
        /* One CR, right before the LF. */
        if (n < 3 || memchr(buf, '\r', n) != lf - 1)
                return -EBADMSG;
        c->line_len += n;
        *ret_len = n;
        return 1;
}

struct decode_state {
        char *out;
        size_t len;
};

/* Data is never ahead of the framing that precedes it: out trails the
 * input, and memmove() copes with the overlap. */
static void decode_data(void *userdata, const char *data, size_t len)
{
        struct decode_state *d = userdata;

        memmove(d->out + d->len, data, len);
        d->len += len;
}

int http_chunked_decode(char *buf, size_t len, size_t *ret_len)
{
        struct http_chunked c;
        struct decode_state d = { .out = buf };
        size_t used;

        http_chunked_init(&c);
        if (http_chunked_feed(&c, buf, len, decode_data, &d, &used) != 1)
                return -EBADMSG;
        buf[d.len] = '\0';
        *ret_len = d.len;
        return 0;
}
