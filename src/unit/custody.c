/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "unit/custody.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/macro.h"
#include "base/util.h"

#define COPY_CHUNK ((size_t) 128 * 1024)

/* One open directory of the walk: the source dir, its copy, and the sorted
 * names still to visit. This walk stays apart from base/dir-walk.h on
 * purpose: a copy in custody must be deterministic (sorted names, so the
 * same tree always fails at the same entry), must refuse a directory over
 * the entry budget before holding all of it in memory (list_names()), and
 * carries a destination fd per level beside the source one. */
struct frame {
        int src_fd;   /* owned */
        int dst_fd;   /* owned */
        char **names; /* owned, sorted, n_names entries */
        size_t n_names;
        size_t next;
        char *rel; /* owned; NULL for the root */
        unsigned depth;
};

struct copier {
        const struct custody_options *opts;
        uint64_t max_bytes;
        uint64_t max_entries;
        unsigned max_depth;
        mode_t file_mode;
        mode_t dir_mode;
        struct stat dst_root; /* identity of the destination root */
        struct custody_stats stats;
        struct custody_error *err; /* borrowed: the caller's */
        int64_t entry_owner;       /* uid of the entry being visited, -1 between entries */
        char *buf;                 /* owned: COPY_CHUNK bytes */
        struct frame *frames;      /* owned: the explicit stack */
        size_t n_frames;
        size_t alloc_frames;
};

bool custody_reason_is_source_fault(enum custody_reason r)
{
        return r != CUSTODY_ERR_NONE && r != CUSTODY_ERR_IO && r != CUSTODY_ERR_DESTINATION;
}

void custody_error_done(struct custody_error *e)
{
        if (!e)
                return;
        error_detail_done(&e->detail);
        free(e->rel);
        *e = (struct custody_error){ .owner = -1 };
}

static void frame_done(struct frame *f)
{
        safe_close(f->src_fd);
        safe_close(f->dst_fd);
        for (size_t i = 0; i < f->n_names; i++)
                free(f->names[i]);
        free(f->names);
        free(f->rel);
        *f = (struct frame){ .src_fd = -EBADF, .dst_fd = -EBADF };
}

static void copier_done(struct copier *c)
{
        for (size_t i = 0; i < c->n_frames; i++)
                frame_done(&c->frames[i]);
        free(c->frames);
        free(c->buf);
        c->frames = NULL;
        c->buf = NULL;
        c->n_frames = c->alloc_frames = 0;
}

static const char *type_refusal(mode_t m, enum custody_reason *ret)
{
        switch (m & S_IFMT) {
        case S_IFLNK:
                *ret = CUSTODY_ERR_SYMLINK;
                return "symlink";
        case S_IFIFO:
                *ret = CUSTODY_ERR_FIFO;
                return "FIFO";
        case S_IFSOCK:
                *ret = CUSTODY_ERR_SOCKET;
                return "socket";
        case S_IFBLK:
                *ret = CUSTODY_ERR_BLOCK_DEVICE;
                return "block device";
        case S_IFCHR:
                *ret = CUSTODY_ERR_CHAR_DEVICE;
                return "character device";
        default:
                *ret = CUSTODY_ERR_SPECIAL;
                return "special file";
        }
}

/* rel as a message names it: an agent can nest 128 directories of 255-byte
 * names, so a longer one keeps its head and its tail (the entry's own name),
 * CUSTODY_REPORT_MAX_REL bytes in all. */
static char *rel_for_message(const char *rel)
{
        size_t n = strlen(rel), keep = (CUSTODY_REPORT_MAX_REL - strlen("/.../")) / 2;

        if (n <= CUSTODY_REPORT_MAX_REL)
                return xstrdup(rel);
        return xasprintf("%.*s/.../%s", (int) keep, rel, rel + n - keep);
}

/*
 * Fills the caller's error (once: the first failure wins) and returns the
 * matching -errno. `what` is the text after "<rel>: "; when NULL it is
 * derived from the reason and the limits.
 */
static int copier_fail(struct copier *c, enum custody_reason reason, int error, const char *rel,
                       const char *what)
{
        cleanup_free char *text = NULL;
        int ret;

        switch (reason) {
        case CUSTODY_ERR_TYPE_CHANGED:
                what = "changed type while copying";
                ret = -ESTALE;
                break;
        case CUSTODY_ERR_VANISHED:
                what = "disappeared while copying";
                ret = -ESTALE;
                break;
        case CUSTODY_ERR_BYTES:
                text = xasprintf("copy exceeds %llu bytes", (unsigned long long) c->max_bytes);
                ret = -EFBIG;
                break;
        case CUSTODY_ERR_ENTRIES:
                text = xasprintf("more than %llu entries", (unsigned long long) c->max_entries);
                ret = -E2BIG;
                break;
        case CUSTODY_ERR_DEPTH:
                text = xasprintf("nested deeper than %u directories", c->max_depth);
                ret = -ELOOP;
                break;
        case CUSTODY_ERR_SOURCE:
                what = "source is not a plain directory";
                ret = -ENOTDIR;
                break;
        case CUSTODY_ERR_DESTINATION:
                ret = -EEXIST;
                break;
        case CUSTODY_ERR_SPARSE:
                what = "sparse file not allowed";
                ret = -EPERM;
                break;
        case CUSTODY_ERR_IO:
                ret = -abs(error);
                if (!what)
                        what = strerror(abs(error));
                break;
        default: /* the type refusals */
                text = xasprintf("%s not allowed", what);
                ret = -EPERM;
                break;
        }
        if (text)
                what = text;

        if (c->err && c->err->reason == CUSTODY_ERR_NONE) {
                cleanup_free char *shown = rel_for_message(rel ? rel : ".");
                c->err->reason = reason;
                (void) error_detail_set(&c->err->detail, ret, "%s: %s", shown, what);
                c->err->rel = xstrdup(rel ? rel : ".");
                c->err->owner = c->entry_owner;
        }
        return ret;
}

static int name_cmp(const void *a, const void *b)
{
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/*
 * Lists the names in dir fd `fd` (without "." and ".."), sorted, stopping as
 * soon as there are more than `budget`: then *ret_overflow is the name that
 * did not fit and -E2BIG is returned. Memory stays bounded by the budget.
 */
static int list_names(int fd, uint64_t budget, char ***ret, size_t *ret_n, char **ret_overflow)
{
        char **names = NULL;
        size_t n = 0, alloc = 0;
        struct dirent *de;
        int r = 0;
        /* fdopendir() takes the fd; list through a duplicate so the frame's
         * fd stays ours. The shared offset does not matter to openat(). */
        int dfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        DIR *d;

        if (dfd < 0)
                return -errno;
        d = fdopendir(dfd);
        if (!d) {
                r = -errno;
                safe_close(dfd);
                return r;
        }
        rewinddir(d);
        while ((errno = 0, de = readdir(d))) {
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (n >= budget) {
                        *ret_overflow = xstrdup(de->d_name);
                        r = -E2BIG;
                        break;
                }
                if (n == alloc) {
                        alloc = alloc ? alloc * 2 : 16;
                        names = xrealloc(names, alloc * sizeof(char *));
                }
                names[n++] = xstrdup(de->d_name);
        }
        if (r == 0 && errno != 0)
                r = -errno;
        closedir(d);
        if (r < 0) {
                for (size_t i = 0; i < n; i++)
                        free(names[i]);
                free(names);
                return r;
        }
        if (n > 1)
                qsort(names, n, sizeof(char *), name_cmp);
        *ret = names;
        *ret_n = n;
        return 0;
}

static char *rel_join(const char *parent, const char *name)
{
        return parent ? xasprintf("%s/%s", parent, name) : xstrdup(name);
}

static uint64_t entries_used(const struct copier *c)
{
        return c->stats.files + c->stats.dirs;
}

static bool same_inode(const struct stat *a, const struct stat *b)
{
        return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Applies the ownership policy to a freshly created copy. */
static int copier_own(struct copier *c, int fd)
{
        if (c->opts && c->opts->set_owner && fchown(fd, c->opts->uid, c->opts->gid) < 0)
                return -errno;
        return 0;
}

/*
 * Pushes a frame for the open source dir `src_fd` whose copy is `dst_fd`
 * (both taken). `rel` (taken) is NULL for the root.
 */
static int copier_push(struct copier *c, int src_fd, int dst_fd, char *rel, unsigned depth)
{
        struct frame f = { .src_fd = src_fd, .dst_fd = dst_fd, .rel = rel, .depth = depth };
        cleanup_free char *overflow = NULL;
        int r;

        r = list_names(f.src_fd, c->max_entries - entries_used(c), &f.names, &f.n_names, &overflow);
        if (r < 0) {
                cleanup_free char *orel = overflow ? rel_join(f.rel, overflow) : NULL;
                struct stat st;
                /* The entry over the budget was never visited: its owner is
                 * whom the refusal blames. */
                c->entry_owner =
                        overflow && fstatat(f.src_fd, overflow, &st, AT_SYMLINK_NOFOLLOW) == 0
                                ? (int64_t) st.st_uid
                                : -1;
                r = r == -E2BIG ? copier_fail(c, CUSTODY_ERR_ENTRIES, 0, orel, NULL)
                                : copier_fail(c, CUSTODY_ERR_IO, r, f.rel, NULL);
                frame_done(&f);
                return r;
        }
        if (c->n_frames == c->alloc_frames) {
                c->alloc_frames = c->alloc_frames ? c->alloc_frames * 2 : 8;
                c->frames = xrealloc(c->frames, c->alloc_frames * sizeof(struct frame));
        }
        c->frames[c->n_frames++] = f;
        return 0;
}

/* Finishes the top directory: its final mode is set only now, so a
 * restrictive dir_mode cannot get in the way of filling it. */
static int copier_pop(struct copier *c)
{
        struct frame *f = &c->frames[c->n_frames - 1];
        int r = 0;

        c->entry_owner = -1;
        if (fchmod(f->dst_fd, c->dir_mode) < 0)
                r = copier_fail(c, CUSTODY_ERR_IO, errno, f->rel, NULL);
        frame_done(f);
        c->n_frames--;
        return r;
}

/*
 * Opens the regular file `name` below `parent` for reading, proving it is
 * still the inode that was listed. It is first opened O_PATH (which never
 * opens a device or FIFO, so a swap cannot make us block or trigger a
 * driver), checked, then reopened through /proc/self/fd, which reaches that
 * very inode. Without /proc it falls back to a direct O_NOFOLLOW|O_NONBLOCK
 * open and checks afterwards.
 */
static int open_listed_file(struct copier *c, int parent, const char *name, const char *rel,
                            const struct stat *listed, int *ret)
{
        char proc_path[sizeof("/proc/self/fd/") + 12];
        cleanup_close int pfd = -EBADF, fd = -EBADF;
        struct stat st;

        pfd = openat(parent, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (pfd < 0)
                return errno == ENOENT ? copier_fail(c, CUSTODY_ERR_VANISHED, 0, rel, NULL)
                                       : copier_fail(c, CUSTODY_ERR_IO, errno, rel, NULL);
        if (fstat(pfd, &st) < 0)
                return copier_fail(c, CUSTODY_ERR_IO, errno, rel, NULL);
        if (!S_ISREG(st.st_mode) || !same_inode(&st, listed))
                return copier_fail(c, CUSTODY_ERR_TYPE_CHANGED, 0, rel, NULL);

        (void) snprintf(proc_path, sizeof(proc_path), "/proc/self/fd/%d", pfd);
        fd = open(proc_path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT) /* no /proc here */
                fd = openat(parent, name,
                            O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) {
                /* ELOOP: now a symlink; ENXIO: now a socket; ENOENT: gone. */
                if (errno == ELOOP || errno == ENXIO || errno == EMLINK || errno == ENOTDIR)
                        return copier_fail(c, CUSTODY_ERR_TYPE_CHANGED, 0, rel, NULL);
                if (errno == ENOENT)
                        return copier_fail(c, CUSTODY_ERR_VANISHED, 0, rel, NULL);
                return copier_fail(c, CUSTODY_ERR_IO, errno, rel, NULL);
        }
        if (fstat(fd, &st) < 0)
                return copier_fail(c, CUSTODY_ERR_IO, errno, rel, NULL);
        if (!S_ISREG(st.st_mode) || !same_inode(&st, listed))
                return copier_fail(c, CUSTODY_ERR_TYPE_CHANGED, 0, rel, NULL);
        *ret = TAKE_FD(fd);
        return 0;
}

static int copy_file(struct copier *c, struct frame *f, const char *name, const char *rel,
                     const struct stat *listed)
{
        cleanup_close int in = -EBADF, out = -EBADF;
        int r;

        /* Cheap early refusal; the real bytes are still counted below because
         * the file may grow while it is copied. */
        if ((uint64_t) listed->st_size > c->max_bytes - c->stats.bytes)
                return copier_fail(c, CUSTODY_ERR_BYTES, 0, rel, NULL);
        /* A file with holes reads as more bytes than it stores: a 10 GiB
         * sparse file in a 256 MiB workspace would fill the copy (and the
         * reader's memory) with zeros. Refused, like any other trick. */
        if ((uint64_t) listed->st_blocks * 512 + CUSTODY_SPARSE_SLACK < (uint64_t) listed->st_size)
                return copier_fail(c, CUSTODY_ERR_SPARSE, EPERM, rel, NULL);

        r = open_listed_file(c, f->src_fd, name, rel, listed, &in);
        if (r < 0)
                return r;

        /* O_EXCL|O_NOFOLLOW relative to our own copy of the directory: the
         * name comes from readdir (no "/", never "." or ".."), so nothing
         * can be created outside the destination. 0600 until chowned. */
        out = openat(f->dst_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (out < 0)
                return copier_fail(c, CUSTODY_ERR_IO, errno, rel, NULL);

        for (;;) {
                uint64_t remaining = c->max_bytes - c->stats.bytes;
                /* Ask for one byte more than the budget so an overflow is seen. */
                size_t want = remaining < COPY_CHUNK ? (size_t) remaining + 1 : COPY_CHUNK;
                ssize_t n = read(in, c->buf, want);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return copier_fail(c, CUSTODY_ERR_IO, errno, rel, NULL);
                }
                if (n == 0)
                        break;
                if ((uint64_t) n > remaining)
                        return copier_fail(c, CUSTODY_ERR_BYTES, 0, rel, NULL);
                r = write_all(out, c->buf, (size_t) n);
                if (r < 0)
                        return copier_fail(c, CUSTODY_ERR_IO, r, rel, NULL);
                c->stats.bytes += (uint64_t) n;
        }

        r = copier_own(c, out);
        if (r >= 0 && fchmod(out, c->file_mode) < 0)
                r = -errno;
        if (r < 0)
                return copier_fail(c, CUSTODY_ERR_IO, r, rel, NULL);
        c->stats.files++;
        return 0;
}

static int copy_dir(struct copier *c, struct frame *f, const char *name, const char *rel,
                    const struct stat *listed)
{
        cleanup_close int src = -EBADF, dst = -EBADF;
        unsigned depth = f->depth + 1;
        struct stat st;
        int r, parent_dst = f->dst_fd;

        if (depth > c->max_depth)
                return copier_fail(c, CUSTODY_ERR_DEPTH, 0, rel, NULL);

        src = openat(f->src_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (src < 0) {
                if (errno == ELOOP || errno == ENOTDIR || errno == ENXIO || errno == EMLINK)
                        return copier_fail(c, CUSTODY_ERR_TYPE_CHANGED, 0, rel, NULL);
                if (errno == ENOENT)
                        return copier_fail(c, CUSTODY_ERR_VANISHED, 0, rel, NULL);
                return copier_fail(c, CUSTODY_ERR_IO, errno, rel, NULL);
        }
        if (fstat(src, &st) < 0)
                return copier_fail(c, CUSTODY_ERR_IO, errno, rel, NULL);
        if (!S_ISDIR(st.st_mode) || !same_inode(&st, listed))
                return copier_fail(c, CUSTODY_ERR_TYPE_CHANGED, 0, rel, NULL);
        /* A destination inside the source would copy itself forever. */
        if (same_inode(&st, &c->dst_root))
                return copier_fail(c, CUSTODY_ERR_IO, EINVAL, rel,
                                   "destination is inside the source");

        if (mkdirat(parent_dst, name, 0700) < 0)
                return copier_fail(c, CUSTODY_ERR_IO, errno, rel, NULL);
        dst = openat(parent_dst, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dst < 0)
                return copier_fail(c, CUSTODY_ERR_IO, errno, rel, NULL);
        r = copier_own(c, dst);
        if (r < 0)
                return copier_fail(c, CUSTODY_ERR_IO, r, rel, NULL);
        c->stats.dirs++;

        /* f may move when the stack grows: not used after this point. */
        return copier_push(c, TAKE_FD(src), TAKE_FD(dst), xstrdup(rel), depth);
}

/* Visits the next name of the top frame. */
static int copier_step(struct copier *c)
{
        struct frame *f = &c->frames[c->n_frames - 1];
        const char *name = f->names[f->next++];
        cleanup_free char *rel = rel_join(f->rel, name);
        enum custody_reason why;
        const char *what;
        struct stat st;
        int r;

        c->entry_owner = -1;
        if (fstatat(f->src_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? copier_fail(c, CUSTODY_ERR_VANISHED, 0, rel, NULL)
                                       : copier_fail(c, CUSTODY_ERR_IO, errno, rel, NULL);
        c->entry_owner = (int64_t) st.st_uid;
        if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
                what = type_refusal(st.st_mode, &why);
                return copier_fail(c, why, 0, rel, what);
        }
        if (entries_used(c) >= c->max_entries)
                return copier_fail(c, CUSTODY_ERR_ENTRIES, 0, rel, NULL);

        if (c->opts && c->opts->test_before_open) {
                r = c->opts->test_before_open(f->src_fd, name, rel, c->opts->test_userdata);
                if (r < 0)
                        return copier_fail(c, CUSTODY_ERR_IO, r, rel, NULL);
        }

        if (S_ISREG(st.st_mode))
                return copy_file(c, f, name, rel, &st);
        return copy_dir(c, f, name, rel, &st);
}

static int open_source(struct copier *c, int src_dirfd, const char *src_path, int *ret)
{
        cleanup_close int fd = -EBADF;
        struct stat st;

        if (!src_path || !*src_path) {
                if (fstat(src_dirfd, &st) < 0)
                        return copier_fail(c, CUSTODY_ERR_IO, errno, NULL, NULL);
                if (!S_ISDIR(st.st_mode))
                        return copier_fail(c, CUSTODY_ERR_SOURCE, 0, NULL, NULL);
                /* Our own open file description: independent readdir offset. */
                fd = openat(src_dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0)
                        return copier_fail(c, CUSTODY_ERR_IO, errno, NULL, NULL);
        } else {
                /* No symlink anywhere on the way, not only in the last
                 * component: the path may pass through agent-written dirs. */
                fd = openat2_flags(src_dirfd, src_path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0,
                                   RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
                if (fd == -ENOSYS) { /* pre-5.6 kernel: last component only */
                        fd = openat(src_dirfd, src_path,
                                    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (fd < 0)
                                fd = -errno;
                }
                if (fd == -ELOOP || fd == -ENOTDIR)
                        return copier_fail(c, CUSTODY_ERR_SOURCE, 0, NULL, NULL);
                if (fd < 0)
                        return copier_fail(c, CUSTODY_ERR_IO, -fd, NULL, NULL);
        }
        *ret = TAKE_FD(fd);
        return 0;
}

static int open_destination(struct copier *c, int dst_parent_fd, const char *dst_name, int *ret)
{
        cleanup_free char *refusal =
                xasprintf("custody destination %s must not exist or be empty", dst_name);
        cleanup_close int fd = -EBADF;
        char **names = NULL;
        char *overflow = NULL;
        size_t n = 0;
        int r;

        fd = openat(dst_parent_fd, dst_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT) {
                if (mkdirat(dst_parent_fd, dst_name, 0700) < 0)
                        return copier_fail(c, CUSTODY_ERR_IO, errno, NULL, NULL);
                fd = openat(dst_parent_fd, dst_name,
                            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        } else if (fd < 0 && (errno == ELOOP || errno == ENOTDIR)) {
                return copier_fail(c, CUSTODY_ERR_DESTINATION, 0, NULL, refusal);
        } else if (fd >= 0) {
                r = list_names(fd, 0, &names, &n, &overflow);
                free(names);
                free(overflow);
                if (r == -E2BIG)
                        return copier_fail(c, CUSTODY_ERR_DESTINATION, 0, NULL, refusal);
                if (r < 0)
                        return copier_fail(c, CUSTODY_ERR_IO, r, NULL, NULL);
        }
        if (fd < 0)
                return copier_fail(c, CUSTODY_ERR_IO, errno, NULL, NULL);
        r = copier_own(c, fd);
        if (r < 0)
                return copier_fail(c, CUSTODY_ERR_IO, r, NULL, NULL);
        if (fstat(fd, &c->dst_root) < 0)
                return copier_fail(c, CUSTODY_ERR_IO, errno, NULL, NULL);
        *ret = TAKE_FD(fd);
        return 0;
}

int custody_copy(int src_dirfd, const char *src_path, int dst_parent_fd, const char *dst_name,
                 const struct custody_options *opts, struct custody_stats *ret_stats,
                 struct custody_error *err)
{
        struct copier c = {
                .opts = opts,
                .err = err,
                .max_bytes = CUSTODY_MAX_BYTES,
                .max_entries = CUSTODY_MAX_ENTRIES,
                .max_depth = CUSTODY_MAX_DEPTH,
                .file_mode = 0644,
                .dir_mode = 0755,
                .entry_owner = -1,
        };
        cleanup_close int src = -EBADF, dst = -EBADF;
        struct stat src_st;
        int r;

        if (err)
                *err = (struct custody_error){ .owner = -1 };
        if (!dst_name || !*dst_name || strchr(dst_name, '/') || streq(dst_name, ".") ||
            streq(dst_name, ".."))
                return copier_fail(&c, CUSTODY_ERR_IO, EINVAL, NULL, "invalid destination name");
        if (opts) {
                if (opts->limits.max_bytes)
                        c.max_bytes = opts->limits.max_bytes;
                if (opts->limits.max_entries)
                        c.max_entries = opts->limits.max_entries;
                if (opts->limits.max_depth)
                        c.max_depth = opts->limits.max_depth;
                /* Never copy set-id or sticky bits onto grader-readable data. */
                if (opts->file_mode)
                        c.file_mode = opts->file_mode & 0777;
                if (opts->dir_mode)
                        c.dir_mode = opts->dir_mode & 0777;
        }

        r = open_source(&c, src_dirfd, src_path, &src);
        if (r < 0)
                return r;
        if (fstat(src, &src_st) < 0)
                return copier_fail(&c, CUSTODY_ERR_IO, errno, NULL, NULL);
        r = open_destination(&c, dst_parent_fd, dst_name, &dst);
        if (r < 0)
                return r;
        if (same_inode(&src_st, &c.dst_root))
                return copier_fail(&c, CUSTODY_ERR_IO, EINVAL, NULL,
                                   "destination is the source itself");

        c.buf = xmalloc(COPY_CHUNK);
        r = copier_push(&c, TAKE_FD(src), TAKE_FD(dst), NULL, 0);
        while (r >= 0 && c.n_frames > 0) {
                struct frame *top = &c.frames[c.n_frames - 1];
                r = top->next < top->n_names ? copier_step(&c) : copier_pop(&c);
        }
        copier_done(&c);
        if (r < 0)
                return r;
        if (ret_stats)
                *ret_stats = c.stats;
        return 0;
}

/* --- the report a child job hands back ---------------------------------------- */

size_t custody_report_format(int r, const struct custody_error *err, char *out, size_t size)
{
        int n;

        if (size == 0)
                return 0;
        n = snprintf(out, size, "%d %d %lld %s", r, err ? (int) err->reason : 0,
                     err ? (long long) err->owner : -1LL,
                     err && err->detail.message ? err->detail.message : "");
        return n < 0 ? 0 : MIN((size_t) n, size - 1);
}

/* One decimal field in [lo, hi] followed by a single space; advances *p. */
static int report_field(const char **p, const char *end, long long lo, long long hi, long long *ret)
{
        const char *q = *p;
        bool neg = q < end && *q == '-';
        long long v = 0;
        size_t digits = 0;

        q += neg;
        for (; q < end && *q >= '0' && *q <= '9'; q++, digits++) {
                if (digits >= 18) /* more than any field can hold */
                        return -EBADMSG;
                v = v * 10 + (*q - '0');
        }
        if (digits == 0 || q >= end || *q != ' ')
                return -EBADMSG;
        /* Only what "%d"/"%lld" print: no leading zero, no "-0". */
        if ((digits > 1 && (*p)[neg] == '0') || (neg && v == 0))
                return -EBADMSG;
        v = neg ? -v : v;
        if (v < lo || v > hi)
                return -EBADMSG;
        *ret = v;
        *p = q + 1;
        return 0;
}

int custody_report_parse(const char *in, size_t len, struct custody_report *ret)
{
        const char *p = in, *end = in + len;
        long long r, reason, owner;

        *ret = (struct custody_report){ .r = -EBADMSG, .reason = CUSTODY_ERR_IO, .owner = -1 };
        if (report_field(&p, end, -4095, 0, &r) < 0 ||
            report_field(&p, end, CUSTODY_ERR_NONE, CUSTODY_ERR_IO, &reason) < 0 ||
            report_field(&p, end, -1, (long long) UINT32_MAX - 1, &owner) < 0)
                return -EBADMSG;
        /* Success carries no reason, a failure always one. */
        if ((r == 0) != (reason == CUSTODY_ERR_NONE))
                return -EBADMSG;
        *ret = (struct custody_report){
                .r = (int) r,
                .reason = (enum custody_reason) reason,
                .owner = owner,
                .message = xstrndup(p, (size_t) (end - p)),
        };
        return 0;
}

void custody_report_done(struct custody_report *rep)
{
        free(rep->message);
        *rep = (struct custody_report){ .owner = -1 };
}
