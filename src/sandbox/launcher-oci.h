/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The OCI launcher: the same struct container_spec the native launcher
 * takes, rendered as an OCI runtime-spec config.json bundle and run by an
 * external runtime (runc, crun or runsc) with `create` + `start`.
 *
 * Process model: `<runtime> create` leaves the container's init (the shim,
 * or the principal when no shim is configured) as an orphan that the kernel
 * re-parents to the nearest child subreaper. The caller must therefore be
 * PID 1 (the daemon) or have set PR_SET_CHILD_SUBREAPER: the init then is
 * the caller's child, so oci_container_wait() gets its real exit status
 * through a pidfd, exactly like the native launcher. oci_container_spawn()
 * refuses to start otherwise (-ECHILD).
 *
 * Host side effects, all undone by oci_container_free(): a bundle directory
 * <state_dir>/bundles/<id>/ holding config.json (0600), the runtime's log
 * and a private, recursively read-only bind of spec->rootfs (runc cannot
 * use "/" itself as a root); the runtime's state under <state_dir>/oci; the
 * cgroups the runtime creates at cgroups_path (removed by `delete`); the
 * mount namespace of the cgroup view, if any.
 *
 * Ownership: struct oci_container owns the pidfd, the bundle and the
 * runtime state; freeing a live container SIGKILLs it, reaps it and deletes
 * everything. The spec is only read during the calls that take it.
 */
#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

#include "base/error-detail.h"
#include "base/macro.h"
#include "cgroup/cgroup.h"
#include "sandbox/container-spec.h"

struct oci_options {
        /* "runc", "crun", "runsc" (looked up on PATH) or an absolute path;
         * NULL: the first of runc, crun, runsc found on PATH. */
        const char *runtime;
        /* Host dir for bundles/ and the runtime root oci/; must be
         * traversable (o+x) by the container's mapped root, because the
         * runtime's init resolves the rootfs path inside the user namespace. */
        const char *state_dir;
        /* Host path of the shim (PID 1 inside); NULL: spec->shim_path; both
         * NULL: the principal's argv is run directly as the init. */
        const char *shim_path;
        /* linux.cgroupsPath; NULL: "openenvd-oci-<id>". Without a
         * cgroup_view, relative paths are resolved by the runtime below its
         * own cgroup, i.e. the caller's, in every v1 hierarchy and on a pure
         * cgroup2 host (runc puts the cgroup2 half of a hybrid host's at the
         * root of the tree, and strips ".."). */
        const char *cgroups_path;
        /* NULL: the runtime runs in our mount namespace. Else every run of it
         * for this container enters one where /sys/fs/cgroup holds only the
         * view (sandbox/cgroup-view-ns.h), and an absolute cgroups_path
         * ("/<leaf>") names a directory of the view in every hierarchy. */
        const struct cgroup_view *cgroup_view;
        /* Rendered as linux.resources when set (memory + swap = limit, pids,
         * cpu quota over a 100 ms period); NULL: no resources. */
        const struct cgroup_limits *limits;
        /* Container id; NULL: "openenvd-<spec name>-<8 random hex>". */
        const char *id;
};

/*
 * Renders config.json for spec. root_path is the host path the runtime will
 * use as the root (the prepared read-only bind); shim_host is the host path
 * of the shim, bound read-only at /run/openenvd-shim and run as
 * `/run/openenvd-shim [--tcp-to-unix|--unix-to-tcp FWD]... -- <argv...>`,
 * or NULL to run argv directly (then spec->forwards are not served); cgroups_path
 * and limits as in struct oci_options (cgroups_path NULL: none rendered).
 * The seccomp object comes from syscall_filter_to_oci(). *ret is a new
 * reference. Returns 0 or -errno (-EINVAL for a spec no launcher accepts).
 */
int oci_config_render(const struct container_spec *spec, const char *root_path,
                      const char *shim_host, const char *cgroups_path,
                      const struct cgroup_limits *limits, json_t **ret);

/* Path of the runtime binary that would be used for `runtime` (see
 * oci_options.runtime). -ENOENT if none is on PATH. */
int oci_runtime_find(const char *runtime, char **ret_path);

struct oci_container; /* opaque */

/*
 * Writes the bundle, runs `<runtime> create` with the container's stdio
 * (stdin /dev/null, stdout+stderr spec->stdio_fd) and `<runtime> start`.
 * On success *ret is the running container. On failure returns -errno,
 * fills ret_err (if not NULL; empty on entry) with what failed in the
 * runtime's own words ("runc create <id> failed (exit 1): <log tail>"), and
 * leaves no process, bundle, mount, runtime state or cgroup behind.
 * Blocks while the runtime runs (tens of milliseconds for runc).
 */
int oci_container_spawn(const struct oci_options *opts, const struct container_spec *spec,
                        struct oci_container **ret, struct error_detail *ret_err);

const char *oci_container_id(const struct oci_container *c);
const char *oci_container_bundle(const struct oci_container *c); /* host path */
int oci_container_pidfd(const struct oci_container *c);          /* borrowed */
pid_t oci_container_pid(const struct oci_container *c);          /* host pid of the init */

/* Signals the init (PID 1 inside): SIGKILL ends the whole pid namespace.
 * -ESRCH once reaped. */
int oci_container_kill(struct oci_container *c, int sig);

/* Reaps the init: status is its exit code, 128+signal if killed. Idempotent
 * once reaped; try_wait returns -EAGAIN while it runs. */
int oci_container_wait(struct oci_container *c, int *ret_status);
int oci_container_try_wait(struct oci_container *c, int *ret_status);
/* Once reaped: the signal the init itself died of, else 0. */
int oci_container_init_signal(const struct oci_container *c);

/* SIGKILLs and reaps a live container, then `<runtime> delete --force`,
 * unmounts the root and removes the bundle. Accepts NULL. */
struct oci_container *oci_container_free(struct oci_container *c);
DEFINE_CLEANUP_FUNC(struct oci_container, oci_container_free);
