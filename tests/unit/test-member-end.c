/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Who ended a member (src/unit/member-end.c), one case per row of its rule:
 * the init's signal and the leaf's counters decide, and only the causes
 * code inside a container can have made are its zone's.
 */
#include <signal.h>
#include <string.h>

#include "base/util.h"
#include "test-helpers.h"
#include "unit/member-end.h"

static const struct cgroup_stats quiet = { 0 };
static const struct cgroup_stats own_oom = { .oom_kills = 1, .memory_max_events = 3 };
static const struct cgroup_stats host_oom = { .oom_kills = 1 };
static const struct cgroup_stats forks_refused = { .pids_max_events = 2 };

Test(member_end, an_exit_or_a_principal_killed_inside_is_its_own)
{
        cr_expect_eq(member_end_of(&quiet, 0), MEMBER_END_INSIDE);
        cr_expect_eq(member_end_of(NULL, 0), MEMBER_END_INSIDE, "leaf unreadable");
        cr_expect(member_end_is_its_own(MEMBER_END_INSIDE));
}

Test(member_end, an_init_killed_by_sigkill_was_killed_from_outside)
{
        cr_expect_eq(member_end_of(&quiet, SIGKILL), MEMBER_END_OUTSIDE_SIGNAL);
        cr_expect_eq(member_end_of(NULL, SIGKILL), MEMBER_END_OUTSIDE_SIGNAL);
        /* A refused fork kills no init: the signal still came from outside. */
        cr_expect_eq(member_end_of(&forks_refused, SIGKILL), MEMBER_END_OUTSIDE_SIGNAL);
        cr_expect(!member_end_is_its_own(MEMBER_END_OUTSIDE_SIGNAL));
}

Test(member_end, an_init_dead_of_another_signal_crashed)
{
        cr_expect_eq(member_end_of(&quiet, SIGSEGV), MEMBER_END_INIT_CRASHED);
        cr_expect(!member_end_is_its_own(MEMBER_END_INIT_CRASHED));
}

Test(member_end, the_oom_killer_at_its_own_limit_is_its_own)
{
        cr_expect_eq(member_end_of(&own_oom, 0), MEMBER_END_MEMORY_LIMIT);
        /* The OOM killer may pick the init itself. */
        cr_expect_eq(member_end_of(&own_oom, SIGKILL), MEMBER_END_MEMORY_LIMIT);
        cr_expect(member_end_is_its_own(MEMBER_END_MEMORY_LIMIT));
}

Test(member_end, the_oom_killer_without_its_limit_reached_is_the_hosts)
{
        cr_expect_eq(member_end_of(&host_oom, 0), MEMBER_END_HOST_OOM);
        cr_expect_eq(member_end_of(&host_oom, SIGKILL), MEMBER_END_HOST_OOM);
        cr_expect(!member_end_is_its_own(MEMBER_END_HOST_OOM));
}

Test(member_end, a_refused_fork_is_its_pids_limit)
{
        struct cgroup_stats both = { .oom_kills = 1, .memory_max_events = 1, .pids_max_events = 1 };

        cr_expect_eq(member_end_of(&forks_refused, 0), MEMBER_END_PIDS_LIMIT);
        cr_expect(member_end_is_its_own(MEMBER_END_PIDS_LIMIT));
        /* The OOM kill ended it; the refused fork was on the way there. */
        cr_expect_eq(member_end_of_limits(&both), MEMBER_END_MEMORY_LIMIT);
}

Test(member_end, each_cause_has_a_name_and_words)
{
        for (int e = 0; e < _MEMBER_END_MAX; e++) {
                cleanup_free char *t = member_end_text(e, "was killed by signal 9 (KILL)");
                cr_expect(member_end_to_string(e), "cause %d has a name", e);
                cr_expect(strstr(t, "was killed by signal 9 (KILL)"), "%s", t);
        }
        cleanup_free char *host = member_end_text(MEMBER_END_HOST_OOM, "x");
        cr_expect(strstr(host, "host's OOM killer"), "%s", host);
}

Test(member_end, a_status_in_words)
{
        cleanup_free char *killed = member_status_text(128 + 9);
        cleanup_free char *exited = member_status_text(3);

        cr_expect_str_eq(killed, "was killed by signal 9 (KILL)");
        cr_expect_str_eq(exited, "exited with status 3");
        cr_expect_eq(member_status_signal(128 + 9), 9);
        cr_expect_eq(member_status_signal(128), 0, "128 is an exit status");
        cr_expect_eq(member_status_signal(0), 0);
}
