/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzzes the parsers of kernel-provided cgroup text: /proc/<pid>/cgroup
 * (read for blame from processes the agent controls the cgroup of),
 * flat-keyed files (cgroup.events, memory.events) and relative paths.
 */
#include <stdint.h>
#include <string.h>

#include "base/util.h"
#include "cgroup/cgroup-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const char *const ctrls[] = { NULL, "memory", "pids", "cpu", "freezer" };
        cleanup_free char *s = NULL;
        uint64_t v;

        if (size > 64 * 1024)
                return 0;
        s = xstrndup((const char *) data, size);
        for (size_t i = 0; i < sizeof(ctrls) / sizeof(ctrls[0]); i++) {
                char *path = NULL;
                if (cgroup_self_path_parse(s, ctrls[i], &path) == 0) {
                        /* A parsed path is absolute and has no newline. */
                        if (path[0] != '/' || strchr(path, '\n'))
                                __builtin_trap();
                        free(path);
                }
        }
        (void) cgroup_keyed_get(s, "populated", &v);
        (void) cgroup_keyed_get(s, "oom_kill", &v);
        if (cgroup_rel_valid(s, true) &&
            (strstr(s, "/../") || strncmp(s, "../", 3) == 0 || s[0] == '/'))
                __builtin_trap();
        return 0;
}
