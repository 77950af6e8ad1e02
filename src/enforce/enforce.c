/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The check's entry points: build the world, probe every container, tear
 * the world down; then the report. The parts are listed in
 * enforce-internal.h.
 */
#include "enforce/enforce.h"

#include <errno.h>
#include <unistd.h>

#include "base/util.h"
#include "enforce/enforce-internal.h"

int enforce_run(const struct enforce_options *o, struct enforce_report **ret)
{
        struct enforce_world R = { .o = o, .m = o->manifest, .log_fd = -EBADF, .tcp_fd = -EBADF };
        struct enforce_report *rep;
        size_t n = 0;
        int r;

        if (!o->manifest || !o->shim_path || !o->probe_path)
                return -EINVAL;
        if (access(o->probe_path, X_OK) < 0 || access(o->shim_path, X_OK) < 0)
                return -errno;

        r = enforce_world_setup(&R);
        if (r < 0) {
                enforce_world_teardown(&R);
                return r;
        }
        for (int z = 0; z < MANIFEST_ZONE_MAX; z++)
                n += R.m->zones[z].n_containers;
        rep = xcalloc(1, sizeof(*rep));
        rep->plans = xcalloc(n, sizeof(*rep->plans));
        for (int z = 0; z < MANIFEST_ZONE_MAX; z++)
                for (size_t k = 0; k < R.m->zones[z].n_containers; k++)
                        enforce_probe_container(&R, &R.m->zones[z].containers[k],
                                                &rep->plans[rep->n_plans++]);
        enforce_world_teardown(&R);
        *ret = rep;
        return 0;
}

struct enforce_report *enforce_report_free(struct enforce_report *r)
{
        if (!r)
                return NULL;
        for (size_t i = 0; i < r->n_plans; i++)
                enforce_plan_done(&r->plans[i]);
        free(r->plans);
        return mfree(r);
}

bool enforce_report_held(const struct enforce_report *r)
{
        if (r->n_plans == 0)
                return false;
        for (size_t i = 0; i < r->n_plans; i++)
                if (!enforce_plan_held(&r->plans[i]))
                        return false;
        return true;
}

json_t *enforce_report_to_json(const struct enforce_report *r)
{
        json_t *o = json_object(), *probes = json_array();

        for (size_t i = 0; i < r->n_plans; i++)
                json_array_append_new(probes, enforce_plan_to_json(&r->plans[i]));
        json_object_set_new(o, "held", json_boolean(enforce_report_held(r)));
        json_object_set_new(o, "probes", probes);
        return o;
}

void enforce_report_format(const struct enforce_report *r, FILE *f)
{
        size_t failed = 0, total = 0;

        enforce_plans_format(r->plans, r->n_plans, f);
        for (size_t i = 0; i < r->n_plans; i++)
                for (int g = 0; g < _G_MAX; g++) {
                        total++;
                        if (!enforce_plan_guarantee_held(&r->plans[i], (enum enforce_guarantee) g))
                                failed++;
                }
        if (enforce_report_held(r))
                fprintf(f, "\nenforcement: all %zu guarantees held in %zu probe containers\n",
                        total, r->n_plans);
        else
                fprintf(f, "\nenforcement: %zu of %zu guarantees FAILED\n", failed, total);
}
