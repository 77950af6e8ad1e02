/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "relay/control-routes.h"

#include <http_parser.h>

#include "base/macro.h"
#include "base/util.h"

#define ANYONE                                                          \
        (CR_PRINCIPAL(PRINCIPAL_NONE) | CR_PRINCIPAL(PRINCIPAL_AGENT) | \
         CR_PRINCIPAL(PRINCIPAL_ORCHESTRATOR) | CR_PRINCIPAL(PRINCIPAL_METRICS))
#define ORCHESTRATOR CR_PRINCIPAL(PRINCIPAL_ORCHESTRATOR)

const struct control_route_def control_route_table[_CR_MAX] = {
        [CR_HEALTHZ] = { "/healthz", HTTP_GET, ANYONE, false },
        [CR_READYZ] = { "/readyz", HTTP_GET, ANYONE, false },
        [CR_HEALTH] = { "/health", HTTP_GET, ANYONE, false },
        [CR_INFO] = { "/info", HTTP_GET, ORCHESTRATOR, false },
        [CR_EPISODES] = { "/episodes", HTTP_GET, ORCHESTRATOR, false },
        [CR_VERDICT] = { "/verdict", HTTP_GET, ORCHESTRATOR, true },
        [CR_LOGS] = { "/logs", HTTP_GET, ORCHESTRATOR, true },
        /* A scraper's token reaches this one route (--metrics-token-file). */
        [CR_METRICS] = { "/metrics", HTTP_GET, ORCHESTRATOR | CR_PRINCIPAL(PRINCIPAL_METRICS),
                         false },
        [CR_RESET_UNIT] = { "/reset_unit", HTTP_POST, ORCHESTRATOR, true },
        [CR_INSPECT] = { "/inspect", HTTP_POST, ORCHESTRATOR, true },
        [CR_RESUME] = { "/resume", HTTP_POST, ORCHESTRATOR, true },
        [CR_END_EPISODE] = { "/end_episode", HTTP_POST, ORCHESTRATOR, true },
};

int control_route_lookup(const char *path)
{
        for (size_t i = 0; i < ELEMENTSOF(control_route_table); i++)
                if (streq(path, control_route_table[i].path))
                        return (int) i;
        return -1;
}

bool control_route_public(enum control_route r)
{
        return control_route_table[r].principals & CR_PRINCIPAL(PRINCIPAL_NONE);
}
