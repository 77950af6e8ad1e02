/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A container's captured output (its stdout and stderr, one stream), as
 * GET /logs serves it. Every byte of it is the container's: attacker-made.
 *
 *  - bytes: the stream's first MEMBER_LOG_MAX_BYTES; what came after is only
 *    counted (dropped).
 *  - times: for each line, the CLOCK_REALTIME time at which the daemon read
 *    its first byte, kept as an index of (offset, time) entries, at most
 *    MEMBER_LOG_MAX_STAMPS: a line's time is that of the last entry at or
 *    before its offset. Lines read in one read() share a time, so they share
 *    an entry. When the index is full, every second entry goes: past that, a
 *    line may show the time of an earlier line, never a later one. Times
 *    never go down along the stream (a clock stepped back shows the earlier
 *    line's time until it passes it). Memory stays bounded whatever is
 *    written: 256 Ki one-byte lines cost what 4096 do.
 *  - closed: no byte can come any more (the container's output reached EOF,
 *    or its episode stopped it).
 *
 * Serving (member_log_select() and the two renderers) cuts the stream at a
 * byte offset, `since`, and says where the next read starts, `next`: the
 * ranges [offset, next) of successive reads, each started at the last one's
 * next, are the stream, with no byte twice and none missing. A line whose
 * newline has not been read yet is held back (next stays at its start)
 * until it ends or the stream is final (closed, or full), so a follower
 * never gets half a line and then its rest as a line of its own.
 *
 * Ownership: a member_log is its owner's (the member while it runs, then
 * its episode, then the unit's history of ended episodes); renderers
 * return new strings.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/macro.h"
#include "base/strbuf.h"
#include "base/time-util.h"

struct member_log_stamp {
        uint32_t offset; /* of a line's first byte */
        usec_t usec;     /* CLOCK_REALTIME when it was read */
};

struct member_log {
        struct strbuf bytes;             /* the first MEMBER_LOG_MAX_BYTES of the stream */
        uint64_t dropped;                /* bytes past them */
        struct member_log_stamp *stamps; /* owned: offsets rising, times never falling */
        size_t n_stamps, alloc_stamps;
        bool closed;
};

struct member_log *member_log_new(void);
struct member_log *member_log_free(struct member_log *l);
DEFINE_CLEANUP_FUNC(struct member_log, member_log_free);
/* A copy (the bytes, the times, dropped and closed). */
struct member_log *member_log_dup(const struct member_log *l);

/* n bytes read at now (CLOCK_REALTIME); what is past MEMBER_LOG_MAX_BYTES is
 * counted, not kept. */
void member_log_append(struct member_log *l, const void *buf, size_t n, usec_t now);
/* No more bytes will come. */
void member_log_close(struct member_log *l);
/* True when the captured stream cannot grow: closed, or full. */
bool member_log_final(const struct member_log *l);
/* The time of the line holding byte offset (0 for an empty log). */
usec_t member_log_time_at(const struct member_log *l, size_t offset);

/* What one read of the log asks. */
struct member_log_query {
        size_t since;    /* a byte offset of the stream */
        unsigned tail;   /* > 0: only the last tail lines of what is served */
        bool timestamps; /* text: each line prefixed with its time and a space */
};

/* The bytes [*ret_offset, *ret_next) that q serves; whole_lines: a line not
 * ended yet is held back (JSON, for followers), else served as it is. */
void member_log_select(const struct member_log *l, const struct member_log_query *q,
                       bool whole_lines, size_t *ret_offset, size_t *ret_next);

/*
 * GET /logs as text: the bytes as captured (timestamps off), or each line
 * "2026-12-06T19:19:12.123456Z LINE\n" with LINE escaped (text_escape():
 * a control byte cannot hide the time or start a line of its own). A
 * marker line follows when bytes were dropped. New string of *ret_len bytes.
 */
char *member_log_text(const struct member_log *l, const struct member_log_query *q,
                      size_t *ret_len);
/*
 * GET /logs?format=json: {"episode_id", "container", "offset", "next",
 * "complete", "dropped", "lines": [{"time", "text"[, "partial": true]}]},
 * each line's text escaped as text_escape() does, without its newline;
 * "partial" marks a last line that has none (the stream ended within it).
 * complete: closed, and next is the end: a follower stops. New string.
 */
char *member_log_json(const struct member_log *l, const struct member_log_query *q,
                      const char *episode_id, const char *container);

/* The last max_lines lines, each "NAME| line\n" with control characters
 * escaped, for quoting in the daemon's log and in a verdict; "" if none. */
char *member_log_tail_text(const struct member_log *l, const char *name, size_t max_lines);
