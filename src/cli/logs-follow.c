/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cli/logs-follow.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <jansson.h>

#include "base/exit-code.h"
#include "base/fd-util.h"
#include "base/log.h"
#include "base/text-escape.h"
#include "base/util.h"

/* Where a follower is: the episode it is pinned to (once an answer named
 * it) and the offset its next poll starts at. */
struct follow_state {
        char *episode; /* owned */
        long long next;
        bool first;
};

static char *poll_target(const struct logs_follow *a, const struct follow_state *st)
{
        /* The first poll asks for the tail; every later one goes on from
         * where the last ended, in the episode the first one named. */
        if (st->first)
                return xasprintf("/logs?format=json&container=%s%s%s%s%s", a->container,
                                 st->episode ? "&episode_id=" : "", st->episode ?: "",
                                 a->tail ? "&tail=" : "", a->tail ?: "");
        return xasprintf("/logs?format=json&container=%s&episode_id=%s&since=%lld", a->container,
                         st->episode, st->next);
}

/* One line for people, or the unit's object for machines. The unit
 * escaped the text already; escaping it again changes nothing there and
 * keeps a terminal safe from a unit that did not. */
static void print_line(const struct logs_follow *a, json_t *line)
{
        cleanup_free char *text = NULL, *time = NULL;

        if (a->json) {
                cleanup_free char *s = json_dumps(line, JSON_COMPACT);
                if (!s)
                        oom();
                puts(s);
                return;
        }
        text = text_escape(json_string_value(json_object_get(line, "text")) ?: "");
        time = text_escape(json_string_value(json_object_get(line, "time")) ?: "-");
        printf("%s%s%s\n", a->timestamps ? time : "", a->timestamps ? " " : "", text);
}

/* Prints an answer's lines and moves on; *ret_complete: it was the last.
 * Returns an exit code (an answer not understood: unavailable). */
static int take_answer(const struct logs_follow *a, struct follow_state *st,
                       const struct unit_answer *ans, bool *ret_complete)
{
        json_t *j = json_loadb(ans->body, ans->len, 0, NULL), *line;
        json_t *next = json_object_get(j, "next");
        const char *episode = json_string_value(json_object_get(j, "episode_id"));
        size_t i;

        if (!json_is_integer(next) || !episode || !json_is_array(json_object_get(j, "lines"))) {
                log_error("/logs: the unit's answer is not what a follower reads");
                json_decref(j);
                return EXIT_CODE_UNAVAILABLE;
        }
        json_array_foreach(json_object_get(j, "lines"), i, line) print_line(a, line);
        fflush(stdout);
        if (!st->episode)
                st->episode = xstrdup(episode);
        st->next = json_integer_value(next);
        st->first = false;
        *ret_complete = json_is_true(json_object_get(j, "complete"));
        if (*ret_complete && json_integer_value(json_object_get(j, "dropped")) > 0)
                log_info("the unit kept the output's first %lld bytes; %lld more were dropped",
                         st->next, json_integer_value(json_object_get(j, "dropped")));
        json_decref(j);
        return EXIT_CODE_OK;
}

/* The signal that stopped us, as an exit code. */
static int interrupted(int sfd)
{
        struct signalfd_siginfo si = {};
        bool term = read(sfd, &si, sizeof(si)) == (ssize_t) sizeof(si) && si.ssi_signo == SIGTERM;

        return EXIT_CODE_SIGNAL(term ? SIGTERM : SIGINT);
}

static int follow(struct unit_client *c, const struct logs_follow *a, int sfd)
{
        struct follow_state st = { .episode = a->episode ? xstrdup(a->episode) : NULL,
                                   .first = true };
        int rc;

        for (;;) {
                cleanup_free char *target = poll_target(a, &st);
                struct unit_answer ans;
                struct pollfd p = { .fd = sfd, .events = POLLIN };
                bool complete = false;

                rc = unit_client_fetch(c, target, &ans);
                if (rc == EXIT_CODE_OK)
                        rc = take_answer(a, &st, &ans, &complete);
                unit_answer_done(&ans);
                if (rc == -ECANCELED) {
                        rc = interrupted(sfd);
                        break;
                }
                if (rc != EXIT_CODE_OK || complete)
                        break;
                /* The wait between polls is where a signal usually comes. */
                if (poll(&p, 1, LOGS_FOLLOW_POLL_MS) > 0) {
                        rc = interrupted(sfd);
                        break;
                }
        }
        free(st.episode);
        return rc;
}

int logs_follow(struct unit_client *c, const struct logs_follow *a)
{
        sigset_t mask;
        int sfd, rc;

        /* SIGINT and SIGTERM become a readable fd: both the wait between
         * polls and an answer awaited give up on it, and we exit between
         * two whole lines. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0 ||
            (sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
                log_error_errno(-errno, "signals: %m");
                return EXIT_CODE_UNAVAILABLE;
        }
        c->cancel_fd = sfd;
        rc = follow(c, a, sfd);
        c->cancel_fd = -EBADF;
        safe_close(sfd);
        return rc;
}
