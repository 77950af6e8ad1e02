/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The manifest contract: `openenv.yaml` turned into an immutable, fully
 * typed and fully defaulted description of a unit (docs/MANIFEST.md).
 *
 * Ownership: struct manifest owns everything reachable from it (strings,
 * arrays, containers); nothing points outside it. After manifest_parse() or
 * manifest_load() returns it is never modified: hand it around as
 * `const struct manifest *` and free it once with manifest_free().
 *
 * Invariants of a loaded manifest (checked at load, so users need not
 * re-check): every rule of docs/DESIGN.md §3 holds; the agent zone has an
 * `env` container; container names are unique across zones and DNS labels;
 * every container has a non-empty argv; `effective` resources are the
 * container's own narrowed by its zone; every read names an existing asset,
 * service with state or upstream observer with output; the `after` graph is
 * acyclic and observer_order is a topological order of it; asset and seed
 * paths are absolute.
 */
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/macro.h"
#include "manifest/manifest-errors.h"
#include "phase/phase.h"

enum manifest_zone_kind {
        MANIFEST_ZONE_AGENT,
        MANIFEST_ZONE_SERVICES,
        MANIFEST_ZONE_OBSERVERS,
        MANIFEST_ZONE_MAX,
};

enum manifest_egress {
        MANIFEST_EGRESS_NONE,        /* nothing: no relay out of the container */
        MANIFEST_EGRESS_RELAYS_ONLY, /* only the daemon's relays (agent zone, fixed) */
        /* `allowlist` is refused at load: "not supported yet". */
};

enum manifest_oci {
        MANIFEST_OCI_NATIVE, /* the daemon's own launcher (default) */
        MANIFEST_OCI_CRUN,
        MANIFEST_OCI_RUNC,
        MANIFEST_OCI_RUNSC,
        MANIFEST_OCI_MAX,
};

enum manifest_during_grading {
        MANIFEST_DURING_GRADING_FROZEN,
        MANIFEST_DURING_GRADING_SERVE_OBSERVERS,
        MANIFEST_DURING_GRADING_MAX,
};

/*
 * openenvd.verdict_policy: what an event of an agent-zone container does to
 * the episode's verdict (docs/GRADING.md, "Verdict policy"). Either way the
 * verdict lists the event; `void` also ends grading before any grader runs
 * (agent_misbehavior blamed on the container), `record` lets it run.
 */
enum manifest_verdict_event {
        MANIFEST_VERDICT_EVENT_OOM_KILL,   /* a process OOM-killed at the container's own limit */
        MANIFEST_VERDICT_EVENT_PIDS_LIMIT, /* a fork refused by its pids limit */
        MANIFEST_VERDICT_EVENT_DETACHED,   /* a process detached from its principal */
        MANIFEST_VERDICT_EVENT_DISK_FULL,  /* the workspace full, most of it the container's */
        MANIFEST_VERDICT_EVENT_EXIT,       /* the container itself ended (non-zero, a signal) */
        MANIFEST_VERDICT_EVENT_MAX,
};

enum manifest_verdict_action {
        MANIFEST_VERDICT_RECORD, /* listed in the verdict's events; grading runs */
        MANIFEST_VERDICT_VOID,   /* listed, and grading is void: agent_misbehavior */
        MANIFEST_VERDICT_ACTION_MAX,
};

struct manifest_verdict_policy {
        enum manifest_verdict_action on[MANIFEST_VERDICT_EVENT_MAX];
};

/* Where the env container's argv came from. */
enum manifest_argv_source {
        MANIFEST_ARGV_MANIFEST,     /* written in the manifest (argv:) */
        MANIFEST_ARGV_APP,          /* uvicorn <app> --host 0.0.0.0 --port <port> */
        MANIFEST_ARGV_COMMAND_LINE, /* openenvd -- CMD...: the image's own CMD */
};

enum manifest_read_kind {
        MANIFEST_READ_ASSET,         /* assets.<name> */
        MANIFEST_READ_WORKSPACE,     /* workspace */
        MANIFEST_READ_SERVICE_STATE, /* services.<name>.state */
        MANIFEST_READ_OUTPUT,        /* <observer>.output */
        MANIFEST_READ_ACTIONS,       /* actions: the daemon's record of them */
};

/* 0 in any field means "no limit at this level". */
struct manifest_resources {
        uint64_t memory_mb;
        uint64_t pids;
        double cpu; /* CPUs (quota / period) */
        uint64_t disk_mb;
};

struct manifest_read {
        enum manifest_read_kind kind;
        char *target; /* owned: asset, service or observer name; NULL for workspace */
};

struct manifest_expose {
        char *host;    /* owned; NULL = not exposed */
        uint16_t port; /* what the env server calls */
};

struct manifest_container {
        char *name; /* owned; DNS label, unique in the unit */
        enum manifest_zone_kind zone;
        char **argv; /* owned, NULL-terminated, never empty */
        enum manifest_argv_source argv_source;
        char **env; /* owned "KEY=VALUE", manifest order, NULL-terminated */
        struct manifest_resources resources; /* as written (0 = inherit the zone's) */
        struct manifest_resources effective; /* narrowed by the zone, computed at load */
        enum manifest_egress egress;         /* effective */
        uint16_t port;                       /* listening port in its own netns; 0 = none */
        unsigned phases;                     /* PHASE_BIT() set: when it lives */
        struct manifest_read *reads;         /* owned, n_reads entries (observers only) */
        size_t n_reads;
        struct manifest_expose expose; /* services only */
        char *state;                   /* owned absolute path or NULL (services only) */
        char *output;                  /* owned absolute path under /out or NULL (observers only) */
        char **after;                  /* owned observer names, NULL-terminated, may be empty */
        char *rootfs; /* owned absolute path; NULL or "/": the daemon's (--rootfs, else the
                       * host view on a host, "/" as PID 1) */
        /* owned absolute path; default /workspace for the agent zone's other
         * containers, "/" for services and observers, and NULL for the env
         * container: the daemon's working directory at start (an image's
         * WORKDIR), which the manifest cannot know. */
        char *workdir;
        /* The unit's verdict_policy, with the container's own keys over
         * it (agent containers only declare one). */
        struct manifest_verdict_policy verdict_policy;
};

struct manifest_zone {
        enum manifest_zone_kind kind;
        enum manifest_egress egress;         /* ceiling */
        struct manifest_resources resources; /* ceiling (the zone cgroup's limits) */
        enum manifest_oci oci;
        enum manifest_during_grading during_grading; /* meaningful for services only */
        struct manifest_container *containers;       /* owned, manifest order */
        size_t n_containers;
};

/* openenvd.model: what each harness's model proxy may spend per episode
 * (0 = unlimited). */
struct manifest_model_budget {
        uint64_t requests; /* requests forwarded to the provider */
        uint64_t bytes;    /* request + response bytes to and from the provider */
        uint64_t tokens;   /* input + output tokens the provider reported */
};

struct manifest_model {
        struct manifest_model_budget budget;
};

struct manifest_asset {
        char *name; /* owned */
        char *path; /* owned, absolute (resolved against the manifest's directory) */
};

/* The largest standby pool: each ready episode holds its containers'
 * memory (a template's copy a few MiB, a cold env a whole interpreter).
 * As large as the lanes: a unit can keep an episode ready for each of
 * its sessions. */
#define MANIFEST_STANDBY_MAX 32
/* The most episodes one unit runs at once (`episodes: {concurrent: N}`):
 * each has a slot of its own (unit-plan.h), a block of host uid ranges
 * and, in a template, one uid extent of the template's map. */
#define MANIFEST_CONCURRENT_MAX 32
/* An HTTP MCP session's lane goes back after this long unused (seconds;
 * the default is the relay's idle timeout for a connection). */
#define MANIFEST_DEFAULT_SESSION_IDLE_S 600
#define MANIFEST_SESSION_IDLE_MAX_S     86400

struct manifest {
        char *app;     /* owned ASGI app ("module:attr") or NULL if none is set */
        uint16_t port; /* openenvd.port: the unit's external port */
        double kill_deadline_s;
        /* openenvd.standby: episodes kept provisioned ahead, never exposed
         * (0..MANIFEST_STANDBY_MAX; `true` is 1, the default; `false` 0) */
        unsigned standby;
        /* openenvd.episodes.concurrent: episodes live at once, one per
         * client session (1..MANIFEST_CONCURRENT_MAX; default 1) */
        unsigned concurrent;
        /* openenvd.episodes.session_idle_s: an HTTP MCP session (no
         * connection of its own) unused this long ends, and its episode */
        unsigned session_idle_s;
        /* openenvd.template: episodes' env servers forked from a warm
         * template where the command allows (default true; unit/env-template.h) */
        bool env_template;
        char *base_dir;       /* owned: absolute directory relative paths resolved against */
        char *workspace_seed; /* owned absolute path or NULL */
        struct manifest_asset *assets; /* owned, manifest order */
        size_t n_assets;
        struct manifest_zone zones[MANIFEST_ZONE_MAX];
        struct manifest_model model;
        struct manifest_verdict_policy verdict_policy; /* openenvd.verdict_policy */
        char **agent_paths; /* owned strv: routes the agent principal may reach (besides /mcp) */
        /* owned strv: openenvd.enforcement.require, the guarantees the unit
         * depends on (OpenEnv RFC 009's names): the daemon refuses to start
         * without isolation when any is listed, as under --require-isolation */
        char **require;
        const struct manifest_container **observer_order; /* owned vector, borrowed entries */
        size_t n_observer_order;
};

enum {
        /* Check that assets and workspace_seed exist (manifest_load sets it). */
        MANIFEST_CHECK_PATHS = 1u << 0,
};

/* What openenvd's command line adds to the manifest. */
struct manifest_overrides {
        /* The env server's command (`openenvd [OPTIONS] -- CMD...`, an
         * image's CMD under ENTRYPOINT ["openenvd", "--"]): replaces the env
         * container's argv, and no app is needed. NULL or empty: none. */
        char *const *env_argv;
};

/*
 * Parses and validates `size` bytes of YAML. base_dir (absolute) is what
 * relative asset/seed paths are resolved against. Returns 0 and the manifest,
 * or -EINVAL with every problem in errors (sorted by position), or -ENOMEM.
 * errors must be initialised by the caller (manifest_errors_init).
 */
int manifest_parse(const char *data, size_t size, const char *base_dir, unsigned flags,
                   struct manifest_errors *errors, struct manifest **ret);
/*
 * Reads path (at most MANIFEST_MAX_BYTES: a larger file is -EINVAL with an
 * error, i.e. an invalid manifest) and parses it with base_dir = the file's
 * directory and MANIFEST_CHECK_PATHS. Returns -errno (not -EINVAL) when the
 * file cannot be read at all; -EINVAL when it is invalid.
 */
int manifest_load(const char *path, struct manifest_errors *errors, struct manifest **ret);
/* The same with overrides (NULL: none). */
int manifest_parse_with(const char *data, size_t size, const char *base_dir, unsigned flags,
                        const struct manifest_overrides *o, struct manifest_errors *errors,
                        struct manifest **ret);
int manifest_load_with(const char *path, const struct manifest_overrides *o,
                       struct manifest_errors *errors, struct manifest **ret);
struct manifest *manifest_free(struct manifest *m);
DEFINE_CLEANUP_FUNC(struct manifest, manifest_free);

const struct manifest_zone *manifest_zone(const struct manifest *m, enum manifest_zone_kind kind);
const struct manifest_container *manifest_find_container(const struct manifest *m,
                                                         const char *name);
const struct manifest_asset *manifest_find_asset(const struct manifest *m, const char *name);
/* Observers in a topological `after` order (ties: manifest order). */
size_t manifest_observer_order(const struct manifest *m,
                               const struct manifest_container *const **ret);
bool manifest_container_reads(const struct manifest_container *c, enum manifest_read_kind kind);
/* Whether an observer lists phase p; whether it lists ready or running: it
 * runs beside the agent zone (else only once that is stopped, in frozen,
 * sealed or grading: every observer lists one of the five). */
bool manifest_container_lists(const struct manifest_container *c, enum phase p);
bool manifest_container_runs_early(const struct manifest_container *c);
/* "uvicorn <app> --host 0.0.0.0 --port <port>" etc.: argv[0..] joined by spaces. */
char *manifest_container_command_line(const struct manifest_container *c);
/* The env server's default command: uvicorn <app> --host <host> --port <port>
 * (new strv). The one place that spells it. */
char **manifest_app_argv(const char *app, const char *host, uint16_t port);

const char *manifest_zone_kind_to_string(enum manifest_zone_kind k);
const char *manifest_egress_to_string(enum manifest_egress e);
const char *manifest_oci_to_string(enum manifest_oci o);
const char *manifest_during_grading_to_string(enum manifest_during_grading d);
const char *manifest_read_kind_to_string(enum manifest_read_kind k);
/* "oom_kill", "pids_limit", "detached", "disk_full", "exit". */
const char *manifest_verdict_event_to_string(enum manifest_verdict_event e);
/* "record", "void". */
const char *manifest_verdict_action_to_string(enum manifest_verdict_action a);
const char *manifest_argv_source_to_string(enum manifest_argv_source s);
/* "assets.oracle", "workspace", "services.sim.state", "runner.output". */
char *manifest_read_to_string(const struct manifest_read *r);

/* The full defaulted contract as JSON (docs/MANIFEST.md, "JSON form"). */
json_t *manifest_to_json(const struct manifest *m);
