/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The full, defaulted contract as JSON: what `openenvctl manifest validate
 * --json` prints and what the daemon can serve. Every field is present
 * (absent values are null), so consumers never re-implement the defaults.
 */
#include <string.h>

#include "base/json-util.h"
#include "base/util.h"
#include "manifest/manifest.h"

static json_t *json_uint_or_null(uint64_t v)
{
        return v ? json_integer((json_int_t) v) : json_null();
}

static json_t *json_resources(const struct manifest_resources *r)
{
        return json_pack("{s:o, s:o, s:o, s:o}", "memory_mb", json_uint_or_null(r->memory_mb),
                         "pids", json_uint_or_null(r->pids), "cpu",
                         r->cpu > 0 ? json_real(r->cpu) : json_null(), "disk_mb",
                         json_uint_or_null(r->disk_mb));
}

static json_t *json_model_budget(const struct manifest_model_budget *b)
{
        return json_pack("{s:o, s:o, s:o}", "requests", json_uint_or_null(b->requests), "bytes",
                         json_uint_or_null(b->bytes), "tokens", json_uint_or_null(b->tokens));
}

static json_t *json_phases(unsigned phases)
{
        json_t *a = json_array();

        for (unsigned p = 0; p < PHASE_MANIFEST_MAX; p++)
                if (phases & PHASE_BIT(p))
                        json_array_append_new(a, json_string(phase_to_string(p)));
        return a;
}

static json_t *json_env(char *const *env)
{
        json_t *o = json_object();

        for (; env && *env; env++) {
                const char *eq = strchr(*env, '=');
                cleanup_free char *k = xstrndup(*env, eq ? (size_t) (eq - *env) : strlen(*env));
                json_object_set_new(o, k, json_string(eq ? eq + 1 : ""));
        }
        return o;
}

static json_t *json_verdict_policy(const struct manifest_verdict_policy *p)
{
        json_t *o = json_object();

        for (unsigned e = 0; e < MANIFEST_VERDICT_EVENT_MAX; e++)
                json_object_set_new(o, manifest_verdict_event_to_string(e),
                                    json_string(manifest_verdict_action_to_string(p->on[e])));
        return o;
}

static json_t *json_container(const struct manifest_container *c)
{
        json_t *j;
        json_t *reads = json_array();

        for (size_t i = 0; i < c->n_reads; i++) {
                cleanup_free char *s = manifest_read_to_string(&c->reads[i]);
                json_array_append_new(reads,
                                      json_pack("{s:s, s:s, s:o}", "read", s, "kind",
                                                manifest_read_kind_to_string(c->reads[i].kind),
                                                "target", str_or_null_to_json(c->reads[i].target)));
        }
        j = json_pack(
                "{s:s, s:s, s:o, s:s, s:o, s:o, s:o, s:{s:s}, s:o, s:o, s:o, s:o, s:o, s:o, s:o, "
                "s:o, s:o}",
                "name", c->name, "zone", manifest_zone_kind_to_string(c->zone), "argv",
                strv_to_json(c->argv), "argv_source",
                manifest_argv_source_to_string(c->argv_source), "env", json_env(c->env),
                "resources", json_resources(&c->resources), "effective_resources",
                json_resources(&c->effective), "network", "egress",
                manifest_egress_to_string(c->egress), "port",
                c->port ? json_integer(c->port) : json_null(), "phases", json_phases(c->phases),
                "reads", reads, "expose",
                c->expose.host ? json_pack("{s:s, s:i}", "host", c->expose.host, "port",
                                           (int) c->expose.port)
                               : json_null(),
                "state", str_or_null_to_json(c->state), "output", str_or_null_to_json(c->output),
                "after", strv_to_json(c->after), "rootfs", str_or_null_to_json(c->rootfs),
                "workdir", str_or_null_to_json(c->workdir));
        /* Only the agent zone's events follow a policy. */
        json_object_set_new(j, "verdict_policy",
                            c->zone == MANIFEST_ZONE_AGENT ? json_verdict_policy(&c->verdict_policy)
                                                           : json_null());
        return j;
}

static json_t *json_zone(const struct manifest_zone *z)
{
        json_t *containers = json_object();
        json_t *o;

        for (size_t i = 0; i < z->n_containers; i++)
                json_object_set_new(containers, z->containers[i].name,
                                    json_container(&z->containers[i]));
        o = json_pack("{s:{s:s}, s:o, s:{s:s}, s:o}", "network", "egress",
                      manifest_egress_to_string(z->egress), "resources",
                      json_resources(&z->resources), "runtime", "oci",
                      manifest_oci_to_string(z->oci), "containers", containers);
        if (z->kind == MANIFEST_ZONE_SERVICES)
                json_object_set_new(
                        o, "during_grading",
                        json_string(manifest_during_grading_to_string(z->during_grading)));
        return o;
}

json_t *manifest_to_json(const struct manifest *m)
{
        json_t *assets = json_object(), *zones = json_object(), *order = json_array();

        for (size_t i = 0; i < m->n_assets; i++)
                json_object_set_new(assets, m->assets[i].name, json_string(m->assets[i].path));
        for (unsigned z = 0; z < MANIFEST_ZONE_MAX; z++)
                json_object_set_new(zones, manifest_zone_kind_to_string(z),
                                    json_zone(&m->zones[z]));
        for (size_t i = 0; i < m->n_observer_order; i++)
                json_array_append_new(order, json_string(m->observer_order[i]->name));
        return json_pack("{s:o, s:i, s:f, s:i, s:{s:i, s:i}, s:b, s:s, s:o, s:o, s:o, s:{s:o}, "
                         "s:o, s:{s:o}, "
                         "s:o}",
                         "app", str_or_null_to_json(m->app), "port", (int) m->port,
                         "kill_deadline_s", m->kill_deadline_s, "standby", (int) m->standby,
                         "episodes", "concurrent", (int) m->concurrent, "session_idle_s",
                         (int) m->session_idle_s, "template", m->env_template, "base_dir",
                         m->base_dir, "workspace_seed", str_or_null_to_json(m->workspace_seed),
                         "privileged_assets", assets, "zones", zones, "model", "budget",
                         json_model_budget(&m->model.budget), "observer_order", order,
                         "enforcement", "require", strv_to_json(m->require), "verdict_policy",
                         json_verdict_policy(&m->verdict_policy));
}
