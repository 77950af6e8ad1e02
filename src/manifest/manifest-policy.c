/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * openenvd.verdict_policy and an agent container's own verdict_policy: for
 * each kind of event of an agent-zone container, `record` (the verdict lists
 * it, grading runs) or `void` (listed, and grading is void). The defaults
 * and why are docs/GRADING.md's ("Verdict policy"): RL keeps the sample of
 * an honest agent whose program failed inside a container that survived.
 */
#include "base/util.h"
#include "manifest/manifest-internal.h"

void manifest_verdict_policy_defaults(struct manifest_verdict_policy *policy)
{
        *policy =
                (struct manifest_verdict_policy){ .on = {
                                                          /* A program the agent ran failed; the
                                                           * kernel held the limit, nothing escaped:
                                                           * the reward says how it went. */
                                                          [MANIFEST_VERDICT_EVENT_OOM_KILL] =
                                                                  MANIFEST_VERDICT_RECORD,
                                                          [MANIFEST_VERDICT_EVENT_PIDS_LIMIT] =
                                                                  MANIFEST_VERDICT_RECORD,
                                                          /* `cmd &`, nohup: ordinary in coding
                                                           * tasks; sealing kills the whole cgroup
                                                           * before any grader reads a byte. */
                                                          [MANIFEST_VERDICT_EVENT_DETACHED] =
                                                                  MANIFEST_VERDICT_RECORD,
                                                          /* The quota stopped the writes; custody
                                                           * copies are bounded by the same size. */
                                                          [MANIFEST_VERDICT_EVENT_DISK_FULL] =
                                                                  MANIFEST_VERDICT_RECORD,
                                                          /* The env server (or a harness) itself
                                                           * died: the episode has no end the env
                                                           * declared. */
                                                          [MANIFEST_VERDICT_EVENT_EXIT] =
                                                                  MANIFEST_VERDICT_VOID,
                                                  } };
}

/* Field by field, as resources: a key left out keeps what *policy says. */
void manifest_parse_verdict_policy(struct manifest_ctx *x, const struct mnode *n, const char *path,
                                   struct manifest_verdict_policy *policy)
{
        const struct mnode *k[MANIFEST_VERDICT_EVENT_MAX], *v[MANIFEST_VERDICT_EVENT_MAX];

        if (!mnode_fields(x, n, path, manifest_verdict_event_table, MANIFEST_VERDICT_EVENT_MAX,
                          false, k, v))
                return;
        for (unsigned e = 0; e < MANIFEST_VERDICT_EVENT_MAX; e++) {
                cleanup_free char *p = NULL;
                unsigned a;
                if (!v[e])
                        continue;
                p = mpath_key(path, manifest_verdict_event_table[e]);
                if (mnode_get_enum(x, v[e], p, "verdict policy", manifest_verdict_action_table,
                                   MANIFEST_VERDICT_ACTION_MAX, &a))
                        policy->on[e] = (enum manifest_verdict_action) a;
        }
}
