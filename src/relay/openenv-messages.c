/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "relay/openenv-messages.h"

#include <jansson.h>
#include <string.h>

#include "base/macro.h"
#include "base/util.h"

/* Whether a JSON text may hold the string s: it appears as is, or the text
 * has escapes ("\u0064one", "tools\/call" spell the same strings). Cheap
 * enough to skip the parser on every message that cannot matter. */
static bool may_contain(const char *data, size_t len, const char *s)
{
        return memmem(data, len, s, strlen(s)) || memchr(data, '\\', len);
}

static json_t *parse(const char *data, size_t len)
{
        /* Duplicate keys are refused: two "done"s must not mean one thing
         * here and another to the client. */
        return json_loadb(data, len, JSON_REJECT_DUPLICATES, NULL);
}

static bool member_is(const json_t *obj, const char *key, const char *value)
{
        const json_t *v = json_object_get(obj, key);
        return json_is_string(v) && streq(json_string_value(v), value);
}

static bool has_done(const json_t *obj)
{
        return json_is_object(obj) && json_is_true(json_object_get(obj, "done"));
}

static unsigned mcp_request_actions(const json_t *j)
{
        unsigned n = 0;
        size_t i;
        json_t *e;

        if (json_is_object(j))
                return member_is(j, "method", "tools/call");
        if (json_is_array(j))
                json_array_foreach(j, i, e) n +=
                        json_is_object(e) && member_is(e, "method", "tools/call");
        return n;
}

static bool mcp_result_done(const json_t *resp)
{
        const json_t *result = json_object_get(resp, "result");

        if (!json_is_object(result))
                return false;
        return has_done(result) || has_done(json_object_get(result, "structuredContent")) ||
               has_done(json_object_get(result, "structured_content")) ||
               has_done(json_object_get(result, "data"));
}

static bool mcp_response_done(const json_t *j)
{
        size_t i;
        json_t *e;

        if (json_is_object(j))
                return mcp_result_done(j);
        if (json_is_array(j))
                json_array_foreach(j, i,
                                   e) if (json_is_object(e) && mcp_result_done(e)) return true;
        return false;
}

enum openenv_ws_type openenv_ws_type(const char *data, size_t len)
{
        static const struct {
                const char *name;
                enum openenv_ws_type type;
        } types[] = {
                { "reset", OPENENV_WS_RESET }, { "step", OPENENV_WS_STEP },
                { "state", OPENENV_WS_STATE }, { "close", OPENENV_WS_CLOSE },
                { "mcp", OPENENV_WS_MCP },
        };
        enum openenv_ws_type t = OPENENV_WS_OTHER;
        json_t *j;

        if (!may_contain(data, len, "\"type\""))
                return t;
        j = parse(data, len);
        if (json_is_object(j))
                for (size_t i = 0; i < ELEMENTSOF(types); i++)
                        if (member_is(j, "type", types[i].name))
                                t = types[i].type;
        json_decref(j);
        return t;
}

unsigned openenv_ws_actions(const char *data, size_t len)
{
        unsigned n = 0;
        json_t *j;

        if (!may_contain(data, len, "\"type\""))
                return 0;
        j = parse(data, len);
        if (json_is_object(j)) {
                if (member_is(j, "type", "step"))
                        n = 1;
                else if (member_is(j, "type", "mcp"))
                        n = mcp_request_actions(json_object_get(j, "data"));
        }
        json_decref(j);
        return n;
}

bool openenv_ws_done(const char *data, size_t len)
{
        bool done = false;
        json_t *j;

        if (!may_contain(data, len, "\"done\""))
                return false;
        j = parse(data, len);
        if (json_is_object(j)) {
                const json_t *d = json_object_get(j, "data");
                if (member_is(j, "type", "observation"))
                        done = has_done(j) || has_done(d);
                else if (member_is(j, "type", "mcp"))
                        done = json_is_object(d) && mcp_result_done(d);
        }
        json_decref(j);
        return done;
}

unsigned openenv_mcp_actions(const char *data, size_t len)
{
        unsigned n;
        json_t *j;

        if (!may_contain(data, len, "tools/call"))
                return 0;
        j = parse(data, len);
        n = mcp_request_actions(j);
        json_decref(j);
        return n;
}

bool openenv_mcp_done(const char *data, size_t len)
{
        bool done;
        json_t *j;

        if (!may_contain(data, len, "\"done\""))
                return false;
        j = parse(data, len);
        done = mcp_response_done(j);
        json_decref(j);
        return done;
}

bool openenv_step_done(const char *data, size_t len)
{
        bool done = false;
        json_t *j;

        if (!may_contain(data, len, "\"done\""))
                return false;
        j = parse(data, len);
        done = has_done(j) || (json_is_object(j) && has_done(json_object_get(j, "data")));
        json_decref(j);
        return done;
}
