/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The one normalisation of a request target on the unit's port: what the
 * frontend authorises is what it forwards, byte for byte, so no spelling of
 * a path can mean one thing to the token check and another to the env
 * server.
 *
 * Accepted: origin-form only ("/path?query", RFC 9112 3.2.1), made of the
 * characters RFC 3986 allows there (pchar, "/" and, in the query, "?") and
 * well-formed percent-escapes. Everything else is -EBADMSG (a 400): a
 * fragment or raw '#', spaces, quotes, backslashes, non-ASCII bytes, "*",
 * absolute URIs.
 *
 * The path is normalised: escapes of unreserved characters are decoded
 * ("%7E" → "~", "%2e" → "."), all other escapes are kept with upper-case
 * hex; escapes of NUL, controls, '/' and '\' are refused (a server might
 * decode them into structure); empty, "." and ".." segments are refused
 * rather than resolved (no client needs them). The query is kept as sent,
 * minus every "token" parameter (a credential: its value is returned and
 * never forwarded).
 */
#include <stddef.h>

struct request_target {
        char *target; /* owned: normalised path + ("?" query minus token), as forwarded */
        char *route;  /* owned: the normalised path, one trailing slash dropped, for matching */
        char *token;  /* owned: the decoded value of the token parameter; NULL: none */
        unsigned n_tokens; /* token parameters seen (more than one is ambiguous) */
};

int request_target_parse(const char *raw, size_t len, struct request_target *ret);
void request_target_done(struct request_target *t);
