/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel's own interfaces: mount and the new mount API, namespaces,
 * BPF, perf events, keyrings, io_uring and device nodes must all be
 * refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/mount.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/util.h"
#include "probe/attack-internal.h"

void attack_mount(struct attack_outcome *o)
{
        char dir[64];
        (void) snprintf(dir, sizeof(dir), "/tmp/.openenvd-probe-mnt-%d", (int) getpid());
        if (mkdir(dir, 0700) < 0)
                return attack_outcome_errno(o, errno, (const int[]){ 0 }, "mkdir mount point");
        if (mount("none", dir, "tmpfs", 0, "size=4k") < 0) {
                int err = errno;
                (void) rmdir(dir);
                return attack_outcome_errno(o, err, attack_deny_perm, "mount tmpfs");
        }
        (void) umount2(dir, MNT_DETACH);
        (void) rmdir(dir);
        attack_outcome_set(o, ATTACK_ALLOWED, "mounted a tmpfs");
}

void attack_fsopen(struct attack_outcome *o)
{
        int fd = (int) syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
        if (fd < 0)
                return attack_outcome_errno(o, errno, attack_deny_perm, "fsopen");
        safe_close(fd);
        attack_outcome_set(o, ATTACK_ALLOWED, "fsopen(tmpfs) succeeded");
}

void attack_umount(const char *path, struct attack_outcome *o)
{
        /* EINVAL: not a mount point, so nothing was (or could be) removed. */
        if (umount2(path, MNT_DETACH) < 0)
                return attack_outcome_errno(
                        o, errno, (const int[]){ EPERM, EACCES, EINVAL, ENOENT, 0 }, "umount");
        attack_outcome_set(o, ATTACK_ALLOWED, "unmounted %s", path);
}

void attack_unshare(const char *arg, struct attack_outcome *o)
{
        int flags = streq(arg, "user")    ? CLONE_NEWUSER
                    : streq(arg, "mount") ? CLONE_NEWNS
                    : streq(arg, "net")   ? CLONE_NEWNET
                    : streq(arg, "pid")   ? CLONE_NEWPID
                                          : 0;
        if (!flags)
                return attack_outcome_set(o, ATTACK_ERROR, "unknown namespace '%s'", arg);
        if (unshare(flags) < 0)
                return attack_outcome_errno(
                        o, errno, (const int[]){ EPERM, EACCES, EUSERS, ENOSPC, 0 }, "unshare");
        attack_outcome_set(o, ATTACK_ALLOWED, "unshare(%s) succeeded", arg);
}

void attack_setns(const char *path, struct attack_outcome *o)
{
        cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return attack_outcome_errno(o, errno, attack_deny_access, "open");
        if (setns(fd, 0) < 0)
                return attack_outcome_errno(o, errno, attack_deny_perm, "setns");
        attack_outcome_set(o, ATTACK_ALLOWED, "setns(%s) succeeded", path);
}

void attack_bpf(struct attack_outcome *o)
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
                return attack_outcome_errno(o, errno, attack_deny_perm, "bpf(BPF_PROG_LOAD)");
        safe_close(fd);
        attack_outcome_set(o, ATTACK_ALLOWED, "loaded a BPF program");
}

void attack_perf_event(struct attack_outcome *o)
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
                return attack_outcome_errno(o, errno, (const int[]){ EPERM, EACCES, ENOSYS, 0 },
                                            "perf_event_open");
        safe_close(fd);
        attack_outcome_set(o, ATTACK_ALLOWED, "opened a perf event");
}

void attack_keyctl(struct attack_outcome *o)
{
        long r = syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL);
        if (r < 0)
                return attack_outcome_errno(o, errno, (const int[]){ EPERM, EACCES, ENOSYS, 0 },
                                            "keyctl");
        attack_outcome_set(o, ATTACK_ALLOWED, "joined a new session keyring (%ld)", r);
}

void attack_io_uring(struct attack_outcome *o)
{
        struct io_uring_params p;
        memset(&p, 0, sizeof(p));
        int fd = (int) syscall(SYS_io_uring_setup, 1, &p);
        if (fd < 0)
                return attack_outcome_errno(o, errno, (const int[]){ EPERM, EACCES, ENOSYS, 0 },
                                            "io_uring_setup");
        safe_close(fd);
        attack_outcome_set(o, ATTACK_ALLOWED, "created an io_uring");
}

void attack_mknod_char(const char *arg, struct attack_outcome *o)
{
        unsigned ma, mi;
        char path[64];

        if (sscanf(arg, "%u:%u", &ma, &mi) != 2)
                return attack_outcome_set(o, ATTACK_ERROR, "bad device '%s'", arg);
        (void) snprintf(path, sizeof(path), "/tmp/.openenvd-probe-dev-%d", (int) getpid());
        if (mknod(path, S_IFCHR | 0600, makedev(ma, mi)) < 0)
                return attack_outcome_errno(o, errno, attack_deny_perm, "mknod");
        (void) unlink(path);
        attack_outcome_set(o, ATTACK_ALLOWED, "created char device %u:%u", ma, mi);
}
