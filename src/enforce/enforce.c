/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "enforce/enforce.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/limits.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "cgroup/cgroup.h"
#include "sandbox/launcher-native.h"
#include "unit/episode-fs.h"
#include "unit/uid-block.h"
#include "unit/unit-plan.h"

/* Where the probe binary and the check's own mounts appear inside. /run is
 * a fresh tmpfs in every container, so these names shadow nothing. */
#define PROBE_INSIDE   "/run/openenvd-probe"
#define LINKS_INSIDE   "/run/openenv-links"
#define SYMLINK_INSIDE "/run/openenv-symlink"
#define REPORT_MAIN    "enforce-report.jsonl"
#define REPORT_LINK    "enforce-link-report.jsonl"

/* The probe leaf's own limits: small, so exceeding them is cheap. The
 * zone's cgroup above it keeps the manifest's limits. */
#define PROBE_PIDS         32ULL
#define PROBE_MEMORY_BYTES (64ULL * 1024 * 1024)

#define DEFAULT_TIMEOUT    (60 * USEC_PER_SEC)
#define KEY_PREFIX         "sk-openenv-canary-"
#define KEY_ENV            "OPENENVD_MODEL_KEY"
#define MAX_CANARY_HOSTS   4

/* Mount entries under /proc and /sys that the launcher masks
 * (mount-setup.c); only those present on this host are attempted. */
static const char *const kernel_masked[] = {
        "/proc/timer_list",    "/proc/sched_debug", "/proc/kcore",
        "/proc/latency_stats", "/proc/timer_stats", "/sys/firmware",
};

struct run {
        const struct enforce_options *o;
        const struct manifest *m;
        char *state;      /* owned: temporary state dir */
        char *episode;    /* owned */
        char *canary;     /* owned: <state>/canary */
        char *key_file;   /* owned */
        char *marker_hex; /* owned */
        char *links;      /* owned: <state>/links (bound at LINKS_INSIDE) */
        char *symlink;    /* owned: <state>/symlink-src -> <state> */
        struct unit_plan_context ctx;
        struct uid_block uids; /* this check's own host uid range */
        struct cgroup_layout layout;
        struct cgroup_tree *cg;
        bool adopted;
        bool episode_made;
        int log_fd;
        int tcp_fd;
        uint16_t tcp_port;
        int unix_fds[MANIFEST_MAX_CONTAINERS * MANIFEST_ZONE_MAX + 1];
        size_t n_unix;
        char **unix_paths;    /* owned */
        char **canary_hosts;  /* owned */
        char **hidden;        /* owned */
        char **kernel_masked; /* owned */
        bool key_env_set;
};

/* --- setup ------------------------------------------------------------------- */

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

static int make_state(struct run *R)
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

static int make_cgroups(struct run *R)
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
static int make_view_sources(struct run *R)
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

static int listen_unix(struct run *R, const char *path)
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

static int make_listeners(struct run *R)
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

static void make_hidden(struct run *R)
{
        const struct manifest *m = R->m;

        /* Each asset itself and the directory the planner masks for it. */
        for (size_t i = 0; i < m->n_assets; i++) {
                const char *path = m->assets[i].path;
                struct stat st;
                if (!strv_contains(R->hidden, path))
                        strv_push(&R->hidden, xstrdup(path));
                if (stat(path, &st) == 0 && !S_ISDIR(st.st_mode)) {
                        const char *slash = strrchr(path, '/');
                        if (slash && slash != path) {
                                char *dir = xstrndup(path, (size_t) (slash - path));
                                if (strv_contains(R->hidden, dir))
                                        free(dir);
                                else
                                        strv_push(&R->hidden, dir);
                        }
                }
        }
        for (size_t i = 0; i < ELEMENTSOF(kernel_masked); i++)
                if (access(kernel_masked[i], F_OK) == 0)
                        strv_push(&R->kernel_masked, xstrdup(kernel_masked[i]));
}

static int setup(struct run *R)
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

static void teardown(struct run *R)
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

/* --- one probe container ------------------------------------------------------ */

static int wait_bounded(struct container *c, usec_t timeout, int *ret_status)
{
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + timeout;

        for (;;) {
                int r = container_try_wait(c, ret_status);
                if (r != -EAGAIN)
                        return r;
                usec_t now = now_usec(CLOCK_MONOTONIC);
                if (now >= deadline)
                        return -ETIMEDOUT;
                /* The pidfd turns readable when the shim exits. */
                struct pollfd p = { .fd = container_pidfd(c), .events = POLLIN };
                int ms = (int) MIN((deadline - now + 999) / 1000, (usec_t) 1000);
                if (poll(&p, 1, ms) < 0 && errno != EINTR)
                        return -errno;
        }
}

/* The report, read as root from a directory the container owned: no
 * symlink, no FIFO, bounded. An absent report is an empty one. */
static void read_report(const char *dir, const char *name, char **ret, size_t *ret_len)
{
        cleanup_close int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        cleanup_close int fd = -EBADF;
        struct stat st;

        *ret = NULL;
        *ret_len = 0;
        if (dfd < 0)
                return;
        fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return;
        if (read_full_fd(fd, ENFORCE_REPORT_MAX_BYTES, ret, ret_len) < 0) {
                *ret = NULL;
                *ret_len = 0;
        }
}

struct probe_run {
        struct enforce_probe_exit ex;
        char *start_error; /* owned */
        char *report;      /* owned */
        size_t report_len;
};

static void probe_run_done(struct probe_run *pr)
{
        free(pr->start_error);
        free(pr->report);
}

/* A listening unix socket with an autobound abstract name. */
static int listener_unnamed(void)
{
        cleanup_close int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };

        if (fd < 0)
                return -errno;
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa_family_t)) < 0 || listen(fd, 4) < 0)
                return -errno;
        return TAKE_FD(fd);
}

/* Starts a probe container planned like c, in the cgroup leaf, with the
 * plan's attempts as argv; waits (bounded), kills what is left and reads
 * the report. extra_src/extra_dst: one more bind mount (the symlink test). */
static void run_probe(struct run *R, const struct manifest_container *c, const char *leaf,
                      const struct enforce_plan *p, const char *report_name, const char *extra_src,
                      const char *extra_dst, struct probe_run *ret)
{
        struct container_spec spec = { .stdio_fd = -EBADF };
        struct cgroup_placement place = { .v2_fd = -EBADF };
        struct container_error err = { 0 };
        cleanup(container_freep) struct container *ct = NULL;
        cleanup_free char *sock = unit_socket_dir(&R->ctx, c->name);
        cleanup_free char *out = xasprintf("/run/openenvd/%s", report_name);
        int r, status = -1;

        *ret = (struct probe_run){ 0 };
        r = unit_plan_container(&R->ctx, c, &spec);
        if (r < 0) {
                ret->start_error = xasprintf("planning: %s", strerror(-r));
                return;
        }
        /* Everything but argv stays as planned: mounts, masks, forwarders,
         * uid range, environment, limits. */
        strv_free(spec.argv);
        spec.argv = enforce_plan_probe_argv(p, PROBE_INSIDE, out, R->o->probe_fault);
        container_spec_add_bind(&spec, R->o->probe_path, PROBE_INSIDE,
                                MS_RDONLY | MS_NOSUID | MS_NODEV, true);
        container_spec_add_bind(&spec, R->links, LINKS_INSIDE,
                                MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, false);
        if (extra_src)
                container_spec_add_bind(&spec, extra_src, extra_dst,
                                        MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, false);
        spec.shim_path = xstrdup(R->o->shim_path);
        spec.stdio_fd = R->log_fd;
        spec.weaken = R->o->weaken;
        /* Planned with the daemon's listening socket (env, services): any
         * listener serves, the probe never answers on it. */
        cleanup_close int activation = -EBADF;
        if (spec.n_pass_fds > 0) {
                activation = listener_unnamed();
                if (activation < 0) {
                        ret->start_error =
                                xasprintf("activation socket: %s", strerror(-activation));
                        container_spec_done(&spec);
                        return;
                }
                spec.pass_fds = &activation;
        }

        {
                /* A report left by an earlier run must not count for this one. */
                cleanup_free char *stale = xasprintf("%s/%s", sock, report_name);
                (void) unlink(stale);
        }

        r = cgroup_placement_open(R->cg, leaf, &place);
        if (r < 0) {
                ret->start_error = xasprintf("cgroup %s: %s", leaf, strerror(-r));
                container_spec_done(&spec);
                return;
        }
        spec.placement = &place;
        r = container_spawn(&spec, &ct, &err);
        cgroup_placement_done(&place);
        container_spec_done(&spec);
        if (r < 0) {
                ret->start_error =
                        xasprintf("step %s (index %d): %s", container_step_to_string(err.step),
                                  err.index, strerror(err.error ?: -r));
        } else {
                ret->ex.started = true;
                r = wait_bounded(ct, R->o->probe_timeout ?: DEFAULT_TIMEOUT, &status);
                if (r == -ETIMEDOUT) {
                        ret->ex.timed_out = true;
                        (void) container_kill(ct, SIGKILL);
                        (void) container_wait(ct, &status);
                } else if (r < 0) {
                        status = 128 + SIGKILL;
                }
                ret->ex.status = status;
        }
        ct = container_free(ct);
        /* Anything the probe left behind dies before the next one starts. */
        (void) cgroup_kill(R->cg, leaf);
        (void) cgroup_wait_empty(R->cg, leaf, 5 * USEC_PER_SEC);
        read_report(sock, report_name, &ret->report, &ret->report_len);
        ret->ex.start_error = ret->start_error;
}

/* Connections that reached the canary listeners since the last call
 * (they are non-blocking: accept() stops at EAGAIN). */
static void drain_listeners(struct run *R, unsigned *ret_tcp, unsigned *ret_unix)
{
        unsigned tcp = 0, un = 0;
        int fd;

        while ((fd = accept4(R->tcp_fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
                safe_close(fd);
                tcp++;
        }
        for (size_t i = 0; i < R->n_unix; i++)
                while ((fd = accept4(R->unix_fds[i], NULL, NULL, SOCK_CLOEXEC)) >= 0) {
                        safe_close(fd);
                        un++;
                }
        if (ret_tcp)
                *ret_tcp = tcp;
        if (ret_unix)
                *ret_unix = un;
}

static void probe_symlink_source(struct run *R, const struct manifest_container *c,
                                 const char *leaf, struct enforce_plan *p)
{
        struct enforce_plan sub;
        struct probe_run pr;
        cleanup_free char *inside = xasprintf(SYMLINK_INSIDE "/canary");

        enforce_plan_init(&sub, p->zone, p->container);
        enforce_plan_add(&sub, "read-through-symlinked-source", G_SYMLINK_SOURCES, "read", inside,
                         false);
        enforce_plan_add(&sub, "probe-report", G_PROBE_REPORT, "host", NULL, true);
        run_probe(R, c, leaf, &sub, REPORT_LINK, R->symlink, SYMLINK_INSIDE, &pr);
        if (!pr.ex.started) {
                enforce_plan_set(p, "symlinked-mount-source", ENFORCE_DENIED,
                                 "launcher refused it: %s", pr.start_error ?: "");
        } else {
                enforce_plan_ingest(&sub, pr.report, pr.report_len, &pr.ex);
                const struct enforce_attempt *a = &sub.attempts[0];
                const struct enforce_attempt *rep = &sub.attempts[1];
                if (!enforce_attempt_held(rep))
                        enforce_plan_set(p, "symlinked-mount-source", ENFORCE_ERROR,
                                         "launcher accepted it; %s", rep->detail ?: "");
                else if (a->result == ENFORCE_DENIED)
                        enforce_plan_set(p, "symlinked-mount-source", ENFORCE_DENIED,
                                         "launcher accepted it, target not visible: %s",
                                         a->detail ?: "");
                else
                        enforce_plan_set(p, "symlinked-mount-source", a->result,
                                         "launcher followed it: %s", a->detail ?: "");
        }
        probe_run_done(&pr);
        enforce_plan_done(&sub);
}

static void host_checks(struct run *R, const char *leaf, struct enforce_plan *p)
{
        struct cgroup_stats st;
        unsigned tcp, un;
        int r;

        drain_listeners(R, &tcp, &un);
        if (tcp > 0)
                enforce_plan_set(p, "canary-listener-untouched", ENFORCE_ALLOWED,
                                 "%u connections reached the TCP canary on port %u", tcp,
                                 (unsigned) R->tcp_port);
        else
                enforce_plan_set(p, "canary-listener-untouched", ENFORCE_DENIED,
                                 "no connection reached the TCP canary on port %u",
                                 (unsigned) R->tcp_port);
        if (un > 0)
                enforce_plan_set(p, "canary-sockets-untouched", ENFORCE_ALLOWED,
                                 "%u connections reached the canary unix sockets", un);
        else
                enforce_plan_set(p, "canary-sockets-untouched", ENFORCE_DENIED,
                                 "no connection reached the %zu canary unix sockets", R->n_unix);

        r = cgroup_stats(R->cg, leaf, &st);
        if (r < 0) {
                enforce_plan_set(p, "pids-max-hit", ENFORCE_ERROR, "cgroup stats: %s",
                                 strerror(-r));
                enforce_plan_set(p, "memory-max-hit", ENFORCE_ERROR, "cgroup stats: %s",
                                 strerror(-r));
                return;
        }
        /* The kernel's side of the story: the limit was actually hit. */
        if (st.pids_max_events > 0)
                enforce_plan_set(p, "pids-max-hit", ENFORCE_DENIED, "pids.max refused %llu forks",
                                 (unsigned long long) st.pids_max_events);
        else
                enforce_plan_set(p, "pids-max-hit", ENFORCE_ALLOWED, "pids.max was never hit");
        if (st.oom_kills > 0 || st.memory_max_events > 0)
                enforce_plan_set(p, "memory-max-hit", ENFORCE_DENIED,
                                 "memory.max hit %llu times, %llu OOM kills",
                                 (unsigned long long) st.memory_max_events,
                                 (unsigned long long) st.oom_kills);
        else
                enforce_plan_set(p, "memory-max-hit", ENFORCE_ALLOWED, "memory.max was never hit");
}

static void probe_container(struct run *R, const struct manifest_container *c,
                            struct enforce_plan *p)
{
        const struct manifest_zone *z = manifest_zone(R->m, c->zone);
        const struct cgroup_limits probe_limits = { .memory_bytes = PROBE_MEMORY_BYTES,
                                                    .pids = PROBE_PIDS };
        const struct cgroup_limits zone_limits = {
                .memory_bytes = z->resources.memory_mb * 1024 * 1024,
                .pids = z->resources.pids,
                .cpu = z->resources.cpu,
        };
        cleanup_free char *leaf = xasprintf("%s/probe-%s", unit_zone_cgroup(c->zone), c->name);
        cleanup_free char *link_leaf = xasprintf("%s-link", leaf);
        cleanup_free char *link_path = xasprintf(LINKS_INSIDE "/escape/canary");
        struct enforce_targets t = {
                .state_dir = R->state,
                .canary_file = R->canary,
                .key_file = R->key_file,
                .key_marker_hex = R->marker_hex,
                .hidden_paths = R->hidden,
                .kernel_masked = R->kernel_masked,
                .foreign_sockets = R->unix_paths,
                .canary_hosts = R->canary_hosts,
                .canary_port = R->tcp_port,
                .host_pid = getpid(),
                .link_path = link_path,
                .fork_count = 2 * PROBE_PIDS,
                .alloc_bytes = 2 * PROBE_MEMORY_BYTES,
        };
        struct probe_run pr;
        int r;

        enforce_plan_init(p, manifest_zone_kind_to_string(c->zone), c->name);
        enforce_plan_build(p, &t);

        if (z->oci != MANIFEST_OCI_NATIVE) {
                /* Fail closed: a zone we cannot probe is not a zone that held. */
                struct enforce_probe_exit ex = {
                        .start_error = "zone runs under an OCI runtime: not probed",
                };
                enforce_plan_ingest(p, NULL, 0, &ex);
                for (size_t i = 0; i < p->n_attempts; i++)
                        if (p->attempts[i].result == ENFORCE_PENDING)
                                enforce_plan_set(p, p->attempts[i].name, ENFORCE_MISSING,
                                                 "zone runs under OCI runtime %s: not probed",
                                                 manifest_oci_to_string(z->oci));
                return;
        }

        r = cgroup_create(R->cg, unit_zone_cgroup(c->zone), &zone_limits);
        if (r >= 0)
                r = cgroup_create(R->cg, leaf, &probe_limits);
        if (r >= 0)
                r = cgroup_create(R->cg, link_leaf, &probe_limits);
        if (r < 0) {
                cleanup_free char *why = xasprintf("cgroup %s: %s", leaf, strerror(-r));
                struct enforce_probe_exit ex = { .start_error = why };
                enforce_plan_ingest(p, NULL, 0, &ex);
                enforce_plan_set(p, "canary-listener-untouched", ENFORCE_ERROR, "not probed");
                enforce_plan_set(p, "canary-sockets-untouched", ENFORCE_ERROR, "not probed");
                enforce_plan_set(p, "pids-max-hit", ENFORCE_ERROR, "not probed");
                enforce_plan_set(p, "memory-max-hit", ENFORCE_ERROR, "not probed");
                enforce_plan_set(p, "symlinked-mount-source", ENFORCE_ERROR, "not probed");
                return;
        }

        drain_listeners(R, NULL, NULL);
        run_probe(R, c, leaf, p, REPORT_MAIN, NULL, NULL, &pr);
        enforce_plan_ingest(p, pr.report, pr.report_len, &pr.ex);
        host_checks(R, leaf, p);
        probe_run_done(&pr);

        probe_symlink_source(R, c, link_leaf, p);
        (void) cgroup_remove(R->cg, leaf);
        (void) cgroup_remove(R->cg, link_leaf);
}

/* --- entry points ------------------------------------------------------------ */

int enforce_run(const struct enforce_options *o, struct enforce_report **ret)
{
        struct run R = { .o = o, .m = o->manifest, .log_fd = -EBADF, .tcp_fd = -EBADF };
        struct enforce_report *rep;
        size_t n = 0;
        int r;

        if (!o->manifest || !o->shim_path || !o->probe_path)
                return -EINVAL;
        if (access(o->probe_path, X_OK) < 0 || access(o->shim_path, X_OK) < 0)
                return -errno;

        r = setup(&R);
        if (r < 0) {
                teardown(&R);
                return r;
        }
        for (int z = 0; z < MANIFEST_ZONE_MAX; z++)
                n += R.m->zones[z].n_containers;
        rep = xcalloc(1, sizeof(*rep));
        rep->plans = xcalloc(n, sizeof(*rep->plans));
        for (int z = 0; z < MANIFEST_ZONE_MAX; z++)
                for (size_t k = 0; k < R.m->zones[z].n_containers; k++)
                        probe_container(&R, &R.m->zones[z].containers[k],
                                        &rep->plans[rep->n_plans++]);
        teardown(&R);
        *ret = rep;
        return 0;
}

struct enforce_report *enforce_report_free(struct enforce_report *r)
{
        if (!r)
                return NULL;
        for (size_t i = 0; i < r->n_plans; i++)
                enforce_plan_done(&r->plans[i]);
        free(r->plans);
        return mfree(r);
}

bool enforce_report_held(const struct enforce_report *r)
{
        if (r->n_plans == 0)
                return false;
        for (size_t i = 0; i < r->n_plans; i++)
                if (!enforce_plan_held(&r->plans[i]))
                        return false;
        return true;
}

json_t *enforce_report_to_json(const struct enforce_report *r)
{
        json_t *o = json_object(), *probes = json_array();

        for (size_t i = 0; i < r->n_plans; i++)
                json_array_append_new(probes, enforce_plan_to_json(&r->plans[i]));
        json_object_set_new(o, "held", json_boolean(enforce_report_held(r)));
        json_object_set_new(o, "probes", probes);
        return o;
}

void enforce_report_format(const struct enforce_report *r, FILE *f)
{
        size_t failed = 0, total = 0;

        enforce_plans_format(r->plans, r->n_plans, f);
        for (size_t i = 0; i < r->n_plans; i++)
                for (int g = 0; g < _G_MAX; g++) {
                        total++;
                        if (!enforce_plan_guarantee_held(&r->plans[i], (enum enforce_guarantee) g))
                                failed++;
                }
        if (enforce_report_held(r))
                fprintf(f, "\nenforcement: all %zu guarantees held in %zu probe containers\n",
                        total, r->n_plans);
        else
                fprintf(f, "\nenforcement: %zu of %zu guarantees FAILED\n", failed, total);
}
