/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * preflight_fix(): from a failed check to the `docker run` option, in
 * Docker's words (suite 'unit': a pure function, no kernel). Each case is a
 * row of the measurement in docs/LANES.md.
 */
#include <errno.h>
#include <linux/capability.h>

#include "base/util.h"
#include "preflight/preflight.h"
#include "test-helpers.h"

#define BIT(cap) (UINT64_C(1) << (cap))
#define SECCOMP  "--security-opt seccomp=openenvd-seccomp.json (deploy/docker/ of openenvd)"

/* The least-privilege container with one option taken away. */
static const struct preflight_env in_docker = {
        .docker = true,
        .seccomp_filtered = true,
        .cgroupns_private = true,
        .pid1 = true,
};

static void expect_fix(const char *check, int step, int err, const struct preflight_env *env,
                       const char *want)
{
        cleanup_free char *got = preflight_fix(check, step, err, env);
        if (!want)
                cr_expect_null(got, "%s: %s", check, got);
        else
                cr_expect(got && streq(got, want), "%s: got '%s', want '%s'", check,
                          got ? got : "(null)", want);
}

Test(preflight_fix, outside_docker_nothing)
{
        struct preflight_env host = in_docker;
        host.docker = false;
        host.missing_caps = BIT(CAP_SYS_ADMIN);
        expect_fix("privileges", 0, 0, &host, NULL);
        expect_fix("pivot_root", PREFLIGHT_STEP_PIVOT_ROOT, EPERM, &host, NULL);
        expect_fix("cgroup", PREFLIGHT_STEP_CGROUP_MOUNT, ENOMEDIUM, &host, NULL);
        expect_fix(NULL, 0, 0, &in_docker, NULL);
        expect_fix("userns", 0, 0, NULL, NULL);
}

Test(preflight_fix, missing_capabilities_in_dockers_words)
{
        struct preflight_env e = in_docker;
        e.missing_caps = BIT(CAP_SYS_ADMIN);
        expect_fix("privileges", 0, 0, &e, "add --cap-add SYS_ADMIN");
        e.missing_caps = BIT(CAP_SYS_ADMIN) | BIT(CAP_CHOWN) | BIT(CAP_DAC_OVERRIDE);
        expect_fix("privileges", 0, 0, &e,
                   "add --cap-add SYS_ADMIN --cap-add CHOWN --cap-add DAC_OVERRIDE");
        /* Capabilities the daemon does not need are never asked for. */
        e.missing_caps = BIT(CAP_NET_ADMIN) | BIT(CAP_KILL);
        expect_fix("privileges", 0, 0, &e, NULL);
        cr_expect_str_eq(preflight_cap_name(CAP_SETGID), "SETGID");
        cr_expect_null(preflight_cap_name(CAP_NET_ADMIN));
}

/* Plain `docker run`: Docker's default caps and profile. Namespaces and
 * mounts need SYS_ADMIN (the profile allows them only with it); pivot_root
 * needs the shipped profile too; Docker's masks need systempaths. */
Test(preflight_fix, plain_docker_names_everything_at_once)
{
        struct preflight_env e = in_docker;
        e.missing_caps = BIT(CAP_SYS_ADMIN);
        e.proc_masked = true;
        e.cgroupns_private = false; /* Docker 20.10 on a v1/hybrid host */
        expect_fix("mntns", PREFLIGHT_STEP_UNSHARE_NS, EPERM, &e, "add --cap-add SYS_ADMIN");
        expect_fix("userns", PREFLIGHT_STEP_UNSHARE_USER, EPERM, &e, "add --cap-add SYS_ADMIN");
        expect_fix("pivot_root", PREFLIGHT_STEP_UNSHARE_NS, EPERM, &e,
                   "add --cap-add SYS_ADMIN " SECCOMP);
        expect_fix("procfs", PREFLIGHT_STEP_UNSHARE_USER, EPERM, &e,
                   "add --cap-add SYS_ADMIN --security-opt systempaths=unconfined");
        expect_fix("cgroup", PREFLIGHT_STEP_CGROUP_MOUNT, ENOMEDIUM, &e, "add --cgroupns=private");
}

Test(preflight_fix, without_the_seccomp_profile)
{
        expect_fix("pivot_root", PREFLIGHT_STEP_PIVOT_ROOT, EPERM, &in_docker, "add " SECCOMP);
        /* A profile that refuses unshare even with SYS_ADMIN. */
        expect_fix("netns", PREFLIGHT_STEP_UNSHARE_NET, EPERM, &in_docker, "add " SECCOMP);
        /* No filter installed: EPERM has another cause, no option to name. */
        struct preflight_env e = in_docker;
        e.seccomp_filtered = false;
        expect_fix("netns", PREFLIGHT_STEP_UNSHARE_NET, EPERM, &e, NULL);
        /* Not a permission problem at all. */
        expect_fix("userns", PREFLIGHT_STEP_UNSHARE_USER, ENOSPC, &in_docker, NULL);
}

Test(preflight_fix, without_systempaths_unconfined)
{
        struct preflight_env e = in_docker;
        e.proc_masked = true;
        expect_fix("procfs", PREFLIGHT_STEP_FSMOUNT, EPERM, &e,
                   "add --security-opt systempaths=unconfined");
        expect_fix("sysfs", PREFLIGHT_STEP_FSMOUNT, EPERM, &e,
                   "add --security-opt systempaths=unconfined");
        /* fsopen refused is the profile, not the masks. */
        e.proc_masked = false;
        expect_fix("procfs", PREFLIGHT_STEP_FSOPEN, EPERM, &e, "add " SECCOMP);
}

Test(preflight_fix, without_dac_override_or_chown)
{
        struct preflight_env e = in_docker;
        e.missing_caps = BIT(CAP_DAC_OVERRIDE);
        expect_fix("overlayfs", PREFLIGHT_STEP_MOUNT_OVERLAY, EACCES, &e,
                   "add --cap-add DAC_OVERRIDE");
        expect_fix("cgroup", PREFLIGHT_STEP_CGROUP_MOUNT, ENOMEDIUM, &e,
                   "add --cap-add DAC_OVERRIDE");
        e.missing_caps = BIT(CAP_CHOWN);
        expect_fix("privileges", 0, 0, &e, "add --cap-add CHOWN");
}

Test(preflight_fix, cgroups)
{
        struct preflight_env e = in_docker;
        e.cgroupns_private = false;
        expect_fix("cgroup", PREFLIGHT_STEP_CGROUP_CONTROLLERS, EOPNOTSUPP, &e,
                   "add --cgroupns=private");
        /* openenvctl through `docker exec` without the daemon as PID 1:
         * nothing remounted the cgroup tree. */
        e.cgroupns_private = true;
        e.pid1 = false;
        expect_fix("cgroup", PREFLIGHT_STEP_CGROUP_CREATE, EROFS, &e,
                   "run openenvd as the container's entrypoint (PID 1 mounts its cgroup tree)");
        e.pid1 = true;
        e.missing_caps = BIT(CAP_SYS_ADMIN);
        expect_fix("cgroup", PREFLIGHT_STEP_CGROUP_CREATE, EROFS, &e, "add --cap-add SYS_ADMIN");
        /* A kernel without a freezer: no Docker option helps. */
        e.missing_caps = 0;
        expect_fix("cgroup", PREFLIGHT_STEP_CGROUP_CONTROLLERS, EOPNOTSUPP, &e, NULL);
}

Test(preflight_fix, user_namespace_remapping)
{
        expect_fix("uid_range", 0, 0, &in_docker, "add --userns=host");
}

Test(preflight_fix, kernel_features_have_no_option)
{
        expect_fix("seccomp", 0, 0, &in_docker, NULL);
        expect_fix("pidfd", 0, 0, &in_docker, NULL);
}
