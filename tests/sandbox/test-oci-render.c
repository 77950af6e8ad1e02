/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * config.json rendering, no runtime needed: every field the confinement
 * depends on is asserted, so a rendering regression fails here before it
 * reaches runc.
 */
#include "oci-test-util.h"

static char *argv_sh[] = { (char *) "/bin/sh", (char *) "-c", (char *) "exit 3", NULL };

static json_t *render(const struct container_spec *s, const char *shim,
                      const struct cgroup_limits *l)
{
        json_t *cfg = NULL;
        int r = oci_config_render(s, "/state/bundles/x/rootfs", shim, "/openenvd-oci-x", l, &cfg);
        cr_assert_eq(r, 0, "render: %s", strerror(-r));
        cr_assert_not_null(cfg);
        return cfg;
}

Test(oci_render, process)
{
        struct container_spec s;
        spec_init(&s, argv_sh);
        s.workdir = (char *) "/workspace";
        s.nproc = 512;
        json_t *cfg = render(&s, NULL, NULL);

        cr_assert_str_eq(json_string_value(jget(cfg, "ociVersion")), "1.0.2");
        cr_assert(json_is_false(jget(cfg, "process.terminal")));
        cr_assert_eq(json_integer_value(jget(cfg, "process.user.uid")), 1000);
        cr_assert_eq(json_integer_value(jget(cfg, "process.user.gid")), 1000);
        cr_assert_eq(json_array_size(jget(cfg, "process.args")), 3);
        cr_assert_str_eq(json_string_value(jget(cfg, "process.args.0")), "/bin/sh");
        cr_assert_str_eq(json_string_value(jget(cfg, "process.args.2")), "exit 3");
        cr_assert_eq(json_array_size(jget(cfg, "process.env")), 2);
        cr_assert_str_eq(json_string_value(jget(cfg, "process.env.1")), "LANG=C.UTF-8");
        cr_assert_str_eq(json_string_value(jget(cfg, "process.cwd")), "/workspace");
        cr_assert(json_is_true(jget(cfg, "process.noNewPrivileges")));
        const char *sets[] = { "bounding", "effective", "inheritable", "permitted", "ambient" };
        for (size_t i = 0; i < ELEMENTSOF(sets); i++) {
                json_t *set = json_object_get(jget(cfg, "process.capabilities"), sets[i]);
                cr_assert(json_is_array(set), "%s", sets[i]);
                cr_assert_eq(json_array_size(set), 0, "%s not empty", sets[i]);
        }
        size_t i;
        json_t *rl;
        int seen = 0;
        json_array_foreach(jget(cfg, "process.rlimits"), i, rl)
        {
                const char *t = json_string_value(json_object_get(rl, "type"));
                json_int_t hard = json_integer_value(json_object_get(rl, "hard"));
                json_int_t soft = json_integer_value(json_object_get(rl, "soft"));
                cr_assert_eq(hard, soft, "%s", t);
                if (streq(t, "RLIMIT_NOFILE")) {
                        seen |= 1;
                        cr_assert_eq(hard, 1024);
                }
                if (streq(t, "RLIMIT_NPROC")) {
                        seen |= 2;
                        cr_assert_eq(hard, 512);
                }
                if (streq(t, "RLIMIT_CORE")) {
                        seen |= 4;
                        cr_assert_eq(hard, 0);
                }
        }
        cr_assert_eq(seen, 7);
        cr_assert_str_eq(json_string_value(jget(cfg, "hostname")), "oci-test");
        cr_assert_str_eq(json_string_value(jget(cfg, "root.path")), "/state/bundles/x/rootfs");
        cr_assert(json_is_true(jget(cfg, "root.readonly")));
        json_decref(cfg);
}

Test(oci_render, shim_runs_principal_after_double_dash)
{
        struct forward fw[] = {
                { .kind = FORWARD_TCP_TO_UNIX,
                  .host = (char *) "127.0.0.1",
                  .port = 8000,
                  .path = (char *) "/run/openenvd/mcp.sock" },
                { .kind = FORWARD_UNIX_TO_TCP,
                  .host = (char *) "127.0.0.1",
                  .port = 8080,
                  .path = (char *) "/run/openenvd/svc.sock" },
        };
        const char *want[] = { "/run/openenvd-shim",
                               "--tcp-to-unix",
                               "127.0.0.1:8000=/run/openenvd/mcp.sock",
                               "--unix-to-tcp",
                               "/run/openenvd/svc.sock=127.0.0.1:8080",
                               "--",
                               "/bin/sh",
                               "-c",
                               "exit 3" };
        struct container_spec s;
        spec_init(&s, argv_sh);
        s.forwards = fw;
        s.n_forwards = ELEMENTSOF(fw);
        json_t *cfg = render(&s, "/usr/libexec/openenvd/openenvd-shim", NULL);

        cr_assert_eq(json_array_size(jget(cfg, "process.args")), ELEMENTSOF(want));
        for (size_t i = 0; i < ELEMENTSOF(want); i++)
                cr_assert_str_eq(json_string_value(json_array_get(jget(cfg, "process.args"), i)),
                                 want[i]);
        json_t *m = jmount(cfg, "/run/openenvd-shim");
        cr_assert_not_null(m);
        cr_assert_str_eq(json_string_value(json_object_get(m, "source")),
                         "/usr/libexec/openenvd/openenvd-shim");
        cr_assert(jarray_has_string(json_object_get(m, "options"), "ro"));
        cr_assert_not(jarray_has_string(json_object_get(m, "options"), "noexec"));
        json_decref(cfg);
}

Test(oci_render, default_mounts_then_spec_mounts_in_order)
{
        struct mount_entry mounts[] = {
                { .kind = MOUNT_BIND,
                  .source = (char *) "/srv/ws",
                  .target = (char *) "/workspace",
                  .flags = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOSYMFOLLOW },
                { .kind = MOUNT_TMPFS,
                  .target = (char *) "/scratch",
                  .size_bytes = 1048576,
                  .mode = 0700,
                  .flags = MS_NOSUID | MS_NODEV },
                { .kind = MOUNT_OVERLAY,
                  .source = (char *) "/l",
                  .upper = (char *) "/u",
                  .work = (char *) "/w",
                  .target = (char *) "/state" },
        };
        const char *order[] = { "/proc",         "/dev",       "/dev/pts", "/dev/shm",
                                "/dev/mqueue",   "/sys",       "/tmp",     "/run",
                                "/run/openenvd", "/workspace", "/scratch", "/state" };
        struct container_spec s;
        spec_init(&s, argv_sh);
        s.socket_dir = (char *) "/state/run/sock/agent-env";
        s.mounts = mounts;
        s.n_mounts = ELEMENTSOF(mounts);
        json_t *cfg = render(&s, NULL, NULL);

        cr_assert_eq(json_array_size(jget(cfg, "mounts")), ELEMENTSOF(order));
        for (size_t i = 0; i < ELEMENTSOF(order); i++) {
                json_t *m = json_array_get(jget(cfg, "mounts"), i);
                cr_assert_str_eq(json_string_value(json_object_get(m, "destination")), order[i]);
        }
        json_t *o = json_object_get(jmount(cfg, "/workspace"), "options");
        const char *want[] = {
                "rbind", "rprivate", "ro", "nosuid", "nodev", "noexec", "nosymfollow"
        };
        for (size_t i = 0; i < ELEMENTSOF(want); i++)
                cr_assert(jarray_has_string(o, want[i]), "missing %s", want[i]);
        cr_assert_not(jarray_has_string(o, "rw"));
        cr_assert_str_eq(json_string_value(json_object_get(jmount(cfg, "/workspace"), "type")),
                         "bind");

        o = json_object_get(jmount(cfg, "/scratch"), "options");
        cr_assert(jarray_has_string(o, "size=1048576"));
        cr_assert(jarray_has_string(o, "mode=700"));
        cr_assert(jarray_has_string(o, "rw"));
        cr_assert_not(jarray_has_string(o, "noexec"));

        o = json_object_get(jmount(cfg, "/state"), "options");
        cr_assert(jarray_has_string(o, "lowerdir=/l"));
        cr_assert(jarray_has_string(o, "upperdir=/u"));
        cr_assert(jarray_has_string(o, "workdir=/w"));

        o = json_object_get(jmount(cfg, "/run/openenvd"), "options");
        cr_assert_str_eq(json_string_value(json_object_get(jmount(cfg, "/run/openenvd"), "source")),
                         "/state/run/sock/agent-env");
        cr_assert(jarray_has_string(o, "nosuid") && jarray_has_string(o, "nodev") &&
                  jarray_has_string(o, "noexec"));
        /* /tmp and /dev/shm are sized from tmp_bytes. */
        cr_assert(jarray_has_string(json_object_get(jmount(cfg, "/tmp"), "options"),
                                    "size=16777216"));
        cr_assert(jarray_has_string(json_object_get(jmount(cfg, "/dev/shm"), "options"),
                                    "size=16777216"));
        cr_assert(jarray_has_string(json_object_get(jmount(cfg, "/sys"), "options"), "ro"));
        json_decref(cfg);
}

Test(oci_render, linux_namespaces_maps_masks_seccomp)
{
        char *masks[] = { (char *) "/var/lib/openenvd", (char *) "/run/secrets", NULL };
        const char *ns[] = { "pid", "network", "ipc", "uts", "mount", "cgroup", "user" };
        struct container_spec s;
        spec_init(&s, argv_sh);
        s.masks = masks;
        json_t *cfg = render(&s, NULL, NULL);

        cr_assert_eq(json_array_size(jget(cfg, "linux.namespaces")), ELEMENTSOF(ns));
        for (size_t i = 0; i < ELEMENTSOF(ns); i++) {
                size_t j;
                json_t *n;
                bool found = false;
                json_array_foreach(jget(cfg, "linux.namespaces"), j, n) found |=
                        streq(json_string_value(json_object_get(n, "type")), ns[i]);
                cr_assert(found, "namespace %s missing", ns[i]);
        }
        cr_assert_eq(json_integer_value(jget(cfg, "linux.uidMappings.0.containerID")), 0);
        cr_assert_eq(json_integer_value(jget(cfg, "linux.uidMappings.0.hostID")), 300000);
        cr_assert_eq(json_integer_value(jget(cfg, "linux.uidMappings.0.size")), 65536);
        cr_assert_eq(json_integer_value(jget(cfg, "linux.gidMappings.0.hostID")), 300000);
        cr_assert_str_eq(json_string_value(jget(cfg, "linux.cgroupsPath")), "/openenvd-oci-x");

        json_t *masked = jget(cfg, "linux.maskedPaths");
        cr_assert(jarray_has_string(masked, "/proc/kcore"));
        cr_assert(jarray_has_string(masked, "/sys/firmware"));
        cr_assert(jarray_has_string(masked, "/var/lib/openenvd"));
        cr_assert(jarray_has_string(masked, "/run/secrets"));
        cr_assert(jarray_has_string(jget(cfg, "linux.readonlyPaths"), "/proc/sys"));
        cr_assert(jarray_has_string(jget(cfg, "linux.readonlyPaths"), "/proc/sysrq-trigger"));

        /* The seccomp object is the syscall filter's own rendering. */
        json_t *sc = jget(cfg, "linux.seccomp");
        cr_assert(json_is_object(sc));
        cr_assert_str_eq(json_string_value(json_object_get(sc, "defaultAction")), "SCMP_ACT_ERRNO");
        cr_assert_gt(json_array_size(json_object_get(sc, "syscalls")), 10);
        json_t *port =
                json_object_get(jget(cfg, "linux.sysctl"), "net.ipv4.ip_unprivileged_port_start");
        cr_assert_str_eq(json_string_value(port), "0");
        json_decref(cfg);
}

Test(oci_render, resources)
{
        struct cgroup_limits l = { .memory_bytes = 256 << 20, .pids = 64, .cpu = 0.005 };
        struct container_spec s;
        spec_init(&s, argv_sh);
        json_t *cfg = render(&s, NULL, &l);

        cr_assert_eq(json_integer_value(jget(cfg, "linux.resources.memory.limit")), 256 << 20);
        cr_assert_eq(json_integer_value(jget(cfg, "linux.resources.memory.swap")), 256 << 20);
        cr_assert_eq(json_integer_value(jget(cfg, "linux.resources.pids.limit")), 64);
        /* 0.005 CPU would be 500 us: clamped to the kernel's 1 ms minimum. */
        cr_assert_eq(json_integer_value(jget(cfg, "linux.resources.cpu.quota")), 1000);
        cr_assert_eq(json_integer_value(jget(cfg, "linux.resources.cpu.period")), 100000);
        cr_assert(json_is_false(jget(cfg, "linux.resources.devices.0.allow")));
        json_decref(cfg);

        cfg = render(&s, NULL, NULL);
        cr_assert_null(jget(cfg, "linux.resources.memory"));
        cr_assert_null(jget(cfg, "linux.resources.pids"));
        json_decref(cfg);
}

Test(oci_render, weakenings_are_visible)
{
        struct container_spec s;
        spec_init(&s, argv_sh);
        s.weaken = WEAKEN_NO_SECCOMP | WEAKEN_NO_MASKS | WEAKEN_WRITABLE_ROOT | WEAKEN_KEEP_CAPS;
        json_t *cfg = render(&s, NULL, NULL);

        cr_assert_null(jget(cfg, "linux.seccomp"));
        cr_assert_eq(json_array_size(jget(cfg, "linux.maskedPaths")), 0);
        cr_assert(json_is_false(jget(cfg, "root.readonly")));
        cr_assert(jarray_has_string(jget(cfg, "process.capabilities.effective"), "CAP_NET_RAW"));
        json_decref(cfg);
}

Test(oci_render, invalid_specs_refused)
{
        char *empty[] = { NULL };
        struct container_spec s;
        json_t *cfg = NULL;

        spec_init(&s, argv_sh);
        s.uid = 0;
        cr_assert_eq(oci_config_render(&s, "/r", NULL, NULL, NULL, &cfg), -EINVAL,
                     "root principal");
        spec_init(&s, argv_sh);
        s.host_uid = 0;
        cr_assert_eq(oci_config_render(&s, "/r", NULL, NULL, NULL, &cfg), -EINVAL,
                     "maps host root");
        spec_init(&s, argv_sh);
        s.uid = 70000;
        cr_assert_eq(oci_config_render(&s, "/r", NULL, NULL, NULL, &cfg), -EINVAL, "unmapped uid");
        spec_init(&s, empty);
        cr_assert_eq(oci_config_render(&s, "/r", NULL, NULL, NULL, &cfg), -EINVAL, "empty argv");
        spec_init(&s, argv_sh);
        s.name = (char *) "../evil";
        cr_assert_eq(oci_config_render(&s, "/r", NULL, NULL, NULL, &cfg), -EINVAL, "bad name");
        struct mount_entry bad = { .kind = MOUNT_OVERLAY,
                                   .source = (char *) "/l",
                                   .target = (char *) "/x" };
        spec_init(&s, argv_sh);
        s.mounts = &bad;
        s.n_mounts = 1;
        cr_assert_eq(oci_config_render(&s, "/r", NULL, NULL, NULL, &cfg), -EINVAL,
                     "overlay without upper");
        cr_assert_null(cfg);
}

Test(oci_render, runtime_lookup)
{
        char *p = NULL;
        cr_assert_eq(oci_runtime_find("/nonexistent/runc", &p), -ENOENT);
        cr_assert_eq(oci_runtime_find("bin/runc", &p), -EINVAL);
        cr_assert_eq(oci_runtime_find("no-such-runtime-here", &p), -ENOENT);
        cr_assert_eq(oci_runtime_find("/bin/sh", &p), 0);
        cr_assert_str_eq(p, "/bin/sh");
        free(p);
}
