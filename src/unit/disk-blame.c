/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "unit/disk-blame.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/util.h"
#include "unit/unit-plan.h"

size_t disk_blame_walk(void *arg, char *out, size_t size)
{
        struct disk_blame_args *a = arg;
        struct disk_blame_owned owned[DISK_BLAME_MAX_OWNERS] = {};
        DIR *stack[UNIT_DISK_BLAME_MAX_DEPTH];
        size_t depth = 1, entries = 0, used = 0;

        stack[0] = fdopendir(a->root_fd);
        if (!stack[0])
                return 0;
        while (depth > 0) {
                DIR *d = stack[depth - 1];
                struct dirent *de = entries < UNIT_DISK_BLAME_MAX_ENTRIES ? readdir(d) : NULL;
                struct stat st;

                if (!de) {
                        closedir(d);
                        depth--;
                        continue;
                }
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                entries++;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                for (size_t i = 0; i < a->n && i < DISK_BLAME_MAX_OWNERS; i++)
                        if (st.st_uid >= a->bases[i] && st.st_uid - a->bases[i] < UNIT_UID_RANGE) {
                                owned[i].bytes += (uint64_t) st.st_blocks * 512;
                                owned[i].entries++;
                        }
                if (S_ISDIR(st.st_mode) && depth < ELEMENTSOF(stack)) {
                        int sub = openat(dirfd(d), de->d_name,
                                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        DIR *sd = sub >= 0 ? fdopendir(sub) : NULL;
                        if (sd)
                                stack[depth++] = sd;
                        else
                                safe_close(sub);
                }
        }
        for (size_t i = 0; i < a->n && i < DISK_BLAME_MAX_OWNERS && used < size; i++) {
                int n = snprintf(out + used, size - used, "%llu/%llu ",
                                 (unsigned long long) owned[i].bytes,
                                 (unsigned long long) owned[i].entries);
                if (n < 0)
                        break;
                used += (size_t) n;
        }
        return MIN(used, size);
}

int disk_blame_parse(const char *out, size_t len, size_t n, struct disk_blame_owned *ret)
{
        char buf[DISK_BLAME_MAX_OWNERS * 42 + 1];
        const char *p = buf;

        if (len >= sizeof(buf))
                return -EBADMSG;
        memcpy(buf, out, len);
        buf[len] = '\0';
        for (size_t i = 0; i < n; i++) {
                unsigned long long b, e;
                int used = 0;
                if (sscanf(p, "%llu/%llu %n", &b, &e, &used) < 2 || used <= 0)
                        return -EBADMSG;
                ret[i] = (struct disk_blame_owned){ b, e };
                p += used;
        }
        return 0;
}
