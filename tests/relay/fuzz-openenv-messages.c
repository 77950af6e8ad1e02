/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzzes what the frontend reads in OpenEnv's messages (untrusted JSON from
 * clients and env servers). Invariants: no crash or leak, and the cheap
 * pre-filters never hide a message the parser would count.
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
        return 0;
}
