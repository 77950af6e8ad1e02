/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "unit/member-log.h"

#include <string.h>

#include "base/json-writer.h"
#include "base/limits.h"
#include "base/text-escape.h"
#include "base/util.h"

struct member_log *member_log_new(void)
{
        struct member_log *l = xcalloc(1, sizeof(*l));

        strbuf_init(&l->bytes);
        return l;
}

struct member_log *member_log_free(struct member_log *l)
{
        if (!l)
                return NULL;
        strbuf_release(&l->bytes);
        free(l->stamps);
        return mfree(l);
}

struct member_log *member_log_dup(const struct member_log *l)
{
        struct member_log *c = member_log_new();

        strbuf_add(&c->bytes, l->bytes.buf, l->bytes.len);
        c->dropped = l->dropped;
        c->closed = l->closed;
        c->n_stamps = c->alloc_stamps = l->n_stamps;
        if (l->n_stamps > 0) {
                c->stamps = xmalloc(l->n_stamps * sizeof(*c->stamps));
                memcpy(c->stamps, l->stamps, l->n_stamps * sizeof(*c->stamps));
        }
        return c;
}

/* Every second entry goes (the first stays: offset 0 always has a time).
 * A line whose entry went now reads the entry before it: an earlier line's
 * time, never a later one's. */
static void stamps_halve(struct member_log *l)
{
        size_t k = 0;

        for (size_t i = 0; i < l->n_stamps; i += 2)
                l->stamps[k++] = l->stamps[i];
        l->n_stamps = k;
}

/* The line starting at offset was read at now. */
static void stamp(struct member_log *l, size_t offset, usec_t now)
{
        /* Same time (or a clock stepped back) as the entry before: that
         * entry already answers for this line, and times never go down. */
        if (l->n_stamps > 0 && now <= l->stamps[l->n_stamps - 1].usec)
                return;
        if (l->n_stamps == MEMBER_LOG_MAX_STAMPS)
                stamps_halve(l);
        if (l->n_stamps == l->alloc_stamps) {
                /* Grown as lines come: a quiet container costs a few entries. */
                l->alloc_stamps =
                        MIN(MAX(l->alloc_stamps * 2, (size_t) 16), (size_t) MEMBER_LOG_MAX_STAMPS);
                l->stamps = xrealloc(l->stamps, l->alloc_stamps * sizeof(*l->stamps));
        }
        l->stamps[l->n_stamps++] = (struct member_log_stamp){ (uint32_t) offset, now };
}

void member_log_append(struct member_log *l, const void *buf, size_t n, usec_t now)
{
        size_t start = l->bytes.len;
        size_t room = start < MEMBER_LOG_MAX_BYTES ? MEMBER_LOG_MAX_BYTES - start : 0;
        size_t keep = MIN(room, n);
        const char *nl;

        strbuf_add(&l->bytes, buf, keep);
        l->dropped += n - keep;
        if (keep == 0)
                return;
        /* Every line starting in these bytes was read now; one entry for the
         * first answers for all of them (a later one would have the same
         * time). */
        if (start == 0 || l->bytes.buf[start - 1] == '\n')
                stamp(l, start, now);
        else if ((nl = memchr(buf, '\n', keep - 1)))
                stamp(l, start + (size_t) (nl - (const char *) buf) + 1, now);
}

void member_log_close(struct member_log *l)
{
        l->closed = true;
}

bool member_log_final(const struct member_log *l)
{
        return l->closed || l->bytes.len >= MEMBER_LOG_MAX_BYTES;
}

usec_t member_log_time_at(const struct member_log *l, size_t offset)
{
        size_t lo = 0, hi = l->n_stamps;

        /* The last entry at or before offset (the first is at 0). */
        while (hi - lo > 1) {
                size_t mid = lo + (hi - lo) / 2;
                if (l->stamps[mid].offset <= offset)
                        lo = mid;
                else
                        hi = mid;
        }
        return l->n_stamps > 0 ? l->stamps[lo].usec : 0;
}

/* Where the last `lines` lines of [from, to) start: just after the
 * lines-th newline back (a final newline ends the last line, it starts
 * none), else from. */
static size_t tail_start(const char *buf, size_t from, size_t to, unsigned lines)
{
        size_t p = to;

        if (p > from && buf[p - 1] == '\n')
                p--;
        for (; p > from; p--)
                if (buf[p - 1] == '\n' && --lines == 0)
                        return p;
        return from;
}

void member_log_select(const struct member_log *l, const struct member_log_query *q,
                       bool whole_lines, size_t *ret_offset, size_t *ret_next)
{
        const char *buf = l->bytes.buf;
        size_t len = l->bytes.len, from = q->since, to = len;

        /* Past the end: nothing yet (or ever); the reader stays where it is. */
        if (from >= len) {
                *ret_offset = *ret_next = from;
                return;
        }
        if (whole_lines && !member_log_final(l)) {
                const char *nl = memrchr(buf + from, '\n', len - from);
                to = nl ? (size_t) (nl - buf) + 1 : from;
        }
        if (q->tail > 0)
                from = tail_start(buf, from, to, q->tail);
        *ret_offset = from;
        *ret_next = to;
}

/* Calls fn for each line of [from, to): its bytes without the newline, and
 * whether it has none (the range ends within it). */
static void for_each_line(const struct member_log *l, size_t from, size_t to,
                          void (*fn)(const struct member_log *l, size_t at, size_t len,
                                     bool partial, void *userdata),
                          void *userdata)
{
        const char *buf = l->bytes.buf;

        while (from < to) {
                const char *nl = memchr(buf + from, '\n', to - from);
                size_t end = nl ? (size_t) (nl - buf) : to;

                fn(l, from, end - from, !nl, userdata);
                from = nl ? end + 1 : to;
        }
}

static void text_line(const struct member_log *l, size_t at, size_t len, bool partial,
                      void *userdata)
{
        struct strbuf *sb = userdata;
        char ts[TIMESTAMP_RFC3339_MAX];

        (void) partial;
        strbuf_adds(sb, format_timestamp_rfc3339(ts, member_log_time_at(l, at)));
        strbuf_addch(sb, ' ');
        text_escape_mem_append(sb, l->bytes.buf + at, len);
        strbuf_addch(sb, '\n');
}

char *member_log_text(const struct member_log *l, const struct member_log_query *q, size_t *ret_len)
{
        struct strbuf sb = STRBUF_INIT;
        size_t from, to;

        member_log_select(l, q, false, &from, &to);
        if (q->timestamps)
                for_each_line(l, from, to, text_line, &sb);
        else if (to > from) /* from may be past the end: no pointer there */
                strbuf_add(&sb, l->bytes.buf + from, to - from);
        if (l->dropped > 0)
                /* On a line of its own, never read as the container's. */
                strbuf_addf(&sb,
                            "%s[openenvd: output capped at %lu bytes; %llu more bytes dropped]\n",
                            sb.len > 0 && sb.buf[sb.len - 1] != '\n' ? "\n" : "",
                            (unsigned long) MEMBER_LOG_MAX_BYTES, (unsigned long long) l->dropped);
        return strbuf_detach(&sb, ret_len);
}

struct json_lines {
        struct jwriter w;
        struct strbuf text; /* one line escaped, reused for the next */
};

static void json_line(const struct member_log *l, size_t at, size_t len, bool partial,
                      void *userdata)
{
        struct json_lines *j = userdata;
        char ts[TIMESTAMP_RFC3339_MAX];

        /* Escaped first, so the text is one safe line whatever the reader
         * does with it; the writer then quotes it as JSON. */
        strbuf_reset(&j->text);
        text_escape_mem_append(&j->text, l->bytes.buf + at, len);
        jwriter_object_begin(&j->w);
        jwriter_kv_string(&j->w, "time", format_timestamp_rfc3339(ts, member_log_time_at(l, at)));
        jwriter_kv_string(&j->w, "text", j->text.buf);
        if (partial)
                jwriter_kv_bool(&j->w, "partial", true);
        jwriter_object_end(&j->w);
}

char *member_log_json(const struct member_log *l, const struct member_log_query *q,
                      const char *episode_id, const char *container)
{
        struct strbuf sb = STRBUF_INIT;
        struct json_lines j = { .text = STRBUF_INIT };
        size_t from, to;

        /* Written as it goes: a log of 128 Ki short lines would be as many
         * jansson objects, for one answer. */
        member_log_select(l, q, true, &from, &to);
        jwriter_init(&j.w, &sb);
        jwriter_object_begin(&j.w);
        jwriter_kv_string(&j.w, "episode_id", episode_id);
        jwriter_kv_string(&j.w, "container", container);
        jwriter_kv_uint(&j.w, "offset", from);
        jwriter_kv_uint(&j.w, "next", to);
        jwriter_kv_bool(&j.w, "complete", l->closed && to >= l->bytes.len);
        jwriter_kv_uint(&j.w, "dropped", l->dropped);
        jwriter_key(&j.w, "lines");
        jwriter_array_begin(&j.w);
        for_each_line(l, from, to, json_line, &j);
        jwriter_array_end(&j.w);
        jwriter_object_end(&j.w);
        strbuf_release(&j.text);
        return strbuf_detach(&sb, NULL);
}

char *member_log_tail_text(const struct member_log *l, const char *name, size_t max_lines)
{
        struct strbuf sb = STRBUF_INIT;
        const char *start = l->bytes.buf;
        const char *end = start + l->bytes.len;
        const char *p = end;
        size_t lines = 0;

        /* Back to the start of the max_lines-th line from the end. */
        while (p > start && (p[-1] == '\n' || p[-1] == '\r'))
                p--;
        end = p;
        while (p > start && lines < max_lines) {
                p--;
                if (*p == '\n' && ++lines == max_lines) {
                        p++;
                        break;
                }
        }
        for (const char *q = p; q < end;) {
                const char *nl = memchr(q, '\n', (size_t) (end - q));
                const char *le = nl ? nl : end;
                strbuf_addf(&sb, "%s| ", name);
                for (; q < le; q++) {
                        unsigned char c = (unsigned char) *q;
                        if (c < 0x20 || c == 0x7f)
                                strbuf_addf(&sb, "\\x%02x", c);
                        else
                                strbuf_add(&sb, q, 1);
                }
                strbuf_adds(&sb, "\n");
                q = nl ? nl + 1 : end;
        }
        return strbuf_detach(&sb, NULL);
}
