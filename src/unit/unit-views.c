/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the control routes read of the unit (unit-internal.h): its phase,
 * readiness, episodes, verdicts, logs, counters. Nothing here changes it.
 */
#include <errno.h>
#include <string.h>

#include "base/json-util.h"
#include "base/text-escape.h"
#include "base/util.h"
#include "base/version.h"
#include "unit/env-template.h"
#include "unit/unit-internal.h"

enum phase unit_phase(const struct unit *u)
{
        return u->lanes[0].phase.current;
}

const char *unit_episode_id(const struct unit *u, unsigned lane)
{
        const struct episode *live = unit_lane(u, lane)->live;
        return live ? episode_id(live) : NULL;
}

bool unit_ready(const struct unit *u, char **ret_reason)
{
        if (u->failed_start) {
                if (ret_reason)
                        *ret_reason =
                                xasprintf("the last episode failed to start: %s", u->failed_start);
                return false;
        }
        if (!u->first_pending)
                return true;
        if (!ret_reason)
                return false;
        if (u->standby_failures >= UNIT_STANDBY_MAX_FAILURES)
                *ret_reason = xasprintf("the first episode could not start (%u attempts, the "
                                        "last: %s); a reset tries again",
                                        u->standby_failures, u->standby_error);
        else if (u->standby_failures > 0)
                *ret_reason = xasprintf("the first episode is still starting (%u attempts "
                                        "failed, the last: %s)",
                                        u->standby_failures, u->standby_error);
        else
                *ret_reason = xstrdup("the first episode is still starting");
        return false;
}

bool unit_env_traffic_allowed(const struct unit *u, unsigned lane)
{
        enum phase p = unit_lane(u, lane)->phase.current;

        return p == PHASE_READY || p == PHASE_RUNNING;
}

int unit_env_tcp_socket(const struct unit *u, unsigned lane, int family, uint16_t *ret_port)
{
        const struct episode *live = unit_lane(u, lane)->live;

        if (!live || !unit_env_traffic_allowed(u, lane))
                return -ENETUNREACH;
        return episode_env_tcp_socket(live, family, ret_port);
}

json_t *unit_verdict(const struct unit *u, const char *id)
{
        int lane = id ? unit_lane_of(u, id) : 0;
        struct episode *live;
        size_t i;
        json_t *v;

        if (lane >= 0) {
                live = u->lanes[lane].live;
                return live ? verdict_to_json(episode_verdict(live), episode_id(live))
                            : verdict_to_json(&(struct verdict){}, NULL);
        }
        json_array_foreach(u->recent, i,
                           v) if (streq(json_string_value(json_object_get(v, "episode_id")) ?: "",
                                        id)) return json_incref(v);
        return NULL;
}

unsigned unit_verdict_history(const struct unit *u)
{
        return u->cfg.verdict_history;
}

static const char *standby_state(const struct episode *e)
{
        return episode_state(e) == EPISODE_STANDBY ? "ready" : "provisioning";
}

static unsigned pool_ready(const struct unit *u)
{
        unsigned n = 0;
        for (size_t i = 0; i < u->n_pool; i++)
                n += episode_state(u->pool[i]) == EPISODE_STANDBY;
        return n;
}

/* [{episode_id, state}], oldest first. */
static json_t *pool_json(const struct unit *u)
{
        json_t *a = json_array();
        for (size_t i = 0; i < u->n_pool; i++)
                json_array_append_new(a,
                                      json_pack("{s:s,s:s}", "episode_id", episode_id(u->pool[i]),
                                                "state", standby_state(u->pool[i])));
        return a;
}

/* {episode_id, phase} of the lane's live episode, or null. */
static json_t *live_json(const struct lane *l)
{
        if (!l->live)
                return json_null();
        return json_pack("{s:s,s:s}", "episode_id", episode_id(l->live), "phase",
                         phase_to_string(l->phase.current));
}

/* [{lane, episode_id, phase, session}] of every lane with an episode. */
static json_t *lanes_json(const struct unit *u)
{
        json_t *a = json_array();

        for (unsigned i = 0; i < u->cfg.concurrent; i++) {
                const struct lane *l = &u->lanes[i];
                json_t *e = live_json(l);
                if (json_is_null(e))
                        continue;
                json_object_set_new(e, "lane", json_integer(i));
                json_object_set_new(e, "session", json_boolean(l->held));
                json_array_append_new(a, e);
        }
        return a;
}

json_t *unit_episodes(const struct unit *u)
{
        const struct episode *next = unit_next_standby(u);
        json_t *recent = json_array(), *v;
        size_t i;

        /* Newest first; the summary of each (GET /verdict?episode_id= has the rest). */
        for (i = json_array_size(u->recent); i > 0; i--) {
                v = json_array_get(u->recent, i - 1);
                json_array_append_new(recent, json_pack("{s:O,s:O,s:O,s:O,s:O,s:O}", "episode_id",
                                                        json_object_get(v, "episode_id"), "verdict",
                                                        json_object_get(v, "verdict"), "reason",
                                                        json_object_get(v, "reason"), "blame",
                                                        json_object_get(v, "blame"), "actions",
                                                        json_object_get(v, "actions"), "ended_at",
                                                        json_object_get(v, "ended_at")));
        }
        return json_pack("{s:o,s:o,s:o,s:o,s:o,s:i,s:i}", "live", live_json(&u->lanes[0]),
                         "live_episodes", lanes_json(u), "standby",
                         next ? json_pack("{s:s,s:s}", "episode_id", episode_id(next), "state",
                                          standby_state(next))
                              : json_null(),
                         "standby_pool", pool_json(u), "recent", recent, "kept",
                         (int) u->cfg.verdict_history, "concurrent", (int) u->cfg.concurrent);
}

const struct member_log *unit_container_log(const struct unit *u, const char *container,
                                            const char *id, const char **ret_episode_id)
{
        const struct episode *e = NULL;
        size_t i;

        for (unsigned k = 0; !e && k < u->cfg.concurrent; k++) {
                const struct episode *live = u->lanes[k].live;
                if (live && (!id || streq(id, episode_id(live))))
                        e = live;
        }
        for (i = u->n_retiring; !e && i > 0; i--)
                if (!id || streq(id, episode_id(u->retiring[i - 1])))
                        e = u->retiring[i - 1];
        if (e) {
                *ret_episode_id = episode_id(e);
                return episode_member_log(e, container);
        }
        /* Freed since: what its containers left. */
        for (i = u->n_kept_logs; i > 0; i--) {
                const struct episode_logs *k = u->kept_logs[i - 1];
                if (!id || streq(id, episode_logs_id(k))) {
                        *ret_episode_id = episode_logs_id(k);
                        return episode_logs_find(k, container);
                }
        }
        return NULL;
}

json_t *unit_inspection(const struct unit *u, unsigned lane)
{
        const struct lane *l = unit_lane(u, lane);

        return l->inspection ? json_incref(l->inspection) : json_object();
}

json_t *unit_info(const struct unit *u)
{
        const struct lane *l = &u->lanes[0];
        json_t *info = json_object(), *hist = json_array(), *sb;
        const struct phase_record *rec;
        const char *kind = l->live ? verdict_kind_to_string(episode_verdict(l->live)->kind) : NULL;
        unsigned live = 0;

        for (unsigned i = 0; i < u->cfg.concurrent; i++)
                live += unit_env_traffic_allowed(u, i) || u->lanes[i].phase.current == PHASE_FROZEN;
        for (size_t i = 0; (rec = phase_machine_history(&l->phase, i)); i++)
                json_array_append_new(
                        hist, json_pack("{s:s,s:s,s:s,s:s,s:f}", "from", phase_to_string(rec->from),
                                        "to", phase_to_string(rec->to), "actor",
                                        phase_actor_to_string(rec->actor), "reason", rec->reason,
                                        "at", (double) rec->at / (double) USEC_PER_SEC));
        const struct episode *next = unit_next_standby(u);
        if (next)
                sb = json_pack("{s:s,s:s}", "state", standby_state(next), "episode_id",
                               episode_id(next));
        else if (!u->cfg.standby)
                sb = json_pack("{s:s}", "state", "disabled");
        else if (u->standby_failures >= UNIT_STANDBY_MAX_FAILURES)
                sb = json_pack("{s:s,s:I}", "state", "off", "failures",
                               (json_int_t) u->standby_failures);
        else
                sb = json_pack("{s:s}", "state", "none");
        if (u->standby_failures > 0)
                json_object_set_new(sb, "last_failure", text_to_json(u->standby_error));
        /* The pool: how many it keeps, how many are ready now. */
        json_object_set_new(sb, "target", json_integer(u->cfg.standby));
        json_object_set_new(sb, "ready", json_integer(pool_ready(u)));
        json_object_set_new(info, "version", json_string(openenvd_version));
        json_object_set_new(info, "phase", json_string(phase_to_string(l->phase.current)));
        json_object_set_new(info, "episode_id",
                            l->live ? json_string(episode_id(l->live)) : json_null());
        json_object_set_new(info, "isolation", json_string("on"));
        json_object_set_new(info, "verdict", kind ? json_string(kind) : json_null());
        json_object_set_new(info, "actions",
                            json_integer(l->live ? (json_int_t) episode_actions(l->live) : 0));
        json_object_set_new(info, "members",
                            l->live ? episode_members_json(l->live) : json_object());
        json_object_set_new(info, "episodes",
                            json_pack("{s:i,s:i,s:i}", "concurrent", (int) u->cfg.concurrent,
                                      "sessions", (int) unit_lanes_held(u), "live", (int) live));
        json_object_set_new(info, "standby", sb);
        json_object_set_new(info, "template",
                            u->env_template ? env_template_info(u->env_template)
                                            : json_pack("{s:s,s:s}", "state", "off", "reason",
                                                        u->template_off));
        json_object_set_new(info, "history", hist);
        return info;
}

void unit_stats(const struct unit *u, struct unit_stats *ret)
{
        unit_stats_copy(&u->stats, ret);
        env_template_stats(u->env_template, &ret->templates);
        ret->standby_target = u->cfg.standby;
        ret->standby_ready = pool_ready(u);
        /* Episodes whose cgroups still exist: their counters as they are now
         * (a torn-down one was added by on_torn_down()). */
        for (unsigned i = 0; i < u->cfg.concurrent; i++) {
                const struct episode *live = u->lanes[i].live;
                if (live && episode_state(live) != EPISODE_GONE)
                        episode_add_limit_events(live, ret->containers);
        }
        for (size_t i = 0; i < u->n_pool; i++)
                if (episode_state(u->pool[i]) != EPISODE_GONE)
                        episode_add_limit_events(u->pool[i], ret->containers);
        for (size_t i = 0; i < u->n_retiring; i++)
                if (episode_state(u->retiring[i]) != EPISODE_GONE)
                        episode_add_limit_events(u->retiring[i], ret->containers);
}

bool unit_owns_pid(struct unit *u, pid_t pid)
{
        if (env_template_owns_pid(u->env_template, pid))
                return true;
        for (unsigned i = 0; i < u->cfg.concurrent; i++)
                if (u->lanes[i].live && episode_owns_pid(u->lanes[i].live, pid))
                        return true;
        for (size_t i = 0; i < u->n_pool; i++)
                if (episode_owns_pid(u->pool[i], pid))
                        return true;
        for (size_t i = 0; i < u->n_retiring; i++)
                if (episode_owns_pid(u->retiring[i], pid))
                        return true;
        return false;
}
