/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "unit/unit-stats.h"

#include <string.h>

#include "base/string-table.h"
#include "base/util.h"
#include "unit/unit-plan.h"

static const char *const unit_end_table[_UNIT_END_MAX] = {
        [UNIT_END_DONE] = "done",
        [UNIT_END_ORCHESTRATOR] = "ended_by_orchestrator",
        [UNIT_END_MEMBER_EXITED] = "member_exited",
        [UNIT_END_PROVISIONING_FAILED] = "provisioning_failed",
        [UNIT_END_SUPERSEDED] = "superseded",
};

static const char *const unit_reset_source_table[_UNIT_RESET_SOURCE_MAX] = {
        [UNIT_RESET_STANDBY] = "standby",
        [UNIT_RESET_STANDBY_PROVISIONING] = "standby_provisioning",
        [UNIT_RESET_COLD] = "cold",
};

static const char *const unit_env_start_table[_UNIT_ENV_START_MAX] = {
        [UNIT_ENV_TEMPLATE] = "template",
        [UNIT_ENV_COLD] = "cold",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(unit_end, enum unit_end);
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(unit_env_start, enum unit_env_start);
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(unit_reset_source, enum unit_reset_source);

/*
 * Buckets, in seconds. Phases last from a millisecond (sealed, with nothing
 * to wait for) to the length of an agent's episode (running: minutes or
 * more). A reset from a ready standby takes well under a millisecond; a
 * cold one is an env server's start, tenths of a second to tens of seconds.
 */
static const double phase_bounds[] = { 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                       1,     2.5,   5,    10,    30,   60,  300,  1800 };
static const double reset_bounds[] = { 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1,
                                       0.25,   0.5,    1,     2.5,   5,    10,    30,   60 };

void unit_stats_init(struct unit_stats *s, const struct manifest *m)
{
        size_t k = 0;

        *s = (struct unit_stats){};
        for (size_t i = 0; i < PHASE_MAX; i++)
                (void) histogram_init(&s->phase_seconds[i], phase_bounds, ELEMENTSOF(phase_bounds));
        for (size_t i = 0; i < _UNIT_RESET_SOURCE_MAX; i++)
                (void) histogram_init(&s->reset_seconds[i], reset_bounds, ELEMENTSOF(reset_bounds));
        s->n_containers = unit_container_count(m);
        s->containers = xcalloc(s->n_containers ?: 1, sizeof(*s->containers));
        /* The order of episodes' members: zones in order, then containers. */
        for (int z = 0; z < MANIFEST_ZONE_MAX; z++)
                for (size_t c = 0; c < m->zones[z].n_containers && k < s->n_containers; c++)
                        s->containers[k++].mc = &m->zones[z].containers[c];
}

void unit_stats_done(struct unit_stats *s)
{
        free(s->containers);
        *s = (struct unit_stats){};
}

void unit_stats_copy(const struct unit_stats *s, struct unit_stats *ret)
{
        *ret = *s;
        ret->containers = xcalloc(s->n_containers ?: 1, sizeof(*ret->containers));
        memcpy(ret->containers, s->containers, s->n_containers * sizeof(*s->containers));
}
