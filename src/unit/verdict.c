/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "unit/verdict.h"

#include <stdarg.h>

#include "base/json-util.h"
#include "base/limits.h"
#include "base/strbuf.h"
#include "base/string-table.h"
#include "base/text-escape.h"
#include "base/time-util.h"
#include "base/util.h"

static const char *const verdict_kind_table[_VERDICT_KIND_MAX] = {
        [VERDICT_GRADED] = "graded",
        [VERDICT_AGENT_MISBEHAVIOR] = "agent_misbehavior",
        [VERDICT_INFRASTRUCTURE_ERROR] = "infrastructure_error",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(verdict_kind, enum verdict_kind);

void verdict_init(struct verdict *v)
{
        *v = (struct verdict){ .observers = json_object(), .events = json_array() };
}

void verdict_done(struct verdict *v)
{
        free(v->reason);
        free(v->blame);
        json_decref(v->observers);
        json_decref(v->events);
        json_decref(v->model);
        *v = (struct verdict){};
}

bool verdict_failed(const struct verdict *v)
{
        return v->kind == VERDICT_AGENT_MISBEHAVIOR || v->kind == VERDICT_INFRASTRUCTURE_ERROR;
}

bool verdict_fail(struct verdict *v, enum verdict_kind kind, const char *blame, const char *fmt,
                  ...)
{
        struct strbuf sb = STRBUF_INIT;
        va_list ap;

        if (verdict_failed(v))
                return false;
        va_start(ap, fmt);
        strbuf_vaddf(&sb, fmt, ap);
        va_end(ap);
        v->kind = kind;
        free(v->reason);
        /* A reason quotes what agent code made (a file name, an env's
         * message): escaped once here, it is one valid UTF-8 line in
         * /verdict and in either log format. */
        v->reason = text_escape(sb.buf);
        strbuf_release(&sb);
        free(v->blame);
        v->blame = blame ? xstrdup(blame) : NULL;
        v->cause = NULL;
        return true;
}

void verdict_set_cause(struct verdict *v, const char *cause)
{
        v->cause = cause;
}

void verdict_graded(struct verdict *v)
{
        if (!verdict_failed(v))
                v->kind = VERDICT_GRADED;
}

void verdict_set_observer(struct verdict *v, const char *name, json_t *result)
{
        json_object_set_new(v->observers, name, result ? result : json_null());
}

json_t *verdict_add_event(struct verdict *v, json_t *event)
{
        /* Bounded: a member cannot make the verdict grow without end. */
        if (json_array_size(v->events) >= VERDICT_MAX_EVENTS) {
                json_decref(event);
                return NULL;
        }
        json_object_set_new(event, "at",
                            json_real((double) now_usec(CLOCK_REALTIME) / (double) USEC_PER_SEC));
        json_array_append_new(v->events, event);
        return event;
}

static json_t *verdict_blame_to_json(const struct verdict *v)
{
        json_t *b;

        if (!v->blame)
                return json_null();
        b = json_pack("{s:s}", "subtree", v->blame);
        if (v->cause)
                json_object_set_new(b, "cause", json_string(v->cause));
        return b;
}

json_t *verdict_to_json(const struct verdict *v, const char *episode_id)
{
        const char *kind = verdict_kind_to_string(v->kind);
        json_t *j = json_object();

        json_object_set_new(j, "episode_id", episode_id ? json_string(episode_id) : json_null());
        json_object_set_new(j, "verdict", kind ? json_string(kind) : json_null());
        /* The reason may quote a container's output: any bytes. */
        json_object_set_new(j, "reason", text_to_json(v->reason));
        json_object_set_new(j, "blame", verdict_blame_to_json(v));
        json_object_set_new(j, "graders_ran", json_boolean(v->graders_ran));
        json_object_set_new(j, "observers",
                            v->observers ? json_incref(v->observers) : json_object());
        json_object_set_new(j, "events", v->events ? json_incref(v->events) : json_array());
        json_object_set_new(j, "model", v->model ? json_incref(v->model) : json_null());
        json_object_set_new(j, "actions", json_integer((json_int_t) v->actions));
        return j;
}
