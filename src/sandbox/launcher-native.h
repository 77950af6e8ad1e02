/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The native launcher: one clone3() into seven new namespaces (user, mount,
 * pid, net, ipc, uts, cgroup), straight into the container's cgroup, with a
 * pidfd. The parent writes the uid/gid maps and attaches v1 cgroups while
 * the child waits for a go byte; the child then builds its root
 * (mount-setup.c), drops every privilege, loads the syscall filter and
 * execs the shim, which becomes PID 1 of the container.
 *
 * Ownership: a struct container owns its pidfd and, until it is reaped,
 * the process (container_free() of a live container SIGKILLs and reaps it,
 * so no test or error path can leak a container). The spec is only read
 * during container_spawn().
 *
 * Errors: a failed setup step comes back as {step, errno, index} through a
 * CLOEXEC pipe: EOF on that pipe means the shim was exec'd. The caller gets
 * the step and index, and the words in the one error shape (base/error-detail.h).
 */
#include <stdbool.h>
#include <sys/types.h>

#include "base/error-detail.h"
#include "base/macro.h"
#include "sandbox/container-spec.h"

enum container_step {
        CONTAINER_STEP_NONE = 0,
        CONTAINER_STEP_VALIDATE,      /* spec rejected before anything started */
        CONTAINER_STEP_SHIM,          /* opening the shim executable */
        CONTAINER_STEP_CLONE,         /* clone3() */
        CONTAINER_STEP_UID_MAP,       /* writing /proc/<pid>/uid_map */
        CONTAINER_STEP_GID_MAP,       /* writing /proc/<pid>/gid_map */
        CONTAINER_STEP_CGROUP,        /* v1 cgroup attach */
        CONTAINER_STEP_GO,            /* handing the go byte to the child */
        CONTAINER_STEP_WAIT_GO,       /* child: the parent went away */
        CONTAINER_STEP_MOUNT_PRIVATE, /* child: making "/" recursively private */
        CONTAINER_STEP_ROOTFS,        /* cloning the image root read-only */
        CONTAINER_STEP_MOUNT_SOURCE,  /* preparing spec mount <index> (source, fs) */
        CONTAINER_STEP_DEVICES,       /* cloning host device nodes */
        CONTAINER_STEP_ATTACH_ROOT,   /* attaching the new root */
        CONTAINER_STEP_PROC,          /* /proc, its masks and read-only paths */
        CONTAINER_STEP_SYSCTL,        /* per-netns sysctls */
        CONTAINER_STEP_DEV,           /* minimal /dev */
        CONTAINER_STEP_SYS,           /* read-only /sys */
        CONTAINER_STEP_TMP,           /* /tmp */
        CONTAINER_STEP_RUN,           /* /run and /run/openenvd */
        CONTAINER_STEP_MOUNT_TARGET,  /* creating the target of spec mount <index> */
        CONTAINER_STEP_MOUNT,         /* attaching spec mount <index> */
        CONTAINER_STEP_MASK,          /* mask <index> */
        CONTAINER_STEP_SEAL,          /* remounting setup tmpfs read-only */
        CONTAINER_STEP_PIVOT_ROOT,    /* pivot_root + detaching the old root */
        CONTAINER_STEP_HOSTNAME,      /* sethostname */
        CONTAINER_STEP_LOOPBACK,      /* bringing lo up */
        CONTAINER_STEP_RLIMIT,        /* setrlimit */
        CONTAINER_STEP_SETGROUPS,     /* dropping supplementary groups */
        CONTAINER_STEP_SETGID,        /* setresgid */
        CONTAINER_STEP_CAPS,          /* bounding/ambient/effective... sets */
        CONTAINER_STEP_SETUID,        /* setresuid */
        CONTAINER_STEP_NO_NEW_PRIVS,  /* PR_SET_NO_NEW_PRIVS */
        CONTAINER_STEP_CHDIR,         /* workdir */
        CONTAINER_STEP_STDIO,         /* stdin/stdout/stderr */
        CONTAINER_STEP_SIGNALS,       /* the daemon's signal mask and ignored signals undone */
        CONTAINER_STEP_SECCOMP,       /* syscall_filter_load() */
        CONTAINER_STEP_EXEC,          /* execveat of the shim */
        _CONTAINER_STEP_MAX,
};

const char *container_step_to_string(enum container_step step);

/* Where a start failed. detail.message is "<step>: <strerror>", or "<step>
 * (index <index>): <strerror>" for a per-entry step; the caller frees it
 * (error_detail_done(&e.detail)). */
struct container_error {
        struct error_detail detail; /* detail.error: the positive errno */
        enum container_step step;
        int index; /* spec mount or mask index for the per-entry steps, else -1 */
};

struct container; /* opaque */

/*
 * Starts the container described by spec. On success *ret is the running
 * container (its shim has been exec'd). On failure returns -errno of the
 * failed step and, if ret_err is not NULL (zeroed on entry), fills it; no
 * process is left.
 * The caller (daemon or test) must not be multi-threaded: the child runs on
 * a copy of the caller's memory like after fork().
 */
int container_spawn(const struct container_spec *spec, struct container **ret,
                    struct container_error *ret_err);

int container_pidfd(const struct container *c); /* borrowed: valid until container_free() */
pid_t container_pid(const struct container *c); /* host pid of the shim */

/* Signals the shim (PID 1 inside): SIGTERM is forwarded to the principal,
 * SIGKILL ends the whole pid namespace. -ESRCH once reaped. */
int container_kill(struct container *c, int sig);

/* Reaps the shim: blocks (wait) or not (-EAGAIN while it runs). The status
 * is the shim's exit code, which is the principal's (128+signal if killed);
 * a shim killed by a signal reports 128+signal as well. Idempotent once
 * reaped. */
int container_wait(struct container *c, int *ret_status);
int container_try_wait(struct container *c, int *ret_status);
/* Once reaped: the signal the shim itself died of (its exit code cannot
 * tell that from a principal killed by the same signal), else 0. */
int container_init_signal(const struct container *c);

/* SIGKILLs and reaps a container that is still running, closes the pidfd. */
struct container *container_free(struct container *c);
DEFINE_CLEANUP_FUNC(struct container, container_free);
