/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: /proc/<pid>/mountinfo of a hostile mount namespace. */
#include <stdint.h>
#include <string.h>

#include "base/mountinfo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct mountinfo *m = NULL;

        if (mountinfo_parse((const char *) data, size, &m) < 0)
                return 0;
        for (size_t i = 0; i < m->n_entries; i++) {
                (void) mountinfo_entry_is_read_only(&m->entries[i]);
                (void) mountinfo_find_by_path(m, m->entries[i].mount_point);
        }
        (void) mountinfo_find_by_id(m, 1);
        mountinfo_free(m);
        return 0;
}
