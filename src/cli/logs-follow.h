/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * openenvctl logs --follow: a container's output as it comes. Polls
 * GET /logs?format=json every LOGS_FOLLOW_POLL_MS, each time from the last
 * answer's "next", pinned to the episode the first answer names (a reset
 * does not move it to the next episode's output); prints each line once,
 * whole. Ends with the output: exit 0 once an answer is "complete" (the
 * container's output reached EOF or its episode ended). SIGINT and SIGTERM
 * end it between two lines, 130 or 143, even while an answer is awaited.
 */
#include <stdbool.h>

#include "cli/unit-client.h"

#define LOGS_FOLLOW_POLL_MS 250

struct logs_follow {
        const char *container;
        const char *episode; /* NULL: the live (or last) episode's */
        const char *tail;    /* NULL: from the start; else the last N lines first */
        bool timestamps;     /* each line prefixed with its time and a space */
        bool json;           /* each line as the unit's JSON object, one per line */
};

/* Returns the exit code (docs/CLI.md). c's cancel_fd is set while it runs. */
int logs_follow(struct unit_client *c, const struct logs_follow *a);
