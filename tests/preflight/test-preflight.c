/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Preflight on the real kernel (suite 'kernel'). Criterion runs every test in
 * its own process, so a test that drops privileges only drops its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <sched.h>
#include <string.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <criterion/new/assert.h>

#include "base/util.h"
#include "preflight/preflight.h"
#include "test-helpers.h"

static const char *const order[] = {
        "privileges",      "uid_range", "userns",   "mntns",     "pidns",       "netns",
        "ipcns",           "utsns",     "cgroupns", "overlayfs", "nosymfollow", "pivot_root",
        "procfs",          "sysfs",     "seccomp",  "pidfd",     "cgroup",      "clone_into_cgroup",
        "containers_root",
};

static struct preflight_report *run(void)
{
        struct preflight_report *r = NULL;
        int k = preflight_run(NULL, &r);
        cr_assert_eq(k, 0, "preflight_run: %s", strerror(-k));
        cr_assert_eq(r->n_checks, ELEMENTSOF(order));
        for (size_t i = 0; i < ELEMENTSOF(order); i++)
                cr_expect_str_eq(r->checks[i].name, order[i], "check %zu", i);
        return r;
}

static bool has_reason(const struct preflight_report *r, const char *reason)
{
        for (char **s = r->reasons; *s; s++)
                if (streq(*s, reason))
                        return true;
        return false;
}

static void expect_failed(const struct preflight_report *r, const char *name, const char *detail)
{
        const struct preflight_check *c = preflight_report_find(r, name);
        cr_assert_not_null(c, "no check %s", name);
        cr_expect(!c->ok, "%s unexpectedly ok", name);
        cr_expect_str_eq(c->detail, detail, "%s", name);
}

Test(preflight_kernel, root_is_on)
{
        cleanup(preflight_report_freep) struct preflight_report *r = NULL;
        cleanup_free char *reasons = NULL;

        require_root();
        r = run();
        /* containers_root says where the containers' root is, not whether
         * isolation works (containers_root_* below). */
        for (size_t i = 0; i < r->n_checks; i++)
                cr_expect(r->checks[i].ok || streq(r->checks[i].name, "containers_root"), "%s: %s",
                          r->checks[i].name, r->checks[i].detail);
        cr_expect(r->isolation);
        cr_expect_null(r->reasons[0]);
        reasons = preflight_report_reasons(r);
        cr_expect_str_eq(reasons, "");
        cr_expect(r->cgroup_detected);

        json_t *j = preflight_report_to_json(r);
        cr_expect_str_eq(json_string_value(json_object_get(j, "isolation")), "on");
        cr_expect_eq(json_array_size(json_object_get(j, "checks")), ELEMENTSOF(order));
        cr_expect_eq(json_array_size(json_object_get(j, "reasons")), 0);
        const char *mode = json_string_value(json_object_get(json_object_get(j, "cgroup"), "mode"));
        cr_assert_not_null(mode);
        cr_expect(streq(mode, "v2") || streq(mode, "hybrid"));
        json_decref(j);
}

static const struct preflight_check *root_check(const char *rootfs, struct preflight_report **ret)
{
        int k = preflight_run(&(struct preflight_options){ .rootfs = rootfs }, ret);
        cr_assert_eq(k, 0);
        const struct preflight_check *c = preflight_report_find(*ret, "containers_root");
        cr_assert_not_null(c);
        cr_expect(!c->required, "a warning, never a reason to turn isolation off");
        return c;
}

/* The host's own / given (--host-root-unfiltered; not PID 1, not in Docker,
 * as these tests run): said so, with what it exposes and the fix; isolation
 * stays on. No root given: the host view, which passes. */
Test(preflight_kernel, containers_root_names_the_host)
{
        cleanup(preflight_report_freep) struct preflight_report *a = NULL, *b = NULL;

        require_root();
        const struct preflight_check *c = root_check("/", &a);
        cr_assert_eq(c->ok, !preflight_root_is_host(true, &a->env));
        if (!c->ok) {
                cr_expect(strstr(c->detail, "this host's /"), "%s", c->detail);
                cr_expect(strstr(c->detail, "world-connectable unix sockets"), "%s", c->detail);
                cr_expect(strstr(c->detail, "--rootfs DIR"), "%s", c->detail);
                cr_expect(strstr(c->detail, "--host-root-unfiltered"), "%s", c->detail);
        }
        cr_expect(a->isolation == (a->reasons[0] == NULL));
        /* No root given: the host view on a host, / itself as PID 1 or in
         * Docker; either way the check passes. */
        const struct preflight_check *d = root_check(NULL, &b);
        cr_expect(d->ok, "%s", d->detail);
        if (preflight_root_is_host(true, &b->env))
                cr_expect(strstr(d->detail, "the host view"), "%s", d->detail);
}

Test(preflight_kernel, containers_root_image_is_fine)
{
        cleanup(preflight_report_freep) struct preflight_report *r = NULL;
        char dir[] = "/tmp/openenvd-preflight-root.XXXXXX";

        require_root();
        cr_assert_not_null(mkdtemp(dir));
        const struct preflight_check *c = root_check(dir, &r);
        cr_expect(c->ok, "%s", c->detail);
        cr_expect(strstr(c->detail, dir), "%s", c->detail);
        (void) rmdir(dir);
}

Test(preflight_kernel, without_cap_sys_admin_is_off)
{
        cleanup(preflight_report_freep) struct preflight_report *r = NULL;
        struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct data[2];

        require_root();
        /* Out of the bounding set (no exec can regain it) and out of
         * permitted + effective (this process has lost it for good). */
        cr_assert_eq(prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0), 0);
        cr_assert_eq(syscall(SYS_capget, &hdr, data), 0);
        data[0].effective &= ~(1U << CAP_SYS_ADMIN);
        data[0].permitted &= ~(1U << CAP_SYS_ADMIN);
        data[0].inheritable &= ~(1U << CAP_SYS_ADMIN);
        cr_assert_eq(syscall(SYS_capset, &hdr, data), 0);

        r = run();
        cr_expect(!r->isolation);
        cr_expect(has_reason(r, "privileges: missing from the effective set: CAP_SYS_ADMIN"));
        cr_expect(has_reason(r, "mount namespaces: unshare(CLONE_NEWNS): Operation not permitted"));
        cr_expect(has_reason(r,
                             "network namespaces: unshare(CLONE_NEWNET): Operation not permitted"));
        cr_expect(has_reason(r, "overlayfs: unshare(CLONE_NEWNS): Operation not permitted"));
        expect_failed(r, "pidns", "unshare(CLONE_NEWPID): Operation not permitted");
        expect_failed(r, "pivot_root", "unshare(CLONE_NEWNS): Operation not permitted");
        /* Outside Docker no reason carries a docker run option. */
        cr_expect_null(preflight_report_find(r, "privileges")->fix);
        /* Creating a user namespace needs no capability at all. */
        cr_expect(preflight_report_find(r, "userns")->ok);
        cr_expect(preflight_report_find(r, "seccomp")->ok);

        cleanup_free char *joined = preflight_report_reasons(r);
        cr_expect(startswith(joined, "privileges: missing from the effective set: CAP_SYS_ADMIN; "
                                     "mount namespaces: "),
                  "%s", joined);
}

/* Serialises the report of a child that first became nobody in a fresh user
 * namespace (CLONE_NEWUSER needs a single-threaded caller: a forked child). */
static json_t *run_as_nobody_in_userns(int *ret_unshare_errno)
{
        int p[2];
        char buf[16384];
        size_t len = 0;
        ssize_t n;

        cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                struct preflight_report *r = NULL;
                char *s;
                close(p[0]);
                if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
                    setresuid(65534, 65534, 65534) < 0)
                        _exit(2);
                if (unshare(CLONE_NEWUSER) < 0) {
                        int e = errno;
                        (void) !write(p[1], &e, sizeof(e));
                        _exit(0);
                }
                if (preflight_run(NULL, &r) < 0)
                        _exit(3);
                s = json_dumps(preflight_report_to_json(r), JSON_COMPACT);
                (void) !write(p[1], s, strlen(s));
                _exit(0);
        }
        close(p[1]);
        while ((n = read(p[0], buf + len, sizeof(buf) - 1 - len)) > 0)
                len += (size_t) n;
        close(p[0]);
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
        if (len == sizeof(int)) {
                memcpy(ret_unshare_errno, buf, sizeof(int));
                return NULL;
        }
        buf[len] = '\0';
        json_t *j = json_loads(buf, 0, NULL);
        cr_assert_not_null(j, "bad json: %s", buf);
        *ret_unshare_errno = 0;
        return j;
}

static bool json_has_reason(json_t *j, const char *reason)
{
        json_t *v;
        size_t i;
        json_array_foreach(json_object_get(j, "reasons"), i,
                           v) if (streq(json_string_value(v), reason)) return true;
        return false;
}

static json_t *json_check(json_t *j, const char *name)
{
        json_t *v;
        size_t i;
        json_array_foreach(
                json_object_get(j, "checks"), i,
                v) if (streq(json_string_value(json_object_get(v, "name")), name)) return v;
        cr_assert_fail("no check %s", name);
        return NULL;
}

Test(preflight_kernel, nobody_in_user_namespace_is_off)
{
        int unshare_errno;
        json_t *j;

        require_root();
        j = run_as_nobody_in_userns(&unshare_errno);
        /* Unprivileged user namespaces may be switched off on a host. */
        require_feature(j, "unprivileged user namespaces");

        cr_expect_str_eq(json_string_value(json_object_get(j, "isolation")), "off");
        /* Full capabilities inside, but over a namespace that maps no id and
         * owns no cgroup: no uids for containers, no cgroup subtree. */
        cr_expect(json_is_true(json_object_get(json_check(j, "privileges"), "ok")));
        cr_expect(json_has_reason(j,
                                  "uid range: 0 ids mapped in our user namespace, need >= 131072"));
        json_t *cg = json_check(j, "cgroup");
        const char *detail = json_string_value(json_object_get(cg, "detail"));
        cr_expect(json_is_false(json_object_get(cg, "ok")));
        cr_expect(strstr(detail, "Permission denied") ||
                          strstr(detail, "Operation not permitted") || strstr(detail, "Read-only"),
                  "%s", detail);
        cleanup_free char *want = xasprintf("cgroups: %s", detail);
        cr_expect(json_has_reason(j, want));
        json_decref(j);
}
