/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the daemon checks and changes of its host before it serves: its own
 * mount namespace, the state directory's ancestors, what the asset copy
 * needs, the fd limits it lives within (daemon-host.h).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "base/fd-util.h"
#include "base/limits.h"
#include "base/log.h"
#include "base/util.h"
#include "daemon/daemon-host.h"
#include "unit/unit-plan.h"

/* What the daemon lives within, said once at start: its own fd limit (the
 * port's connections are refused or evicted at it, never spun on) and what
 * each container gets below the hard one. */
void log_fd_limits(void)
{
        struct rlimit rl;
        char soft[24], hard[24], each[24];

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return;
        (void) snprintf(soft, sizeof(soft), "%llu", (unsigned long long) rl.rlim_cur);
        (void) snprintf(hard, sizeof(hard), "%llu", (unsigned long long) rl.rlim_max);
        (void) snprintf(each, sizeof(each), "%llu", (unsigned long long) unit_container_nofile());
        log_info_fields(LOG_FIELDS({ "nofile_soft", soft }, { "nofile_hard", hard },
                                   { "container_nofile", each }),
                        "file descriptors: %s (hard limit %s); each container gets %s", soft, hard,
                        each);
}

/*
 * Every mount the daemon makes (the state tmpfs, overlays, views) lives in
 * its own mount namespace: when the daemon exits, they are gone, whatever
 * happened — SIGKILL included. A slave of the host's mounts, not private:
 * the host's unmounts still reach us, so a long-lived daemon does not pin
 * every mount that existed when it started (Docker's container roots...),
 * while nothing we mount ever propagates out.
 */
int enter_private_mount_ns(void)
{
        if (unshare(CLONE_NEWNS) < 0)
                return -errno;
        if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
                return -errno;
        return 0;
}

/*
 * Containers resolve their mount sources (socket dirs, overlays) from inside
 * their own user namespaces, as unprivileged host uids: every ancestor of the
 * state directory must be searchable by others.
 */
int check_traversable(const char *state)
{
        cleanup_free char *parent = xstrdup(state), *blocker = NULL;
        char *slash = strrchr(parent, '/');
        int r;

        if (slash)
                slash[slash == parent ? 1 : 0] = '\0';
        r = path_searchable_by_others(parent, &blocker);
        if (r == -EACCES)
                log_error("%s is not searchable by others: containers cannot reach the state "
                          "directory below it",
                          blocker);
        return r;
}

/* Bytes the asset copy needs (a walk of the author's files, bounded). */
uint64_t assets_bytes(const struct manifest *m)
{
        uint64_t total = 0;

        for (size_t i = 0; i < m->n_assets; i++) {
                struct stat st;
                if (stat(m->assets[i].path, &st) == 0)
                        total += S_ISDIR(st.st_mode) ? CUSTODY_MAX_BYTES : (uint64_t) st.st_size;
        }
        return total;
}
