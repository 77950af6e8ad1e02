/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "unit/unit-relays.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/limits.h"
#include "base/util.h"
#include "relay/listen-socket.h"
#include "relay/model-proxy.h"
#include "relay/service-relay.h"

#define RELAY_IDLE_TIMEOUT (300 * USEC_PER_SEC)

struct unit_relays {
        struct service_relay *service[MANIFEST_MAX_CONTAINERS]; /* owned */
        size_t n_service;
        struct service_relay *mcp[MANIFEST_MAX_CONTAINERS]; /* owned, one per harness */
        size_t n_mcp;
        struct model_proxy *model[MANIFEST_MAX_CONTAINERS];            /* owned, one per harness */
        const char *model_harness[MANIFEST_MAX_CONTAINERS];            /* borrowed: the manifest */
        struct model_proxy_stats model_stats[MANIFEST_MAX_CONTAINERS]; /* kept after stop */
        size_t n_model;
        bool model_stopped; /* model_stats are final */
};

static int relay_unix(struct loop *l, const char *listen_path, const char *upstream,
                      const struct service_relay_hooks *hooks, struct service_relay **ret)
{
        int fd, r;

        /* 0666: the principal is another uid in another user namespace. */
        r = socket_listen_unix(listen_path, 0666, &fd);
        if (r < 0)
                return r;
        return service_relay_new(l, fd, upstream, RELAY_IDLE_TIMEOUT, hooks, ret);
}

/*
 * The model proxy reads its key from a file and unlinks it. The key lives in
 * the daemon's memory; each episode hands it over through a fresh 0600 file
 * in the daemon's own run dir (masked in every container, as is all state).
 */
static int model_relay(struct loop *l, const struct unit_plan_context *ctx, const char *private_dir,
                       const struct unit_model *model, const char *listen_path,
                       struct model_proxy **ret)
{
        const struct manifest_model_budget *b = &ctx->manifest->model.budget;
        cleanup_free char *keyfile = xasprintf("%s/model-key", private_dir);
        cleanup_close int kfd = -EBADF;
        struct model_proxy_config cfg = {
                .upstream = model->upstream,
                .provider = model->provider ?: "anthropic",
                .placeholder = UNIT_MODEL_PLACEHOLDER,
                .key_file = keyfile,
                .idle_timeout = RELAY_IDLE_TIMEOUT,
                .budget = { .requests = b->requests, .bytes = b->bytes, .tokens = b->tokens },
        };
        int fd, r;

        (void) unlink(keyfile);
        kfd = open(keyfile, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (kfd < 0)
                return -errno;
        r = write_all(kfd, model->key, strlen(model->key));
        if (r < 0)
                goto fail;
        r = socket_listen_unix(listen_path, 0666, &fd);
        if (r < 0)
                goto fail;
        r = model_proxy_new(l, fd, &cfg, ret);
fail:
        (void) unlink(keyfile); /* normally already gone: the proxy unlinks it */
        return r;
}

int unit_relays_new(struct loop *l, const struct unit_plan_context *ctx, const char *private_dir,
                    const struct unit_model *model, const struct service_relay_hooks *hooks,
                    struct unit_relays **ret)
{
        const struct manifest *m = ctx->manifest;
        const struct manifest_zone *svc = manifest_zone(m, MANIFEST_ZONE_SERVICES);
        const struct manifest_zone *agent = manifest_zone(m, MANIFEST_ZONE_AGENT);
        struct unit_relays *rs = xcalloc(1, sizeof(*rs));
        cleanup_free char *env_dir = unit_socket_dir(ctx, "env");
        cleanup_free char *env_sock = xasprintf("%s/env.sock", private_dir);
        int r = 0;

        for (size_t k = 0; k < svc->n_containers && r >= 0; k++) {
                const struct manifest_container *c = &svc->containers[k];
                cleanup_free char *lpath = NULL, *upath = NULL;
                if (!c->expose.host || !c->port)
                        continue;
                lpath = xasprintf("%s/svc-%s.sock", env_dir, c->name);
                upath = xasprintf("%s/%s.sock", private_dir, c->name);
                r = relay_unix(l, lpath, upath, NULL, &rs->service[rs->n_service]);
                if (r >= 0)
                        rs->n_service++;
        }
        for (size_t k = 0; k < agent->n_containers && r >= 0; k++) {
                const struct manifest_container *c = &agent->containers[k];
                cleanup_free char *dir = NULL, *mcp = NULL, *mod = NULL;
                if (streq(c->name, "env"))
                        continue;
                dir = unit_socket_dir(ctx, c->name);
                mcp = xasprintf("%s/mcp.sock", dir);
                r = relay_unix(l, mcp, env_sock, hooks, &rs->mcp[rs->n_mcp]);
                if (r < 0)
                        break;
                rs->n_mcp++;
                if (!model || !model->upstream || !model->key)
                        continue;
                mod = xasprintf("%s/model.sock", dir);
                r = model_relay(l, ctx, private_dir, model, mod, &rs->model[rs->n_model]);
                if (r >= 0)
                        rs->model_harness[rs->n_model++] = c->name;
        }
        if (r < 0) {
                unit_relays_free(rs);
                return r;
        }
        *ret = rs;
        return 0;
}

void unit_relays_stop_agent(struct unit_relays *rs)
{
        if (!rs)
                return;
        for (size_t i = 0; i < rs->n_service; i++)
                rs->service[i] = service_relay_free(rs->service[i]);
        for (size_t i = 0; i < rs->n_mcp; i++)
                rs->mcp[i] = service_relay_free(rs->mcp[i]);
        for (size_t i = 0; i < rs->n_model && !rs->model_stopped; i++) {
                /* The verdict reports what the episode used: keep it. */
                model_proxy_stats(rs->model[i], &rs->model_stats[i]);
                rs->model[i] = model_proxy_free(rs->model[i]);
        }
        rs->model_stopped = true;
        rs->n_service = rs->n_mcp = 0;
}

json_t *unit_relays_model_json(const struct unit_relays *rs)
{
        json_t *o;

        if (!rs || rs->n_model == 0)
                return json_null();
        o = json_object();
        for (size_t i = 0; i < rs->n_model; i++) {
                struct model_proxy_stats st = rs->model_stats[i];
                if (!rs->model_stopped)
                        model_proxy_stats(rs->model[i], &st);
                json_object_set_new(o, rs->model_harness[i], model_proxy_stats_to_json(&st));
        }
        return o;
}

struct unit_relays *unit_relays_free(struct unit_relays *rs)
{
        if (!rs)
                return NULL;
        unit_relays_stop_agent(rs);
        free(rs);
        return NULL;
}
