/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Rendering of a preflight report (suite 'unit': no kernel work). */
#include <string.h>

#include "base/util.h"
#include "preflight/preflight.h"
#include "test-helpers.h"

static struct preflight_report *sample(void)
{
        struct preflight_report *r = xcalloc(1, sizeof(*r));
        r->n_checks = 3;
        r->checks = xcalloc(3, sizeof(*r->checks));
        r->checks[0] = (struct preflight_check){
                "privileges", false, true, xstrdup("missing from the effective set: CAP_SYS_ADMIN")
        };
        r->checks[1] = (struct preflight_check){
                "userns", false, true, xstrdup("unshare(CLONE_NEWUSER): Operation not permitted")
        };
        r->checks[2] =
                (struct preflight_check){ "clone_into_cgroup", false, false, xstrdup("no cgroup") };
        strv_push(&r->reasons,
                  xstrdup("privileges: missing from the effective set: CAP_SYS_ADMIN"));
        strv_push(&r->reasons,
                  xstrdup("user namespaces: unshare(CLONE_NEWUSER): Operation not permitted"));
        r->cgroup_detected = true;
        r->cgroup_mode = CGROUP_MODE_HYBRID;
        r->cgroup_v2_mount = xstrdup("/sys/fs/cgroup/unified");
        r->cgroup_v1_mount = xstrdup("/sys/fs/cgroup");
        r->cgroup_own = xstrdup("/");
        return r;
}

/* Whose / is it? Only a host's own, outside PID 1 and Docker, is flagged. */
Test(preflight_report, root_is_host)
{
        struct preflight_env host = {}, pid1 = { .pid1 = true }, docker = { .docker = true };

        cr_expect(preflight_root_is_host(true, &host));
        cr_expect(!preflight_root_is_host(false, &host), "--rootfs: an image");
        cr_expect(!preflight_root_is_host(true, &pid1), "PID 1: / is the image's");
        cr_expect(!preflight_root_is_host(true, &docker), "in Docker: / is the image's");
}

Test(preflight_report, reasons_joined)
{
        cleanup(preflight_report_freep) struct preflight_report *r = sample();
        cleanup_free char *s = preflight_report_reasons(r);
        cr_expect_str_eq(s, "privileges: missing from the effective set: CAP_SYS_ADMIN; "
                            "user namespaces: unshare(CLONE_NEWUSER): Operation not permitted");
        cr_expect_not_null(preflight_report_find(r, "userns"));
        cr_expect_null(preflight_report_find(r, "nope"));
}

Test(preflight_report, json_shape)
{
        cleanup(preflight_report_freep) struct preflight_report *r = sample();
        json_t *j = preflight_report_to_json(r);
        json_t *checks = json_object_get(j, "checks"), *cg = json_object_get(j, "cgroup");

        cr_expect_str_eq(json_string_value(json_object_get(j, "isolation")), "off");
        cr_expect_eq(json_array_size(json_object_get(j, "reasons")), 2);
        cr_assert_eq(json_array_size(checks), 3);
        cr_expect_str_eq(json_string_value(json_object_get(json_array_get(checks, 1), "name")),
                         "userns");
        cr_expect(json_is_false(json_object_get(json_array_get(checks, 1), "ok")));
        cr_expect(json_is_false(json_object_get(json_array_get(checks, 2), "required")));
        cr_expect_str_eq(json_string_value(json_object_get(cg, "mode")), "hybrid");
        cr_expect_str_eq(json_string_value(json_object_get(cg, "v2_mount")),
                         "/sys/fs/cgroup/unified");
        /* Added fields: a fix per check (null here), where we run. */
        cr_expect(json_is_null(json_object_get(json_array_get(checks, 1), "fix")));
        cr_expect(json_is_null(json_object_get(j, "container")));
        json_decref(j);
}

Test(preflight_report, table)
{
        cleanup(preflight_report_freep) struct preflight_report *r = sample();
        cleanup_free char *s = preflight_report_format(r);
        cr_expect(strstr(s, "userns             NO    unshare(CLONE_NEWUSER)"), "%s", s);
        cr_expect(strstr(s, "clone_into_cgroup  no    no cgroup"), "%s", s);
        cr_expect(strstr(s, "cgroup mode: hybrid"), "%s", s);
        cr_expect(strstr(s, "isolation: off\n  reason: privileges: "), "%s", s);
}

static struct preflight_report *sample_in_docker(void)
{
        struct preflight_report *r = sample();
        r->env.docker = true;
        r->checks[1].fix = xstrdup("add --cap-add SYS_ADMIN");
        return r;
}

Test(preflight_report, json_fix_in_docker)
{
        cleanup(preflight_report_freep) struct preflight_report *r = sample_in_docker();
        json_t *j = preflight_report_to_json(r);
        json_t *c = json_array_get(json_object_get(j, "checks"), 1);

        cr_expect_str_eq(json_string_value(json_object_get(c, "fix")), "add --cap-add SYS_ADMIN");
        cr_expect_str_eq(json_string_value(json_object_get(j, "container")), "docker");
        json_decref(j);
}
