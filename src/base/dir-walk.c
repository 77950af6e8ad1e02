/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "base/dir-walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "base/macro.h"
#include "base/strbuf.h"
#include "base/util.h"

/* One open directory on the stack; stack[0] is the root. */
struct level {
        DIR *dir;
        char *name;      /* owned; NULL for the root */
        size_t path_len; /* length of this directory's path in the walk's strbuf */
};

struct walk {
        const struct dir_walk_options *o;
        dir_walk_fn visit;
        void *userdata;
        struct level *stack; /* owned */
        size_t n, alloc;
        struct strbuf path;
};

/* Cuts the path back to len (the buffer is allocated when paths are kept). */
static void walk_path_cut(struct walk *w, size_t len)
{
        if (w->o->paths) {
                w->path.len = len;
                w->path.buf[len] = '\0';
        }
}

static void walk_pop(struct walk *w)
{
        struct level *top = &w->stack[--w->n];

        (void) closedir(top->dir);
        free(top->name);
        walk_path_cut(w, w->n > 0 ? w->stack[w->n - 1].path_len : 0);
}

static void walk_push(struct walk *w, DIR *d, const char *name)
{
        if (w->n == w->alloc) {
                w->alloc = w->alloc ? w->alloc * 2 : 8;
                w->stack = xrealloc(w->stack, w->alloc * sizeof(*w->stack));
        }
        w->stack[w->n++] = (struct level){
                .dir = d,
                .name = name ? xstrdup(name) : NULL,
                .path_len = w->path.len,
        };
}

/* The entry that names the directory on top of the stack. */
static struct dir_walk_entry walk_top_entry(const struct walk *w)
{
        const struct level *top = &w->stack[w->n - 1];

        return (struct dir_walk_entry){
                .parent_fd = w->n > 1 ? dirfd(w->stack[w->n - 2].dir) : -EBADF,
                .name = top->name,
                .fd = dirfd(top->dir),
                .d_type = DT_DIR,
                .depth = (unsigned) (w->n - 1),
                .path = w->o->paths ? w->path.buf : NULL,
        };
}

/* The end of the directory on top: a read error, then LEAVE, then pop. */
static int walk_finish_top(struct walk *w, int read_errno)
{
        struct dir_walk_entry e;
        int k = DIR_WALK_CONTINUE;

        walk_path_cut(w, w->stack[w->n - 1].path_len);
        e = walk_top_entry(w);

        if (read_errno != 0) {
                e.error = -read_errno;
                k = w->visit(&e, DIR_WALK_ERROR, w->userdata);
        }
        if (w->n > 1 && (k == DIR_WALK_CONTINUE || k == DIR_WALK_SKIP)) {
                e.error = 0;
                k = w->visit(&e, DIR_WALK_LEAVE, w->userdata);
        }
        walk_pop(w);
        return k;
}

/* One readdir() entry of the directory on top of the stack. */
static int walk_entry(struct walk *w, const struct dirent *de)
{
        struct dir_walk_entry e = {
                .parent_fd = dirfd(w->stack[w->n - 1].dir),
                .name = de->d_name,
                .fd = -EBADF,
                .d_type = de->d_type,
                .depth = (unsigned) w->n,
        };
        DIR *d;
        int fd, k;

        if (w->o->paths) {
                walk_path_cut(w, w->stack[w->n - 1].path_len);
                if (w->path.len > 0)
                        strbuf_addch(&w->path, '/');
                strbuf_adds(&w->path, de->d_name);
                e.path = w->path.buf;
        }
        if (e.d_type == DT_UNKNOWN) {
                /* Some filesystems do not fill d_type: ask the inode. */
                struct stat st;
                if (fstatat(e.parent_fd, e.name, &st, AT_SYMLINK_NOFOLLOW) >= 0)
                        e.d_type = (unsigned char) IFTODT(st.st_mode);
        }
        if (e.d_type != DT_DIR)
                return w->o->dirs_only ? DIR_WALK_CONTINUE
                                       : w->visit(&e, DIR_WALK_ENTRY, w->userdata);
        if (w->o->max_depth > 0 && e.depth > w->o->max_depth) {
                e.error = -ELOOP;
                return w->visit(&e, DIR_WALK_ERROR, w->userdata);
        }
        fd = openat(e.parent_fd, e.name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                e.error = negative_errno();
                return w->visit(&e, DIR_WALK_ERROR, w->userdata);
        }
        e.fd = fd;
        k = w->visit(&e, DIR_WALK_ENTER, w->userdata);
        if (k != DIR_WALK_CONTINUE) {
                safe_close(fd);
                return k == DIR_WALK_SKIP ? DIR_WALK_CONTINUE : k;
        }
        d = fdopendir(fd); /* owns fd on success */
        if (!d) {
                /* Entered but unreadable: as a failed read, then LEAVE. */
                e.error = negative_errno();
                k = w->visit(&e, DIR_WALK_ERROR, w->userdata);
                if (k == DIR_WALK_CONTINUE || k == DIR_WALK_SKIP) {
                        e.error = 0;
                        k = w->visit(&e, DIR_WALK_LEAVE, w->userdata);
                }
                safe_close(fd);
                return k;
        }
        walk_push(w, d, e.name);
        return DIR_WALK_CONTINUE;
}

int dir_walk(int dir_fd, const struct dir_walk_options *o, dir_walk_fn visit, void *userdata)
{
        static const struct dir_walk_options defaults = {};
        struct walk w = {
                .o = o ? o : &defaults,
                .visit = visit,
                .userdata = userdata,
                .path = STRBUF_INIT,
        };
        DIR *d;
        int fd, r = 0;

        fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        d = fdopendir(fd); /* owns fd on success */
        if (!d) {
                r = negative_errno();
                safe_close(fd);
                return r;
        }
        if (w.o->paths)
                strbuf_grow(&w.path, 256);
        walk_push(&w, d, NULL);
        while (r >= 0 && w.n > 0) {
                struct dirent *de;
                int k;

                errno = 0;
                de = readdir(w.stack[w.n - 1].dir);
                if (!de)
                        k = walk_finish_top(&w, errno);
                else if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                else
                        k = walk_entry(&w, de);
                if (k < 0)
                        r = k;
                else if (k == DIR_WALK_STOP)
                        break;
        }
        while (w.n > 0)
                walk_pop(&w);
        free(w.stack);
        strbuf_release(&w.path);
        return r < 0 ? r : 0;
}

int dir_list_names(int dir_fd, bool dirs_only, char ***ret)
{
        int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        char **v = NULL;
        struct dirent *de;
        DIR *d;
        int r = 0;

        if (fd < 0)
                return negative_errno();
        d = fdopendir(fd); /* owns fd on success */
        if (!d) {
                r = negative_errno();
                safe_close(fd);
                return r;
        }
        while ((errno = 0, de = readdir(d))) {
                unsigned char type = de->d_type;
                struct stat st;

                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (type == DT_UNKNOWN && fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) >= 0)
                        type = (unsigned char) IFTODT(st.st_mode);
                if (!dirs_only || type == DT_DIR)
                        strv_push(&v, xstrdup(de->d_name));
        }
        if (errno != 0)
                r = negative_errno();
        (void) closedir(d);
        if (r < 0) {
                strv_free(v);
                return r;
        }
        *ret = v;
        return 0;
}
