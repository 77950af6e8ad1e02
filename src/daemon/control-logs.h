/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * GET /logs: a container's captured output (unit/member-log.h), as text or
 * JSON, from a byte offset on, its last lines, with each line's time
 * (docs/DAEMON.md, "Control API"). Answered at once; reads only.
 */
#include "manifest/manifest.h"
#include "relay/frontend.h"
#include "unit/unit.h"

void control_logs(const struct manifest *m, const struct unit *u,
                  const struct frontend_request *req, struct frontend_reply *reply);
