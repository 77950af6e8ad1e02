/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What every command prints for machines: one JSON document on stdout.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"

int cli_print_json(json_t *j, size_t flags)
{
        char *s = j ? json_dumps(j, JSON_INDENT(2) | flags) : NULL;

        json_decref(j);
        if (!s)
                return -ENOMEM;
        puts(s);
        free(s);
        fflush(stdout);
        return 0;
}
