/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Every size an untrusted party controls has a named limit here, so a reviewer
 * can see all of them in one place. Each module adds its own section; values
 * are documented in the module docs where users can hit them.
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
/* A file storing this much less than its size has holes: refused (one page
 * of slack for file systems that allocate the tail lazily). */
#define CUSTODY_SPARSE_SLACK 4096
/* A refused entry's path as its message names it: a path of 128 directories
 * of 255 bytes each is the agent's to make; the message keeps its head and
 * its tail (the entry's own name). */
#define CUSTODY_REPORT_MAX_REL 1024

/* --- HTTP / WebSocket (the external port and every relay) --- */
#define HTTP_MAX_HEAD_BYTES  (32UL * 1024) /* request/status line + headers */
#define HTTP_MAX_HEADERS     100
#define HTTP_MAX_CONNECTIONS 4096
/* Connections that have not (yet) shown valid credentials: the oldest is
 * closed past these caps, and each head must arrive within the timeout. */
#define HTTP_MAX_UNAUTH_CONNECTIONS 1024
#define HTTP_MAX_UNAUTH_PER_CLIENT  256
#define HTTP_UNAUTH_TIMEOUT         (5 * USEC_PER_SEC)
#define WS_MAX_CONTROL_PAYLOAD      125             /* RFC 6455 5.5 */
#define HTTP_MAX_CHUNK_LINE         4096            /* chunk-size line incl. extensions */
#define HTTP_MAX_CONTROL_BODY       (64UL * 1024)   /* request body of a control route */
#define HTTP_MAX_INSPECT_BYTES      (1024UL * 1024) /* /step response scanned for "done" */
#define WS_MAX_INSPECT_BYTES        (1024UL * 1024) /* /ws text message scanned for "done" */

/* A connection closes after this long without a byte moved. */
#define HTTP_IDLE_TIMEOUT (600 * USEC_PER_SEC)

/* Accepts per listener wake-up: below the per-client cap, so a connection
 * gets its first reads before a flood behind it can push it out. */
#define HTTP_ACCEPT_BATCH 64

/* --- model proxy (requests from the harness, responses from the provider) --- */
/* Addresses kept for one upstream (the provider's DNS answer). */
#define HTTP_MAX_UPSTREAM_ADDRS     8
#define MODEL_PROXY_MAX_CONNECTIONS 64 /* per harness: bounds what is in flight past a budget */
/* Usage is scanned as the response streams, in O(1) memory: no SSE line and
 * no JSON document is buffered, so neither needs a length limit. */
#define MODEL_USAGE_MAX_KEY    32 /* JSON key bytes compared ("cache_creation_input_tokens") */
#define MODEL_USAGE_MAX_DIGITS 18 /* a token count with more digits saturates */
#define MODEL_SSE_MAX_FIELD    16 /* SSE field name bytes compared ("data") */

/* --- grading --- */
#define VERDICT_MAX_BYTES  (1024 * 1024) /* an observer's /out/verdict.json */
#define VERDICT_MAX_EVENTS 64            /* facts recorded in one episode's verdict */
/* The episode's record of what was sent as actions (observers' `reads:
 * [actions]`): its lines, at most, and one message's bytes recorded. */
#define ACTION_RECORD_MAX_BYTES   (1024UL * 1024)
#define ACTION_RECORD_MAX_MESSAGE (64UL * 1024)

/* --- containers' output (stdout+stderr are a pipe the daemon reads) --- */
#define MEMBER_LOG_MAX_BYTES    (256UL * 1024)      /* kept per container per episode */
#define MEMBER_LOG_RATE_BYTES   (8UL * 1024 * 1024) /* read per second per container, at most */
#define MEMBER_LOG_READ_BYTES   (64UL * 1024)       /* read per wake-up: others get their turn */
#define MEMBER_EXIT_DRAIN_READS 4                   /* reads of a member's pipe at its exit */
/* Entries of its lines' time index (unit/member-log.h): full, every second
 * one goes. 16 bytes each. */
#define MEMBER_LOG_MAX_STAMPS 4096
/* Of that, what also goes to the daemon's own log (each line prefixed with
 * its container and episode), per container per episode, and per line. */
#define MEMBER_LOG_FORWARD_BYTES      (4UL * 1024)
#define MEMBER_LOG_FORWARD_LINE_BYTES 512 /* a longer line is cut, "..." */
#define MEMBER_LOG_FORWARD_LINE_COST  64  /* charged per line: entries are bounded too */
/* Sealing: who filled the agent's workspace (entries and depth walked) and
 * whose processes were left detached (a leaf's cgroup.procs read). */
#define UNIT_DISK_BLAME_MAX_ENTRIES 100000
#define UNIT_DISK_BLAME_MAX_DEPTH   64
#define UNIT_PROCS_MAX_BYTES        (1024UL * 1024)

/* --- mount tables (base/mountinfo.h: a hostile namespace may shape them) --- */
#define MOUNTINFO_MAX_LINES 4096
#define MOUNTINFO_MAX_LINE  8192
#define MOUNTINFO_MAX_BYTES (4UL * 1024 * 1024) /* one mountinfo read */

/* --- probe / validate (measured inside hostile containers) --- */
#define PROC_STATUS_MAX_BYTES    (64UL * 1024)
#define PROC_STATUS_MAX_GROUPS   64                  /* supplementary groups kept per process */
#define PROBE_MAX_PROCESSES      512                 /* subject processes inventoried */
#define PROBE_WALK_MAX_DEPTH     8                   /* directories below a walked mount */
#define PROBE_WALK_MAX_ENTRIES   4096                /* entries examined per walked mount */
#define PROBE_WALK_MAX_FINDINGS  16                  /* writable/inconclusive paths kept per walk */
#define PROBE_EVIDENCE_MAX_BYTES (8UL * 1024 * 1024) /* the helper's JSON document */
#define DOCKER_OUTPUT_MAX_BYTES  (4UL * 1024 * 1024) /* one docker CLI stdout/stderr capture */
#define DOCKER_ERROR_MAX_BYTES   2048                /* docker's error text kept in a report */
#define IMAGE_REF_MAX_BYTES      1024                /* an image reference (name, tag, digest) */

/* --- cgroup (paths come from manifest zone/container names; files from the kernel) --- */
#define CGROUP_PATH_MAX        512                 /* a relative path inside our subtree */
#define CGROUP_FILE_MAX_BYTES  (64UL * 1024)       /* one interface file read (events, stat) */
#define CGROUP_PROCS_MAX_BYTES (4UL * 1024 * 1024) /* cgroup.procs of a fork-bombed group */
#define CGROUP_KILL_PASSES     50                  /* SIGKILL sweeps without cgroup.kill */

/* --- sandbox (container specs come from manifests; shim traffic from the agent) --- */
#define CONTAINER_MAX_MOUNTS       128  /* spec mounts per container */
#define CONTAINER_MAX_MASKS        256  /* masked paths per container */
#define CONTAINER_MAX_FORWARDS     64   /* shim forwarders per container */
#define CONTAINER_MAX_PASS_FDS     16   /* fds handed to the shim (3, 4, ...) */
#define CONTAINER_MAX_UID_EXTENTS  72   /* extra uid map lines of a template (its copies') */
#define CONTAINER_MAX_SCAFFOLDS    32   /* tmpfs scaffolds for missing mount targets */
#define CONTAINER_SCAFFOLD_ENTRIES 1024 /* entries re-bound into one scaffold */
#define SHIM_MAX_CONNECTIONS       1024 /* forwarded connections open at once */
#define SHIM_BUFFER_BYTES          ((size_t) 64 * 1024) /* per direction per connection */
#define SHIM_GATE_MAX_BYTES        4096 /* the release message of a gated container (--gate-fd) */
#define SHIM_MAX_PASS_FDS          4    /* fds the principal inherits (--pass-fd) */
#define SHIM_ADOPT_MAX_BYTES       16   /* "PID\n" of the process to adopt (--adopt-fd) */
#define SHIM_ADOPT_REAPED          16   /* children reaped before that pid arrived, kept */
/* The host view (paths come from the manifest's argv and the daemon's environment). */
#define HOST_VIEW_FILE_MAX        ((size_t) 4 * 1024 * 1024) /* one /etc file copied */
#define HOST_VIEW_DIR_ENTRIES     8192 /* entries of one /etc directory copied */
#define HOST_VIEW_MAX_IMAGE_PATHS 16   /* the unit's own dirs bound into one container */

/* --- check enforcement (probe reports come from inside a probed container) --- */
#define ENFORCE_REPORT_MAX_BYTES ((size_t) 1024 * 1024) /* one probe's report file */
#define ENFORCE_REPORT_MAX_LINE  4096                   /* one attempt's JSON line */
