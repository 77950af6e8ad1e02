/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The native launcher on the real kernel, as root: every guarantee of
 * docs/SANDBOX.md is attacked from inside a spawned container and each
 * expected denial is asserted (with its errno); a few positive controls run
 * the same attack against a deliberately weakened container to show that the
 * attack would be seen if it worked.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/nsfs.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "base/strbuf.h"
#include "sandbox/launcher-oci.h"
#include "sandbox-test.h"

TestSuite(launcher, .fini = box_fini, .timeout = 60);

static void assert_result(const char *got, const char *want)
{
        cr_assert(streq(got, want), "got \"%s\", want \"%s\"", got, want);
}

static void assert_denied(const char *got)
{
        cr_assert(startswith(got, "denied "), "got \"%s\", want a denial", got);
}

/* --- identity and privileges --- */

Test(launcher, principal_is_unprivileged)
{
        box_init();
        assert_result(box_attack("ids", NULL, NULL),
                      "uid=1000 euid=1000 gid=1000 groups=0 CapInh=0000000000000000 "
                      "CapPrm=0000000000000000 CapEff=0000000000000000 "
                      "CapBnd=0000000000000000 CapAmb=0000000000000000 NoNewPrivs=1 Seccomp=2");
}

Test(launcher, setuid_root_denied)
{
        box_init();
        assert_result(box_attack("setuid0", NULL, NULL), "denied EPERM");
}

Test(launcher, distinct_host_uid_per_container)
{
        box_init();
        B.argv[1] = (char *) "wait-term";
        box_start();
        cr_assert(box_read_until("result: ready"));
        uid_t first = host_uid_of(container_pid(B.c));
        struct container *first_c = TAKE_PTR(B.c);
        safe_close(B.out_r);
        B.out_r = -EBADF;
        B.out = mfree(B.out);
        B.out_len = 0;

        B.spec.host_uid = BOX_HOST_UID + 65536;
        box_start();
        cr_assert(box_read_until("result: ready"));
        uid_t second = host_uid_of(container_pid(B.c));
        container_free(first_c);

        cr_assert_eq(first, BOX_HOST_UID + BOX_UID);
        cr_assert_eq(second, BOX_HOST_UID + 65536 + BOX_UID);
}

/* A container's user namespace is owned by its own first host uid, not by
 * root: the kernel charges every per-user count inside it (inotify
 * instances here) to the owner, so one that takes all it can get starves
 * neither root nor another container. The control: root's own instance. */
Test(launcher, per_user_counts_charged_to_the_container)
{
        box_init();
        B.argv[1] = (char *) "inotify-fill";
        box_start();
        cr_assert(box_read_until("result: ready"), "%s", B.out);
        cr_assert(strstr(B.out, "inotify ") && strstr(B.out, " EMFILE"), "%s", B.out);

        char path[64];
        (void) snprintf(path, sizeof(path), "/proc/%d/ns/user", (int) container_pid(B.c));
        int ns = open(path, O_RDONLY | O_CLOEXEC);
        cr_assert(ns >= 0, "%m");
        uid_t owner = (uid_t) -1;
        cr_assert(ioctl(ns, NS_GET_OWNER_UID, &owner) == 0, "%m");
        safe_close(ns);
        cr_assert_eq(owner, BOX_HOST_UID, "the container's user namespace is owned by %u", owner);

        int mine = inotify_init1(IN_CLOEXEC);
        cr_assert(mine >= 0, "root got no inotify instance while a container holds its own: %m");
        safe_close(mine);

        /* Another container, another owner: it gets its own. */
        struct container *first = TAKE_PTR(B.c);
        safe_close(B.out_r);
        B.out_r = -EBADF;
        B.out = mfree(B.out);
        B.out_len = 0;
        B.spec.host_uid = BOX_HOST_UID + 65536;
        B.argv[1] = (char *) "inotify-fill";
        box_start();
        cr_assert(box_read_until("result: ready"), "%s", B.out);
        cr_assert(!strstr(B.out, "inotify 0 "), "the second container got none: %s", B.out);
        container_free(first);
}

Test(launcher, hostname_is_container_name)
{
        box_init();
        assert_result(box_attack("hostname", NULL, NULL), "hostname sbx-test");
}

Test(launcher, workdir)
{
        box_init();
        B.spec.workdir = (char *) "/tmp";
        assert_result(box_attack("cwd", NULL, NULL), "cwd /tmp");
}

/* --- read-only image --- */

Test(launcher, root_usr_etc_read_only)
{
        static const char *const paths[] = { "/oe-attack", "/usr/oe-attack", "/etc/oe-attack",
                                             "/opt/oe-attack", "/var/oe-attack" };
        box_init();
        for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
                assert_result(box_attack("create", paths[i], NULL), "denied EROFS");
                box_reset();
        }
        assert_result(box_attack("mkdir", "/oe-attack-dir", NULL), "denied EROFS");
        box_reset();
        /* /run and /dev are the launcher's own tmpfs, sealed read-only. */
        assert_result(box_attack("create", "/run/oe-attack", NULL), "denied EROFS");
        box_reset();
        assert_result(box_attack("create", "/dev/oe-attack", NULL), "denied EROFS");
}

Test(launcher, socket_dir_and_tmp_writable)
{
        box_init();
        assert_result(box_attack("create", "/run/openenvd/ok", NULL), "allowed");
        box_reset();
        assert_result(box_attack("create", "/tmp/ok", NULL), "allowed");
        box_reset();
        assert_result(box_attack("create", "/dev/shm/ok", NULL), "allowed");
}

Test(launcher, sources_behind_private_host_dirs)
{
        /* The daemon's state dir is 0700 root: the container's root cannot
         * traverse it, yet the socket dir and binds below it must work. */
        box_init();
        const char *base = box_tmpdir();
        cr_assert(chmod(base, 0700) == 0);
        cleanup_free char *sock = xasprintf("%s/sock", base);
        cr_assert(mkdir(sock, 0700) == 0);
        cr_assert(chown(sock, BOX_HOST_UID + BOX_UID, BOX_HOST_UID + BOX_UID) == 0);
        B.spec.socket_dir = sock;
        assert_result(box_attack("create", "/run/openenvd/ok", NULL), "allowed");
        cr_assert(access(sock, F_OK) == 0);
}

/* --- masked paths --- */

Test(launcher, proc_and_sys_masked)
{
        static const char *const paths[] = { "/proc/kcore",         "/proc/keys",
                                             "/proc/timer_list",    "/proc/sched_debug",
                                             "/proc/acpi",          "/proc/scsi",
                                             "/proc/latency_stats", "/sys/firmware" };
        box_init();
        for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
                const char *got = box_attack("read", paths[i], NULL);
                /* Present on the host: must read as empty. Absent from this
                 * kernel: must stay absent. */
                bool on_host = access(paths[i], F_OK) == 0;
                assert_result(got, on_host ? "empty" : "denied ENOENT");
                box_reset();
        }
}

/*
 * One policy, two launchers (sandbox/container-spec.h): for the same spec,
 * the native launcher must apply exactly what the OCI launcher writes into
 * config.json — every masked path, every read-only path, the shim's argv.
 */
Test(launcher, native_applies_the_policy_the_oci_launcher_renders)
{
        json_t *cfg = NULL;
        box_init();
        B.masks[0] = (char *) "/etc/shadow";
        cr_assert_eq(oci_config_render(&B.spec, "/rootfs", SHIM_PATH, NULL, NULL, &cfg), 0);
        json_t *linux_ = json_object_get(cfg, "linux");
        json_t *masked = json_object_get(linux_, "maskedPaths");
        json_t *ro = json_object_get(linux_, "readonlyPaths");
        size_t i;
        json_t *v;

        cr_assert(json_array_size(masked) > 10, "Docker's masks and the spec's");
        json_array_foreach(masked, i, v)
        {
                const char *path = json_string_value(v);
                bool on_host = access(path, F_OK) == 0;
                assert_result(box_attack("read", path, NULL), on_host ? "empty" : "denied ENOENT");
                box_reset();
        }
        cr_assert_gt(json_array_size(ro), 0);
        json_array_foreach(ro, i, v)
        {
                const char *path = json_string_value(v);
                if (access(path, F_OK) < 0)
                        continue;
                assert_result(box_attack("statvfs", path, NULL), "ro");
                box_reset();
        }
        /* The shim's argv: identical but for argv[0] (a path inside the
         * OCI bundle there, the launcher's name here). */
        struct strbuf want = STRBUF_INIT;
        B.argv[1] = (char *) "cmdline";
        B.argv[2] = NULL;
        B.forwards[0] = (struct forward){ FORWARD_TCP_TO_UNIX, (char *) "127.0.0.1", 8000,
                                          (char *) "/run/openenvd/mcp.sock" };
        B.spec.n_forwards = 1;
        json_decref(cfg);
        cr_assert_eq(oci_config_render(&B.spec, "/rootfs", SHIM_PATH, NULL, NULL, &cfg), 0);
        strbuf_adds(&want, "cmdline openenvd-shim");
        json_array_foreach(json_object_get(json_object_get(cfg, "process"), "args"), i,
                           v) if (i > 0) strbuf_addf(&want, " %s", json_string_value(v));
        cr_assert(strstr(want.buf, " --tcp-to-unix 127.0.0.1:8000=/run/openenvd/mcp.sock -- "),
                  "%s", want.buf);
        box_start();
        cr_assert_eq(box_wait(), 0);
        cr_assert_str_eq(box_result(), want.buf);
        strbuf_release(&want);
        json_decref(cfg);
}

Test(launcher, masks_are_real)
{
        /* Positive control: without masks the same read sees data, so the
         * test above would fail if masking stopped working. */
        box_init();
        require_feature(access("/sys/firmware", F_OK) == 0, "/sys/firmware");
        B.spec.weaken = WEAKEN_NO_MASKS;
        const char *got = box_attack("read", "/sys/firmware", NULL);
        cr_assert(startswith(got, "entries "), "got \"%s\"", got);
}

Test(launcher, spec_masks_hide_state_and_secrets)
{
        box_init();
        /* Traversable by the container's root: masks are resolved (and
         * fail closed) with its credentials. */
        char *dir = (char *) box_tmpdir();
        cleanup_free char *file = xasprintf("%s/token", dir);
        int fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        cr_assert(fd >= 0);
        cr_assert(write(fd, "s3cret", 6) == 6);
        close(fd);
        /* Host /tmp is invisible inside (a fresh tmpfs), so bring the dir
         * in at a path and mask the dir itself and a file of another. */
        box_add_mount((struct mount_entry){ .kind = MOUNT_BIND,
                                            .source = dir,
                                            .target = (char *) "/srv/oe-secret",
                                            .flags = MS_RDONLY });
        box_add_mount((struct mount_entry){ .kind = MOUNT_BIND,
                                            .source = dir,
                                            .target = (char *) "/srv/oe-visible",
                                            .flags = MS_RDONLY });
        B.masks[0] = (char *) "/srv/oe-secret";
        B.masks[1] = (char *) "/srv/oe-visible/token";
        B.masks[2] = (char *) "/run/secrets"; /* absent: nothing to do */

        assert_result(box_attack("read", "/srv/oe-secret", NULL), "empty");
        box_reset();
        assert_result(box_attack("read", "/srv/oe-visible/token", NULL), "empty");
        box_reset();
        /* Control: unmasked, the same file has its 6 bytes. */
        B.masks[1] = NULL;
        assert_result(box_attack("read", "/srv/oe-visible/token", NULL), "data 6");
}

/* --- processes --- */

Test(launcher, sees_only_its_own_pids)
{
        box_init();
        /* PID 1 is the shim, 2 the attacker. */
        assert_result(box_attack("pids", NULL, NULL), "pids 1 2");
}

Test(launcher, cannot_signal_outside)
{
        char pid[32];
        box_init();
        (void) snprintf(pid, sizeof(pid), "%d", (int) getpid());
        assert_result(box_attack("kill", pid, NULL), "denied ESRCH");
}

/* --- the syscall filter and the user namespace --- */

Test(launcher, dangerous_syscalls_denied)
{
        static const char *const attacks[] = { "mount", "unshare", "setns", "ptrace", "io_uring",
                                               "bpf",   "keyctl",  "mknod", "chroot" };
        box_init();
        for (size_t i = 0; i < ELEMENTSOF(attacks); i++) {
                const char *got = box_attack(attacks[i], NULL, NULL);
                cr_assert(streq(got, "denied EPERM"), "%s: got \"%s\"", attacks[i], got);
                box_reset();
        }
}

Test(launcher, unshare_control)
{
        /* Positive control: with the filter off and capabilities kept, the
         * same attacker does create namespaces, so "denied" above is real. */
        box_init();
        B.spec.weaken = WEAKEN_NO_SECCOMP | WEAKEN_KEEP_CAPS;
        B.spec.uid = 0;
        B.spec.gid = 0;
        assert_result(box_attack("unshare", NULL, NULL), "allowed");
}

/* --- network --- */

Test(launcher, only_loopback)
{
        box_init();
        assert_result(box_attack("netifs", NULL, NULL), "ifs lo / lo");
}

Test(launcher, host_loopback_unreachable)
{
        struct sockaddr_in sin = { .sin_family = AF_INET,
                                   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof(sin);
        char port[16];

        box_init();
        cleanup_close int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        cr_assert(l >= 0);
        cr_assert(bind(l, (struct sockaddr *) &sin, sizeof(sin)) == 0);
        cr_assert(listen(l, 16) == 0);
        cr_assert(getsockname(l, (struct sockaddr *) &sin, &len) == 0);
        (void) snprintf(port, sizeof(port), "%u", ntohs(sin.sin_port));

        assert_result(box_attack("connect", "127.0.0.1", port), "denied ECONNREFUSED");
        /* And the canary saw nothing. */
        cr_assert(accept4(l, NULL, NULL, SOCK_CLOEXEC) < 0 && errno == EAGAIN);
}

/* --- resource limits --- */

Test(launcher, fork_past_pids_max)
{
        box_init();
        box_cgroup(0, 16);
        const char *got = box_attack("fork", "200", NULL);
        long forked = -1;
        cr_assert(sscanf(got, "forked %ld", &forked) == 1, "got \"%s\"", got);
        cr_assert(strstr(got, "denied EAGAIN"), "got \"%s\"", got);
        /* shim + attacker + forked children <= pids.max */
        cr_assert(forked <= 14, "forked %ld", forked);
}

Test(launcher, fork_past_rlimit_nproc)
{
        box_init();
        B.spec.nproc = 8;
        const char *got = box_attack("fork", "200", NULL);
        long forked = -1;
        cr_assert(sscanf(got, "forked %ld", &forked) == 1, "got \"%s\"", got);
        cr_assert(strstr(got, "denied EAGAIN"), "got \"%s\"", got);
        cr_assert(forked <= 8, "forked %ld", forked);
}

Test(launcher, allocate_past_memory_limit)
{
        box_init();
        box_cgroup(32ULL << 20, 0);
        B.argv[1] = (char *) "alloc";
        B.argv[2] = (char *) "256";
        box_start();
        int status = box_wait();
        /* The OOM killer takes the attacker; the shim reports SIGKILL. */
        cr_assert_eq(status, 128 + SIGKILL, "status %d, output: %s", status, B.out);
        cr_assert(!strstr(B.out ? B.out : "", "result: allowed"));
}

Test(launcher, fill_tmp_past_disk_limit)
{
        box_init();
        B.spec.tmp_bytes = 4ULL << 20;
        const char *got = box_attack("fill", "/tmp/fill", NULL);
        long long bytes = -1;
        cr_assert(sscanf(got, "denied ENOSPC after %lld", &bytes) == 1, "got \"%s\"", got);
        cr_assert(bytes <= (long long) B.spec.tmp_bytes);
        box_reset();
        got = box_attack("fill", "/dev/shm/fill", NULL);
        cr_assert(sscanf(got, "denied ENOSPC after %lld", &bytes) == 1, "got \"%s\"", got);
        cr_assert(bytes <= (long long) B.spec.tmp_bytes);
}

/* --- kernel interfaces --- */

Test(launcher, proc_sys_and_cgroupfs_not_writable)
{
        box_init();
        assert_denied(box_attack("write", "/proc/sys/kernel/hostname", NULL));
        box_reset();
        assert_denied(box_attack("write", "/proc/sys/net/ipv4/ip_forward", NULL));
        box_reset();
        /* Read-only sysfs; kernfs answers ENOENT for names it does not
         * have before the read-only check, so accept any denial here. */
        assert_denied(box_attack("create", "/sys/fs/cgroup/oe-attack", NULL));
        box_reset();
        assert_denied(box_attack("mkdir", "/sys/fs/cgroup/oe-attack", NULL));
        box_reset();
        assert_result(box_attack("create", "/sys/oe-attack", NULL), "denied EROFS");
        box_reset();
        assert_result(box_attack("write", "/sys/fs/cgroup/cgroup.procs", NULL), "denied ENOENT");
        box_reset();
        assert_result(box_attack("read", "/sys/fs/cgroup", NULL), "empty");
}

/* --- mounts --- */

Test(launcher, missing_targets_do_not_touch_image)
{
        box_init();
        char *dir = (char *) box_tmpdir();
        cleanup_free char *file = xasprintf("%s/f", dir);
        int fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        cr_assert(fd >= 0 && write(fd, "abc", 3) == 3);
        close(fd);
        cr_assert(access("/oe-sbx-missing", F_OK) < 0);
        cr_assert(access("/opt/oe-sbx-test", F_OK) < 0);

        /* Directly under "/" (a scaffold over the root) and deeper. */
        box_add_mount((struct mount_entry){ .kind = MOUNT_BIND,
                                            .source = dir,
                                            .target = (char *) "/oe-sbx-missing/a/b",
                                            .flags = MS_RDONLY });
        assert_result(box_attack("read", "/oe-sbx-missing/a/b/f", NULL), "data 3");
        box_reset();
        /* The scaffold keeps the rest of "/" as it was: still read-only,
         * with its submounts (here /proc). */
        assert_result(box_attack("create", "/usr/oe-attack", NULL), "denied EROFS");
        box_reset();
        assert_result(box_attack("create", "/oe-sbx-missing/new", NULL), "denied EROFS");
        box_reset();
        assert_result(box_attack("pids", NULL, NULL), "pids 1 2");

        cr_assert(access("/oe-sbx-missing", F_OK) < 0 && errno == ENOENT);
        cr_assert(access("/opt/oe-sbx-test", F_OK) < 0 && errno == ENOENT);
}

Test(launcher, workspace_overlay)
{
        box_init();
        /* overlayfs checks the layers with the mounter's (container root's)
         * credentials: the path to them must be traversable. */
        const char *base = box_tmpdir();
        int bfd = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
        cr_assert(bfd >= 0);
        cr_assert(mkdirat(bfd, "lower", 0755) == 0 && mkdirat(bfd, "upper", 0755) == 0 &&
                  mkdirat(bfd, "work", 0700) == 0);
        int fd = openat(bfd, "lower/seed", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        cr_assert(fd >= 0 && write(fd, "seed", 4) == 4);
        close(fd);
        /* upper belongs to the principal; work to the container's root
         * (overlayfs works in it with the mounter's credentials). */
        cr_assert(fchownat(bfd, "upper", BOX_HOST_UID + BOX_UID, BOX_HOST_UID + BOX_UID, 0) == 0);
        cr_assert(fchownat(bfd, "work", BOX_HOST_UID, BOX_HOST_UID, 0) == 0);
        cleanup_free char *lower = xasprintf("%s/lower", base);
        cleanup_free char *upper = xasprintf("%s/upper", base);
        cleanup_free char *work = xasprintf("%s/work", base);
        box_add_mount((struct mount_entry){ .kind = MOUNT_OVERLAY,
                                            .source = lower,
                                            .upper = upper,
                                            .work = work,
                                            .target = (char *) "/workspace",
                                            .flags = MS_NOSUID | MS_NODEV });

        assert_result(box_attack("read", "/workspace/seed", NULL), "data 4");
        box_reset();
        assert_result(box_attack("mkdir", "/workspace/made", NULL), "allowed");
        /* The write landed in the upper layer only. */
        cr_assert(faccessat(bfd, "upper/made", F_OK, 0) == 0);
        cr_assert(faccessat(bfd, "lower/made", F_OK, 0) < 0);
        close(bfd);
}

Test(launcher, no_mount_leaks_to_host)
{
        cleanup_free char *before = NULL, *after = NULL;
        box_init();
        cr_assert(read_full_file_at(AT_FDCWD, "/proc/self/mountinfo", 1 << 22, &before, NULL) == 0);
        assert_result(box_attack("pids", NULL, NULL), "pids 1 2");
        cr_assert(read_full_file_at(AT_FDCWD, "/proc/self/mountinfo", 1 << 22, &after, NULL) == 0);
        cr_assert(streq(before, after));
}

/* --- setup failures come back as {step, errno} --- */

Test(launcher, missing_bind_source_reports_step)
{
        struct container_error e = {};
        box_init();
        box_add_mount((struct mount_entry){ .kind = MOUNT_BIND,
                                            .source = (char *) "/nonexistent/oe-source",
                                            .target = (char *) "/srv/x" });
        int r = box_spawn(&e);
        cr_assert_eq(r, -ENOENT);
        cr_assert_eq(e.step, CONTAINER_STEP_MOUNT_SOURCE, "step %s",
                     container_step_to_string(e.step));
        cr_assert_eq(e.detail.error, ENOENT);
        cr_assert_eq(e.index, 1);
        /* The words a member's start failure shows (the verdict, the log). */
        cr_assert_str_eq(e.detail.message, "mount-source (index 1): No such file or directory");
        cr_assert_null(B.c);
        error_detail_done(&e.detail);
}

Test(launcher, missing_shim_reports_step)
{
        struct container_error e = {};
        box_init();
        B.spec.shim_path = (char *) "/nonexistent/openenvd-shim";
        cr_assert_eq(box_spawn(&e), -ENOENT);
        cr_assert_eq(e.step, CONTAINER_STEP_SHIM);
        cr_assert_str_eq(e.detail.message, "shim: No such file or directory");
        error_detail_done(&e.detail);
}

Test(launcher, bad_workdir_reports_step)
{
        struct container_error e = {};
        box_init();
        B.spec.workdir = (char *) "/nonexistent-dir";
        cr_assert_eq(box_spawn(&e), -ENOENT);
        cr_assert_eq(e.step, CONTAINER_STEP_CHDIR, "step %s", container_step_to_string(e.step));
        error_detail_done(&e.detail);
}

Test(launcher, invalid_spec_rejected)
{
        struct container_error e = {};
        box_init();
        B.spec.uid = 0; /* root principal without an explicit weakening */
        cr_assert_eq(box_spawn(&e), -EINVAL);
        cr_assert_eq(e.step, CONTAINER_STEP_VALIDATE);
        error_detail_done(&e.detail);
}

/* --- templates (fork-speed episodes) --- */

static char *proc_status_line(pid_t pid, const char *key)
{
        cleanup_free char *path = xasprintf("/proc/%d/status", (int) pid), *text = NULL;
        cr_assert(read_full_file_at(AT_FDCWD, path, 1 << 16, &text, NULL) == 0);
        cleanup_free char *needle = xasprintf("\n%s:", key);
        const char *p = strstr(text, needle);
        cr_assert(p, "no %s in %s", key, path);
        p += strlen(needle);
        return xstrndup(p, strcspn(p, "\n"));
}

static ino_t ns_inode(pid_t pid, const char *ns)
{
        struct stat st;
        cleanup_free char *path = xasprintf("/proc/%d/ns/%s", (int) pid, ns);
        cr_assert(stat(path, &st) == 0);
        return st.st_ino;
}

static void box_restart_output(void)
{
        B.out_r = safe_close(B.out_r);
        B.out = mfree(B.out);
        B.out_len = 0;
}

/* A template's principal is its namespace's root with all of the
 * namespace's capabilities and no filter (it must setns() its copies); a
 * container nested in it gets its user and pid namespaces as children of
 * the template's, its uid map in the template's ids (here the template's
 * second range), and still its own host uids, its own netns and the full
 * confinement. */
Test(launcher, a_container_nests_in_a_template)
{
        box_init();
        const uid_t nested_host = BOX_HOST_UID + 2 * 65536;
        struct uid_extent extra = { .inside = 65536, .host = nested_host, .count = 65536 };
        B.argv[1] = (char *) "wait-term";
        B.spec.template_root = true;
        B.spec.uid = B.spec.gid = 0;
        B.spec.uid_extents = &extra;
        B.spec.n_uid_extents = 1;
        box_start();
        cr_assert(box_read_until("result: ready"));
        struct container *t = TAKE_PTR(B.c);
        pid_t t_principal = first_child(container_pid(t));
        cleanup_free char *t_caps = proc_status_line(t_principal, "CapEff");
        cleanup_free char *t_seccomp = proc_status_line(t_principal, "Seccomp");
        cr_assert(strcmp(t_caps, "\t0000000000000000") != 0, "template has no capability");
        cr_assert(streq(t_seccomp, "\t0"), "template filtered: %s", t_seccomp);
        cr_assert_eq(host_uid_of(t_principal), BOX_HOST_UID);

        box_restart_output();
        struct container_nest nest = { .pidfd = container_pidfd(t),
                                       .owner = BOX_HOST_UID,
                                       .inside = 65536 };
        B.spec.template_root = false;
        B.spec.uid = B.spec.gid = BOX_UID;
        B.spec.uid_extents = NULL;
        B.spec.n_uid_extents = 0;
        B.spec.host_uid = nested_host;
        B.spec.nest = &nest;
        box_start();
        cr_assert(box_read_until("result: ready"));
        pid_t e = container_pid(B.c);

        cr_assert_eq(host_uid_of(first_child(e)), nested_host + BOX_UID);
        /* host, template and its own pid: born under the template's */
        cleanup_free char *nspid = proc_status_line(e, "NSpid");
        int a, b, c;
        cr_assert(sscanf(nspid, "%d %d %d", &a, &b, &c) == 3 && c == 1, "NSpid %s", nspid);
        /* its user namespace's parent is the template's */
        cleanup_free char *user = xasprintf("/proc/%d/ns/user", (int) e);
        cleanup_close int ufd = open(user, O_RDONLY | O_CLOEXEC);
        cr_assert(ufd >= 0);
        cleanup_close int parent = ioctl(ufd, NS_GET_PARENT);
        struct stat st;
        cr_assert(parent >= 0 && fstat(parent, &st) == 0);
        cr_assert_eq(st.st_ino, ns_inode(container_pid(t), "user"));
        cr_assert_neq(ns_inode(e, "net"), ns_inode(container_pid(t), "net"));
        cleanup_free char *caps = proc_status_line(first_child(e), "CapEff");
        cleanup_free char *seccomp = proc_status_line(first_child(e), "Seccomp");
        cr_assert(streq(caps, "\t0000000000000000") && streq(seccomp, "\t2"), "%s %s", caps,
                  seccomp);
        B.c = container_free(B.c); /* nested first: the template's pid 1 takes them all */
        container_free(t);
}

/* The template's extra ranges may not overlap its own nor map host root;
 * a nested container needs a netns of its own; no OCI runtime nests. */
Test(launcher, template_specs_are_checked)
{
        box_init();
        struct uid_extent bad = { .inside = 100, .host = BOX_HOST_UID + 65536, .count = 10 };
        B.spec.uid_extents = &bad;
        B.spec.n_uid_extents = 1;
        cr_assert_eq(container_spec_validate(&B.spec), -EINVAL);
        bad = (struct uid_extent){ .inside = 65536, .host = 0, .count = 10 };
        cr_assert_eq(container_spec_validate(&B.spec), -EINVAL);
        bad.host = BOX_HOST_UID + 65536;
        cr_assert_eq(container_spec_validate(&B.spec), 0);
        B.spec.n_uid_extents = 0;
        struct container_nest nest = { .pidfd = -EBADF, .owner = BOX_HOST_UID };
        B.spec.nest = &nest;
        cr_assert_eq(container_spec_validate(&B.spec), -EINVAL);
        nest.pidfd = 0;
        cr_assert_eq(container_spec_validate(&B.spec), 0);
        B.spec.template_root = true;
        cr_assert_eq(container_spec_validate(&B.spec), -EINVAL);
        B.spec.template_root = false;
        /* the shim's adopt pipe: not with a gate, not a forwarder's nor the
         * principal's; the principal's fds among those passed */
        int fds[2] = { 0, 1 };
        B.spec.pass_fds = fds;
        B.spec.n_pass_fds = 2;
        B.spec.adopt = true;
        B.spec.adopt_pass_index = 1;
        cr_assert_eq(container_spec_validate(&B.spec), 0);
        B.spec.gate = true;
        cr_assert_eq(container_spec_validate(&B.spec), -EINVAL);
        B.spec.gate = false;
        B.spec.principal_fds = 1u << 1;
        cr_assert_eq(container_spec_validate(&B.spec), -EINVAL);
        B.spec.principal_fds = 1u << 2;
        cr_assert_eq(container_spec_validate(&B.spec), -EINVAL);
        B.spec.principal_fds = 1u << 0;
        cr_assert_eq(container_spec_validate(&B.spec), 0);
        B.forwards[0] = (struct forward){
                .kind = FORWARD_FD_TO_TCP, .host = (char *) "127.0.0.1", .port = 80, .pass_index = 1
        };
        B.spec.n_forwards = 1;
        cr_assert_eq(container_spec_validate(&B.spec), -EINVAL);
        B.spec.n_forwards = 0;
        json_t *cfg = NULL;
        cr_assert_eq(oci_config_render(&B.spec, "/rootfs", SHIM_PATH, NULL, NULL, &cfg),
                     -EOPNOTSUPP);
}
