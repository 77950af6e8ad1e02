/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "unit/episode-fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mount.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/util.h"

static int make_dir(const char *path, mode_t mode, uid_t uid)
{
        int r = mkdir_p_at(AT_FDCWD, path, 0755);
        if (r < 0)
                return r;
        /* chmod/chown after mkdir: the umask must not decide access. */
        if (chmod(path, mode) < 0)
                return -errno;
        if (uid != (uid_t) -1 && chown(path, uid, uid) < 0)
                return -errno;
        return 0;
}

static int mount_overlay(const char *dir, const char *lower, uid_t owner, mode_t mode)
{
        cleanup_free char *upper = xasprintf("%s/upper", dir);
        cleanup_free char *work = xasprintf("%s/work", dir);
        cleanup_free char *merged = xasprintf("%s/merged", dir);
        cleanup_free char *opts = NULL;
        int r;

        if ((r = make_dir(upper, mode, owner)) < 0 || (r = make_dir(work, 0700, (uid_t) -1)) < 0 ||
            (r = make_dir(merged, 0755, (uid_t) -1)) < 0)
                return r;
        /* userxattr is not needed (the daemon mounts as real root); index=off
         * and metacopy=off keep the upper a plain tree the grader can read. */
        opts = xasprintf("lowerdir=%s,upperdir=%s,workdir=%s,index=off,metacopy=off", lower, upper,
                         work);
        if (mount("overlay", merged, "overlay", MS_NODEV | MS_NOSUID, opts) < 0)
                return -errno;
        return 0;
}

/*
 * Everything a container writes in an episode lives on a tmpfs of its own,
 * sized by disk_mb: the agent's /workspace upper layer (zone disk_mb), each
 * service's state upper layer, each observer's /out and /inputs. A writer
 * that does not stop gets ENOSPC instead of filling the state directory's
 * filesystem (the host's disk), sealing can tell a full workspace from
 * outside (episode_fs_workspace_full()), and overlay upper layers never sit
 * on the state dir's own filesystem, which may itself be an overlayfs (the
 * image root under Docker), where upper layers are refused. tmpfs pages are
 * charged to the writer's memory cgroup, so they count against memory_mb too.
 */
static int mount_bounded(const char *dir, uint64_t disk_mb)
{
        cleanup_free char *opts =
                xasprintf("size=%llum,mode=0755", (unsigned long long) (disk_mb ?: 256));
        int r = make_dir(dir, 0755, (uid_t) -1);
        if (r < 0)
                return r;
        if (mount("tmpfs", dir, "tmpfs", MS_NODEV | MS_NOSUID | MS_NOEXEC, opts) < 0)
                return -errno;
        return 0;
}

static void umount_quiet(const char *path)
{
        if (umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW) < 0 && errno != EINVAL && errno != ENOENT)
                (void) 0; /* best effort: teardown removes what it can */
}

int episode_fs_teardown(const struct unit_plan_context *ctx)
{
        const struct manifest *m = ctx->manifest;

        /* Overlays first, then the tmpfs below each (mount_bounded()). */
        for (int z = 0; z < MANIFEST_ZONE_MAX; z++)
                for (size_t k = 0; k < m->zones[z].n_containers; k++) {
                        const struct manifest_container *c = &m->zones[z].containers[k];
                        cleanup_free char *dir = NULL, *merged = NULL;
                        if (c->zone == MANIFEST_ZONE_SERVICES && c->state)
                                dir = xasprintf("%s/services/%s", ctx->episode_dir, c->name);
                        else if (c->zone == MANIFEST_ZONE_OBSERVERS)
                                dir = xasprintf("%s/observers/%s", ctx->episode_dir, c->name);
                        else
                                continue;
                        merged = xasprintf("%s/merged", dir);
                        umount_quiet(merged);
                        umount_quiet(dir);
                }
        {
                cleanup_free char *dir = xasprintf("%s/workspace", ctx->episode_dir);
                cleanup_free char *merged = xasprintf("%s/merged", dir);
                umount_quiet(merged);
                umount_quiet(dir);
        }
        /* overlayfs leaves a mode-000 work/work behind: rm_rf_at runs as root,
         * which is not stopped by modes. */
        return rm_rf_at(AT_FDCWD, ctx->episode_dir);
}

static int setup_socket_dirs(const struct unit_plan_context *ctx)
{
        const struct manifest *m = ctx->manifest;
        int r;

        for (int z = 0; z < MANIFEST_ZONE_MAX; z++)
                for (size_t k = 0; k < m->zones[z].n_containers; k++) {
                        const struct manifest_container *c = &m->zones[z].containers[k];
                        cleanup_free char *dir = unit_socket_dir(ctx, c->name);
                        /* Recreated every episode: no socket or file survives. */
                        r = rm_rf_at(AT_FDCWD, dir);
                        if (r < 0)
                                return r;
                        r = make_dir(dir, 0755, unit_container_host_uid(m, c));
                        if (r < 0)
                                return r;
                }
        return 0;
}

static int write_hosts(const struct unit_plan_context *ctx)
{
        cleanup_free char *dir = unit_socket_dir(ctx, "env");
        cleanup_free char *path = xasprintf("%s/hosts", dir);
        cleanup_free char *content = unit_hosts_file(ctx->manifest);
        cleanup_close int fd = -EBADF;

        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        return write_all(fd, content, strlen(content));
}

static int setup(const struct unit_plan_context *ctx)
{
        const struct manifest *m = ctx->manifest;
        const struct manifest_container *env = manifest_find_container(m, "env");
        cleanup_free char *empty = xasprintf("%s/run/empty", ctx->state_dir);
        cleanup_free char *ws = xasprintf("%s/workspace", ctx->episode_dir);
        int r;

        if ((r = make_dir(ctx->episode_dir, 0711, (uid_t) -1)) < 0 ||
            (r = make_dir(empty, 0755, (uid_t) -1)) < 0)
                return r;
        if ((r = setup_socket_dirs(ctx)) < 0 || (r = write_hosts(ctx)) < 0)
                return r;

        /* The whole agent zone writes /workspace: owned by the env's principal,
         * open to the zone's other principals (same trust level). */
        r = mount_bounded(ws, manifest_zone(m, MANIFEST_ZONE_AGENT)->resources.disk_mb);
        if (r < 0)
                return r;
        r = mount_overlay(ws, m->workspace_seed ?: empty, unit_container_host_uid(m, env), 01777);
        if (r < 0)
                return r;

        for (int z = 0; z < MANIFEST_ZONE_MAX; z++)
                for (size_t k = 0; k < m->zones[z].n_containers; k++) {
                        const struct manifest_container *c = &m->zones[z].containers[k];
                        uid_t uid = unit_container_host_uid(m, c);
                        if (c->zone == MANIFEST_ZONE_SERVICES && c->state) {
                                cleanup_free char *d =
                                        xasprintf("%s/services/%s", ctx->episode_dir, c->name);
                                r = mount_bounded(d, c->effective.disk_mb);
                                if (r >= 0)
                                        r = mount_overlay(d, empty, uid, 0755);
                        } else if (c->zone == MANIFEST_ZONE_OBSERVERS) {
                                cleanup_free char *d =
                                        xasprintf("%s/observers/%s", ctx->episode_dir, c->name);
                                cleanup_free char *out = unit_observer_dir(ctx, c->name, "out");
                                cleanup_free char *in = unit_observer_dir(ctx, c->name, "inputs");
                                r = mount_bounded(d, c->effective.disk_mb);
                                if (r >= 0)
                                        r = make_dir(out, 0755, uid);
                                if (r >= 0)
                                        r = make_dir(in, 0755, (uid_t) -1);
                        }
                        if (r < 0)
                                return r;
                }
        return 0;
}

int episode_fs_workspace_full(const struct unit_plan_context *ctx)
{
        cleanup_free char *dir = xasprintf("%s/workspace", ctx->episode_dir);
        struct statfs sf;

        if (statfs(dir, &sf) < 0)
                return -errno;
        if (sf.f_type != TMPFS_MAGIC)
                return -ENOMEDIUM;
        /* No block or no inode left: the next write would get ENOSPC. */
        return sf.f_bavail == 0 || (sf.f_files > 0 && sf.f_ffree == 0);
}

int episode_fs_setup(const struct unit_plan_context *ctx)
{
        int r = setup(ctx);
        if (r < 0)
                (void) episode_fs_teardown(ctx);
        return r;
}
