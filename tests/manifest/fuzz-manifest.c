/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target for the manifest parser: YAML bytes -> node tree -> typed
 * contract -> rules -> JSON and error rendering. Paths are not checked against
 * the filesystem (no MANIFEST_CHECK_PATHS) so runs are reproducible. Each
 * input is parsed twice: as it is, and as `openenvd -- CMD...` loads it.
 */
#include <stdint.h>
#include <stdlib.h>

#include "base/limits.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "manifest/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One parse; returns whether the manifest was valid. */
static bool parse_one(const uint8_t *data, size_t size, const struct manifest_overrides *o)
{
        cleanup_manifest_errors struct manifest_errors errors = { 0 };
        cleanup(manifest_freep) struct manifest *m = NULL;
        struct strbuf out = STRBUF_INIT;

        manifest_errors_init(&errors, "fuzz.yaml");
        if (manifest_parse_with((const char *) data, size, "/fuzz/base", 0, o, &errors, &m) == 0) {
                const struct manifest_container *env = manifest_find_container(m, "env");
                json_t *j = manifest_to_json(m);
                char *s = json_dumps(j, JSON_COMPACT);
                if (!s)
                        abort(); /* rendering a valid manifest must never fail */
                free(s);
                json_decref(j);
                /* Invariants of a loaded manifest: an env with a command. */
                if (!env || !env->argv[0] || errors.n != 0)
                        abort();
                /* The command line's command is the env's, verbatim. */
                if (o && (env->argv_source != MANIFEST_ARGV_COMMAND_LINE ||
                          strv_length(env->argv) != strv_length(o->env_argv) ||
                          !streq(env->argv[0], o->env_argv[0])))
                        abort();
                manifest_errors_format(&errors, &out);
                strbuf_release(&out);
                return true;
        }
        if (errors.n == 0 && !errors.truncated)
                abort(); /* an invalid manifest always says why */
        manifest_errors_format(&errors, &out);
        strbuf_release(&out);
        return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static char *const cmd[] = { "sh", "-c", "cd /app/env && uvicorn server.app:app", NULL };
        const struct manifest_overrides o = { .env_argv = cmd };
        bool alone, with_command;

        /* manifest_load() refuses larger files before parsing. */
        if (size > (size_t) MANIFEST_MAX_BYTES)
                return 0;
        alone = parse_one(data, size, NULL);
        with_command = parse_one(data, size, &o);
        /* A command can only supply what is missing: it never makes a valid
         * manifest invalid. */
        if (alone && !with_command)
                abort();
        return 0;
}
