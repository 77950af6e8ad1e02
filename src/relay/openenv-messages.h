/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What OpenEnv's messages mean to the episode: which ones are actions, which
 * one reports the end. Pure functions over untrusted JSON text (at most
 * HTTP_MAX_INSPECT_BYTES / WS_MAX_INSPECT_BYTES of it, fuzzed); anything that
 * does not parse means nothing.
 *
 *   actions   POST /step; /ws {"type":"step"}; MCP "tools/call" requests
 *             (JSON-RPC 2.0, single or batched) over HTTP or WebSocket /mcp
 *             and inside /ws {"type":"mcp","data":{...}}
 *   done      a /step response or a /ws {"type":"observation"} whose body
 *             (or "data") has "done": true; an MCP result that carries
 *             "done": true itself, in its structured content
 *             ("structuredContent", "structured_content") or its "data"
 */
#include <stdbool.h>
#include <stddef.h>

/* Actions the client sent in one message, as the episode records them
 * (unit/action-record.h): via "step", "ws", "mcp" or "harness"; data the
 * message's bytes, NULL when they were not seen whole. */
struct openenv_action {
        unsigned n;
        const char *via;
        const char *data;
        size_t len;
};

enum openenv_ws_type {
        OPENENV_WS_OTHER,
        OPENENV_WS_RESET,
        OPENENV_WS_STEP,
        OPENENV_WS_STATE,
        OPENENV_WS_CLOSE,
        OPENENV_WS_MCP,
};

/* The "type" of a /ws client message. */
enum openenv_ws_type openenv_ws_type(const char *data, size_t len);
/* Actions in a /ws client message (step: 1; mcp: its tools/call count). */
unsigned openenv_ws_actions(const char *data, size_t len);
/* A /ws server message that ends the episode. */
bool openenv_ws_done(const char *data, size_t len);
/* tools/call requests in a JSON-RPC request or batch (HTTP or WS /mcp). */
unsigned openenv_mcp_actions(const char *data, size_t len);
/* A JSON-RPC response (or batch) with a result that reports done. */
bool openenv_mcp_done(const char *data, size_t len);
/* A POST /step response that reports done. */
bool openenv_step_done(const char *data, size_t len);

/*
 * HTTP MCP sessions (OpenEnv's production mode): "openenv/session/create"
 * answers {"result":{"session_id":ID}}; later requests name the session in
 * params.session_id; "openenv/session/close" ends it. A unit of lanes routes
 * each request to its session's lane by what the body says.
 */
#define OPENENV_SESSION_ID_MAX 128

struct openenv_mcp_request {
        char *method;     /* owned */
        char *session_id; /* owned: params.session_id; NULL when absent or "" */
        char *id;         /* owned: the request's id as JSON text ("null" without) */
};

enum {
        JSONRPC_INVALID_REQUEST = -32600,
        JSONRPC_INVALID_PARAMS = -32602,
        JSONRPC_SERVER_ERROR = -32000,
};

/* One JSON-RPC request object: 0, or -EINVAL (not one, a batch, a
 * session_id or id of the wrong type). */
int openenv_mcp_request_parse(const char *data, size_t len, struct openenv_mcp_request *ret);
void openenv_mcp_request_done(struct openenv_mcp_request *r);
/* The session a response to "openenv/session/create" names (owned), NULL
 * if none, or one longer than OPENENV_SESSION_ID_MAX or not plain ASCII. */
char *openenv_mcp_session_created(const char *data, size_t len);
/* JSON-RPC answers given here, as OpenEnv's server words them (owned):
 * an error (sessions: the capacity error's counts, or NULL), and the
 * answer to "openenv/session/close". */
char *openenv_jsonrpc_error(const char *id, int code, const char *message,
                            const unsigned sessions[2]);
char *openenv_jsonrpc_closed(const char *id, const char *session_id);
