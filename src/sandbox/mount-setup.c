/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sandbox/mount-setup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/limits.h"
#include "base/macro.h"
#include "base/util.h"
#include "sandbox/mount-api.h"
#include "sandbox/netns-keep.h"

/*
 * Everything here runs in the cloned child, which owns a private copy of the
 * parent's mount table (made recursively private first) and is root of a new
 * user namespace. Every mount is made with the new mount API (fsopen/fsmount,
 * open_tree/move_mount, mount_setattr) on file descriptors: targets are
 * resolved with openat2(RESOLVE_IN_ROOT) under the new root, so a symlink in
 * the image can never redirect a mount onto the host.
 *
 * Mounts copied from the parent's namespace are "locked" by the kernel (we are
 * in a less privileged user namespace): their read-only/nosuid/nodev flags can
 * be added to but never cleared, and they can only be cloned recursively.
 * That is why every clone below uses AT_RECURSIVE.
 */

/* The new root is attached here in the child's private copy of the host's
 * mount table (nothing propagates out: "/" is made rprivate first, and the
 * kernel turned every shared mount into a slave when it copied the table
 * into a less privileged user namespace). Every host path the setup needs
 * (spec mount sources, devices) is opened before the attach, so covering
 * this directory hides nothing that is still needed. */
#define ATTACH_POINT  "/tmp"

#define SCAFFOLD_SIZE "1m" /* mount points and symlinks only */
#define DEV_SIZE      "64k"
#define RUN_SIZE      "64k"

static const char *const host_devices[] = { "null", "zero", "full", "random", "urandom", "tty" };

struct setup {
        const struct container_spec *spec;
        const struct container_policy *policy;
        struct container_step_error *err;
        int root_fd;                           /* top mount of the new root (attached) */
        int null_fd;                           /* O_PATH: host /dev/null, for file masks */
        int empty_fd;                          /* first attached empty ro tmpfs, for dir masks */
        int dev_fds[ELEMENTSOF(host_devices)]; /* O_PATH: host device nodes */
        int mount_fds[CONTAINER_MAX_MOUNTS];   /* detached, prepared spec mounts */
        int socket_fd;                         /* detached clone of spec->socket_dir */
        int seal_fds[CONTAINER_MAX_SCAFFOLDS + 2]; /* tmpfs made read-only before pivot */
        size_t n_seal;
        unsigned n_scaffolds;
};

static int fail(struct setup *s, enum container_step step, int index, int r)
{
        s->err->step = step;
        s->err->error = r < 0 ? -r : r;
        s->err->index = index;
        return r < 0 ? r : -r;
}

static int resolve_in(int dir_fd, const char *path)
{
        /* Targets are "absolute inside the container": strip the slashes, the
         * lookup is relative to (and confined in) the new root. */
        while (*path == '/')
                path++;
        return openat2_flags(dir_fd, *path ? path : ".", O_PATH, 0,
                             RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
}

static int reopen_root(struct setup *s)
{
        int fd = open(ATTACH_POINT, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        safe_close(s->root_fd);
        s->root_fd = fd;
        return 0;
}

/*
 * Covers dir_fd with a tmpfs that holds, for every original entry, a recursive
 * bind of it (directories, files, devices, sockets) or a copy (symlinks). The
 * view is unchanged except that new names can now be created in it; the image
 * underneath is not written. Returns the attached scaffold mount.
 */
static int scaffold(struct setup *s, int dir_fd)
{
        struct stat st;
        char m[16];

        if (s->n_scaffolds >= CONTAINER_MAX_SCAFFOLDS || s->n_seal >= ELEMENTSOF(s->seal_fds))
                return -E2BIG;
        if (fstat(dir_fd, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode))
                return -ENOTDIR;
        (void) snprintf(m, sizeof(m), "%o", (unsigned) (st.st_mode & 07777));
        const char *opts[] = { "mode", m, "size", SCAFFOLD_SIZE };
        int mnt =
                mount_fs_new("tmpfs", opts, ELEMENTSOF(opts), MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
        if (mnt < 0)
                return mnt;
        s->seal_fds[s->n_seal++] = mnt;
        s->n_scaffolds++;

        /* Opened before the cover: this fd keeps listing the original. */
        cleanup_close int orig = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (orig < 0)
                return -errno;
        int r = mount_attach_fd(mnt, dir_fd);
        if (r < 0)
                return r;

        /* Raw getdents64 rather than base/dir-walk.h: this runs in the
         * clone child that shares the daemon's memory (CLONE_VM), where
         * readdir()'s malloc is off limits; and it lists one level only. */
        char buf[4096] __attribute__((aligned(8)));
        unsigned n_entries = 0;
        for (;;) {
                long n = syscall(SYS_getdents64, orig, buf, sizeof(buf));
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                for (long off = 0; off < n;) {
                        struct {
                                unsigned long long d_ino;
                                long long d_off;
                                unsigned short d_reclen;
                                unsigned char d_type;
                                char d_name[];
                        } *de = (void *) (buf + off);
                        off += de->d_reclen;
                        const char *name = de->d_name;
                        if (streq(name, ".") || streq(name, ".."))
                                continue;
                        if (++n_entries > CONTAINER_SCAFFOLD_ENTRIES)
                                return -E2BIG;

                        struct stat est;
                        if (fstatat(orig, name, &est, AT_SYMLINK_NOFOLLOW) < 0)
                                return -errno;
                        if (S_ISLNK(est.st_mode)) {
                                char target[PATH_MAX];
                                ssize_t l = readlinkat(orig, name, target, sizeof(target) - 1);
                                if (l < 0)
                                        return -errno;
                                target[l] = '\0';
                                if (symlinkat(target, mnt, name) < 0)
                                        return -errno;
                                continue;
                        }
                        if (S_ISDIR(est.st_mode)) {
                                if (mkdirat(mnt, name, est.st_mode & 07777) < 0)
                                        return -errno;
                        } else if (mknodat(mnt, name, S_IFREG | 0600, 0) < 0) {
                                return -errno;
                        }
                        cleanup_close int src = mount_clone_at(orig, name, 0);
                        if (src < 0)
                                return src;
                        cleanup_close int dst = openat(mnt, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                        if (dst < 0)
                                return -errno;
                        r = mount_attach_fd(src, dst);
                        if (r < 0)
                                return r;
                }
        }
        return mnt;
}

/* Creates the missing components of rest (relative) under dir_fd. */
static int create_chain(int dir_fd, const char *rest, bool is_file)
{
        char path[PATH_MAX];
        cleanup_close int cur = -EBADF;
        int at = dir_fd;

        if (strlen(rest) >= sizeof(path))
                return -ENAMETOOLONG;
        memcpy(path, rest, strlen(rest) + 1);
        for (char *p = path, *next; p && *p; p = next) {
                next = strchr(p, '/');
                if (next)
                        *next++ = '\0';
                if (!*p)
                        continue;
                bool last = !next || !*next;
                if (last && is_file) {
                        if (mknodat(at, p, S_IFREG | 0644, 0) < 0 && errno != EEXIST)
                                return -errno;
                        return 0;
                }
                if (mkdirat(at, p, 0755) < 0 && errno != EEXIST)
                        return -errno;
                int fd = openat(at, p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0)
                        return -errno;
                safe_close(cur);
                cur = fd;
                at = cur;
        }
        return 0;
}

/* Opens (creating if missing, never in the image) the target of a mount. */
static int target_open(struct setup *s, const char *target, bool is_file)
{
        char anc[PATH_MAX];
        int fd = resolve_in(s->root_fd, target);
        if (fd != -ENOENT)
                return fd;

        size_t len = strlen(target);
        if (len >= sizeof(anc))
                return -ENAMETOOLONG;
        memcpy(anc, target, len + 1);

        /* Nearest existing ancestor; rest is what is missing below it. */
        cleanup_close int anc_fd = -EBADF;
        const char *rest = NULL;
        while (!rest) {
                char *slash = strrchr(anc, '/');
                if (!slash)
                        return -ENOENT;
                *slash = '\0';
                int r = resolve_in(s->root_fd, anc[0] ? anc : "/");
                if (r >= 0) {
                        anc_fd = r;
                        rest = target + (slash - anc) + 1;
                } else if (r != -ENOENT) {
                        return r;
                }
        }

        int r = create_chain(anc_fd, rest, is_file);
        if (r == -EROFS || r == -EACCES || r == -EPERM) {
                /* Read-only image (or a read-only bind): never write it;
                 * create the mount point in a scaffold instead. */
                int mnt = scaffold(s, anc_fd);
                if (mnt < 0)
                        return mnt;
                r = create_chain(mnt, rest, is_file);
                if (r < 0)
                        return r;
                /* The scaffold may sit on the root itself. */
                r = reopen_root(s);
        }
        if (r < 0)
                return r;
        return resolve_in(s->root_fd, target);
}

/* Mounts mnt_fd (consumed on success) at target under the new root. */
static int attach_at(struct setup *s, int mnt_fd, const char *target, bool is_file)
{
        cleanup_close int t = target_open(s, target, is_file);
        if (t < 0)
                return t;
        return mount_attach_fd(mnt_fd, t);
}

static int mask_one(struct setup *s, int dir_fd, const char *path)
{
        cleanup_close int t = resolve_in(dir_fd, path);
        struct stat st;
        int r;

        if (t == -ENOENT)
                return 0; /* nothing to hide */
        if (t < 0)
                return t;
        if (fstat(t, &st) < 0)
                return -errno;
        if (S_ISDIR(st.st_mode)) {
                if (s->empty_fd < 0) {
                        cleanup_close int e =
                                mount_tmpfs_new("4k", 0555,
                                                MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
                                                        MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
                        if (e < 0)
                                return e;
                        r = mount_attach_fd(e, t);
                        if (r < 0)
                                return r;
                        /* Attached now, so it can be cloned for the next dirs. */
                        s->empty_fd = TAKE_FD(e);
                        return 0;
                }
                cleanup_close int c = mount_clone_at(s->empty_fd, "", 0);
                if (c < 0)
                        return c;
                return mount_attach_fd(c, t);
        }
        cleanup_close int c = mount_clone_at(
                s->null_fd, "", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
        if (c < 0)
                return c;
        return mount_attach_fd(c, t);
}

static int setup_proc(struct setup *s)
{
        cleanup_close int proc = mount_fs_new(
                "proc", NULL, 0, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
        if (proc < 0)
                return fail(s, CONTAINER_STEP_PROC, -1, proc);
        int r = attach_at(s, proc, "/proc", false);
        if (r < 0)
                return fail(s, CONTAINER_STEP_PROC, -1, r);

        /* The principal is uid 1000 and holds no capability: let it bind low
         * ports in its own network namespace (what Docker sets too). Written
         * while /proc/sys is still writable, before the read-only bind; a
         * kept namespace got it when it was made (kernel-owned, we could
         * not write it). */
        if (!s->spec->netns) {
                r = write_string_file_at(proc, "sys/net/ipv4/ip_unprivileged_port_start", "0");
                if (r < 0)
                        return fail(s, CONTAINER_STEP_SYSCTL, -1, r);
        }

        return 0;
}

/* A procfs subtree made read-only: a read-only recursive clone over itself. */
static int readonly_one(struct setup *s, const char *path)
{
        cleanup_close int t = resolve_in(s->root_fd, path);
        if (t == -ENOENT)
                return 0; /* not on this kernel */
        if (t < 0)
                return t;
        cleanup_close int c = mount_clone_at(t, "",
                                             MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
                                                     MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
        if (c < 0)
                return c;
        return mount_attach_fd(c, t);
}

static const struct {
        const char *name, *target;
} dev_links[] = {
        { "ptmx", "pts/ptmx" },          { "fd", "/proc/self/fd" },
        { "stdin", "/proc/self/fd/0" },  { "stdout", "/proc/self/fd/1" },
        { "stderr", "/proc/self/fd/2" },
};

/* The fixed content of /dev into the tmpfs dev: host device binds (mknod is
 * impossible in a user namespace, and a device node on a tmpfs mounted
 * there would be unusable), symlinks, the pts and shm mount points.
 * dev_fds: O_PATH fds of the host's nodes, in host_devices order. On failure
 * *index is the device that failed (or -1). */
static int dev_fill(int dev, const int *dev_fds, int *index)
{
        for (size_t i = 0; i < ELEMENTSOF(host_devices); i++) {
                *index = (int) i;
                if (mknodat(dev, host_devices[i], S_IFREG | 0666, 0) < 0)
                        return -errno;
                cleanup_close int c =
                        mount_clone_at(dev_fds[i], "", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
                if (c < 0)
                        return c;
                cleanup_close int t = openat(dev, host_devices[i], O_PATH | O_NOFOLLOW | O_CLOEXEC);
                if (t < 0)
                        return -errno;
                int r = mount_attach_fd(c, t);
                if (r < 0)
                        return r;
        }
        *index = -1;
        for (size_t i = 0; i < ELEMENTSOF(dev_links); i++)
                if (symlinkat(dev_links[i].target, dev, dev_links[i].name) < 0)
                        return -errno;
        if (mkdirat(dev, "pts", 0755) < 0 || mkdirat(dev, "shm", 01777) < 0)
                return -errno;
        return 0;
}

/* O_PATH fds of the host's device nodes, for those of fds[] still < 0. */
static int dev_nodes_open(int *fds)
{
        for (size_t i = 0; i < ELEMENTSOF(host_devices); i++) {
                char path[32];
                if (fds[i] >= 0)
                        continue;
                (void) snprintf(path, sizeof(path), "/dev/%s", host_devices[i]);
                fds[i] = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                if (fds[i] < 0)
                        return -errno;
        }
        return 0;
}

int mount_dev_template(void)
{
        int fds[ELEMENTSOF(host_devices)];
        int index;

        for (size_t i = 0; i < ELEMENTSOF(host_devices); i++)
                fds[i] = -EBADF;
        int r = dev_nodes_open(fds);
        int dev =
                r < 0 ? r : mount_tmpfs_new(DEV_SIZE, 0755, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
        if (dev >= 0) {
                r = dev_fill(dev, fds, &index);
                if (r >= 0)
                        r = mount_set_attr(dev, MOUNT_ATTR_RDONLY, false);
                if (r < 0)
                        dev = safe_close(dev);
        }
        for (size_t i = 0; i < ELEMENTSOF(host_devices); i++)
                safe_close(fds[i]);
        return r < 0 ? r : dev;
}

static int setup_dev(struct setup *s, int template_fd)
{
        char shm_size[32];
        int r, index;
        int dev;

        /* A private copy of the template tree (read-only already); a kernel
         * that cannot clone a detached tree gets /dev built as below. */
        dev = template_fd >= 0 ? mount_clone_at(template_fd, "", 0) : -EBADF;
        if (dev >= 0) {
                r = attach_at(s, dev, "/dev", false);
                if (r < 0) {
                        safe_close(dev);
                        return fail(s, CONTAINER_STEP_DEV, -1, r);
                }
                /* dev stays open (closed by the exec): pts and shm below. */
        } else {
                /* The host's nodes not opened yet (a template was meant to
                 * be used): the host's /dev is still our /dev until the pivot. */
                r = dev_nodes_open(s->dev_fds);
                if (r < 0)
                        return fail(s, CONTAINER_STEP_DEVICES, -1, r);
                dev = mount_tmpfs_new(DEV_SIZE, 0755, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
                if (dev < 0)
                        return fail(s, CONTAINER_STEP_DEV, -1, dev);
                s->seal_fds[s->n_seal++] = dev; /* sealed read-only before pivot_root */
                r = attach_at(s, dev, "/dev", false);
                if (r < 0)
                        return fail(s, CONTAINER_STEP_DEV, -1, r);
                r = dev_fill(dev, s->dev_fds, &index);
                if (r < 0)
                        return fail(s, CONTAINER_STEP_DEV, index, r);
        }

        const char *pts_opts[] = { "ptmxmode", "0666", "mode", "0620", "gid", "5" };
        cleanup_close int pts = mount_fs_new("devpts", pts_opts, ELEMENTSOF(pts_opts),
                                             MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
        if (pts < 0)
                return fail(s, CONTAINER_STEP_DEV, -1, pts);
        cleanup_close int pts_t = openat(dev, "pts", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (pts_t < 0 || mount_attach_fd(pts, pts_t) < 0)
                return fail(s, CONTAINER_STEP_DEV, -1, -errno);

        (void) snprintf(shm_size, sizeof(shm_size), "%llu",
                        (unsigned long long) s->spec->tmp_bytes);
        cleanup_close int shm = mount_tmpfs_new(
                shm_size, 01777, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
        if (shm < 0)
                return fail(s, CONTAINER_STEP_DEV, -1, shm);
        cleanup_close int shm_t = openat(dev, "shm", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (shm_t < 0)
                return fail(s, CONTAINER_STEP_DEV, -1, -errno);
        r = mount_attach_fd(shm, shm_t);
        if (r < 0)
                return fail(s, CONTAINER_STEP_DEV, -1, r);
        return 0;
}

static int setup_sys(struct setup *s)
{
        /* Allowed in a user namespace because we own the network namespace
         * whose /sys/class/net it shows (only lo). A kept namespace is not
         * ours: its sysfs was made with it, and we clone that (a detached
         * mount: nothing of the host's tree comes along). */
        cleanup_close int sys =
                s->spec->netns ? mount_clone_at(kept_netns_sysfs_fd(s->spec->netns), "", 0)
                               : mount_fs_new("sysfs", NULL, 0,
                                              MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
                                                      MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
        if (sys < 0)
                return fail(s, CONTAINER_STEP_SYS, -1, sys);
        int r = attach_at(s, sys, "/sys", false);
        if (r < 0)
                return fail(s, CONTAINER_STEP_SYS, -1, r);
        /* /sys/fs/cgroup stays an empty read-only directory: the container
         * sees no cgroup file system at all, so it cannot write any. */
        return 0;
}

static int setup_tmp_run(struct setup *s)
{
        char size[32];
        (void) snprintf(size, sizeof(size), "%llu", (unsigned long long) s->spec->tmp_bytes);

        cleanup_close int tmp = mount_tmpfs_new(size, 01777, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
        if (tmp < 0)
                return fail(s, CONTAINER_STEP_TMP, -1, tmp);
        int r = attach_at(s, tmp, "/tmp", false);
        if (r < 0)
                return fail(s, CONTAINER_STEP_TMP, -1, r);

        /* A fresh /run hides the host's runtime sockets (a read-only mount
         * does not stop connect() on a unix socket) and holds the socket dir. */
        int run = mount_tmpfs_new(RUN_SIZE, 0755,
                                  MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
        if (run < 0)
                return fail(s, CONTAINER_STEP_RUN, -1, run);
        s->seal_fds[s->n_seal++] = run;
        r = attach_at(s, run, "/run", false);
        if (r < 0)
                return fail(s, CONTAINER_STEP_RUN, -1, r);
        if (mkdirat(run, "openenvd", 0755) < 0)
                return fail(s, CONTAINER_STEP_RUN, -1, -errno);
        if (s->socket_fd >= 0) {
                cleanup_close int t = openat(run, "openenvd", O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (t < 0)
                        return fail(s, CONTAINER_STEP_RUN, -1, -errno);
                r = mount_attach_fd(s->socket_fd, t);
                if (r < 0)
                        return fail(s, CONTAINER_STEP_RUN, -1, r);
        }
        return 0;
}

/* Spec mounts are prepared (sources opened, file systems created) while the
 * host's paths are all still visible, i.e. before the new root is attached. */
static int prepare_mount(const struct mount_entry *m, int bind_src)
{
        unsigned long long attr = mount_attr_from_flags(m->flags);
        char size[32], mode[16];

        switch (m->kind) {
        case MOUNT_BIND:
                return mount_clone_at(bind_src, "", attr);
        case MOUNT_TMPFS: {
                (void) snprintf(size, sizeof(size), "%llu", (unsigned long long) m->size_bytes);
                (void) snprintf(mode, sizeof(mode), "%o",
                                (unsigned) ((m->mode ? m->mode : 0755) & 07777));
                const char *opts[] = { "mode", mode, "size", size };
                return mount_fs_new("tmpfs", opts, ELEMENTSOF(opts), attr);
        }
        case MOUNT_OVERLAY: {
                /* userxattr: trusted.* xattrs are out of reach in a user
                 * namespace; overlayfs keeps its metadata in user.* then. */
                const char *opts[] = { "lowerdir", m->source, "upperdir",  m->upper,
                                       "workdir",  m->work,   "userxattr", NULL };
                return mount_fs_new("overlay", opts, ELEMENTSOF(opts), attr);
        }
        }
        return -EINVAL;
}

int mount_sources_open(const struct container_spec *spec, struct mount_sources *ret,
                       struct container_step_error *err)
{
        struct mount_sources src = { .rootfs = -EBADF,
                                     .socket_dir = -EBADF,
                                     .dev_template = -EBADF };
        struct setup s = { .spec = spec, .err = err };

        for (size_t i = 0; i < ELEMENTSOF(src.binds); i++)
                src.binds[i] = -EBADF;
        src.rootfs = open(spec->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (src.rootfs < 0)
                return fail(&s, CONTAINER_STEP_ROOTFS, -1, -errno);
        if (spec->socket_dir) {
                src.socket_dir =
                        open(spec->socket_dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (src.socket_dir < 0)
                        return fail(&s, CONTAINER_STEP_RUN, -1, -errno);
        }
        for (size_t i = 0; i < spec->n_mounts; i++) {
                if (spec->mounts[i].kind != MOUNT_BIND)
                        continue;
                /* O_NOFOLLOW: a source whose last component was swapped
                 * for a symlink is refused. */
                src.binds[i] = open(spec->mounts[i].source, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                if (src.binds[i] < 0)
                        return fail(&s, CONTAINER_STEP_MOUNT_SOURCE, (int) i, -errno);
        }
        *ret = src;
        return 0;
}

int mount_setup(const struct container_spec *spec, const struct container_policy *policy,
                const struct mount_sources *src, struct container_step_error *err)
{
        struct setup s = {
                .spec = spec,
                .policy = policy,
                .err = err,
                .root_fd = -EBADF,
                .null_fd = -EBADF,
                .empty_fd = -EBADF,
                .socket_fd = -EBADF,
        };
        int r;

        /* Nothing mounted below may ever propagate to the host. */
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return fail(&s, CONTAINER_STEP_MOUNT_PRIVATE, -1, -errno);

        unsigned long long root_attr = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
        if (!(spec->weaken & WEAKEN_WRITABLE_ROOT))
                root_attr |= MOUNT_ATTR_RDONLY;
        s.root_fd = mount_clone_at(src->rootfs, "", root_attr);
        if (s.root_fd < 0)
                return fail(&s, CONTAINER_STEP_ROOTFS, -1, s.root_fd);

        for (size_t i = 0; i < spec->n_mounts; i++) {
                s.mount_fds[i] = prepare_mount(&spec->mounts[i], src->binds[i]);
                if (s.mount_fds[i] < 0)
                        return fail(&s, CONTAINER_STEP_MOUNT_SOURCE, (int) i, s.mount_fds[i]);
                /* Its clone holds the mount now. The sources are this
                 * child's own fds (mount_sources_open() ran here), so a view
                 * of many binds costs one fd per bind at a time, not two:
                 * the daemon may run under a small RLIMIT_NOFILE. */
                if (src->binds[i] >= 0)
                        (void) close(src->binds[i]);
        }
        if (src->socket_dir >= 0) {
                s.socket_fd =
                        mount_clone_at(src->socket_dir, "",
                                       MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
                if (s.socket_fd < 0)
                        return fail(&s, CONTAINER_STEP_RUN, -1, s.socket_fd);
        }
        /* With a /dev template only null is needed (file masks); setup_dev()
         * opens the others if the template cannot be cloned after all. */
        for (size_t i = 0; i < ELEMENTSOF(host_devices); i++)
                s.dev_fds[i] = -EBADF;
        if (src->dev_template >= 0) {
                s.dev_fds[0] = open("/dev/null", O_PATH | O_NOFOLLOW | O_CLOEXEC);
                r = s.dev_fds[0] < 0 ? -errno : 0;
        } else {
                r = dev_nodes_open(s.dev_fds);
        }
        if (r < 0)
                return fail(&s, CONTAINER_STEP_DEVICES, -1, r);
        s.null_fd = s.dev_fds[0];

        cleanup_close int attach = open(ATTACH_POINT, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (attach < 0)
                return fail(&s, CONTAINER_STEP_ATTACH_ROOT, -1, -errno);
        r = mount_attach_fd(s.root_fd, attach);
        if (r < 0)
                return fail(&s, CONTAINER_STEP_ATTACH_ROOT, -1, r);

        container_mark(spec, CONTAINER_MARK_ROOT);
        r = setup_proc(&s);
        if (r < 0)
                return r;
        container_mark(spec, CONTAINER_MARK_PROC);
        r = setup_dev(&s, src->dev_template);
        if (r < 0)
                return r;
        container_mark(spec, CONTAINER_MARK_DEV);
        r = setup_sys(&s);
        if (r < 0)
                return r;
        container_mark(spec, CONTAINER_MARK_SYS);
        r = setup_tmp_run(&s);
        if (r < 0)
                return r;
        container_mark(spec, CONTAINER_MARK_TMP_RUN);

        for (size_t i = 0; i < spec->n_mounts; i++) {
                const struct mount_entry *m = &spec->mounts[i];
                cleanup_close int t = target_open(&s, m->target, m->is_file);
                if (t < 0)
                        return fail(&s, CONTAINER_STEP_MOUNT_TARGET, (int) i, t);
                r = mount_attach_fd(s.mount_fds[i], t);
                if (r < 0)
                        return fail(&s, CONTAINER_STEP_MOUNT, (int) i, r);
        }

        container_mark(spec, CONTAINER_MARK_SPEC_MOUNTS);
        /* The policy last, over everything mounted so far: paths are inside
         * ones, resolved in the new root (/proc and /sys are mounted). */
        for (size_t i = 0; policy->readonly && policy->readonly[i]; i++) {
                r = readonly_one(&s, policy->readonly[i]);
                if (r < 0)
                        return fail(&s, CONTAINER_STEP_PROC, (int) i, r);
        }
        for (size_t i = 0; policy->masked && policy->masked[i]; i++) {
                r = mask_one(&s, s.root_fd, policy->masked[i]);
                if (r < 0)
                        return fail(&s, CONTAINER_STEP_MASK, (int) i, r);
        }

        container_mark(spec, CONTAINER_MARK_POLICY);
        /* Setup tmpfs (/dev, /run, scaffolds) become read-only now that every
         * mount point in them exists. */
        for (size_t i = 0; i < s.n_seal; i++) {
                r = mount_set_attr(s.seal_fds[i], MOUNT_ATTR_RDONLY, false);
                if (r < 0)
                        return fail(&s, CONTAINER_STEP_SEAL, (int) i, r);
        }

        /* pivot_root(".", ".") stacks the old root on top of the new one;
         * detaching "." then removes it and every host mount below it
         * (the kernel allows detaching the locked tree as a whole). */
        if (fchdir(s.root_fd) < 0)
                return fail(&s, CONTAINER_STEP_PIVOT_ROOT, -1, -errno);
        if (syscall(SYS_pivot_root, ".", ".") < 0)
                return fail(&s, CONTAINER_STEP_PIVOT_ROOT, -1, -errno);
        if (umount2(".", MNT_DETACH) < 0)
                return fail(&s, CONTAINER_STEP_PIVOT_ROOT, -1, -errno);
        if (chdir("/") < 0)
                return fail(&s, CONTAINER_STEP_PIVOT_ROOT, -1, -errno);
        container_mark(spec, CONTAINER_MARK_PIVOT);
        return 0;
}
