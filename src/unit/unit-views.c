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
        return u->phase.current;
}

const char *unit_episode_id(const struct unit *u)
{
        return u->live ? episode_id(u->live) : NULL;
}

bool unit_ready(const struct unit *u, char **ret_reason)
{
        const struct verdict *v;
        const char *why;

        if (u->phase.current == PHASE_FAILED) {
                v = u->live ? episode_verdict(u->live) : NULL;
                why = v && v->reason ? v->reason : "provisioning failed";
                if (ret_reason)
                        *ret_reason = xasprintf("the last episode failed to start: %s", why);
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

bool unit_env_traffic_allowed(const struct unit *u)
{
        return u->phase.current == PHASE_READY || u->phase.current == PHASE_RUNNING;
}

int unit_env_tcp_socket(const struct unit *u, int family, uint16_t *ret_port)
{
        if (!u->live || !unit_env_traffic_allowed(u))
                return -ENETUNREACH;
        return episode_env_tcp_socket(u->live, family, ret_port);
}

json_t *unit_verdict(const struct unit *u, const char *id)
{
        size_t i;
        json_t *v;

        if (!id || (u->live && streq(id, episode_id(u->live))))
                return u->live ? verdict_to_json(episode_verdict(u->live), episode_id(u->live))
                               : verdict_to_json(&(struct verdict){}, NULL);
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
        return json_pack("{s:o,s:o,s:o,s:o,s:i}", "live",
                         u->live ? json_pack("{s:s,s:s}", "episode_id", episode_id(u->live),
                                             "phase", phase_to_string(u->phase.current))
                                 : json_null(),
                         "standby",
                         next ? json_pack("{s:s,s:s}", "episode_id", episode_id(next), "state",
                                          standby_state(next))
                              : json_null(),
                         "standby_pool", pool_json(u), "recent", recent, "kept",
                         (int) u->cfg.verdict_history);
}

const struct member_log *unit_container_log(const struct unit *u, const char *container,
                                            const char *id, const char **ret_episode_id)
{
        const struct episode *e = NULL;
        size_t i;

        if (u->live && (!id || streq(id, episode_id(u->live))))
                e = u->live;
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

json_t *unit_inspection(const struct unit *u)
{
        return u->inspection ? json_incref(u->inspection) : json_object();
}

json_t *unit_info(const struct unit *u)
{
        json_t *info = json_object(), *hist = json_array(), *sb;
        const struct phase_record *rec;
        const char *kind = u->live ? verdict_kind_to_string(episode_verdict(u->live)->kind) : NULL;

        for (size_t i = 0; (rec = phase_machine_history(&u->phase, i)); i++)
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
        json_object_set_new(info, "phase", json_string(phase_to_string(u->phase.current)));
        json_object_set_new(info, "episode_id",
                            u->live ? json_string(episode_id(u->live)) : json_null());
        json_object_set_new(info, "isolation", json_string("on"));
        json_object_set_new(info, "verdict", kind ? json_string(kind) : json_null());
        json_object_set_new(info, "actions",
                            json_integer(u->live ? (json_int_t) episode_actions(u->live) : 0));
        json_object_set_new(info, "members",
                            u->live ? episode_members_json(u->live) : json_object());
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
        if (u->live && episode_state(u->live) != EPISODE_GONE)
                episode_add_limit_events(u->live, ret->containers);
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
        if (u->live && episode_owns_pid(u->live, pid))
                return true;
        for (size_t i = 0; i < u->n_pool; i++)
                if (episode_owns_pid(u->pool[i], pid))
                        return true;
        for (size_t i = 0; i < u->n_retiring; i++)
                if (episode_owns_pid(u->retiring[i], pid))
                        return true;
        return false;
}
