/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "unit/member-end.h"

#include <signal.h>
#include <string.h>

#include "base/string-table.h"
#include "base/util.h"

static const char *const member_end_table[_MEMBER_END_MAX] = {
        [MEMBER_END_INSIDE] = "inside",
        [MEMBER_END_MEMORY_LIMIT] = "memory_limit",
        [MEMBER_END_PIDS_LIMIT] = "pids_limit",
        [MEMBER_END_HOST_OOM] = "host_oom",
        [MEMBER_END_OUTSIDE_SIGNAL] = "outside_signal",
        [MEMBER_END_INIT_CRASHED] = "init_crashed",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(member_end, enum member_end);

int member_status_signal(int status)
{
        return status > 128 && status < 128 + 65 ? status - 128 : 0;
}

char *member_status_text(int status)
{
        int sig = member_status_signal(status);

        if (sig)
                return xasprintf("was killed by signal %d (%s)", sig, sigabbrev_np(sig) ?: "?");
        return xasprintf("exited with status %d", status);
}

enum member_end member_end_of_limits(const struct cgroup_stats *st)
{
        /* The OOM killer first: it is what ended the member; a refused
         * fork on the way there is a symptom. */
        if (st->oom_kills > 0)
                return st->memory_max_events > 0 ? MEMBER_END_MEMORY_LIMIT : MEMBER_END_HOST_OOM;
        if (st->pids_max_events > 0)
                return MEMBER_END_PIDS_LIMIT;
        return MEMBER_END_INSIDE;
}

enum member_end member_end_of(const struct cgroup_stats *st, int init_signal)
{
        enum member_end e = st ? member_end_of_limits(st) : MEMBER_END_INSIDE;

        /* The OOM killer may pick the init too; a refused fork kills none. */
        if (init_signal == 0 || e == MEMBER_END_MEMORY_LIMIT || e == MEMBER_END_HOST_OOM)
                return e;
        return init_signal == SIGKILL ? MEMBER_END_OUTSIDE_SIGNAL : MEMBER_END_INIT_CRASHED;
}

bool member_end_is_its_own(enum member_end e)
{
        return e != MEMBER_END_HOST_OOM && e != MEMBER_END_OUTSIDE_SIGNAL &&
               e != MEMBER_END_INIT_CRASHED;
}

char *member_end_text(enum member_end e, const char *how)
{
        switch (e) {
        case MEMBER_END_MEMORY_LIMIT:
                return xasprintf("exhausted its memory (%s; the OOM killer at its own limit)", how);
        case MEMBER_END_PIDS_LIMIT:
                return xasprintf("hit its pids limit (%s)", how);
        case MEMBER_END_HOST_OOM:
                return xasprintf("%s by the host's OOM killer (its own memory limit was never "
                                 "reached: the host, or a limit above the unit, ran out)",
                                 how);
        case MEMBER_END_OUTSIDE_SIGNAL:
                return xasprintf("%s from outside its container (its init got the signal, "
                                 "which nothing inside can send: an operator or the host)",
                                 how);
        case MEMBER_END_INIT_CRASHED:
                return xasprintf("%s: its init, openenvd-shim, crashed", how);
        default:
                return xstrdup(how);
        }
}
