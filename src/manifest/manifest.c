/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * openenv.yaml -> struct manifest: the typed pass over the positioned YAML
 * tree (manifest-node.c), top down: the document, `openenvd:`, the zones and
 * their defaults. Values are read by manifest-values.c (type, range, enum,
 * syntax), containers by manifest-container.c (keys, limits, effective
 * policy); the cross-container rules run in manifest-rules.c. Errors are
 * collected, never returned early, so one run reports everything.
 */
#include "manifest/manifest.h"

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

static void zone_set_defaults(struct manifest_zone *z, enum manifest_zone_kind kind)
{
        /* docs/MANIFEST.md, "Zone defaults". */
        static const struct manifest_resources defaults[MANIFEST_ZONE_MAX] = {
                [MANIFEST_ZONE_AGENT] = { .memory_mb = 1024, .pids = 512, .disk_mb = 256 },
                [MANIFEST_ZONE_SERVICES] = { .memory_mb = 512, .pids = 256, .disk_mb = 256 },
                [MANIFEST_ZONE_OBSERVERS] = { .memory_mb = 512, .pids = 256, .disk_mb = 128 },
        };
        z->kind = kind;
        z->egress =
                kind == MANIFEST_ZONE_AGENT ? MANIFEST_EGRESS_RELAYS_ONLY : MANIFEST_EGRESS_NONE;
        z->resources = defaults[kind];
        z->oci = MANIFEST_OCI_NATIVE;
        z->during_grading = MANIFEST_DURING_GRADING_FROZEN;
}

static void parse_zone(struct manifest_ctx *x, enum manifest_zone_kind kind,
                       const struct mnode *key, const struct mnode *n)
{
        static const char *const keys[] = { "network", "resources", "runtime", "containers",
                                            "during_grading" };
        struct manifest_zone *z = &x->m->zones[kind];
        const struct mnode *k[5] = { 0 }, *v[5] = { 0 };
        cleanup_free char *path = xasprintf("zones.%s", manifest_zone_kind_to_string(kind));
        size_t first = x->n_ci;
        bool ok;

        x->zone_keys[kind] = key;
        ok = mnode_fields(x, n, path, keys, 5, false, k, v);
        if (ok && v[0]) {
                cleanup_free char *p = mpath_key(path, "network");
                int e = manifest_parse_network(x, v[0], p);
                if (e >= 0 && kind == MANIFEST_ZONE_AGENT && e != MANIFEST_EGRESS_RELAYS_ONLY) {
                        cleanup_free char *pe = mpath_key(p, "egress");
                        ctx_error(x, mnode_lookup(v[0], "egress"), pe,
                                  "the agent zone's egress is fixed to relays-only (every call "
                                  "the agent makes goes through a relay)");
                } else if (e >= 0) {
                        z->egress = (enum manifest_egress) e;
                }
        }
        if (ok && v[1]) {
                cleanup_free char *p = mpath_key(path, "resources");
                manifest_parse_resources(x, v[1], p, &z->resources);
        }
        if (ok && v[2]) {
                static const char *const rkeys[] = { "oci" };
                const struct mnode *rk[1], *rv[1];
                cleanup_free char *p = mpath_key(path, "runtime");
                unsigned o;
                if (mnode_fields(x, v[2], p, rkeys, 1, false, rk, rv) && rv[0]) {
                        cleanup_free char *po = mpath_key(p, "oci");
                        if (mnode_get_enum(x, rv[0], po, "oci runtime", manifest_oci_table,
                                           ELEMENTSOF(manifest_oci_table), &o))
                                z->oci = (enum manifest_oci) o;
                }
        }
        if (ok && v[4]) {
                cleanup_free char *p = mpath_key(path, "during_grading");
                unsigned d;
                if (kind != MANIFEST_ZONE_SERVICES)
                        ctx_error(x, k[4], p, "during_grading only applies to the services zone");
                else if (mnode_get_enum(x, v[4], p, "during_grading value",
                                        manifest_during_grading_table,
                                        ELEMENTSOF(manifest_during_grading_table), &d))
                        z->during_grading = (enum manifest_during_grading) d;
        }

        if (!ok || !v[3]) {
                /* The agent zone always has its env server. */
                if (kind == MANIFEST_ZONE_AGENT) {
                        z->containers = xcalloc(1, sizeof(*z->containers));
                        ctx_add_container(x, z, NULL, NULL, "env");
                }
        } else {
                cleanup_free char *p = mpath_key(path, "containers");
                x->zone_containers[kind] = k[3];
                if (mnode_user_map(x, v[3], p, MANIFEST_MAX_CONTAINERS, "containers")) {
                        size_t nc = mnode_map_size(v[3]);
                        z->containers = xcalloc(nc ? nc : 1, sizeof(*z->containers));
                        for (size_t i = 0; i < nc; i++) {
                                const struct mnode *ck = mnode_key(v[3], i);
                                struct container_info *ci;
                                if (!manifest_is_dns_label(ck->value)) {
                                        cleanup_free char *pc = mpath_key(p, ck->value);
                                        ctx_error(x, ck, pc,
                                                  "container name '%s' must be a DNS label "
                                                  "(a-z, 0-9 and '-', at most 63 characters)",
                                                  ck->value);
                                }
                                ci = ctx_add_container(x, z, ck, mnode_value(v[3], i), ck->value);
                                ctx_parse_container(x, z, ci);
                        }
                }
        }
        for (size_t i = first; i < x->n_ci; i++)
                ctx_finalize_container(x, z, &x->ci[i]);
        if (kind == MANIFEST_ZONE_AGENT && !manifest_find_container(x->m, "env"))
                ctx_error(x, x->zone_containers[kind], "zones.agent.containers",
                          "an 'env' container is required (it runs the environment server)");
}

static void parse_assets(struct manifest_ctx *x, const struct mnode *n)
{
        struct manifest *m = x->m;
        size_t na;

        if (!mnode_user_map(x, n, "privileged_assets", MANIFEST_MAX_LIST, "assets"))
                return;
        na = mnode_map_size(n);
        m->assets = xcalloc(na + 1, sizeof(*m->assets));
        x->asset_keys = xcalloc(na + 1, sizeof(const struct mnode *));
        x->asset_vals = xcalloc(na + 1, sizeof(const struct mnode *));
        for (size_t i = 0; i < na; i++) {
                const struct mnode *k = mnode_key(n, i), *v = mnode_value(n, i);
                cleanup_free char *p = mpath_key("privileged_assets", k->value);
                char *abs;

                if (!manifest_is_asset_name(k->value)) {
                        ctx_error(x, k, p,
                                  "asset name '%s' must be letters, digits, '-' or '_' (at most "
                                  "63)",
                                  k->value);
                        continue;
                }
                if (!manifest_resolve_host_path(x, v, p, "an asset path", &abs))
                        continue;
                manifest_check_host_path(x, v, p, abs, false);
                x->asset_keys[m->n_assets] = k;
                x->asset_vals[m->n_assets] = v;
                m->assets[m->n_assets++] =
                        (struct manifest_asset){ .name = xstrdup(k->value), .path = abs };
        }
}

/* model: {budget: {requests, bytes, tokens}}; absent fields stay 0 (unlimited). */
static void parse_model(struct manifest_ctx *x, const struct mnode *n)
{
        static const char *const keys[] = { "budget" };
        static const char *const bkeys[] = { "requests", "bytes", "tokens" };
        static const uint64_t max[] = { MANIFEST_MAX_MODEL_REQUESTS, MANIFEST_MAX_MODEL_BYTES,
                                        MANIFEST_MAX_MODEL_TOKENS };
        struct manifest_model_budget *b = &x->m->model.budget;
        uint64_t *fields[] = { &b->requests, &b->bytes, &b->tokens };
        const struct mnode *k[1], *v[1], *bk[3], *bv[3];

        if (!mnode_fields(x, n, "model", keys, 1, false, k, v) || !v[0] ||
            !mnode_fields(x, v[0], "model.budget", bkeys, 3, false, bk, bv))
                return;
        for (size_t i = 0; i < ELEMENTSOF(bkeys); i++) {
                cleanup_free char *p = NULL;
                if (!bv[i])
                        continue;
                p = mpath_key("model.budget", bkeys[i]);
                (void) mnode_get_uint(x, bv[i], p, 0, max[i], fields[i]);
        }
}

/* An origin-form path as the unit's port normalises it: "/a/b", no
 * escapes, no empty, "." or ".." segment, no trailing slash. */
static bool is_route(const char *s)
{
        if (s[0] != '/' || s[1] == '\0')
                return false;
        for (const char *seg = s + 1;;) {
                size_t n = strcspn(seg, "/");
                if (n == 0 || (n == 1 && seg[0] == '.') || (n == 2 && startswith(seg, "..")))
                        return false;
                for (size_t i = 0; i < n; i++)
                        if (!isalnum((unsigned char) seg[i]) &&
                            !strchr("-._~!$&'()*+,;=:@", seg[i]))
                                return false;
                if (seg[n] == '\0')
                        return true;
                seg += n + 1;
        }
}

static void parse_agent_paths(struct manifest_ctx *x, const struct mnode *n)
{
        const struct mnode **nodes = NULL;

        x->m->agent_paths = manifest_parse_string_list(x, n, "agent_paths", &nodes);
        /* nodes is NULL only when the list is empty (not a list, too long). */
        for (size_t i = 0; nodes && x->m->agent_paths[i]; i++)
                if (!is_route(x->m->agent_paths[i])) {
                        cleanup_free char *p = mpath_index("agent_paths", i);
                        ctx_error(x, nodes[i], p,
                                  "'%s' is not a path like /tools/run (no escapes, query, "
                                  "trailing slash, '.' or '..')",
                                  x->m->agent_paths[i]);
                }
        free(nodes);
}

/*
 * openenvd.enforcement.require: the guarantees of OpenEnv RFC 009 the unit
 * depends on. This daemon provides all four when isolation is on (zones in
 * their own namespaces, relays as the only way out, no capabilities,
 * control routes on the daemon's port only) and none when it steps aside,
 * so listing any one means: never step aside. Its backends (openshell,
 * local) are RFC 009's, not this daemon's: refused, with why.
 */
static void parse_enforcement(struct manifest_ctx *x, const struct mnode *n)
{
        static const char *const keys[] = { "require", "backend" };
        static const char *const guarantees[] = { "asset_isolation", "egress_control",
                                                  "privilege_drop", "control_plane_isolation" };
        const struct mnode *k[2], *v[2], **nodes = NULL;
        char **req;

        if (!mnode_fields(x, n, "enforcement", keys, 2, false, k, v))
                return;
        if (v[1])
                ctx_error(x, v[1], "enforcement.backend",
                          "openenvd enforces with the kernel itself (namespaces, cgroups, "
                          "seccomp): RFC 009's backends (openshell, local) are not used; "
                          "remove backend and keep require");
        if (!v[0])
                return;
        req = manifest_parse_string_list(x, v[0], "enforcement.require", &nodes);
        for (size_t i = 0; nodes && req[i]; i++) {
                size_t g = 0;

                while (g < ELEMENTSOF(guarantees) && !streq(req[i], guarantees[g]))
                        g++;
                if (g == ELEMENTSOF(guarantees)) {
                        cleanup_free char *p = mpath_index("enforcement.require", i);
                        ctx_error(x, nodes[i], p,
                                  "unknown guarantee '%s' (asset_isolation, egress_control, "
                                  "privilege_drop, control_plane_isolation)",
                                  req[i]);
                }
        }
        free(nodes);
        strv_free(x->m->require);
        x->m->require = req;
}

/* OpenEnv RFC 009's own openenvd block names other keys for the same
 * intent: said once, with where the mapping is, not key by key. */
static bool rfc009_block(struct manifest_ctx *x, const struct mnode *n)
{
        static const char *const theirs[] = { "enabled", "surfaces",  "workload",
                                              "egress",  "processes", "openshell" };

        if (!n || n->kind != MNODE_MAP)
                return false;
        for (size_t i = 0; i < mnode_map_size(n); i++)
                for (size_t j = 0; j < ELEMENTSOF(theirs); j++)
                        if (streq(mnode_key(n, i)->value, theirs[j])) {
                                ctx_error(x, mnode_key(n, i), "openenvd",
                                          "'%s' belongs to OpenEnv RFC 009's openenvd block, "
                                          "which this openenvd does not read: write zones, "
                                          "privileged_assets, agent_paths and "
                                          "enforcement.require instead (docs/OPENENV.md, "
                                          "\"OpenEnv RFC 009\", maps each key)",
                                          theirs[j]);
                                return true;
                        }
        return false;
}

/* `standby: K` episodes kept ready, or a bool (true: one, false: none). */
static void parse_standby(struct manifest_ctx *x, const struct mnode *n)
{
        uint64_t k;
        bool on;

        if (n->kind == MNODE_SCALAR && n->plain && parse_uint64(n->value, 0, UINT64_MAX, &k) >= 0) {
                if (mnode_get_uint(x, n, "standby", 0, MANIFEST_STANDBY_MAX, &k))
                        x->m->standby = (unsigned) k;
        } else if (mnode_as_bool(n, &on))
                x->m->standby = on ? 1 : 0;
        else
                ctx_error(x, n, "standby",
                          "expected true, false or a number of episodes in 0..%d%s%s%s",
                          MANIFEST_STANDBY_MAX, n->kind == MNODE_SCALAR ? ", got '" : "",
                          n->kind == MNODE_SCALAR ? n->value : "",
                          n->kind == MNODE_SCALAR ? "'" : "");
}

/* `episodes: {concurrent: N, session_idle_s: S}`: how many sessions each
 * have an episode at once; how long an HTTP MCP session may sit unused. */
static void parse_episodes(struct manifest_ctx *x, const struct mnode *n)
{
        static const char *const keys[] = { "concurrent", "session_idle_s" };
        const struct mnode *k[2], *v[2];
        uint64_t c;

        if (!mnode_fields(x, n, "episodes", keys, 2, false, k, v))
                return;
        if (v[0] && mnode_get_uint(x, v[0], "episodes.concurrent", 1, MANIFEST_CONCURRENT_MAX, &c))
                x->m->concurrent = (unsigned) c;
        if (v[1] &&
            mnode_get_uint(x, v[1], "episodes.session_idle_s", 1, MANIFEST_SESSION_IDLE_MAX_S, &c))
                x->m->session_idle_s = (unsigned) c;
}

static void parse_openenvd(struct manifest_ctx *x, const struct mnode *n, const char **app,
                           uint16_t *port, bool *have_port)
{
        static const char *const keys[] = {
                "app",
                "port",
                "kill_deadline_s",
                "workspace_seed",
                "privileged_assets",
                "zones",
                "model",
                "standby",
                "agent_paths",
                "enforcement",
                "verdict_policy",
                "template",
                "episodes",
        };
        static const char *const zkeys[] = { "agent", "services", "observers" };
        const struct mnode *k[ELEMENTSOF(keys)], *v[ELEMENTSOF(keys)], *zk[3] = { 0 },
                                                                       *zv[3] = { 0 };
        bool ok = !rfc009_block(x, n) &&
                  mnode_fields(x, n, "openenvd", keys, ELEMENTSOF(keys), false, k, v);

        if (ok && v[0] && mnode_get_string(x, v[0], "app", app) && !manifest_is_app_string(*app)) {
                ctx_error(x, v[0], "app", "app '%s' must look like module:attribute", *app);
                *app = NULL;
                x->app_invalid = true;
        }
        if (ok && v[1] && mnode_get_port(x, v[1], "port", port))
                *have_port = true;
        if (ok && v[2])
                (void) mnode_get_positive_double(x, v[2], "kill_deadline_s",
                                                 MANIFEST_MAX_KILL_DEADLINE_S,
                                                 &x->m->kill_deadline_s);
        if (ok && v[3] &&
            manifest_resolve_host_path(x, v[3], "workspace_seed", "workspace_seed",
                                       &x->m->workspace_seed)) {
                size_t before = x->errors->n;
                manifest_check_host_path(x, v[3], "workspace_seed", x->m->workspace_seed, true);
                /* A seed the assets are checked against: one that is one. */
                if (x->errors->n == before)
                        x->seed_node = v[3];
        }
        if (ok && v[4])
                parse_assets(x, v[4]);
        if (ok && v[6])
                parse_model(x, v[6]);
        if (ok && v[7])
                parse_standby(x, v[7]);
        if (ok && v[8])
                parse_agent_paths(x, v[8]);
        if (ok && v[12])
                parse_episodes(x, v[12]);
        if (ok && v[11])
                (void) mnode_get_bool(x, v[11], "template", &x->m->env_template);
        if (ok && v[9])
                parse_enforcement(x, v[9]);
        /* Before the zones: each container starts from it. */
        if (ok && v[10])
                manifest_parse_verdict_policy(x, v[10], "verdict_policy", &x->m->verdict_policy);
        if (!x->m->assets)
                x->m->assets = xcalloc(1, sizeof(*x->m->assets));

        /* The app and port must be final before the env container's argv. */
        if (ok && v[5])
                ok = mnode_fields(x, v[5], "zones", zkeys, 3, false, zk, zv);
        for (unsigned z = 0; z < MANIFEST_ZONE_MAX; z++)
                zone_set_defaults(&x->m->zones[z], z);
        x->m->app = *app ? xstrdup(*app) : x->m->app;
        if (*have_port)
                x->m->port = *port;
        for (unsigned z = 0; z < MANIFEST_ZONE_MAX; z++)
                parse_zone(x, z, ok ? zk[z] : NULL, ok ? zv[z] : NULL);
}

static void ctx_done(struct manifest_ctx *x)
{
        for (size_t i = 0; i < x->n_ci; i++) {
                free(x->ci[i].path);
                free(x->ci[i].read_nodes);
                free(x->ci[i].after_nodes);
                free(x->ci[i].phase_nodes);
        }
        free(x->ci);
        free(x->asset_keys);
        free(x->asset_vals);
}

int manifest_parse(const char *data, size_t size, const char *base_dir, unsigned flags,
                   struct manifest_errors *errors, struct manifest **ret)
{
        return manifest_parse_with(data, size, base_dir, flags, NULL, errors, ret);
}

int manifest_parse_with(const char *data, size_t size, const char *base_dir, unsigned flags,
                        const struct manifest_overrides *o, struct manifest_errors *errors,
                        struct manifest **ret)
{
        static const char *const top_keys[] = { "app",  "port", "openenvd", "spec_version",
                                                "name", "type", "runtime" };
        cleanup(manifest_freep) struct manifest *m = NULL;
        struct mdoc doc = { 0 };
        struct manifest_ctx x = { .errors = errors, .flags = flags, .overrides = o };
        const struct mnode *k[7] = { 0 }, *v[7] = { 0 };
        const char *top_app = NULL, *app = NULL;
        uint16_t top_port = 0, port = 0;
        bool have_port = false;
        size_t before = errors->n;
        int r;

        if (!base_dir || base_dir[0] != '/')
                return -EINVAL;
        r = mdoc_parse(data, size, errors, &doc);
        if (r < 0) {
                manifest_errors_sort(errors);
                return r;
        }

        m = xcalloc(1, sizeof(*m));
        m->base_dir = xstrdup(base_dir);
        m->port = MANIFEST_DEFAULT_PORT;
        m->kill_deadline_s = MANIFEST_DEFAULT_KILL_DEADLINE_S;
        m->standby = 1;
        m->concurrent = 1;
        m->session_idle_s = MANIFEST_DEFAULT_SESSION_IDLE_S;
        m->env_template = true;
        manifest_verdict_policy_defaults(&m->verdict_policy);
        x.m = m;
        x.root = doc.root;

        if (doc.root && !mnode_is_null(doc.root) && doc.root->kind != MNODE_MAP) {
                ctx_error(&x, doc.root, "", "the manifest must be a mapping");
        } else {
                /* Standard OpenEnv keys outside `openenvd:` are the env
                 * image's business; only app and port feed the contract. */
                (void) mnode_fields(&x, doc.root, "", top_keys, 7, true, k, v);
                if (v[0] && mnode_get_string(&x, v[0], "app", &top_app) &&
                    !manifest_is_app_string(top_app)) {
                        ctx_error(&x, v[0], "app", "app '%s' must look like module:attribute",
                                  top_app);
                        top_app = NULL;
                        x.app_invalid = true;
                }
                if (v[1] && mnode_get_port(&x, v[1], "port", &top_port)) {
                        port = top_port;
                        have_port = true;
                }
                app = top_app;
                parse_openenvd(&x, v[2], &app, &port, &have_port);
                /* Cross-container rules run even after structural errors,
                 * on what did parse, so one run reports everything. */
                if (!errors->truncated)
                        manifest_check_rules(&x);
        }

        ctx_done(&x);
        mdoc_done(&doc);
        if (errors->n > before || errors->truncated) {
                manifest_errors_sort(errors);
                return -EINVAL;
        }
        *ret = TAKE_PTR(m);
        return 0;
}

int manifest_load(const char *path, struct manifest_errors *errors, struct manifest **ret)
{
        return manifest_load_with(path, NULL, errors, ret);
}

int manifest_load_with(const char *path, const struct manifest_overrides *o,
                       struct manifest_errors *errors, struct manifest **ret)
{
        cleanup_close int fd = -EBADF;
        cleanup_free char *buf = NULL, *real = NULL;
        struct stat st;
        size_t len;
        char *slash;
        int r;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        /* A FIFO or device could block forever or never end. */
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        if (st.st_size > (off_t) MANIFEST_MAX_BYTES) {
                manifest_errors_add(errors, 1, 1, "",
                                    "file is %lld bytes, larger than the limit of %d bytes",
                                    (long long) st.st_size, MANIFEST_MAX_BYTES);
                return -EINVAL;
        }
        r = read_full_fd(fd, (size_t) MANIFEST_MAX_BYTES, &buf, &len);
        if (r == -EFBIG) {
                manifest_errors_add(errors, 1, 1, "", "file is larger than the limit of %d bytes",
                                    MANIFEST_MAX_BYTES);
                return -EINVAL;
        }
        if (r < 0)
                return r;
        real = realpath(path, NULL);
        if (!real)
                return negative_errno();
        slash = strrchr(real, '/');
        if (slash == real)
                slash[1] = '\0';
        else if (slash)
                *slash = '\0';
        return manifest_parse_with(buf, len, real, MANIFEST_CHECK_PATHS, o, errors, ret);
}
