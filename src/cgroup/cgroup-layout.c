/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where the cgroup hierarchies are: the cgroup2 mount and, on hybrid hosts,
 * the directory of the v1 controller mounts (from the one mountinfo parser),
 * and our own cgroup in each (/proc/self/cgroup). Nothing is opened here;
 * cgroup-tree.c opens what this finds.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>

#include "base/macro.h"
#include "base/mountinfo.h"
#include "base/string-table.h"
#include "base/util.h"
#include "cgroup/cgroup-internal.h"

static const char *const cgroup_mode_table[] = {
        [CGROUP_MODE_V2] = "v2",
        [CGROUP_MODE_HYBRID] = "hybrid",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING_FALLBACK(cgroup_mode, enum cgroup_mode, "unknown");

void cgroup_layout_done(struct cgroup_layout *l)
{
        if (!l)
                return;
        free(l->storage);
        *l = (struct cgroup_layout){ 0 };
}

int cgroup_self_path_parse(const char *text, const char *controller, char **ret)
{
        /* Lines are "hierarchy-id:controller-list:path"; the cgroup2 entry is
         * "0::path". The path may contain ':' so split on the first two only. */
        for (const char *p = text; p && *p;) {
                const char *eol = strchr(p, '\n');
                size_t n = eol ? (size_t) (eol - p) : strlen(p);
                const char *c1 = memchr(p, ':', n);
                const char *c2 = c1 ? memchr(c1 + 1, ':', n - (size_t) (c1 + 1 - p)) : NULL;

                if (c2) {
                        const char *list = c1 + 1;
                        size_t llen = (size_t) (c2 - list);
                        const char *path = c2 + 1;
                        size_t plen = n - (size_t) (path - p);
                        bool match = controller ? strn_list_has(list, llen, ',', controller)
                                                : (llen == 0 && c1 - p == 1 && p[0] == '0');
                        if (match) {
                                if (plen == 0 || path[0] != '/' || plen > PATH_MAX)
                                        return -EINVAL;
                                *ret = xstrndup(path, plen);
                                return 0;
                        }
                }
                p = eol ? eol + 1 : NULL;
        }
        return -ENOENT;
}

/* "cgroup" mounts of memory or pids sit in one directory (/sys/fs/cgroup):
 * the v1 root is the parent of either. */
static bool is_v1_anchor(const struct mountinfo_entry *e)
{
        return streq(e->fstype, "cgroup") && (mount_options_has(e->super_options, "memory") ||
                                              mount_options_has(e->super_options, "pids"));
}

int cgroup_layout_detect(struct cgroup_layout *ret, enum cgroup_mode *ret_mode)
{
        cleanup(mountinfo_freep) struct mountinfo *mi = NULL;
        cleanup_free char *v2 = NULL, *v1 = NULL;
        int r;

        r = mountinfo_load_at(AT_FDCWD, "/proc/self/mountinfo", &mi);
        if (r < 0)
                return r;
        for (size_t i = 0; i < mi->n_entries; i++) {
                const struct mountinfo_entry *e = &mi->entries[i];

                /* Paths are built by concatenation below: a mount point the
                 * kernel had to escape (space, tab, newline, backslash) is
                 * never one we set up, so it is not ours to use. */
                if (strpbrk(e->mount_point, " \t\n\\"))
                        continue;
                if (streq(e->fstype, "cgroup2") && !v2)
                        v2 = xstrdup(e->mount_point);
                else if (!v1 && is_v1_anchor(e)) {
                        const char *slash = strrchr(e->mount_point, '/');
                        if (slash && slash != e->mount_point)
                                v1 = xstrndup(e->mount_point, (size_t) (slash - e->mount_point));
                }
        }
        if (!v2)
                return -ENOMEDIUM;

        size_t l2 = strlen(v2), l1 = v1 ? strlen(v1) : 0;
        char *storage = xmalloc(l2 + l1 + 2);
        memcpy(storage, v2, l2 + 1);
        if (v1)
                memcpy(storage + l2 + 1, v1, l1 + 1);
        *ret = (struct cgroup_layout){
                .v2_mount = storage,
                .v1_mount = v1 ? storage + l2 + 1 : NULL,
                .storage = storage,
        };
        if (ret_mode)
                *ret_mode = v1 ? CGROUP_MODE_HYBRID : CGROUP_MODE_V2;
        return 0;
}
