/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzzes what the frontend reads in OpenEnv's messages (untrusted JSON from
 * clients and env servers). Invariants: no crash or leak, the cheap
 * pre-filters never hide a message the parser would count, a session id
 * taken from an answer is bounded and plain, and the JSON-RPC answers made
 * from a request are JSON-RPC.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "relay/openenv-messages.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *s = (const char *) data;
        unsigned ws = openenv_ws_actions(s, size);
        unsigned mcp = openenv_mcp_actions(s, size);
        enum openenv_ws_type t = openenv_ws_type(s, size);

        (void) openenv_ws_done(s, size);
        (void) openenv_mcp_done(s, size);
        (void) openenv_step_done(s, size);
        /* A step is one action; an "mcp" message counts its calls. */
        if (t == OPENENV_WS_STEP && ws != 1)
                abort();
        if (t != OPENENV_WS_STEP && t != OPENENV_WS_MCP && ws != 0)
                abort();
        if (mcp > size)
                abort();
        /* Routing by session (lanes): what a request names, what a create's
         * answer names, and the answers given here, which must parse. */
        {
                struct openenv_mcp_request req;
                char *id = openenv_mcp_session_created(s, size), *answer;

                if (id && (strlen(id) > OPENENV_SESSION_ID_MAX || strpbrk(id, "\"\\ \n")))
                        abort();
                if (openenv_mcp_request_parse(s, size, &req) == 0) {
                        if (!req.method || !req.id)
                                abort();
                        answer = openenv_jsonrpc_error(req.id, JSONRPC_INVALID_PARAMS,
                                                       req.session_id ?: "-", NULL);
                        if (!strstr(answer, "\"jsonrpc\":\"2.0\""))
                                abort();
                        free(answer);
                }
                openenv_mcp_request_done(&req);
                free(id);
        }
        return 0;
}
