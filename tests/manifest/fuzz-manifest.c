/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target for the manifest parser: YAML bytes -> node tree -> typed
 * contract -> rules -> JSON and error rendering. Paths are not checked against
 * the filesystem (no MANIFEST_CHECK_PATHS) so runs are reproducible.
 */
#include <stdint.h>
#include <stdlib.h>

#include "base/limits.h"
#include "base/strbuf.h"
#include "manifest/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        cleanup_manifest_errors struct manifest_errors errors = { 0 };
        cleanup(manifest_freep) struct manifest *m = NULL;
        struct strbuf out = STRBUF_INIT;

        /* manifest_load() refuses larger files before parsing. */
        if (size > (size_t) MANIFEST_MAX_BYTES)
                return 0;
        manifest_errors_init(&errors, "fuzz.yaml");
        if (manifest_parse((const char *) data, size, "/fuzz/base", 0, &errors, &m) == 0) {
                json_t *j = manifest_to_json(m);
                char *s = json_dumps(j, JSON_COMPACT);
                if (!s)
                        abort(); /* rendering a valid manifest must never fail */
                free(s);
                json_decref(j);
                if (!manifest_find_container(m, "env") || errors.n != 0)
                        abort(); /* invariants of a loaded manifest */
        } else if (errors.n == 0 && !errors.truncated) {
                abort(); /* an invalid manifest always says why */
        }
        manifest_errors_format(&errors, &out);
        strbuf_release(&out);
        return 0;
}
