/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target: the record of actions (unit/action-record.c) fed the
 * bytes a client chose, split into messages at each NUL. Whatever they
 * hold, every line of the record is one JSON object whose message, when
 * there, is what the bytes parse to, and the count is every action.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "unit/action-record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct action_record r = {};
        const char *p = (const char *) data, *end = p + size;
        uint64_t sent = 0;
        size_t len;
        char *text, *save = NULL;

        while (p <= end) {
                const char *nul = memchr(p, '\0', (size_t) (end - p));
                size_t n = nul ? (size_t) (nul - p) : (size_t) (end - p);
                action_record_add(&r, 1, "step", p, n, 0);
                sent++;
                p += n + 1;
        }
        if (r.actions != sent)
                abort();
        text = action_record_text(&r, &len);
        if (strlen(text) != len)
                abort(); /* no NUL inside: a line is text */
        for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                json_t *j = json_loads(l, JSON_REJECT_DUPLICATES, NULL);
                if (!json_is_object(j))
                        abort();
                json_decref(j);
        }
        free(text);
        action_record_done(&r);
        return 0;
}
