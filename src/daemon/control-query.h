/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The query parameters of a control route. Every value is checked, never
 * cut or ignored: an id longer than the buffer used to read as "no id" and
 * /verdict answered with the live episode's verdict instead of the one
 * asked for. "token" is the relay's (a credential, already checked).
 */
#include <stdbool.h>
#include <stddef.h>

#include "relay/frontend.h"

struct query_param {
        const char *key;
        char *buf; /* the value, NUL-terminated (no escapes: ids and names) */
        size_t size;
        const char *why;   /* the refusal of a bad value */
        const char *value; /* buf once seen, else NULL */
};

/* An episode id as /verdict and /logs take it: 1 to 63 of [A-Za-z0-9._-]
 * (the unit names its episodes within that), into buf. The one spelling of
 * the rule and of its refusal. */
#define QUERY_EPISODE_ID_SIZE 64
struct query_param query_episode_id(char buf[static QUERY_EPISODE_ID_SIZE]);

/* A flag as /verdict's wait and /logs' timestamps take it, "0" or "1":
 * *ret (false when absent); NULL, or why it is refused. */
const char *query_flag(const struct query_param *q, bool *ret);

/* Parses query into params (n of them); NULL, or why it is refused. */
const char *query_parse(const char *query, struct query_param *params, size_t n);
/* why (NULL: nothing) as the reply: 400 bad_request saying why. True if so. */
bool query_refused(const char *why, struct frontend_reply *reply);
