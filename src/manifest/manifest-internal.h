/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Internal to the manifest module: defaults and ranges shared by the parser
 * (manifest.c), the checks (manifest-rules.c) and the renderers, the parse
 * context, and what each part gives the parts above it. All values are
 * documented in docs/MANIFEST.md.
 *
 * The parts, in dependency order (each calls only the ones before it):
 *   manifest-errors.c    the error list the caller owns (manifest-errors.h)
 *   manifest-access.c    the built manifest: its enums' names, lookups, destructor
 *   manifest-node.c      openenv.yaml -> the positioned YAML tree (manifest-node.h)
 *   manifest-values.c    the typed pass's bottom: its error sink (ctx_error),
 *                        key paths, typed values
 *   manifest-command.c   the env container's command and port
 *   manifest-container.c one container of a zone: keys, limits, effective policy
 *   manifest-policy.c    verdict_policy: the unit's defaults, a container's keys
 *   manifest-rules.c     the cross-container rules
 *   manifest.c           the document top down (openenvd:, zones); parse and load
 *   manifest-json.c      the built manifest as JSON (manifest.h's API alone)
 * Every part reports a problem where it finds it, at its node, and goes on
 * (one run reports everything): the error sink sits at the bottom of the
 * pass, so that all of them call down to it.
 */
#include "manifest/manifest-node.h"
#include "manifest/manifest.h"

#define MANIFEST_DEFAULT_PORT            8000
#define MANIFEST_DEFAULT_KILL_DEADLINE_S 10.0
#define MANIFEST_MAX_KILL_DEADLINE_S     3600.0
#define MANIFEST_MAX_MEMORY_MB           (1024ULL * 1024) /* 1 TiB */
#define MANIFEST_MAX_PIDS                4194304ULL       /* PID_MAX_LIMIT */
#define MANIFEST_MAX_CPU                 1024.0
#define MANIFEST_MAX_DISK_MB             (1024ULL * 1024)
#define MANIFEST_NAME_MAX                63 /* DNS label */
#define MANIFEST_MAX_MODEL_REQUESTS      1000000000ULL
#define MANIFEST_MAX_MODEL_BYTES         (1ULL << 50) /* 1 PiB */
#define MANIFEST_MAX_MODEL_TOKENS        1000000000000ULL

/* Phases an observer may list; services live in the same set. */
#define MANIFEST_OBSERVER_PHASES                                                       \
        (PHASE_BIT(PHASE_READY) | PHASE_BIT(PHASE_RUNNING) | PHASE_BIT(PHASE_FROZEN) | \
         PHASE_BIT(PHASE_SEALED) | PHASE_BIT(PHASE_GRADING))
#define MANIFEST_AGENT_PHASES (PHASE_BIT(PHASE_READY) | PHASE_BIT(PHASE_RUNNING))
/* The only phases in which a container may see privileged assets. */
#define MANIFEST_ASSET_PHASES (PHASE_BIT(PHASE_FROZEN) | PHASE_BIT(PHASE_GRADING))

/* Where each container's keys were found, for the cross-container rules. */
enum container_key {
        CK_ARGV,
        CK_ENV,
        CK_RESOURCES,
        CK_NETWORK,
        CK_PORT,
        CK_PHASES,
        CK_READS,
        CK_EXPOSE,
        CK_STATE,
        CK_OUTPUT,
        CK_AFTER,
        CK_ROOTFS,
        CK_WORKDIR,
        CK_VERDICT_POLICY,
        CK_MAX,
};

struct container_info {
        struct manifest_container *c; /* borrowed: the manifest */
        const struct mnode *key;      /* the name key; NULL if defaulted */
        const struct mnode *node;     /* the container's mapping (or NULL) */
        char *path;                   /* owned: "zones.<zone>.containers.<name>" */
        const struct mnode *keys[CK_MAX];
        const struct mnode *vals[CK_MAX];
        const struct mnode **read_nodes;  /* owned vector, n_reads entries */
        const struct mnode **after_nodes; /* owned vector, one per after entry */
        const struct mnode **phase_nodes; /* owned vector, one per listed phase */
        size_t n_phase_nodes;
        unsigned listed_phases; /* what `phases:` said, before defaults */
};

struct manifest_ctx {
        struct manifest_errors *errors; /* borrowed */
        struct manifest *m;             /* borrowed: being built */
        unsigned flags;
        const struct manifest_overrides *overrides; /* borrowed, may be NULL */
        const struct mnode *root;
        const struct mnode **asset_keys; /* owned vector, n_assets entries: where each was named */
        const struct mnode **asset_vals; /* owned vector, n_assets entries: its path as written */
        const struct mnode *seed_node;   /* workspace_seed's value if valid, else NULL */
        const struct mnode *zone_containers[MANIFEST_ZONE_MAX]; /* `containers:` keys */
        bool app_invalid; /* an app was given but malformed (already reported) */
        const struct mnode *zone_keys[MANIFEST_ZONE_MAX];
        struct container_info *ci; /* owned, n_ci entries, all zones in order */
        size_t n_ci;
};

/* The names the parser reads as well as writes (manifest-access.c). */
extern const char *const manifest_oci_table[MANIFEST_OCI_MAX];
extern const char *const manifest_during_grading_table[MANIFEST_DURING_GRADING_MAX];
extern const char *const manifest_verdict_event_table[MANIFEST_VERDICT_EVENT_MAX];
extern const char *const manifest_verdict_action_table[MANIFEST_VERDICT_ACTION_MAX];

/* The error sink (manifest-values.c): a message at a node's position (a
 * defaulted thing, at = NULL: the document's), added to x->errors. */
void ctx_error(struct manifest_ctx *x, const struct mnode *at, const char *path, const char *fmt,
               ...) printf_fmt(4, 5);
/* Typed values of the YAML tree (manifest-values.c): each checks type, range
 * or syntax, reports through ctx_error() at the node and returns false (or
 * leaves *ret alone) when the value is refused. Paths are "a.b[2].c". */
char *mpath_key(const char *path, const char *key);
char *mpath_index(const char *path, size_t i);
bool mnode_fields(struct manifest_ctx *x, const struct mnode *n, const char *path,
                  const char *const *known, size_t n_known, bool allow_unknown,
                  const struct mnode **keys, const struct mnode **vals);
bool mnode_user_map(struct manifest_ctx *x, const struct mnode *n, const char *path, size_t max,
                    const char *what);
bool mnode_get_string(struct manifest_ctx *x, const struct mnode *n, const char *path,
                      const char **ret);
bool mnode_get_uint(struct manifest_ctx *x, const struct mnode *n, const char *path, uint64_t min,
                    uint64_t max, uint64_t *ret);
/* Whether n is a plain YAML 1.2 boolean (its value in *ret). */
bool mnode_as_bool(const struct mnode *n, bool *ret);
bool mnode_get_bool(struct manifest_ctx *x, const struct mnode *n, const char *path, bool *ret);
bool mnode_get_port(struct manifest_ctx *x, const struct mnode *n, const char *path, uint16_t *ret);
bool mnode_get_positive_double(struct manifest_ctx *x, const struct mnode *n, const char *path,
                               double max, double *ret);
bool mnode_get_enum(struct manifest_ctx *x, const struct mnode *n, const char *path,
                    const char *what, const char *const *names, size_t n_names, unsigned *ret);
bool mnode_get_container_path(struct manifest_ctx *x, const struct mnode *n, const char *path,
                              const char *what, char **ret);
bool manifest_is_dns_label(const char *s);
bool manifest_is_hostname(const char *s);
bool manifest_is_env_name(const char *s);
bool manifest_is_asset_name(const char *s);
bool manifest_is_app_string(const char *s);
bool manifest_resolve_host_path(struct manifest_ctx *x, const struct mnode *n, const char *path,
                                const char *what, char **ret);
void manifest_check_host_path(struct manifest_ctx *x, const struct mnode *n, const char *path,
                              const char *abs, bool want_dir);
const struct mnode *mnode_lookup(const struct mnode *n, const char *key);

/* The env container's command and port (manifest-command.c). */
void manifest_resolve_env_command(struct manifest_ctx *x, struct container_info *ci);

/* Containers (manifest-container.c): keys, limits, reads, phases and the
 * effective policy of one container of a zone. */
void manifest_parse_resources(struct manifest_ctx *x, const struct mnode *n, const char *path,
                              struct manifest_resources *res);
int manifest_parse_network(struct manifest_ctx *x, const struct mnode *n, const char *path);
char **manifest_parse_string_list(struct manifest_ctx *x, const struct mnode *n, const char *path,
                                  const struct mnode ***ret_nodes);
void ctx_parse_container(struct manifest_ctx *x, struct manifest_zone *z,
                         struct container_info *ci);
void ctx_finalize_container(struct manifest_ctx *x, const struct manifest_zone *z,
                            struct container_info *ci);
struct container_info *ctx_add_container(struct manifest_ctx *x, struct manifest_zone *z,
                                         const struct mnode *key, const struct mnode *node,
                                         const char *name);

/* verdict_policy (manifest-policy.c): the defaults, and a mapping's keys
 * over *policy, field by field. */
void manifest_verdict_policy_defaults(struct manifest_verdict_policy *policy);
void manifest_parse_verdict_policy(struct manifest_ctx *x, const struct mnode *n, const char *path,
                                   struct manifest_verdict_policy *policy);

/* The cross-container rules (manifest-rules.c), on what did parse. */
void manifest_check_rules(struct manifest_ctx *x);
