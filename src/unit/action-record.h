/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The episode's own record of the actions sent on the unit's port and by
 * harnesses: what a grader replays instead of trusting the env's answer
 * (the env shares the agent zone with agent code; a game's reward it
 * computes is the agent zone's claim). One JSON object per line:
 *
 *   {"n": 1, "actions": 1, "via": "step", "at": 1796585027.9468, "message": {...}}
 *
 * n is the count of actions before it plus one (the daemon's own count,
 * OPENENVD_ACTIONS, is the sum of "actions"); via is how it came (step: POST
 * /step; ws: a /ws message; mcp: a POST /mcp or a /mcp WebSocket message;
 * harness: a harness's MCP call); message is the client's JSON, parsed and
 * written again by the daemon (duplicate keys refused, valid UTF-8), or
 * null with "unread" saying why (over ACTION_RECORD_MAX_MESSAGE bytes, cut
 * short, not JSON). Bounded: past ACTION_RECORD_MAX_BYTES no line is kept;
 * a last line {"dropped": N} says how many actions went unrecorded.
 *
 * Ownership: the record owns its text; action_record_done() frees it.
 */
#include <stdint.h>

#include "base/strbuf.h"

struct action_record {
        struct strbuf lines;
        uint64_t actions; /* recorded or not */
        uint64_t dropped; /* actions past the byte bound */
};

void action_record_done(struct action_record *r);
/* n actions in one message (data NULL: its bytes were not seen whole). */
void action_record_add(struct action_record *r, unsigned n, const char *via, const char *data,
                       size_t len, uint64_t at_usec);
/* The record as a file's contents (with the {"dropped"} line); new string. */
char *action_record_text(const struct action_record *r, size_t *ret_len);
/* Writes it to dir_fd/name (a daemon-private directory), replacing what
 * was there at once (a reader sees the old or the new, never half). */
int action_record_write(const struct action_record *r, int dir_fd, const char *name);
