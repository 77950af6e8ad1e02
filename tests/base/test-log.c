/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The JSON log format: one parsable object per line whatever bytes a
 * message carries (a container's output is quoted in the daemon's log), the
 * stable keys, structured fields, and the text format left as it was.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <regex.h>
#include <unistd.h>

#include "base/log.h"
#include "base/strbuf.h"
#include "test-helpers.h"

/* stderr goes to a pipe until capture_end() returns what was written. */
static int capture_begin(void)
{
        int p[2], saved = dup(STDERR_FILENO);

        cr_assert_geq(saved, 0);
        cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
        cr_assert_eq(fcntl(p[1], F_SETPIPE_SZ, 1 << 20) >= 0, true);
        cr_assert_eq(dup2(p[1], STDERR_FILENO), STDERR_FILENO);
        close(p[1]);
        /* The read end out of the way of the dup()s above. */
        cr_assert_eq(dup2(p[0], 100), 100);
        close(p[0]);
        return saved;
}

static char *capture_end(int saved, size_t *ret_len)
{
        struct strbuf sb = STRBUF_INIT;
        char buf[4096];
        ssize_t n;

        cr_assert_eq(dup2(saved, STDERR_FILENO), STDERR_FILENO);
        close(saved);
        while ((n = read(100, buf, sizeof(buf))) > 0)
                strbuf_add(&sb, buf, (size_t) n);
        close(100);
        return strbuf_detach(&sb, ret_len);
}

/* The one object on a line: parsed strictly (no duplicate keys). */
static json_t *parse_line(const char *line, size_t len)
{
        json_error_t err;
        json_t *j = json_loadb(line, len, JSON_REJECT_DUPLICATES, &err);

        cr_assert_not_null(j, "not JSON (%s): %.*s", err.text, (int) len, line);
        cr_assert(json_is_object(j));
        return j;
}

static const char *str(json_t *j, const char *key)
{
        json_t *v = json_object_get(j, key);
        cr_assert(json_is_string(v), "%s is not a string", key);
        return json_string_value(v);
}

/* What a byte becomes in the decoded message: itself, or U+FFFD when it
 * cannot stand alone in UTF-8. */
static void expect_byte(struct strbuf *sb, unsigned char b)
{
        if (b < 0x80)
                strbuf_addch(sb, (char) b);
        else
                strbuf_adds(sb, "\xef\xbf\xbd");
}

Test(log, every_byte_yields_one_json_object_per_line)
{
        size_t len;
        char *out;
        int saved;

        log_set_format(LOG_FORMAT_JSON);
        saved = capture_begin();
        for (unsigned b = 1; b < 256; b++) {
                char msg[4] = { 'x', (char) b, 'y', '\0' };
                log_info("%s", msg);
        }
        out = capture_end(saved, &len);

        unsigned n = 0;
        for (char *line = out, *eol; *line; line = eol + 1, n++) {
                struct strbuf want = STRBUF_INIT;
                json_t *j;

                eol = strchr(line, '\n');
                cr_assert_not_null(eol, "the last entry has no newline");
                j = parse_line(line, (size_t) (eol - line));
                strbuf_addch(&want, 'x');
                expect_byte(&want, (unsigned char) (n + 1));
                strbuf_addch(&want, 'y');
                cr_assert_str_eq(str(j, "msg"), want.buf, "byte 0x%02x", n + 1);
                strbuf_release(&want);
                json_decref(j);
        }
        cr_assert_eq(n, 255, "%u lines for 255 entries", n);
        free(out);
}

Test(log, utf8_kept_and_broken_sequences_replaced)
{
        static const struct {
                const char *in, *want;
        } cases[] = {
                { "é€😀", "é€😀" },
                /* overlong '/', a surrogate, a 4-byte sequence cut short */
                { "a\xc0\xaf"
                  "b",
                  "a\xef\xbf\xbd\xef\xbf\xbd"
                  "b" },
                { "\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
                { "\xf0\x9f\x98z", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdz" },
                { "\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
                { "line1\nline2\r\t\"q\" \\ \x7f", "line1\nline2\r\t\"q\" \\ \x7f" },
        };
        size_t len;
        char *out, *line;
        int saved;

        log_set_format(LOG_FORMAT_JSON);
        saved = capture_begin();
        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                log_info("%s", cases[i].in);
        out = capture_end(saved, &len);
        line = out;
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char *eol = strchr(line, '\n');
                cr_assert_not_null(eol);
                json_t *j = parse_line(line, (size_t) (eol - line));
                cr_assert_str_eq(str(j, "msg"), cases[i].want, "case %zu", i);
                json_decref(j);
                line = eol + 1;
        }
        cr_assert_eq(*line, '\0');
        free(out);
}

Test(log, stable_keys_fields_and_errno)
{
        regex_t ts;
        size_t len;
        char *out, *eol;
        json_t *j;
        int saved;

        cr_assert_eq(regcomp(&ts,
                             "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6}Z$",
                             REG_EXTENDED | REG_NOSUB),
                     0);
        log_set_format(LOG_FORMAT_JSON);
        log_set_program("test-log");
        saved = capture_begin();
        log_warning_fields(LOG_FIELDS({ "episode_id", "abc123" }, { "container", "a\"b\nc\xff" },
                                      { "absent", NULL }),
                           "episode %s: %s", "abc123", "gone");
        (void) log_error_errno(-ENOENT, "open %s: %m", "/x");
        log_debug("not shown at info");
        out = capture_end(saved, &len);

        eol = strchr(out, '\n');
        cr_assert_not_null(eol);
        j = parse_line(out, (size_t) (eol - out));
        cr_assert_eq(regexec(&ts, str(j, "ts"), 0, NULL, 0), 0, "ts %s", str(j, "ts"));
        cr_assert_str_eq(str(j, "level"), "warning");
        cr_assert_str_eq(str(j, "program"), "test-log");
        cr_assert_eq(json_integer_value(json_object_get(j, "pid")), getpid());
        cr_assert_str_eq(str(j, "msg"), "episode abc123: gone");
        cr_assert_str_eq(str(j, "episode_id"), "abc123");
        cr_assert_str_eq(str(j, "container"), "a\"b\nc\xef\xbf\xbd");
        cr_assert_null(json_object_get(j, "absent"));
        cr_assert_null(json_object_get(j, "errno"));
        cr_assert_null(json_object_get(j, "code_file"), "code location only at debug level");
        json_decref(j);

        j = parse_line(eol + 1, strlen(eol + 1) - 1);
        cr_assert_str_eq(str(j, "level"), "err");
        cr_assert_str_eq(str(j, "msg"), "open /x: No such file or directory");
        cr_assert_str_eq(str(j, "errno"), "ENOENT");
        json_decref(j);
        cr_assert_eq(strchr(eol + 1, '\n') + 1, out + len, "exactly two entries");
        free(out);
        regfree(&ts);
}

Test(log, debug_level_adds_the_code_location)
{
        size_t len;
        char *out;
        json_t *j;
        int saved;

        log_set_format(LOG_FORMAT_JSON);
        log_set_level(LOG_DEBUG);
        saved = capture_begin();
        log_debug("here");
        out = capture_end(saved, &len);
        j = parse_line(out, len - 1);
        cr_assert_str_eq(str(j, "level"), "debug");
        cr_assert(strstr(str(j, "code_file"), "test-log.c"));
        cr_assert(json_integer_value(json_object_get(j, "code_line")) > 0);
        json_decref(j);
        free(out);
}

Test(log, text_format_names_episode_and_container_once)
{
        size_t len;
        char *out;
        int saved;

        /* The episode and container a line is about, said once: from the
         * fields when the message does not name them; other fields are the
         * JSON format's. */
        log_set_program("openenvd");
        cr_assert_eq(log_get_format(), LOG_FORMAT_TEXT);
        saved = capture_begin();
        log_info_fields(LOG_FIELDS({ "episode_id", "e1" }), "episode %s ready", "e1");
        log_info_fields(
                LOG_FIELDS({ "episode_id", "e2" }, { "from", "ready" }, { "container", "env\n" }),
                "phase ready -> running");
        log_info_fields(LOG_FIELDS({ "episode_id", NULL }), "no episode");
        (void) log_warning_errno(EACCES, "x: %m");
        out = capture_end(saved, &len);
        cr_assert_str_eq(out, "openenvd: episode e1 ready\n"
                              "openenvd: phase ready -> running [episode e2] [container env\\x0a]\n"
                              "openenvd: no episode\n"
                              "openenvd: x: Permission denied\n");
        free(out);
}

Test(log, format_names)
{
        cr_assert_eq(log_format_from_string("text"), LOG_FORMAT_TEXT);
        cr_assert_eq(log_format_from_string("json"), LOG_FORMAT_JSON);
        cr_assert_eq(log_format_from_string("JSON "), -EINVAL);
        cr_assert_eq(log_format_from_string(""), -EINVAL);
}

/* A container's bytes in a text-format message: one line, nothing a
 * terminal acts on, valid UTF-8; the next entry starts a line of its own. */
Test(log, text_format_escapes_what_a_container_wrote)
{
        size_t len;
        char *out;
        int saved;

        log_set_program("openenvd");
        cr_assert_eq(log_get_format(), LOG_FORMAT_TEXT);
        saved = capture_begin();
        log_info("refused: %s",
                 "a\nopenenvd: forged\r\x1b[2K\xff\xc2\x9b\xe2\x80\xae\xe2\x80\xa8 \xc3\xa9 \\ ok");
        log_info("next");
        out = capture_end(saved, &len);
        cr_assert_str_eq(out, "openenvd: refused: a\\x0aopenenvd: forged\\x0d\\x1b[2K\\xff\\xc2"
                              "\\x9b\\xe2\\x80\\xae\\xe2\\x80\\xa8 \xc3\xa9 \\ ok\n"
                              "openenvd: next\n");
        free(out);
}
