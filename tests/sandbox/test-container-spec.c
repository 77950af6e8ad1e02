/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* container_spec_validate(): what every launcher relies on. Pure. */
#include <errno.h>
#include <sys/mount.h>

#include "base/limits.h"
#include "base/util.h"
#include "sandbox/container-spec.h"
#include "test-helpers.h"

static char *argv_ok[] = { (char *) "/bin/true", NULL };

static struct container_spec good(void)
{
        return (struct container_spec){
                .name = (char *) "env",
                .argv = argv_ok,
                .rootfs = (char *) "/",
                .shim_path = (char *) "/usr/libexec/openenvd/openenvd-shim",
                .host_uid = 200000,
                .uid_count = 65536,
                .uid = 1000,
                .gid = 1000,
                .tmp_bytes = 1 << 20,
                .stdio_fd = -EBADF,
        };
}

Test(container_spec, good_spec_accepted)
{
        struct container_spec s = good();
        cr_assert_eq(container_spec_validate(&s), 0);
}

Test(container_spec, identity_rules)
{
        struct container_spec s = good();
        s.uid = 0;
        cr_assert_eq(container_spec_validate(&s), -EINVAL); /* root principal */
        s.weaken = WEAKEN_KEEP_CAPS;
        cr_assert_eq(container_spec_validate(&s), 0); /* only when weakened on purpose */
        s = good();
        s.host_uid = 0;
        cr_assert_eq(container_spec_validate(&s), -EINVAL); /* would map host root */
        s = good();
        s.uid = 70000;
        cr_assert_eq(container_spec_validate(&s), -EINVAL); /* outside the range */
        s = good();
        s.host_uid = UINT32_MAX - 10;
        cr_assert_eq(container_spec_validate(&s), -EINVAL); /* range overflows */
        s = good();
        s.argv = (char *[]){ NULL };
        cr_assert_eq(container_spec_validate(&s), -EINVAL);
        s = good();
        s.name = (char *) "";
        cr_assert_eq(container_spec_validate(&s), -EINVAL);
}

Test(container_spec, mount_targets_normalised)
{
        static const char *const bad[] = { "relative", "/a/../b", "/a/./b", "/..", "/a//b", "/" };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                struct mount_entry m = { .kind = MOUNT_BIND,
                                         .source = (char *) "/x",
                                         .target = (char *) bad[i] };
                struct container_spec s = good();
                s.mounts = &m;
                s.n_mounts = 1;
                cr_assert_eq(container_spec_validate(&s), -EINVAL, "%s", bad[i]);
        }
        struct mount_entry m = { .kind = MOUNT_BIND,
                                 .source = (char *) "/x",
                                 .target = (char *) "/workspace/" };
        struct container_spec s = good();
        s.mounts = &m;
        s.n_mounts = 1;
        cr_assert_eq(container_spec_validate(&s), 0);
        m.kind = MOUNT_OVERLAY; /* overlay without upper/work */
        cr_assert_eq(container_spec_validate(&s), -EINVAL);
        m.kind = MOUNT_TMPFS; /* tmpfs needs a size */
        cr_assert_eq(container_spec_validate(&s), -EINVAL);
        s.n_mounts = CONTAINER_MAX_MOUNTS + 1;
        cr_assert_eq(container_spec_validate(&s), -E2BIG);
}

Test(container_spec, forwards_checked)
{
        struct forward f = { .kind = FORWARD_TCP_TO_UNIX,
                             .host = (char *) "127.0.0.1",
                             .port = 8000,
                             .path = (char *) "/run/openenvd/a.sock" };
        struct container_spec s = good();
        s.forwards = &f;
        s.n_forwards = 1;
        cr_assert_eq(container_spec_validate(&s), 0);
        f.port = 0;
        cr_assert_eq(container_spec_validate(&s), -EINVAL);
        f.port = 8000;
        f.host = (char *) "127.0.0.1=x"; /* would break the shim's argument syntax */
        cr_assert_eq(container_spec_validate(&s), -EINVAL);
        f.host = (char *) "127.0.0.1";
        f.path = (char *) "relative.sock";
        cr_assert_eq(container_spec_validate(&s), -EINVAL);
}

Test(container_spec, weaken_names_are_one_table)
{
        cr_assert_eq(container_weaken_from_string("no-seccomp"), WEAKEN_NO_SECCOMP);
        cr_assert_eq(container_weaken_from_string("no-masks"), WEAKEN_NO_MASKS);
        cr_assert_eq(container_weaken_from_string("keep-caps"), WEAKEN_KEEP_CAPS);
        cr_assert_eq(container_weaken_from_string("writable-root"), WEAKEN_WRITABLE_ROOT);
        cr_assert_eq(container_weaken_from_string("none"), -EINVAL);
        cr_assert_eq(container_weaken_from_string(""), -EINVAL);
}
