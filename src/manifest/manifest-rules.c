/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cross-container rules of docs/DESIGN.md §3, run over the typed
 * containers with the positions the parser recorded. Everything here works on
 * what parsed successfully, so structural errors elsewhere do not hide rule
 * violations.
 */
#include <stdint.h>
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

        m->observer_order = xcalloc(o.n_order + 1, sizeof(const struct manifest_container *));
        for (size_t k = 0; k < o.n_order; k++)
                m->observer_order[k] = o.ci[o.order[k]]->c;
        m->n_observer_order = o.n_order;
}
