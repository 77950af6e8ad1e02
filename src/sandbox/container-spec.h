/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One container, described once; started by a launcher: the native one
 * (launcher-native.c: clone3 + namespaces + mounts + pivot_root + seccomp +
 * exec of the shim) or an OCI runtime (launcher-oci.c renders the very same
 * spec as config.json for runc/crun/runsc).
 *
 * Ownership: a spec owns every string and array in it (container_spec_free()
 * releases them); `placement` is borrowed from the caller (the cgroup module).
 * Paths named "source" are host paths, resolved by the launcher with
 * O_PATH|O_NOFOLLOW before the container exists; "target" paths are inside
 * the container and absolute.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/macro.h"
#include "cgroup/cgroup.h"

struct syscall_filter; /* sandbox/syscall-filter.h */
struct kept_netns;     /* sandbox/netns-keep.h */

enum mount_kind {
        MOUNT_BIND,    /* source -> target, private, flags applied by remount */
        MOUNT_TMPFS,   /* fresh tmpfs at target, size_bytes, mode */
        MOUNT_OVERLAY, /* lower/upper/work are host dirs; merged at target */
};

struct mount_entry {
        enum mount_kind kind;
        char *source; /* MOUNT_BIND: host path; MOUNT_OVERLAY: lowerdir */
        char *upper;  /* MOUNT_OVERLAY only */
        char *work;   /* MOUNT_OVERLAY only */
        char *target;
        unsigned long flags; /* MS_RDONLY|MS_NOSUID|MS_NODEV|MS_NOEXEC|MS_NOSYMFOLLOW */
        uint64_t size_bytes; /* MOUNT_TMPFS */
        mode_t mode;         /* MOUNT_TMPFS root mode */
        bool is_file;        /* MOUNT_BIND of a regular file (target created as file) */
};

enum forward_kind {
        FORWARD_TCP_TO_UNIX, /* listen on host:port inside, connect to path */
        FORWARD_UNIX_TO_TCP, /* listen on path inside, connect to host:port */
        FORWARD_FD_TO_TCP,   /* accept on pass_fds[pass_index], connect to host:port */
};

struct forward {
        enum forward_kind kind;
        char *host; /* numeric IPv4 inside the container's netns, e.g. 127.0.0.1 */
        uint16_t port;
        char *path;          /* unix socket path inside the container (under /run/openenvd) */
        unsigned pass_index; /* FORWARD_FD_TO_TCP: the listening socket in pass_fds[] */
};

/* One more line of a container's uid and gid maps: a template maps, after
 * its own range, the ranges of the containers its copies land in. */
struct uid_extent {
        uid_t inside;
        uid_t host;
        uint32_t count;
};

/*
 * A container made to receive a template's copy (fork-speed episodes,
 * docs/SANDBOX.md, "Templates"): its user and pid namespaces are made as
 * children of the template's, so the template's root, which owns them,
 * may setns() a forked copy into every namespace of this container, and the
 * copy is born into its pid namespace. Its uid map is then written in the
 * template's ids (the kernel allows only a process of the parent namespace
 * to write it).
 */
struct container_nest {
        int pidfd;    /* borrowed: the template container's PID 1 */
        uid_t owner;  /* the template namespace's root, as a host uid */
        uid_t inside; /* where this container's host range starts, in the template's ids */
};

/* Deliberate weakenings, only for tests that prove the checks can fail. */
enum container_weaken {
        WEAKEN_NONE = 0,
        WEAKEN_NO_SECCOMP = 1 << 0,
        WEAKEN_NO_MASKS = 1 << 1,
        WEAKEN_KEEP_CAPS = 1 << 2,
        WEAKEN_WRITABLE_ROOT = 1 << 3,
};

/* The flag named s ("no-seccomp", "no-masks", "keep-caps", "writable-root":
 * --test-weaken), or -EINVAL. */
int container_weaken_from_string(const char *s);

struct container_spec {
        char *name;       /* unique, e.g. "agent-env"; also the hostname */
        char **argv;      /* the principal's argv, NULL-terminated */
        char **env;       /* "K=V", NULL-terminated; the principal's whole environment */
        char *workdir;    /* inside; NULL means "/" */
        char *rootfs;     /* host path of the image root, bound read-only ("/" usually) */
        char *shim_path;  /* host path of openenvd-shim (PID 1); NULL: OCI only (launcher-oci.h) */
        char *socket_dir; /* host dir bound at /run/openenvd (nosuid,nodev,noexec); NULL: none */

        uid_t host_uid;     /* first host uid of this container's range */
        uint32_t uid_count; /* size of the range (65536) */
        uid_t uid;          /* principal uid/gid inside (non-zero) */
        gid_t gid;

        struct mount_entry *mounts; /* applied in order, after the defaults */
        size_t n_mounts;
        char **masks; /* paths hidden inside: dirs -> empty ro tmpfs, files -> /dev/null */

        struct forward *forwards;
        size_t n_forwards;

        uint64_t tmp_bytes; /* size of /tmp and of /dev/shm (from disk_mb) */
        uint64_t nofile;    /* RLIMIT_NOFILE */
        uint64_t nproc;     /* RLIMIT_NPROC (0: leave; pids.max is the real bound) */

        const struct cgroup_placement *placement; /* borrowed; NULL: stay in ours */
        /* borrowed: compiled once by the daemon (syscall_filter_new()); NULL:
         * the launcher compiles it in the child, which costs ~2 ms a spawn */
        const struct syscall_filter *filter;
        int stdio_fd; /* borrowed; stdout+stderr of the container, -EBADF: /dev/null */
        /* borrowed: fds the shim inherits as 3, 4, ... in this order, e.g.
         * listening sockets the daemon created (socket activation) and the
         * shim's readiness pipe; see the shim's --fd-to-tcp and --notify-fd. */
        const int *pass_fds;
        size_t n_pass_fds;
        /* With notify, pass_fds[notify_pass_index] is the write end of a pipe
         * on which the shim reports readiness (--notify-fd). */
        bool notify;
        unsigned notify_pass_index;
        /* With gate, pass_fds[gate_pass_index] is the read end of a pipe the
         * shim waits on before it starts the principal (--gate-fd): a
         * container made ahead of its turn, released by the daemon. */
        bool gate;
        unsigned gate_pass_index;
        /* With adopt, pass_fds[adopt_pass_index] is the read end of a pipe
         * on which a template's copy, born in this container, says its pid
         * (--adopt-fd): the shim starts no principal and adopts that one
         * (fork-speed episodes). Not with gate. */
        bool adopt;
        unsigned adopt_pass_index;
        /* Bit i set: the principal inherits pass_fds[i] too, as 3 + i
         * (--pass-fd): a template's control socket and syscall filter. */
        uint32_t principal_fds;

        unsigned weaken; /* enum container_weaken; WEAKEN_NONE in production */

        /* borrowed: the network namespace to run in, made by the daemon for
         * this container (netns-keep.h); NULL: a fresh one of its own. Native
         * launcher only (an OCI runtime always makes its own). */
        const struct kept_netns *netns;
        /* borrowed, NULL: not measured. The native launcher stamps each step
         * of the spawn (CLOCK_MONOTONIC) for bench/launch; the child writes
         * into it through the memory it shares with the caller (x86_64,
         * non-sanitizer builds; elsewhere the child's marks stay 0). */
        struct container_timing *timing;

        /* Fork-speed episodes (docs/SANDBOX.md, "Templates"), native only.
         * template_root: the principal stays the namespace's root with its
         * capabilities and no syscall filter (a template, which setns()es its
         * copies into nested containers; it never reads an episode's byte);
         * uid_extents: its copies' ranges, mapped after its own. nest: this
         * container receives a copy of that template (NULL: none). */
        bool template_root;
        const struct uid_extent *uid_extents; /* borrowed */
        size_t n_uid_extents;
        const struct container_nest *nest; /* borrowed */
};

/* Steps of a native spawn, in order (bench/launch prints the differences). */
enum container_mark {
        CONTAINER_MARK_START,       /* container_spawn() entered */
        CONTAINER_MARK_CLONED,      /* parent: clone3() returned */
        CONTAINER_MARK_GO,          /* parent: maps written, v1 cgroups joined, go sent */
        CONTAINER_MARK_CHILD_GO,    /* child: go received */
        CONTAINER_MARK_ROOT,        /* child: sources opened, root and spec mounts prepared */
        CONTAINER_MARK_PROC,        /* child: /proc */
        CONTAINER_MARK_DEV,         /* child: /dev */
        CONTAINER_MARK_SYS,         /* child: /sys */
        CONTAINER_MARK_TMP_RUN,     /* child: /tmp, /run */
        CONTAINER_MARK_SPEC_MOUNTS, /* child: spec mounts attached */
        CONTAINER_MARK_POLICY,      /* child: masks and read-only paths */
        CONTAINER_MARK_PIVOT,       /* child: sealed, pivot_root, old root detached */
        CONTAINER_MARK_CREDS,       /* child: hostname, rlimits, ids, caps, stdio */
        CONTAINER_MARK_FILTER,      /* child: seccomp attached, exec next */
        CONTAINER_MARK_EXECED,      /* parent: the exec happened (error pipe EOF) */
        _CONTAINER_MARK_MAX,
};

struct container_timing {
        uint64_t ns[_CONTAINER_MARK_MAX]; /* CLOCK_MONOTONIC, 0: not reached */
};

const char *container_mark_to_string(enum container_mark m);

/* Stamps a step when the spec asks for timing (a vDSO call, no syscall). */
void container_mark(const struct container_spec *spec, enum container_mark m);

void container_spec_done(struct container_spec *spec);

/*
 * What every container gets on top of its spec, whichever launcher starts
 * it: Docker's masked and read-only paths (moby oci/defaults.go) plus the
 * spec's own masks, and the shim's command line (src/sandbox/shim/shim.c:
 * forwarders, "--", the principal's argv). The native launcher applies it
 * (mount-setup.c), the OCI launcher writes it into config.json: one
 * definition, so the two cannot drift (tests/sandbox compare both).
 */
struct container_policy {
        char **masked;    /* owned, inside paths: defaults then spec->masks; none under
                           * WEAKEN_NO_MASKS */
        char **readonly;  /* owned, inside paths (procfs subtrees made read-only) */
        char **shim_argv; /* owned: shim_argv0, forwarder options, "--", spec->argv */
};

void container_policy_init(struct container_policy *ret, const struct container_spec *spec,
                           const char *shim_argv0);
void container_policy_done(struct container_policy *p);
/* Appends a MOUNT_BIND of source (host) at target (inside) with flags; the
 * strings are copied. */
void container_spec_add_bind(struct container_spec *spec, const char *source, const char *target,
                             unsigned long flags, bool is_file);

/*
 * The one check of a spec, which both launchers call first: a name (the
 * hostname), a non-empty argv, a rootfs; a principal uid/gid inside the
 * mapped range and not root (unless WEAKEN_KEEP_CAPS), a range that does
 * not map host root and fits in uid_t; a normal absolute workdir; a /tmp
 * size; mounts, masks and forwards well formed (normal absolute targets and
 * paths, the parts each kind needs); passed fds not negative, the notify,
 * gate and forward indexes among them and apart; counts within limits.h. Each launcher adds
 * only what it alone needs (docs/SANDBOX.md, "One check of a spec").
 * Returns 0 or -EINVAL (-E2BIG for counts over a limit, -EBADF for a
 * negative passed fd).
 */
int container_spec_validate(const struct container_spec *spec);
