/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sandbox/launcher-native.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/sched.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <grp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/exit-code.h"
#include "base/fd-util.h"
#include "base/limits.h"
#include "base/string-table.h"
#include "base/util.h"
#include "sandbox/mount-setup.h"
#include "sandbox/netns-keep.h"
#include "sandbox/ns-helper.h"
#include "sandbox/syscall-filter.h"

#define CHILD_FAILED_EXIT 127

struct container {
        pid_t pid;
        int pidfd; /* owned */
        bool reaped;
        int status;      /* valid once reaped */
        int init_signal; /* once reaped: the signal the init itself died of, or 0 */
};

static const char *const container_step_table[_CONTAINER_STEP_MAX] = {
        [CONTAINER_STEP_NONE] = "none",
        [CONTAINER_STEP_VALIDATE] = "validate",
        [CONTAINER_STEP_SHIM] = "shim",
        [CONTAINER_STEP_CLONE] = "clone",
        [CONTAINER_STEP_UID_MAP] = "uid-map",
        [CONTAINER_STEP_GID_MAP] = "gid-map",
        [CONTAINER_STEP_CGROUP] = "cgroup",
        [CONTAINER_STEP_GO] = "go",
        [CONTAINER_STEP_WAIT_GO] = "wait-go",
        [CONTAINER_STEP_MOUNT_PRIVATE] = "mount-private",
        [CONTAINER_STEP_ROOTFS] = "rootfs",
        [CONTAINER_STEP_MOUNT_SOURCE] = "mount-source",
        [CONTAINER_STEP_DEVICES] = "devices",
        [CONTAINER_STEP_ATTACH_ROOT] = "attach-root",
        [CONTAINER_STEP_PROC] = "proc",
        [CONTAINER_STEP_SYSCTL] = "sysctl",
        [CONTAINER_STEP_DEV] = "dev",
        [CONTAINER_STEP_SYS] = "sys",
        [CONTAINER_STEP_TMP] = "tmp",
        [CONTAINER_STEP_RUN] = "run",
        [CONTAINER_STEP_MOUNT_TARGET] = "mount-target",
        [CONTAINER_STEP_MOUNT] = "mount",
        [CONTAINER_STEP_MASK] = "mask",
        [CONTAINER_STEP_SEAL] = "seal",
        [CONTAINER_STEP_PIVOT_ROOT] = "pivot-root",
        [CONTAINER_STEP_HOSTNAME] = "hostname",
        [CONTAINER_STEP_LOOPBACK] = "loopback",
        [CONTAINER_STEP_RLIMIT] = "rlimit",
        [CONTAINER_STEP_SETGROUPS] = "setgroups",
        [CONTAINER_STEP_SETGID] = "setgid",
        [CONTAINER_STEP_CAPS] = "caps",
        [CONTAINER_STEP_SETUID] = "setuid",
        [CONTAINER_STEP_NO_NEW_PRIVS] = "no-new-privs",
        [CONTAINER_STEP_CHDIR] = "chdir",
        [CONTAINER_STEP_STDIO] = "stdio",
        [CONTAINER_STEP_SIGNALS] = "signals",
        [CONTAINER_STEP_SECCOMP] = "seccomp",
        [CONTAINER_STEP_EXEC] = "exec",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING_FALLBACK(container_step, enum container_step, "unknown");

/* What the child needs, all prepared by the parent before clone3(): the
 * child runs on a copy of this memory and allocates nothing. */
struct child_args {
        const struct container_spec *spec;
        const struct container_policy *policy;
        int shim_fd;      /* O_PATH of the shim binary: it need not be visible inside */
        int go_fd;        /* read end: one byte means "maps written, cgroups joined" */
        int err_fd;       /* write end, CLOEXEC: {step, errno, index} or EOF at exec */
        int null_fd;      /* host /dev/null, for stdin (and stdout/stderr by default) */
        int dev_template; /* mount_dev_template(), or -EBADF */
        int pass_fds[CONTAINER_MAX_PASS_FDS]; /* copies of spec->pass_fds, all above 3 + n */
};

static noreturn_fn void child_fail(const struct child_args *a, struct container_step_error e)
{
        (void) !write(a->err_fd, &e, sizeof(e));
        _exit(CHILD_FAILED_EXIT);
}

#define CHILD_CHECK(a, step, expr)                                                         \
        do {                                                                               \
                if ((expr) < 0)                                                            \
                        child_fail(a, (struct container_step_error){ (step), errno, -1 }); \
        } while (0)

static int caps_drop_all(void)
{
        /* Bounding set first (needs CAP_SETPCAP, which we still hold), then
         * ambient; setresuid() to a non-zero uid later clears permitted and
         * effective, and capset() below makes sure of all of them. */
        for (unsigned long cap = 0; cap < 64; cap++)
                if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
                        if (errno == EINVAL)
                                break; /* past CAP_LAST_CAP */
                        return -1;
                }
        return prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
}

static int caps_clear_sets(void)
{
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[2] = {};
        return (int) syscall(SYS_capset, &h, d);
}

static noreturn_fn void child_main(const struct child_args *a);

/* Size of the child's own stack when it shares our memory (CLONE_VM). The
 * setup keeps a few PATH_MAX buffers on it; sanitizers need much more. */
#define CHILD_STACK_SIZE ((size_t) 1024 * 1024)

/*
 * The shared-memory spawn is hand-written for x86_64. Under AddressSanitizer
 * the child's switch to a foreign stack makes ASan report false stack
 * overflows (google/sanitizers#189), so sanitizer builds use the plain,
 * fork-like clone3() path, which runs the very same child code.
 */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LAUNCHER_UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define LAUNCHER_UNDER_ASAN 1
#endif
#if defined(__x86_64__) && !defined(LAUNCHER_UNDER_ASAN)
#define LAUNCHER_SHARED_VM 1
#else
#define LAUNCHER_SHARED_VM 0
#endif

#if LAUNCHER_SHARED_VM
/*
 * clone3() that runs fn(arg) on the given stack in the child and exits with
 * its return value, like glibc's clone() (which cannot pass clone3's cgroup
 * fd). The child shares our memory (CLONE_VM): no page tables are copied and
 * nothing is copied on write, which keeps the spawn cost independent of the
 * size of the daemon. glibc's posix_spawn() does the same. The child owns no
 * TLS of its own, so it must not race us on errno: while it runs we only sit
 * in read() of its error pipe (or write its maps before it starts working).
 */
static long clone3_run(struct clone_args *ca, int (*fn)(void *), void *arg)
{
        register long rax __asm__("rax") = SYS_clone3;
        register void *rdi __asm__("rdi") = ca;
        register size_t rsi __asm__("rsi") = sizeof(*ca);
        register int (*r12)(void *) __asm__("r12") = fn;
        register void *r13 __asm__("r13") = arg;

        __asm__ volatile("syscall\n\t"
                         "test %%rax, %%rax\n\t"
                         "jnz 1f\n\t"
                         /* child, on its own (16-byte aligned) stack */
                         "xor %%ebp, %%ebp\n\t"
                         "mov %%r13, %%rdi\n\t"
                         "call *%%r12\n\t"
                         "mov %%eax, %%edi\n\t"
                         "mov $60, %%eax\n\t" /* SYS_exit */
                         "syscall\n\t"
                         "hlt\n\t"
                         "1:\n\t"
                         : "+r"(rax)
                         : "r"(rdi), "r"(rsi), "r"(r12), "r"(r13)
                         : "rcx", "r11", "memory", "cc");
        return rax;
}

static int child_entry(void *p)
{
        child_main(p);
}

static void child_stack_freep(void **stack)
{
        if (*stack)
                (void) munmap(*stack, CHILD_STACK_SIZE);
}
#endif

static noreturn_fn void child_main(const struct child_args *a)
{
        const struct container_spec *spec = a->spec;
        struct container_step_error e = { .index = -1 };
        char go;

        /* Wait until the parent has written our uid/gid maps and put us in
         * every cgroup: until then we are nobody, and unaccounted. */
        ssize_t n = read(a->go_fd, &go, 1);
        if (n != 1)
                child_fail(a, (struct container_step_error){ CONTAINER_STEP_WAIT_GO,
                                                             n < 0 ? errno : EPIPE, -1 });
        container_mark(spec, CONTAINER_MARK_CHILD_GO);

        /* Still the daemon's host uid here: open the host paths to bind now
         * (O_PATH only), so their parents need not be traversable by the
         * container's root. */
        struct mount_sources src;
        if (mount_sources_open(spec, &src, &e) < 0)
                child_fail(a, e);
        src.dev_template = a->dev_template;

        /* clone3() keeps our host credentials (kuid 0, unmapped in the new
         * namespace, so files we create would be -EOVERFLOW); become the
         * namespace's own root, which keeps the namespace's capabilities. */
        CHILD_CHECK(a, CONTAINER_STEP_SETGID, setresgid(0, 0, 0));
        CHILD_CHECK(a, CONTAINER_STEP_SETUID, setresuid(0, 0, 0));

        if (mount_setup(spec, a->policy, &src, &e) < 0)
                child_fail(a, e);

        CHILD_CHECK(a, CONTAINER_STEP_HOSTNAME, sethostname(spec->name, strlen(spec->name)));
        /* A kept namespace has lo up already (and we hold no capability
         * over it: it belongs to the daemon's user namespace). */
        if (!spec->netns) {
                int r = netns_loopback_up();
                if (r < 0)
                        child_fail(a, (struct container_step_error){ CONTAINER_STEP_LOOPBACK, -r,
                                                                     -1 });
        }

        struct rlimit core = { 0, 0 };
        CHILD_CHECK(a, CONTAINER_STEP_RLIMIT, setrlimit(RLIMIT_CORE, &core));
        if (spec->nofile > 0) {
                struct rlimit rl = { spec->nofile, spec->nofile };
                CHILD_CHECK(a, CONTAINER_STEP_RLIMIT, setrlimit(RLIMIT_NOFILE, &rl));
        }
        if (spec->nproc > 0) {
                struct rlimit rl = { spec->nproc, spec->nproc };
                CHILD_CHECK(a, CONTAINER_STEP_RLIMIT, setrlimit(RLIMIT_NPROC, &rl));
        }

        /* Supplementary groups are inherited from the daemon (host gid 0!)
         * and would still grant group access to host files. The parent left
         * /proc/<pid>/setgroups at "allow" (it holds CAP_SETGID in our parent
         * namespace, so writing gid_map does not require "deny") so that we
         * can drop them here; afterwards nothing in the container holds
         * CAP_SETGID, and the syscall filter forbids new user namespaces. */
        CHILD_CHECK(a, CONTAINER_STEP_SETGROUPS, setgroups(0, NULL));

        bool keep_caps = spec->weaken & WEAKEN_KEEP_CAPS || spec->template_root;
        if (!keep_caps) {
                CHILD_CHECK(a, CONTAINER_STEP_SETGID, setresgid(spec->gid, spec->gid, spec->gid));
                CHILD_CHECK(a, CONTAINER_STEP_CAPS, caps_drop_all());
                CHILD_CHECK(a, CONTAINER_STEP_SETUID, setresuid(spec->uid, spec->uid, spec->uid));
                CHILD_CHECK(a, CONTAINER_STEP_CAPS, caps_clear_sets());
        }
        /* A container never outlives the process that spawned it (a crashed
         * daemon or test leaves nothing running). Set after the uid change,
         * which resets it. */
        CHILD_CHECK(a, CONTAINER_STEP_NO_NEW_PRIVS, prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0));
        CHILD_CHECK(a, CONTAINER_STEP_NO_NEW_PRIVS, prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
        CHILD_CHECK(a, CONTAINER_STEP_CHDIR, chdir(spec->workdir ? spec->workdir : "/"));

        int out = spec->stdio_fd >= 0 ? spec->stdio_fd : a->null_fd;
        CHILD_CHECK(a, CONTAINER_STEP_STDIO, dup2(a->null_fd, STDIN_FILENO));
        CHILD_CHECK(a, CONTAINER_STEP_STDIO, dup2(out, STDOUT_FILENO));
        CHILD_CHECK(a, CONTAINER_STEP_STDIO, dup2(out, STDERR_FILENO));
        /* The fds the shim is meant to inherit, as 3, 4, ... (dup2 clears
         * CLOEXEC; every source sits above the targets, see spawn). */
        int n_pass = (int) spec->n_pass_fds;
        for (int i = 0; i < n_pass; i++)
                CHILD_CHECK(a, CONTAINER_STEP_STDIO, dup2(a->pass_fds[i], 3 + i));
        /* Whatever the caller leaked into us (its listeners, other
         * containers' pidfds) must not reach the container. */
        CHILD_CHECK(a, CONTAINER_STEP_STDIO, close_range(3 + n_pass, ~0U, CLOSE_RANGE_CLOEXEC));
        /* The daemon blocks what its loop reads (SIGCHLD, SIGTERM, SIGINT)
         * and ignores SIGPIPE; both survive execve(), and the shim hands
         * its principal the mask it started with. Without this every
         * principal began deaf to SIGTERM (the shim's forwarded stop) and
         * SIGCHLD (a template's reaper: its copies' zombies held their
         * landings' pid namespaces, and so the daemon's reap, forever). */
        sigset_t none;
        sigemptyset(&none);
        CHILD_CHECK(a, CONTAINER_STEP_SIGNALS, sigprocmask(SIG_SETMASK, &none, NULL));
        CHILD_CHECK(a, CONTAINER_STEP_SIGNALS,
                    sigaction(SIGPIPE, &(struct sigaction){ .sa_handler = SIG_DFL }, NULL));
        container_mark(spec, CONTAINER_MARK_CREDS);

        if (!(spec->weaken & WEAKEN_NO_SECCOMP) && !spec->template_root) {
                int r = spec->filter ? syscall_filter_apply(spec->filter, 0)
                                     : syscall_filter_load(0);
                if (r < 0)
                        child_fail(a,
                                   (struct container_step_error){ CONTAINER_STEP_SECCOMP, -r, -1 });
        }
        container_mark(spec, CONTAINER_MARK_FILTER);

        /* execveat of the O_PATH fd: the shim binary is not inside the
         * container's view, and nothing in the container can replace it. */
        syscall(SYS_execveat, a->shim_fd, "", a->policy->shim_argv,
                spec->env ? spec->env : (char *[]){ NULL }, AT_EMPTY_PATH);
        child_fail(a, (struct container_step_error){ CONTAINER_STEP_EXEC, errno, -1 });
}

/*
 * The user namespace clone3() makes is owned by the caller's euid, and the
 * kernel charges every per-user count of everything inside it (inotify
 * instances and watches, message-queue bytes, user namespaces, ...) to that
 * owner in our namespace too, against our namespace's limits. Owned by
 * root, one container could exhaust root's counts host-wide (and every
 * other container's); owned by the container's own first host uid, it
 * exhausts only its own. Only the helper's euid changes: the real and
 * saved uid stay 0, so the permitted capabilities stay and the effective
 * ones are raised again, and fsuid goes back to 0 for the host paths the
 * child opens before it becomes the namespace's root.
 */
static int become_owner(uid_t owner, bool with_gid)
{
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct d[2];

        if (owner == 0)
                return 0;
        if (syscall(SYS_capget, &h, d) < 0)
                return -errno;
        /* Raw system calls: glibc's wrappers would act on every thread of
         * the process it believes it runs in, the daemon's. Nested in a
         * template's namespace, the egid must be mapped there too, or the
         * kernel refuses the new user namespace. */
        if (with_gid && syscall(SYS_setresgid, -1, (gid_t) owner, -1) < 0)
                return -errno;
        if (syscall(SYS_setresuid, -1, owner, -1) < 0)
                return -errno;
        d[0].effective = d[0].permitted;
        d[1].effective = d[1].permitted;
        if (syscall(SYS_capset, &h, d) < 0)
                return -errno;
        (void) syscall(SYS_setfsuid, 0);
        (void) syscall(SYS_setfsgid, 0);
        return 0;
}

/* "0 <first> <count>" and the spec's extra lines: the uid map, and the gid
 * map with the same numbers. first is the range's host uid, or for a nested
 * container its place in the template's namespace. One write each: the
 * kernel takes a map only whole, once. */
static int write_maps(pid_t pid, const struct container_spec *spec)
{
        char path[64], map[64 + CONTAINER_MAX_UID_EXTENTS * 36];
        uid_t first = spec->nest ? spec->nest->inside : spec->host_uid;
        size_t n = (size_t) snprintf(map, sizeof(map), "0 %u %u\n", (unsigned) first,
                                     (unsigned) spec->uid_count);
        for (size_t i = 0; i < spec->n_uid_extents && n < sizeof(map); i++) {
                const struct uid_extent *x = &spec->uid_extents[i];
                n += (size_t) snprintf(map + n, sizeof(map) - n, "%u %u %u\n", (unsigned) x->inside,
                                       (unsigned) x->host, (unsigned) x->count);
        }
        if (n >= sizeof(map))
                return -E2BIG;
        static const char *const files[] = { "uid_map", "gid_map" };
        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                (void) snprintf(path, sizeof(path), "/proc/%d/%s", (int) pid, files[i]);
                int r = write_string_file_at(AT_FDCWD, path, map);
                if (r < 0)
                        return r;
        }
        return 0;
}

struct clone_request {
        const struct clone_args *ca;
        struct child_args *args;
        int netns_fd;     /* the daemon's namespace for the container, or -EBADF */
        int incubator_fd; /* without one: where its clone makes a new one (or -errno) */
        const struct container_spec *spec;
};

struct clone_result {
        long pid;
        int pidfd;
        int hop_pidfd; /* nested: the first child's, for the caller to reap */
};

/* The host pid behind a pidfd (its fdinfo's "Pid:", in our namespace). */
static long pidfd_host_pid(int pidfd)
{
        char path[64];
        cleanup_free char *text = NULL;
        long pid = -1;

        (void) snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
        int r = read_full_file_at(AT_FDCWD, path, 4096, &text, NULL);
        if (r < 0)
                return r;
        const char *p = strstr(text, "\nPid:");
        if (!p || sscanf(p + 5, "%ld", &pid) != 1 || pid <= 0)
                return -ESRCH;
        return pid;
}

/*
 * Nested in a template: the kernel makes a pid namespace only under the
 * caller's own (active) one, and setns() changed only where the helper's
 * children are born. So a first child (the hop), born in the template's pid
 * namespace, makes the container; with CLONE_PARENT on both, the container
 * is still the daemon's child, and so is the hop, which the caller reaps.
 * The hop shares our fd table: the container's pidfd lands in it, and the
 * hop says its number through a pipe before it exits.
 */
static int clone_nested(const struct clone_request *q, struct clone_args *ca,
                        struct clone_result *res)
{
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        struct clone_args hop = {
                .flags = CLONE_FILES | CLONE_PARENT | CLONE_PIDFD,
                .pidfd = (uint64_t) (uintptr_t) &res->hop_pidfd,
        };
        long pid = syscall(SYS_clone3, &hop, sizeof(hop));
        if (pid == 0) {
                long c = syscall(SYS_clone3, ca, sizeof(*ca));
                if (c == 0)
                        child_main(q->args); /* never returns */
                int fd = c < 0 ? -errno : res->pidfd;
                _exit(write(p[1], &fd, sizeof(fd)) == (ssize_t) sizeof(fd) ? 0 : 1);
        }
        int r = pid < 0 ? -errno : 0, fd = -EBADF;
        if (r >= 0) {
                /* The write end stays open in the table we share: wait for
                 * the number or for the hop's end, not for EOF. */
                struct pollfd pfd[2] = { { .fd = p[0], .events = POLLIN },
                                         { .fd = res->hop_pidfd, .events = POLLIN } };
                while (poll(pfd, 2, -1) < 0 && errno == EINTR)
                        ;
                ssize_t n = read(p[0], &fd, sizeof(fd));
                r = n == (ssize_t) sizeof(fd) ? (fd < 0 ? fd : 0) : -ECHILD;
        }
        safe_close(p[0]);
        safe_close(p[1]);
        if (r < 0)
                return r;
        res->pidfd = fd;
        res->pid = pidfd_host_pid(fd);
        if (res->pid < 0)
                return (int) res->pid;
        /* Only a process of the parent user namespace may write a nested
         * namespace's maps, in the parent's ids: this helper, now. */
        return write_maps((pid_t) res->pid, q->spec);
}

/*
 * In a helper process (sandbox/ns-helper.h): the daemon's own thread never
 * stands in a container's network namespace nor changes its euid. With
 * CLONE_PARENT the container is the daemon's child, not the helper's, so its
 * parent-death signal follows the daemon, and its pidfd lands in the fd
 * table the helper shares with us.
 */
static int clone_in_helper(void *userdata, void *out)
{
        const struct clone_request *q = userdata;
        struct clone_result *res = out;
        struct clone_args ca = *q->ca;

        const struct container_nest *nest = q->spec->nest;
        /* out starts zeroed, not as the caller's */
        res->pidfd = res->hop_pidfd = -EBADF;
        ca.pidfd = (uint64_t) (uintptr_t) &res->pidfd;
        if (q->netns_fd >= 0 ? setns(q->netns_fd, CLONE_NEWNET) < 0
                             : !netns_enter_incubator(q->incubator_fd))
                return -errno;
        /* The new user namespace's owner: the container's first host uid,
         * or nested, the template's root, which must own it. */
        int r = become_owner(nest ? nest->owner : q->spec->host_uid, nest);
        if (r < 0)
                return r;
        /* The helper joins the template's user namespace (for the owner of
         * the new one) and its pid namespace for children (the new pid
         * namespace is made under it, so a copy the template forks into it
         * descends from the template's). Only this short-lived helper moves. */
        if (nest)
                return setns(nest->pidfd, CLONE_NEWUSER | CLONE_NEWPID) < 0
                               ? -errno
                               : clone_nested(q, &ca, res);
        long pid;
#if LAUNCHER_SHARED_VM
        if (ca.flags & CLONE_VM) {
                pid = clone3_run(&ca, child_entry, q->args);
                if (pid < 0)
                        return (int) pid;
        } else
#endif
        {
                pid = syscall(SYS_clone3, &ca, sizeof(ca));
                if (pid < 0)
                        return -errno;
                if (pid == 0)
                        child_main(q->args); /* never returns */
        }
        res->pid = pid;
        return 0;
}

/* fd itself if it is >= floor already, else a CLOEXEC copy above floor;
 * fd is closed either way (-errno when no copy could be made). */
static int fd_move_above(int fd, int floor)
{
        if (fd < 0 || fd >= floor)
                return fd;
        int moved = fcntl(fd, F_DUPFD_CLOEXEC, floor);
        if (moved < 0)
                moved = -errno;
        safe_close(fd);
        return moved;
}

struct pass_fds {
        int *fds;
        size_t n;
};

static void pass_fds_closep(struct pass_fds *p)
{
        for (size_t i = 0; i < p->n; i++)
                safe_close(p->fds[i]);
}

/* Fills ret_err (if given and still empty) for a failed step, error a
 * positive errno; returns -error. */
static int spawn_fail_at(struct container_error *ret_err, enum container_step step, int index,
                         int error)
{
        if (ret_err && !ret_err->detail.message) {
                ret_err->step = step;
                ret_err->index = index;
                if (index >= 0)
                        error_detail_set(&ret_err->detail, -error, "%s (index %d): %s",
                                         container_step_to_string(step), index, strerror(error));
                else
                        error_detail_set(&ret_err->detail, -error, "%s: %s",
                                         container_step_to_string(step), strerror(error));
        }
        return -error;
}

static int spawn_fail(struct container_error *ret_err, enum container_step step, int r)
{
        return spawn_fail_at(ret_err, step, -1, r < 0 ? -r : r);
}

/* The /dev template, built at the first spawn and kept for the life of the
 * process (mount-setup.h); -EBADF if it could not be built (each container
 * then builds its /dev itself). Above every fd number a spawn passes on. */
static int dev_template(void)
{
        static int fd = -EBADF;
        static bool tried;

        if (!tried) {
                tried = true;
                int t = mount_dev_template();
                if (t >= 0) {
                        fd = fcntl(t, F_DUPFD_CLOEXEC, 3 + CONTAINER_MAX_PASS_FDS);
                        safe_close(t);
                }
        }
        return fd;
}

/*
 * This launcher's entry check: every rule about the spec (the one
 * validator, shared with the OCI launcher), then what only this launcher
 * needs. It always execs the shim as PID 1, so a spec without one cannot
 * start here, while an OCI runtime can run the principal itself.
 */
static int native_spec_check(const struct container_spec *spec)
{
        int r = container_spec_validate(spec);
        if (r < 0)
                return r;
        if (!spec->shim_path)
                return -EINVAL;
        return 0;
}

int container_spawn(const struct container_spec *spec, struct container **ret,
                    struct container_error *ret_err)
{
        int go[2], errp[2], r;

        container_mark(spec, CONTAINER_MARK_START);
        r = native_spec_check(spec);
        if (r < 0)
                return spawn_fail(ret_err, CONTAINER_STEP_VALIDATE, r);

        /* Every fd the child uses sits above the numbers the passed fds
         * take (3 .. 3+n), so placing those clobbers nothing. */
        int floor = 3 + (int) spec->n_pass_fds;
        cleanup_close int shim_fd = open(spec->shim_path, O_PATH | O_CLOEXEC);
        if (shim_fd < 0)
                return spawn_fail(ret_err, CONTAINER_STEP_SHIM, -errno);
        shim_fd = fd_move_above(shim_fd, floor);
        if (shim_fd < 0)
                return spawn_fail(ret_err, CONTAINER_STEP_SHIM, shim_fd);
        cleanup_close int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC | O_NOCTTY);
        if (null_fd < 0)
                return spawn_fail(ret_err, CONTAINER_STEP_CLONE, -errno);
        null_fd = fd_move_above(null_fd, floor);
        if (null_fd < 0)
                return spawn_fail(ret_err, CONTAINER_STEP_CLONE, null_fd);
        int pass[CONTAINER_MAX_PASS_FDS];
        r = fds_dup_above(spec->pass_fds, spec->n_pass_fds, floor, pass);
        if (r < 0)
                return spawn_fail(ret_err, CONTAINER_STEP_CLONE, r);
        cleanup(pass_fds_closep)
                maybe_unused struct pass_fds owned_pass = { pass, spec->n_pass_fds };
        /* Built here: the child allocates nothing. */
        cleanup(container_policy_done) struct container_policy policy;
        container_policy_init(&policy, spec, "openenvd-shim");

        if (pipe2(go, O_CLOEXEC) < 0)
                return spawn_fail(ret_err, CONTAINER_STEP_CLONE, -errno);
        /* The child's ends are closed right after clone3(), on every path. */
        int go_r = fd_move_above(go[0], floor);
        cleanup_close int go_w = go[1];
        if (go_r < 0 || pipe2(errp, O_CLOEXEC) < 0) {
                r = go_r < 0 ? go_r : -errno;
                safe_close(go_r);
                return spawn_fail(ret_err, CONTAINER_STEP_CLONE, r);
        }
        cleanup_close int err_r = errp[0];
        int err_w = fd_move_above(errp[1], floor);
        if (err_w < 0) {
                safe_close(go_r);
                return spawn_fail(ret_err, CONTAINER_STEP_CLONE, err_w);
        }

        struct child_args args = {
                .spec = spec,
                .policy = &policy,
                .shim_fd = shim_fd,
                .go_fd = go_r,
                .err_fd = err_w,
                .null_fd = null_fd,
                .dev_template = dev_template(),
        };
        memcpy(args.pass_fds, pass, spec->n_pass_fds * sizeof(int));
        struct clone_args ca = {
                .flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS |
                         CLONE_NEWCGROUP | CLONE_PIDFD | CLONE_PARENT |
                         (spec->netns ? 0 : CLONE_NEWNET),
                /* CLONE_PARENT: the child's exit signal is the helper's,
                 * SIGCHLD (clone3() refuses one of its own with it). */
        };
        /* CLONE_INTO_CGROUP: the child is accounted from its first
         * instruction; no window in which it runs outside its limits. */
        if (spec->placement && spec->placement->v2_fd >= 0) {
                ca.flags |= CLONE_INTO_CGROUP;
                ca.cgroup = (uint64_t) spec->placement->v2_fd;
        }

#if LAUNCHER_SHARED_VM
        /* A nested container is cloned by the hop (clone_nested()), a
         * fork-like copy with no stack of ours to run the child on: that
         * spawn copies memory instead of sharing it, like sanitizer builds. */
        const bool shared_vm = !spec->nest;
        /* Declared before the container, so it is released after it: on
         * every error path the child is killed and reaped first; on success
         * the child has exec'd (EOF on its error pipe comes after the exec
         * replaced its memory) and no longer uses this stack. */
        cleanup(child_stack_freep) void *stack =
                !shared_vm ? NULL
                           : mmap(NULL, CHILD_STACK_SIZE, PROT_READ | PROT_WRITE,
                                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (stack == MAP_FAILED) {
                r = -errno;
                stack = NULL;
                safe_close(go_r);
                safe_close(err_w);
                return spawn_fail(ret_err, CONTAINER_STEP_CLONE, r);
        }
        if (shared_vm) {
                ca.flags |= CLONE_VM;
                ca.stack = (uint64_t) (uintptr_t) stack;
                ca.stack_size = CHILD_STACK_SIZE;
        }
#endif
        struct clone_result res = { .pid = -ECHILD, .pidfd = -EBADF, .hop_pidfd = -EBADF };
        r = ns_helper_run(clone_in_helper,
                          &(struct clone_request){
                                  .ca = &ca,
                                  .args = &args,
                                  .netns_fd = spec->netns ? kept_netns_fd(spec->netns) : -EBADF,
                                  .incubator_fd = spec->netns ? -EBADF : netns_incubator(),
                                  .spec = spec,
                          },
                          &res, sizeof(res));
        container_mark(spec, CONTAINER_MARK_CLONED);
        safe_close(go_r);
        safe_close(err_w);
        if (res.hop_pidfd >= 0) {
                siginfo_t si;
                while (waitid(P_PIDFD, (id_t) res.hop_pidfd, &si, WEXITED) < 0 && errno == EINTR)
                        ;
                safe_close(res.hop_pidfd);
        }
        /* Nested, the helper wrote the maps: a container whose maps failed
         * is here too, to be killed and reaped below. */
        enum container_step step = spec->nest ? CONTAINER_STEP_UID_MAP : CONTAINER_STEP_CLONE;
        if (r < 0 && res.pidfd < 0)
                return spawn_fail(ret_err, CONTAINER_STEP_CLONE, r);

        struct container *c = xcalloc(1, sizeof(*c));
        c->pid = (pid_t) res.pid;
        c->pidfd = res.pidfd;
        cleanup(container_freep) struct container *owned = c;

        if (r >= 0) {
                step = CONTAINER_STEP_UID_MAP;
                r = spec->nest ? 0 : write_maps(c->pid, spec);
        }
        if (r >= 0 && spec->placement && spec->placement->n_v1 > 0) {
                step = CONTAINER_STEP_CGROUP;
                r = cgroup_placement_attach(spec->placement, c->pid);
        }
        if (r >= 0) {
                step = CONTAINER_STEP_GO;
                ssize_t n = write(go_w, "g", 1);
                r = n == 1 ? 0 : n < 0 ? -errno : -EIO;
        }
        safe_close(TAKE_FD(go_w));
        if (r < 0)
                return spawn_fail(ret_err, step, r); /* container_free() kills and reaps */
        container_mark(spec, CONTAINER_MARK_GO);

        struct container_step_error e;
        ssize_t n;
        do
                n = read(err_r, &e, sizeof(e));
        while (n < 0 && errno == EINTR);

        if (n < 0)
                return spawn_fail(ret_err, CONTAINER_STEP_EXEC, -errno);
        if (n > 0) {
                if (n != (ssize_t) sizeof(e) || e.error <= 0)
                        e = (struct container_step_error){ CONTAINER_STEP_EXEC, EIO, -1 };
                return spawn_fail_at(ret_err, e.step, e.index, e.error);
        }
        container_mark(spec, CONTAINER_MARK_EXECED);
        *ret = TAKE_PTR(owned);
        return 0;
}

int container_pidfd(const struct container *c)
{
        return c->pidfd;
}

pid_t container_pid(const struct container *c)
{
        return c->pid;
}

int container_kill(struct container *c, int sig)
{
        if (c->reaped)
                return -ESRCH;
        if (syscall(SYS_pidfd_send_signal, c->pidfd, sig, NULL, 0) < 0)
                return -errno;
        return 0;
}

static int container_reap(struct container *c, int options, int *ret_status)
{
        siginfo_t si = {};

        if (!c->reaped) {
                for (;;) {
                        if (waitid(P_PIDFD, (id_t) c->pidfd, &si, WEXITED | options) == 0)
                                break;
                        if (errno != EINTR)
                                return -errno;
                }
                if (si.si_pid == 0)
                        return -EAGAIN;
                c->reaped = true;
                c->status = exit_status_from_siginfo(si.si_code, si.si_status);
                c->init_signal = si.si_code == CLD_EXITED ? 0 : si.si_status;
        }
        if (ret_status)
                *ret_status = c->status;
        return 0;
}

int container_wait(struct container *c, int *ret_status)
{
        return container_reap(c, 0, ret_status);
}

int container_try_wait(struct container *c, int *ret_status)
{
        return container_reap(c, WNOHANG, ret_status);
}

int container_init_signal(const struct container *c)
{
        return c->reaped ? c->init_signal : 0;
}

struct container *container_free(struct container *c)
{
        if (!c)
                return NULL;
        if (!c->reaped) {
                (void) container_kill(c, SIGKILL);
                (void) container_wait(c, NULL);
        }
        safe_close(c->pidfd);
        return mfree(c);
}
