/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Every size an untrusted party controls has a named limit here, so a reviewer
 * can see all of them in one place. Each module adds its own section; values
 * are documented where users can hit them (docs/LIMITS.md mirrors this file).
 */

/* --- manifest (openenv.yaml is written by environment authors) --- */
#define MANIFEST_MAX_BYTES      (1024 * 1024) /* whole file */
#define MANIFEST_MAX_DEPTH      32            /* nested mappings/sequences */
#define MANIFEST_MAX_NODES      100000        /* YAML events */
#define MANIFEST_MAX_SCALAR     4096          /* one scalar's bytes */
#define MANIFEST_MAX_ERRORS     200           /* errors collected before giving up */
#define MANIFEST_MAX_CONTAINERS 64            /* containers per zone */
#define MANIFEST_MAX_LIST       256           /* argv, reads, phases, env entries */

/* --- custody copy (observer outputs are derived from agent data) --- */
#define CUSTODY_MAX_BYTES   (256ULL * 1024 * 1024)
#define CUSTODY_MAX_ENTRIES 10000
#define CUSTODY_MAX_DEPTH   128

/* --- HTTP / WebSocket (the external port and every relay) --- */
#define HTTP_MAX_HEAD_BYTES    (32 * 1024) /* request/status line + headers */
#define HTTP_MAX_HEADERS       100
#define HTTP_MAX_CONNECTIONS   4096
#define WS_MAX_FRAME_BYTES     (16 * 1024 * 1024)
#define WS_MAX_CONTROL_PAYLOAD 125 /* RFC 6455 5.5 */

/* --- grading --- */
#define VERDICT_MAX_BYTES (1024 * 1024) /* an observer's /out/verdict.json */

/* --- probe / validate (measured inside hostile containers) --- */
#define MOUNTINFO_MAX_LINES   4096
#define MOUNTINFO_MAX_LINE    8192
#define PROC_STATUS_MAX_BYTES (64 * 1024)

/* --- cgroup (paths come from manifest zone/container names; files from the kernel) --- */
#define CGROUP_PATH_MAX        512         /* a relative path inside our subtree */
#define CGROUP_FILE_MAX_BYTES  (64 * 1024) /* one interface file read (events, stat) */
#define CGROUP_PROCS_MAX_BYTES (4 * 1024 * 1024) /* cgroup.procs of a fork-bombed group */
#define CGROUP_KILL_PASSES     50          /* SIGKILL sweeps without cgroup.kill */
