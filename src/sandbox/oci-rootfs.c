/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The bundle on the host: the container's read-only root (an overlay whose
 * upper layer holds only the mount points the image lacks) and, at the end,
 * the bundle's removal, name by name.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/util.h"
#include "sandbox/oci-internal.h"

/*
 * The runtime needs a root it can pivot onto; "/" itself cannot be. Bind the
 * image root (not recursively) and make the bind private, read-only, nosuid
 * and nodev. Not recursive on purpose: this bind lives in the caller's mount
 * namespace, and a recursive bind of "/" would capture every other live
 * container's root bind (mount trees growing with each container, and
 * rootfs dirs that can no longer be removed: EBUSY). The runtime mounts
 * /proc, /dev, /sys, /tmp and /run itself; other submounts of the image
 * root are not visible inside.
 * runc's own root.readonly would remount only the top mount anyway.
 */
/* Creates, in the upper layer root, every mount destination of spec that
 * the image (lower) lacks: directories, or empty files for file binds.
 * Destinations the image has are left to it, modes and owners included. */
static int rootfs_add_mountpoints(const struct container_spec *spec, const char *root)
{
        cleanup_close int rfd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        cleanup_close int lfd = open(spec->rootfs, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        static const char *const fixed[] = { "run", "proc", "dev", "sys", "tmp" };

        if (rfd < 0 || lfd < 0)
                return -errno;
        for (size_t i = 0; i < ELEMENTSOF(fixed); i++)
                if (faccessat(lfd, fixed[i], F_OK, AT_SYMLINK_NOFOLLOW) < 0 &&
                    mkdirat(rfd, fixed[i], 0755) < 0 && errno != EEXIST)
                        return -errno;
        for (size_t i = 0; i < spec->n_mounts; i++) {
                const struct mount_entry *m = &spec->mounts[i];
                const char *rel = m->target + strspn(m->target, "/");
                cleanup_free char *dir = xstrdup(rel);
                char *slash = strrchr(dir, '/');
                int r;

                if (faccessat(lfd, rel, F_OK, AT_SYMLINK_NOFOLLOW) == 0 ||
                    faccessat(rfd, rel, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
                        continue;
                if (slash) {
                        *slash = '\0';
                        r = mkdir_p_at(rfd, dir, 0755);
                        if (r < 0)
                                return r;
                }
                if (m->is_file) {
                        int fd = openat(rfd, rel,
                                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
                        if (fd < 0)
                                return -errno;
                        safe_close(fd);
                } else if (mkdirat(rfd, rel, 0755) < 0 && errno != EEXIST) {
                        return -errno;
                }
        }
        return 0;
}

/*
 * The container's root: the image root as the lower layer of an overlay
 * whose upper layer, on a small tmpfs in the bundle, holds only the mount
 * destinations the image lacks. The runtime cannot create them on a
 * read-only root (runc: "mkdir .../workspace: read-only file system") and
 * the image itself must never be written; the runtime then remounts the
 * whole root read-only (root.readonly).
 */
static int rootfs_mount(const struct container_spec *spec, const char *layers, const char *target)
{
        cleanup_free char *upper = xasprintf("%s/upper", layers);
        cleanup_free char *work = xasprintf("%s/work", layers);
        cleanup_free char *opts = NULL;
        int r;

        if (mount("tmpfs", layers, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0700") < 0)
                return -errno;
        if (mkdir(upper, 0755) < 0 || mkdir(work, 0700) < 0)
                return -errno;
        r = rootfs_add_mountpoints(spec, upper);
        if (r < 0)
                return r;
        opts = xasprintf("lowerdir=%s,upperdir=%s,workdir=%s", spec->rootfs, upper, work);
        if (mount("overlay", target, "overlay", MS_NOSUID | MS_NODEV, opts) < 0)
                return -errno;
        if (mount(NULL, target, NULL, MS_PRIVATE, NULL) < 0 ||
            mount(NULL, target, NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0) {
                r = -errno;
                (void) umount2(target, MNT_DETACH);
                return r;
        }
        return 0;
}

int oci_rootfs_prepare(const struct container_spec *spec, const char *bundle, const char *target)
{
        cleanup_free char *layers = xasprintf("%s/layers", bundle);
        int r;

        if (mkdir(layers, 0700) < 0)
                return -errno;
        r = rootfs_mount(spec, layers, target);
        if (r < 0) {
                (void) umount2(layers, MNT_DETACH);
                (void) rmdir(layers);
        }
        return r;
}

/*
 * Removes exactly what the launcher put in the bundle, name by name. Never
 * recursive: if the root bind could not be unmounted, rmdir fails with
 * EBUSY instead of walking into the image.
 */
void oci_bundle_remove(const char *bundle)
{
        static const char *const files[] = { "config.json", "runtime.log", "init.pid" };
        cleanup_close int fd = open(bundle, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

        if (fd < 0)
                return;
        for (size_t i = 0; i < ELEMENTSOF(files); i++)
                (void) unlinkat(fd, files[i], 0);
        (void) unlinkat(fd, "rootfs", AT_REMOVEDIR);
        (void) rmdir(bundle);
}
