/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzzes the unit's port target normalisation and credentials. Invariants:
 * the normalised target parses again to itself (one normalisation, not
 * two), holds no '#', and its path no escape of an unreserved character, no
 * "." or ".." segment; the route is the target's path (minus one trailing slash); a
 * Basic credential never authenticates unless its password is the token.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "relay/credentials.h"
#include "relay/http-head.h"
#include "relay/request-target.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_target(const char *raw, size_t size)
{
        struct request_target t, again;
        size_t path_len;

        if (request_target_parse(raw, size, &t) < 0)
                return;
        path_len = strcspn(t.target, "?");
        if (strchr(t.target, '#') || t.target[0] != '/')
                abort();
        /* The path: no dot segments, no empty one, unreserved escapes decoded. */
        char *path = xstrndup(t.target, path_len);
        if (strstr(path, "/./") || strstr(path, "/../") || strstr(path, "//") ||
            strstr(path, "%7E") || strstr(path, "%2E") || strstr(path, "%41") ||
            strstr(path, "%7e"))
                abort();
        free(path);
        if (strncmp(t.route, t.target, strlen(t.route)) != 0 || strlen(t.route) > path_len)
                abort();
        if (request_target_parse(t.target, strlen(t.target), &again) < 0 ||
            strcmp(again.target, t.target) != 0 || strcmp(again.route, t.route) != 0 ||
            again.n_tokens != 0)
                abort();
        request_target_done(&again);
        request_target_done(&t);
}

static void check_credentials(const char *raw, size_t size)
{
        static char token[] = "tok";
        static const struct credentials c = { .orchestrator = token };
        struct http_head *h = malloc(sizeof(*h));
        char *req;

        if (!h)
                return;
        /* The input as the value of an Authorization header. */
        req = xasprintf("GET / HTTP/1.1\r\nHost: x\r\nAuthorization: %.*s\r\n\r\n", (int) size,
                        raw);
        if (memchr(raw, 0, size) == NULL &&
            http_head_parse(req, strlen(req), false, false, h) == 0 &&
            credentials_check(&c, h, NULL, 0) == PRINCIPAL_ORCHESTRATOR &&
            !strcasestr(req, "bearer tok") && !strcasestr(req, "basic "))
                abort();
        free(req);
        free(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        check_target((const char *) data, size);
        check_credentials((const char *) data, size);
        return 0;
}
