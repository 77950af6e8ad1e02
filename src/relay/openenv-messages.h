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
