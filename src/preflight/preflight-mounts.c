/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The preflight checks that mount: each runs in a forked child (preflight.c
 * forks, times out and reports it) inside a private mount namespace, so
 * nothing it mounts ever reaches the host's mount table.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/util.h"
#include "preflight/preflight-internal.h"

#ifndef MS_NOSYMFOLLOW
#define MS_NOSYMFOLLOW 256
#endif

/* ---- mounts (in the child's private mount namespace) ---- */

static const char *scratch_dir(void)
{
        struct stat st;
        /* Any existing directory works: the tmpfs is mounted over it in the
         * child's own mount namespace only. */
        if (stat("/tmp", &st) == 0 && S_ISDIR(st.st_mode))
                return "/tmp";
        return "/dev";
}

static int private_scratch(const char *dir, int *err)
{
        if (unshare(CLONE_NEWNS) < 0) {
                *err = errno;
                return PREFLIGHT_STEP_UNSHARE_NS;
        }
        /* Nothing we mount may propagate back to the host. */
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
                *err = errno;
                return PREFLIGHT_STEP_MAKE_PRIVATE;
        }
        if (mount("openenvd-preflight", dir, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0700") <
            0) {
                *err = errno;
                return PREFLIGHT_STEP_MOUNT_TMPFS;
        }
        return PREFLIGHT_STEP_OK;
}

void preflight_mount_paths_init(struct preflight_mount_paths *m)
{
        const char *d = scratch_dir();
        snprintf(m->dir, sizeof(m->dir), "%s", d);
        snprintf(m->lower, sizeof(m->lower), "%s/l", d);
        snprintf(m->upper, sizeof(m->upper), "%s/u", d);
        snprintf(m->work, sizeof(m->work), "%s/w", d);
        snprintf(m->merged, sizeof(m->merged), "%s/m", d);
        snprintf(m->file, sizeof(m->file), "%s/m/f", d);
        snprintf(m->upper_file, sizeof(m->upper_file), "%s/u/f", d);
        snprintf(m->link, sizeof(m->link), "%s/m/link", d);
        snprintf(m->opts, sizeof(m->opts), "lowerdir=%s,upperdir=%s,workdir=%s", m->lower, m->upper,
                 m->work);
}

int preflight_child_overlay(const void *userdata, int *err)
{
        const struct preflight_mount_paths *m = userdata;
        const char *dirs[] = { m->lower, m->upper, m->work, m->merged };
        int step = private_scratch(m->dir, err), fd;

        if (step != PREFLIGHT_STEP_OK)
                return step;
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++)
                if (mkdir(dirs[i], 0700) < 0) {
                        *err = errno;
                        return PREFLIGHT_STEP_MKDIR;
                }
        if (mount("overlay", m->merged, "overlay", 0, m->opts) < 0) {
                *err = errno;
                return PREFLIGHT_STEP_MOUNT_OVERLAY;
        }
        fd = open(m->file, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0) {
                *err = errno;
                return PREFLIGHT_STEP_OVERLAY_WRITE;
        }
        close(fd);
        if (access(m->upper_file, F_OK) < 0) {
                *err = errno;
                return PREFLIGHT_STEP_OVERLAY_COPY_UP;
        }
        return PREFLIGHT_STEP_OK;
}

int preflight_child_nosymfollow(const void *userdata, int *err)
{
        const struct preflight_mount_paths *m = userdata;
        int step = private_scratch(m->dir, err), fd;

        if (step != PREFLIGHT_STEP_OK)
                return step;
        if (mkdir(m->merged, 0700) < 0) {
                *err = errno;
                return PREFLIGHT_STEP_MKDIR;
        }
        if (symlink("/", m->link) < 0) {
                *err = errno;
                return PREFLIGHT_STEP_SYMLINK;
        }
        if (mount(m->merged, m->merged, NULL, MS_BIND, NULL) < 0) {
                *err = errno;
                return PREFLIGHT_STEP_BIND;
        }
        /* Keep the flags the tmpfs was mounted with: in a user namespace they
         * are locked and a remount dropping them fails with EPERM. */
        if (mount(NULL, m->merged, NULL,
                  MS_REMOUNT | MS_BIND | MS_NOSYMFOLLOW | MS_NOSUID | MS_NODEV, NULL) < 0) {
                *err = errno;
                return PREFLIGHT_STEP_REMOUNT_NOSYMFOLLOW;
        }
        /* Prove it: the kernel must refuse to follow the link now. */
        fd = open(m->link, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0) {
                close(fd);
                *err = 0;
                return PREFLIGHT_STEP_SYMLINK_FOLLOWED;
        }
        if (errno != ELOOP) {
                *err = errno;
                return PREFLIGHT_STEP_SYMLINK_FOLLOWED;
        }
        return PREFLIGHT_STEP_OK;
}

int preflight_child_pivot_root(const void *userdata, int *err)
{
        const struct preflight_mount_paths *m = userdata;
        int step = private_scratch(m->dir, err);

        if (step != PREFLIGHT_STEP_OK)
                return step;
        /* Every container's root is entered this way; Docker's default
         * seccomp profile has no pivot_root at all. */
        if (mkdir(m->merged, 0700) < 0) {
                *err = errno;
                return PREFLIGHT_STEP_MKDIR;
        }
        if (syscall(SYS_pivot_root, m->dir, m->merged) < 0) {
                *err = errno;
                return PREFLIGHT_STEP_PIVOT_ROOT;
        }
        return PREFLIGHT_STEP_OK;
}

/* ---- a fresh proc and sysfs in a user namespace, as every container gets ---- */

/* A new user namespace, without an id map: its capabilities are what the
 * mounts need. (Mapping ourselves, root, would need CAP_SETFCAP since Linux
 * 5.12, which the daemon does not: its containers map other ids.) */
static int enter_userns(int *err)
{
        if (unshare(CLONE_NEWUSER) < 0) {
                *err = errno;
                return PREFLIGHT_STEP_UNSHARE_USER;
        }
        return PREFLIGHT_STEP_OK;
}

/* fsopen + create + fsmount, the way the launcher mounts them. fsmount is
 * where the kernel refuses an instance that would reveal more than one
 * already visible in this mount namespace (mount_too_revealing(): Docker's
 * masked paths cover the container's /proc and /sys). */
static int new_instance(const char *type, unsigned attr, int *err)
{
        int fs = fsopen(type, FSOPEN_CLOEXEC), mnt;

        if (fs < 0) {
                *err = errno;
                return PREFLIGHT_STEP_FSOPEN;
        }
        if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
                *err = errno;
                close(fs);
                return PREFLIGHT_STEP_FSCONFIG;
        }
        mnt = fsmount(fs, FSMOUNT_CLOEXEC, attr);
        *err = errno;
        close(fs);
        if (mnt < 0)
                return PREFLIGHT_STEP_FSMOUNT;
        close(mnt);
        return PREFLIGHT_STEP_OK;
}

int preflight_child_procfs(const void *userdata, int *err)
{
        struct child_report c = { .step = PREFLIGHT_STEP_FORK_PID1 };
        int p[2], step = enter_userns(err);
        pid_t pid;

        (void) userdata;
        if (step != PREFLIGHT_STEP_OK)
                return step;
        if (unshare(CLONE_NEWNS | CLONE_NEWPID) < 0) {
                *err = errno;
                return PREFLIGHT_STEP_UNSHARE_PID;
        }
        /* A proc instance shows the pid namespace of the task mounting it:
         * the new one's pid 1 mounts it, and reports over a pipe. */
        if (pipe2(p, O_CLOEXEC) < 0) {
                *err = errno;
                return PREFLIGHT_STEP_FORK_PID1;
        }
        pid = fork();
        if (pid < 0) {
                *err = errno;
                return PREFLIGHT_STEP_FORK_PID1;
        }
        if (pid == 0) {
                c.step = new_instance(
                        "proc", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, &c.err);
                (void) !write(p[1], &c, sizeof(c));
                _exit(0);
        }
        close(p[1]);
        if (read(p[0], &c, sizeof(c)) != (ssize_t) sizeof(c))
                c = (struct child_report){ PREFLIGHT_STEP_FORK_PID1, ECHILD };
        close(p[0]);
        (void) waitpid(pid, NULL, 0);
        *err = c.err;
        return c.step;
}

int preflight_child_sysfs(const void *userdata, int *err)
{
        int step = enter_userns(err);

        (void) userdata;
        if (step != PREFLIGHT_STEP_OK)
                return step;
        /* sysfs shows the network namespace of the task mounting it. */
        if (unshare(CLONE_NEWNS | CLONE_NEWNET) < 0) {
                *err = errno;
                return PREFLIGHT_STEP_UNSHARE_NET;
        }
        return new_instance(
                "sysfs",
                MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, err);
}
