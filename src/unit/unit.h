/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The unit: one environment split into zones, run episode after episode
 * (DESIGN section 8).
 *
 *   unit_reset()        any phase → provisioning → ready (or failed)
 *   unit_first_step()   ready → running (the first relayed agent step)
 *   unit_inspect()      running → frozen, observers listing `frozen` run
 *   unit_resume()       frozen → running
 *   unit_end()          → sealed → grading → closed, with a verdict
 *   unit_teardown()     stops what the closed episode still runs
 *
 * Observers listing ready or running start in the background when the unit
 * becomes ready; they are stopped at sealing (or, if they list sealed or
 * grading too, collected in their turn there) and their results recorded.
 *
 * Grading order is fixed: the agent zone is killed and the kernel must report
 * its cgroup empty (within kill_deadline_s, else agent_misbehavior) before
 * any observer starts; observers run one at a time in `after` order, each
 * only after the previous one's cgroup is empty; an observer reads another's
 * output only as a custody copy made after that.
 *
 * Blame is by cgroup subtree: what happened under zones/agent is
 * agent_misbehavior; services, observers and the daemon itself are
 * infrastructure_error. (A runner output refused by custody is agent data
 * the runner passed on: agent_misbehavior, blamed on that observer's subtree.)
 *
 * Every call is synchronous and bounded by the timeouts in unit_config; the
 * daemon drives it from its single event loop. Ownership: the unit borrows
 * the manifest, cgroup tree and loop; it owns its containers, relays and
 * episode storage, and unit_free() tears all of them down.
 */
#include <jansson.h>
#include <stdbool.h>

#include "base/macro.h"
#include "base/time-util.h"
#include "cgroup/cgroup.h"
#include "manifest/manifest.h"
#include "phase/phase.h"
#include "relay/event-loop.h"

struct model_upstream;

struct unit_config {
        const struct manifest *manifest; /* borrowed */
        const char *state_dir;           /* absolute, created by the caller (0711) */
        struct cgroup_tree *cgroups;     /* borrowed, the daemon already adopted itself */
        struct loop *loop;               /* borrowed */
        const char *shim_path;           /* absolute path of openenvd-shim */
        int log_fd;                      /* containers' stdout/stderr; -EBADF: /dev/null */
        usec_t start_timeout;            /* services and env must be ready within this */
        usec_t observer_timeout;         /* one observer's run */
        char *const *extra_masks;        /* more host paths to hide in every container */
        unsigned weaken;                 /* test-only: enum container_weaken for every container */
        /* Model proxy for the harness (NULL upstream: none). The key is copied. */
        const struct model_upstream *model_upstream; /* borrowed (relay/model-upstream.h) */
        const char *model_key;
        const char *model_provider; /* "anthropic" | "openai" */
};

enum unit_verdict_kind {
        UNIT_VERDICT_NONE,
        UNIT_VERDICT_GRADED,
        UNIT_VERDICT_AGENT_MISBEHAVIOR,
        UNIT_VERDICT_INFRASTRUCTURE_ERROR,
};

struct unit;

int unit_new(const struct unit_config *cfg, struct unit **ret);
struct unit *unit_free(struct unit *u);
DEFINE_CLEANUP_FUNC(struct unit, unit_free);

enum phase unit_phase(const struct unit *u);
const char *unit_episode_id(const struct unit *u); /* NULL before the first reset */
/* Host path of the env server's socket (what the external relay connects to). */
const char *unit_env_socket(const struct unit *u);
bool unit_env_traffic_allowed(const struct unit *u);

/*
 * Control operations. Each returns 0, -EPERM when the phase machine refuses
 * (ret_refusal gets "<actor> cannot move the unit from <from> to <to>"), or
 * another -errno when the operation failed (the unit then records the
 * failure in its verdict and phase; details go to the log only).
 */
int unit_reset(struct unit *u, char *ret_refusal, size_t refusal_size);
int unit_first_step(struct unit *u);
int unit_inspect(struct unit *u, json_t **ret_observers, char *ret_refusal, size_t refusal_size);
int unit_resume(struct unit *u, char *ret_refusal, size_t refusal_size);
int unit_end(struct unit *u, enum phase_actor actor, const char *reason, char *ret_refusal,
             size_t refusal_size);
/* Stops the episode's containers and relays and removes its cgroup leaves
 * and storage. unit_end() leaves that to the caller, so that the verdict is
 * served first (the daemon defers it to the end of the loop round); the
 * next unit_reset() and unit_free() do it too. Idempotent. */
void unit_teardown(struct unit *u);

/* {"phase", "episode_id", "history": [...], "verdict"}; new reference. */
json_t *unit_info(const struct unit *u);
/* {"episode_id", "verdict", "reason", "blame": {"subtree"}, "observers"}; new reference. */
json_t *unit_verdict(const struct unit *u);
enum unit_verdict_kind unit_verdict_kind(const struct unit *u);

/* For the daemon's reaper: if pid is one of the unit's containers, reap it
 * through its pidfd (keeping its exit status) and return true. */
bool unit_reap_pid(struct unit *u, pid_t pid);
