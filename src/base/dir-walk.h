/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The one directory-tree walker (and, below it, the one-level listing). It
 * is iterative (an explicit stack of open
 * directories, one fd per level: never recursion, so a deep tree an agent
 * made costs heap, not stack) and fd-relative: every directory is opened
 * with O_NOFOLLOW below the fd of its parent, so a symlink is reported as
 * an entry and never followed, and a rename elsewhere cannot redirect the
 * walk.
 *
 * The walk visits the entries below dir_fd (dir_fd itself is not visited)
 * depth first, in readdir order, and calls visit() with:
 *
 *   DIR_WALK_ENTRY  anything that is not a directory (e->fd is -EBADF);
 *   DIR_WALK_ENTER  a directory, opened (e->fd), before its entries;
 *                   return DIR_WALK_SKIP to leave it unvisited (then no
 *                   DIR_WALK_LEAVE follows);
 *   DIR_WALK_LEAVE  the same directory after its entries (e->fd still open:
 *                   unlinkat(e->parent_fd, e->name, AT_REMOVEDIR) works);
 *   DIR_WALK_ERROR  e->error: with e->fd == -EBADF a directory that could
 *                   not be opened (or lies deeper than max_depth: -ELOOP);
 *                   with e->fd >= 0 reading that open directory failed
 *                   (DIR_WALK_LEAVE follows). For the root, name is NULL.
 *
 * visit() returns DIR_WALK_CONTINUE, DIR_WALK_SKIP, DIR_WALK_STOP (the walk
 * ends, dir_walk() returns 0) or a negative errno (the walk ends and
 * dir_walk() returns it). Errors the visitor wants to remember and go on
 * after are kept in its own state. Every fd is closed when dir_walk()
 * returns; the caller's dir_fd is never consumed.
 */
#include <stdbool.h>

enum dir_walk_event {
        DIR_WALK_ENTRY,
        DIR_WALK_ENTER,
        DIR_WALK_LEAVE,
        DIR_WALK_ERROR,
};

#define DIR_WALK_CONTINUE 0
#define DIR_WALK_SKIP     1
#define DIR_WALK_STOP     2

struct dir_walk_entry {
        int parent_fd;        /* the directory that holds name (-EBADF for the root) */
        const char *name;     /* borrowed: valid during the call */
        int fd;               /* ENTER/LEAVE (and a read ERROR): the directory itself */
        unsigned char d_type; /* from readdir(): DT_DIR, DT_REG, DT_LNK, ... or DT_UNKNOWN */
        unsigned depth;       /* 1 for the entries of dir_fd */
        const char *path;     /* with .paths: relative to dir_fd ("a/b"; "" for the root) */
        int error;            /* DIR_WALK_ERROR: -errno */
};

struct dir_walk_options {
        /* Directories deeper than this are not opened (a DIR_WALK_ERROR with
         * -ELOOP instead); 0: no bound but the fds and memory it takes. */
        unsigned max_depth;
        /* Only directories are visited: a cgroup tree's files are kernel
         * interface files, never entries to act on. */
        bool dirs_only;
        /* Keep e->path (costs a string per level). */
        bool paths;
};

typedef int (*dir_walk_fn)(const struct dir_walk_entry *e, enum dir_walk_event event,
                           void *userdata);

/* dir_fd may be O_PATH; it is reopened for reading. -errno if that fails. */
int dir_walk(int dir_fd, const struct dir_walk_options *o, dir_walk_fn visit, void *userdata);

/* One level: the names in dir_fd (not "." and ".."; with dirs_only, of
 * directories only), in readdir order, as a new NULL-terminated vector
 * (NULL when there are none). dir_fd may be O_PATH and is not consumed. */
int dir_list_names(int dir_fd, bool dirs_only, char ***ret);
