/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Shared by the parts of the OCI launcher (launcher-oci.h), in dependency
 * order:
 *   oci-config.c     config.json rendered from a container spec and policy
 *   oci-runtime.c    running `<runtime> --root R --log L ...`, and its errors
 *   oci-rootfs.c     the bundle's read-only root and its removal
 *   launcher-oci.c   a container's life: spawn, wait, kill, free
 */
#include <stdbool.h>
#include <sys/types.h>

#include "base/macro.h"
#include "sandbox/launcher-oci.h"

#define OCI_PATH_ENV  "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define SHIM_INSIDE   "/run/openenvd-shim"
#define LOG_TAIL_MAX  2000
#define CPU_PERIOD_US 100000

struct oci_container {
        char *runtime; /* owned: absolute path of the runtime binary */
        char *root;    /* owned: <state>/oci, the runtime's --root */
        char *bundle;  /* owned: <state>/bundles/<id> */
        char *id;      /* owned */
        bool root_mounted;
        bool created; /* runtime state exists: `delete` needed */
        int pidfd;    /* owned */
        int view_ns;  /* owned: mount namespace every runtime run enters; -EBADF: ours */
        pid_t pid;
        bool reaped;
        int status;
        int init_signal; /* once reaped: the signal the init died of, or 0 */
};

/* oci-config.c */
/* An id or name the runtime takes: [A-Za-z0-9_.-]{1,64}. */
bool oci_name_ok(const char *s);
/* This launcher's entry check: container_spec_validate() (every rule about
 * the spec, the native launcher's too), then oci_name_ok() of its name,
 * which only this launcher puts into a path. Its errno or 0. */
int oci_spec_check(const struct container_spec *spec);

/* oci-runtime.c */
/* "runc" for /usr/bin/runc: how messages name the runtime. */
const char *oci_runtime_name(const struct oci_container *c);
int oci_runtime_run(const struct oci_container *c, const char *const *args, int out_fd,
                    const int *pass_fds, size_t n_pass, int *ret_status);
/* oci_runtime_run() that fails (with the runtime log's tail in err) unless
 * the runtime exits 0. */
int oci_runtime_cmd(struct oci_container *c, struct error_detail *err, const char *const *args,
                    int out_fd, const int *pass_fds, size_t n_pass);

/* oci-rootfs.c */
int oci_rootfs_prepare(const struct container_spec *spec, const char *bundle, const char *target);
void oci_bundle_remove(const char *bundle);
