/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Preflight checks. Each check proves a kernel feature by using it, never by
 * reading a version number: namespaces are created, overlayfs and
 * nosymfollow are mounted (in a forked child's private mount namespace, so
 * nothing reaches the host's mount table), the cgroup subtree is created and
 * removed. Children report {step, errno} over a CLOEXEC pipe and end in
 * _exit(); a child that does not answer within the timeout is SIGKILLed.
 */
#include "preflight/preflight.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "preflight/preflight-internal.h"

#define PREFLIGHT_DEFAULT_TIMEOUT (5 * USEC_PER_SEC)
/* Our own /proc files: written by the kernel, bounded anyway. */
#define PREFLIGHT_PROC_MAX_BYTES ((size_t) 64 * 1024)

static const char *const step_text[_PREFLIGHT_STEP_MAX] = {
        [PREFLIGHT_STEP_OK] = "ok",
        [PREFLIGHT_STEP_UNSHARE_USER] = "unshare(CLONE_NEWUSER)",
        [PREFLIGHT_STEP_UNSHARE_NS] = "unshare(CLONE_NEWNS)",
        [PREFLIGHT_STEP_UNSHARE_PID] = "unshare(CLONE_NEWPID)",
        [PREFLIGHT_STEP_FORK_PID1] = "fork pid 1 of the new pid namespace",
        [PREFLIGHT_STEP_UNSHARE_NET] = "unshare(CLONE_NEWNET)",
        [PREFLIGHT_STEP_UNSHARE_IPC] = "unshare(CLONE_NEWIPC)",
        [PREFLIGHT_STEP_UNSHARE_UTS] = "unshare(CLONE_NEWUTS)",
        [PREFLIGHT_STEP_UNSHARE_CGROUP] = "unshare(CLONE_NEWCGROUP)",
        [PREFLIGHT_STEP_MAKE_PRIVATE] = "make / private",
        [PREFLIGHT_STEP_MOUNT_TMPFS] = "mount tmpfs",
        [PREFLIGHT_STEP_MKDIR] = "mkdir",
        [PREFLIGHT_STEP_MOUNT_OVERLAY] = "mount overlay",
        [PREFLIGHT_STEP_OVERLAY_WRITE] = "write through overlay",
        [PREFLIGHT_STEP_OVERLAY_COPY_UP] = "file missing from the upper layer",
        [PREFLIGHT_STEP_SYMLINK] = "symlink",
        [PREFLIGHT_STEP_BIND] = "bind mount",
        [PREFLIGHT_STEP_REMOUNT_NOSYMFOLLOW] = "remount MS_NOSYMFOLLOW",
        [PREFLIGHT_STEP_SYMLINK_FOLLOWED] = "symlink still followed under nosymfollow",
        [PREFLIGHT_STEP_CLONE3] = "clone3(CLONE_INTO_CGROUP)",
        [PREFLIGHT_STEP_PIVOT_ROOT] = "pivot_root",
        [PREFLIGHT_STEP_FSOPEN] = "fsopen",
        [PREFLIGHT_STEP_FSCONFIG] = "fsconfig(FSCONFIG_CMD_CREATE)",
        [PREFLIGHT_STEP_FSMOUNT] = "fsmount",
        [PREFLIGHT_STEP_CGROUP_MOUNT] = "find the cgroup2 mount",
        [PREFLIGHT_STEP_CGROUP_CREATE] = "create the probe cgroup",
        [PREFLIGHT_STEP_CGROUP_CONTROLLERS] = "controllers",
};

/* Runs in the child: returns a step (and sets *err) or PREFLIGHT_STEP_OK. */
typedef int (*child_fn)(const void *userdata, int *err);

static void report_add(struct preflight_report *r, const char *name, bool required, bool ok,
                       char *detail)
{
        r->checks = xrealloc(r->checks, (r->n_checks + 1) * sizeof(*r->checks));
        r->checks[r->n_checks++] = (struct preflight_check){
                .name = name,
                .ok = ok,
                .required = required,
                .detail = detail,
        };
}

/* A failed required check, with where it failed (for preflight_fix()). */
static void report_fail(struct preflight_report *r, const char *name, int step, int err,
                        char *detail)
{
        report_add(r, name, true, false, detail);
        r->checks[r->n_checks - 1].step = step;
        r->checks[r->n_checks - 1].err = err;
}

static char *step_detail(const struct child_report *c)
{
        const char *what =
                c->step > 0 && c->step < _PREFLIGHT_STEP_MAX ? step_text[c->step] : "unknown step";
        if (c->err == 0)
                return xstrdup(what);
        return xasprintf("%s: %s", what, strerror(c->err));
}

/*
 * Forks, runs fn in the child and collects its {step, errno}. Returns 0 with
 * *ret filled, -ETIMEDOUT (child killed), or -ECHILD (child died silently).
 */
static int child_run(child_fn fn, const void *userdata, usec_t timeout, struct child_report *ret)
{
        cleanup_close int rfd = -EBADF, wfd = -EBADF;
        struct child_report rep = { 0 };
        int p[2], r;
        pid_t pid;

        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        rfd = p[0];
        wfd = p[1];
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                struct child_report c = { 0 };
                /* Only raw syscalls from here: the parent may have threads. */
                c.step = fn(userdata, &c.err);
                (void) !write(wfd, &c, sizeof(c));
                _exit(0);
        }
        safe_close(TAKE_FD(wfd));

        usec_t deadline = now_usec(CLOCK_MONOTONIC) + timeout;
        ssize_t n = -1;
        for (;;) {
                usec_t now = now_usec(CLOCK_MONOTONIC);
                struct pollfd pfd = { .fd = rfd, .events = POLLIN };
                if (now >= deadline) {
                        r = -ETIMEDOUT;
                        break;
                }
                int k = poll(&pfd, 1, (int) ((deadline - now + 999) / 1000));
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        r = -errno;
                        break;
                }
                if (k == 0)
                        continue;
                n = read(rfd, &rep, sizeof(rep));
                r = n == (ssize_t) sizeof(rep) ? 0 : -ECHILD;
                break;
        }
        if (r == -ETIMEDOUT || r < 0)
                (void) kill(pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
        if (r < 0)
                return r;
        *ret = rep;
        return 0;
}

/* ---- privileges ---- */

static void check_privileges(struct preflight_report *r)
{
        struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct data[2] = { 0 };
        struct strbuf missing = STRBUF_INIT, have = STRBUF_INIT;

        if (syscall(SYS_capget, &hdr, data) < 0) {
                report_add(r, "privileges", true, false, xasprintf("capget: %m"));
                return;
        }
        for (size_t i = 0; i < preflight_n_required_caps; i++) {
                int c = preflight_required_caps[i].cap;
                cleanup_free char *name = xasprintf("CAP_%s", preflight_required_caps[i].name);
                struct strbuf *sb = data[c / 32].effective & (1U << (c % 32)) ? &have : &missing;
                strbuf_addf(sb, "%s%s", sb->len ? " " : "", name);
                if (sb == &missing)
                        r->env.missing_caps |= UINT64_C(1) << c;
        }
        if (missing.len) {
                char *d = xasprintf("missing from the effective set: %s", missing.buf);
                strbuf_release(&missing);
                strbuf_release(&have);
                report_add(r, "privileges", true, false, d);
                return;
        }
        report_add(r, "privileges", true, true, xasprintf("%s effective", have.buf));
        strbuf_release(&have);
}

/* The daemon gives every container its own host uid range from ours. */
static void check_uid_range(struct preflight_report *r)
{
        cleanup_free char *map = NULL;
        uint64_t total = 0;
        int k = read_full_file_at(AT_FDCWD, "/proc/self/uid_map", PREFLIGHT_PROC_MAX_BYTES, &map,
                                  NULL);

        if (k < 0) {
                report_add(r, "uid_range", true, false,
                           xasprintf("/proc/self/uid_map: %s", strerror(-k)));
                return;
        }
        for (char *line = map, *eol; line && *line; line = eol ? eol + 1 : NULL) {
                unsigned long long inside, outside, count;
                eol = strchr(line, '\n');
                if (sscanf(line, "%llu %llu %llu", &inside, &outside, &count) == 3)
                        total += count;
        }
        /* One 65536-id range per container plus our own: at least two. */
        if (total < 2 * 65536ULL) {
                report_add(r, "uid_range", true, false,
                           xasprintf("%llu ids mapped in our user namespace, need >= 131072",
                                     (unsigned long long) total));
                return;
        }
        report_add(r, "uid_range", true, true,
                   xasprintf("%llu ids mapped", (unsigned long long) total));
}

/* ---- namespaces ---- */

static int child_unshare(const void *userdata, int *err)
{
        const struct {
                int flag;
                int step;
        } *ns = userdata;

        if (unshare(ns->flag) < 0) {
                *err = errno;
                return ns->step;
        }
        if (ns->flag == CLONE_NEWPID) {
                /* The namespace only exists once its pid 1 does. */
                pid_t pid = fork();
                if (pid < 0) {
                        *err = errno;
                        return PREFLIGHT_STEP_FORK_PID1;
                }
                if (pid == 0)
                        _exit(0);
                (void) waitpid(pid, NULL, 0);
        }
        return PREFLIGHT_STEP_OK;
}

static void add_child_check(struct preflight_report *r, const char *name, child_fn fn,
                            const void *userdata, usec_t timeout, const char *ok_detail)
{
        struct child_report c = { 0 };
        int k = child_run(fn, userdata, timeout, &c);

        if (k == -ETIMEDOUT)
                report_add(r, name, true, false, xstrdup("probe timed out"));
        else if (k == -ECHILD)
                report_add(r, name, true, false, xstrdup("probe child died"));
        else if (k < 0)
                report_add(r, name, true, false, xasprintf("fork: %s", strerror(-k)));
        else if (c.step != PREFLIGHT_STEP_OK)
                report_fail(r, name, c.step, c.err, step_detail(&c));
        else
                report_add(r, name, true, true, xstrdup(ok_detail));
}

static void check_namespaces(struct preflight_report *r, usec_t timeout)
{
        static const struct {
                const char *check;
                struct {
                        int flag;
                        int step;
                } ns;
                const char *ok;
        } list[] = {
                { "userns",
                  { CLONE_NEWUSER, PREFLIGHT_STEP_UNSHARE_USER },
                  "user namespace created" },
                { "mntns", { CLONE_NEWNS, PREFLIGHT_STEP_UNSHARE_NS }, "mount namespace created" },
                { "pidns", { CLONE_NEWPID, PREFLIGHT_STEP_UNSHARE_PID }, "pid namespace created" },
                { "netns",
                  { CLONE_NEWNET, PREFLIGHT_STEP_UNSHARE_NET },
                  "network namespace created" },
                { "ipcns", { CLONE_NEWIPC, PREFLIGHT_STEP_UNSHARE_IPC }, "ipc namespace created" },
                { "utsns", { CLONE_NEWUTS, PREFLIGHT_STEP_UNSHARE_UTS }, "uts namespace created" },
                { "cgroupns",
                  { CLONE_NEWCGROUP, PREFLIGHT_STEP_UNSHARE_CGROUP },
                  "cgroup namespace created" },
        };
        for (size_t i = 0; i < ELEMENTSOF(list); i++)
                add_child_check(r, list[i].check, child_unshare, &list[i].ns, timeout, list[i].ok);
}

/* ---- in-process checks ---- */

static void check_seccomp(struct preflight_report *r)
{
        cleanup_free char *status = NULL;
        int mode;

        if (read_full_file_at(AT_FDCWD, "/proc/self/status", PREFLIGHT_PROC_MAX_BYTES, &status,
                              NULL) < 0 ||
            !strstr(status, "\nSeccomp:")) {
                report_add(r, "seccomp", true, false, xstrdup("kernel built without seccomp"));
                return;
        }
        mode = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
        if (mode < 0) {
                report_add(r, "seccomp", true, false, xasprintf("PR_GET_SECCOMP: %m"));
                return;
        }
        /* A NULL program makes the kernel copy from address 0: EFAULT proves
         * filter mode is compiled in, and installs nothing. EINVAL means no
         * filter mode. */
        if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, NULL, 0, 0) == 0 || errno != EFAULT) {
                report_add(r, "seccomp", true, false, xasprintf("filter mode: %m"));
                return;
        }
        report_add(r, "seccomp", true, true,
                   xasprintf("filter mode available (current mode %d)", mode));
}

static void check_pidfd(struct preflight_report *r)
{
        int fd = (int) syscall(SYS_pidfd_open, getpid(), 0);
        if (fd < 0) {
                report_add(r, "pidfd", true, false, xasprintf("pidfd_open: %m"));
                return;
        }
        close(fd);
        report_add(r, "pidfd", true, true, xstrdup("pidfd_open works"));
}

/* ---- cgroups ---- */

/* clone3 a child straight into dir (nothing is written to cgroup.procs). */
static char *clone_into(const char *dir)
{
        cleanup_close int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct clone_args args = { .flags = CLONE_INTO_CGROUP, .exit_signal = SIGCHLD };
        int status;
        pid_t pid;

        if (fd < 0)
                return xasprintf("open %s: %m", dir);
        args.cgroup = (uint64_t) fd;
        pid = (pid_t) syscall(SYS_clone3, &args, sizeof(args));
        if (pid == 0)
                _exit(0);
        if (pid < 0)
                return xasprintf("%s: %m", step_text[PREFLIGHT_STEP_CLONE3]);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        return NULL;
}

static void check_cgroup(struct preflight_report *r, const struct cgroup_layout *given)
{
        struct cgroup_layout detected = { 0 }, l;
        cleanup(cgroup_tree_freep) struct cgroup_tree *t = NULL;
        cleanup_free char *hex = NULL, *name = NULL, *missing = NULL, *self = NULL, *own = NULL;
        char *clone_err = NULL;
        enum cgroup_mode mode;
        int k;

        if (given) {
                l = *given;
                mode = given->v1_mount ? CGROUP_MODE_HYBRID : CGROUP_MODE_V2;
        } else {
                k = cgroup_layout_detect(&detected, &mode);
                if (k < 0) {
                        report_fail(r, "cgroup", PREFLIGHT_STEP_CGROUP_MOUNT, -k,
                                    xstrdup(k == -ENOMEDIUM ? "no cgroup2 mount"
                                                            : "cannot read /proc/self/mountinfo"));
                        report_add(r, "clone_into_cgroup", false, false, xstrdup("no cgroup"));
                        return;
                }
                l = detected;
        }
        r->cgroup_detected = true;
        r->cgroup_mode = mode;
        r->cgroup_v2_mount = xstrdup(l.v2_mount);
        r->cgroup_v1_mount = l.v1_mount ? xstrdup(l.v1_mount) : NULL;
        if (!l.self_cgroup &&
            read_full_file_at(AT_FDCWD, "/proc/self/cgroup", PREFLIGHT_PROC_MAX_BYTES, &self,
                              NULL) >= 0 &&
            cgroup_self_path_parse(self, NULL, &own) >= 0)
                r->cgroup_own = TAKE_PTR(own);
        else if (l.self_cgroup && cgroup_self_path_parse(l.self_cgroup, NULL, &own) >= 0)
                r->cgroup_own = TAKE_PTR(own);

        (void) random_hex(6, &hex);
        name = xasprintf(".openenvd-probe-%s", hex ? hex : "0");
        l.subtree_name = name;
        k = cgroup_tree_open(&l, &t);
        if (k < 0) {
                report_fail(r, "cgroup", PREFLIGHT_STEP_CGROUP_CREATE, -k,
                            xasprintf("%s: create probe %s under %s%s: %s",
                                      cgroup_mode_to_string(mode), name, l.v2_mount,
                                      l.v1_mount ? " and the v1 hierarchies" : "", strerror(-k)));
                report_add(r, "clone_into_cgroup", false, false, xstrdup("no cgroup"));
                cgroup_layout_done(&detected);
                return;
        }
        r->cgroup_kill = cgroup_tree_has_kill(t);
        r->cgroup_freeze = cgroup_tree_has_freeze(t);
        clone_err = clone_into(cgroup_tree_path(t, NULL));
        k = cgroup_tree_missing_controllers(t, &missing);
        int d = cgroup_tree_destroy(t);

        if (clone_err)
                report_add(r, "clone_into_cgroup", false, false, clone_err);
        else
                report_add(r, "clone_into_cgroup", false, true,
                           xstrdup("child spawned into the probe cgroup"));
        if (k < 0)
                report_fail(r, "cgroup", PREFLIGHT_STEP_CGROUP_CONTROLLERS, -k,
                            xasprintf("%s: controllers: %s", cgroup_mode_to_string(mode),
                                      strerror(-k)));
        else if (d < 0)
                report_fail(r, "cgroup", PREFLIGHT_STEP_CGROUP_CREATE, -d,
                            xasprintf("%s: remove probe %s: %s", cgroup_mode_to_string(mode), name,
                                      strerror(-d)));
        else if (strstr(missing, "memory") || strstr(missing, "pids"))
                /* Memory and pids limits are what stops a runaway agent. */
                report_fail(r, "cgroup", PREFLIGHT_STEP_CGROUP_CONTROLLERS, EOPNOTSUPP,
                            xasprintf("%s: controllers not available: %s",
                                      cgroup_mode_to_string(mode), missing));
        else if (!r->cgroup_freeze)
                report_fail(r, "cgroup", PREFLIGHT_STEP_CGROUP_CONTROLLERS, EOPNOTSUPP,
                            xasprintf("%s: no cgroup.freeze and no v1 freezer",
                                      cgroup_mode_to_string(mode)));
        else
                report_add(
                        r, "cgroup", true, true,
                        xasprintf(
                                "%s: probe created and removed; kill: %s; missing controllers: %s",
                                cgroup_mode_to_string(mode),
                                r->cgroup_kill ? "cgroup.kill" : "SIGKILL sweep",
                                *missing ? missing : "none"));
        /* Keep the fixed order: cgroup before clone_into_cgroup. */
        if (r->n_checks >= 2) {
                struct preflight_check tmp = r->checks[r->n_checks - 1];
                r->checks[r->n_checks - 1] = r->checks[r->n_checks - 2];
                r->checks[r->n_checks - 2] = tmp;
        }
        cgroup_layout_done(&detected);
}

/* ---- the containers' root ---- */

bool preflight_root_is_host(bool rootfs_is_slash, const struct preflight_env *env)
{
        return rootfs_is_slash && !env->pid1 && !env->docker;
}

static bool same_inode(const char *a, const char *b)
{
        struct stat sa, sb;
        return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
               sa.st_ino == sb.st_ino;
}

static void check_containers_root(struct preflight_report *r, const char *rootfs)
{
        bool slash = !rootfs || same_inode(rootfs, "/");

        if (!rootfs && preflight_root_is_host(true, &r->env))
                report_add(r, "containers_root", false, true,
                           xstrdup("the containers' root is the host view: /usr, the loader "
                                   "paths, a filtered /etc and each unit's own directories, "
                                   "read-only (--rootfs DIR for an image)"));
        else if (preflight_root_is_host(slash, &r->env))
                report_add(r, "containers_root", false, false,
                           xstrdup("the containers' root is this host's / "
                                   "(--host-root-unfiltered) and openenvd is not PID 1: every "
                                   "zone can read the host's world-readable files and connect "
                                   "to its world-connectable unix sockets; drop the flag for "
                                   "the host view, or give --rootfs DIR (an unpacked image)"));
        else if (!slash)
                report_add(r, "containers_root", false, true,
                           xasprintf("the containers' root is the image at %s", rootfs));
        else
                report_add(r, "containers_root", false, true,
                           xstrdup(r->env.pid1 ? "openenvd is PID 1: / is the image's"
                                               : "inside a Docker container: / is the image's"));
}

/* ---- report ---- */

static const char *reason_label(const char *check)
{
        static const struct {
                const char *check, *label;
        } labels[] = {
                { "privileges", "privileges" },
                { "uid_range", "uid range" },
                { "userns", "user namespaces" },
                { "mntns", "mount namespaces" },
                { "pidns", "pid namespaces" },
                { "netns", "network namespaces" },
                { "ipcns", "ipc namespaces" },
                { "utsns", "uts namespaces" },
                { "cgroupns", "cgroup namespaces" },
                { "overlayfs", "overlayfs" },
                { "nosymfollow", "nosymfollow" },
                { "pivot_root", "pivot_root" },
                { "procfs", "procfs" },
                { "sysfs", "sysfs" },
                { "seccomp", "seccomp" },
                { "pidfd", "pidfd" },
                { "cgroup", "cgroups" },
                { "containers_root", "containers' root" },
        };
        for (size_t i = 0; i < ELEMENTSOF(labels); i++)
                if (streq(labels[i].check, check))
                        return labels[i].label;
        return check;
}

int preflight_run(const struct preflight_options *opts, struct preflight_report **ret)
{
        struct preflight_report *r;
        struct preflight_mount_paths m;
        usec_t timeout =
                opts && opts->child_timeout ? opts->child_timeout : PREFLIGHT_DEFAULT_TIMEOUT;

        if (!ret)
                return -EINVAL;
        r = xcalloc(1, sizeof(*r));
        preflight_mount_paths_init(&m);
        preflight_env_detect(&r->env);

        check_privileges(r);
        check_uid_range(r);
        check_namespaces(r, timeout);
        add_child_check(r, "overlayfs", preflight_child_overlay, &m, timeout,
                        "overlay mounted and written in a private mount namespace");
        add_child_check(r, "nosymfollow", preflight_child_nosymfollow, &m, timeout,
                        "bind remounted MS_NOSYMFOLLOW; symlink refused (ELOOP)");
        add_child_check(r, "pivot_root", preflight_child_pivot_root, &m, timeout,
                        "pivot_root into a tmpfs in a private mount namespace");
        add_child_check(r, "procfs", preflight_child_procfs, NULL, timeout,
                        "fresh proc mounted in a new user and pid namespace");
        add_child_check(r, "sysfs", preflight_child_sysfs, NULL, timeout,
                        "fresh sysfs mounted in a new user and network namespace");
        check_seccomp(r);
        check_pidfd(r);
        check_cgroup(r, opts ? opts->layout : NULL);
        check_containers_root(r, opts ? opts->rootfs : NULL);

        r->isolation = true;
        for (size_t i = 0; i < r->n_checks; i++) {
                if (r->checks[i].ok || !r->checks[i].required)
                        continue;
                struct preflight_check *c = &r->checks[i];
                r->isolation = false;
                c->fix = preflight_fix(c->name, c->step, c->err, &r->env);
                strv_push(&r->reasons,
                          c->fix ? xasprintf("%s: %s: %s", reason_label(c->name), c->detail, c->fix)
                                 : xasprintf("%s: %s", reason_label(c->name), c->detail));
        }
        if (!r->reasons)
                r->reasons = xcalloc(1, sizeof(char *));
        *ret = r;
        return 0;
}

struct preflight_report *preflight_report_free(struct preflight_report *r)
{
        if (!r)
                return NULL;
        for (size_t i = 0; i < r->n_checks; i++) {
                free(r->checks[i].detail);
                free(r->checks[i].fix);
        }
        free(r->checks);
        strv_free(r->reasons);
        free(r->cgroup_v2_mount);
        free(r->cgroup_v1_mount);
        free(r->cgroup_own);
        free(r);
        return NULL;
}

char *preflight_report_reasons(const struct preflight_report *r)
{
        struct strbuf sb = STRBUF_INIT;
        for (char **s = r->reasons; s && *s; s++)
                strbuf_addf(&sb, "%s%s", s == r->reasons ? "" : "; ", *s);
        return strbuf_detach(&sb, NULL);
}

const struct preflight_check *preflight_report_find(const struct preflight_report *r,
                                                    const char *name)
{
        for (size_t i = 0; i < r->n_checks; i++)
                if (streq(r->checks[i].name, name))
                        return &r->checks[i];
        return NULL;
}

json_t *preflight_report_to_json(const struct preflight_report *r)
{
        json_t *root = json_object(), *reasons = json_array(), *checks = json_array();
        json_t *cg = json_object();

        json_object_set_new(root, "isolation", json_string(r->isolation ? "on" : "off"));
        for (char **s = r->reasons; s && *s; s++)
                json_array_append_new(reasons, json_string(*s));
        json_object_set_new(root, "reasons", reasons);
        for (size_t i = 0; i < r->n_checks; i++)
                json_array_append_new(
                        checks,
                        json_pack("{s:s, s:b, s:b, s:s, s:o}", "name", r->checks[i].name, "ok",
                                  r->checks[i].ok, "required", r->checks[i].required, "detail",
                                  r->checks[i].detail, "fix",
                                  r->checks[i].fix ? json_string(r->checks[i].fix) : json_null()));
        json_object_set_new(root, "checks", checks);
        if (r->cgroup_detected) {
                json_object_set_new(cg, "mode", json_string(cgroup_mode_to_string(r->cgroup_mode)));
                json_object_set_new(cg, "v2_mount", json_string(r->cgroup_v2_mount));
                json_object_set_new(cg, "v1_mount",
                                    r->cgroup_v1_mount ? json_string(r->cgroup_v1_mount)
                                                       : json_null());
                json_object_set_new(cg, "own",
                                    r->cgroup_own ? json_string(r->cgroup_own) : json_null());
                json_object_set_new(cg, "kill", json_boolean(r->cgroup_kill));
                json_object_set_new(cg, "freeze", json_boolean(r->cgroup_freeze));
        } else
                json_object_set_new(cg, "mode", json_null());
        json_object_set_new(root, "cgroup", cg);
        /* Added fields only: older readers ignore "fix" and "container". */
        json_object_set_new(root, "container", r->env.docker ? json_string("docker") : json_null());
        return root;
}

char *preflight_report_format(const struct preflight_report *r)
{
        struct strbuf sb = STRBUF_INIT;

        strbuf_addf(&sb, "%-18s %-5s %s\n", "CHECK", "OK", "DETAIL");
        for (size_t i = 0; i < r->n_checks; i++)
                strbuf_addf(&sb, "%-18s %-5s %s\n", r->checks[i].name,
                            r->checks[i].ok ? "yes" : (r->checks[i].required ? "NO" : "no"),
                            r->checks[i].detail);
        if (r->cgroup_detected)
                strbuf_addf(&sb, "\ncgroup mode: %s (cgroup2 at %s%s%s)\n",
                            cgroup_mode_to_string(r->cgroup_mode), r->cgroup_v2_mount,
                            r->cgroup_v1_mount ? ", v1 under " : "",
                            r->cgroup_v1_mount ? r->cgroup_v1_mount : "");
        strbuf_addf(&sb, "isolation: %s\n", r->isolation ? "on" : "off");
        for (char **s = r->reasons; s && *s; s++)
                strbuf_addf(&sb, "  reason: %s\n", *s);
        return strbuf_detach(&sb, NULL);
}
