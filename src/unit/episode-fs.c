/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "unit/episode-fs.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/limits.h"
#include "base/util.h"

#define DEFAULT_DISK_MB 256

static int make_dir(const char *path, mode_t mode)
{
        if (mkdir(path, mode) < 0 && errno != EEXIST)
                return -errno;
        /* chmod after mkdir: the umask must not decide access. */
        return chmod(path, mode) < 0 ? -errno : 0;
}

/* Directories made inside a fresh tmpfs nobody else can reach yet. */
static int make_owned_dir(const char *path, mode_t mode, uid_t uid)
{
        int r = make_dir(path, mode);
        if (r < 0)
                return r;
        if (uid != (uid_t) -1 && chown(path, uid, uid) < 0)
                return -errno;
        return 0;
}

uint64_t episode_fs_inodes_for(uint64_t disk_mb)
{
        return MAX(disk_mb * EPISODE_FS_INODES_PER_MB, (uint64_t) EPISODE_FS_MIN_INODES);
}

/*
 * A tmpfs of its own for everything a container writes, sized by disk_mb and
 * capped in inodes: a writer that does not stop gets ENOSPC instead of
 * filling the host, sealing can tell a full workspace from outside
 * (episode_fs_workspace_full()), and overlay upper layers never sit on the
 * state dir's own filesystem. tmpfs pages are charged to the writer's memory
 * cgroup, so they count against memory_mb too. owner: the root's owner
 * ((uid_t) -1: root), set at mount time.
 */
static int mount_bounded(const char *dir, uint64_t bytes, uint64_t inodes, mode_t mode, uid_t owner)
{
        cleanup_free char *opts = NULL;
        int r = make_dir(dir, 0711);

        if (r < 0)
                return r;
        if (owner != (uid_t) -1)
                opts = xasprintf("size=%llu,nr_inodes=%llu,mode=%o,uid=%u,gid=%u",
                                 (unsigned long long) bytes, (unsigned long long) inodes,
                                 (unsigned) mode, (unsigned) owner, (unsigned) owner);
        else
                opts = xasprintf("size=%llu,nr_inodes=%llu,mode=%o", (unsigned long long) bytes,
                                 (unsigned long long) inodes, (unsigned) mode);
        if (mount("tmpfs", dir, "tmpfs", MS_NODEV | MS_NOSUID | MS_NOEXEC, opts) < 0)
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

        if ((r = make_owned_dir(upper, mode, owner)) < 0 ||
            (r = make_owned_dir(work, 0700, (uid_t) -1)) < 0 ||
            (r = make_owned_dir(merged, 0755, (uid_t) -1)) < 0)
                return r;
        /* userxattr is not needed (the daemon mounts as real root); index=off
         * and metacopy=off keep the upper a plain tree the grader can read. */
        opts = xasprintf("lowerdir=%s,upperdir=%s,workdir=%s,index=off,metacopy=off", lower, upper,
                         work);
        if (mount("overlay", merged, "overlay", MS_NODEV | MS_NOSUID, opts) < 0)
                return -errno;
        return 0;
}

static uint64_t disk_bytes(uint64_t disk_mb)
{
        return (disk_mb ?: DEFAULT_DISK_MB) * 1024 * 1024;
}

/* The workspace's custody copy holds whatever the copier accepts: disk_mb
 * bytes in at most CUSTODY_MAX_ENTRIES entries (base/limits.h). Hard links
 * and page rounding make that more than the workspace itself stores (a
 * 1-byte file linked 9,999 times takes one page there and 40 MB of pages
 * in the copy), and a copy that ran out of room would read as the
 * daemon's failure, not the agent's: room for a page per entry beyond. */
static uint64_t copy_bytes(uint64_t disk_mb)
{
        return disk_bytes(disk_mb) + (CUSTODY_MAX_ENTRIES + 1) * (uint64_t) sysconf(_SC_PAGESIZE);
}

static uint64_t copy_inodes(uint64_t disk_mb)
{
        return MAX(episode_fs_inodes_for(disk_mb), (uint64_t) CUSTODY_MAX_ENTRIES + 2);
}

static uint64_t workspace_mb(const struct manifest *m)
{
        return manifest_zone(m, MANIFEST_ZONE_AGENT)->resources.disk_mb ?: DEFAULT_DISK_MB;
}

/* Unmounts path (if it is a mount point) and removes the emptied point. */
static void drop_mount(const char *path)
{
        (void) umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW);
        (void) rmdir(path);
}

static void drop_overlay(const char *dir)
{
        cleanup_free char *merged = xasprintf("%s/merged", dir);
        (void) umount2(merged, MNT_DETACH | UMOUNT_NOFOLLOW);
        drop_mount(dir);
}

int episode_fs_teardown(const struct unit_plan_context *ctx)
{
        const struct manifest *m = ctx->manifest;
        cleanup_free char *sock = xasprintf("%s/sock", ctx->episode_dir);
        cleanup_free char *svc = xasprintf("%s/services", ctx->episode_dir);
        cleanup_free char *obs = xasprintf("%s/observers", ctx->episode_dir);
        cleanup_free char *ws = xasprintf("%s/workspace", ctx->episode_dir);
        cleanup_free char *copy = unit_workspace_copy_dir(ctx);
        cleanup_free char *hosts = xasprintf("%s/hosts", ctx->episode_dir);
        cleanup_free char *actions = unit_actions_dir(ctx);
        cleanup_free char *record = xasprintf("%s/" UNIT_ACTIONS_FILE, actions);

        /* Mount points are known: never a walk of what a container wrote. */
        for (int z = 0; z < MANIFEST_ZONE_MAX; z++)
                for (size_t k = 0; k < m->zones[z].n_containers; k++) {
                        const struct manifest_container *c = &m->zones[z].containers[k];
                        cleanup_free char *d = unit_socket_dir(ctx, c->name);
                        drop_mount(d);
                        if (c->zone == MANIFEST_ZONE_SERVICES && c->state) {
                                cleanup_free char *sd = xasprintf("%s/%s", svc, c->name);
                                drop_overlay(sd);
                        } else if (c->zone == MANIFEST_ZONE_OBSERVERS) {
                                cleanup_free char *od = xasprintf("%s/%s", obs, c->name);
                                drop_mount(od);
                        }
                }
        drop_overlay(ws);
        drop_mount(copy);
        (void) unlink(hosts);
        (void) unlink(record);
        (void) rmdir(actions);
        (void) rmdir(sock);
        (void) rmdir(svc);
        (void) rmdir(obs);
        if (rmdir(ctx->episode_dir) < 0 && errno != ENOENT)
                return -errno; /* something stayed mounted */
        return 0;
}

int episode_fs_write_hosts(const struct unit_plan_context *ctx)
{
        cleanup_free char *path = xasprintf("%s/hosts", ctx->episode_dir);
        cleanup_free char *content = unit_hosts_file(ctx->manifest);
        cleanup_close int fd = -EBADF;

        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        return write_all(fd, content, strlen(content));
}

static int setup_container(const struct unit_plan_context *ctx, const struct manifest_container *c,
                           const char *empty)
{
        uid_t uid = unit_container_host_uid(ctx, c);
        uint64_t disk_mb = c->effective.disk_mb ?: DEFAULT_DISK_MB;
        cleanup_free char *sock = unit_socket_dir(ctx, c->name);
        int r;

        /* Its one way out: relays the daemon binds before it starts, and
         * whatever it makes there itself, bounded. */
        r = mount_bounded(sock, EPISODE_FS_SOCK_BYTES, EPISODE_FS_SOCK_INODES, 0755, uid);
        if (r < 0)
                return r;
        if (c->zone == MANIFEST_ZONE_SERVICES && c->state) {
                cleanup_free char *d = xasprintf("%s/services/%s", ctx->episode_dir, c->name);
                r = mount_bounded(d, disk_bytes(disk_mb), episode_fs_inodes_for(disk_mb), 0711,
                                  (uid_t) -1);
                if (r >= 0)
                        r = mount_overlay(d, empty, uid, 0755);
        } else if (c->zone == MANIFEST_ZONE_OBSERVERS) {
                cleanup_free char *d = xasprintf("%s/observers/%s", ctx->episode_dir, c->name);
                cleanup_free char *out = unit_observer_dir(ctx, c->name, "out");
                cleanup_free char *in = unit_observer_dir(ctx, c->name, "inputs");
                r = mount_bounded(d, disk_bytes(disk_mb), episode_fs_inodes_for(disk_mb), 0711,
                                  (uid_t) -1);
                if (r >= 0)
                        r = make_owned_dir(out, 0755, uid);
                if (r >= 0)
                        r = make_owned_dir(in, 0755, (uid_t) -1);
        }
        return r;
}

static int setup(const struct unit_plan_context *ctx)
{
        const struct manifest *m = ctx->manifest;
        const struct manifest_container *env = manifest_find_container(m, "env");
        uint64_t ws_mb = workspace_mb(m);
        cleanup_free char *empty = xasprintf("%s/empty", ctx->state_dir);
        cleanup_free char *ws = xasprintf("%s/workspace", ctx->episode_dir);
        cleanup_free char *copy = unit_workspace_copy_dir(ctx);
        cleanup_free char *actions = unit_actions_dir(ctx);
        int r;

        if ((r = mkdir_p_at(AT_FDCWD, ctx->episode_dir, 0711)) < 0 ||
            (r = make_dir(ctx->episode_dir, 0711)) < 0)
                return r;
        static const char *const subdirs[] = { "sock", "services", "observers" };
        for (size_t i = 0; i < ELEMENTSOF(subdirs); i++) {
                cleanup_free char *d = xasprintf("%s/%s", ctx->episode_dir, subdirs[i]);
                if ((r = make_dir(d, 0711)) < 0)
                        return r;
        }
        /* The daemon's record of actions: observers list it in their dir. */
        if ((r = make_dir(actions, 0755)) < 0)
                return r;
        if ((r = episode_fs_write_hosts(ctx)) < 0)
                return r;

        /* The whole agent zone writes /workspace: owned by the env's principal,
         * open to the zone's other principals (same trust level). */
        r = mount_bounded(ws, disk_bytes(ws_mb), episode_fs_inodes_for(ws_mb), 0711, (uid_t) -1);
        if (r < 0)
                return r;
        r = mount_overlay(ws, m->workspace_seed ?: empty, unit_container_host_uid(ctx, env), 01777);
        if (r < 0)
                return r;
        /* Its custody copy: room for all the copier accepts (copy_bytes()). */
        r = mount_bounded(copy, copy_bytes(ws_mb), copy_inodes(ws_mb), 0755, (uid_t) -1);
        if (r < 0)
                return r;

        for (int z = 0; z < MANIFEST_ZONE_MAX; z++)
                for (size_t k = 0; k < m->zones[z].n_containers; k++) {
                        r = setup_container(ctx, &m->zones[z].containers[k], empty);
                        if (r < 0)
                                return r;
                }
        return 0;
}

int episode_fs_reset_workspace_copy(const struct unit_plan_context *ctx)
{
        cleanup_free char *copy = unit_workspace_copy_dir(ctx);
        uint64_t mb = workspace_mb(ctx->manifest);

        (void) umount2(copy, MNT_DETACH | UMOUNT_NOFOLLOW);
        return mount_bounded(copy, copy_bytes(mb), copy_inodes(mb), 0755, (uid_t) -1);
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
        if (sf.f_bavail == 0)
                return EPISODE_FS_FULL_BYTES;
        if (sf.f_files > 0 && sf.f_ffree == 0)
                return EPISODE_FS_FULL_INODES;
        return 0;
}

int episode_fs_init(const char *state_dir)
{
        cleanup_free char *empty = xasprintf("%s/empty", state_dir);
        return make_dir(empty, 0755);
}

int episode_fs_setup(const struct unit_plan_context *ctx)
{
        int r = setup(ctx);
        if (r < 0)
                (void) episode_fs_teardown(ctx);
        return r;
}
