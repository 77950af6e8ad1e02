/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The world the check builds for itself and removes on every path: a
 * private mount namespace, a temporary state dir, a cgroup subtree we are
 * adopted into, an episode directory, canary files and a planted model key,
 * listeners that must stay unreachable, and the paths that must stay
 * hidden.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "enforce/enforce-internal.h"
#include "unit/episode-fs.h"

/* Mount entries under /proc and /sys that the launcher masks
 * (mount-setup.c); only those present on this host are attempted. */
static const char *const kernel_masked[] = {
        "/proc/timer_list",    "/proc/sched_debug", "/proc/kcore",
        "/proc/latency_stats", "/proc/timer_stats", "/sys/firmware",
};

static int write_file(const char *path, const char *content, mode_t mode)
{
        cleanup_close int fd =
                open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd < 0)
                return -errno;
        /* fchmod: the umask must not decide who can read the canary. */
        if (fchmod(fd, mode) < 0)
                return -errno;
        return write_all(fd, content, strlen(content));
}

static char *hex_of(const char *s)
{
        struct strbuf sb = STRBUF_INIT;
        for (const unsigned char *p = (const unsigned char *) s; *p; p++)
                strbuf_addf(&sb, "%02x", *p);
        return strbuf_detach(&sb, NULL);
}

/* Every container opens its mount sources (socket dir, workspace...) as
 * its own root, i.e. as an unprivileged host uid: each ancestor of the
 * state dir must be searchable by others. */
static int ancestors_searchable(const char *path)
{
        cleanup_free char *p = xstrdup(path);

        for (;;) {
                struct stat st;
                if (stat(p[0] ? p : "/", &st) < 0)
                        return -errno;
                if (!(st.st_mode & S_IXOTH))
                        return -EACCES;
                char *slash = strrchr(p, '/');
                if (!slash || !p[0])
                        return 0;
                *slash = '\0';
        }
}

static int make_state(struct enforce_world *R)
{
        const char *parent = R->o->state_parent ?: "/var/tmp";
        char real[PATH_MAX];
        cleanup_free char *tmpl = NULL, *hex = NULL, *canary = NULL, *key = NULL;
        int r;

        if (!realpath(parent, real))
                return -errno;
        /* Inside every container /tmp and /run are fresh tmpfs: a state dir
         * there would be invisible anyway, and the masks would go untested. */
        if (startswith(real, "/tmp") || startswith(real, "/run") || streq(real, "/"))
                return -EINVAL;
        r = ancestors_searchable(real);
        if (r < 0)
                return r;
        tmpl = xasprintf("%s/openenv-enforce.XXXXXX", real);
        if (!mkdtemp(tmpl))
                return -errno;
        R->state = TAKE_PTR(tmpl);
        if (chmod(R->state, 0711) < 0)
                return -errno;

        r = random_hex(16, &hex);
        if (r < 0)
                return r;
        R->canary = xasprintf("%s/canary", R->state);
        canary = xasprintf("openenv-enforce canary %s\n", hex);
        r = write_file(R->canary, canary, 0644);
        if (r < 0)
                return r;
        /* The fake "real key": world-readable on purpose, so only the mask
         * of the state dir can keep it out of reach. */
        key = xasprintf(KEY_PREFIX "%s", hex);
        R->key_file = xasprintf("%s/model-key", R->state);
        r = write_file(R->key_file, key, 0644);
        if (r < 0)
                return r;
        R->marker_hex = hex_of(key);
        /* The launcher must not pass its own environment on: put the key in it. */
        if (setenv(KEY_ENV, key, 1) < 0)
                return -errno;
        R->key_env_set = true;

        R->links = xasprintf("%s/links", R->state);
        if (mkdir(R->links, 0755) < 0 || chmod(R->links, 0755) < 0)
                return -errno;
        cleanup_free char *escape = xasprintf("%s/escape", R->links);
        if (symlink(R->state, escape) < 0)
                return -errno;
        R->symlink = xasprintf("%s/symlink-src", R->state);
        if (symlink(R->state, R->symlink) < 0)
                return -errno;

        cleanup_free char *log = xasprintf("%s/probe.log", R->state);
        R->log_fd = open(log, O_RDWR | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (R->log_fd < 0)
                return -errno;
        return 0;
}

static int make_cgroups(struct enforce_world *R)
{
        enum cgroup_mode mode;
        cleanup_free char *name = NULL;
        int r;

        r = cgroup_layout_detect(&R->layout, &mode);
        if (r < 0)
                return r;
        name = xasprintf("openenv-check-%d", (int) getpid());
        R->layout.subtree_name = name;
        r = cgroup_tree_open(&R->layout, &R->cg);
        R->layout.subtree_name = NULL;
        if (r < 0)
                return r;
        r = cgroup_tree_adopt_self(R->cg);
        if (r < 0)
                return r;
        R->adopted = true;
        return 0;
}

/* The sources of each observer's views, which the daemon would have filled
 * (asset copies, custody inputs): empty directories do for the check. */
static int make_view_sources(struct enforce_world *R)
{
        const struct manifest *m = R->m;
        const struct manifest_zone *obs = manifest_zone(m, MANIFEST_ZONE_OBSERVERS);
        int r;

        for (size_t i = 0; i < m->n_assets; i++) {
                cleanup_free char *d = xasprintf("%s/assets/%s", R->state, m->assets[i].name);
                r = mkdir_p_at(AT_FDCWD, d, 0755);
                if (r < 0)
                        return r;
        }
        {
                /* What grading observers see of the workspace: its custody
                 * copy (empty here). */
                cleanup_free char *copy = unit_workspace_copy_dir(&R->ctx);
                cleanup_free char *ws = xasprintf("%s/ws", copy);
                r = mkdir_p_at(AT_FDCWD, ws, 0755);
                if (r < 0)
                        return r;
        }
        for (size_t k = 0; k < obs->n_containers; k++) {
                const struct manifest_container *c = &obs->containers[k];
                for (size_t i = 0; i < c->n_reads; i++) {
                        if (c->reads[i].kind != MANIFEST_READ_OUTPUT)
                                continue;
                        cleanup_free char *in = unit_observer_dir(&R->ctx, c->name, "inputs");
                        cleanup_free char *d = xasprintf("%s/%s", in, c->reads[i].target);
                        r = mkdir_p_at(AT_FDCWD, d, 0755);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static int listen_unix(struct enforce_world *R, const char *path)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        cleanup_close int fd = -EBADF;

        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        if (R->n_unix >= ELEMENTSOF(R->unix_fds))
                return -E2BIG;
        memcpy(sa.sun_path, path, strlen(path) + 1);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return -errno;
        /* Anyone may connect: only the mask stands between it and the zone. */
        if (chmod(path, 0777) < 0 || listen(fd, 16) < 0)
                return -errno;
        R->unix_fds[R->n_unix++] = TAKE_FD(fd);
        strv_push(&R->unix_paths, xstrdup(path));
        return 0;
}

static int make_listeners(struct enforce_world *R)
{
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
        socklen_t len = sizeof(sa);
        struct ifaddrs *ifa = NULL;
        int one = 1, r;

        R->tcp_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (R->tcp_fd < 0)
                return -errno;
        (void) setsockopt(R->tcp_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(R->tcp_fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(R->tcp_fd, 16) < 0 ||
            getsockname(R->tcp_fd, (struct sockaddr *) &sa, &len) < 0)
                return -errno;
        R->tcp_port = ntohs(sa.sin_port);

        /* The host's own addresses: a container sharing the host's network
         * would reach the listener through any of them. */
        strv_push(&R->canary_hosts, xstrdup("127.0.0.1"));
        if (getifaddrs(&ifa) == 0) {
                for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
                        char buf[INET_ADDRSTRLEN];
                        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET ||
                            strv_length(R->canary_hosts) >= MAX_CANARY_HOSTS)
                                continue;
                        const struct sockaddr_in *a = (const void *) i->ifa_addr;
                        if ((ntohl(a->sin_addr.s_addr) >> 24) == 127)
                                continue;
                        if (inet_ntop(AF_INET, &a->sin_addr, buf, sizeof(buf)))
                                strv_push(&R->canary_hosts, xstrdup(buf));
                }
                freeifaddrs(ifa);
        }

        /* The daemon's control socket and every container's socket dir
         * (hidden services' included), by host path. */
        cleanup_free char *control = xasprintf("%s/control.sock", R->state);
        r = listen_unix(R, control);
        if (r < 0)
                return r;
        for (int z = 0; z < MANIFEST_ZONE_MAX; z++)
                for (size_t k = 0; k < R->m->zones[z].n_containers; k++) {
                        cleanup_free char *dir =
                                unit_socket_dir(&R->ctx, R->m->zones[z].containers[k].name);
                        cleanup_free char *p = xasprintf("%s/canary.sock", dir);
                        r = listen_unix(R, p);
                        if (r < 0)
                                return r;
                }
        return 0;
}

static void make_hidden(struct enforce_world *R)
{
        const struct manifest *m = R->m;

        /* Each asset's source, what the planner masks for it (a file is
         * masked alone, unit_masks()). */
        for (size_t i = 0; i < m->n_assets; i++)
                if (!strv_contains(R->hidden, m->assets[i].path))
                        strv_push(&R->hidden, xstrdup(m->assets[i].path));
        for (size_t i = 0; i < ELEMENTSOF(kernel_masked); i++)
                if (access(kernel_masked[i], F_OK) == 0)
                        strv_push(&R->kernel_masked, xstrdup(kernel_masked[i]));
}

int enforce_world_setup(struct enforce_world *R)
{
        int r;

        /* Our overlays and anything else we mount die with this process. */
        if (unshare(CLONE_NEWNS) < 0)
                return -errno;
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return -errno;
        r = make_state(R);
        if (r < 0)
                return r;
        r = make_cgroups(R);
        if (r < 0)
                return r;
        r = uid_block_acquire((uint32_t) unit_container_count(R->m) * UNIT_UID_RANGE, NULL,
                              &R->uids);
        if (r < 0)
                return r;
        R->episode = xasprintf("%s/episodes/check", R->state);
        R->ctx = (struct unit_plan_context){
                .manifest = R->m,
                .state_dir = R->state,
                .episode_dir = R->episode,
                .episode_id = "check",
                .uid_base = R->uids.base,
                .phase = PHASE_GRADING,
        };
        r = episode_fs_init(R->state);
        if (r < 0)
                return r;
        r = episode_fs_setup(&R->ctx);
        if (r < 0)
                return r;
        R->episode_made = true;
        r = make_view_sources(R);
        if (r < 0)
                return r;
        r = make_listeners(R);
        if (r < 0)
                return r;
        make_hidden(R);
        return 0;
}

void enforce_world_teardown(struct enforce_world *R)
{
        if (R->cg) {
                (void) cgroup_tree_destroy(R->cg);
                R->cg = cgroup_tree_free(R->cg);
        }
        cgroup_layout_done(&R->layout);
        if (R->episode_made)
                (void) episode_fs_teardown(&R->ctx);
        uid_block_release(&R->uids);
        safe_close(R->tcp_fd);
        for (size_t i = 0; i < R->n_unix; i++)
                safe_close(R->unix_fds[i]);
        safe_close(R->log_fd);
        if (R->state)
                (void) rm_rf_at(AT_FDCWD, R->state);
        if (R->key_env_set)
                (void) unsetenv(KEY_ENV);
        free(R->state);
        free(R->episode);
        free(R->canary);
        free(R->key_file);
        free(R->marker_hex);
        free(R->links);
        free(R->symlink);
        strv_free(R->unix_paths);
        strv_free(R->canary_hosts);
        strv_free(R->hidden);
        strv_free(R->kernel_masked);
}
