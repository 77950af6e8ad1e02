/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzzes the WebSocket frame validator in both directions, feeding the input
 * whole and split at a data-dependent point: the verdict must not depend on
 * how the bytes were split.
 */
#include <stdint.h>
#include <stdlib.h>

#include "relay/ws-frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void on_text(void *ud, const char *d, size_t n)
{
        size_t *count = ud;
        *count += n + (n ? (unsigned char) d[n - 1] * 0 : 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        for (int client = 0; client < 2; client++) {
                struct ws_parser a, b;
                size_t ca = 0, cb = 0, split = size ? data[0] % (size + 1) : 0;
                ssize_t ra, rb;

                ws_parser_init(&a, client, on_text, &ca);
                ws_parser_init(&b, client, on_text, &cb);
                ra = ws_parser_feed(&a, data, size);
                rb = ws_parser_feed(&b, data, split);
                if (rb >= 0)
                        rb = ws_parser_feed(&b, data + split, size - split);
                if ((ra < 0) != (rb < 0) || ca != cb || a.frames != b.frames)
                        abort();
                if (ra < 0 && a.error_code != 1002 && a.error_code != 1007 && a.error_code != 1009)
                        abort();
                ws_parser_done(&a);
                ws_parser_done(&b);
        }
        return 0;
}
