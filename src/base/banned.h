/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Functions that are easy to misuse with untrusted sizes or input. Included
 * into every translation unit by the build (-include), after which any use is
 * a compile error. Use strbuf, snprintf/asprintf, the parse_* helpers and
 * explicit fork/exec instead.
 *
 * System headers must come first: the poison would otherwise hit their
 * declarations. Hence the declarations are pulled in here before poisoning.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <alloca.h>

#undef alloca
#pragma GCC poison strcpy strcat sprintf vsprintf gets strtok atoi atol atoll atof system popen \
        alloca
