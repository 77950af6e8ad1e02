/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "base/parse-util.h"
#include "base/string-table.h"
#include "base/util.h"
#include "probe/namespace-ids.h"

static const char *const ns_kind_table[_NS_KIND_MAX] = {
        [NS_CGROUP] = "cgroup", [NS_IPC] = "ipc",   [NS_MNT] = "mnt",   [NS_NET] = "net",
        [NS_PID] = "pid",       [NS_TIME] = "time", [NS_USER] = "user", [NS_UTS] = "uts",
};

DEFINE_STRING_TABLE_LOOKUP(ns_kind, enum ns_kind);

int ns_link_parse(const char *kind, const char *target, uint64_t *ret)
{
        const char *p = startswith(target, kind);
        char num[24];
        size_t n;

        if (!p || !(p = startswith(p, ":[")))
                return -EINVAL;
        n = strlen(p);
        if (n < 2 || p[n - 1] != ']' || n - 1 >= sizeof(num))
                return -EINVAL;
        memcpy(num, p, n - 1);
        num[n - 1] = '\0';
        return parse_uint64(num, 1, UINT64_MAX, ret);
}

void ns_ids_read_at(int pid_dirfd, struct ns_ids *ret)
{
        struct ns_ids ids = {};

        for (int i = 0; i < _NS_KIND_MAX; i++) {
                char path[32], target[64];
                ssize_t n;
                uint64_t ino;

                (void) snprintf(path, sizeof(path), "ns/%s", ns_kind_table[i]);
                n = readlinkat(pid_dirfd, path, target, sizeof(target) - 1);
                if (n < 0) {
                        ids.err[i] = errno;
                        continue;
                }
                target[n] = '\0';
                if (ns_link_parse(ns_kind_table[i], target, &ino) < 0) {
                        ids.err[i] = EBADMSG;
                        continue;
                }
                ids.ino[i] = ino;
                ids.has[i] = true;
        }
        *ret = ids;
}
