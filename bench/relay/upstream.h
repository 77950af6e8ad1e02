/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A small, fast HTTP/1.1 keep-alive server for the benchmarks (never for
 * production): one blocking thread per connection, fixed answers, bodies and
 * WebSocket frames echoed, bulk bodies sent or swallowed at memory speed. A
 * Python server would dominate every number the relay benchmark reports.
 *
 * Routes (any method unless noted; query strings are ignored except bytes=):
 *   GET  /health            {"status":"ok"}
 *   POST /step              {"observation":...,"reward":0.0,"done":<step_done>}
 *   GET  /download?bytes=N  N bytes of 'x' (Content-Length)
 *   POST /upload            the body is read and dropped; {"bytes":N}
 *   POST /echo              the body is sent back
 *   GET  /ws + Upgrade      101, then every data frame is echoed unmasked
 *   anything else           a fixed 2-byte JSON body {}
 *
 * Ownership: upstream_serve() takes the listening fds and never returns.
 */
#include <stdbool.h>
#include <stddef.h>

struct upstream_options {
        const int *listen_fds; /* blocking, listening stream sockets */
        size_t n_listen_fds;
        bool step_done; /* /step answers "done": true */
};

_Noreturn void upstream_serve(const struct upstream_options *o);
