/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "probe/attack.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/mount.h>
#include <linux/perf_event.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/limits.h"
#include "base/macro.h"
#include "base/parse-util.h"
#include "base/string-table.h"
#include "base/time-util.h"
#include "base/util.h"
#include "base/mountinfo.h"
#include "probe/proc-status.h"
#include "probe/write-check.h"

static const char *const attack_result_table[_ATTACK_RESULT_MAX] = {
        [ATTACK_DENIED] = "denied",
        [ATTACK_ALLOWED] = "allowed",
        [ATTACK_ERROR] = "error",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING_FALLBACK(attack_result, enum attack_result, "error");
DEFINE_STRING_TABLE_LOOKUP_FROM_STRING(attack_result);

static const char *const probe_fault_table[_PROBE_FAULT_MAX] = {
        [PROBE_FAULT_SILENT] = "silent",
        [PROBE_FAULT_PARTIAL] = "partial",
        [PROBE_FAULT_GARBLE] = "garble",
        [PROBE_FAULT_CRASH] = "crash",
};

DEFINE_STRING_TABLE_LOOKUP_FROM_STRING(probe_fault);

const char *attack_errno_name(int err, char buf[static 16])
{
        const char *n;

        if (err < 0)
                err = -err;
        if (err == 0)
                return "0";
        n = strerrorname_np(err);
        if (n)
                return n;
        (void) snprintf(buf, 16, "E%d", err);
        return buf;
}

static void outcome_set(struct attack_outcome *o, enum attack_result r, const char *fmt, ...)
        printf_fmt(3, 4);
static void outcome_set(struct attack_outcome *o, enum attack_result r, const char *fmt, ...)
{
        va_list ap;
        o->result = r;
        va_start(ap, fmt);
        (void) vsnprintf(o->detail, sizeof(o->detail), fmt, ap);
        va_end(ap);
}

/* A refusal is one of the errnos in `denied` (0-terminated); anything else
 * is not proof of anything and is reported as an error. */
static void outcome_errno(struct attack_outcome *o, int err, const int *denied, const char *what)
{
        char buf[16];
        const char *name = attack_errno_name(err, buf);

        for (const int *d = denied; *d; d++)
                if (err == *d) {
                        outcome_set(o, ATTACK_DENIED, "%s: %s", what, name);
                        return;
                }
        outcome_set(o, ATTACK_ERROR, "%s: unexpected %s", what, name);
}

static const int deny_access[] = { EACCES, EPERM, ENOENT, ENOTDIR, ELOOP, EROFS, ENXIO, 0 };
static const int deny_perm[] = { EPERM, EACCES, 0 };
static const int deny_net[] = { ECONNREFUSED, ENETUNREACH, EHOSTUNREACH,  ETIMEDOUT,
                                EACCES,       EPERM,       EADDRNOTAVAIL, 0 };
static const int deny_unix[] = { ENOENT, ECONNREFUSED, EACCES, EPERM, ENOTDIR, ELOOP, 0 };

/* --- files --------------------------------------------------------------- */

/* Allowed iff at least one byte (or one directory entry) comes back. */
static void attack_read(const char *path, struct attack_outcome *o)
{
        cleanup_close int fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        struct stat st;
        char buf[4096] __attribute__((aligned(8)));

        if (fd < 0)
                return outcome_errno(o, errno, deny_access, "open");
        if (fstat(fd, &st) < 0)
                return outcome_errno(o, errno, (const int[]){ 0 }, "fstat");
        if (S_ISDIR(st.st_mode)) {
                unsigned n_entries = 0;
                for (;;) {
                        long n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
                        if (n < 0)
                                return outcome_errno(o, errno, deny_access, "getdents");
                        if (n == 0)
                                break;
                        for (long off = 0; off < n;) {
                                const struct dirent64 *de = (const void *) (buf + off);
                                off += de->d_reclen;
                                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                                        n_entries++;
                        }
                }
                if (n_entries > 0)
                        return outcome_set(o, ATTACK_ALLOWED, "directory lists %u entries",
                                           n_entries);
                return outcome_set(o, ATTACK_DENIED, "empty directory");
        }
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0)
                return outcome_errno(o, errno, (const int[]){ EACCES, EPERM, EINVAL, 0 }, "read");
        if (n == 0)
                return outcome_set(o, ATTACK_DENIED, "empty");
        outcome_set(o, ATTACK_ALLOWED, "read %zd bytes", n);
}

/* Create-and-remove a unique entry (write-check.h): never leaves anything. */
static void attack_write_dir(const char *path, struct attack_outcome *o)
{
        cleanup_close int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        char buf[16];
        int err = 0;

        if (fd < 0)
                return outcome_errno(o, errno, deny_access, "open");
        enum write_result w = write_check_dir(fd, &err);
        switch (w) {
        case WRITE_DENIED:
                return outcome_set(o, ATTACK_DENIED, "create: %s", attack_errno_name(err, buf));
        case WRITE_WRITABLE:
                return outcome_set(o, ATTACK_ALLOWED, "created an entry");
        default:
                return outcome_set(o, ATTACK_ERROR, "create: inconclusive %s",
                                   attack_errno_name(err, buf));
        }
}

/* Opens an existing file for writing, without O_TRUNC, and writes nothing:
 * for procfs/sysfs the permission decision is taken at open. */
static void attack_write_file(const char *path, struct attack_outcome *o)
{
        cleanup_close int fd = open(path, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return outcome_errno(o, errno, deny_access, "open for writing");
        outcome_set(o, ATTACK_ALLOWED, "opened for writing");
}

static void attack_mkdir(const char *path, struct attack_outcome *o)
{
        if (mkdir(path, 0700) < 0)
                return outcome_errno(o, errno, deny_access, "mkdir");
        (void) rmdir(path);
        outcome_set(o, ATTACK_ALLOWED, "created a directory");
}

/* The mount containing path must be read-only by its mount or superblock
 * flags: a root that only DAC protects is writable by whoever the image
 * lets in. */
static void attack_root_rw(const char *path, struct attack_outcome *o)
{
        cleanup(mountinfo_freep) struct mountinfo *mi = NULL;
        int r;

        r = mountinfo_load_at(AT_FDCWD, "/proc/self/mountinfo", &mi);
        if (r < 0)
                return outcome_errno(o, -r, (const int[]){ 0 }, "mountinfo");
        const struct mountinfo_entry *e = mountinfo_find_by_path(mi, path);
        if (!e || mi->truncated)
                return outcome_set(o, ATTACK_ERROR, "no complete mount table entry for %s", path);
        if (mountinfo_entry_is_read_only(e))
                return outcome_set(o, ATTACK_DENIED, "mount %u is read-only (%s)", e->mount_id,
                                   e->mount_options);
        outcome_set(o, ATTACK_ALLOWED, "mount %u at %s is read-write (%s / %s)", e->mount_id,
                    e->mount_point, e->mount_options, e->super_options);
}

/* --- network -------------------------------------------------------------- */

static void attack_connect_tcp(const char *arg, struct attack_outcome *o)
{
        struct sockaddr_in sa = { .sin_family = AF_INET };
        char host[64];
        const char *colon = strrchr(arg, ':');
        unsigned port;

        if (!colon || (size_t) (colon - arg) >= sizeof(host) ||
            parse_uint(colon + 1, 1, 65535, &port) < 0)
                return outcome_set(o, ATTACK_ERROR, "bad address '%s'", arg);
        memcpy(host, arg, (size_t) (colon - arg));
        host[colon - arg] = '\0';
        if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
                return outcome_set(o, ATTACK_ERROR, "bad address '%s'", arg);
        sa.sin_port = htons((uint16_t) port);

        cleanup_close int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return outcome_errno(o, errno, deny_perm, "socket");
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                if (errno != EINPROGRESS)
                        return outcome_errno(o, errno, deny_net, "connect");
                struct pollfd p = { .fd = fd, .events = POLLOUT };
                int n = poll(&p, 1, 2000);
                if (n < 0)
                        return outcome_errno(o, errno, (const int[]){ 0 }, "poll");
                if (n == 0)
                        return outcome_set(o, ATTACK_DENIED, "connect: no answer in 2 s");
                int err = 0;
                socklen_t l = sizeof(err);
                if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l) < 0)
                        return outcome_errno(o, errno, (const int[]){ 0 }, "getsockopt");
                if (err != 0)
                        return outcome_errno(o, err, deny_net, "connect");
        }
        outcome_set(o, ATTACK_ALLOWED, "connected to %s", arg);
}

static void attack_connect_unix(const char *path, struct attack_outcome *o)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };

        if (strlen(path) >= sizeof(sa.sun_path))
                return outcome_set(o, ATTACK_ERROR, "path too long for sockaddr_un");
        memcpy(sa.sun_path, path, strlen(path) + 1);
        cleanup_close int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return outcome_errno(o, errno, deny_perm, "socket");
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return outcome_errno(o, errno, deny_unix, "connect");
        outcome_set(o, ATTACK_ALLOWED, "connected to %s", path);
}

/* --- processes and credentials ------------------------------------------- */

/* Every pid in /proc that is not the container's init (the shim), our
 * parent (the probe) or ourselves belongs to someone else. */
static void attack_proc_visible(struct attack_outcome *o)
{
        DIR *d = opendir("/proc");
        unsigned foreign = 0, seen = 0;
        int first = 0;
        pid_t self = getpid(), parent = getppid();
        struct dirent *de;

        if (!d)
                return outcome_errno(o, errno, (const int[]){ 0 }, "opendir /proc");
        while ((de = readdir(d))) {
                int pid;
                if (parse_int(de->d_name, 1, INT32_MAX, &pid) < 0)
                        continue;
                seen++;
                if (pid == 1 || pid == self || pid == parent)
                        continue;
                if (!first)
                        first = pid;
                foreign++;
        }
        closedir(d);
        if (seen == 0)
                return outcome_set(o, ATTACK_ERROR, "/proc lists no process at all");
        if (foreign > 0)
                return outcome_set(o, ATTACK_ALLOWED, "%u foreign processes visible (pid %d)",
                                   foreign, first);
        outcome_set(o, ATTACK_DENIED, "only the container's own %u processes", seen);
}

static void attack_kill(const char *arg, struct attack_outcome *o)
{
        int pid;
        if (parse_int(arg, 1, INT32_MAX, &pid) < 0)
                return outcome_set(o, ATTACK_ERROR, "bad pid '%s'", arg);
        /* Signal 0: existence and permission checks only, nothing is sent. */
        if (kill(pid, 0) < 0)
                return outcome_errno(o, errno, (const int[]){ ESRCH, EPERM, 0 }, "kill");
        outcome_set(o, ATTACK_ALLOWED, "pid %d can be signalled", pid);
}

static void attack_uid(struct attack_outcome *o)
{
        uid_t u[3];
        gid_t g[3];

        if (getresuid(&u[0], &u[1], &u[2]) < 0 || getresgid(&g[0], &g[1], &g[2]) < 0)
                return outcome_errno(o, errno, (const int[]){ 0 }, "getresuid");
        for (int i = 0; i < 3; i++)
                if (u[i] == 0 || g[i] == 0)
                        return outcome_set(o, ATTACK_ALLOWED, "runs as uid %u/%u/%u gid %u/%u/%u",
                                           u[0], u[1], u[2], g[0], g[1], g[2]);
        outcome_set(o, ATTACK_DENIED, "uid %u gid %u", u[0], g[0]);
}

static void attack_caps(struct attack_outcome *o)
{
        cleanup_free char *text = NULL;
        struct proc_status st;
        size_t len;
        int r;

        r = read_full_file_at(AT_FDCWD, "/proc/self/status", (size_t) PROC_STATUS_MAX_BYTES, &text,
                              &len);
        if (r < 0)
                return outcome_errno(o, -r, (const int[]){ 0 }, "/proc/self/status");
        r = proc_status_parse(text, len, &st);
        if (r < 0)
                return outcome_errno(o, -r, (const int[]){ 0 }, "/proc/self/status");
        for (int i = 0; i < _PROC_CAP_MAX; i++) {
                /* Unknown is never "no capabilities". */
                if (!st.has_caps[i])
                        return outcome_set(o, ATTACK_ERROR, "%s unknown",
                                           proc_cap_set_to_string((enum proc_cap_set) i));
                if (st.caps[i] != 0)
                        return outcome_set(o, ATTACK_ALLOWED, "%s=%016llx",
                                           proc_cap_set_to_string((enum proc_cap_set) i),
                                           (unsigned long long) st.caps[i]);
        }
        outcome_set(o, ATTACK_DENIED, "every capability set is empty");
}

/* --- mounts and namespaces ------------------------------------------------- */

static void attack_mount(struct attack_outcome *o)
{
        char dir[64];
        (void) snprintf(dir, sizeof(dir), "/tmp/.openenvd-probe-mnt-%d", (int) getpid());
        if (mkdir(dir, 0700) < 0)
                return outcome_errno(o, errno, (const int[]){ 0 }, "mkdir mount point");
        if (mount("none", dir, "tmpfs", 0, "size=4k") < 0) {
                int err = errno;
                (void) rmdir(dir);
                return outcome_errno(o, err, deny_perm, "mount tmpfs");
        }
        (void) umount2(dir, MNT_DETACH);
        (void) rmdir(dir);
        outcome_set(o, ATTACK_ALLOWED, "mounted a tmpfs");
}

static void attack_fsopen(struct attack_outcome *o)
{
        int fd = (int) syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
        if (fd < 0)
                return outcome_errno(o, errno, deny_perm, "fsopen");
        safe_close(fd);
        outcome_set(o, ATTACK_ALLOWED, "fsopen(tmpfs) succeeded");
}

static void attack_umount(const char *path, struct attack_outcome *o)
{
        /* EINVAL: not a mount point, so nothing was (or could be) removed. */
        if (umount2(path, MNT_DETACH) < 0)
                return outcome_errno(o, errno, (const int[]){ EPERM, EACCES, EINVAL, ENOENT, 0 },
                                     "umount");
        outcome_set(o, ATTACK_ALLOWED, "unmounted %s", path);
}

static void attack_unshare(const char *arg, struct attack_outcome *o)
{
        int flags = streq(arg, "user")    ? CLONE_NEWUSER
                    : streq(arg, "mount") ? CLONE_NEWNS
                    : streq(arg, "net")   ? CLONE_NEWNET
                    : streq(arg, "pid")   ? CLONE_NEWPID
                                          : 0;
        if (!flags)
                return outcome_set(o, ATTACK_ERROR, "unknown namespace '%s'", arg);
        if (unshare(flags) < 0)
                return outcome_errno(o, errno, (const int[]){ EPERM, EACCES, EUSERS, ENOSPC, 0 },
                                     "unshare");
        outcome_set(o, ATTACK_ALLOWED, "unshare(%s) succeeded", arg);
}

static void attack_setns(const char *path, struct attack_outcome *o)
{
        cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return outcome_errno(o, errno, deny_access, "open");
        if (setns(fd, 0) < 0)
                return outcome_errno(o, errno, deny_perm, "setns");
        outcome_set(o, ATTACK_ALLOWED, "setns(%s) succeeded", path);
}

static void attack_ptrace_attach(const char *arg, struct attack_outcome *o)
{
        int pid;
        if (parse_int(arg, 1, INT32_MAX, &pid) < 0)
                return outcome_set(o, ATTACK_ERROR, "bad pid '%s'", arg);
        /* SEIZE, not ATTACH: same permission check (ptrace_may_access with
         * PTRACE_MODE_ATTACH_REALCREDS) but no SIGSTOP, and our exit detaches,
         * so a success leaves the target running untouched. */
        if (ptrace(PTRACE_SEIZE, pid, NULL, NULL) < 0)
                return outcome_errno(o, errno, (const int[]){ EPERM, EACCES, ESRCH, 0 },
                                     "PTRACE_SEIZE");
        outcome_set(o, ATTACK_ALLOWED, "attached to pid %d", pid);
}

static void attack_ptrace_traceme(struct attack_outcome *o)
{
        if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
                return outcome_errno(o, errno, deny_perm, "PTRACE_TRACEME");
        outcome_set(o, ATTACK_ALLOWED, "PTRACE_TRACEME succeeded");
}

/* --- kernel interfaces ---------------------------------------------------- */

static void attack_bpf(struct attack_outcome *o)
{
        /* The smallest valid program: r0 = 0; exit. A socket filter is the
         * one type unprivileged users could ever load. */
        struct bpf_insn insns[] = {
                { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
                { .code = BPF_JMP | BPF_EXIT },
        };
        union bpf_attr attr;
        static const char license[] = "GPL";

        memset(&attr, 0, sizeof(attr));
        attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
        attr.insn_cnt = ELEMENTSOF(insns);
        attr.insns = (uint64_t) (uintptr_t) insns;
        attr.license = (uint64_t) (uintptr_t) license;
        int fd = (int) syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
        if (fd < 0)
                return outcome_errno(o, errno, deny_perm, "bpf(BPF_PROG_LOAD)");
        safe_close(fd);
        outcome_set(o, ATTACK_ALLOWED, "loaded a BPF program");
}

static void attack_perf_event(struct attack_outcome *o)
{
        struct perf_event_attr attr = {
                .type = PERF_TYPE_SOFTWARE,
                .size = sizeof(attr),
                .config = PERF_COUNT_SW_CPU_CLOCK,
                .disabled = 1,
                .exclude_kernel = 1,
                .exclude_hv = 1,
        };
        int fd = (int) syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd < 0)
                return outcome_errno(o, errno, (const int[]){ EPERM, EACCES, ENOSYS, 0 },
                                     "perf_event_open");
        safe_close(fd);
        outcome_set(o, ATTACK_ALLOWED, "opened a perf event");
}

static void attack_keyctl(struct attack_outcome *o)
{
        long r = syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL);
        if (r < 0)
                return outcome_errno(o, errno, (const int[]){ EPERM, EACCES, ENOSYS, 0 }, "keyctl");
        outcome_set(o, ATTACK_ALLOWED, "joined a new session keyring (%ld)", r);
}

static void attack_io_uring(struct attack_outcome *o)
{
        struct io_uring_params p;
        memset(&p, 0, sizeof(p));
        int fd = (int) syscall(SYS_io_uring_setup, 1, &p);
        if (fd < 0)
                return outcome_errno(o, errno, (const int[]){ EPERM, EACCES, ENOSYS, 0 },
                                     "io_uring_setup");
        safe_close(fd);
        outcome_set(o, ATTACK_ALLOWED, "created an io_uring");
}

static void attack_mknod_char(const char *arg, struct attack_outcome *o)
{
        unsigned ma, mi;
        char path[64];

        if (sscanf(arg, "%u:%u", &ma, &mi) != 2)
                return outcome_set(o, ATTACK_ERROR, "bad device '%s'", arg);
        (void) snprintf(path, sizeof(path), "/tmp/.openenvd-probe-dev-%d", (int) getpid());
        if (mknod(path, S_IFCHR | 0600, makedev(ma, mi)) < 0)
                return outcome_errno(o, errno, deny_perm, "mknod");
        (void) unlink(path);
        outcome_set(o, ATTACK_ALLOWED, "created char device %u:%u", ma, mi);
}

/* --- secrets --------------------------------------------------------------- */

static int hex_decode(const char *hex, char *out, size_t size)
{
        size_t n = strlen(hex);
        if (n % 2 || n / 2 + 1 > size || n == 0)
                return -EINVAL;
        for (size_t i = 0; i < n / 2; i++) {
                unsigned v;
                char two[3] = { hex[2 * i], hex[2 * i + 1], 0 };
                if (sscanf(two, "%2x", &v) != 1)
                        return -EINVAL;
                out[i] = (char) v;
        }
        out[n / 2] = '\0';
        return (int) (n / 2);
}

static bool file_contains(int dirfd, const char *path, const char *needle, size_t nlen)
{
        cleanup_free char *data = NULL;
        size_t len;

        if (read_full_file_at(dirfd, path, (size_t) PROC_STATUS_MAX_BYTES, &data, &len) < 0)
                return false;
        return memmem(data, len, needle, nlen) != NULL;
}

/* The marker (passed hex-encoded, so our own argv never contains it) must
 * not appear in the environment or command line of any process we can see:
 * the real key is only ever held outside the zone. */
static void attack_find_secret(const char *hex, struct attack_outcome *o)
{
        char marker[128];
        int n = hex_decode(hex, marker, sizeof(marker));
        DIR *d;
        struct dirent *de;
        unsigned sources = 0;

        if (n <= 0)
                return outcome_set(o, ATTACK_ERROR, "bad marker");
        d = opendir("/proc");
        if (!d)
                return outcome_errno(o, errno, (const int[]){ 0 }, "opendir /proc");
        while ((de = readdir(d))) {
                int pid;
                char p[64];
                if (parse_int(de->d_name, 1, INT32_MAX, &pid) < 0)
                        continue;
                static const char *const files[] = { "environ", "cmdline" };
                for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                        (void) snprintf(p, sizeof(p), "/proc/%d/%s", pid, files[i]);
                        sources++;
                        if (file_contains(AT_FDCWD, p, marker, (size_t) n)) {
                                closedir(d);
                                return outcome_set(o, ATTACK_ALLOWED, "key found in %s", p);
                        }
                }
        }
        closedir(d);
        outcome_set(o, ATTACK_DENIED, "not found in %u process files", sources);
}

static void attack_inherited_fds(const struct attack_context *ctx, struct attack_outcome *o)
{
        if (ctx->first_inherited < -1)
                return outcome_set(o, ATTACK_ERROR, "/proc/self/fd could not be read");
        if (ctx->inherited_fds > 0)
                return outcome_set(o, ATTACK_ALLOWED, "%u inherited fds (first %d)",
                                   ctx->inherited_fds, ctx->first_inherited);
        if (ctx->dir_fds > 0)
                return outcome_set(o, ATTACK_ALLOWED, "a standard fd is a directory");
        outcome_set(o, ATTACK_DENIED, "only stdin/stdout/stderr, none a directory");
}

/* --- limits ----------------------------------------------------------------- */

/* Forks `count` children that wait for EOF on a pipe; a refused fork
 * (EAGAIN from pids.max) is the expected outcome. */
static void attack_fork_past_pids(const char *arg, struct attack_outcome *o)
{
        unsigned count, made = 0;
        int p[2];
        int err = 0;

        if (parse_uint(arg, 1, 100000, &count) < 0)
                return outcome_set(o, ATTACK_ERROR, "bad count '%s'", arg);
        if (pipe2(p, O_CLOEXEC) < 0)
                return outcome_errno(o, errno, (const int[]){ 0 }, "pipe");
        for (; made < count; made++) {
                pid_t pid = fork();
                if (pid < 0) {
                        err = errno;
                        break;
                }
                if (pid == 0) {
                        char c;
                        (void) close(p[1]);
                        while (read(p[0], &c, 1) < 0 && errno == EINTR)
                                ;
                        _exit(0);
                }
        }
        (void) close(p[1]);
        (void) close(p[0]);
        while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
                ;
        if (made == count)
                return outcome_set(o, ATTACK_ALLOWED, "forked %u processes", made);
        char b[16];
        if (err == EAGAIN)
                return outcome_set(o, ATTACK_DENIED, "fork refused after %u: EAGAIN", made);
        outcome_set(o, ATTACK_ERROR, "fork failed after %u: %s", made, attack_errno_name(err, b));
}

/* Touches `bytes` of anonymous memory, 1 MiB at a time. Being killed (OOM,
 * seen by attack_run) or refused memory is the expected outcome. */
static void attack_alloc_past_memory(const char *arg, struct attack_outcome *o)
{
        uint64_t bytes, done = 0;
        const size_t chunk = (size_t) 1024 * 1024;

        if (parse_uint64(arg, 1, UINT64_C(1) << 40, &bytes) < 0)
                return outcome_set(o, ATTACK_ERROR, "bad size '%s'", arg);
        while (done < bytes) {
                void *m = mmap(NULL, chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                               0);
                if (m == MAP_FAILED)
                        return outcome_errno(o, errno, (const int[]){ ENOMEM, 0 }, "mmap");
                memset(m, 0x5a, chunk);
                done += chunk;
        }
        outcome_set(o, ATTACK_ALLOWED, "touched %llu MiB", (unsigned long long) (done / chunk));
}

/* --- dispatch --------------------------------------------------------------- */

enum arg_need { ARG_NONE, ARG_REQUIRED };

static const struct {
        const char *kind;
        enum arg_need arg;
} kinds[] = {
        { "read", ARG_REQUIRED },
        { "write-dir", ARG_REQUIRED },
        { "write-file", ARG_REQUIRED },
        { "mkdir", ARG_REQUIRED },
        { "root-rw", ARG_REQUIRED },
        { "connect-tcp", ARG_REQUIRED },
        { "connect-unix", ARG_REQUIRED },
        { "proc-visible", ARG_NONE },
        { "kill", ARG_REQUIRED },
        { "uid", ARG_NONE },
        { "caps", ARG_NONE },
        { "mount", ARG_NONE },
        { "fsopen", ARG_NONE },
        { "umount", ARG_REQUIRED },
        { "unshare", ARG_REQUIRED },
        { "setns", ARG_REQUIRED },
        { "ptrace-attach", ARG_REQUIRED },
        { "ptrace-traceme", ARG_NONE },
        { "bpf", ARG_NONE },
        { "perf-event", ARG_NONE },
        { "keyctl", ARG_NONE },
        { "io-uring", ARG_NONE },
        { "mknod-char", ARG_REQUIRED },
        { "find-secret", ARG_REQUIRED },
        { "inherited-fds", ARG_NONE },
        { "fork-past-pids", ARG_REQUIRED },
        { "alloc-past-memory", ARG_REQUIRED },
};

bool attack_kind_known(const char *kind)
{
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++)
                if (streq(kinds[i].kind, kind))
                        return true;
        return false;
}

static void attack_dispatch(const char *k, const char *a, const struct attack_context *ctx,
                            struct attack_outcome *o)
{
        if (streq(k, "read"))
                attack_read(a, o);
        else if (streq(k, "write-dir"))
                attack_write_dir(a, o);
        else if (streq(k, "write-file"))
                attack_write_file(a, o);
        else if (streq(k, "mkdir"))
                attack_mkdir(a, o);
        else if (streq(k, "root-rw"))
                attack_root_rw(a, o);
        else if (streq(k, "connect-tcp"))
                attack_connect_tcp(a, o);
        else if (streq(k, "connect-unix"))
                attack_connect_unix(a, o);
        else if (streq(k, "proc-visible"))
                attack_proc_visible(o);
        else if (streq(k, "kill"))
                attack_kill(a, o);
        else if (streq(k, "uid"))
                attack_uid(o);
        else if (streq(k, "caps"))
                attack_caps(o);
        else if (streq(k, "mount"))
                attack_mount(o);
        else if (streq(k, "fsopen"))
                attack_fsopen(o);
        else if (streq(k, "umount"))
                attack_umount(a, o);
        else if (streq(k, "unshare"))
                attack_unshare(a, o);
        else if (streq(k, "setns"))
                attack_setns(a, o);
        else if (streq(k, "ptrace-attach"))
                attack_ptrace_attach(a, o);
        else if (streq(k, "ptrace-traceme"))
                attack_ptrace_traceme(o);
        else if (streq(k, "bpf"))
                attack_bpf(o);
        else if (streq(k, "perf-event"))
                attack_perf_event(o);
        else if (streq(k, "keyctl"))
                attack_keyctl(o);
        else if (streq(k, "io-uring"))
                attack_io_uring(o);
        else if (streq(k, "mknod-char"))
                attack_mknod_char(a, o);
        else if (streq(k, "find-secret"))
                attack_find_secret(a, o);
        else if (streq(k, "inherited-fds"))
                attack_inherited_fds(ctx, o);
        else if (streq(k, "fork-past-pids"))
                attack_fork_past_pids(a, o);
        else if (streq(k, "alloc-past-memory"))
                attack_alloc_past_memory(a, o);
        else
                outcome_set(o, ATTACK_ERROR, "unknown attack kind '%s'", k);
}

void attack_context_init(struct attack_context *ret)
{
        struct attack_context c = { .first_inherited = -1 };
        DIR *d = opendir("/proc/self/fd");
        struct dirent *de;

        if (!d) {
                c.first_inherited = -2; /* unknown: attack_inherited_fds reports an error */
                *ret = c;
                return;
        }
        while ((de = readdir(d))) {
                int fd;
                struct stat st;
                if (parse_int(de->d_name, 0, INT32_MAX, &fd) < 0 || fd == dirfd(d))
                        continue;
                if (fd > 2) {
                        c.inherited_fds++;
                        if (c.first_inherited < 0 || fd < c.first_inherited)
                                c.first_inherited = fd;
                } else if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
                        c.dir_fds++;
                }
        }
        closedir(d);
        *ret = c;
}

int attack_run(const char *kind, const char *arg, const struct attack_context *ctx,
               struct attack_outcome *ret)
{
        struct attack_outcome o = { .result = ATTACK_ERROR };
        int p[2], status = 0;
        char b[16];
        pid_t pid;

        if (pipe2(p, O_CLOEXEC) < 0) {
                int err = errno;
                outcome_set(ret, ATTACK_ERROR, "pipe: %s", attack_errno_name(err, b));
                return -err;
        }
        pid = fork();
        if (pid < 0) {
                int err = errno;
                (void) close(p[0]);
                (void) close(p[1]);
                outcome_set(ret, ATTACK_ERROR, "fork: %s", attack_errno_name(err, b));
                return -err;
        }
        if (pid == 0) {
                (void) close(p[0]);
                attack_dispatch(kind, arg ? arg : "", ctx, &o);
                (void) !write(p[1], &o, sizeof(o));
                _exit(0);
        }
        (void) close(p[1]);

        /* Bounded: a hung attempt is killed and reported, never waited on. */
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + ATTACK_TIMEOUT_USEC;
        ssize_t n = -1;
        bool timed_out = false;
        for (;;) {
                usec_t now = now_usec(CLOCK_MONOTONIC);
                if (now >= deadline) {
                        timed_out = true;
                        break;
                }
                struct pollfd pf = { .fd = p[0], .events = POLLIN };
                int k = poll(&pf, 1, (int) ((deadline - now + 999) / 1000));
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        continue;
                n = read(p[0], &o, sizeof(o));
                if (n < 0 && errno == EINTR)
                        continue;
                break;
        }
        (void) close(p[0]);
        if (timed_out)
                (void) kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;

        if (timed_out) {
                outcome_set(&o, ATTACK_ERROR, "timed out after %llu s",
                            (unsigned long long) (ATTACK_TIMEOUT_USEC / USEC_PER_SEC));
        } else if (n != (ssize_t) sizeof(o)) {
                if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL &&
                    streq(kind, "alloc-past-memory"))
                        /* The memory cgroup's OOM killer: the limit held. */
                        outcome_set(&o, ATTACK_DENIED, "killed by SIGKILL (out of memory)");
                else if (WIFSIGNALED(status))
                        outcome_set(&o, ATTACK_ERROR, "attempt killed by signal %d",
                                    WTERMSIG(status));
                else
                        outcome_set(&o, ATTACK_ERROR, "attempt reported nothing (exit %d)",
                                    WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        } else {
                o.detail[sizeof(o.detail) - 1] = '\0';
                if ((unsigned) o.result >= _ATTACK_RESULT_MAX)
                        outcome_set(&o, ATTACK_ERROR, "garbled outcome");
        }
        *ret = o;
        return 0;
}
