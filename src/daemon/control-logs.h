/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * GET /logs: a container's captured output, as text, its last lines
 * (docs/DAEMON.md, "Control API"). Answered at once; reads only.
 */
#include "manifest/manifest.h"
#include "relay/frontend.h"
#include "unit/unit.h"

void control_logs(const struct manifest *m, const struct unit *u,
                  const struct frontend_request *req, struct frontend_reply *reply);
