/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Every process of the subject: not root, no capability in any set,
 * no-new-privileges, a seccomp filter, and namespaces of its own.
 */
#include <inttypes.h>
#include <string.h>

#include "base/util.h"
#include "validate/containment-grading.h"

/* Namespaces that must differ from the host's. user and time are shared
 * with the host by rootful Docker without userns-remap, by design. */
static const char *const separate_ns[] = { "pid", "mnt", "net", "ipc", "uts", "cgroup" };

static bool get_u64_array(struct grading *g, const json_t *o, const char *k, uint64_t *out,
                          size_t n)
{
        json_t *arr = grading_get_array(g, o, k);
        if (!arr)
                return false;
        if (json_array_size(arr) != n) {
                grading_malformed(g, "%s", k);
                return false;
        }
        for (size_t i = 0; i < n; i++) {
                json_t *v = json_array_get(arr, i);
                if (!json_is_integer(v) || json_integer_value(v) < 0) {
                        grading_malformed(g, "%s", k);
                        return false;
                }
                out[i] = (uint64_t) json_integer_value(v);
        }
        return true;
}

static void grade_process(struct grading *g, const json_t *p, const json_t *first_ns,
                          const json_t *host_ns)
{
        json_int_t pid = 0, x;
        const char *comm;
        uint64_t ids[4];
        json_t *ns, *groups, *v;
        size_t i;
        bool unknown = false;

        if (!json_is_object(p)) {
                grading_malformed(g, "processes[]");
                return;
        }
        if (!grading_get_int(g, p, "pid", &pid)) {
                grading_malformed(g, "processes[].pid");
                return;
        }
        comm = grading_get_str(g, p, "comm");
        if (!comm)
                comm = "?";
        if (grading_get_int(g, p, "status_errno", &x)) {
                grading_gap(g, "status of subject process %" JSON_INTEGER_FORMAT " unreadable (%s)",
                            pid, strerror((int) x));
                return;
        }
        for (int k = 0; k < 2; k++) {
                const char *key = k == 0 ? "uid" : "gid";
                uint64_t want = k == 0 ? g->uid : g->gid;
                if (!get_u64_array(g, p, key, ids, 4)) {
                        unknown = true;
                        continue;
                }
                for (int j = 0; j < 4; j++)
                        if (ids[j] != want) {
                                if (ids[j] == 0)
                                        grading_violation(g,
                                                          "process %" JSON_INTEGER_FORMAT
                                                          " (%s) runs as root (%s 0)",
                                                          pid, comm, key);
                                else
                                        grading_violation(g,
                                                          "process %" JSON_INTEGER_FORMAT
                                                          " (%s) has %s %" PRIu64 ", not %" PRIu64,
                                                          pid, comm, key, ids[j], want);
                                break;
                        }
        }
        groups = grading_get_array(g, p, "groups");
        if (!groups)
                unknown = true;
        else
                json_array_foreach(groups, i, v)
                {
                        if (!json_is_integer(v)) {
                                grading_malformed(g, "processes[].groups[]");
                                break;
                        }
                        if ((uint64_t) json_integer_value(v) != g->gid)
                                grading_violation(
                                        g,
                                        "process %" JSON_INTEGER_FORMAT
                                        " (%s) holds supplementary group %" JSON_INTEGER_FORMAT,
                                        pid, comm, json_integer_value(v));
                }
        bool b;
        if (grading_get_bool(g, p, "groups_truncated", &b) && b)
                grading_gap(g, "supplementary groups of process %" JSON_INTEGER_FORMAT " truncated",
                            pid);

        static const char *const caps[] = { "cap_inh", "cap_prm", "cap_eff", "cap_bnd", "cap_amb" };
        for (size_t c = 0; c < ELEMENTSOF(caps); c++) {
                const char *hex = grading_get_str(g, p, caps[c]);
                if (!hex) {
                        unknown = true;
                        continue;
                }
                if (strspn(hex, "0123456789abcdefABCDEF") != strlen(hex) || !*hex) {
                        grading_malformed(g, "%s", caps[c]);
                        continue;
                }
                if (strspn(hex, "0") != strlen(hex))
                        grading_violation(g,
                                          "process %" JSON_INTEGER_FORMAT
                                          " (%s) holds capabilities: %s=%s",
                                          pid, comm, caps[c], hex);
        }
        if (!grading_get_int(g, p, "no_new_privs", &x))
                unknown = true;
        else if (x != 1)
                grading_violation(g,
                                  "process %" JSON_INTEGER_FORMAT
                                  " (%s) lacks no_new_privs (NoNewPrivs=%" JSON_INTEGER_FORMAT ")",
                                  pid, comm, x);
        if (!grading_get_int(g, p, "seccomp", &x))
                unknown = true;
        else if (x == 0)
                grading_violation(
                        g, "process %" JSON_INTEGER_FORMAT " (%s) runs without seccomp (Seccomp=0)",
                        pid, comm);
        if (unknown)
                grading_gap(g,
                            "confinement of process %" JSON_INTEGER_FORMAT " (%s) partly unknown",
                            pid, comm);

        ns = grading_get_object(g, p, "ns");
        if (!ns) {
                grading_gap(g, "namespaces of process %" JSON_INTEGER_FORMAT " unknown", pid);
                return;
        }
        for (size_t k = 0; k < ELEMENTSOF(separate_ns); k++) {
                json_t *mine = json_object_get(ns, separate_ns[k]);
                json_t *host = host_ns ? json_object_get(host_ns, separate_ns[k]) : NULL;
                json_t *first = first_ns ? json_object_get(first_ns, separate_ns[k]) : NULL;
                if (!mine || !json_is_integer(mine)) {
                        grading_gap(g, "%s namespace of process %" JSON_INTEGER_FORMAT " unknown",
                                    separate_ns[k], pid);
                        continue;
                }
                if (host && json_is_integer(host) &&
                    json_integer_value(host) == json_integer_value(mine))
                        grading_violation(g, "subject shares the host's %s namespace (measured)",
                                          separate_ns[k]);
                if (first && json_is_integer(first) &&
                    json_integer_value(first) != json_integer_value(mine))
                        grading_violation(
                                g,
                                "process %" JSON_INTEGER_FORMAT
                                " (%s) is in another %s namespace than the subject's init",
                                pid, comm, separate_ns[k]);
        }
}

void grade_processes(struct grading *g, const json_t *probe, const json_t *host_ns)
{
        json_t *procs = grading_get_array(g, probe, "processes");
        json_int_t x;
        bool b;
        size_t i;
        json_t *p, *first_ns = NULL;

        if (grading_get_int(g, probe, "anchor_errno", &x))
                grading_gap(g, "the subject's init could not be measured (%s)", strerror((int) x));
        if (!procs || json_array_size(procs) == 0) {
                grading_gap(g, "process inventory is missing");
                return;
        }
        if (grading_get_bool(g, probe, "processes_truncated", &b) && b)
                grading_gap(g, "process inventory is truncated");
        if (grading_get_int(g, probe, "foreign_processes", &x) && x > 0)
                grading_violation(g,
                                  "%" JSON_INTEGER_FORMAT
                                  " processes outside the subject are visible in its PID namespace",
                                  x);
        if (grading_get_int(g, probe, "unreadable_processes", &x) && x > 0)
                grading_gap(g,
                            "%" JSON_INTEGER_FORMAT
                            " processes in the subject's PID namespace could not be attributed",
                            x);
        p = json_array_get(procs, 0);
        if (json_is_object(p))
                first_ns = json_object_get(p, "ns");
        if (first_ns && !json_is_object(first_ns))
                first_ns = NULL;
        if (!host_ns)
                grading_add(&g->notes,
                            "host namespaces not comparable here; judged by launch modes");
        json_array_foreach(procs, i, p)
        {
                /* The report shows each process as measured, with its verdict. */
                json_t *shown = json_is_object(p) ? json_deep_copy(p) : json_object();
                struct item_mark m;

                if (!shown)
                        oom();
                m = grading_item_begin(g, shown);
                grade_process(g, p, first_ns, host_ns);
                grading_item_end(g, shown, m, "confined");
                json_array_append_new(g->processes, shown);
        }
}
