/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The daemon's cgroup subtree: control/ + zones/<zone>/<container>, created
 * under the cgroup the daemon was started in, on a pure cgroup v2 host or a
 * hybrid one (v1 memory/pids/cpu/freezer + a controller-less cgroup2 whose
 * core files cgroup.kill/cgroup.freeze/cgroup.events still work).
 *
 * Invariants:
 *  - Every path is relative to the subtree root and may not contain "." or
 *    ".." components; the tree never touches anything outside its root.
 *  - The tree never writes a pid it did not spawn into any cgroup.procs:
 *    cgroup_tree_adopt_self() moves only getpid(), and containers enter their
 *    leaf at clone time (CLONE_INTO_CGROUP on v2) or through
 *    cgroup_placement_attach() while the child still waits for its go byte.
 *  - cgroup_tree_free() removes nothing; cgroup_tree_destroy() removes the
 *    whole subtree (after killing it) and is what the daemon calls on exit.
 *
 * The implementation is API-stable for the sandbox, unit and preflight
 * modules; backends live in cgroup-v2.c and cgroup-hybrid.c.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/macro.h"
#include "base/time-util.h"

enum cgroup_mode {
        CGROUP_MODE_V2,     /* unified hierarchy with delegated controllers */
        CGROUP_MODE_HYBRID, /* v1 controllers + controller-less cgroup2 */
};

const char *cgroup_mode_to_string(enum cgroup_mode m);

/* Where the hierarchies are mounted; tests point these at fake trees. */
struct cgroup_layout {
        const char *v2_mount;     /* e.g. /sys/fs/cgroup or /sys/fs/cgroup/unified */
        const char *v1_mount;     /* e.g. /sys/fs/cgroup (NULL on pure v2) */
        const char *self_cgroup;  /* contents of /proc/self/cgroup (NULL: read it) */
        const char *subtree_name; /* name of our subtree dir, e.g. "openenvd-<id>";
                                   * NULL: the daemon's own cgroup is the root */
        unsigned flags;           /* CGROUP_LAYOUT_* */
        char *storage;            /* owned: strings set by cgroup_layout_detect() */
};

/* Pretend the cgroup2 tree lacks cgroup.kill / cgroup.freeze: exercises the
 * fallbacks (SIGKILL sweep under the v1 freezer) on kernels that have them. */
#define CGROUP_LAYOUT_NO_KILL   (1U << 0)
#define CGROUP_LAYOUT_NO_FREEZE (1U << 1)
/* Hybrid hosts: mirror the tree in the v1 devices hierarchy too, for runc
 * (cgroup_view_open()); it costs two fds and a mkdir per cgroup, so only a
 * unit with a zone under an OCI runtime asks for it. */
#define CGROUP_LAYOUT_DEVICES (1U << 2)

/* Frees what cgroup_layout_detect() allocated; the struct can be reused. */
void cgroup_layout_done(struct cgroup_layout *l);

struct cgroup_limits {
        uint64_t memory_bytes; /* 0: no limit; swap is always off when set */
        uint64_t pids;         /* 0: no limit */
        double cpu;            /* CPUs, 0: no limit; quota over a 100 ms period */
};

struct cgroup_stats {
        uint64_t memory_current;
        uint64_t memory_max_events; /* memory.events max (v2) / failcnt (v1) */
        uint64_t oom_kills;
        uint64_t pids_current;
        uint64_t pids_max_events; /* pids.events max: forks refused by pids.max */
        uint64_t cpu_usage_usec;
};

struct cgroup_tree; /* opaque */

/*
 * Placement of a new child in a leaf: the spawner passes v2_fd to clone3()
 * (CLONE_INTO_CGROUP) and, on hybrid hosts, writes the child's pid to each
 * v1 cgroup.procs fd before letting the child continue.
 */
struct cgroup_placement {
        int v2_fd;       /* owned: O_DIRECTORY fd of the leaf in the cgroup2 tree */
        int v1_procs[4]; /* owned: cgroup.procs of the leaf per v1 controller, -EBADF if unused */
        size_t n_v1;
};
void cgroup_placement_done(struct cgroup_placement *p); /* closes the fds */
/* Writes a pid the caller just spawned (and that still waits) into the v1 leaves. */
int cgroup_placement_attach(const struct cgroup_placement *p, pid_t child);
/* Same for the cgroup2 leaf (<v2_fd>/cgroup.procs), for spawners that fork
 * instead of using clone3(CLONE_INTO_CGROUP). Only ever the caller's own child. */
int cgroup_placement_attach_v2(const struct cgroup_placement *p, pid_t child);
/* Both, for a process the caller did not spawn but placed on purpose: a
 * template's copy, waiting for its go (unit/env-template.h). */
int cgroup_placement_attach_all(const struct cgroup_placement *p, pid_t pid);

/*
 * What a container runtime that computes its own paths below /sys/fs/cgroup
 * (runc on a hybrid host, which resolves the cgroup2 half of a relative
 * cgroupsPath from the root of the tree and strips "..") may be shown:
 * rel's parent in every hierarchy of the tree, named as the runtime looks
 * for it ("unified" for the cgroup2 tree, then the v1 controllers, devices
 * included: runc refuses to run without one). Bound in a private mount
 * namespace at /sys/fs/cgroup/<name> (sandbox/cgroup-view-ns.h), cgroupsPath
 * "/<rel's last component>" is exactly rel, and nothing outside rel's
 * parent is within the runtime's reach. -EOPNOTSUPP on a pure v2 host, where
 * runtimes resolve a relative path below their own cgroup.
 */
#define CGROUP_VIEW_MAX 8
struct cgroup_view {
        const char *names[CGROUP_VIEW_MAX]; /* static strings */
        int fds[CGROUP_VIEW_MAX];           /* owned O_DIRECTORY fds */
        size_t n;
};
int cgroup_view_open(struct cgroup_tree *t, const char *rel, struct cgroup_view *ret);
void cgroup_view_done(struct cgroup_view *v); /* closes the fds */

/* Detects the layout from /proc/self/mountinfo and /proc/self/cgroup. The
 * strings are owned by ret (cgroup_layout_done()); subtree_name stays NULL.
 * -ENOMEDIUM: no cgroup2 mount (pure v1 hosts are not supported). */
int cgroup_layout_detect(struct cgroup_layout *ret, enum cgroup_mode *ret_mode);

int cgroup_tree_open(const struct cgroup_layout *layout, struct cgroup_tree **ret);
/*
 * Crash recovery: subtrees named <prefix><pid> beside where ours would go
 * (children of the cgroup we were started in) whose pid no longer exists
 * were left by a daemon that died without cleaning up (SIGKILL): their
 * processes are killed and the subtrees removed in every hierarchy. A live
 * pid's subtree is never touched. Returns how many were removed.
 */
int cgroup_sweep_stale(const struct cgroup_layout *layout, const char *prefix);
struct cgroup_tree *cgroup_tree_free(struct cgroup_tree *t);
DEFINE_CLEANUP_FUNC(struct cgroup_tree, cgroup_tree_free);
enum cgroup_mode cgroup_tree_mode(const struct cgroup_tree *t);

/* Moves the calling process (only getpid()) into <subtree>/control. */
int cgroup_tree_adopt_self(struct cgroup_tree *t);
/* mkdir -p of rel (e.g. "zones/agent/env") with limits on the last component. */
int cgroup_create(struct cgroup_tree *t, const char *rel, const struct cgroup_limits *limits);
int cgroup_set_limits(struct cgroup_tree *t, const char *rel, const struct cgroup_limits *limits);
int cgroup_placement_open(struct cgroup_tree *t, const char *rel, struct cgroup_placement *ret);

int cgroup_freeze(struct cgroup_tree *t, const char *rel);
int cgroup_thaw(struct cgroup_tree *t, const char *rel);
/* Atomic cgroup.kill where present, else a bounded SIGKILL sweep. */
int cgroup_kill(struct cgroup_tree *t, const char *rel);
/* Bounded waits: 0 reached, -ETIMEDOUT not reached within timeout. Re-read
 * cgroup.events (notifications are rate-limited to one per 10 ms). */
int cgroup_wait_empty(struct cgroup_tree *t, const char *rel, usec_t timeout);
int cgroup_wait_frozen(struct cgroup_tree *t, const char *rel, usec_t timeout);
int cgroup_is_populated(struct cgroup_tree *t, const char *rel);
/* 1 when rel is frozen (cgroup.events "frozen", else the v1 freezer state),
 * 0 when not, -errno. */
int cgroup_is_frozen(struct cgroup_tree *t, const char *rel);
/* For event loops, which must not block in the waits above: an fd of rel's
 * cgroup.events that turns EPOLLPRI on a change. Notifications are
 * rate-limited (one per 10 ms per file), so callers re-read on a timer as
 * well (cgroup_is_populated(), cgroup_is_frozen()). */
int cgroup_events_open(struct cgroup_tree *t, const char *rel);
int cgroup_stats(struct cgroup_tree *t, const char *rel, struct cgroup_stats *ret);
/* The processes in rel itself (its cgroup.procs, at most
 * CGROUP_PROCS_MAX_BYTES of it); *ret_pids is a new array. */
int cgroup_list_pids(struct cgroup_tree *t, const char *rel, pid_t **ret_pids, size_t *ret_n);
/* rmdir bottom-up; -EBUSY if still populated. */
int cgroup_remove(struct cgroup_tree *t, const char *rel);
/* Kills, waits and removes the whole subtree including control/ (moving
 * ourselves back to the parent first). -EPERM for a tree opened without a
 * subtree_name: the caller's own cgroup holds children that are not ours. */
int cgroup_tree_destroy(struct cgroup_tree *t);
/* Path of rel relative to the daemon's subtree, for blame ("zones/agent/env").
 * "" for the subtree root itself; -ENOENT no such process; -EXDEV outside. */
int cgroup_pid_subtree(struct cgroup_tree *t, pid_t pid, char **ret_rel);

/* Introspection (preflight, logs). Paths are absolute and borrowed from t. */
bool cgroup_tree_has_kill(const struct cgroup_tree *t);   /* cgroup.kill usable */
bool cgroup_tree_has_freeze(const struct cgroup_tree *t); /* cgroup.freeze usable */
/* Subtree root in the cgroup2 tree (controller NULL) or in a v1 hierarchy
 * ("memory", "pids", "cpu", "freezer"); NULL when not in use. */
const char *cgroup_tree_path(const struct cgroup_tree *t, const char *controller);
/* Space-separated managed controllers (cpu memory pids) this host does not
 * offer to our cgroup, "" when all are there. */
int cgroup_tree_missing_controllers(const struct cgroup_tree *t, char **ret);
/* Parses one /proc/<pid>/cgroup text: the path of the cgroup2 entry ("0::")
 * or, with controller set, of the v1 line listing it. -ENOENT if absent. */
int cgroup_self_path_parse(const char *text, const char *controller, char **ret);
