/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/dir-walk.h"
#include "base/fd-util.h"
#include "base/strbuf.h"
#include "base/string-table.h"
#include "base/util.h"
#include "probe/write-check.h"

static const char *const write_result_table[_WRITE_RESULT_MAX] = {
        [WRITE_DENIED] = "denied",
        [WRITE_WRITABLE] = "writable",
        [WRITE_INCONCLUSIVE] = "inconclusive",
        [WRITE_NOT_STORAGE] = "not-storage",
};

static const char *const write_walk_bound_table[_WALK_BOUND_MAX] = {
        [WALK_BOUND_NONE] = "none",
        [WALK_BOUND_DEPTH] = "max_depth",
        [WALK_BOUND_ENTRIES] = "max_entries",
        [WALK_BOUND_FINDINGS] = "max_findings",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(write_walk_bound, enum write_walk_bound);
DEFINE_STRING_TABLE_LOOKUP(write_result, enum write_result);

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

/* A refusal (EACCES) of something we own whose owner-write bit is off is
 * no refusal: its owner can chmod it back at any time (a subject that drops
 * the bit just before the helper looks and restores it after). Only when
 * the mode explains the EACCES: with the bit set, the refusal came from an
 * ACL or LSM the owner cannot undo. */
static bool owner_can_chmod(const struct stat *st)
{
        return st->st_uid == geteuid() && !(st->st_mode & S_IWUSR);
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
                int err = errno;
                struct stat st;

                *ret_errno = err;
                if (err == EACCES && fstat(dir_fd, &st) >= 0 && owner_can_chmod(&st))
                        return WRITE_WRITABLE;
                return write_result_from_errno(err);
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
                if (errno == EACCES && owner_can_chmod(&st))
                        return WRITE_WRITABLE;
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

struct walker {
        struct write_walk w;
        const struct write_walk_bounds *b;
        const char *prefix;    /* borrowed: names the walk root in findings */
        unsigned max_depth;    /* b->max_depth, capped */
        struct strbuf display; /* prefix + "/" + the entry's relative path */
        uint64_t root_mnt;
        bool have_root_mnt;
        dev_t root_dev;
        bool stopped; /* a bound ended the walk */
};

static const char *walker_display(struct walker *k, const char *rel)
{
        strbuf_reset(&k->display);
        strbuf_adds(&k->display, k->prefix);
        if (rel && *rel) {
                if (k->display.len == 0 || k->display.buf[k->display.len - 1] != '/')
                        strbuf_addch(&k->display, '/');
                strbuf_adds(&k->display, rel);
        }
        return k->display.buf;
}

/* Proven writable and out of room for findings: nothing more to learn. */
static bool walker_findings_full(const struct walker *k)
{
        return k->w.n_findings >= k->b->max_findings && k->b->max_findings > 0 &&
               k->w.result == WRITE_WRITABLE;
}

/* A directory that cannot be listed: creation may still be possible. */
static void walker_unlistable(struct walker *k, const struct dir_walk_entry *e, const char *path)
{
        int pfd = openat(e->parent_fd, e->name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        enum write_result r;
        int err;

        if (pfd >= 0) {
                r = write_check_dir(pfd, &err);
                safe_close(pfd);
                walk_note(&k->w, k->b, path, 'd', r, err);
        }
        walk_note(&k->w, k->b, path, 'd', WRITE_INCONCLUSIVE, -e->error);
}

static int walker_visit(const struct dir_walk_entry *e, enum dir_walk_event event, void *userdata)
{
        struct walker *k = userdata;
        const char *path = walker_display(k, e->path);
        enum write_result r;
        char type;
        int err;

        if (event == DIR_WALK_LEAVE)
                return DIR_WALK_CONTINUE;
        if (event == DIR_WALK_ERROR && e->fd >= 0) {
                /* Listing stopped early: whatever lies below is unproven. */
                walk_note(&k->w, k->b, path, 'd', WRITE_INCONCLUSIVE, -e->error);
                return DIR_WALK_CONTINUE;
        }
        if (walker_findings_full(k)) {
                walk_truncated(&k->w, WALK_BOUND_FINDINGS);
                k->stopped = true;
                return DIR_WALK_STOP;
        }
        if (k->w.visited >= k->b->max_entries) {
                walk_truncated(&k->w, WALK_BOUND_ENTRIES);
                k->stopped = true;
                return DIR_WALK_STOP;
        }
        k->w.visited++;

        switch (event) {
        case DIR_WALK_ENTRY:
                r = write_check_file_at(e->parent_fd, e->name, &type, &err);
                walk_note(&k->w, k->b, path, type, r, err);
                return DIR_WALK_CONTINUE;
        case DIR_WALK_ERROR:
                walker_unlistable(k, e, path);
                return DIR_WALK_CONTINUE;
        default:
                break;
        }
        if (!same_mount(e->fd, k->have_root_mnt, k->root_mnt, k->root_dev)) {
                /* Another mount: judged on its own, not here. */
                k->w.nested_mounts++;
                return DIR_WALK_SKIP;
        }
        r = write_check_dir(e->fd, &err);
        walk_note(&k->w, k->b, path, 'd', r, err);
        if (e->depth > k->max_depth) {
                walk_truncated(&k->w, WALK_BOUND_DEPTH);
                return DIR_WALK_SKIP;
        }
        return DIR_WALK_CONTINUE;
}

int write_walk_run(int dir_fd, const char *display_prefix, const struct write_walk_bounds *b,
                   struct write_walk *ret)
{
        struct walker k = {
                .w = { .result = WRITE_DENIED },
                .b = b,
                .prefix = display_prefix,
                /* Each level holds a directory fd open: 63 below the root at most. */
                .max_depth = MIN(b->max_depth, 63U),
                .display = STRBUF_INIT,
        };
        cleanup_close int fd = -EBADF;
        struct stat root_st;
        enum write_result r;
        int err;

        if (fstat(dir_fd, &root_st) < 0)
                return negative_errno();
        if (!S_ISDIR(root_st.st_mode))
                return -ENOTDIR;
        k.root_dev = root_st.st_dev;
        k.have_root_mnt = fd_mount_id(dir_fd, &k.root_mnt) >= 0;

        r = write_check_dir(dir_fd, &err);
        k.w.visited = 1;
        if (r == WRITE_DENIED)
                k.w.denied_err = err;
        walk_note(&k.w, b, display_prefix, 'd', r, err);

        /* Reopen for reading: dir_fd may be O_PATH. */
        fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                /* Cannot list: whatever lies below is unproven. */
                walk_note(&k.w, b, display_prefix, 'd', WRITE_INCONCLUSIVE, errno);
                *ret = k.w;
                strbuf_release(&k.display);
                return 0;
        }
        err = dir_walk(fd, &(const struct dir_walk_options){ .paths = true }, walker_visit, &k);
        if (err < 0) {
                write_walk_done(&k.w);
                strbuf_release(&k.display);
                return err;
        }
        /* The bound on findings is also checked once the walk ran out. */
        if (!k.stopped && walker_findings_full(&k))
                walk_truncated(&k.w, WALK_BOUND_FINDINGS);
        strbuf_release(&k.display);
        *ret = k.w;
        return 0;
}

void write_walk_done(struct write_walk *w)
{
        for (unsigned i = 0; i < w->n_findings; i++)
                free(w->findings[i].path);
        free(w->findings);
        *w = (struct write_walk){};
}
