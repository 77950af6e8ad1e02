/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Shared by the attacks (attack.h), one file per seam an attacker tries:
 *   attack-files.c      reading and writing what must stay closed, secrets,
 *                       inherited fds
 *   attack-network.c    listeners outside the zone, sockets by host path
 *   attack-processes.c  other processes: seeing, signalling, tracing; our
 *                       own uid and capabilities
 *   attack-kernel.c     mounts, namespaces, BPF, perf, keyrings, io_uring,
 *                       device nodes
 *   attack-limits.c     forking past pids.max, allocating past memory.max
 *   attack.c            the table of kinds and running one in a child
 *
 * Each attack fills one outcome: denied only for a refusal it can name.
 */
#include "base/macro.h"
#include "probe/attack.h"

void attack_outcome_set(struct attack_outcome *o, enum attack_result r, const char *fmt, ...)
        printf_fmt(3, 4);
/* A refusal is one of the errnos in `denied` (0-terminated); anything else
 * is not proof of anything and is reported as an error. */
void attack_outcome_errno(struct attack_outcome *o, int err, const int *denied, const char *what);

/* The errnos that count as a refusal, by kind of attempt. */
extern const int attack_deny_access[];
extern const int attack_deny_perm[];
extern const int attack_deny_net[];
extern const int attack_deny_unix[];

/* attack-files.c */
void attack_read(const char *path, struct attack_outcome *o);
void attack_write_dir(const char *path, struct attack_outcome *o);
void attack_write_file(const char *path, struct attack_outcome *o);
void attack_mkdir(const char *path, struct attack_outcome *o);
void attack_root_rw(const char *path, struct attack_outcome *o);
void attack_find_secret(const char *hex, struct attack_outcome *o);
void attack_inherited_fds(const struct attack_context *ctx, struct attack_outcome *o);

/* attack-network.c */
void attack_connect_tcp(const char *arg, struct attack_outcome *o);
void attack_connect_unix(const char *path, struct attack_outcome *o);

/* attack-processes.c */
void attack_proc_visible(struct attack_outcome *o);
void attack_kill(const char *arg, struct attack_outcome *o);
void attack_uid(struct attack_outcome *o);
void attack_caps(struct attack_outcome *o);
void attack_ptrace_attach(const char *arg, struct attack_outcome *o);
void attack_ptrace_traceme(struct attack_outcome *o);

/* attack-kernel.c */
void attack_mount(struct attack_outcome *o);
void attack_fsopen(struct attack_outcome *o);
void attack_umount(const char *path, struct attack_outcome *o);
void attack_unshare(const char *arg, struct attack_outcome *o);
void attack_setns(const char *path, struct attack_outcome *o);
void attack_bpf(struct attack_outcome *o);
void attack_perf_event(struct attack_outcome *o);
void attack_keyctl(struct attack_outcome *o);
void attack_io_uring(struct attack_outcome *o);
void attack_mknod_char(const char *arg, struct attack_outcome *o);

/* attack-limits.c */
void attack_fork_past_pids(const char *arg, struct attack_outcome *o);
void attack_alloc_past_memory(const char *arg, struct attack_outcome *o);
