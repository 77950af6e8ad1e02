/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one table of the routes openenvd answers itself
 * (src/relay/control-routes.c): docs/DAEMON.md's "Control API" lists the
 * same routes with the same methods, no more and no fewer, and the
 * principals' reach is what the documentation promises.
 */
#include <http_parser.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "relay/control-routes.h"
#include "test-helpers.h"

#define MAX_DOC_ROUTES 64

struct doc_route {
        char method[8], path[64];
};

/* The "| `METHOD /path..." rows of the Control API section. */
static size_t doc_routes(struct doc_route *out, size_t max)
{
        FILE *f = fopen(TEST_SRCDIR "/../docs/DAEMON.md", "re");
        char line[4096];
        bool in = false;
        size_t n = 0;

        cr_assert(f, "docs/DAEMON.md");
        while (fgets(line, sizeof(line), f)) {
                if (startswith(line, "## "))
                        in = startswith(line, "## Control API");
                /* A route's row starts with its method: "| `GET /info` |". */
                if (!in || sscanf(line, "| `%7[A-Z] %63[^`[?]", out[n].method, out[n].path) != 2)
                        continue;
                cr_assert_lt(n + 1, max);
                n++;
        }
        fclose(f);
        return n;
}

Test(control_routes, the_documentation_lists_the_table)
{
        struct doc_route doc[MAX_DOC_ROUTES];
        size_t n = doc_routes(doc, MAX_DOC_ROUTES);
        bool listed[_CR_MAX] = {};

        cr_expect_eq(n, _CR_MAX, "docs/DAEMON.md lists %zu routes, the table has %d", n, _CR_MAX);
        for (size_t i = 0; i < n; i++) {
                int id = control_route_lookup(doc[i].path);
                cr_expect_geq(id, 0, "documented but not served: %s %s", doc[i].method,
                              doc[i].path);
                if (id < 0)
                        continue;
                cr_expect_str_eq(doc[i].method,
                                 http_method_str((enum http_method) control_route_table[id].method),
                                 "%s", doc[i].path);
                cr_expect(!listed[id], "%s listed twice", doc[i].path);
                listed[id] = true;
        }
        for (int id = 0; id < _CR_MAX; id++)
                cr_expect(listed[id], "served but not documented: %s",
                          control_route_table[id].path);
}

Test(control_routes, each_principal_reaches_what_it_is_promised)
{
        for (int id = 0; id < _CR_MAX; id++) {
                const struct control_route_def *r = &control_route_table[id];
                bool health = id == CR_HEALTHZ || id == CR_READYZ || id == CR_HEALTH;
                cr_expect_eq(control_route_public(id), health, "%s: public", r->path);
                cr_expect(r->principals & CR_PRINCIPAL(PRINCIPAL_ORCHESTRATOR),
                          "%s: the orchestrator reaches every route", r->path);
                cr_expect_eq((bool) (r->principals & CR_PRINCIPAL(PRINCIPAL_AGENT)), health,
                             "%s: the agent reaches no control route", r->path);
                cr_expect_eq((bool) (r->principals & CR_PRINCIPAL(PRINCIPAL_METRICS)),
                             health || id == CR_METRICS, "%s: the scraper reaches /metrics",
                             r->path);
                cr_expect(r->path[0] == '/' && control_route_lookup(r->path) == id, "%s", r->path);
        }
        cr_expect_eq(control_route_lookup("/metricsx"), -1);
        cr_expect_eq(control_route_lookup("/step"), -1, "an env path");
}
