/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Preflight: would isolation be on here? Every check runs for real (the
 * namespace, overlayfs and nosymfollow checks in forked children that report
 * {step, errno} over a pipe, bounded by a timeout and SIGKILLed if they hang;
 * the cgroup check creates and removes a probe subtree in every hierarchy we
 * would use). Nothing is left behind: children's mounts live in their private
 * mount namespaces, probe cgroups are removed.
 *
 * The report owns all its strings. Checks come in a fixed order (see
 * docs/CGROUPS.md); isolation is on iff every required check is ok, and each
 * failed required check contributes one reason "<what>: <detail>", or
 * "<what>: <detail>: <fix>" inside a Docker container, where <fix> names the
 * `docker run` option that would make the check pass (preflight_fix()).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/macro.h"
#include "base/time-util.h"
#include "cgroup/cgroup.h"

/* Where a check failed: the step of its forked child (or of the in-process
 * cgroup check), with the errno in struct preflight_check. */
enum preflight_step {
        PREFLIGHT_STEP_OK,
        PREFLIGHT_STEP_UNSHARE_USER,
        PREFLIGHT_STEP_UNSHARE_NS,
        PREFLIGHT_STEP_UNSHARE_PID,
        PREFLIGHT_STEP_FORK_PID1,
        PREFLIGHT_STEP_UNSHARE_NET,
        PREFLIGHT_STEP_UNSHARE_IPC,
        PREFLIGHT_STEP_UNSHARE_UTS,
        PREFLIGHT_STEP_UNSHARE_CGROUP,
        PREFLIGHT_STEP_MAKE_PRIVATE,
        PREFLIGHT_STEP_MOUNT_TMPFS,
        PREFLIGHT_STEP_MKDIR,
        PREFLIGHT_STEP_MOUNT_OVERLAY,
        PREFLIGHT_STEP_OVERLAY_WRITE,
        PREFLIGHT_STEP_OVERLAY_COPY_UP,
        PREFLIGHT_STEP_SYMLINK,
        PREFLIGHT_STEP_BIND,
        PREFLIGHT_STEP_REMOUNT_NOSYMFOLLOW,
        PREFLIGHT_STEP_SYMLINK_FOLLOWED,
        PREFLIGHT_STEP_CLONE3,
        PREFLIGHT_STEP_PIVOT_ROOT,
        PREFLIGHT_STEP_FSOPEN,
        PREFLIGHT_STEP_FSCONFIG,
        PREFLIGHT_STEP_FSMOUNT,
        PREFLIGHT_STEP_CGROUP_MOUNT,
        PREFLIGHT_STEP_CGROUP_CREATE,
        PREFLIGHT_STEP_CGROUP_CONTROLLERS,
        _PREFLIGHT_STEP_MAX,
};

/* What the fix hints need to know about where we run (preflight_env_detect()). */
struct preflight_env {
        bool docker;           /* inside a Docker container (see docs/LANES.md) */
        bool seccomp_filtered; /* a seccomp filter is installed on us already */
        bool cgroupns_private; /* every line of /proc/self/cgroup is at "/" */
        bool pid1;             /* we are PID 1 (openenvd as the entrypoint) */
        bool proc_masked;      /* something is mounted over a /proc path */
        uint64_t missing_caps; /* required capabilities not in our effective set */
};

struct preflight_options {
        const struct cgroup_layout *layout; /* borrowed; NULL: detect */
        usec_t child_timeout;               /* per forked check; 0: 5 s */
        /* the containers' root: --rootfs, or "/" (--host-root-unfiltered);
         * NULL: the host view on a host, / itself as PID 1 or in Docker */
        const char *rootfs;
};

struct preflight_check {
        const char *name; /* static */
        bool ok;
        bool required; /* a failure turns isolation off */
        char *detail;  /* owned */
        int step;      /* enum preflight_step where it failed; 0 if ok or in-process */
        int err;       /* errno at that step; 0 if none */
        char *fix;     /* owned: "add --cap-add SYS_ADMIN", or NULL */
};

struct preflight_report {
        bool isolation;
        char **reasons;                 /* owned, NULL-terminated */
        struct preflight_check *checks; /* owned */
        size_t n_checks;
        bool cgroup_detected;
        enum cgroup_mode cgroup_mode;
        char *cgroup_v2_mount; /* owned, NULL if not detected */
        char *cgroup_v1_mount; /* owned, NULL on pure v2 */
        char *cgroup_own;      /* owned: our cgroup in the cgroup2 tree */
        bool cgroup_kill;
        bool cgroup_freeze;
        struct preflight_env env;
};

/* Runs every check; fails only on programming errors (-EINVAL): a host that
 * cannot isolate is a successful run with isolation == false. */
int preflight_run(const struct preflight_options *opts, struct preflight_report **ret);
struct preflight_report *preflight_report_free(struct preflight_report *r);
DEFINE_CLEANUP_FUNC(struct preflight_report, preflight_report_free);

/*
 * The `docker run` options, in Docker's own words, that would make a failed
 * check pass: "add --cap-add SYS_ADMIN", "add --security-opt
 * seccomp=openenvd-seccomp.json", ... NULL outside Docker or when no option
 * helps (a kernel without the feature). Pure: tested without a kernel.
 */
char *preflight_fix(const char *check, int step, int err, const struct preflight_env *env);
/* Fills env (but missing_caps) from /.dockerenv, /proc/self/{mountinfo,cgroup,status}
 * and getpid(). */
void preflight_env_detect(struct preflight_env *ret);
/* The capabilities the daemon needs (measured, docs/LANES.md), with Docker's
 * spelling ("SYS_ADMIN"); bit n of preflight_env.missing_caps is capability n. */
struct preflight_cap {
        int cap;
        const char *name;
};
extern const struct preflight_cap preflight_required_caps[];
extern const size_t preflight_n_required_caps;
/* The name above for a required capability, else NULL. */
const char *preflight_cap_name(int cap);

/*
 * The containers' root is this general-purpose host's own /: the root given
 * is / itself (--host-root-unfiltered), and openenvd is neither PID 1 nor
 * inside a Docker container (where / is an image). Every zone can then read
 * the host's world-readable files and connect to its world-connectable unix
 * sockets: the "containers_root" check (not required: isolation stays on)
 * fails and the daemon says so in its log. Without a root given, a host's
 * containers get the host view (sandbox/host-view.h) and the check passes.
 * Pure.
 */
bool preflight_root_is_host(bool rootfs_is_slash, const struct preflight_env *env);

/* Reasons joined with "; " (for "isolation disabled: <reasons>"); "" if on. */
char *preflight_report_reasons(const struct preflight_report *r);
const struct preflight_check *preflight_report_find(const struct preflight_report *r,
                                                    const char *name);
/* {"isolation","reasons","checks":[{name,ok,required,detail,fix}],"cgroup":{...},
 *  "container":"docker"|null} */
json_t *preflight_report_to_json(const struct preflight_report *r);
/* Human-readable table, one check per line, then the verdict. */
char *preflight_report_format(const struct preflight_report *r);
