/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "base/fd-util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/dir-walk.h"
#include "base/macro.h"
#include "base/util.h"

int read_full_fd(int fd, size_t max, char **ret, size_t *ret_len)
{
        size_t len = 0, alloc = 4096;
        cleanup_free char *buf = NULL;

        buf = xmalloc(alloc);
        for (;;) {
                if (len + 1 >= alloc) {
                        if (alloc > max + 1)
                                return -EFBIG;
                        alloc *= 2;
                        buf = xrealloc(buf, alloc);
                }
                ssize_t n = read(fd, buf + len, alloc - len - 1);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        break;
                len += (size_t) n;
                if (len > max)
                        return -EFBIG;
        }
        buf[len] = '\0';
        *ret = TAKE_PTR(buf);
        if (ret_len)
                *ret_len = len;
        return 0;
}

int read_full_file_at(int dirfd, const char *path, size_t max, char **ret, size_t *ret_len)
{
        cleanup_close int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        return read_full_fd(fd, max, ret, ret_len);
}

int write_all(int fd, const void *buf, size_t len)
{
        const char *p = buf;
        while (len > 0) {
                ssize_t n = write(fd, p, len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                p += n;
                len -= (size_t) n;
        }
        return 0;
}

int write_string_file_full_at(int dirfd, const char *path, const char *s, unsigned flags)
{
        cleanup_close int fd = openat(dirfd, path,
                                      O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW |
                                              (flags & WRITE_STRING_FILE_TRUNCATE ? O_TRUNC : 0));
        size_t len = strlen(s);
        ssize_t n;

        if (fd < 0)
                return -errno;
        /* Kernel interface files want the value in one write(). */
        n = write(fd, s, len);
        if (n < 0)
                return -errno;
        if ((size_t) n != len)
                return -EIO;
        return 0;
}

int write_string_file_at(int dirfd, const char *path, const char *s)
{
        return write_string_file_full_at(dirfd, path, s, 0);
}

int openat2_flags(int dirfd, const char *path, int flags, mode_t mode, unsigned long long resolve)
{
        struct open_how how = {
                .flags = (unsigned long long) flags | O_CLOEXEC,
                .mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
                .resolve = resolve,
        };
        long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
        return fd < 0 ? -errno : (int) fd;
}

/* Post-order removal: files as they come, each directory once it is empty.
 * The first error is kept; the walk goes on to remove what it can. */
static int rm_rf_visit(const struct dir_walk_entry *e, enum dir_walk_event event, void *userdata)
{
        int *r = userdata;
        int k = 0;

        switch (event) {
        case DIR_WALK_ENTRY:
                k = unlinkat(e->parent_fd, e->name, 0) < 0 ? -errno : 0;
                break;
        case DIR_WALK_LEAVE:
                k = unlinkat(e->parent_fd, e->name, AT_REMOVEDIR) < 0 ? -errno : 0;
                break;
        case DIR_WALK_ERROR:
                k = e->error;
                break;
        case DIR_WALK_ENTER:
                break;
        }
        if (k < 0 && k != -ENOENT && *r == 0)
                *r = k;
        return DIR_WALK_CONTINUE;
}

int rm_rf_at(int dirfd, const char *name)
{
        cleanup_close int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int r = 0, k;

        if (fd < 0) {
                if (errno == ENOENT)
                        return 0;
                if (errno == ENOTDIR || errno == ELOOP)
                        return unlinkat(dirfd, name, 0) < 0 ? -errno : 0;
                return -errno;
        }
        /* No depth bound: the tree may be an agent's workspace, and all of
         * it must go. The walk is iterative; a level costs one fd. */
        k = dir_walk(fd, NULL, rm_rf_visit, &r);
        if (k < 0 && r == 0)
                r = k;
        if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT && r == 0)
                r = -errno;
        return r;
}

static int check_searchable(const char *dir, char **ret_blocker)
{
        struct stat st;
        int r = 0;

        if (stat(dir, &st) < 0)
                r = -errno;
        else if (!S_ISDIR(st.st_mode))
                r = -ENOTDIR;
        else if (!(st.st_mode & S_IXOTH))
                r = -EACCES;
        if (r < 0 && ret_blocker)
                *ret_blocker = xstrdup(dir);
        return r;
}

int path_searchable_by_others(const char *path, char **ret_blocker)
{
        cleanup_free char *p = NULL;
        int r;

        if (!path || path[0] != '/')
                return -EINVAL;
        r = check_searchable("/", ret_blocker);
        if (r < 0)
                return r;
        p = xstrdup(path);
        /* "/a", "/a/b", ...: each prefix in turn, top down. */
        for (size_t i = 1, n = strlen(p); i <= n; i++) {
                char c = p[i];
                if ((c != '/' && c != '\0') || p[i - 1] == '/')
                        continue;
                p[i] = '\0';
                r = check_searchable(p, ret_blocker);
                p[i] = c;
                if (r < 0)
                        return r;
        }
        return 0;
}

int mkdir_p_at(int dirfd, const char *path, mode_t mode)
{
        cleanup_free char *p = xstrdup(path);

        for (char *s = p + 1; *s; s++) {
                if (*s != '/')
                        continue;
                *s = '\0';
                if (mkdirat(dirfd, p, mode) < 0 && errno != EEXIST)
                        return -errno;
                *s = '/';
        }
        if (mkdirat(dirfd, p, mode) < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

int fds_dup_above(const int *fds, size_t n, int floor, int *ret)
{
        for (size_t i = 0; i < n; i++) {
                ret[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, floor);
                if (ret[i] < 0) {
                        int r = -errno;
                        while (i > 0) {
                                i--;
                                ret[i] = safe_close(ret[i]);
                        }
                        return r;
                }
        }
        return 0;
}

int read_secret_file(const char *path, size_t max, char **ret)
{
        char *s = NULL;
        size_t len = 0;
        int r;

        r = read_full_file_at(AT_FDCWD, path, max, &s, &len);
        if (r < 0)
                return r;
        while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == '\r'))
                s[--len] = '\0';
        if (len == 0 || strlen(s) != len) {
                secret_free(s);
                return -EINVAL;
        }
        *ret = s;
        return 0;
}
