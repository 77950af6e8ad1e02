/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The built manifest from outside: the names of its enums, its lookups
 * (zone, container, asset, observer order, reads) and its destructor, on
 * manifest.h's types alone. The parser's files above use them as every
 * caller of the module does; the parser reads the names of the runtimes and
 * of during_grading from these tables too (manifest-internal.h).
 */
#include <stdlib.h>

#include "base/string-table.h"
#include "base/util.h"
#include "manifest/manifest-internal.h"

static const char *const manifest_zone_kind_table[MANIFEST_ZONE_MAX] = {
        [MANIFEST_ZONE_AGENT] = "agent",
        [MANIFEST_ZONE_SERVICES] = "services",
        [MANIFEST_ZONE_OBSERVERS] = "observers",
};
static const char *const manifest_egress_table[] = {
        [MANIFEST_EGRESS_NONE] = "none",
        [MANIFEST_EGRESS_RELAYS_ONLY] = "relays-only",
};
const char *const manifest_oci_table[MANIFEST_OCI_MAX] = {
        [MANIFEST_OCI_NATIVE] = "native",
        [MANIFEST_OCI_CRUN] = "crun",
        [MANIFEST_OCI_RUNC] = "runc",
        [MANIFEST_OCI_RUNSC] = "runsc",
};
const char *const manifest_during_grading_table[MANIFEST_DURING_GRADING_MAX] = {
        [MANIFEST_DURING_GRADING_FROZEN] = "frozen",
        [MANIFEST_DURING_GRADING_SERVE_OBSERVERS] = "serve-observers",
};
static const char *const manifest_read_kind_table[] = {
        [MANIFEST_READ_ASSET] = "asset",
        [MANIFEST_READ_WORKSPACE] = "workspace",
        [MANIFEST_READ_SERVICE_STATE] = "service_state",
        [MANIFEST_READ_OUTPUT] = "output",
        [MANIFEST_READ_ACTIONS] = "actions",
};

const char *const manifest_verdict_event_table[MANIFEST_VERDICT_EVENT_MAX] = {
        [MANIFEST_VERDICT_EVENT_OOM_KILL] = "oom_kill",
        [MANIFEST_VERDICT_EVENT_PIDS_LIMIT] = "pids_limit",
        [MANIFEST_VERDICT_EVENT_DETACHED] = "detached",
        [MANIFEST_VERDICT_EVENT_DISK_FULL] = "disk_full",
        [MANIFEST_VERDICT_EVENT_EXIT] = "exit",
};
const char *const manifest_verdict_action_table[MANIFEST_VERDICT_ACTION_MAX] = {
        [MANIFEST_VERDICT_RECORD] = "record",
        [MANIFEST_VERDICT_VOID] = "void",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(manifest_zone_kind, enum manifest_zone_kind);
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(manifest_egress, enum manifest_egress);
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(manifest_oci, enum manifest_oci);
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(manifest_during_grading, enum manifest_during_grading);
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(manifest_read_kind, enum manifest_read_kind);
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(manifest_verdict_event, enum manifest_verdict_event);
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(manifest_verdict_action, enum manifest_verdict_action);

static void container_done(struct manifest_container *c)
{
        free(c->name);
        strv_free(c->argv);
        strv_free(c->env);
        for (size_t i = 0; i < c->n_reads; i++)
                free(c->reads[i].target);
        free(c->reads);
        free(c->expose.host);
        free(c->state);
        free(c->output);
        strv_free(c->after);
        free(c->rootfs);
        free(c->workdir);
}

struct manifest *manifest_free(struct manifest *m)
{
        if (!m)
                return NULL;
        for (unsigned z = 0; z < MANIFEST_ZONE_MAX; z++) {
                for (size_t i = 0; i < m->zones[z].n_containers; i++)
                        container_done(&m->zones[z].containers[i]);
                free(m->zones[z].containers);
        }
        for (size_t i = 0; i < m->n_assets; i++) {
                free(m->assets[i].name);
                free(m->assets[i].path);
        }
        free(m->assets);
        free(m->observer_order);
        free(m->app);
        free(m->base_dir);
        free(m->workspace_seed);
        strv_free(m->agent_paths);
        strv_free(m->require);
        return mfree(m);
}

const struct manifest_zone *manifest_zone(const struct manifest *m, enum manifest_zone_kind kind)
{
        return (unsigned) kind < MANIFEST_ZONE_MAX ? &m->zones[kind] : NULL;
}

const struct manifest_container *manifest_find_container(const struct manifest *m, const char *name)
{
        for (unsigned z = 0; z < MANIFEST_ZONE_MAX; z++)
                for (size_t i = 0; i < m->zones[z].n_containers; i++)
                        if (streq(m->zones[z].containers[i].name, name))
                                return &m->zones[z].containers[i];
        return NULL;
}

const struct manifest_asset *manifest_find_asset(const struct manifest *m, const char *name)
{
        for (size_t i = 0; i < m->n_assets; i++)
                if (streq(m->assets[i].name, name))
                        return &m->assets[i];
        return NULL;
}

size_t manifest_observer_order(const struct manifest *m,
                               const struct manifest_container *const **ret)
{
        *ret = m->observer_order;
        return m->n_observer_order;
}

bool manifest_container_reads(const struct manifest_container *c, enum manifest_read_kind kind)
{
        for (size_t i = 0; i < c->n_reads; i++)
                if (c->reads[i].kind == kind)
                        return true;
        return false;
}

bool manifest_container_lists(const struct manifest_container *c, enum phase p)
{
        return c->phases & PHASE_BIT(p);
}

bool manifest_container_runs_early(const struct manifest_container *c)
{
        return manifest_container_lists(c, PHASE_READY) ||
               manifest_container_lists(c, PHASE_RUNNING);
}

char *manifest_read_to_string(const struct manifest_read *r)
{
        switch (r->kind) {
        case MANIFEST_READ_ASSET:
                return xasprintf("assets.%s", r->target);
        case MANIFEST_READ_WORKSPACE:
                return xstrdup("workspace");
        case MANIFEST_READ_SERVICE_STATE:
                return xasprintf("services.%s.state", r->target);
        case MANIFEST_READ_OUTPUT:
                return xasprintf("%s.output", r->target);
        case MANIFEST_READ_ACTIONS:
                return xstrdup("actions");
        }
        return xstrdup("?");
}
