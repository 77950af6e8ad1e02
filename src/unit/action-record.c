/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "unit/action-record.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/json-writer.h"
#include "base/limits.h"
#include "base/time-util.h"
#include "base/util.h"

void action_record_done(struct action_record *r)
{
        strbuf_release(&r->lines);
        *r = (struct action_record){};
}

/* The client's bytes as JSON, or NULL with why it is not there. */
static json_t *message_json(const char *data, size_t len, const char **ret_why)
{
        json_t *j;

        if (!data) {
                *ret_why = "cut_short";
                return NULL;
        }
        if (len > ACTION_RECORD_MAX_MESSAGE) {
                *ret_why = "too_large";
                return NULL;
        }
        /* As the relay reads it (openenv-messages.c): two "column"s must not
         * mean one thing to the env and another to a grader. */
        j = json_loadb(data, len, JSON_REJECT_DUPLICATES, NULL);
        if (!j)
                *ret_why = "not_json";
        return j;
}

void action_record_add(struct action_record *r, unsigned n, const char *via, const char *data,
                       size_t len, uint64_t at_usec)
{
        uint64_t first = r->actions + 1; /* the number of this message's first action */
        const char *why = NULL;
        json_t *line, *msg;
        char *text;

        if (n == 0)
                return;
        r->actions += n;
        if (r->dropped > 0 || r->lines.len >= ACTION_RECORD_MAX_BYTES) {
                r->dropped += n;
                return;
        }
        msg = message_json(data, len, &why);
        line = json_pack("{s:I,s:I,s:s,s:f,s:o}", "n", (json_int_t) first, "actions",
                         (json_int_t) n, "via", via, "at", (double) at_usec / (double) USEC_PER_SEC,
                         "message", msg ?: json_null());
        if (why)
                json_object_set_new(line, "unread", json_string(why));
        text = json_dumps(line, JSON_COMPACT);
        json_decref(line);
        if (!text || r->lines.len + strlen(text) + 1 > ACTION_RECORD_MAX_BYTES) {
                /* From here on, none: the record is a prefix of what was sent. */
                r->dropped += n;
                free(text);
                return;
        }
        strbuf_adds(&r->lines, text);
        strbuf_adds(&r->lines, "\n");
        free(text);
}

char *action_record_text(const struct action_record *r, size_t *ret_len)
{
        struct strbuf sb = STRBUF_INIT;

        strbuf_add(&sb, r->lines.buf ?: "", r->lines.len);
        if (r->dropped > 0) {
                struct jwriter w;

                jwriter_init(&w, &sb);
                jwriter_object_begin(&w);
                jwriter_kv_uint(&w, "dropped", r->dropped);
                jwriter_object_end(&w);
                strbuf_addch(&sb, '\n');
        }
        return strbuf_detach(&sb, ret_len);
}

int action_record_write(const struct action_record *r, int dir_fd, const char *name)
{
        cleanup_free char *tmp = xasprintf(".%s.new", name);
        size_t len;
        cleanup_free char *text = action_record_text(r, &len);
        int r2;

        (void) unlinkat(dir_fd, tmp, 0);
        {
                cleanup_close int fd = openat(
                        dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
                if (fd < 0)
                        return -errno;
                /* Observers read it as their own uid, whatever our umask. */
                r2 = fchmod(fd, 0644) < 0 ? -errno : write_all(fd, text, len);
        }
        if (r2 >= 0 && renameat(dir_fd, tmp, dir_fd, name) < 0)
                r2 = -errno;
        if (r2 < 0)
                (void) unlinkat(dir_fd, tmp, 0);
        return r2 < 0 ? r2 : 0;
}
