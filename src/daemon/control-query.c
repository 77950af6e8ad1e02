/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "daemon/control-query.h"

#include <string.h>

#include "base/util.h"

static bool query_value_ok(const char *v, size_t n, size_t size)
{
        if (n == 0 || n >= size)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-",
                            v[i]) ||
                    v[i] == '\0')
                        return false;
        return true;
}

struct query_param query_episode_id(char buf[static QUERY_EPISODE_ID_SIZE])
{
        return (struct query_param){ "episode_id", buf, QUERY_EPISODE_ID_SIZE,
                                     "episode_id: 1 to 63 of [A-Za-z0-9._-]", NULL };
}

const char *query_flag(const struct query_param *q, bool *ret)
{
        *ret = q->value && streq(q->value, "1");
        return q->value && !*ret && !streq(q->value, "0") ? q->why : NULL;
}

const char *query_parse(const char *query, struct query_param *params, size_t n)
{
        for (const char *p = query; p && *p;) {
                size_t len = strcspn(p, "&");
                const char *eq = memchr(p, '=', len);
                size_t kl = eq ? (size_t) (eq - p) : len;
                struct query_param *q = NULL;

                for (size_t i = 0; i < n && !q; i++)
                        if (strlen(params[i].key) == kl && strncmp(p, params[i].key, kl) == 0)
                                q = &params[i];
                if (!q && !(kl == 5 && strncmp(p, "token", 5) == 0))
                        return "unknown query parameter";
                if (q && q->value)
                        return "query parameter given twice";
                if (q && (!eq || !query_value_ok(eq + 1, len - kl - 1, q->size)))
                        return q->why;
                if (q) {
                        memcpy(q->buf, eq + 1, len - kl - 1);
                        q->buf[len - kl - 1] = '\0';
                        q->value = q->buf;
                }
                p += len;
                if (*p == '&' && *++p == '\0')
                        return "empty query parameter";
        }
        return NULL;
}

bool query_refused(const char *why, struct frontend_reply *reply)
{
        if (!why)
                return false;
        reply->status = 400;
        reply->error_code = "bad_request";
        reply->error_message = xstrdup(why);
        return true;
}
