/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzzes the usage scanner in both modes (JSON body, SSE stream), feeding
 * the input whole and split at a data-dependent point: what it counts must
 * not depend on how the response arrived.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "relay/model-usage.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        for (int sse = 0; sse < 2; sse++) {
                struct model_usage a, b;
                size_t split = size ? data[0] % (size + 1) : 0;
                uint64_t ia, oa, ib, ob;

                model_usage_init(&a, sse);
                model_usage_init(&b, sse);
                model_usage_feed(&a, (const char *) data, size);
                model_usage_feed(&b, (const char *) data, split);
                model_usage_feed(&b, (const char *) data + split, size - split);
                model_usage_tokens(&a, &ia, &oa);
                model_usage_tokens(&b, &ib, &ob);
                if (a.seen != b.seen || ia != ib || oa != ob ||
                    memcmp(a.max, b.max, sizeof(a.max)) != 0)
                        abort();
                if (!a.seen && (ia || oa))
                        abort();
        }
        return 0;
}
