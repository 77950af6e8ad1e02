/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "relay/openenv-messages.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
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

/* OpenEnv's session ids are uuid4 text; an id that is long or would need
 * quoting in a log line is nobody's. */
static bool session_id_valid(const char *id)
{
        size_t n = strlen(id);

        if (n == 0 || n > OPENENV_SESSION_ID_MAX)
                return false;
        for (const char *p = id; *p; p++)
                if (*p <= ' ' || *p > '~' || *p == '"' || *p == '\\')
                        return false;
        return true;
}

int openenv_mcp_request_parse(const char *data, size_t len, struct openenv_mcp_request *ret)
{
        json_t *j = parse(data, len), *params, *sid, *id;
        int r = -EINVAL;

        *ret = (struct openenv_mcp_request){};
        if (!json_is_object(j) || !json_is_string(json_object_get(j, "method")))
                goto out;
        params = json_object_get(j, "params");
        sid = json_is_object(params) ? json_object_get(params, "session_id") : NULL;
        if (sid && !json_is_null(sid) && !json_is_string(sid))
                goto out;
        id = json_object_get(j, "id");
        if (id && !json_is_string(id) && !json_is_integer(id) && !json_is_null(id))
                goto out;
        ret->method = xstrdup(json_string_value(json_object_get(j, "method")));
        if (json_is_string(sid) && json_string_length(sid) > 0)
                ret->session_id = xstrdup(json_string_value(sid));
        ret->id = id ? json_dumps(id, JSON_ENCODE_ANY | JSON_COMPACT) : xstrdup("null");
        if (!ret->id)
                ret->id = xstrdup("null");
        r = 0;
out:
        json_decref(j);
        return r;
}

void openenv_mcp_request_done(struct openenv_mcp_request *r)
{
        free(r->method);
        free(r->session_id);
        free(r->id);
        *r = (struct openenv_mcp_request){};
}

char *openenv_mcp_session_created(const char *data, size_t len)
{
        json_t *j = parse(data, len);
        const json_t *result = json_is_object(j) ? json_object_get(j, "result") : NULL;
        const json_t *sid = json_is_object(result) ? json_object_get(result, "session_id") : NULL;
        char *id = json_is_string(sid) && session_id_valid(json_string_value(sid))
                           ? xstrdup(json_string_value(sid))
                           : NULL;

        json_decref(j);
        return id;
}

/* {"jsonrpc":"2.0","id":ID,...}: id is the request's, as JSON text. */
static char *jsonrpc_answer(const char *id, const char *key, json_t *value)
{
        json_t *jid = json_loads(id ? id : "null", JSON_DECODE_ANY, NULL);
        json_t *j = json_pack("{s:s, s:o, s:o}", "jsonrpc", "2.0", key, value, "id",
                              jid ? jid : json_null());
        char *s = json_dumps(j, JSON_COMPACT);

        json_decref(j);
        return s ? s : xstrdup("{}");
}

char *openenv_jsonrpc_error(const char *id, int code, const char *message,
                            const unsigned sessions[2])
{
        json_t *e = json_pack("{s:i, s:s}", "code", code, "message", message);

        if (sessions)
                json_object_set_new(e, "data",
                                    json_pack("{s:i, s:i}", "active_sessions", (int) sessions[0],
                                              "max_sessions", (int) sessions[1]));
        return jsonrpc_answer(id, "error", e);
}

char *openenv_jsonrpc_closed(const char *id, const char *session_id)
{
        return jsonrpc_answer(id, "result",
                              json_pack("{s:s, s:b}", "session_id", session_id, "closed", 1));
}
