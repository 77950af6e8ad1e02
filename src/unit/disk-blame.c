/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "unit/disk-blame.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/dir-walk.h"
#include "base/util.h"
#include "unit/unit-plan.h"

struct disk_blame_walk_state {
        const struct disk_blame_args *a;
        struct disk_blame_owned owned[DISK_BLAME_MAX_OWNERS];
        size_t entries;
};

/* Every entry, directories too, counts toward the uid range that owns it;
 * the walk (dir-walk.h) opens directories by fd below their parent and
 * never follows a link. */
static int disk_blame_visit(const struct dir_walk_entry *e, enum dir_walk_event event,
                            void *userdata)
{
        struct disk_blame_walk_state *w = userdata;
        struct stat st;

        if (event == DIR_WALK_LEAVE || (event == DIR_WALK_ERROR && e->fd >= 0))
                return DIR_WALK_CONTINUE; /* counted when it was found */
        if (w->entries >= UNIT_DISK_BLAME_MAX_ENTRIES)
                return DIR_WALK_STOP;
        w->entries++;
        /* A directory too deep to open (-ELOOP) is still an entry someone owns. */
        if (fstatat(e->parent_fd, e->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return DIR_WALK_SKIP;
        for (size_t i = 0; i < w->a->n && i < DISK_BLAME_MAX_OWNERS; i++)
                if (st.st_uid >= w->a->bases[i] && st.st_uid - w->a->bases[i] < UNIT_UID_RANGE) {
                        w->owned[i].bytes += (uint64_t) st.st_blocks * 512;
                        w->owned[i].entries++;
                }
        return DIR_WALK_CONTINUE;
}

size_t disk_blame_walk(void *arg, char *out, size_t size)
{
        struct disk_blame_walk_state w = { .a = arg };
        size_t used = 0;

        /* The root is level 0: directories down to MAX_DEPTH - 1 are opened. */
        if (dir_walk(w.a->root_fd,
                     &(const struct dir_walk_options){ .max_depth = UNIT_DISK_BLAME_MAX_DEPTH - 1 },
                     disk_blame_visit, &w) < 0)
                return 0;
        for (size_t i = 0; i < w.a->n && i < DISK_BLAME_MAX_OWNERS && used < size; i++) {
                int n = snprintf(out + used, size - used, "%llu/%llu ",
                                 (unsigned long long) w.owned[i].bytes,
                                 (unsigned long long) w.owned[i].entries);
                if (n < 0)
                        break;
                used += (size_t) n;
        }
        return MIN(used, size);
}

int disk_blame_parse(const char *out, size_t len, size_t n, struct disk_blame_owned *ret)
{
        /* "<bytes>/<entries> ": two 20-digit numbers, a slash and a space. */
        char buf[DISK_BLAME_MAX_OWNERS * 42 + 1];
        const char *p = buf;

        if (len >= sizeof(buf) || n > DISK_BLAME_MAX_OWNERS)
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
