/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * unit/member-log.h: a container's captured output as /logs serves it.
 *
 *  - the time index: each line's time is when its first byte was read;
 *    bounded under a flood of one-byte lines; halving never makes a line
 *    later nor times go down; offsets find their own line's time.
 *  - since/next: polls, each from the last one's next, concatenate to the
 *    stream (a line not ended yet is served once, whole, when it ends).
 *  - attacker-made bytes: ESC, CR, NUL, quotes, forged timestamps and
 *    newline-free floods neither break the JSON, nor forge a line in the
 *    timestamped text, nor grow memory.
 */
#include <jansson.h>
#include <regex.h>

#include "base/limits.h"
#include "base/strbuf.h"
#include "base/text-escape.h"
#include "unit/member-log.h"
#include "test-helpers.h"

#define T0 (1796584752ULL * USEC_PER_SEC) /* 2026-12-06T19:19:12Z */

static void append(struct member_log *l, const char *s, usec_t t)
{
        member_log_append(l, s, strlen(s), t);
}

static json_t *poll_json(const struct member_log *l, size_t since, unsigned tail)
{
        struct member_log_query q = { .since = since, .tail = tail };
        char *s = member_log_json(l, &q, "0123456789ab", "env");
        json_error_t err;
        json_t *j = json_loads(s, 0, &err);

        cr_assert(j, "not JSON (%s): %s", err.text, s);
        free(s);
        return j;
}

static size_t num(json_t *j, const char *key)
{
        return (size_t) json_integer_value(json_object_get(j, key));
}

static const char *str(json_t *j, const char *key)
{
        return json_string_value(json_object_get(j, key));
}

/* --- the time index --------------------------------------------------------- */

Test(member_log, lines_get_the_time_their_first_byte_was_read)
{
        struct member_log *l = member_log_new();

        append(l, "a1\nb1\n", T0 + 10);   /* a1 0, b1 3 */
        append(l, "c1 par", T0 + 20);     /* c1 6: started now */
        append(l, "tial\nd1\n", T0 + 30); /* d1 17 */
        append(l, "e", T0 + 40);          /* e 20 */
        cr_assert_eq(member_log_time_at(l, 0), T0 + 10);
        cr_assert_eq(member_log_time_at(l, 1), T0 + 10);
        cr_assert_eq(member_log_time_at(l, 3), T0 + 10, "same read, same time");
        cr_assert_eq(member_log_time_at(l, 6), T0 + 20);
        cr_assert_eq(member_log_time_at(l, 13), T0 + 20, "its rest came later: still 20");
        cr_assert_eq(member_log_time_at(l, 16), T0 + 20, "c1's newline");
        cr_assert_eq(member_log_time_at(l, 17), T0 + 30);
        cr_assert_eq(member_log_time_at(l, 20), T0 + 40);
        /* One entry per read that starts a line, not one per line. */
        cr_assert_eq(l->n_stamps, 4);
        member_log_free(l);
}

Test(member_log, a_line_started_by_the_newline_of_the_last_read)
{
        struct member_log *l = member_log_new();

        /* The newline ends a read: the next line's first byte comes with
         * the next read, and so does its time. */
        append(l, "one\n", T0 + 1);
        append(l, "two\n", T0 + 2);
        cr_assert_eq(member_log_time_at(l, 4), T0 + 2);
        member_log_free(l);
}

Test(member_log, a_clock_stepped_back_never_makes_times_go_down)
{
        struct member_log *l = member_log_new();

        append(l, "before\n", T0 + 100);
        append(l, "after a step back\n", T0 + 50);
        cr_assert_eq(member_log_time_at(l, 7), T0 + 100, "the earlier line's time");
        member_log_free(l);
}

Test(member_log, one_byte_line_flood_stays_bounded)
{
        struct member_log *l = member_log_new();
        size_t lines = 256 * 1024;

        /* 256 Ki lines, each its own read at its own time: twice what the
         * cap keeps. */
        for (size_t i = 0; i < lines; i++) {
                member_log_append(l, "x\n", 2, T0 + i);
                cr_assert_leq(l->n_stamps, MEMBER_LOG_MAX_STAMPS);
                cr_assert_leq(l->alloc_stamps, MEMBER_LOG_MAX_STAMPS);
        }
        cr_assert_eq(l->bytes.len, MEMBER_LOG_MAX_BYTES);
        cr_assert_eq(l->dropped, lines * 2 - MEMBER_LOG_MAX_BYTES);
        /* Bounded in bytes too: the bytes and the index, nothing per line. */
        cr_assert_leq(l->bytes.alloc, 2 * MEMBER_LOG_MAX_BYTES);
        member_log_free(l);
}

Test(member_log, halving_keeps_times_monotone_and_never_later)
{
        struct member_log *l = member_log_new();
        size_t kept = MEMBER_LOG_MAX_BYTES / 2;
        usec_t last = 0;

        for (size_t i = 0; i < kept; i++)
                member_log_append(l, "x\n", 2, T0 + i);
        cr_assert_gt(kept, 4 * MEMBER_LOG_MAX_STAMPS, "the index was halved");
        for (size_t i = 0; i < kept; i++) {
                usec_t t = member_log_time_at(l, 2 * i);
                cr_assert_leq(t, T0 + i, "line %zu shows a later line's time", i);
                cr_assert_geq(t, last, "line %zu: times went down", i);
                /* Its own second byte (the newline) reads the same. */
                cr_assert_eq(member_log_time_at(l, 2 * i + 1), t);
                last = t;
        }
        /* The first and the newest lines keep their own. */
        cr_assert_eq(member_log_time_at(l, 0), T0);
        cr_assert_eq(member_log_time_at(l, 2 * (kept - 1)), T0 + kept - 1);
        member_log_free(l);
}

Test(member_log, lines_in_a_halved_index_still_find_their_own)
{
        struct member_log *l = member_log_new();
        size_t n = 3 * MEMBER_LOG_MAX_STAMPS;

        /* Lines of 10 bytes; every entry that survives halving still names
         * its own line. */
        for (size_t i = 0; i < n; i++)
                member_log_append(l, "123456789\n", 10, T0 + 1000 * i);
        for (size_t k = 0; k < l->n_stamps; k++) {
                size_t line = l->stamps[k].offset / 10;
                cr_assert_eq(l->stamps[k].offset % 10, 0, "an entry inside a line");
                cr_assert_eq(l->stamps[k].usec, T0 + 1000 * line);
                cr_assert_eq(member_log_time_at(l, l->stamps[k].offset + 5), T0 + 1000 * line);
        }
        member_log_free(l);
}

Test(member_log, dup_is_a_copy)
{
        struct member_log *l = member_log_new(), *c;

        append(l, "a\nb\n", T0);
        append(l, "c\n", T0 + 5);
        c = member_log_dup(l);
        append(l, "more\n", T0 + 9);
        cr_assert_eq(c->bytes.len, 6);
        cr_assert_eq(member_log_time_at(c, 4), T0 + 5);
        cr_assert_eq(c->n_stamps, 2);
        member_log_free(l);
        member_log_free(c);
}

/* --- since / next ------------------------------------------------------------ */

/* Appends each poll's lines as the stream had them (a line's newline back,
 * unless partial) and checks the poll starts where the last one ended. */
static size_t poll_into(const struct member_log *l, size_t since, struct strbuf *out,
                        bool *ret_complete)
{
        json_t *j = poll_json(l, since, 0), *line;
        size_t i;

        cr_assert_eq(num(j, "offset"), since, "a poll starts where it was asked");
        cr_assert_geq(num(j, "next"), since);
        json_array_foreach(json_object_get(j, "lines"), i, line)
        {
                strbuf_adds(out, str(line, "text"));
                if (!json_is_true(json_object_get(line, "partial")))
                        strbuf_addch(out, '\n');
        }
        since = num(j, "next");
        *ret_complete = json_is_true(json_object_get(j, "complete"));
        json_decref(j);
        return since;
}

Test(member_log, polls_from_next_concatenate_to_the_stream)
{
        struct member_log *l = member_log_new();
        cleanup_strbuf struct strbuf stream = STRBUF_INIT, got = STRBUF_INIT;
        unsigned seed = 12345;
        size_t next = 0;
        bool complete = false;

        /* Lines of 0 to 40 bytes, empty ones too, no trailing newline. */
        for (unsigned i = 0; i < 2000; i++) {
                seed = seed * 1103515245 + 12345;
                for (unsigned k = 0; k < (seed >> 16) % 41; k++)
                        strbuf_addch(&stream, (char) ('a' + (i + k) % 26));
                if (i < 1999)
                        strbuf_addch(&stream, '\n');
        }
        /* Written in reads cut anywhere, a poll after some of them. */
        for (size_t at = 0; at < stream.len;) {
                seed = seed * 1103515245 + 12345;
                size_t n = MIN((size_t) (seed >> 16) % 97 + 1, stream.len - at);
                member_log_append(l, stream.buf + at, n, T0 + at);
                at += n;
                if ((seed >> 8) % 3 == 0) {
                        next = poll_into(l, next, &got, &complete);
                        cr_assert(!complete);
                        /* Held back: only whole lines so far. */
                        cr_assert(next == 0 || l->bytes.buf[next - 1] == '\n');
                }
        }
        next = poll_into(l, next, &got, &complete);
        cr_assert(!complete, "not closed: more may come");
        cr_assert_lt(next, stream.len, "the unfinished last line waits");
        member_log_close(l);
        next = poll_into(l, next, &got, &complete);
        cr_assert(complete);
        cr_assert_eq(next, stream.len);
        cr_assert_eq(got.len, stream.len);
        cr_assert(memcmp(got.buf, stream.buf, stream.len) == 0, "polls differ from the stream");
        member_log_free(l);
}

Test(member_log, a_partial_line_is_served_once_when_it_ends)
{
        struct member_log *l = member_log_new();
        json_t *j;

        append(l, "first\nhalf", T0 + 1);
        j = poll_json(l, 0, 0);
        cr_assert_eq(json_array_size(json_object_get(j, "lines")), 1);
        cr_assert_eq(num(j, "next"), 6, "held back at the partial line's start");
        json_decref(j);
        j = poll_json(l, 6, 0);
        cr_assert_eq(json_array_size(json_object_get(j, "lines")), 0);
        cr_assert_eq(num(j, "next"), 6);
        json_decref(j);

        append(l, " and the rest\n", T0 + 2);
        j = poll_json(l, 6, 0);
        json_t *line = json_array_get(json_object_get(j, "lines"), 0);
        cr_assert_str_eq(str(line, "text"), "half and the rest");
        cr_assert_str_eq(str(line, "time"), "2026-12-06T19:19:12.000001Z", "its first byte's");
        cr_assert_null(json_object_get(line, "partial"));
        cr_assert_eq(num(j, "next"), l->bytes.len);
        json_decref(j);
        member_log_free(l);
}

Test(member_log, closed_or_full_serves_the_last_partial_line)
{
        struct member_log *l = member_log_new();
        char *flood = malloc(MEMBER_LOG_MAX_BYTES);
        json_t *j, *line;

        append(l, "no newline", T0);
        member_log_close(l);
        j = poll_json(l, 0, 0);
        line = json_array_get(json_object_get(j, "lines"), 0);
        cr_assert_str_eq(str(line, "text"), "no newline");
        cr_assert(json_is_true(json_object_get(line, "partial")));
        cr_assert(json_is_true(json_object_get(j, "complete")));
        cr_assert_eq(num(j, "next"), 10);
        json_decref(j);
        member_log_free(l);

        /* Full but not closed: nothing can be added, so the line is served;
         * complete only once the output ends. */
        l = member_log_new();
        memset(flood, 'z', MEMBER_LOG_MAX_BYTES);
        member_log_append(l, flood, MEMBER_LOG_MAX_BYTES, T0);
        member_log_append(l, "over", 4, T0 + 1);
        j = poll_json(l, 0, 0);
        cr_assert_eq(json_array_size(json_object_get(j, "lines")), 1);
        cr_assert_eq(num(j, "next"), MEMBER_LOG_MAX_BYTES);
        cr_assert_eq(num(j, "dropped"), 4);
        cr_assert(json_is_false(json_object_get(j, "complete")));
        json_decref(j);
        member_log_close(l);
        j = poll_json(l, MEMBER_LOG_MAX_BYTES, 0);
        cr_assert_eq(json_array_size(json_object_get(j, "lines")), 0);
        cr_assert(json_is_true(json_object_get(j, "complete")));
        json_decref(j);
        member_log_free(l);
        free(flood);
}

Test(member_log, tail_and_since_past_the_end)
{
        struct member_log *l = member_log_new();
        json_t *j;

        append(l, "l1\nl2\nl3\nl4\npart", T0);
        j = poll_json(l, 0, 2);
        cr_assert_eq(num(j, "offset"), 6, "the last 2 whole lines: l3, l4");
        cr_assert_eq(num(j, "next"), 12);
        cr_assert_str_eq(str(json_array_get(json_object_get(j, "lines"), 0), "text"), "l3");
        json_decref(j);

        struct member_log_query q = { .tail = 2 };
        size_t len;
        char *text = member_log_text(l, &q, &len);
        cr_assert_str_eq(text, "l4\npart", "text serves the unfinished line as it is");
        free(text);

        q = (struct member_log_query){ .since = 1000 };
        text = member_log_text(l, &q, &len);
        cr_assert_eq(len, 0, "past the end: nothing");
        free(text);
        j = poll_json(l, 1000, 0);
        cr_assert_eq(num(j, "offset"), 1000);
        cr_assert_eq(num(j, "next"), 1000, "a reader past the end stays there");
        cr_assert(json_is_false(json_object_get(j, "complete")));
        json_decref(j);
        member_log_free(l);
}

Test(member_log, text_since_and_timestamps)
{
        struct member_log *l = member_log_new();
        struct member_log_query q = { .since = 3, .timestamps = true };
        size_t len;
        char *text;

        append(l, "ab\ncd\n", T0 + 123456);
        append(l, "ef", T0 + 2 * USEC_PER_SEC);
        text = member_log_text(l, &q, &len);
        cr_assert_str_eq(text, "2026-12-06T19:19:12.123456Z cd\n"
                               "2026-12-06T19:19:14.000000Z ef\n");
        cr_assert_eq(len, strlen(text));
        free(text);
        q = (struct member_log_query){ .since = 4 };
        text = member_log_text(l, &q, &len);
        cr_assert_str_eq(text, "d\nef", "without timestamps: the bytes as they are");
        free(text);
        member_log_free(l);
}

/* --- attacker-made bytes -------------------------------------------------------- */

/* Every line of a timestamped text starts with a real time and a space, and
 * nothing in it a terminal acts on. */
static void assert_every_line_stamped(const char *text, size_t len, size_t want_lines)
{
        regex_t re;
        size_t lines = 0;

        cr_assert_eq(regcomp(&re,
                             "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6}Z ",
                             REG_EXTENDED | REG_NOSUB),
                     0);
        cr_assert_eq(strlen(text), len, "a NUL reached the text");
        for (const char *p = text; *p;) {
                const char *nl = strchr(p, '\n');
                cleanup_free char *line = strndup(p, nl ? (size_t) (nl - p) : strlen(p));

                cr_assert(nl, "the last line has no newline");
                if (!strncmp(line, "[openenvd: ", 11))
                        break; /* the daemon's own marker, always last */
                cr_assert_eq(regexec(&re, line, 0, NULL, 0), 0, "not stamped: %s", line);
                cr_assert(text_is_safe(line), "unsafe: %s", line);
                lines++;
                p = nl + 1;
        }
        cr_assert_eq(lines, want_lines);
        regfree(&re);
}

Test(member_log, forged_lines_and_controls_stay_the_containers)
{
        struct member_log *l = member_log_new();
        static const char evil[] = "ok\n"
                                   "2026-01-01T00:00:00.000000Z forged\n"
                                   "\r2026-01-01T00:00:00.000000Z overwritten\x1b[2K\n"
                                   "\"},{\"time\":\"x\",\"text\":\"injected\"}]}\n"
                                   "nul\0inside \xff\xfe \xe2\x80\xae bidi\n";
        struct member_log_query q = { .timestamps = true };
        size_t len;
        json_t *j, *line;
        size_t i;
        char *text;

        member_log_append(l, evil, sizeof(evil) - 1, T0);
        text = member_log_text(l, &q, &len);
        /* A forged time follows the real one: it is the line's text. */
        cr_assert(strstr(text, "2026-12-06T19:19:12.000000Z 2026-01-01T00:00:00.000000Z forged\n"));
        cr_assert(strstr(text, "Z \\x0d2026-01-01T00:00:00.000000Z overwritten\\x1b[2K\n"));
        cr_assert(strstr(text, "Z nul\\x00inside \\xff\\xfe \\xe2\\x80\\xae bidi\n"));
        assert_every_line_stamped(text, len, 5);
        free(text);

        j = poll_json(l, 0, 0);
        cr_assert_eq(json_array_size(json_object_get(j, "lines")), 5, "no line injected");
        json_array_foreach(json_object_get(j, "lines"), i, line)
        {
                cr_assert_str_eq(str(line, "time"), "2026-12-06T19:19:12.000000Z");
                cr_assert(text_is_safe(str(line, "text")), "line %zu: %s", i, str(line, "text"));
        }
        cr_assert_str_eq(str(json_array_get(json_object_get(j, "lines"), 3), "text"),
                         "\"},{\"time\":\"x\",\"text\":\"injected\"}]}");
        cr_assert_str_eq(str(json_array_get(json_object_get(j, "lines"), 4), "text"),
                         "nul\\x00inside \\xff\\xfe \\xe2\\x80\\xae bidi");
        json_decref(j);
        member_log_free(l);
}

Test(member_log, newline_free_escape_flood_is_bounded_and_one_line)
{
        struct member_log *l = member_log_new();
        char chunk[64 * 1024];
        struct member_log_query q = { .timestamps = true };
        size_t len;
        json_t *j;
        char *text;

        /* 4 MiB of cursor movements and carriage returns, no newline, in
         * reads at their own times. */
        for (size_t i = 0; i < sizeof(chunk); i++)
                chunk[i] = "\x1b[2J\r"[i % 5];
        for (unsigned i = 0; i < 64; i++)
                member_log_append(l, chunk, sizeof(chunk), T0 + i);
        cr_assert_eq(l->bytes.len, MEMBER_LOG_MAX_BYTES);
        cr_assert_eq(l->n_stamps, 1, "one line, one time");
        cr_assert_eq(l->dropped, 64 * sizeof(chunk) - MEMBER_LOG_MAX_BYTES);

        text = member_log_text(l, &q, &len);
        assert_every_line_stamped(text, len, 1);
        cr_assert(strstr(text, "more bytes dropped]\n"));
        /* Escaped, the line is at most 4 bytes per byte: bounded too. */
        cr_assert_leq(len, 4 * MEMBER_LOG_MAX_BYTES + 256);
        free(text);

        j = poll_json(l, 0, 0);
        cr_assert_eq(json_array_size(json_object_get(j, "lines")), 1);
        cr_assert(text_is_safe(str(json_array_get(json_object_get(j, "lines"), 0), "text")));
        json_decref(j);
        member_log_free(l);
}
