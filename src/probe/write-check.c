/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "probe/write-check.h"

static const char *const result_names[_WRITE_RESULT_MAX] = {
        [WRITE_DENIED] = "denied",
        [WRITE_WRITABLE] = "writable",
        [WRITE_INCONCLUSIVE] = "inconclusive",
        [WRITE_NOT_STORAGE] = "not-storage",
};

static const char *const bound_names[_WALK_BOUND_MAX] = {
        [WALK_BOUND_NONE] = "none",
        [WALK_BOUND_DEPTH] = "max_depth",
        [WALK_BOUND_ENTRIES] = "max_entries",
        [WALK_BOUND_FINDINGS] = "max_findings",
};

const char *write_walk_bound_to_string(enum write_walk_bound b)
{
        return b >= 0 && b < _WALK_BOUND_MAX ? bound_names[b] : NULL;
}

const char *write_result_to_string(enum write_result r)
{
        return r >= 0 && r < _WRITE_RESULT_MAX ? result_names[r] : NULL;
}

int write_result_from_string(const char *s)
{
        for (int i = 0; i < _WRITE_RESULT_MAX; i++)
                if (streq(s, result_names[i]))
                        return i;
        return -EINVAL;
}

enum write_result write_result_from_errno(int err)
{
        switch (err) {
        case 0:
        /* The filesystem accepts writes; it is merely full right now. */
        case ENOSPC:
        case EDQUOT:
                return WRITE_WRITABLE;
        case EACCES:
        case EPERM:
        case EROFS:
                return WRITE_DENIED;
        default:
                return WRITE_INCONCLUSIVE;
        }
}

/* Component-wise fallback for kernels without openat2 (< 5.6): each step is
 * O_NOFOLLOW and ".." is refused, which keeps the walk beneath root_fd. */
static int open_in_root_fallback(int root_fd, const char *path, int flags, int *ret_fd)
{
        cleanup_free char *copy = xstrdup(path);
        cleanup_close int cur = -EBADF;
        char *comp, *next;
        int dfd = root_fd;

        comp = copy;
        while (*comp == '/')
                comp++;
        if (!*comp) {
                int fd = openat(root_fd, ".", flags | O_CLOEXEC);
                if (fd < 0)
                        return negative_errno();
                *ret_fd = fd;
                return 0;
        }
        for (;;) {
                int fd;
                next = strchr(comp, '/');
                if (next) {
                        *next++ = '\0';
                        while (*next == '/')
                                next++;
                        if (!*next)
                                next = NULL;
                }
                if (streq(comp, ".."))
                        return -EXDEV;
                if (next) {
                        fd = openat(dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (fd < 0)
                                return negative_errno();
                        safe_close(cur);
                        cur = fd;
                        dfd = cur;
                        comp = next;
                        continue;
                }
                fd = openat(dfd, comp, flags | O_NOFOLLOW | O_CLOEXEC, 0600);
                if (fd < 0)
                        return negative_errno();
                *ret_fd = fd;
                return 0;
        }
}

int path_open_in_root(int root_fd, const char *path, int flags, int *ret_fd)
{
        int fd;

        fd = openat2_flags(root_fd, path, flags | O_NOFOLLOW, 0,
                           RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
        if (fd == -ENOSYS)
                return open_in_root_fallback(root_fd, path, flags, ret_fd);
        if (fd < 0)
                return fd;
        *ret_fd = fd;
        return 0;
}

enum write_result write_check_dir(int dir_fd, int *ret_errno)
{
        cleanup_free char *hex = NULL;
        cleanup_free char *name = NULL;
        int fd, r;

        r = random_hex(8, &hex);
        if (r < 0) {
                *ret_errno = -r;
                return WRITE_INCONCLUSIVE;
        }
        name = xasprintf(".openenvd-probe-%s", hex);
        /* O_EXCL|O_NOFOLLOW: never opens (let alone truncates) something that
         * exists, and never writes through a symlink planted under our name. */
        fd = openat(dir_fd, name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
                    0600);
        if (fd < 0) {
                *ret_errno = errno;
                return write_result_from_errno(errno);
        }
        safe_close(fd);
        *ret_errno = unlinkat(dir_fd, name, 0) < 0 ? errno : 0;
        return WRITE_WRITABLE;
}

char file_type_char(mode_t m)
{
        switch (m & S_IFMT) {
        case S_IFREG:
                return 'f';
        case S_IFDIR:
                return 'd';
        case S_IFCHR:
                return 'c';
        case S_IFBLK:
                return 'b';
        case S_IFIFO:
                return 'p';
        case S_IFSOCK:
                return 's';
        case S_IFLNK:
                return 'l';
        default:
                return '?';
        }
}

enum write_result write_check_file_at(int dir_fd, const char *name, char *ret_type, int *ret_errno)
{
        struct stat st;
        int fd;

        if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                *ret_type = '?';
                *ret_errno = errno;
                return WRITE_INCONCLUSIVE;
        }
        *ret_type = file_type_char(st.st_mode);
        if (S_ISDIR(st.st_mode)) {
                *ret_errno = EISDIR;
                return WRITE_INCONCLUSIVE;
        }
        if (!S_ISREG(st.st_mode)) {
                *ret_errno = 0;
                return WRITE_NOT_STORAGE;
        }
        /* No O_TRUNC: opening for write changes nothing. O_NONBLOCK guards
         * against the file having been swapped for a FIFO since the stat. */
        fd = openat(dir_fd, name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0 && errno == ETXTBSY) {
                /* A running executable: the open is refused for now, but the
                 * permission question is still answered by the kernel. */
                if (faccessat(dir_fd, name, W_OK, AT_EACCESS | AT_SYMLINK_NOFOLLOW) == 0) {
                        *ret_errno = 0;
                        return WRITE_WRITABLE;
                }
        }
        if (fd < 0) {
                *ret_errno = errno;
                return write_result_from_errno(errno);
        }
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                /* Swapped under us: report the race instead of guessing. */
                safe_close(fd);
                *ret_errno = EAGAIN;
                return WRITE_INCONCLUSIVE;
        }
        safe_close(fd);
        *ret_errno = 0;
        return WRITE_WRITABLE;
}

int fd_mount_id(int fd, uint64_t *ret)
{
        struct statx sx;

        if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &sx) < 0)
                return negative_errno();
        if (!(sx.stx_mask & STATX_MNT_ID))
                return -EOPNOTSUPP;
        *ret = sx.stx_mnt_id;
        return 0;
}

static unsigned result_rank(enum write_result r)
{
        return r == WRITE_WRITABLE ? 2 : r == WRITE_INCONCLUSIVE ? 1 : 0;
}

static void walk_note(struct write_walk *w, const struct write_walk_bounds *b, const char *path,
                      char type, enum write_result r, int err)
{
        if (r == WRITE_NOT_STORAGE) {
                w->not_storage++;
                return;
        }
        if (r == WRITE_DENIED)
                return;
        if (result_rank(r) > result_rank(w->result))
                w->result = r;
        if (r == WRITE_INCONCLUSIVE && w->err == 0)
                w->err = err;
        if (w->n_findings < b->max_findings) {
                w->findings = xrealloc(w->findings, (w->n_findings + 1) * sizeof(*w->findings));
                w->findings[w->n_findings++] = (struct write_finding){
                        .path = xstrdup(path), .type = type, .result = r, .err = err
                };
        }
}

static void walk_truncated(struct write_walk *w, enum write_walk_bound b)
{
        if (!w->truncated)
                w->truncated_by = b;
        w->truncated = true;
}

struct walk_level {
        DIR *dir;
        size_t path_len; /* length of the display path of this directory */
};

static bool same_mount(int fd, bool have_root_mnt, uint64_t root_mnt, dev_t root_dev)
{
        uint64_t id = 0;
        struct stat st;

        /* Mount IDs compare only if the root's is known too: otherwise every
         * subdirectory would look like another mount and go unwalked. */
        if (have_root_mnt && fd_mount_id(fd, &id) >= 0)
                return id == root_mnt;
        /* Without STATX_MNT_ID (< 5.8) the device number separates
         * filesystems, though not two mounts of one filesystem. */
        return fstat(fd, &st) >= 0 && st.st_dev == root_dev;
}

int write_walk_run(int dir_fd, const char *display_prefix, const struct write_walk_bounds *b,
                   struct write_walk *ret)
{
        struct write_walk w = { .result = WRITE_DENIED };
        struct walk_level stack[64];
        unsigned depth = 0, max_depth = MIN(b->max_depth, (unsigned) ELEMENTSOF(stack) - 1);
        cleanup_strbuf struct strbuf path = STRBUF_INIT;
        uint64_t root_mnt = 0;
        bool have_root_mnt;
        struct stat root_st;
        enum write_result r;
        int err, fd;

        if (fstat(dir_fd, &root_st) < 0)
                return negative_errno();
        if (!S_ISDIR(root_st.st_mode))
                return -ENOTDIR;
        have_root_mnt = fd_mount_id(dir_fd, &root_mnt) >= 0;

        strbuf_adds(&path, display_prefix);
        r = write_check_dir(dir_fd, &err);
        w.visited = 1;
        if (r == WRITE_DENIED)
                w.denied_err = err;
        walk_note(&w, b, path.buf, 'd', r, err);

        /* Reopen for reading: dir_fd may be O_PATH. */
        fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                /* Cannot list: whatever lies below is unproven. */
                walk_note(&w, b, path.buf, 'd', WRITE_INCONCLUSIVE, errno);
                *ret = w;
                return 0;
        }
        stack[0] = (struct walk_level){ .dir = fdopendir(fd), .path_len = path.len };
        if (!stack[0].dir) {
                safe_close(fd);
                return negative_errno();
        }

        for (;;) {
                struct walk_level *top = &stack[depth];
                struct dirent *de;
                char type;

                if (w.n_findings >= b->max_findings && b->max_findings > 0 &&
                    w.result == WRITE_WRITABLE) {
                        /* Proven writable and out of room: stop early. */
                        walk_truncated(&w, WALK_BOUND_FINDINGS);
                        break;
                }
                errno = 0;
                de = readdir(top->dir);
                if (!de) {
                        if (errno != 0)
                                walk_note(&w, b, path.buf, 'd', WRITE_INCONCLUSIVE, errno);
                        closedir(top->dir);
                        top->dir = NULL;
                        if (depth == 0)
                                break;
                        depth--;
                        path.len = stack[depth].path_len;
                        path.buf[path.len] = '\0';
                        continue;
                }
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (w.visited >= b->max_entries) {
                        walk_truncated(&w, WALK_BOUND_ENTRIES);
                        break;
                }
                w.visited++;
                path.len = top->path_len;
                path.buf[path.len] = '\0';
                if (path.len == 0 || path.buf[path.len - 1] != '/')
                        strbuf_addch(&path, '/');
                strbuf_adds(&path, de->d_name);

                if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN) {
                        r = write_check_file_at(dirfd(top->dir), de->d_name, &type, &err);
                        walk_note(&w, b, path.buf, type, r, err);
                        continue;
                }
                fd = openat(dirfd(top->dir), de->d_name,
                            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0 && (errno == ENOTDIR || errno == ELOOP)) {
                        r = write_check_file_at(dirfd(top->dir), de->d_name, &type, &err);
                        walk_note(&w, b, path.buf, type, r, err);
                        continue;
                }
                if (fd < 0) {
                        int e = errno;
                        /* Unlistable, but creation may still be possible. */
                        int pfd = openat(dirfd(top->dir), de->d_name,
                                         O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (pfd >= 0) {
                                r = write_check_dir(pfd, &err);
                                safe_close(pfd);
                                walk_note(&w, b, path.buf, 'd', r, err);
                        }
                        walk_note(&w, b, path.buf, 'd', WRITE_INCONCLUSIVE, e);
                        continue;
                }
                if (!same_mount(fd, have_root_mnt, root_mnt, root_st.st_dev)) {
                        /* Another mount: judged on its own, not here. */
                        w.nested_mounts++;
                        safe_close(fd);
                        continue;
                }
                r = write_check_dir(fd, &err);
                walk_note(&w, b, path.buf, 'd', r, err);
                if (depth + 1 > max_depth) {
                        walk_truncated(&w, WALK_BOUND_DEPTH);
                        safe_close(fd);
                        continue;
                }
                DIR *d = fdopendir(fd);
                if (!d) {
                        safe_close(fd);
                        walk_note(&w, b, path.buf, 'd', WRITE_INCONCLUSIVE, errno);
                        continue;
                }
                depth++;
                stack[depth] = (struct walk_level){ .dir = d, .path_len = path.len };
        }
        /* Unwind after an early exit; the normal exit closed everything. */
        for (unsigned i = depth + 1; i-- > 0;)
                if (stack[i].dir)
                        closedir(stack[i].dir);
        *ret = w;
        return 0;
}

void write_walk_done(struct write_walk *w)
{
        for (unsigned i = 0; i < w->n_findings; i++)
                free(w->findings[i].path);
        free(w->findings);
        *w = (struct write_walk){};
}
