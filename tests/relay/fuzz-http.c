/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzzes the HTTP head finder/parser (request and response modes), the
 * status line reader and the chunked-body tracker (streamed, and decoding a
 * whole body in place). Invariants checked: offsets stay inside the input,
 * the chunked tracker never claims more bytes than it was given, a decoded
 * body is shorter than its framing, a status is a three-digit code.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "relay/http-chunked.h"
#include "relay/http-head.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void on_data(void *ud, const char *d, size_t n)
{
        size_t *total = ud;
        *total += n;
        if (n > 0 && d[0] == 0x7f && d[n - 1] == 0x7f)
                *total += 0; /* touch both ends (ASan checks the span) */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *buf = (const char *) data;
        struct http_head *h = malloc(sizeof(*h));
        size_t end = 0;

        if (!h)
                return 0;
        for (int mode = 0; mode < 2; mode++) {
                if (http_head_find_end(buf, size, &end) > 0) {
                        if (end > size)
                                abort();
                        if (http_head_parse(buf, end, mode, false, h) == 0) {
                                for (size_t i = 0; i < h->n_headers; i++) {
                                        const struct http_header *hd = &h->headers[i];
                                        if (hd->line_end > end || hd->line_start >= hd->line_end)
                                                abort();
                                        (void) http_value_has_token(hd->value, hd->value_len,
                                                                    "upgrade");
                                }
                                if (!mode && h->target_len > end)
                                        abort();
                        }
                }
        }
        /* The same bytes as a chunked body, fed in two pieces. */
        struct http_chunked c;
        size_t used = 0, total = 0, half = size / 2;
        http_chunked_init(&c);
        int r = http_chunked_feed(&c, buf, half, on_data, &total, &used);
        if (r == 0) {
                if (used != half)
                        abort();
                r = http_chunked_feed(&c, buf + half, size - half, on_data, &total, &used);
                if (r >= 0 && used > size - half)
                        abort();
        } else if (r > 0 && used > half)
                abort();
        if (total > size)
                abort();
        /* Again as a request body, trailer lines dropped as the engine does:
         * every step stays inside the input and moves forward. */
        http_chunked_init(&c);
        c.stop_at_trailer = true;
        for (size_t off = 0; off < size;) {
                size_t n = 0;
                r = http_chunked_feed(&c, buf + off, size - off, NULL, NULL, &used);
                if (r < 0 || r == 0 || (r == 1 && used <= size - off))
                        break;
                if (r != HTTP_CHUNKED_TRAILER || used > size - off)
                        abort();
                off += used;
                if (http_chunked_trailer_line(&c, buf + off, size - off, &n) <= 0)
                        break;
                if (n == 0 || n > size - off)
                        abort();
                off += n;
        }
        unsigned status;
        if (http_status_line_parse(buf, size, &status) > 0 && (status < 100 || status > 999))
                abort();
        char *copy = malloc(size + 1);
        size_t len;
        if (copy) {
                memcpy(copy, buf, size);
                copy[size] = '\0';
                if (http_chunked_decode(copy, size, &len) == 0 && (len >= size || copy[len]))
                        abort();
                free(copy);
        }
        free(h);
        return 0;
}
