/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The containers' output of an episode as GET /logs reads it: the members'
 * own while they run, what each left when it was stopped, and, once the
 * episode is freed, the record the unit keeps of it.
 */
#include <string.h>

#include "base/util.h"
#include "unit/episode-internal.h"

struct episode_logs {
        char id[sizeof(((struct episode *) NULL)->id)];
        size_t n;
        struct kept_log {
                char *name;             /* owned */
                struct member_log *log; /* owned */
        } * members;
};

const struct member_log *episode_member_log(const struct episode *e, const char *name)
{
        for (size_t i = 0; i < e->n_members; i++) {
                const struct ep_member *mb = &e->members[i];
                if (streq(mb->mc->name, name))
                        return mb->m ? member_output(mb->m) : mb->log;
        }
        return NULL;
}

struct episode_logs *episode_take_logs(struct episode *e)
{
        struct episode_logs *k = xcalloc(1, sizeof(*k));

        memcpy(k->id, e->id, sizeof(k->id));
        k->members = xcalloc(e->n_members, sizeof(*k->members));
        for (size_t i = 0; i < e->n_members; i++) {
                struct ep_member *mb = &e->members[i];
                struct member_log *l = TAKE_PTR(mb->log);

                /* Still running only when the episode is freed before its
                 * teardown (too many retiring at once): a copy, closed, as
                 * the episode goes with the rest. */
                if (!l && mb->m) {
                        l = member_log_dup(member_output(mb->m));
                        member_log_close(l);
                }
                if (l)
                        k->members[k->n++] = (struct kept_log){ xstrdup(mb->mc->name), l };
        }
        return k;
}

struct episode_logs *episode_logs_free(struct episode_logs *k)
{
        if (!k)
                return NULL;
        for (size_t i = 0; i < k->n; i++) {
                free(k->members[i].name);
                member_log_free(k->members[i].log);
        }
        free(k->members);
        return mfree(k);
}

const char *episode_logs_id(const struct episode_logs *k)
{
        return k->id;
}

const struct member_log *episode_logs_find(const struct episode_logs *k, const char *name)
{
        for (size_t i = 0; i < k->n; i++)
                if (streq(k->members[i].name, name))
                        return k->members[i].log;
        return NULL;
}
