/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The launch as the engine itself reports it (read-only root, user,
 * capabilities, namespaces, mounts, published ports), the subject image's
 * declared VOLUMEs, and the helper's account of whether it was tampered
 * with.
 */
#include <inttypes.h>
#include <string.h>

#include "base/util.h"
#include "validate/containment-grading.h"

static bool user_is_root(const char *user)
{
        /* Docker: "" means the image default, which is root unless the
         * image says otherwise; we always pass --user, so "" is suspect. */
        return !user || !*user || streq(user, "0") || streq(user, "root") ||
               startswith(user, "0:") || startswith(user, "root:");
}

void grade_launch(struct grading *g, const json_t *launch)
{
        bool b;
        const char *s;
        json_t *arr, *v;
        size_t i;
        char expected_user[48];

        if (!launch) {
                grading_gap(g, "launch settings were not inspected");
                return;
        }
        if (!grading_get_bool(g, launch, "read_only_rootfs", &b))
                grading_gap(g, "launch: read-only root setting unknown");
        else if (!b)
                grading_violation(g, "launch: image root is writable (ReadonlyRootfs=false)");
        if (grading_get_bool(g, launch, "privileged", &b) && b)
                grading_violation(g, "launch: subject runs privileged (Privileged=true)");
        if ((arr = grading_get_array(g, launch, "cap_add")))
                json_array_foreach(arr, i, v) if (json_is_string(v))
                        grading_violation(g, "launch: capability added: %s", json_string_value(v));
        arr = grading_get_array(g, launch, "cap_drop");
        if (!arr || !grading_strings_contain(arr, "ALL"))
                grading_violation(g, "launch: capabilities not all dropped (CapDrop lacks ALL)");
        arr = grading_get_array(g, launch, "security_opt");
        if (!arr || (!grading_strings_contain(arr, "no-new-privileges") &&
                     !grading_strings_contain(arr, "no-new-privileges:true") &&
                     !grading_strings_contain(arr, "no-new-privileges=true")))
                grading_violation(g, "launch: no-new-privileges is not set");
        if (arr && (grading_strings_contain(arr, "seccomp=unconfined") ||
                    grading_strings_contain(arr, "seccomp:unconfined")))
                grading_violation(g, "launch: seccomp is unconfined");
        if (arr && (grading_strings_contain(arr, "apparmor=unconfined") ||
                    grading_strings_contain(arr, "apparmor:unconfined")))
                grading_violation(g, "launch: apparmor is unconfined");

        (void) snprintf(expected_user, sizeof(expected_user), "%" PRIu64 ":%" PRIu64, g->uid,
                        g->gid);
        s = grading_get_str(g, launch, "user");
        if (user_is_root(s))
                grading_violation(g, "launch: subject user is root ('%s')", s ? s : "");
        else if (!streq(s, expected_user))
                grading_violation(g, "launch: subject user is '%s', not %s", s, expected_user);

        static const struct {
                const char *key, *what;
        } modes[] = {
                { "pid_mode", "PID" },         { "ipc_mode", "IPC" },     { "uts_mode", "UTS" },
                { "network_mode", "network" }, { "userns_mode", "user" },
        };
        for (size_t k = 0; k < ELEMENTSOF(modes); k++) {
                s = grading_get_str(g, launch, modes[k].key);
                if (s && streq(s, "host"))
                        grading_violation(g, "launch: shares the host's %s namespace (%s=host)",
                                          modes[k].what, modes[k].key);
                else if (s && startswith(s, "container:"))
                        grading_violation(g, "launch: joins another container's %s namespace (%s)",
                                          modes[k].what, s);
        }
        s = grading_get_str(g, launch, "cgroupns_mode");
        if (!s || !streq(s, "private"))
                grading_violation(g, "launch: cgroup namespace is not private (CgroupnsMode=%s)",
                                  s ? s : "");
        json_int_t n;
        if (grading_get_int(g, launch, "devices", &n) && n > 0)
                grading_violation(g, "launch: %" JSON_INTEGER_FORMAT " host devices exposed", n);
        if ((arr = grading_get_array(g, launch, "mounts")))
                json_array_foreach(arr, i, v)
                {
                        const char *type, *dst;
                        if (!json_is_object(v)) {
                                grading_malformed(g, "launch.mounts[]");
                                continue;
                        }
                        type = grading_get_str(g, v, "type");
                        dst = grading_get_str(g, v, "destination");
                        if (type && (streq(type, "bind") || streq(type, "volume")))
                                grading_violation(g, "launch: %s mount at %s", type,
                                                  dst ? dst : "?");
                }
        if ((arr = grading_get_array(g, launch, "tmpfs")))
                json_array_foreach(arr, i, v) if (json_is_string(v) &&
                                                  !grading_is_allotted(g, json_string_value(v)))
                        grading_violation(g, "launch: extra tmpfs at %s", json_string_value(v));
        if ((arr = grading_get_array(g, launch, "port_host_ips")))
                json_array_foreach(arr, i, v) if (json_is_string(v) &&
                                                  !streq(json_string_value(v), "127.0.0.1"))
                        grading_violation(g, "launch: port published on '%s', not 127.0.0.1",
                                          json_string_value(v));
}

void grade_image(struct grading *g, const json_t *image)
{
        json_t *volumes = grading_get_array(g, image, "volumes"), *v;
        size_t i;

        if (!volumes) {
                grading_malformed(g, "image.volumes is required");
                return;
        }
        /* Docker gives every declared VOLUME an anonymous volume: storage on
         * the host's disk that outlives the subject and is bounded by no
         * budget, wherever it is mounted (under /tmp too). */
        json_array_foreach(volumes, i, v)
        {
                if (!json_is_string(v)) {
                        grading_malformed(g, "image.volumes[] is not a string");
                        continue;
                }
                grading_violation(
                        g,
                        "image declares VOLUME %s: persistent storage outside the allotted "
                        "roots and their budget",
                        json_string_value(v));
        }
}

/* The helper's own account of whether anyone could have tampered with it
 * (containment-probe.h). Refused outright when it was traceable or traced:
 * nothing else in the document can then be believed. */
void grade_helper(struct grading *g, const json_t *probe)
{
        json_t *helper = grading_get_object(g, probe, "helper");
        json_int_t dumpable = -1, tracer = 0;

        if (!helper || !grading_get_int(g, helper, "dumpable_at_start", &dumpable)) {
                grading_malformed(g, "probe.helper.dumpable_at_start is required");
                return;
        }
        /* 1 is SUID_DUMP_USER: the kernel did not make the helper
         * non-dumpable at exec, so its binary was readable. */
        if (dumpable == 1)
                grading_malformed(
                        g, "the helper was dumpable when it started (its binary is readable): a "
                           "process of the subject's uid could trace it and rewrite its results");
        if (!grading_get_int(g, helper, "tracer_pid", &tracer))
                grading_gap(g, "whether the helper was traced is unknown");
        else if (tracer != 0)
                grading_malformed(g,
                                  "the helper was traced by process %" JSON_INTEGER_FORMAT
                                  ": its results cannot be trusted",
                                  tracer);
}
