/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The env server's command (docs/DESIGN.md §8: it runs the very command it
 * runs without openenvd). Three sources, the first that says something wins,
 * as `docker run IMAGE CMD` wins over an image's CMD:
 *
 *   1. the command line's, `openenvd [OPTIONS] -- CMD...` (an image's CMD
 *      under ENTRYPOINT ["openenvd", "--"]);
 *   2. the manifest's `argv:`;
 *   3. `uvicorn <app> --host 0.0.0.0 --port <port>` from the manifest's app.
 *
 * With none of them the manifest is invalid. Older OpenEnv manifests
 * (browsergym, coding, julia) have no app: their image's CMD is source 1.
 */
#include <stdint.h>

#include "base/string-table.h"
#include "base/util.h"
#include "manifest/manifest-internal.h"

static const char *const manifest_argv_source_table[] = {
        [MANIFEST_ARGV_MANIFEST] = "manifest",
        [MANIFEST_ARGV_APP] = "app",
        [MANIFEST_ARGV_COMMAND_LINE] = "command_line",
};
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(manifest_argv_source, enum manifest_argv_source);

char **manifest_app_argv(const char *app, const char *host, uint16_t port)
{
        char **v = xcalloc(1, sizeof(char *));

        strv_push(&v, xstrdup("uvicorn"));
        strv_push(&v, xstrdup(app));
        strv_push(&v, xstrdup("--host"));
        strv_push(&v, xstrdup(host));
        strv_push(&v, xstrdup("--port"));
        strv_push(&v, xasprintf("%u", (unsigned) port));
        return v;
}

char *manifest_container_command_line(const struct manifest_container *c)
{
        return strv_join(c->argv, " ");
}

void manifest_resolve_env_command(struct manifest_ctx *x, struct container_info *ci)
{
        struct manifest_container *c = ci->c;
        const struct manifest *m = x->m;
        char *const *cmd = x->overrides ? x->overrides->env_argv : NULL;

        /* The unit's port unless the container says otherwise. */
        if (!c->port)
                c->port = m->port;
        if (cmd && cmd[0]) {
                strv_free(c->argv);
                c->argv = strv_copy(cmd);
                c->argv_source = MANIFEST_ARGV_COMMAND_LINE;
        } else if (c->argv || ci->vals[CK_ARGV]) {
                c->argv_source = MANIFEST_ARGV_MANIFEST;
        } else if (m->app) {
                c->argv = manifest_app_argv(m->app, "0.0.0.0", c->port);
                c->argv_source = MANIFEST_ARGV_APP;
        } else if (!x->app_invalid) {
                ctx_error(x, ci->key ? ci->key : ci->node, ci->path,
                          "the env container has no argv and the manifest sets no app (set the "
                          "top-level app:, openenvd.app or an argv, or give the server's command: "
                          "openenvd -- CMD...)");
        }
}
