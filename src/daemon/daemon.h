/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * openenvd: PID 1 of an environment image (or root on a host or microVM).
 *
 * One struct daemon holds everything (no mutable globals but the log
 * configuration): the event loop, the cgroup subtree, the unit and the
 * external listener. One thread; signals arrive through signalfd; children
 * are reaped in one place (daemon_reap()), which hands the unit's own
 * containers back to the unit so their exit status is never stolen.
 */
#include <stdbool.h>
#include <stdint.h>

#include "base/exit-code.h"
#include "manifest/manifest.h"

struct credentials;

struct model_upstream;

struct env_origin;

struct daemon_options {
        const char *manifest_path; /* default openenv.yaml */
        bool manifest_given;       /* --manifest was given (else a missing default is allowed
                                      when env_command is) */
        char *const *env_command;  /* `openenvd [OPTIONS] -- CMD...`; NULL: none */
        const struct env_origin *env_origin; /* the env's start directory and environment */
        const char *state_dir;               /* default /var/lib/openenvd */
        uint16_t port;                       /* 0: the manifest's */
        unsigned verdict_history;            /* --verdict-history: ended episodes kept */
        const char *listen_address;          /* default 0.0.0.0 */
        bool require_isolation;
        const char *token_file;
        const char *agent_token_file;   /* the agent principal's token (credentials.h) */
        const char *metrics_token_file; /* the scraper principal's token */
        /* Loaded by main() from the two above before the preflight (a bad
         * file is bad usage, said first); the daemon takes them over and
         * leaves *creds empty. token_generated: printed once at start. */
        struct credentials *creds;
        bool token_generated;
        const char *model_key_file;
        const struct model_upstream *model_upstream; /* --model-url, resolved at start */
        const char *model_provider;
        const char *shim_path; /* default: openenvd-shim next to openenvd */
        /* containers' default root: an unpacked image, or "/" under
         * --host-root-unfiltered; NULL: the host view (sandbox/host-view.h) */
        const char *rootfs;
        const char *host_root_reason; /* --host-root-unfiltered's reason; NULL: not given */
        const char *uid_lock_dir;     /* NULL: UID_BLOCK_LOCK_DIR */
        bool no_initial_episode;      /* only a standby at start; the orchestrator resets */
        bool no_standby;              /* no standby episodes, whatever the manifest says */
        bool quiet_containers;        /* --container-output none */
        unsigned weaken;              /* test-only (--test-weaken) */
        double observer_timeout_s;
        double start_timeout_s;
};

/* Exit codes (docs/DAEMON.md): the project's one table, base/exit-code.h. */
enum {
        DAEMON_EXIT_OK = EXIT_CODE_OK,
        DAEMON_EXIT_FAILURE = EXIT_CODE_FAILED,
        DAEMON_EXIT_INVALID = EXIT_CODE_INVALID,          /* bad usage or invalid manifest */
        DAEMON_EXIT_NO_ISOLATION = EXIT_CODE_UNAVAILABLE, /* preflight off, --require-isolation */
};

/* Runs the isolated unit until SIGTERM/SIGINT; returns an exit code. */
int daemon_run_isolated(const struct daemon_options *opts, const struct manifest *m);
/* Steps aside: execs the env server as the image would run it, where
 * --port and --listen say if its command is the manifest's app (else it
 * says why it cannot). Returns only on failure (an exit code). */
int daemon_exec_fallback(const struct daemon_options *opts, const struct manifest *m);
