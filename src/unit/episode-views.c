/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the unit reads of an episode (episode.h): its id, slot, state, env
 * socket, verdict, count of actions, members. Nothing here changes it.
 */
#include <errno.h>

#include "base/util.h"
#include "cgroup/cgroup.h"
#include "sandbox/netns-keep.h"
#include "unit/episode-internal.h"
#include "unit/unit-stats.h"

const char *episode_id(const struct episode *e)
{
        return e->id;
}

unsigned episode_slot(const struct episode *e)
{
        return e->slot;
}

enum episode_state episode_state(const struct episode *e)
{
        return e->state;
}

const char *episode_env_socket(const struct episode *e)
{
        return e->env_socket;
}

int episode_env_tcp_socket(const struct episode *e, int family, uint16_t *ret_port)
{
        for (size_t i = 0; i < e->n_members; i++) {
                const struct ep_member *mb = &e->members[i];
                if (!unit_container_is_env(mb->mc))
                        continue;
                if (!mb->netns || !mb->m)
                        return -ENETUNREACH;
                if (ret_port)
                        *ret_port = mb->mc->port ?: e->cfg->manifest->port;
                return family < 0 ? 0 : kept_netns_socket(mb->netns, family);
        }
        return -ENETUNREACH;
}

struct verdict *episode_verdict(struct episode *e)
{
        return &e->verdict;
}

uint64_t episode_actions(const struct episode *e)
{
        return e->actions.actions;
}

json_t *episode_members_json(const struct episode *e)
{
        json_t *j = json_object();

        for (size_t i = 0; i < e->n_members; i++) {
                const struct ep_member *mb = &e->members[i];
                if (!mb->started)
                        continue;
                json_object_set_new(
                        j, mb->mc->name,
                        json_pack("{s:b,s:o,s:b,s:s,s:s}", "running", !mb->exited, "exit_status",
                                  mb->exited ? json_integer(mb->status) : json_null(), "ready",
                                  mb->m ? member_is_ready(mb->m) : false, "cgroup", mb->cgroup,
                                  "start",
                                  unit_env_start_to_string(mb->forked ? UNIT_ENV_TEMPLATE
                                                                      : UNIT_ENV_COLD)));
        }
        return j;
}

void episode_add_limit_events(const struct episode *e, struct unit_container_stats *acc)
{
        for (size_t i = 0; i < e->n_members; i++) {
                const struct ep_member *mb = &e->members[i];
                struct cgroup_stats st;
                if (mb->limits_final) {
                        acc[i].oom_kills += mb->oom_kills;
                        acc[i].pids_limit_events += mb->pids_limit_events;
                } else if (e->cgroups && cgroup_stats(e->cfg->cgroups, mb->cgroup, &st) >= 0) {
                        acc[i].oom_kills += st.oom_kills;
                        acc[i].pids_limit_events += st.pids_max_events;
                }
        }
}

bool episode_env_forked(const struct episode *e)
{
        for (size_t i = 0; i < e->n_members; i++)
                if (unit_container_is_env(e->members[i].mc))
                        return e->members[i].forked;
        return false;
}

bool episode_owns_pid(struct episode *e, pid_t pid)
{
        for (size_t i = 0; i < e->n_members; i++)
                if (e->members[i].m && member_pid(e->members[i].m) == pid) {
                        /* Reap now, through the pidfd (the status stays ours). */
                        (void) member_poll_exit(e->members[i].m);
                        return true;
                }
        if (e->job && child_job_pid(e->job) == pid) {
                child_job_poll(e->job);
                return true;
        }
        return false;
}
