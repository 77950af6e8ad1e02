/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The grader's entry points: each section graded in order (containment-
 * grading.h lists the parts), then one result by the precedence of
 * containment-grader.h.
 */
#include <string.h>

#include "base/util.h"
#include "probe/containment-probe.h"
#include "validate/containment-grader.h"
#include "validate/containment-grading.h"

/* Grades section (may be NULL) with fn, and shows a copy of it in measured
 * under key with its verdict and problems. */
static void grade_section(struct grading *g, json_t *measured, const char *key,
                          const json_t *section, const char *ok_verdict,
                          void (*fn)(struct grading *, const json_t *))
{
        json_t *shown = section ? json_deep_copy(section) : json_object();
        struct item_mark m;

        if (!shown)
                oom();
        m = grading_item_begin(g, shown);
        fn(g, section);
        grading_item_end(g, shown, m, section ? ok_verdict : "unproven");
        json_object_set_new(measured, key, shown);
}

static struct check_result *result_from(struct grading *g)
{
        struct check_result *r;

        if (g->malformed) {
                r = check_result_new(CONTAINMENT_CHECK_ID, CHECK_FAIL);
                for (char **l = g->malformed; *l; l++) {
                        cleanup_free char *line =
                                xasprintf("malformed containment evidence: %s", *l);
                        check_result_add_evidence(r, line);
                }
                r->remediation = xstrdup(CONTAINMENT_MALFORMED_REMEDIATION);
        } else if (g->violations && g->violations[0]) {
                /* FAIL beats SKIP: a proven escape stands on its own. */
                r = check_result_new(CONTAINMENT_CHECK_ID, CHECK_FAIL);
                for (char **l = g->violations; *l; l++)
                        check_result_add_evidence(r, *l);
                for (char **l = g->unproven; l && *l; l++) {
                        cleanup_free char *line = xasprintf("also unproven: %s", *l);
                        check_result_add_evidence(r, line);
                }
                r->remediation = xstrdup(CONTAINMENT_REMEDIATION);
        } else if (g->unproven && g->unproven[0]) {
                r = check_result_new(CONTAINMENT_CHECK_ID, CHECK_SKIP);
                for (char **l = g->unproven; *l; l++)
                        check_result_add_evidence(r, *l);
        } else {
                r = check_result_new(CONTAINMENT_CHECK_ID, CHECK_PASS);
                check_result_add_evidence(r, "measured containment matches the contract");
                for (char **l = g->notes; l && *l; l++)
                        check_result_add_evidence(r, *l);
        }
        json_object_set(r->measured, "allotted_roots", g->allotted ? g->allotted : json_array());
        json_object_set(r->measured, "writable_outside_roots", g->writable_outside);
        json_object_set(r->measured, "controls", g->controls);
        return r;
}

static void grading_done(struct grading *g)
{
        strv_free(g->violations);
        strv_free(g->unproven);
        strv_free(g->notes);
        strv_free(g->malformed);
        json_decref(g->writable_outside);
        json_decref(g->controls);
        json_decref(g->processes);
        json_decref(g->mounts);
}

/* What the report shows of the helper: the image it ran from (provider) and
 * its own account (probe). */
static json_t *helper_shown(const json_t *ev, const json_t *probe)
{
        json_t *h = json_object(), *x, *val;
        const char *k;

        if (!h)
                oom();
        x = json_object_get(ev, "helper_image");
        if (json_is_object(x))
                json_object_update(h, x);
        x = probe ? json_object_get(probe, "helper") : NULL;
        if (json_is_object(x))
                json_object_foreach(x, k, val) if (!streq(k, "ns")) json_object_set(h, k, val);
        return h;
}

struct check_result *containment_grade(const json_t *ev)
{
        struct grading g = { .uid = 65532, .gid = 65532 };
        json_t *measured = json_object();
        struct check_result *r;
        json_t *user, *probe = NULL, *host_ns, *host_mounts, *launch, *image, *v;
        json_int_t x;
        const char *perr;

        if (!measured)
                oom();
        if (!ev) {
                r = check_result_new(CONTAINMENT_CHECK_ID, CHECK_SKIP);
                check_result_add_evidence(r, "containment evidence is unavailable");
                json_decref(measured);
                return r;
        }
        g.writable_outside = json_array();
        g.controls = json_object();
        g.processes = json_array();
        g.mounts = json_array();
        if (!g.writable_outside || !g.controls || !g.processes || !g.mounts)
                oom();
        if (!json_is_object(ev)) {
                grading_malformed(&g, "not an object");
                goto done;
        }
        if (!grading_get_int(&g, ev, "schema", &x) || x != CONTAINMENT_EVIDENCE_SCHEMA) {
                grading_malformed(&g, "schema is not %d", CONTAINMENT_EVIDENCE_SCHEMA);
                goto done;
        }
        user = grading_get_object(&g, ev, "subject_user");
        if (user) {
                json_int_t u, gg;
                if (!grading_get_int(&g, user, "uid", &u) ||
                    !grading_get_int(&g, user, "gid", &gg) || u < 0 || gg < 0) {
                        grading_malformed(&g, "subject_user");
                        goto done;
                }
                g.uid = (uint64_t) u;
                g.gid = (uint64_t) gg;
        }
        g.allotted = grading_get_array(&g, ev, "allotted_roots");
        if (!g.allotted || json_array_size(g.allotted) == 0) {
                grading_malformed(&g, "allotted_roots");
                goto done;
        }
        image = grading_get_object(&g, ev, "image");
        launch = grading_get_object(&g, ev, "launch");
        host_ns = grading_get_object(&g, ev, "host_ns");
        host_mounts = grading_get_array(&g, ev, "host_mounts");
        probe = grading_get_object(&g, ev, "probe");
        if (!image)
                grading_malformed(&g, "image is required");
        if (g.malformed)
                goto done;

        grade_section(&g, measured, "image", image, "ok", grade_image);
        grade_section(&g, measured, "launch", launch, "hardened", grade_launch);
        if (!probe) {
                perr = grading_get_str(&g, ev, "probe_error");
                grading_gap(&g, "helper measurement is unavailable%s%s", perr ? ": " : "",
                            perr ? perr : "");
        } else if (!grading_get_int(&g, probe, "probe_schema", &x) || x != CONTAINMENT_PROBE_SCHEMA)
                grading_malformed(&g, "probe.probe_schema is not %d", CONTAINMENT_PROBE_SCHEMA);
        else {
                grade_helper(&g, probe);
                grade_processes(&g, probe, host_ns);
                grade_mounts(&g, probe, host_mounts);
                grade_controls(&g, probe);
        }
        json_object_set_new(measured, "helper", helper_shown(ev, probe));
        json_object_set(measured, "processes", g.processes);
        json_object_set(measured, "mounts", g.mounts);
done:
        r = result_from(&g);
        json_object_update(r->measured, measured);
        json_decref(measured);
        if (probe && (v = json_object_get(probe, "processes")) && json_is_array(v))
                json_object_set_new(r->measured, "process_count",
                                    json_integer((json_int_t) json_array_size(v)));
        if (probe && (v = json_object_get(probe, "mounts")) && json_is_array(v))
                json_object_set_new(r->measured, "mount_count",
                                    json_integer((json_int_t) json_array_size(v)));
        grading_done(&g);
        return r;
}

struct check_result *containment_grade_text(const char *text, size_t len)
{
        json_error_t err;
        json_t *ev = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
        struct check_result *r;

        if (!ev) {
                cleanup_free char *line = xasprintf("malformed containment evidence: %s (line %d)",
                                                    err.text, err.line);
                r = check_result_new(CONTAINMENT_CHECK_ID, CHECK_FAIL);
                check_result_add_evidence(r, line);
                r->remediation = xstrdup(CONTAINMENT_MALFORMED_REMEDIATION);
                return r;
        }
        r = containment_grade(ev);
        json_decref(ev);
        return r;
}
