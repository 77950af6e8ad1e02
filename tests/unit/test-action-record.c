/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The episode's record of actions (src/unit/action-record.c): what a grader
 * replays. Agent-sent bytes in, the daemon's own JSON out, bounded.
 */
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/limits.h"
#include "base/util.h"
#include "test-helpers.h"
#include "unit/action-record.h"

/* The record's lines, parsed; asserts each is one JSON object. */
static json_t *lines_of(const struct action_record *r)
{
        size_t len;
        cleanup_free char *text = action_record_text(r, &len);
        json_t *all = json_array();
        char *save = NULL;

        cr_assert(len == 0 || text[len - 1] == '\n', "lines end with a newline");
        for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                json_t *j = json_loads(l, JSON_REJECT_DUPLICATES, NULL);
                cr_assert(json_is_object(j), "a JSON object per line: %s", l);
                json_array_append_new(all, j);
        }
        return all;
}

Test(action_record, each_message_is_a_line_numbered_by_action)
{
        struct action_record r = {};
        const char step[] = "{\"action\":{\"column\":3}}";
        const char batch[] = "[{\"method\":\"tools/call\"},{\"method\":\"tools/call\"}]";
        json_t *l;

        action_record_add(&r, 1, "step", step, strlen(step), 1500000);
        action_record_add(&r, 2, "mcp", batch, strlen(batch), 2500000);
        action_record_add(&r, 1, "ws", "{\"type\":\"step\"}", 15, 3000000);
        l = lines_of(&r);
        cr_assert_eq(json_array_size(l), 3);
        cr_expect_eq(json_integer_value(json_object_get(json_array_get(l, 0), "n")), 1);
        cr_expect_eq(json_integer_value(json_object_get(json_array_get(l, 1), "n")), 2);
        cr_expect_eq(json_integer_value(json_object_get(json_array_get(l, 1), "actions")), 2);
        cr_expect_eq(json_integer_value(json_object_get(json_array_get(l, 2), "n")), 4);
        cr_expect_str_eq(json_string_value(json_object_get(json_array_get(l, 0), "via")), "step");
        cr_expect_eq(json_real_value(json_object_get(json_array_get(l, 0), "at")), 1.5);
        cr_expect_eq(
                json_integer_value(json_object_get(
                        json_object_get(json_object_get(json_array_get(l, 0), "message"), "action"),
                        "column")),
                3);
        cr_expect_eq(r.actions, 4);
        json_decref(l);
        action_record_done(&r);
}

Test(action_record, what_cannot_be_read_is_null_with_the_reason)
{
        struct action_record r = {};
        const char dup[] = "{\"column\":1,\"column\":6}";
        cleanup_free char *big = xmalloc(ACTION_RECORD_MAX_MESSAGE + 16);
        json_t *l;

        memset(big, ' ', ACTION_RECORD_MAX_MESSAGE + 16);
        memcpy(big, "{}", 2);
        action_record_add(&r, 1, "step", dup, strlen(dup), 0);
        action_record_add(&r, 1, "step", "\xff\xfe", 2, 0);
        action_record_add(&r, 1, "step", NULL, 0, 0);
        action_record_add(&r, 1, "step", big, ACTION_RECORD_MAX_MESSAGE + 16, 0);
        l = lines_of(&r);
        cr_assert_eq(json_array_size(l), 4);
        static const char *const why[] = { "not_json", "not_json", "cut_short", "too_large" };
        for (size_t i = 0; i < 4; i++) {
                json_t *e = json_array_get(l, i);
                cr_expect(json_is_null(json_object_get(e, "message")), "line %zu", i);
                cr_expect_str_eq(json_string_value(json_object_get(e, "unread")), why[i]);
        }
        json_decref(l);
        action_record_done(&r);
}

Test(action_record, bounded_and_says_what_it_dropped)
{
        struct action_record r = {};
        char msg[1024];
        size_t len;
        cleanup_free char *text = NULL;
        json_t *l, *last;

        (void) snprintf(msg, sizeof(msg), "{\"pad\":\"%0900d\"}", 0);
        for (int i = 0; i < 5000; i++)
                action_record_add(&r, 1, "step", msg, strlen(msg), 0);
        text = action_record_text(&r, &len);
        cr_expect_leq(len, ACTION_RECORD_MAX_BYTES + 64);
        cr_expect_eq(r.actions, 5000);
        l = lines_of(&r);
        last = json_array_get(l, json_array_size(l) - 1);
        cr_expect_eq((uint64_t) json_integer_value(json_object_get(last, "dropped")), r.dropped);
        cr_expect_eq(json_array_size(l) - 1 + r.dropped, 5000, "kept + dropped = sent");
        /* A prefix: once one is dropped, so is every later one. */
        action_record_add(&r, 1, "step", "{}", 2, 0);
        cr_expect_eq(r.dropped, 5000 - (json_array_size(l) - 1) + 1);
        json_decref(l);
        action_record_done(&r);
}

Test(action_record, written_whole_for_readers)
{
        char dir[] = "/tmp/action-record-XXXXXX";
        struct action_record r = {};
        struct stat st;
        cleanup_close int fd = -EBADF;
        cleanup_free char *got = NULL;

        cr_assert(mkdtemp(dir));
        fd = open(dir, O_DIRECTORY | O_CLOEXEC);
        action_record_add(&r, 1, "step", "{\"a\":1}", 7, 0);
        cr_assert_eq(action_record_write(&r, fd, "actions.jsonl"), 0);
        action_record_add(&r, 1, "step", "{\"a\":2}", 7, 0);
        cr_assert_eq(action_record_write(&r, fd, "actions.jsonl"), 0);
        cr_assert_eq(fstatat(fd, "actions.jsonl", &st, 0), 0);
        cr_expect_eq(st.st_mode & 07777, 0644, "observers read it as their uid");
        cr_expect_neq(faccessat(fd, ".actions.jsonl.new", F_OK, 0), 0, "no temporary left");
        cr_assert_eq(read_full_file_at(fd, "actions.jsonl", 4096, &got, NULL), 0);
        cr_expect(got && strstr(got, "{\"a\":2}") && strstr(got, "{\"a\":1}"), "%s", got);
        (void) unlinkat(fd, "actions.jsonl", 0);
        (void) rmdir(dir);
        action_record_done(&r);
}
