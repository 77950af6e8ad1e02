/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What `openenvctl status|episodes|verdict|logs|metrics` need of a running
 * unit: one GET of a control route over plain HTTP/1.1, with the
 * orchestrator's token. The unit's URL is OpenEnv's base URL
 * (http://[openenv:TOKEN@]HOST[:PORT], the port 8000 by default); the token
 * comes from the URL, else a token file, else $OPENENVD_TOKEN. Bounded:
 * UNIT_CLIENT_MAX_BYTES of answer, UNIT_CLIENT_TIMEOUT_S per call.
 */
#include <stddef.h>

#include "base/error-detail.h"

#define UNIT_CLIENT_MAX_BYTES (16u << 20)
#define UNIT_CLIENT_TIMEOUT_S 30

struct unit_client {
        char *host;  /* owned: a name or an address (IPv6 without brackets) */
        char *port;  /* owned: decimal */
        char *token; /* owned secret; NULL: none */
        /* borrowed: readable = stop waiting for an answer (a signalfd);
         * -EBADF: none */
        int cancel_fd;
};

/* Parses url; token_file (NULL: none) is read when the URL carries no
 * token, else $OPENENVD_TOKEN. -EINVAL with ret_err for a URL that is
 * not http://HOST[:PORT][/], or an unreadable token file. */
int unit_client_init(struct unit_client *c, const char *url, const char *token_file,
                     struct error_detail *ret_err);
void unit_client_done(struct unit_client *c);

struct unit_answer {
        unsigned status;
        char *body; /* owned, NUL-terminated */
        size_t len;
};

/* GET target (path and query). 0 with *ret, or -errno (-ECONNREFUSED,
 * -ETIMEDOUT, -EBADMSG for an answer that is not HTTP, -EFBIG, -ECANCELED
 * once cancel_fd is readable). */
int unit_client_get(const struct unit_client *c, const char *target, struct unit_answer *ret);
void unit_answer_done(struct unit_answer *a);

/* GET target as the commands report it: EXIT_CODE_OK with the unit's 200
 * answer in *ret; else what went wrong said on stderr (the unit's error
 * message, or why it could not be reached) and EXIT_CODE_FAILED or
 * EXIT_CODE_UNAVAILABLE; -ECANCELED, said nowhere, once cancel_fd is
 * readable. *ret is to unit_answer_done() whatever happened. */
int unit_client_fetch(const struct unit_client *c, const char *target, struct unit_answer *ret);
