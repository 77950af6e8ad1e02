/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "daemon/control-logs.h"

#include <string.h>

#include "base/limits.h"
#include "base/macro.h"
#include "base/parse-util.h"
#include "base/util.h"
#include "daemon/control-query.h"

/* The byte offset's refusal names the cap. */
_Static_assert(MEMBER_LOG_MAX_BYTES == 262144, "since's refusal says 262144");

enum {
        P_CONTAINER,
        P_EPISODE,
        P_TAIL,
        P_SINCE,
        P_TIMESTAMPS,
        P_FORMAT,
        _P_MAX,
};

/* The numbers and words of the query into *ret; NULL, or why it is refused. */
static const char *logs_query(const struct query_param *q, struct member_log_query *ret,
                              bool *ret_json)
{
        unsigned v;

        *ret = (struct member_log_query){};
        if (q[P_TAIL].value && parse_uint(q[P_TAIL].value, 1, 100000, &ret->tail) < 0)
                return q[P_TAIL].why;
        /* Past the cap no byte is ever kept: such an offset is a mistake. */
        if (q[P_SINCE].value && parse_uint(q[P_SINCE].value, 0, MEMBER_LOG_MAX_BYTES, &v) < 0)
                return q[P_SINCE].why;
        ret->since = q[P_SINCE].value ? v : 0;
        if (query_flag(&q[P_TIMESTAMPS], &ret->timestamps))
                return q[P_TIMESTAMPS].why;
        if (q[P_FORMAT].value && !streq(q[P_FORMAT].value, "text") &&
            !streq(q[P_FORMAT].value, "json"))
                return q[P_FORMAT].why;
        *ret_json = q[P_FORMAT].value && streq(q[P_FORMAT].value, "json");
        return NULL;
}

void control_logs(const struct manifest *m, const struct unit *u,
                  const struct frontend_request *req, struct frontend_reply *reply)
{
        char name[128], id[QUERY_EPISODE_ID_SIZE], tail[16], since[16], timestamps[2], format[8];
        struct query_param q[_P_MAX] = {
                [P_CONTAINER] = { "container", name, sizeof(name),
                                  "container: 1 to 127 of [A-Za-z0-9._-]", NULL },
                [P_EPISODE] = query_episode_id(id),
                [P_TAIL] = { "tail", tail, sizeof(tail), "tail: a number of lines, 1 to 100000",
                             NULL },
                [P_SINCE] = { "since", since, sizeof(since),
                              "since: a byte offset of the output, 0 to 262144", NULL },
                [P_TIMESTAMPS] = { "timestamps", timestamps, sizeof(timestamps),
                                   "timestamps: 0 or 1", NULL },
                [P_FORMAT] = { "format", format, sizeof(format), "format: text or json", NULL },
        };
        struct member_log_query mq;
        const struct member_log *l = NULL;
        const char *c, *eid = NULL;
        bool json = false;

        if (query_refused(query_parse(req->query, q, ELEMENTSOF(q)), reply) ||
            query_refused(logs_query(q, &mq, &json), reply))
                return;
        c = q[P_CONTAINER].value;
        if (c && manifest_find_container(m, c))
                l = unit_container_log(u, c, q[P_EPISODE].value, &eid);
        if (!l) {
                reply->status = 404;
                reply->error_code = "not_found";
                return;
        }
        reply->status = 200;
        if (json)
                reply->json = member_log_json(l, &mq, eid, c);
        else
                reply->text = member_log_text(l, &mq, &reply->text_len);
}
