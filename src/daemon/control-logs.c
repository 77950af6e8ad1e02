/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "daemon/control-logs.h"

#include <string.h>

#include "base/macro.h"
#include "base/parse-util.h"
#include "base/util.h"
#include "daemon/control-query.h"

void control_logs(const struct manifest *m, const struct unit *u,
                  const struct frontend_request *req, struct frontend_reply *reply)
{
        char name[128], id[64], tail[16];
        struct query_param q[] = {
                { "container", name, sizeof(name), "container: 1 to 127 of [A-Za-z0-9._-]", NULL },
                { "episode_id", id, sizeof(id), "episode_id: 1 to 63 of [A-Za-z0-9._-]", NULL },
                { "tail", tail, sizeof(tail), "tail: a number of lines, 1 to 100000", NULL },
        };
        const char *c, *e;
        unsigned lines = 0;
        char *text;

        if (query_refused(query_parse(req->query, q, ELEMENTSOF(q)), reply))
                return;
        if (q[2].value && parse_uint(q[2].value, 1, 100000, &lines) < 0 &&
            query_refused(q[2].why, reply))
                return;
        c = q[0].value;
        e = q[1].value;
        if (!c || !manifest_find_container(m, c)) {
                reply->status = 404;
                reply->error_code = "not_found";
                return;
        }
        text = unit_container_log(u, c, e);
        if (!text) {
                reply->status = 404;
                reply->error_code = "not_found";
                return;
        }
        if (lines > 0) {
                /* The last lines: from just after the lines-th newline back
                 * (a final newline ends the last line, it starts none). */
                size_t len = strlen(text);
                const char *p = text + len;
                if (p > text && p[-1] == '\n')
                        p--;
                while (p > text && !(p[-1] == '\n' && lines-- == 1))
                        p--;
                memmove(text, p, len - (size_t) (p - text) + 1);
        }
        reply->status = 200;
        reply->text = text;
        reply->text_len = strlen(text);
}
