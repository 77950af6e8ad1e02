/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The OCI launcher driving a real runtime (runc; crun where it works), as
 * root. Every container's confinement is asserted from inside: the
 * principal runs a shell snippet and reports through its stdout (a file in
 * the test's state dir) and its exit status. Every test removes its
 * containers, bundles, mounts and cgroups, and checks that it did.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "oci-test-util.h"

static char state[] = "/tmp/oci-test-XXXXXX";

static void state_setup(void)
{
        require_root();
        cr_assert_not_null(mkdtemp(state));
        /* The runtime's init resolves the bundle path as the mapped root. */
        cr_assert_eq(chmod(state, 0711), 0);
        /* The container's init becomes our child when `create` exits. */
        cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
}

static void state_teardown(void)
{
        /* Bundles and runtime state are already gone (assert_gone); a retry
         * covers a runtime file that appeared during a pass, and a bundle's
         * root the kernel still holds for a moment after its container died
         * (EBUSY under load: CI runs left empty oci-test-* dirs behind). */
        if (state[sizeof(state) - 2] == 'X')
                return;
        for (int i = 0; i < 50 && rm_rf_at(AT_FDCWD, state) < 0; i++)
                (void) usleep(50 * 1000);
        if (access(state, F_OK) == 0)
                fprintf(stderr, "test-oci-runc: %s left behind\n", state);
}

TestSuite(oci_runc, .init = state_setup, .fini = state_teardown, .timeout = 60);

static void require_runtime(const char *name)
{
        char *p = NULL;
        bool ok = oci_runtime_find(name, &p) == 0;
        free(p);
        require_feature(ok, name);
}

/* Where the runtime puts the container's cgroup in hierarchy ctrl ("unified"
 * for the cgroup2 tree): below the test process's own cgroup there, since the
 * default cgroups_path is relative (on a hybrid host runc puts the cgroup2
 * half below the tree's root: the same place while our own cgroup there is
 * the root, as on the test machines; runc_joins_the_leaf_in_every_hierarchy
 * tests the daemon's placement). */
static char *cg_path(const char *ctrl, const char *id)
{
        cleanup_free char *self = NULL;
        const char *own = NULL;
        size_t own_len = 0;

        cr_assert_eq(read_full_file_at(AT_FDCWD, "/proc/self/cgroup", 65536, &self, NULL), 0);
        for (char *line = self; line && *line;) {
                char *nl = strchr(line, '\n');
                char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
                if (c1 && c2 && (!nl || c2 < nl)) {
                        size_t clen = (size_t) (c2 - c1 - 1);
                        bool unified = streq(ctrl, "unified") && clen == 0;
                        bool match = false;
                        for (const char *p = c1 + 1; !unified && p < c2;) {
                                const char *comma = memchr(p, ',', (size_t) (c2 - p));
                                const char *end = comma ? comma : c2;
                                if ((size_t) (end - p) == strlen(ctrl) &&
                                    memcmp(p, ctrl, strlen(ctrl)) == 0)
                                        match = true;
                                p = end + 1;
                        }
                        if (unified || match) {
                                own = c2 + 1;
                                own_len = nl ? (size_t) (nl - own) : strlen(own);
                                break;
                        }
                }
                line = nl ? nl + 1 : NULL;
        }
        cr_assert_not_null(own, "no %s line in /proc/self/cgroup", ctrl);
        while (own_len > 0 && own[own_len - 1] == '/')
                own_len--;
        return xasprintf("/sys/fs/cgroup/%s%.*s/openenvd-oci-%s", ctrl, (int) own_len, own, id);
}

/* Asserts that nothing the container had is left on the host. */
static void assert_gone(const char *id)
{
        const char *ctrls[] = { "memory", "pids", "cpu", "freezer", "devices", "unified" };
        cleanup_free char *bundle = xasprintf("%s/bundles/%s", state, id);
        cleanup_free char *rstate = xasprintf("%s/oci/%s", state, id);
        struct stat st;

        cr_assert_neq(stat(bundle, &st), 0, "bundle %s left behind", bundle);
        cr_assert_neq(stat(rstate, &st), 0, "runtime state %s left behind", rstate);
        for (size_t i = 0; i < ELEMENTSOF(ctrls); i++) {
                cleanup_free char *cg = cg_path(ctrls[i], id);
                cr_assert_neq(stat(cg, &st), 0, "cgroup %s left behind", cg);
        }
}

/*
 * Runs argv in a container and returns its exit status; *ret_out (if not
 * NULL) gets the container's stdout+stderr.
 */
static int run_in(struct container_spec *s, const char *runtime, char **ret_out)
{
        cleanup_free char *out_path = xasprintf("%s/out.log", state);
        cleanup_free char *id = NULL;
        struct oci_options o = { .runtime = runtime, .state_dir = state };
        struct oci_container *c = NULL;
        struct error_detail err = { 0 };
        int fd, r, status = -1;

        fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        cr_assert_geq(fd, 0);
        s->stdio_fd = fd;
        r = oci_container_spawn(&o, s, &c, &err);
        cr_assert_eq(r, 0, "spawn: %s", err.message);
        id = xstrdup(oci_container_id(c));
        cr_assert_gt(oci_container_pid(c), 0);
        cr_assert_eq(oci_container_wait(c, &status), 0);
        /* Idempotent once reaped. */
        int again = -1;
        cr_assert_eq(oci_container_wait(c, &again), 0);
        cr_assert_eq(again, status);
        cr_assert_eq(oci_container_kill(c, SIGKILL), -ESRCH);
        oci_container_free(c);
        safe_close(fd);
        assert_gone(id);
        if (ret_out)
                cr_assert_eq(read_full_file_at(AT_FDCWD, out_path, 1 << 20, ret_out, NULL), 0);
        return status;
}

static int sh_in(const char *script, char **ret_out)
{
        char *argv[] = { (char *) "/bin/sh", (char *) "-c", (char *) script, NULL };
        struct container_spec s;
        spec_init(&s, argv);
        return run_in(&s, "runc", ret_out);
}

Test(oci_runc, true_exits_zero)
{
        char *argv[] = { (char *) "/bin/true", NULL };
        struct container_spec s;

        require_runtime("runc");
        spec_init(&s, argv);
        cr_assert_eq(run_in(&s, "runc", NULL), 0);
}

Test(oci_runc, exit_status_is_the_principals)
{
        require_runtime("runc");
        cr_assert_eq(sh_in("exit 3", NULL), 3);
}

Test(oci_runc, killed_container_reports_128_plus_signal)
{
        char *argv[] = { (char *) "/bin/sleep", (char *) "1000", NULL };
        struct oci_options o = { .runtime = "runc", .state_dir = state };
        cleanup(oci_container_freep) struct oci_container *c = NULL;
        struct error_detail err = { 0 };
        struct container_spec s;
        int status = -1;

        require_runtime("runc");
        spec_init(&s, argv);
        cr_assert_eq(oci_container_spawn(&o, &s, &c, &err), 0, "%s", err.message);
        cr_assert_eq(oci_container_try_wait(c, &status), -EAGAIN, "sleep ended early");
        cr_assert_eq(oci_container_kill(c, SIGKILL), 0);
        cr_assert_eq(oci_container_wait(c, &status), 0);
        cr_assert_eq(status, 128 + SIGKILL);
}

Test(oci_runc, free_of_live_container_cleans_up)
{
        char *argv[] = { (char *) "/bin/sleep", (char *) "1000", NULL };
        struct oci_options o = { .runtime = "runc", .state_dir = state };
        struct oci_container *c = NULL;
        struct error_detail err = { 0 };
        struct container_spec s;
        cleanup_free char *id = NULL;
        pid_t pid;

        require_runtime("runc");
        spec_init(&s, argv);
        cr_assert_eq(oci_container_spawn(&o, &s, &c, &err), 0, "%s", err.message);
        id = xstrdup(oci_container_id(c));
        pid = oci_container_pid(c);
        oci_container_free(c);
        cr_assert_eq(kill(pid, 0), -1, "init %d survived", (int) pid);
        assert_gone(id);
}

Test(oci_runc, principal_is_unprivileged)
{
        cleanup_free char *out = NULL;

        require_runtime("runc");
        cr_assert_eq(sh_in("id -u; id -g; grep -E '^(CapEff|CapPrm|CapBnd|CapAmb|NoNewPrivs|"
                           "Seccomp):' /proc/self/status",
                           &out),
                     0, "%s", out);
        cr_assert(startswith(out, "1000\n1000\n"), "%s", out);
        cr_assert_not_null(strstr(out, "CapEff:\t0000000000000000"), "%s", out);
        cr_assert_not_null(strstr(out, "CapPrm:\t0000000000000000"), "%s", out);
        cr_assert_not_null(strstr(out, "CapBnd:\t0000000000000000"), "%s", out);
        cr_assert_not_null(strstr(out, "CapAmb:\t0000000000000000"), "%s", out);
        cr_assert_not_null(strstr(out, "NoNewPrivs:\t1"), "%s", out);
        cr_assert_not_null(strstr(out, "Seccomp:\t2"), "%s", out);
}

Test(oci_runc, host_uid_is_from_the_range)
{
        cleanup_free char *out = NULL;

        require_runtime("runc");
        /* uid_map seen from inside: 0 -> 300000, 65536 wide. */
        cr_assert_eq(sh_in("cat /proc/self/uid_map", &out), 0);
        cr_assert_not_null(strstr(out, "300000"), "%s", out);
        cr_assert_not_null(strstr(out, "65536"), "%s", out);
}

Test(oci_runc, root_is_read_only_tmp_is_writable)
{
        cleanup_free char *out = NULL;

        require_runtime("runc");
        cr_assert_eq(sh_in("if touch /usr/oci-test 2>/dev/null; then echo usr-writable; fi;"
                           "if touch /oci-test 2>/dev/null; then echo root-writable; fi;"
                           "touch /tmp/ok && echo tmp-ok;"
                           "grep -q ' / [^ ]* ro' /proc/self/mountinfo && echo root-ro",
                           &out),
                     0, "%s", out);
        cr_assert_null(strstr(out, "writable"), "%s", out);
        cr_assert_not_null(strstr(out, "tmp-ok"), "%s", out);
        cr_assert_not_null(strstr(out, "root-ro"), "%s", out);
}

Test(oci_runc, only_loopback)
{
        cleanup_free char *out = NULL;

        require_runtime("runc");
        cr_assert_eq(sh_in("ls /sys/class/net", &out), 0, "%s", out);
        cr_assert_str_eq(out, "lo\n");
}

Test(oci_runc, masked_paths_are_empty)
{
        char *masks[] = { (char *) "/usr/share", NULL };
        char *argv[] = { (char *) "/bin/sh", (char *) "-c",
                         (char *) "echo timer_list=$(wc -c </proc/timer_list);"
                                  "echo share=$(ls -A /usr/share | wc -l)",
                         NULL };
        cleanup_free char *out = NULL;
        struct container_spec s;

        require_runtime("runc");
        /* Both are non-empty on the host, so "empty inside" means masked. */
        cleanup_free char *host = NULL;
        size_t len = 0;
        require_feature(read_full_file_at(AT_FDCWD, "/proc/timer_list", 1 << 22, &host, &len) ==
                                        0 &&
                                len > 0,
                        "/proc/timer_list");
        spec_init(&s, argv);
        s.masks = masks;
        cr_assert_eq(run_in(&s, "runc", &out), 0, "%s", out);
        cr_assert_not_null(strstr(out, "timer_list=0\n"), "%s", out);
        cr_assert_not_null(strstr(out, "share=0\n"), "%s", out);
}

Test(oci_runc, seccomp_denies_namespace_creation)
{
        cleanup_free char *out = NULL;

        require_runtime("runc");
        /* unshare(CLONE_NEWUSER) would succeed for an unprivileged user
         * without the filter. */
        cr_assert_eq(
                sh_in("if unshare -U true 2>/dev/null; then echo unshared; else echo denied; fi",
                      &out),
                0, "%s", out);
        cr_assert_str_eq(out, "denied\n");
}

Test(oci_runc, spec_bind_mount_read_only_nosymfollow)
{
        cleanup_free char *src = xasprintf("%s/share", state), *out = NULL;
        struct mount_entry m = {
                .kind = MOUNT_BIND,
                .source = src,
                .target = (char *) "/mnt",
                .flags = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOSYMFOLLOW,
        };
        char *argv[] = { (char *) "/bin/sh", (char *) "-c",
                         (char *) "cat /mnt/file;"
                                  "if touch /mnt/new 2>/dev/null; then echo writable; fi;"
                                  "if cat /mnt/link >/dev/null 2>&1; then echo followed; fi;"
                                  "grep ' /mnt ' /proc/self/mountinfo",
                         NULL };
        struct container_spec s;

        require_runtime("runc");
        cr_assert_eq(mkdir(src, 0755), 0);
        {
                cleanup_free char *f = xasprintf("%s/file", src), *l = xasprintf("%s/link", src);
                int fd = open(f, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
                cr_assert_geq(fd, 0);
                cr_assert_eq(write_all(fd, "content\n", 8), 0);
                safe_close(fd);
                cr_assert_eq(symlink("file", l), 0);
        }
        spec_init(&s, argv);
        s.mounts = &m;
        s.n_mounts = 1;
        cr_assert_eq(run_in(&s, "runc", &out), 0, "%s", out);
        cr_assert(startswith(out, "content\n"), "%s", out);
        cr_assert_null(strstr(out, "writable"), "%s", out);
        cr_assert_not_null(strstr(out, " ro,"), "%s", out);
        cr_assert_not_null(strstr(out, "nosymfollow"), "runc dropped nosymfollow: %s", out);
        cr_assert_null(strstr(out, "followed"), "%s", out);
}

Test(oci_runc, create_failure_reports_runtime_text_and_leaves_nothing)
{
        char *argv[] = { (char *) "/nonexistent/binary", NULL };
        struct oci_options o = { .runtime = "runc", .state_dir = state, .id = "oci-fail-test" };
        struct oci_container *c = NULL;
        struct error_detail err = { 0 };
        struct container_spec s;

        require_runtime("runc");
        spec_init(&s, argv);
        int r = oci_container_spawn(&o, &s, &c, &err);
        cr_assert_lt(r, 0);
        cr_assert_null(c);
        cr_assert_not_null(err.message);
        cr_assert(startswith(err.message, "runc "), "%s", err.message);
        cr_assert_not_null(strstr(err.message, "oci-fail-test"), "%s", err.message);
        cr_assert_not_null(strstr(err.message, "no such file"), "%s", err.message);
        assert_gone("oci-fail-test");
        error_detail_done(&err);
}

Test(oci_runc, missing_runtime_and_bad_caller_refused)
{
        char *argv[] = { (char *) "/bin/true", NULL };
        struct oci_options o = { .runtime = "no-such-oci-runtime", .state_dir = state };
        struct oci_container *c = NULL;
        struct error_detail err = { 0 };
        struct container_spec s;

        spec_init(&s, argv);
        cr_assert_eq(oci_container_spawn(&o, &s, &c, &err), -ENOENT);
        cr_assert_str_eq(err.message, "OCI runtime no-such-oci-runtime is not installed");
        error_detail_done(&err);

        cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 0), 0);
        o.runtime = "runc";
        cr_assert_eq(oci_container_spawn(&o, &s, &c, &err), -ECHILD);
        cr_assert_null(c);
        error_detail_done(&err);
}

/* crun 1.8 refuses hybrid cgroup hosts; where it does,
 * the launcher must hand back crun's own words. */
Test(oci_runc, crun_runs_or_explains_hybrid_refusal)
{
        char *argv[] = { (char *) "/bin/true", NULL };
        struct oci_options o = { .runtime = "crun", .state_dir = state, .id = "oci-crun-test" };
        struct oci_container *c = NULL;
        struct error_detail err = { 0 };
        struct container_spec s;
        cleanup_free char *controllers = NULL;
        int status = -1;

        require_runtime("crun");
        spec_init(&s, argv);
        bool hybrid = read_full_file_at(AT_FDCWD, "/sys/fs/cgroup/unified/cgroup.controllers", 4096,
                                        &controllers, NULL) == 0 &&
                      controllers[0] != '\0' && controllers[0] != '\n';
        int r = oci_container_spawn(&o, &s, &c, &err);
        if (hybrid) {
                cr_assert_lt(r, 0, "crun accepted a hybrid host");
                cr_assert(startswith(err.message, "crun create oci-crun-test failed"), "%s",
                          err.message);
                cr_assert_not_null(strstr(err.message, "hybrid"), "%s", err.message);
                cr_log_info("crun on this hybrid host: %s", err.message);
        } else {
                cr_assert_eq(r, 0, "%s", err.message);
                cr_assert_eq(oci_container_wait(c, &status), 0);
                cr_assert_eq(status, 0);
                oci_container_free(c);
        }
        assert_gone("oci-crun-test");
        error_detail_done(&err);
}

/* Contents of <dir>/<file>; the caller frees. */
static char *read_cg(const char *dir, const char *file)
{
        cleanup_free char *p = xasprintf("%s/%s", dir, file);
        char *v = NULL;
        int r = read_full_file_at(AT_FDCWD, p, 4096, &v, NULL);
        cr_assert_eq(r, 0, "%s: %s", p, strerror(-r));
        return v;
}

/* pid is listed in dir/cgroup.procs. */
static bool procs_hold(const char *dir, pid_t pid)
{
        cleanup_free char *text = read_cg(dir, "cgroup.procs");
        cleanup_free char *line = xasprintf("\n%d\n", (int) pid);
        return strncmp(text, line + 1, strlen(line + 1)) == 0 || strstr(text, line) != NULL;
}

Test(oci_runc, cgroup_limits_applied_by_runtime)
{
        char *argv[] = { (char *) "/bin/sleep", (char *) "1000", NULL };
        struct cgroup_limits l = { .memory_bytes = 64 << 20, .pids = 32, .cpu = 0.5 };
        struct oci_options o = { .runtime = "runc", .state_dir = state, .limits = &l };
        cleanup(oci_container_freep) struct oci_container *c = NULL;
        struct error_detail err = { 0 };
        struct container_spec s;
        int status = -1;

        require_runtime("runc");
        spec_init(&s, argv);
        cr_assert_eq(oci_container_spawn(&o, &s, &c, &err), 0, "%s", err.message);
        const char *id = oci_container_id(c);
        cleanup_free char *pids = cg_path("pids", id);
        cleanup_free char *mem = cg_path("memory", id);
        cleanup_free char *cpu = cg_path("cpu", id);
        cleanup_free char *pids_max = read_cg(pids, "pids.max");
        cleanup_free char *mem_max = read_cg(mem, "memory.limit_in_bytes");
        cleanup_free char *quota = read_cg(cpu, "cpu.cfs_quota_us");

        cr_assert_str_eq(pids_max, "32\n");
        cr_assert_str_eq(mem_max, "67108864\n");
        cr_assert_str_eq(quota, "50000\n");
        /* The init itself is in the leaf. */
        cr_assert(procs_hold(pids, oci_container_pid(c)), "init not in %s", pids);
        cr_assert_eq(oci_container_kill(c, SIGKILL), 0);
        cr_assert_eq(oci_container_wait(c, &status), 0);
        cr_assert_eq(status, 128 + SIGKILL);
}

Test(oci_runc, shim_is_pid1_and_passes_the_status_on)
{
#ifdef OCI_TEST_SHIM
        char *argv[] = { (char *) "/bin/sh", (char *) "-c",
                         (char *) "tr '\\0' ' ' </proc/1/cmdline; echo; exit 5", NULL };
        struct oci_options o = { .runtime = "runc",
                                 .state_dir = state,
                                 .shim_path = OCI_TEST_SHIM };
        cleanup(oci_container_freep) struct oci_container *c = NULL;
        cleanup_free char *out_path = xasprintf("%s/out.log", state), *out = NULL;
        struct error_detail err = { 0 };
        struct container_spec s;
        int status = -1, fd;

        require_runtime("runc");
        require_feature(access(OCI_TEST_SHIM, X_OK) == 0, "openenvd-shim built");
        spec_init(&s, argv);
        fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        cr_assert_geq(fd, 0);
        s.stdio_fd = fd;
        cr_assert_eq(oci_container_spawn(&o, &s, &c, &err), 0, "%s", err.message);
        cr_assert_eq(oci_container_wait(c, &status), 0);
        safe_close(fd);
        cr_assert_eq(read_full_file_at(AT_FDCWD, out_path, 1 << 20, &out, NULL), 0);
        cr_assert_eq(status, 5, "%s", out);
        cr_assert(startswith(out, "/run/openenvd-shim -- /bin/sh -c"), "%s", out);
#else
        cr_skip_test("openenvd-shim is not part of this build");
#endif
}

/*
 * The daemon's case: runc joins exactly the leaf made for the container, in
 * every hierarchy of the tree. On a hybrid host only through the cgroup view
 * (runc resolves a relative path's cgroup2 half from the root of the tree,
 * and strips ".."); nothing appears at any hierarchy's root either way.
 */
Test(oci_runc, runc_joins_the_leaf_in_every_hierarchy)
{
        static const char *const hierarchies[] = { NULL,  "memory",  "pids",
                                                   "cpu", "freezer", "devices" };
        char *argv[] = { (char *) "/bin/sleep", (char *) "1000", NULL };
        cleanup(cgroup_tree_freep) struct cgroup_tree *t = NULL;
        cleanup(oci_container_freep) struct oci_container *c = NULL;
        cleanup_free char *hex = NULL, *name = NULL, *rel = NULL;
        struct cgroup_layout layout;
        struct cgroup_view view = {};
        struct error_detail err = { 0 };
        struct container_spec s;
        enum cgroup_mode mode;
        int r, status = -1;

        require_runtime("runc");
        cr_assert_eq(cgroup_layout_detect(&layout, &mode), 0);
        cr_assert_eq(random_hex(6, &hex), 0);
        name = xasprintf("openenvd-test-oci-%s", hex);
        layout.subtree_name = name;
        layout.flags = CGROUP_LAYOUT_DEVICES;
        r = cgroup_tree_open(&layout, &t);
        cgroup_layout_done(&layout);
        cr_assert_eq(r, 0, "cgroup tree: %s", strerror(-r));
        cr_assert_eq(cgroup_tree_adopt_self(t), 0); /* as the daemon: into control/ */
        cr_assert_eq(cgroup_create(t, "zones/a/env", NULL), 0);
        r = cgroup_view_open(t, "zones/a/env", &view);
        cr_assert(r == 0 || (r == -EOPNOTSUPP && mode == CGROUP_MODE_V2), "%s", strerror(-r));
        /* On v2 relative to the runtime's own cgroup, our control/. */
        rel = xstrdup(r == 0 ? "/env" : "../zones/a/env");

        spec_init(&s, argv);
        r = oci_container_spawn(&(struct oci_options){ .runtime = "runc",
                                                       .state_dir = state,
                                                       .cgroups_path = rel,
                                                       .cgroup_view = view.n ? &view : NULL },
                                &s, &c, &err);
        cgroup_view_done(&view);
        cr_assert_eq(r, 0, "%s", err.message);
        for (size_t i = 0; i < ELEMENTSOF(hierarchies); i++) {
                const char *root = cgroup_tree_path(t, hierarchies[i]);
                if (!root)
                        continue; /* not on this host */
                cleanup_free char *leaf = xasprintf("%s/zones/a/env", root);
                cr_expect(procs_hold(leaf, oci_container_pid(c)), "init not in %s", leaf);
        }
        DIR *d = opendir("/sys/fs/cgroup");
        cr_assert_not_null(d);
        for (struct dirent *de; (de = readdir(d));) {
                cleanup_free char *top = xasprintf("/sys/fs/cgroup/%s/env", de->d_name);
                cleanup_free char *zones = xasprintf("/sys/fs/cgroup/%s/zones", de->d_name);
                cr_expect(access(top, F_OK) < 0 && access(zones, F_OK) < 0,
                          "runc made a cgroup at the root of %s", de->d_name);
        }
        closedir(d);

        cr_assert_eq(oci_container_kill(c, SIGKILL), 0);
        cr_assert_eq(oci_container_wait(c, &status), 0);
        c = oci_container_free(c);
        r = cgroup_tree_destroy(t);
        cr_expect_eq(r, 0, "the subtree is runc-free and removable: %s", strerror(-r));
        for (size_t i = 0; i < ELEMENTSOF(hierarchies); i++) {
                const char *root = cgroup_tree_path(t, hierarchies[i]);
                cr_expect(!root || access(root, F_OK) < 0, "%s left behind", root);
        }
}
