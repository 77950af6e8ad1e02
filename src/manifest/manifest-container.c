/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One container of a zone: its keys (argv, env, resources, network, port,
 * phases, reads, expose, state, output, after, rootfs, workdir), what its
 * zone allows it, and its effective policy once the zone's defaults are in.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fd-util.h"
#include "base/limits.h"
#include "base/parse-util.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "manifest/manifest-internal.h"

/* ---- resources and network ---- */

static const char *const resource_keys[] = { "memory_mb", "pids", "cpu", "disk_mb" };

/* Field by field: only the keys present replace what is already in *res. */
void manifest_parse_resources(struct manifest_ctx *x, const struct mnode *n, const char *path,
                              struct manifest_resources *res)
{
        const struct mnode *k[4], *v[4];

        if (!mnode_fields(x, n, path, resource_keys, 4, false, k, v))
                return;
        for (size_t i = 0; i < 4; i++) {
                cleanup_free char *p = NULL;
                uint64_t u;
                double d;

                if (!v[i])
                        continue;
                p = mpath_key(path, resource_keys[i]);
                switch (i) {
                case 0:
                        if (mnode_get_uint(x, v[i], p, 1, MANIFEST_MAX_MEMORY_MB, &u))
                                res->memory_mb = u;
                        break;
                case 1:
                        if (mnode_get_uint(x, v[i], p, 1, MANIFEST_MAX_PIDS, &u))
                                res->pids = u;
                        break;
                case 2:
                        if (mnode_get_positive_double(x, v[i], p, MANIFEST_MAX_CPU, &d))
                                res->cpu = d;
                        break;
                default:
                        if (mnode_get_uint(x, v[i], p, 1, MANIFEST_MAX_DISK_MB, &u))
                                res->disk_mb = u;
                        break;
                }
        }
}

/* Returns the egress value, or -1 if absent or wrong (error added). */
int manifest_parse_network(struct manifest_ctx *x, const struct mnode *n, const char *path)
{
        static const char *const keys[] = { "egress" };
        static const char *const names[] = { "none", "relays-only", "allowlist" };
        const struct mnode *k[1], *v[1];
        cleanup_free char *p = NULL;
        unsigned e;

        if (!mnode_fields(x, n, path, keys, 1, false, k, v) || !v[0])
                return -1;
        p = mpath_key(path, "egress");
        if (!mnode_get_enum(x, v[0], p, "egress", names, ELEMENTSOF(names), &e))
                return -1;
        if (e == 2) {
                /* Never silently accept a policy nothing enforces. */
                ctx_error(x, v[0], p, "egress 'allowlist' is not supported yet");
                return -1;
        }
        return (int) e;
}

/* ---- containers ---- */

static const char *const container_keys[CK_MAX] = {
        "argv",   "env",   "resources", "network", "port",   "phases",  "reads",
        "expose", "state", "output",    "after",   "rootfs", "workdir", "verdict_policy",
};

char **manifest_parse_string_list(struct manifest_ctx *x, const struct mnode *n, const char *path,
                                  const struct mnode ***ret_nodes)
{
        char **v = xcalloc(1, sizeof(char *));

        if (n->kind != MNODE_SEQ) {
                ctx_error(x, n, path, "expected a list");
                return v;
        }
        if (n->n_children > MANIFEST_MAX_LIST) {
                ctx_error(x, n, path, "too many entries (%zu, at most %d)", n->n_children,
                          MANIFEST_MAX_LIST);
                return v;
        }
        if (ret_nodes)
                *ret_nodes = xcalloc(n->n_children + 1, sizeof(const struct mnode *));
        for (size_t i = 0; i < n->n_children; i++) {
                cleanup_free char *p = mpath_index(path, i);
                const char *s;
                if (!mnode_get_string(x, n->children[i], p, &s))
                        continue;
                if (ret_nodes)
                        (*ret_nodes)[strv_length(v)] = n->children[i];
                strv_push(&v, xstrdup(s));
        }
        return v;
}

static void manifest_parse_env(struct manifest_ctx *x, const struct mnode *n, const char *path,
                               struct manifest_container *c)
{
        if (!mnode_user_map(x, n, path, MANIFEST_MAX_LIST, "environment variables"))
                return;
        for (size_t i = 0; i < mnode_map_size(n); i++) {
                const struct mnode *k = mnode_key(n, i);
                cleanup_free char *p = mpath_key(path, k->value);
                const char *val;

                if (!manifest_is_env_name(k->value)) {
                        ctx_error(x, k, p, "'%s' is not a valid environment variable name",
                                  k->value);
                        continue;
                }
                if (!mnode_get_string(x, mnode_value(n, i), p, &val))
                        continue;
                strv_push(&c->env, xasprintf("%s=%s", k->value, val));
        }
}

static bool parse_read(struct manifest_ctx *x, const struct mnode *n, const char *path,
                       struct manifest_read *ret)
{
        const char *s, *rest;
        size_t l;

        if (!mnode_get_string(x, n, path, &s))
                return false;
        l = strlen(s);
        if (streq(s, "workspace")) {
                *ret = (struct manifest_read){ .kind = MANIFEST_READ_WORKSPACE };
                return true;
        }
        if (streq(s, "actions")) {
                *ret = (struct manifest_read){ .kind = MANIFEST_READ_ACTIONS };
                return true;
        }
        if ((rest = startswith(s, "assets.")) && rest[0] && !strchr(rest, '.')) {
                *ret = (struct manifest_read){ .kind = MANIFEST_READ_ASSET,
                                               .target = xstrdup(rest) };
                return true;
        }
        if ((rest = startswith(s, "services."))) {
                const char *dot = strchr(rest, '.');
                if (dot && dot != rest && streq(dot, ".state")) {
                        *ret = (struct manifest_read){ .kind = MANIFEST_READ_SERVICE_STATE,
                                                       .target = xstrndup(rest, dot - rest) };
                        return true;
                }
                ctx_error(x, n, path,
                          "unknown read '%s' (a service offers only services.<name>.state)", s);
                return false;
        }
        if (l > 7 && endswith(s, ".output") && !memchr(s, '.', l - 7)) {
                *ret = (struct manifest_read){ .kind = MANIFEST_READ_OUTPUT,
                                               .target = xstrndup(s, l - 7) };
                return true;
        }
        ctx_error(x, n, path,
                  "unknown read '%s' (expected workspace, actions, assets.<name>, "
                  "services.<name>.state or <observer>.output)",
                  s);
        return false;
}

static void parse_reads(struct manifest_ctx *x, const struct mnode *n, const char *path,
                        struct container_info *ci)
{
        struct manifest_container *c = ci->c;

        if (n->kind != MNODE_SEQ) {
                ctx_error(x, n, path, "expected a list");
                return;
        }
        if (n->n_children > MANIFEST_MAX_LIST) {
                ctx_error(x, n, path, "too many entries (%zu, at most %d)", n->n_children,
                          MANIFEST_MAX_LIST);
                return;
        }
        c->reads = xcalloc(n->n_children + 1, sizeof(*c->reads));
        ci->read_nodes = xcalloc(n->n_children + 1, sizeof(const struct mnode *));
        for (size_t i = 0; i < n->n_children; i++) {
                cleanup_free char *p = mpath_index(path, i);
                struct manifest_read r;
                bool dup = false;

                if (!parse_read(x, n->children[i], p, &r))
                        continue;
                for (size_t j = 0; j < c->n_reads; j++)
                        if (c->reads[j].kind == r.kind && streq_ptr(c->reads[j].target, r.target))
                                dup = true;
                if (dup) {
                        ctx_error(x, n->children[i], p, "'%s' is listed twice",
                                  n->children[i]->value);
                        free(r.target);
                        continue;
                }
                ci->read_nodes[c->n_reads] = n->children[i];
                c->reads[c->n_reads++] = r;
        }
}

static void parse_phases(struct manifest_ctx *x, const struct mnode *n, const char *path,
                         struct container_info *ci)
{
        const char *phase_names[PHASE_MANIFEST_MAX];

        if (n->kind != MNODE_SEQ) {
                ctx_error(x, n, path, "expected a list");
                return;
        }
        if (n->n_children == 0) {
                ctx_error(x, n, path, "observers must list at least one phase");
                return;
        }
        if (n->n_children > MANIFEST_MAX_LIST) {
                ctx_error(x, n, path, "too many entries (%zu, at most %d)", n->n_children,
                          MANIFEST_MAX_LIST);
                return;
        }
        /* What a manifest may name: every phase but `failed`. */
        for (unsigned i = 0; i < PHASE_MANIFEST_MAX; i++)
                phase_names[i] = phase_to_string(i);
        ci->phase_nodes = xcalloc(n->n_children, sizeof(const struct mnode *));
        for (size_t i = 0; i < n->n_children; i++) {
                cleanup_free char *p = mpath_index(path, i);
                unsigned ph;

                if (!mnode_get_enum(x, n->children[i], p, "phase", phase_names, PHASE_MANIFEST_MAX,
                                    &ph))
                        continue;
                if (!(PHASE_BIT(ph) & MANIFEST_OBSERVER_PHASES)) {
                        ctx_error(x, n->children[i], p,
                                  "observers cannot run in '%s' (allowed: ready, running, frozen, "
                                  "sealed, grading)",
                                  phase_names[ph]);
                        continue;
                }
                if (ci->listed_phases & PHASE_BIT(ph)) {
                        ctx_error(x, n->children[i], p, "phase '%s' is listed twice",
                                  phase_names[ph]);
                        continue;
                }
                ci->listed_phases |= PHASE_BIT(ph);
                ci->phase_nodes[ci->n_phase_nodes++] = n->children[i];
        }
}

static void parse_expose(struct manifest_ctx *x, const struct mnode *n, const char *path,
                         struct manifest_container *c)
{
        static const char *const keys[] = { "host", "port" };
        const struct mnode *k[2], *v[2];
        cleanup_free char *ph = mpath_key(path, "host");
        cleanup_free char *pp = mpath_key(path, "port");
        const char *host;
        uint16_t port = 0;

        if (!mnode_fields(x, n, path, keys, 2, false, k, v))
                return;
        if (mnode_is_null(n) || !v[0] || !v[1]) {
                ctx_error(x, n, path, "expose needs both host and port");
                return;
        }
        if (!mnode_get_string(x, v[0], ph, &host))
                return;
        if (!manifest_is_hostname(host)) {
                ctx_error(x, v[0], ph, "'%s' is not a valid host name", host);
                return;
        }
        if (!mnode_get_port(x, v[1], pp, &port))
                return;
        c->expose.host = xstrdup(host);
        c->expose.port = port;
}

/* Keys only some zones may use; rejected before their value is looked at. */
static bool key_allowed(struct manifest_ctx *x, enum manifest_zone_kind zone, enum container_key k,
                        const struct mnode *key, const char *path)
{
        bool observer_only = k == CK_PHASES || k == CK_READS || k == CK_OUTPUT || k == CK_AFTER;
        bool service_only = k == CK_EXPOSE || k == CK_STATE;
        cleanup_free char *p = mpath_key(path, key->value);

        if (observer_only && zone != MANIFEST_ZONE_OBSERVERS) {
                if (zone == MANIFEST_ZONE_AGENT && k == CK_PHASES)
                        ctx_error(x, key, p,
                                  "only observers declare phases (agent containers live in ready "
                                  "and running)");
                else if (k == CK_PHASES)
                        ctx_error(x, key, p,
                                  "only observers declare phases (services follow the unit)");
                else
                        ctx_error(x, key, p, "only observers declare %s", key->value);
                return false;
        }
        /* Services and observers are the infrastructure's: their events
         * follow docs/GRADING.md's blame table, no policy. */
        if (k == CK_VERDICT_POLICY && zone != MANIFEST_ZONE_AGENT) {
                ctx_error(x, key, p,
                          "only agent containers declare verdict_policy (what a service or "
                          "observer does is blamed by docs/GRADING.md's table)");
                return false;
        }
        if (service_only && zone != MANIFEST_ZONE_SERVICES) {
                ctx_error(x, key, p, "only services declare %s", key->value);
                return false;
        }
        return true;
}

void ctx_parse_container(struct manifest_ctx *x, struct manifest_zone *z, struct container_info *ci)
{
        struct manifest_container *c = ci->c;
        const char *path = ci->path;
        const struct mnode **vals = ci->vals;

        if (!mnode_fields(x, ci->node, path, container_keys, CK_MAX, false, ci->keys, ci->vals))
                return;
        for (size_t k = 0; k < CK_MAX; k++) {
                cleanup_free char *p = NULL;
                int e;

                if (!vals[k])
                        continue;
                if (!key_allowed(x, z->kind, k, ci->keys[k], path)) {
                        vals[k] = NULL;
                        continue;
                }
                p = mpath_key(path, container_keys[k]);
                switch ((enum container_key) k) {
                case CK_ARGV:
                        c->argv = manifest_parse_string_list(x, vals[k], p, NULL);
                        if (vals[k]->kind == MNODE_SEQ && vals[k]->n_children == 0)
                                ctx_error(x, vals[k], p, "argv must not be empty");
                        if (!c->argv[0])
                                c->argv = strv_free(c->argv);
                        break;
                case CK_ENV:
                        manifest_parse_env(x, vals[k], p, c);
                        break;
                case CK_RESOURCES:
                        manifest_parse_resources(x, vals[k], p, &c->resources);
                        break;
                case CK_NETWORK:
                        e = manifest_parse_network(x, vals[k], p);
                        /* Narrowing is checked in ctx_finalize_container(). */
                        if (e >= 0)
                                c->egress = (enum manifest_egress) e;
                        else
                                vals[k] = NULL; /* keep the zone's egress */
                        break;
                case CK_PORT:
                        (void) mnode_get_port(x, vals[k], p, &c->port);
                        break;
                case CK_PHASES:
                        parse_phases(x, vals[k], p, ci);
                        break;
                case CK_READS:
                        parse_reads(x, vals[k], p, ci);
                        break;
                case CK_EXPOSE:
                        parse_expose(x, vals[k], p, c);
                        break;
                case CK_STATE:
                        (void) mnode_get_container_path(x, vals[k], p, "state", &c->state);
                        break;
                case CK_OUTPUT:
                        if (mnode_get_container_path(x, vals[k], p, "output", &c->output) &&
                            !startswith(c->output, "/out/") && !streq(c->output, "/out")) {
                                /* Only /out is custody-copied to later observers. */
                                ctx_error(x, vals[k], p,
                                          "output must be under /out (only /out is passed on to "
                                          "later observers), got '%s'",
                                          c->output);
                        }
                        break;
                case CK_AFTER:
                        if (vals[k]->kind == MNODE_SCALAR) {
                                const char *s;
                                c->after = xcalloc(1, sizeof(char *));
                                if (mnode_get_string(x, vals[k], p, &s)) {
                                        strv_push(&c->after, xstrdup(s));
                                        ci->after_nodes = xcalloc(1, sizeof(const struct mnode *));
                                        ci->after_nodes[0] = vals[k];
                                }
                        } else {
                                c->after =
                                        manifest_parse_string_list(x, vals[k], p, &ci->after_nodes);
                        }
                        break;
                case CK_ROOTFS:
                        (void) mnode_get_container_path(x, vals[k], p, "rootfs", &c->rootfs);
                        break;
                case CK_WORKDIR:
                        (void) mnode_get_container_path(x, vals[k], p, "workdir", &c->workdir);
                        break;
                case CK_VERDICT_POLICY:
                        manifest_parse_verdict_policy(x, vals[k], p, &c->verdict_policy);
                        break;
                case CK_MAX:
                        break;
                }
        }
}

/* The value of key in mapping n, or NULL. */

/* Defaults, argv, phases and the effective (zone-narrowed) policy. */
void ctx_finalize_container(struct manifest_ctx *x, const struct manifest_zone *z,
                            struct container_info *ci)
{
        struct manifest_container *c = ci->c;
        const struct manifest_resources *own = &c->resources, *zr = &z->resources;
        struct manifest_resources *eff = &c->effective;
        const struct mnode *at = ci->key ? ci->key : ci->node;
        const struct mnode *rnode = ci->vals[CK_RESOURCES];

        if (z->kind == MANIFEST_ZONE_AGENT && streq(c->name, "env"))
                manifest_resolve_env_command(x, ci);
        else if (!c->argv && !ci->vals[CK_ARGV])
                ctx_error(x, at, ci->path, "argv is required");

        switch (z->kind) {
        case MANIFEST_ZONE_AGENT:
                c->phases = MANIFEST_AGENT_PHASES;
                break;
        case MANIFEST_ZONE_SERVICES:
                c->phases = MANIFEST_OBSERVER_PHASES;
                break;
        default:
                c->phases = ci->listed_phases;
                if (!ci->vals[CK_PHASES])
                        ctx_error(x, at, ci->path, "observers must list at least one phase");
                break;
        }

        /* A container may only narrow its zone (docs/DESIGN.md §3). */
        if (!ci->vals[CK_NETWORK]) {
                c->egress = z->egress;
        } else if (c->egress > z->egress) {
                cleanup_free char *p = mpath_key(ci->path, "network.egress");
                ctx_error(x, mnode_lookup(ci->vals[CK_NETWORK], "egress"), p,
                          "egress '%s' is wider than the zone's '%s'",
                          manifest_egress_to_string(c->egress),
                          manifest_egress_to_string(z->egress));
                c->egress = z->egress;
        }

#define NARROW(field, fmt, cast)                                                          \
        do {                                                                              \
                eff->field = own->field ? own->field : zr->field;                         \
                if (own->field && zr->field && own->field > zr->field) {                  \
                        cleanup_free char *p_ = mpath_key(ci->path, "resources." #field); \
                        ctx_error(x, mnode_lookup(rnode, #field), p_,                     \
                                  #field " " fmt " exceeds the zone ceiling " fmt,        \
                                  (cast) own->field, (cast) zr->field);                   \
                        eff->field = zr->field;                                           \
                }                                                                         \
        } while (0)
        NARROW(memory_mb, "%llu", unsigned long long);
        NARROW(pids, "%llu", unsigned long long);
        NARROW(cpu, "%g", double);
        NARROW(disk_mb, "%llu", unsigned long long);
#undef NARROW

        if (ci->vals[CK_EXPOSE] && !c->port && !ci->vals[CK_PORT]) {
                cleanup_free char *p = mpath_key(ci->path, "expose");
                ctx_error(x, ci->keys[CK_EXPOSE], p,
                          "expose needs the service's listening port (set port:)");
        }
        /* The env's default is the daemon's start-up directory (NULL). */
        if (!c->workdir && !(z->kind == MANIFEST_ZONE_AGENT && streq(c->name, "env")))
                c->workdir = xstrdup(z->kind == MANIFEST_ZONE_AGENT ? "/workspace" : "/");
        if (!c->after)
                c->after = xcalloc(1, sizeof(char *));
        if (!c->argv)
                c->argv = xcalloc(1, sizeof(char *)); /* invalid manifest; keeps free simple */
}

struct container_info *ctx_add_container(struct manifest_ctx *x, struct manifest_zone *z,
                                         const struct mnode *key, const struct mnode *node,
                                         const char *name)
{
        struct container_info *ci;

        x->ci = xrealloc(x->ci, (x->n_ci + 1) * sizeof(*x->ci));
        ci = &x->ci[x->n_ci++];
        *ci = (struct container_info){
                .c = &z->containers[z->n_containers++],
                .key = key,
                .node = node,
                .path = xasprintf("zones.%s.containers.%s", manifest_zone_kind_to_string(z->kind),
                                  name),
        };
        ci->c->name = xstrdup(name);
        ci->c->zone = z->kind;
        /* The unit's (parsed before the zones); its own keys go over it. */
        ci->c->verdict_policy = x->m->verdict_policy;
        ci->c->env = xcalloc(1, sizeof(char *));
        return ci;
}
