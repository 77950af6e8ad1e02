/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target: the grading result as the daemon reads and serves it.
 * The input is an observer's /out/verdict.json (parsed as grading.c's
 * read_result() does) and, after its first NUL, a reason made of bytes an
 * agent chose (a file name quoted in a refusal). Whatever they hold, the
 * verdict serialises, its reason is there, valid and free of controls.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/text-escape.h"
#include "base/util.h"
#include "unit/verdict.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *in = (const char *) data;
        const char *nul = memchr(in, '\0', size);
        size_t json_len = nul ? (size_t) (nul - in) : size;
        char *reason = nul ? xstrndup(nul + 1, size - json_len - 1) : xstrdup("");
        struct verdict v;
        json_t *j, *r;
        char *dump;

        verdict_init(&v);
        j = json_loadb(in, json_len, JSON_REJECT_DUPLICATES, NULL);
        if (j && !json_is_object(j)) {
                json_decref(j);
                j = NULL;
        }
        verdict_set_observer(&v, "runner", j ? j : json_null());
        verdict_fail(&v, VERDICT_AGENT_MISBEHAVIOR, "zones/agent", "refused: %s", reason);
        j = verdict_to_json(&v, "e1");
        r = json_object_get(j, "reason");
        if (!json_is_string(r) || !text_is_safe(json_string_value(r)))
                abort();
        dump = json_dumps(j, JSON_COMPACT);
        if (!dump || strchr(dump, '\n'))
                abort();
        free(dump);
        json_decref(j);
        verdict_done(&v);
        free(reason);
        return 0;
}
