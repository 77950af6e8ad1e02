/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Shared by the parts of the cgroup module, in dependency order:
 *   cgroup-util.c      path validation, interface-file I/O, mkdir/rmdir trees
 *   cgroup-v2.c        controller delegation and limits on the unified hierarchy
 *   cgroup-hybrid.c    the v1 memory/pids/cpu/freezer hierarchies
 *   cgroup-layout.c    where the hierarchies are mounted, our own cgroup in each
 *   cgroup-kill.c      freeze, kill, pid lists and the bounded waits
 *   cgroup-placement.c a new child's cgroup.procs, opened before the clone
 *   cgroup-tree.c      the subtree: open, adopt, create, remove, destroy, sweep
 *   cgroup-watch.c     cgroup.events notifications on the event loop
 *
 * Every directory is reached fd-relative from the subtree root with
 * RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, after cgroup_rel_valid() has refused
 * "." and ".." components: the tree cannot name anything outside itself.
 */
#include <stdbool.h>
#include <stdint.h>

#include "cgroup/cgroup.h"

enum {
        CG_V1_MEMORY,
        CG_V1_PIDS,
        CG_V1_CPU,
        CG_V1_FREEZER,
        /* No limit of ours: mirrored (CGROUP_LAYOUT_DEVICES) only so that
         * runc, which refuses to run without a devices cgroup, finds one
         * inside our subtree (cgroup_view_open()). Native containers are
         * never placed in it. */
        CG_V1_DEVICES,
        CG_V1_MAX,
};

/* Controllers the daemon manages on v2, as a bit mask. */
enum {
        CG_CTRL_CPU = 1U << 0,
        CG_CTRL_MEMORY = 1U << 1,
        CG_CTRL_PIDS = 1U << 2,
        CG_CTRL_ALL = CG_CTRL_CPU | CG_CTRL_MEMORY | CG_CTRL_PIDS,
};

/* One hierarchy: our own cgroup in it and the subtree root below it. */
struct cgroup_hier {
        int own_fd;     /* the cgroup we were started in; -EBADF: hierarchy unused */
        int root_fd;    /* subtree root (own itself when subtree_name is NULL) */
        char *own_path; /* owned: path of own inside the hierarchy ("/" or "/a/b") */
        char *root_abs; /* owned: absolute path of the subtree root */
};

struct cgroup_tree {
        enum cgroup_mode mode;
        unsigned flags;
        char *subtree_name; /* owned; NULL: own cgroup is the root */
        struct cgroup_hier v2;
        struct cgroup_hier v1[CG_V1_MAX]; /* hybrid only */
        unsigned own_enabled; /* v2: controllers we enabled on own (undone on destroy) */
        bool adopted;         /* we moved ourselves into control/ */
        bool has_kill;
        bool has_freeze;
};

extern const char *const cgroup_v1_names[CG_V1_MAX];

bool cgroup_rel_valid(const char *rel, bool allow_empty);
/* Opens rel ("" = the root) below root_fd as an O_DIRECTORY fd. */
int cgroup_open_dir(int root_fd, const char *rel);
/* One write() of value to dirfd/file (kernel interface files want one
 * write): base's write_string_file_full_at(), truncating. */
int cgroup_write_at(int dirfd, const char *file, const char *value);
int cgroup_read_at(int dirfd, const char *file, char **ret);
/* Value of "key N" in a flat-keyed file such as cgroup.events or memory.events. */
int cgroup_keyed_get(const char *text, const char *key, uint64_t *ret);
int cgroup_read_keyed_at(int dirfd, const char *file, const char *key, uint64_t *ret);
int cgroup_read_u64_at(int dirfd, const char *file, uint64_t *ret);
/* mkdir -p of rel below root_fd; EEXIST is fine (tests pre-create fake dirs). */
int cgroup_mkdir_p(int root_fd, const char *rel);
/* rmdir of rel and every cgroup below it, children first. */
int cgroup_rmdir_tree(int root_fd, const char *rel);

/* cgroup-v2.c */
unsigned cgroup_v2_ctrl_parse(const char *list);
int cgroup_v2_offered(int dirfd, unsigned *ret_mask);
/* Enables the managed controllers the cgroup is offered and has not enabled
 * yet, in one write; returns the mask it enabled. */
int cgroup_v2_enable(int dirfd, unsigned *ret_enabled);
int cgroup_v2_disable(int dirfd, unsigned mask);
int cgroup_v2_set_limits(int leaf_fd, const struct cgroup_limits *limits);
int cgroup_v2_stats(int leaf_fd, struct cgroup_stats *ret);
/* "quota period" for cpu CPUs over CGROUP_CPU_PERIOD_USEC; -EINVAL if absurd. */
int cgroup_cpu_quota(double cpu, uint64_t *ret_quota);
#define CGROUP_CPU_PERIOD_USEC    100000ULL
#define CGROUP_CPU_MIN_QUOTA_USEC 1000ULL

/* cgroup-hybrid.c */
int cgroup_v1_set_limits(struct cgroup_tree *t, const char *rel, const struct cgroup_limits *l);
int cgroup_v1_stats(struct cgroup_tree *t, const char *rel, struct cgroup_stats *ret);
int cgroup_v1_freezer_set(struct cgroup_tree *t, const char *rel, bool frozen);
/* 1 frozen, 0 not (yet), -errno. */
int cgroup_v1_freezer_state(struct cgroup_tree *t, const char *rel);
