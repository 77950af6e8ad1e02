/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: /proc/<pid>/status of a process we do not trust. */
#include <stdint.h>

#include "probe/proc-status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct proc_status s;

        (void) proc_status_parse((const char *) data, size, &s);
        return 0;
}
