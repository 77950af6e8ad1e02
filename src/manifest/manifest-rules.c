/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cross-container rules of docs/DESIGN.md §3, run over the typed
 * containers with the positions the parser recorded. Everything here works on
 * what parsed successfully, so structural errors elsewhere do not hide rule
 * violations.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "manifest/manifest-internal.h"

_Static_assert(MANIFEST_MAX_CONTAINERS <= 64, "observer sets are uint64_t bitmaps");

static void check_names(struct manifest_ctx *x)
{
        static const char *const reserved[] = { "workspace", "assets", "services" };

        for (size_t i = 0; i < x->n_ci; i++) {
                const struct container_info *a = &x->ci[i];
                const struct mnode *at = a->key ? a->key : a->node;

                for (size_t r = 0; r < ELEMENTSOF(reserved); r++)
                        if (streq(a->c->name, reserved[r]))
                                ctx_error(x, at, a->path,
                                          "'%s' is reserved (it names a read target)", a->c->name);
                /* Names become host names, cgroup names and read targets: one
                 * name, one container, across the whole unit. */
                for (size_t j = 0; j < i; j++) {
                        const struct container_info *b = &x->ci[j];
                        if (!streq(a->c->name, b->c->name))
                                continue;
                        if (b->key)
                                ctx_error(x, at, a->path,
                                          "container name '%s' is already used in the %s zone "
                                          "(%u:%u)",
                                          a->c->name, manifest_zone_kind_to_string(b->c->zone),
                                          b->key->line, b->key->column);
                        else
                                ctx_error(x, at, a->path,
                                          "container name '%s' is already used in the %s zone",
                                          a->c->name, manifest_zone_kind_to_string(b->c->zone));
                        break;
                }
        }
}

static void check_expose(struct manifest_ctx *x)
{
        for (size_t i = 0; i < x->n_ci; i++) {
                const struct container_info *a = &x->ci[i];
                if (!a->c->expose.host)
                        continue;
                for (size_t j = 0; j < i; j++) {
                        const struct container_info *b = &x->ci[j];
                        const struct mnode *hb;
                        cleanup_free char *p = NULL;
                        if (!b->c->expose.host ||
                            strcasecmp(a->c->expose.host, b->c->expose.host) != 0)
                                continue;
                        hb = b->vals[CK_EXPOSE];
                        p = xasprintf("%s.expose.host", a->path);
                        ctx_error(x, a->vals[CK_EXPOSE], p,
                                  "expose host '%s' is already used by service '%s' (%u:%u); "
                                  "exposed hosts must be unique",
                                  a->c->expose.host, b->c->name, hb->line, hb->column);
                        break;
                }
        }
}

struct observers {
        struct container_info *ci[MANIFEST_MAX_CONTAINERS];
        size_t n;
        uint64_t after[MANIFEST_MAX_CONTAINERS];    /* direct predecessors (bits) */
        uint64_t upstream[MANIFEST_MAX_CONTAINERS]; /* transitive predecessors */
        size_t order[MANIFEST_MAX_CONTAINERS];
        size_t n_order;
};

static int observer_index(const struct observers *o, const char *name)
{
        for (size_t i = 0; i < o->n; i++)
                if (streq(o->ci[i]->c->name, name))
                        return (int) i;
        return -1;
}

static void check_after(struct manifest_ctx *x, struct observers *o)
{
        for (size_t i = 0; i < o->n; i++) {
                struct container_info *ci = o->ci[i];
                for (size_t a = 0; ci->c->after && ci->c->after[a]; a++) {
                        const char *name = ci->c->after[a];
                        const struct mnode *at = ci->after_nodes ? ci->after_nodes[a] : NULL;
                        cleanup_free char *p = xasprintf("%s.after", ci->path);
                        int j = observer_index(o, name);

                        if (j == (int) i)
                                ctx_error(x, at, p, "an observer cannot run after itself");
                        else if (j < 0)
                                ctx_error(x, at, p,
                                          "after must name another observer; '%s' is not one",
                                          name);
                        else
                                o->after[i] |= UINT64_C(1) << j;
                }
        }
}

/* Kahn's algorithm, ties broken by manifest order so the order is stable. */
static void order_observers(struct observers *o)
{
        uint64_t done = 0;

        for (;;) {
                size_t pick = o->n;
                for (size_t i = 0; i < o->n; i++)
                        if (!(done & (UINT64_C(1) << i)) && (o->after[i] & ~done) == 0) {
                                pick = i;
                                break;
                        }
                if (pick == o->n)
                        return;
                done |= UINT64_C(1) << pick;
                o->order[o->n_order++] = pick;
                o->upstream[pick] = o->after[pick];
                for (size_t j = 0; j < o->n; j++)
                        if (o->after[pick] & (UINT64_C(1) << j))
                                o->upstream[pick] |= o->upstream[j];
        }
}

/* Whatever Kahn left over lies on or behind a cycle: walk "runs after"
 * edges inside the leftovers until a node repeats, and name that cycle. */
static void report_cycles(struct manifest_ctx *x, struct observers *o)
{
        uint64_t left = 0, reported = 0;

        for (size_t i = 0; i < o->n; i++)
                left |= UINT64_C(1) << i;
        for (size_t k = 0; k < o->n_order; k++)
                left &= ~(UINT64_C(1) << o->order[k]);

        for (size_t start = 0; start < o->n; start++) {
                size_t walk[MANIFEST_MAX_CONTAINERS + 1], n = 0, cur = start, from = 0, first;
                struct strbuf sb = STRBUF_INIT;
                cleanup_free char *p = NULL;
                bool seen = false;

                if (!(left & (UINT64_C(1) << start)) || (reported & (UINT64_C(1) << start)))
                        continue;
                for (;;) {
                        uint64_t next = o->after[cur] & left;
                        for (size_t k = 0; k < n; k++)
                                if (walk[k] == cur) {
                                        from = k;
                                        seen = true;
                                }
                        if (seen || (reported & (UINT64_C(1) << cur)) || !next || n > o->n)
                                break;
                        walk[n++] = cur;
                        cur = (size_t) __builtin_ctzll(next);
                }
                if (!seen)
                        continue;
                /* Start the message at the cycle's first member in manifest
                 * order, so the text does not depend on where the walk began. */
                first = from;
                for (size_t k = from; k < n; k++) {
                        reported |= UINT64_C(1) << walk[k];
                        if (walk[k] < walk[first])
                                first = k;
                }
                for (size_t k = 0; k <= n - from; k++) {
                        size_t idx = from + (first - from + k) % (n - from);
                        strbuf_addf(&sb, "%s%s", k ? " -> " : "", o->ci[walk[idx]]->c->name);
                }
                p = xasprintf("%s.after", o->ci[walk[first]]->path);
                ctx_error(x, o->ci[walk[first]]->vals[CK_AFTER], p, "'after' forms a cycle: %s",
                          sb.buf);
                strbuf_release(&sb);
        }
}

static const struct manifest_container *find_in_zone(const struct manifest *m,
                                                     enum manifest_zone_kind z, const char *name)
{
        for (size_t i = 0; i < m->zones[z].n_containers; i++)
                if (streq(m->zones[z].containers[i].name, name))
                        return &m->zones[z].containers[i];
        return NULL;
}

/* Where item sits in the YAML list (error paths name the list index). */
static size_t list_index(const struct mnode *list, const struct mnode *item)
{
        for (size_t i = 0; list && i < list->n_children; i++)
                if (list->children[i] == item)
                        return i;
        return 0;
}

static void check_reads(struct manifest_ctx *x, struct observers *o, bool acyclic)
{
        const struct manifest *m = x->m;

        for (size_t i = 0; i < o->n; i++) {
                const struct container_info *ci = o->ci[i];
                const struct manifest_container *c = ci->c;
                bool assets = false, workspace = false;

                for (size_t r = 0; r < c->n_reads; r++) {
                        const struct manifest_read *rd = &c->reads[r];
                        const struct mnode *at = ci->read_nodes[r];
                        cleanup_free char *p = xasprintf("%s.reads[%zu]", ci->path,
                                                         list_index(ci->vals[CK_READS], at));
                        const struct manifest_container *t;
                        int j;

                        switch (rd->kind) {
                        case MANIFEST_READ_WORKSPACE:
                                workspace = true;
                                break;
                        case MANIFEST_READ_ACTIONS:
                                /* The daemon's own JSON, bounded: no agent
                                 * file, so it may meet the assets. */
                                break;
                        case MANIFEST_READ_ASSET:
                                assets = true;
                                if (!manifest_find_asset(m, rd->target))
                                        ctx_error(x, at, p, "unknown asset '%s'", rd->target);
                                break;
                        case MANIFEST_READ_SERVICE_STATE:
                                t = find_in_zone(m, MANIFEST_ZONE_SERVICES, rd->target);
                                if (!t)
                                        ctx_error(x, at, p, "unknown service '%s'", rd->target);
                                else if (!t->state)
                                        ctx_error(x, at, p, "service '%s' declares no state",
                                                  rd->target);
                                break;
                        case MANIFEST_READ_OUTPUT:
                                j = observer_index(o, rd->target);
                                if (j == (int) i) {
                                        ctx_error(x, at, p,
                                                  "an observer cannot read its own output");
                                } else if (j < 0) {
                                        ctx_error(x, at, p, "unknown observer '%s'", rd->target);
                                } else if (!o->ci[j]->c->output) {
                                        ctx_error(x, at, p, "observer '%s' declares no output",
                                                  rd->target);
                                } else if (acyclic && !(o->upstream[i] & (UINT64_C(1) << j))) {
                                        /* Its output exists only once it has run. */
                                        ctx_error(x, at, p,
                                                  "reads %s.output but does not run after '%s' "
                                                  "(add after: %s)",
                                                  rd->target, rd->target, rd->target);
                                } else if (c->phases & ~o->ci[j]->c->phases) {
                                        unsigned missing = c->phases & ~o->ci[j]->c->phases;
                                        ctx_error(x, at, p,
                                                  "reads %s.output but '%s' does not run in '%s'",
                                                  rd->target, rd->target,
                                                  phase_to_string(
                                                          (enum phase) __builtin_ctz(missing)));
                                }
                                break;
                        }
                }

                if (assets && workspace) {
                        cleanup_free char *p = xasprintf("%s.reads", ci->path);
                        ctx_error(x, ci->keys[CK_READS], p,
                                  "reads both assets and workspace; split it into a runner "
                                  "(workspace, no assets) and a verdict that reads the runner's "
                                  "output");
                }
                /* Agent code runs in ready/running/sealed: an asset reader
                 * alive then could leak answers (docs/DESIGN.md §3). */
                if (assets) {
                        for (size_t k = 0; k < ci->n_phase_nodes; k++) {
                                const struct mnode *pn = ci->phase_nodes[k];
                                cleanup_free char *p = NULL;
                                unsigned bit = 0;

                                int ph = phase_from_string(pn->value);
                                if (ph >= 0 && ph < PHASE_MANIFEST_MAX)
                                        bit = PHASE_BIT(ph);
                                if (!bit || (bit & MANIFEST_ASSET_PHASES))
                                        continue;
                                p = xasprintf("%s.phases[%zu]", ci->path,
                                              list_index(ci->vals[CK_PHASES], pn));
                                ctx_error(x, pn, p,
                                          "reads assets, so it may run only in frozen or grading, "
                                          "not in '%s'",
                                          pn->value);
                        }
                }
        }
}

/* Whether path is base or lies below it (both absolute, normal). */
static bool path_at_or_below(const char *path, const char *base)
{
        size_t n = strlen(base);

        if (streq(base, "/"))
                return true;
        return strncmp(path, base, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

enum cover {
        COVER_NONE,
        COVER_IS,       /* the asset is the path */
        COVER_CONTAINS, /* the path lies below the asset */
};

static const char *const cover_verb[] = { [COVER_IS] = "is", [COVER_CONTAINS] = "contains" };

/* p resolved by the kernel (symlinks followed), when the manifest's paths
 * are checked and p exists; else NULL. */
static char *real_or_null(const struct manifest_ctx *x, const char *p)
{
        return x->flags & MANIFEST_CHECK_PATHS ? realpath(p, NULL) : NULL;
}

/* How the asset at a covers path p: as written, and as the kernel resolves
 * both (ra, rp: NULL when unknown), so a symlink cannot walk an asset
 * around the check. */
static enum cover asset_covers(const char *a, const char *ra, const char *p, const char *rp)
{
        if (path_at_or_below(p, a))
                return streq(p, a) ? COVER_IS : COVER_CONTAINS;
        if (ra && rp && path_at_or_below(rp, ra))
                return streq(rp, ra) ? COVER_IS : COVER_CONTAINS;
        return COVER_NONE;
}

/* One thing a container needs to see, named for the error. */
struct need {
        char *path;                     /* owned, absolute */
        char *real;                     /* owned: resolved, or NULL (real_or_null()) */
        const struct container_info *c; /* whose */
        char *key;                      /* owned: "argv[1]", "workdir", "PYTHONPATH entry" */
};

/* Takes path and key (both owned); a path that is not absolute names no
 * host path and is dropped. */
static void need_add(const struct manifest_ctx *x, struct need **v, size_t *n, char *path,
                     const struct container_info *c, char *key)
{
        if (!path || path[0] != '/') {
                free(path);
                free(key);
                return;
        }
        *v = xrealloc(*v, (*n + 1) * sizeof(**v));
        /* Resolved once here, not once per asset: a hostile manifest may
         * name MANIFEST_MAX_LIST assets and as many argv entries. */
        (*v)[(*n)++] =
                (struct need){ .path = path, .real = real_or_null(x, path), .c = c, .key = key };
}

static char *strdup_or_null(const char *s)
{
        return s ? xstrdup(s) : NULL;
}

/* What each container names of its image: its argv's absolute entries (a
 * program, a script whose siblings it imports, a data file), its workdir,
 * its state, each entry of PYTHONPATH and PATH it sets. */
static struct need *container_needs(struct manifest_ctx *x, size_t *ret_n)
{
        static const char *const lists[] = { "PYTHONPATH=", "PATH=" };
        struct need *v = NULL;
        size_t n = 0;

        for (size_t i = 0; i < x->n_ci; i++) {
                const struct container_info *ci = &x->ci[i];
                const struct manifest_container *c = ci->c;

                for (size_t a = 0; c->argv && c->argv[a]; a++)
                        need_add(x, &v, &n, xstrdup(c->argv[a]), ci, xasprintf("argv[%zu]", a));
                need_add(x, &v, &n, strdup_or_null(c->workdir), ci, xstrdup("workdir"));
                need_add(x, &v, &n, strdup_or_null(c->state), ci, xstrdup("state"));
                for (char **e = c->env; e && *e; e++)
                        for (size_t l = 0; l < ELEMENTSOF(lists); l++) {
                                const char *rest = startswith(*e, lists[l]);
                                if (!rest)
                                        continue;
                                for (const char *p = rest; *p;) {
                                        size_t len = strcspn(p, ":");
                                        need_add(x, &v, &n, xstrndup(p, len), ci,
                                                 xasprintf("%.*s entry",
                                                           (int) (strlen(lists[l]) - 1), lists[l]));
                                        p += len + (p[len] == ':');
                                }
                        }
        }
        *ret_n = n;
        return v;
}

/*
 * Every container sees each asset's source masked (unit_masks(): a file
 * under /dev/null, a directory under an empty tmpfs), whatever its root. So
 * an asset must not be, or hold, anything the unit needs: the manifest's own
 * directory (the env's code beside openenv.yaml), the workspace seed, what a
 * container's argv, workdir, state or search paths name; nor lie in the seed,
 * which the agent reads as /workspace. One error per asset, the first found.
 */
static void check_asset_masks(struct manifest_ctx *x)
{
        const struct manifest *m = x->m;
        size_t n_needs = 0;
        struct need *needs = container_needs(x, &n_needs);
        const char *seed = x->seed_node ? m->workspace_seed : NULL;
        const char *seed_written = x->seed_node ? x->seed_node->value : NULL;
        cleanup_free char *rseed = seed ? real_or_null(x, seed) : NULL;
        cleanup_free char *rbase = real_or_null(x, m->base_dir);

        for (size_t i = 0; i < m->n_assets; i++) {
                const struct manifest_asset *as = &m->assets[i];
                const struct mnode *at = x->asset_vals ? x->asset_vals[i] : NULL;
                const char *written = at ? at->value : as->path;
                cleanup_free char *p = mpath_key("privileged_assets", as->name);
                cleanup_free char *ra = real_or_null(x, as->path);
                enum cover cv;

                if (seed && asset_covers(seed, rseed, as->path, ra) == COVER_CONTAINS) {
                        ctx_error(x, at, p,
                                  "'%s' is inside workspace_seed '%s': the agent reads the seed "
                                  "as /workspace; keep the asset out of the seed",
                                  written, seed_written);
                        continue;
                }
                if (seed && (cv = asset_covers(as->path, ra, seed, rseed)) != COVER_NONE) {
                        ctx_error(x, at, p,
                                  "'%s' %s workspace_seed '%s': the agent reads the seed as "
                                  "/workspace; give the asset a directory of its own, outside "
                                  "the seed",
                                  written, cover_verb[cv], seed_written);
                        continue;
                }
                if ((cv = asset_covers(as->path, ra, m->base_dir, rbase)) != COVER_NONE) {
                        ctx_error(x, at, p,
                                  "'%s' %s the manifest's own directory, where the env's code "
                                  "is: every container sees an asset's source masked, so the "
                                  "env would not find its own code; name the graders' files "
                                  "themselves, or a directory of their own beside openenv.yaml",
                                  written, cover_verb[cv]);
                        continue;
                }
                for (size_t k = 0; k < n_needs; k++) {
                        const char *np = needs[k].path;
                        const char *who = needs[k].c->c->name;
                        if ((cv = asset_covers(as->path, ra, np, needs[k].real)) == COVER_NONE)
                                continue;
                        ctx_error(x, at, p,
                                  "'%s' %s %s, the %s of container '%s' (%s): every container "
                                  "sees an asset's source masked, so '%s' would not find it; "
                                  "move the asset, or what '%s' needs, out of the other's way",
                                  written, cover_verb[cv], np, needs[k].key, who, needs[k].c->path,
                                  who, who);
                        break;
                }
        }
        for (size_t k = 0; k < n_needs; k++) {
                free(needs[k].path);
                free(needs[k].real);
                free(needs[k].key);
        }
        free(needs);
}

void manifest_check_rules(struct manifest_ctx *x)
{
        struct manifest *m = x->m;
        struct observers o = { 0 };
        bool acyclic;

        check_names(x);
        check_expose(x);

        for (size_t i = 0; i < x->n_ci && o.n < MANIFEST_MAX_CONTAINERS; i++)
                if (x->ci[i].c->zone == MANIFEST_ZONE_OBSERVERS)
                        o.ci[o.n++] = &x->ci[i];
        check_after(x, &o);
        order_observers(&o);
        acyclic = o.n_order == o.n;
        if (!acyclic)
                report_cycles(x, &o);
        check_reads(x, &o, acyclic);
        check_asset_masks(x);

        m->observer_order = xcalloc(o.n_order + 1, sizeof(const struct manifest_container *));
        for (size_t k = 0; k < o.n_order; k++)
                m->observer_order[k] = o.ci[o.order[k]]->c;
        m->n_observer_order = o.n_order;
}
