/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Path validation and interface-file I/O shared by both backends.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/dir-walk.h"
#include "base/fd-util.h"
#include "base/limits.h"
#include "base/macro.h"
#include "base/parse-util.h"
#include "base/util.h"
#include "cgroup/cgroup-internal.h"

const char *const cgroup_v1_names[CG_V1_MAX] = {
        [CG_V1_MEMORY] = "memory",   [CG_V1_PIDS] = "pids",       [CG_V1_CPU] = "cpu",
        [CG_V1_FREEZER] = "freezer", [CG_V1_DEVICES] = "devices",
};

bool cgroup_rel_valid(const char *rel, bool allow_empty)
{
        const char *p = rel;

        if (!rel)
                return false;
        if (*rel == '\0')
                return allow_empty;
        if (strlen(rel) > CGROUP_PATH_MAX || *rel == '/')
                return false;
        /* Component by component: no empty ones ("a//b", trailing "/"), no
         * "." or "..", nothing that could leave the subtree root. */
        for (;;) {
                size_t n = strcspn(p, "/");
                if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
                        return false;
                for (size_t i = 0; i < n; i++)
                        if ((unsigned char) p[i] < 0x20 || p[i] == 0x7f)
                                return false;
                if (p[n] == '\0')
                        return true;
                p += n + 1;
        }
}

int cgroup_open_dir(int root_fd, const char *rel)
{
        /* RESOLVE_BENEATH also refuses absolute paths and ".." escapes a
         * validation bug might let through; cgroupfs has no symlinks, so any
         * symlink met here is an attack on a fake or bind-mounted tree. */
        return openat2_flags(root_fd, rel && *rel ? rel : ".", O_RDONLY | O_DIRECTORY, 0,
                             RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
}

int cgroup_write_at(int dirfd, const char *file, const char *value)
{
        /* base's kernel-file writer, with O_TRUNC: ignored by cgroupfs, it
         * keeps fake trees (regular files) holding exactly the last value
         * written. */
        return write_string_file_full_at(dirfd, file, value, WRITE_STRING_FILE_TRUNCATE);
}

int cgroup_read_at(int dirfd, const char *file, char **ret)
{
        cleanup_close int fd = openat(dirfd, file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        return read_full_fd(fd, CGROUP_FILE_MAX_BYTES, ret, NULL);
}

int cgroup_keyed_get(const char *text, const char *key, uint64_t *ret)
{
        size_t klen = strlen(key);

        for (const char *p = text; p && *p;) {
                const char *eol = strchr(p, '\n');
                size_t n = eol ? (size_t) (eol - p) : strlen(p);

                if (n > klen && strncmp(p, key, klen) == 0 && p[klen] == ' ') {
                        char num[32];
                        size_t vlen = n - klen - 1;
                        if (vlen == 0 || vlen >= sizeof(num))
                                return -EINVAL;
                        memcpy(num, p + klen + 1, vlen);
                        num[vlen] = '\0';
                        return parse_uint64(num, 0, UINT64_MAX, ret);
                }
                p = eol ? eol + 1 : NULL;
        }
        return -ENODATA;
}

int cgroup_read_keyed_at(int dirfd, const char *file, const char *key, uint64_t *ret)
{
        cleanup_free char *s = NULL;
        int r = cgroup_read_at(dirfd, file, &s);
        if (r < 0)
                return r;
        return cgroup_keyed_get(s, key, ret);
}

int cgroup_read_u64_at(int dirfd, const char *file, uint64_t *ret)
{
        cleanup_free char *s = NULL;
        int r = cgroup_read_at(dirfd, file, &s);
        if (r < 0)
                return r;
        if (!s)
                return -EIO;
        s[strcspn(s, "\n")] = '\0';
        return parse_uint64(s, 0, UINT64_MAX, ret);
}

int cgroup_mkdir_p(int root_fd, const char *rel)
{
        cleanup_free char *p = xstrdup(rel);
        cleanup_close int parent = fcntl(root_fd, F_DUPFD_CLOEXEC, 3);
        char *save = NULL;

        if (parent < 0)
                return -errno;
        /* One component at a time, each opened without following symlinks:
         * mkdirat(root, "a/b/c") would follow a symlink planted at "a/b". */
        for (char *c = strtok_r(p, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                int fd;
                if (mkdirat(parent, c, 0755) < 0 && errno != EEXIST)
                        return -errno;
                fd = cgroup_open_dir(parent, c);
                if (fd < 0)
                        return fd;
                safe_close(parent);
                parent = fd;
        }
        return 0;
}

/* Children first: a cgroup can only be removed once it has none. The first
 * error is kept; the rest of the tree is still removed where possible. */
static int rmdir_visit(const struct dir_walk_entry *e, enum dir_walk_event event, void *userdata)
{
        int *r = userdata;
        int k = 0;

        if (event == DIR_WALK_LEAVE)
                k = unlinkat(e->parent_fd, e->name, AT_REMOVEDIR) < 0 ? -errno : 0;
        else if (event == DIR_WALK_ERROR && e->fd < 0)
                k = e->error;
        if (k < 0 && k != -ENOENT && *r == 0)
                *r = k;
        return DIR_WALK_CONTINUE;
}

int cgroup_rmdir_tree(int root_fd, const char *rel)
{
        cleanup_close int dfd = -EBADF, parent = -EBADF;
        cleanup_free char *dir = xstrdup(rel);
        char *slash = strrchr(dir, '/');
        const char *base = slash ? slash + 1 : dir;
        int r = 0, k;

        if (slash)
                *slash = '\0';
        dfd = cgroup_open_dir(root_fd, rel);
        if (dfd < 0)
                return dfd == -ENOENT ? 0 : dfd;
        /* Depth is bounded by CGROUP_PATH_MAX (a level costs at least 2 bytes). */
        k = dir_walk(dfd,
                     &(const struct dir_walk_options){ .max_depth = CGROUP_PATH_MAX / 2,
                                                       .dirs_only = true },
                     rmdir_visit, &r);
        if (r == 0 && k < 0)
                r = k;
        if (r < 0)
                return r;
        parent = cgroup_open_dir(root_fd, slash ? dir : "");
        if (parent < 0)
                return parent;
        /* cgroupfs: rmdir of a cgroup with tasks is EBUSY, which we pass on. */
        if (unlinkat(parent, base, AT_REMOVEDIR) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}
