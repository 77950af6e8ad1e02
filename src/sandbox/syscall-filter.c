/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The container seccomp allowlist. docs/SECCOMP.md is the prose version of
 * the table below; keep both in step.
 *
 * Derivation: Docker's default profile (moby profiles/seccomp/default.json,
 * 2024, with the kernel 5.17-6.7 additions of moby#47341 and without
 * io_uring, moby#46762), the entries that apply to x86_64 and aarch64 without
 * any capability, minus what a container must not reach even if it gained a
 * capability. Every allowed syscall is one Docker allows too, with the same
 * or a narrower argument condition; docs/SECCOMP.md lists the differences.
 *
 * Names that exist only for 32-bit ABIs (chown32, _llseek, socketcall,
 * clock_gettime64...) are not listed: only the native ABI gets through the
 * filter at all (see filter_build()).
 */
#include "sandbox/syscall-filter.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <sched.h>
#include <seccomp.h>
#include <stdint.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/macro.h"
#include "base/string-table.h"

#if !defined(__x86_64__) && !defined(__aarch64__)
/* clone's flags are argument 0 here; s390 swaps them, others are untested. */
#error "syscall-filter: only x86_64 and aarch64 are supported"
#endif

/* The namespace flags of clone(2). CLONE_NEWTIME (0x80) is absent on
 * purpose: for clone() that bit is part of the exit signal (CSIGNAL), the
 * kernel accepts CLONE_NEWTIME only through clone3/unshare, both denied. This
 * is Docker's mask, 0x7E020000. */
#define CLONE_NS_MASK                                                                              \
        ((uint64_t) (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | \
                     CLONE_NEWPID | CLONE_NEWNET))

#define FILTER_MAX_ARGS 2

struct filter_arg {
        unsigned index;
        enum scmp_compare op;
        /* libseccomp/OCI order: for SCMP_CMP_MASKED_EQ `value` is the mask
         * and `value_two` the datum; for the other ops `value` is the datum. */
        uint64_t value;
        uint64_t value_two;
};

struct filter_rule {
        const char *name;
        /* 0: allow; otherwise the errno the syscall fails with. */
        int errno_ret;
        /* Number from the unified table every architecture shares since
         * Linux 5.1 (>= 424), used when the installed libseccomp is older
         * than the syscall and cannot resolve the name; 0 if none. */
        int nr_generic;
        unsigned n_args;
        struct filter_arg args[FILTER_MAX_ARGS];
};

#define ALLOW(n)            \
        {                   \
                .name = (n) \
        }
#define ALLOW_NR(n, nr)                         \
        {                                       \
                .name = (n), .nr_generic = (nr) \
        }
#define FAIL(n, e)                            \
        {                                     \
                .name = (n), .errno_ret = (e) \
        }
#define ARG(i, o, v, v2)                                                 \
        {                                                                \
                .index = (i), .op = (o), .value = (v), .value_two = (v2) \
        }
#define ALLOW_IF(n, a)                                  \
        {                                               \
                .name = (n), .n_args = 1, .args = { a } \
        }
#define ALLOW_IF2(n, a, b)                                 \
        {                                                  \
                .name = (n), .n_args = 2, .args = { a, b } \
        }
#define ARG_EQ(i, v)        ARG(i, SCMP_CMP_EQ, (uint64_t) (v), 0)
#define ARG_MASKED(i, m, v) ARG(i, SCMP_CMP_MASKED_EQ, (uint64_t) (m), (uint64_t) (v))

/* clang-format off */
static const struct filter_rule filter_rules[] = {
        /* --- unconditional: Docker's default allow set, less the denials of
         *     docs/SECCOMP.md ("Stricter than Docker") --- */
        ALLOW("accept"), ALLOW("accept4"), ALLOW("access"), ALLOW("alarm"), ALLOW("bind"),
        ALLOW("brk"), ALLOW("capget"), ALLOW("capset"), ALLOW("chdir"), ALLOW("chmod"),
        ALLOW("chown"), ALLOW("clock_getres"), ALLOW("clock_gettime"),
        ALLOW("clock_nanosleep"), ALLOW("close"), ALLOW_NR("close_range", 436),
        ALLOW("connect"), ALLOW("copy_file_range"), ALLOW("creat"), ALLOW("dup"),
        ALLOW("dup2"), ALLOW("dup3"), ALLOW("epoll_create"), ALLOW("epoll_create1"),
        ALLOW("epoll_ctl"), ALLOW("epoll_ctl_old"), ALLOW("epoll_pwait"),
        ALLOW_NR("epoll_pwait2", 441), ALLOW("epoll_wait"), ALLOW("epoll_wait_old"),
        ALLOW("eventfd"), ALLOW("eventfd2"), ALLOW("execve"), ALLOW("execveat"), ALLOW("exit"),
        ALLOW("exit_group"), ALLOW("faccessat"), ALLOW_NR("faccessat2", 439),
        ALLOW("fadvise64"), ALLOW("fallocate"), ALLOW("fchdir"), ALLOW("fchmod"),
        ALLOW("fchmodat"), ALLOW_NR("fchmodat2", 452), ALLOW("fchown"), ALLOW("fchownat"),
        ALLOW("fcntl"), ALLOW("fdatasync"), ALLOW("fgetxattr"), ALLOW("flistxattr"),
        ALLOW("flock"), ALLOW("fork"), ALLOW("fremovexattr"), ALLOW("fsetxattr"),
        ALLOW("fstat"), ALLOW("fstatfs"), ALLOW("fsync"), ALLOW("ftruncate"), ALLOW("futex"),
        ALLOW_NR("futex_requeue", 456), ALLOW_NR("futex_wait", 455),
        ALLOW_NR("futex_waitv", 449), ALLOW_NR("futex_wake", 454), ALLOW("futimesat"),
        ALLOW("getcpu"), ALLOW("getcwd"), ALLOW("getdents"), ALLOW("getdents64"),
        ALLOW("getegid"), ALLOW("geteuid"), ALLOW("getgid"), ALLOW("getgroups"),
        ALLOW("getitimer"), ALLOW("getpeername"), ALLOW("getpgid"), ALLOW("getpgrp"),
        ALLOW("getpid"), ALLOW("getppid"), ALLOW("getpriority"), ALLOW("getrandom"),
        ALLOW("getresgid"), ALLOW("getresuid"), ALLOW("getrlimit"), ALLOW("get_robust_list"),
        ALLOW("getrusage"), ALLOW("getsid"), ALLOW("getsockname"), ALLOW("getsockopt"),
        ALLOW("get_thread_area"), ALLOW("gettid"), ALLOW("gettimeofday"), ALLOW("getuid"),
        ALLOW("getxattr"), ALLOW("inotify_add_watch"), ALLOW("inotify_init"),
        ALLOW("inotify_init1"), ALLOW("inotify_rm_watch"), ALLOW("io_cancel"),
        ALLOW("ioctl"), ALLOW("io_destroy"), ALLOW("io_getevents"), ALLOW("io_pgetevents"),
        ALLOW("ioprio_get"), ALLOW("ioprio_set"), ALLOW("io_setup"), ALLOW("io_submit"),
        ALLOW("kill"), ALLOW_NR("landlock_add_rule", 445),
        ALLOW_NR("landlock_create_ruleset", 444), ALLOW_NR("landlock_restrict_self", 446),
        ALLOW("lchown"), ALLOW("lgetxattr"), ALLOW("link"), ALLOW("linkat"), ALLOW("listen"),
        ALLOW("listxattr"), ALLOW("llistxattr"), ALLOW("lremovexattr"), ALLOW("lseek"),
        ALLOW("lsetxattr"), ALLOW("lstat"), ALLOW("madvise"), ALLOW_NR("map_shadow_stack", 453),
        ALLOW("membarrier"), ALLOW("memfd_create"), ALLOW_NR("memfd_secret", 447),
        ALLOW("mincore"), ALLOW("mkdir"), ALLOW("mkdirat"), ALLOW("mlock"), ALLOW("mlock2"),
        ALLOW("mlockall"), ALLOW("mmap"), ALLOW("mprotect"), ALLOW("mq_getsetattr"),
        ALLOW("mq_notify"), ALLOW("mq_open"), ALLOW("mq_timedreceive"),
        ALLOW("mq_timedsend"), ALLOW("mq_unlink"), ALLOW("mremap"), ALLOW("msgctl"),
        ALLOW("msgget"), ALLOW("msgrcv"), ALLOW("msgsnd"), ALLOW("msync"), ALLOW("munlock"),
        ALLOW("munlockall"), ALLOW("munmap"), ALLOW("nanosleep"), ALLOW("newfstatat"),
        ALLOW("open"), ALLOW("openat"), ALLOW_NR("openat2", 437), ALLOW("pause"),
        ALLOW_NR("pidfd_open", 434), ALLOW_NR("pidfd_send_signal", 424), ALLOW("pipe"),
        ALLOW("pipe2"), ALLOW("pkey_alloc"), ALLOW("pkey_free"), ALLOW("pkey_mprotect"),
        ALLOW("poll"), ALLOW("ppoll"), ALLOW("prctl"), ALLOW("pread64"), ALLOW("preadv"),
        ALLOW("preadv2"), ALLOW("prlimit64"), ALLOW_NR("process_mrelease", 448),
        ALLOW("pselect6"), ALLOW("pwrite64"), ALLOW("pwritev"), ALLOW("pwritev2"),
        ALLOW("read"), ALLOW("readahead"), ALLOW("readlink"), ALLOW("readlinkat"),
        ALLOW("readv"), ALLOW("recvfrom"), ALLOW("recvmmsg"), ALLOW("recvmsg"),
        ALLOW("remap_file_pages"), ALLOW("removexattr"), ALLOW("rename"), ALLOW("renameat"),
        ALLOW("renameat2"), ALLOW("restart_syscall"), ALLOW("rmdir"), ALLOW("rseq"),
        ALLOW("rt_sigaction"), ALLOW("rt_sigpending"), ALLOW("rt_sigprocmask"),
        ALLOW("rt_sigqueueinfo"), ALLOW("rt_sigreturn"), ALLOW("rt_sigsuspend"),
        ALLOW("rt_sigtimedwait"), ALLOW("rt_tgsigqueueinfo"), ALLOW("sched_getaffinity"),
        ALLOW("sched_getattr"), ALLOW("sched_getparam"), ALLOW("sched_get_priority_max"),
        ALLOW("sched_get_priority_min"), ALLOW("sched_getscheduler"),
        ALLOW("sched_rr_get_interval"), ALLOW("sched_setaffinity"), ALLOW("sched_setattr"),
        ALLOW("sched_setparam"), ALLOW("sched_setscheduler"), ALLOW("sched_yield"),
        ALLOW("seccomp"), ALLOW("select"), ALLOW("semctl"), ALLOW("semget"), ALLOW("semop"),
        ALLOW("semtimedop"), ALLOW("sendfile"), ALLOW("sendmmsg"), ALLOW("sendmsg"),
        ALLOW("sendto"), ALLOW("setfsgid"), ALLOW("setfsuid"), ALLOW("setgid"),
        ALLOW("setgroups"), ALLOW("setitimer"), ALLOW("setpgid"), ALLOW("setpriority"),
        ALLOW("setregid"), ALLOW("setresgid"), ALLOW("setresuid"), ALLOW("setreuid"),
        ALLOW("setrlimit"), ALLOW("set_robust_list"), ALLOW("setsid"), ALLOW("setsockopt"),
        ALLOW("set_thread_area"), ALLOW("set_tid_address"), ALLOW("setuid"),
        ALLOW("setxattr"), ALLOW("shmat"), ALLOW("shmctl"), ALLOW("shmdt"), ALLOW("shmget"),
        ALLOW("shutdown"), ALLOW("sigaltstack"), ALLOW("signalfd"), ALLOW("signalfd4"),
        ALLOW("splice"), ALLOW("stat"), ALLOW("statfs"), ALLOW("statx"), ALLOW("symlink"),
        ALLOW("symlinkat"), ALLOW("sync"), ALLOW("sync_file_range"), ALLOW("syncfs"),
        ALLOW("sysinfo"), ALLOW("tee"), ALLOW("tgkill"), ALLOW("time"), ALLOW("timer_create"),
        ALLOW("timer_delete"), ALLOW("timer_getoverrun"), ALLOW("timer_gettime"),
        ALLOW("timer_settime"), ALLOW("timerfd_create"), ALLOW("timerfd_gettime"),
        ALLOW("timerfd_settime"), ALLOW("times"), ALLOW("tkill"), ALLOW("truncate"),
        ALLOW("umask"), ALLOW("uname"), ALLOW("unlink"), ALLOW("unlinkat"), ALLOW("utime"),
        ALLOW("utimensat"), ALLOW("utimes"), ALLOW("vfork"), ALLOW("vmsplice"),
        ALLOW("wait4"), ALLOW("waitid"), ALLOW("write"), ALLOW("writev"),
        /* x86_64 only (resolves to nothing on aarch64): TLS setup by libc. */
        ALLOW("arch_prctl"),
        ALLOW_NR("cachestat", 451),

        /* --- with argument conditions (each fails closed, see the header) --- */

        /* fork/threads/posix_spawn, but no new namespaces: Docker's rule. */
        ALLOW_IF("clone", ARG_MASKED(0, CLONE_NS_MASK, 0)),
        /* clone3 passes its flags in a struct seccomp cannot read, so it
         * cannot be filtered by flag; ENOSYS (not EPERM) makes glibc >= 2.34
         * fall back to clone(), which is filtered above. Docker does the same. */
        FAIL("clone3", ENOSYS),

        /* Docker's personality values: PER_LINUX, PER_LINUX32, UNAME26,
         * UNAME26|PER_LINUX32 and the 0xffffffff query. Everything else (notably
         * ADDR_NO_RANDOMIZE and READ_IMPLIES_EXEC) is refused. */
        ALLOW_IF("personality", ARG_EQ(0, 0x0)),
        ALLOW_IF("personality", ARG_EQ(0, 0x8)),
        ALLOW_IF("personality", ARG_EQ(0, 0x20000)),
        ALLOW_IF("personality", ARG_EQ(0, 0x20008)),
        ALLOW_IF("personality", ARG_EQ(0, 0xffffffff)),

        /* Socket families: a short allowlist instead of Docker's "all but
         * AF_VSOCK". AF_PACKET, AF_ALG, AF_VSOCK, AF_TIPC, AF_RDS, AF_CAN,
         * AF_BLUETOOTH, AF_XDP... are kernel attack surface an env server
         * never needs. */
        ALLOW_IF("socket", ARG_EQ(0, AF_UNIX)),
        ALLOW_IF("socket", ARG_EQ(0, AF_INET)),
        ALLOW_IF("socket", ARG_EQ(0, AF_INET6)),
        /* Netlink only for NETLINK_ROUTE (protocol 0): glibc's getaddrinfo
         * (AI_ADDRCONFIG) and if_nameindex use it. NETLINK_NETFILTER
         * (nf_tables: CVE-2022-1015, CVE-2023-32233, CVE-2024-1086),
         * NETLINK_GENERIC, NETLINK_AUDIT, uevents... stay closed. */
        ALLOW_IF2("socket", ARG_EQ(0, AF_NETLINK), ARG_EQ(2, NETLINK_ROUTE)),
        /* Only AF_UNIX implements socketpair in practice (asyncio uses it). */
        ALLOW_IF("socketpair", ARG_EQ(0, AF_UNIX)),

        /* mknod for FIFOs, sockets and regular files (mode & S_IFMT == 0
         * means regular); never S_IFCHR/S_IFBLK. Without CAP_MKNOD the kernel
         * already refuses real devices, but since 5.8 it lets anyone create
         * the 0:0 "whiteout" char device; a container has no use for it. The
         * mask makes garbage in the upper bits irrelevant, as it is to the
         * kernel (umode_t). */
        ALLOW_IF("mknod", ARG_MASKED(1, S_IFMT, 0)),
        ALLOW_IF("mknod", ARG_MASKED(1, S_IFMT, S_IFREG)),
        ALLOW_IF("mknod", ARG_MASKED(1, S_IFMT, S_IFIFO)),
        ALLOW_IF("mknod", ARG_MASKED(1, S_IFMT, S_IFSOCK)),
        ALLOW_IF("mknodat", ARG_MASKED(2, S_IFMT, 0)),
        ALLOW_IF("mknodat", ARG_MASKED(2, S_IFMT, S_IFREG)),
        ALLOW_IF("mknodat", ARG_MASKED(2, S_IFMT, S_IFIFO)),
        ALLOW_IF("mknodat", ARG_MASKED(2, S_IFMT, S_IFSOCK)),
};
/* clang-format on */

static void filter_ctx_releasep(scmp_filter_ctx *ctx)
{
        if (*ctx)
                seccomp_release(*ctx);
}

struct syscall_filter {
        struct sock_filter *insns; /* owned; len entries */
        unsigned short len;
};

static void filter_json_unrefp(json_t **j)
{
        json_decref(*j);
}

/* The syscall number of a rule on the native architecture, or -1 if the
 * syscall does not exist here (libseccomp returns a negative pseudo-number for
 * names that belong to other architectures, __NR_SCMP_ERROR for unknown
 * names). */
static int filter_rule_resolve(const struct filter_rule *rule)
{
        int nr = seccomp_syscall_resolve_name(rule->name);
        if (nr == __NR_SCMP_ERROR && rule->nr_generic > 0)
                return rule->nr_generic;
        return nr >= 0 ? nr : -1;
}

static int filter_build(scmp_filter_ctx *ret)
{
        cleanup(filter_ctx_releasep) scmp_filter_ctx ctx = NULL;
        int r;

        /* seccomp_init() adds only the native architecture; no
         * seccomp_arch_add() follows. */
        ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
        if (!ctx)
                return -ENOMEM;

        /* A syscall through a foreign ABI (i386 int $0x80 on x86_64, or an x32
         * number with __X32_SYSCALL_BIT) fails with the same EPERM as any
         * other refused call. KILL_PROCESS would be no safer, since the
         * syscall never runs either way, and would make a stray 32-bit helper
         * binary die with an opaque SIGSYS instead of a diagnosable error.
         * libseccomp's default here is KILL_THREAD, which leaves a
         * half-dead multithreaded process behind. */
        r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(EPERM));
        if (r < 0)
                return r;
        /* ~250 rules: a binary tree over syscall numbers keeps the path of an
         * argument-filtered syscall logarithmic instead of a linear chain
         * (measured in docs/SECCOMP.md). Calls allowed regardless of
         * arguments skip the program entirely on kernels >= 5.11 (the seccomp
         * action cache). */
        r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
        if (r < 0)
                return r;

        for (size_t i = 0; i < ELEMENTSOF(filter_rules); i++) {
                const struct filter_rule *rule = &filter_rules[i];
                struct scmp_arg_cmp cmp[FILTER_MAX_ARGS];
                uint32_t action;
                int nr;

                nr = filter_rule_resolve(rule);
                if (nr < 0)
                        continue;
                for (unsigned a = 0; a < rule->n_args; a++)
                        cmp[a] = (struct scmp_arg_cmp){
                                .arg = rule->args[a].index,
                                .op = rule->args[a].op,
                                .datum_a = rule->args[a].value,
                                .datum_b = rule->args[a].value_two,
                        };
                action = rule->errno_ret > 0 ? SCMP_ACT_ERRNO((uint32_t) rule->errno_ret)
                                             : SCMP_ACT_ALLOW;
                /* _exact: the rule must be taken as written; libseccomp must
                 * not silently rewrite or drop it. */
                r = seccomp_rule_add_exact_array(ctx, action, nr, rule->n_args, cmp);
                if (r < 0)
                        return r;
        }

        *ret = TAKE_PTR(ctx);
        return 0;
}

struct syscall_filter *syscall_filter_free(struct syscall_filter *filter)
{
        if (filter) {
                free(filter->insns);
                free(filter);
        }
        return NULL;
}

int syscall_filter_new(struct syscall_filter **ret)
{
        cleanup(filter_ctx_releasep) scmp_filter_ctx ctx = NULL;
        cleanup_free struct sock_filter *insns = NULL;
        struct syscall_filter *filter;
        cleanup_close int fd = -EBADF;
        struct stat st;
        ssize_t n;
        int r;

        r = filter_build(&ctx);
        if (r < 0)
                return r;

        /* libseccomp 2.5 can export the program only to an fd
         * (seccomp_export_bpf_mem() is 2.6); a memfd keeps it off disk. */
        fd = memfd_create("syscall-filter", MFD_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        r = seccomp_export_bpf(ctx, fd);
        if (r < 0)
                return r;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (st.st_size <= 0 || st.st_size % sizeof(struct sock_filter) != 0 ||
            st.st_size / sizeof(struct sock_filter) > BPF_MAXINSNS)
                return -E2BIG;

        insns = malloc((size_t) st.st_size);
        if (!insns)
                return -ENOMEM;
        n = pread(fd, insns, (size_t) st.st_size, 0);
        if (n < 0)
                return negative_errno();
        if (n != st.st_size)
                return -EIO;

        filter = malloc(sizeof(*filter));
        if (!filter)
                return -ENOMEM;
        *filter = (struct syscall_filter){
                .insns = TAKE_PTR(insns),
                .len = (unsigned short) (st.st_size / sizeof(struct sock_filter)),
        };
        *ret = filter;
        return 0;
}

int syscall_filter_apply(const struct syscall_filter *filter, unsigned flags)
{
        struct sock_fprog prog;
        unsigned kflags = 0;
        long r;

        if (!filter || !filter->insns)
                return -EINVAL;
        prog = (struct sock_fprog){ .len = filter->len, .filter = filter->insns };
        if (flags & ~(unsigned) (SYSCALL_FILTER_TSYNC | SYSCALL_FILTER_LOG))
                return -EINVAL;
        if (flags & SYSCALL_FILTER_TSYNC)
                kflags |= SECCOMP_FILTER_FLAG_TSYNC;
        if (flags & SYSCALL_FILTER_LOG)
                kflags |= SECCOMP_FILTER_FLAG_LOG;

        /* Without CAP_SYS_ADMIN the kernel accepts a filter only under
         * no_new_privs; setting it twice is harmless. */
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return negative_errno();
        /* seccomp(2) directly (glibc has no wrapper): no allocation, no
         * libseccomp state, so this is safe right after clone(). */
        r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, kflags, &prog);
        if (r < 0)
                return negative_errno();
        /* With TSYNC a positive return is the id of a thread that could not be
         * synchronised (it has a conflicting filter): nothing was installed. */
        if (r > 0)
                return -EBUSY;
        return 0;
}

/* Owned filters are freed explicitly below rather than with cleanup(): the
 * paths are one line long, and clang-analyzer (CI) does not model the cleanup
 * attribute for heap pointers. */
int syscall_filter_load(unsigned flags)
{
        struct syscall_filter *filter = NULL;
        int r;

        if (flags & ~(unsigned) (SYSCALL_FILTER_TSYNC | SYSCALL_FILTER_LOG))
                return -EINVAL;
        r = syscall_filter_new(&filter);
        if (r < 0)
                return r;
        r = syscall_filter_apply(filter, flags);
        syscall_filter_free(filter);
        return r;
}

static int filter_write(const struct syscall_filter *filter, int fd)
{
        size_t size, done = 0;

        if (!filter)
                return -EINVAL;
        size = (size_t) filter->len * sizeof(struct sock_filter);

        while (done < size) {
                ssize_t n = write(fd, (const char *) filter->insns + done, size - done);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return negative_errno();
                done += (size_t) n;
        }
        return 0;
}

int syscall_filter_export_bpf(int fd)
{
        struct syscall_filter *filter = NULL;
        int r;

        if (fd < 0)
                return -EBADF;
        r = syscall_filter_new(&filter);
        if (r < 0)
                return r;
        r = filter_write(filter, fd);
        syscall_filter_free(filter);
        return r;
}

/* libseccomp's comparison operators by their OCI names. */
static const char *const filter_op_table[_SCMP_CMP_MAX] = {
        [SCMP_CMP_NE] = "SCMP_CMP_NE",
        [SCMP_CMP_LT] = "SCMP_CMP_LT",
        [SCMP_CMP_LE] = "SCMP_CMP_LE",
        [SCMP_CMP_EQ] = "SCMP_CMP_EQ",
        [SCMP_CMP_GE] = "SCMP_CMP_GE",
        [SCMP_CMP_GT] = "SCMP_CMP_GT",
        [SCMP_CMP_MASKED_EQ] = "SCMP_CMP_MASKED_EQ",
};

static const char *filter_op_to_string(enum scmp_compare op);
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(filter_op, enum scmp_compare);

/* jansson's json_*_new() return NULL only on allocation failure; collect
 * that into one -ENOMEM instead of checking every call. json_array_append_new
 * and json_object_set_new steal the reference even when they fail. */
static int filter_json_add(json_t *obj, const char *key, json_t *value)
{
        return json_object_set_new(obj, key, value) < 0 ? -ENOMEM : 0;
}

static int filter_json_append(json_t *arr, json_t *value)
{
        return json_array_append_new(arr, value) < 0 ? -ENOMEM : 0;
}

static int filter_rule_to_oci(const struct filter_rule *rule, json_t **ret)
{
        cleanup(filter_json_unrefp) json_t *entry = json_object();
        json_t *names, *args = NULL;
        int r;

        if (!entry)
                return -ENOMEM;
        names = json_array();
        r = filter_json_add(entry, "names", names);
        if (r < 0)
                return r;
        r = filter_json_append(names, json_string(rule->name));
        if (r < 0)
                return r;
        if (rule->errno_ret > 0) {
                r = filter_json_add(entry, "action", json_string("SCMP_ACT_ERRNO"));
                if (r < 0)
                        return r;
                r = filter_json_add(entry, "errnoRet", json_integer(rule->errno_ret));
        } else
                r = filter_json_add(entry, "action", json_string("SCMP_ACT_ALLOW"));
        if (r < 0)
                return r;

        if (rule->n_args > 0) {
                args = json_array();
                r = filter_json_add(entry, "args", args);
                if (r < 0)
                        return r;
        }
        for (unsigned a = 0; a < rule->n_args; a++) {
                const struct filter_arg *arg = &rule->args[a];
                json_t *o = json_object();

                r = filter_json_append(args, o);
                if (r < 0)
                        return r;
                /* The runtime-spec types value/valueTwo as uint64; jansson
                 * integers are signed 64-bit, and no value in the table comes
                 * near 2^63. */
                r = filter_json_add(o, "index", json_integer(arg->index));
                if (r >= 0)
                        r = filter_json_add(o, "value", json_integer((json_int_t) arg->value));
                if (r >= 0)
                        r = filter_json_add(o, "valueTwo",
                                            json_integer((json_int_t) arg->value_two));
                if (r >= 0)
                        r = filter_json_add(o, "op", json_string(filter_op_to_string(arg->op)));
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(entry);
        return 0;
}

static const char *filter_native_arch_name(void)
{
#if defined(__x86_64__)
        return "SCMP_ARCH_X86_64";
#else
        return "SCMP_ARCH_AARCH64";
#endif
}

int syscall_filter_to_oci(json_t **ret)
{
        cleanup(filter_json_unrefp) json_t *root = json_object();
        json_t *arches, *syscalls, *allow, *allow_names;
        int r;

        /* Every new value is handed to its parent at once (the *_new setters
         * take the reference even on failure, and a NULL value just fails),
         * so the one cleanup of root frees everything on any error path. */
        if (!root)
                return -ENOMEM;
        r = filter_json_add(root, "defaultAction", json_string("SCMP_ACT_ERRNO"));
        if (r < 0)
                return r;
        r = filter_json_add(root, "defaultErrnoRet", json_integer(EPERM));
        if (r < 0)
                return r;
        arches = json_array();
        r = filter_json_add(root, "architectures", arches);
        if (r < 0)
                return r;
        r = filter_json_append(arches, json_string(filter_native_arch_name()));
        if (r < 0)
                return r;
        syscalls = json_array();
        r = filter_json_add(root, "syscalls", syscalls);
        if (r < 0)
                return r;
        allow = json_object();
        r = filter_json_append(syscalls, allow);
        if (r < 0)
                return r;
        allow_names = json_array();
        r = filter_json_add(allow, "names", allow_names);
        if (r < 0)
                return r;
        r = filter_json_add(allow, "action", json_string("SCMP_ACT_ALLOW"));
        if (r < 0)
                return r;

        /* All unconditional allows share the first entry (in table order);
         * every conditional or errno rule is an entry of its own, since the
         * runtime ANDs the args of one entry. Names the runtime's libseccomp
         * cannot resolve on this architecture (arch_prctl on aarch64, a
         * syscall newer than the library) are skipped by runc and crun, as
         * filter_build() skips them. */
        for (size_t i = 0; i < ELEMENTSOF(filter_rules); i++) {
                const struct filter_rule *rule = &filter_rules[i];
                json_t *entry = NULL;

                if (rule->n_args == 0 && rule->errno_ret == 0) {
                        r = filter_json_append(allow_names, json_string(rule->name));
                        if (r < 0)
                                return r;
                        continue;
                }
                r = filter_rule_to_oci(rule, &entry);
                if (r < 0)
                        return r;
                r = filter_json_append(syscalls, entry);
                if (r < 0)
                        return r;
        }

        *ret = TAKE_PTR(root);
        return 0;
}
