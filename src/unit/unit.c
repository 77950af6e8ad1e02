/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "unit/unit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/limits.h"
#include "base/log.h"
#include "base/parse-util.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "sandbox/launcher-native.h"
#include "sandbox/launcher-oci.h"
#include "sandbox/syscall-filter.h"
#include "unit/custody.h"
#include "unit/episode-fs.h"
#include "unit/unit-plan.h"
#include "unit/unit-relays.h"

/* One container of the unit, alive for at most one episode. */
struct unit_member {
        const struct manifest_container *mc; /* borrowed: the manifest */
        char *cgroup;                        /* owned: "zones/<zone>/<name>" */
        struct container *proc;              /* owned while started (native launcher) */
        struct oci_container *oci;           /* owned while started (OCI runtime) */
        int status;                          /* exit status once reaped, else -1 */
};

struct unit {
        struct unit_config cfg; /* strings borrowed from the caller */
        struct phase_machine phase;
        char episode_id[13];
        char *episode_dir; /* owned */
        char *env_socket;  /* owned */
        struct unit_plan_context plan;
        struct unit_member *members; /* owned, one per manifest container */
        size_t n_members;
        struct unit_relays *relays;    /* owned, per episode */
        struct syscall_filter *filter; /* owned: compiled once, used by every native spawn */
        bool assets_copied;
        bool zones_created; /* zones/<zone> exist with their limits (once per unit) */
        bool episode_live;  /* something of the episode may exist: teardown has work */

        /* Verdict of the current episode. */
        enum unit_verdict_kind verdict;
        char *reason;      /* owned */
        char *blame;       /* owned: cgroup subtree */
        json_t *observers; /* owned: name -> result */
};

static const char *const zone_cgroups[MANIFEST_ZONE_MAX] = {
        [MANIFEST_ZONE_AGENT] = "zones/agent",
        [MANIFEST_ZONE_SERVICES] = "zones/services",
        [MANIFEST_ZONE_OBSERVERS] = "zones/observers",
};

static const char *verdict_names[] = {
        [UNIT_VERDICT_NONE] = NULL,
        [UNIT_VERDICT_GRADED] = "graded",
        [UNIT_VERDICT_AGENT_MISBEHAVIOR] = "agent_misbehavior",
        [UNIT_VERDICT_INFRASTRUCTURE_ERROR] = "infrastructure_error",
};

static void limits_from(const struct manifest_resources *r, struct cgroup_limits *ret)
{
        *ret = (struct cgroup_limits){
                .memory_bytes = r->memory_mb * 1024 * 1024,
                .pids = r->pids,
                .cpu = r->cpu,
        };
}

static struct unit_member *member_find(struct unit *u, const struct manifest_container *mc)
{
        for (size_t i = 0; i < u->n_members; i++)
                if (u->members[i].mc == mc)
                        return &u->members[i];
        return NULL;
}

/* Records the episode's outcome; the first failure wins (later ones are
 * consequences of it). */
static void verdict_set(struct unit *u, enum unit_verdict_kind kind, const char *subtree,
                        const char *fmt, ...) printf_fmt(4, 5);
static void verdict_set(struct unit *u, enum unit_verdict_kind kind, const char *subtree,
                        const char *fmt, ...)
{
        va_list ap;
        struct strbuf sb = STRBUF_INIT;

        if (u->verdict == UNIT_VERDICT_AGENT_MISBEHAVIOR ||
            u->verdict == UNIT_VERDICT_INFRASTRUCTURE_ERROR)
                return;
        va_start(ap, fmt);
        strbuf_vaddf(&sb, fmt, ap);
        va_end(ap);
        u->verdict = kind;
        free(u->reason);
        u->reason = strbuf_detach(&sb, NULL);
        free(u->blame);
        u->blame = subtree ? xstrdup(subtree) : NULL;
        log_warning("episode %s: %s: %s (%s)", u->episode_id, verdict_names[kind], u->reason,
                    subtree ?: "-");
}

static int move(struct unit *u, enum phase_actor actor, enum phase to, const char *reason,
                char *ret_refusal, size_t refusal_size)
{
        int r = phase_machine_move(&u->phase, actor, to, reason, now_usec(CLOCK_REALTIME),
                                   ret_refusal, refusal_size);
        if (r >= 0)
                log_info("phase %s -> %s (%s: %s)",
                         phase_to_string(
                                 phase_machine_history(&u->phase, u->phase.history_len - 1)->from),
                         phase_to_string(to), phase_actor_to_string(actor), reason);
        return r;
}

/* --- containers ------------------------------------------------------- */

/*
 * A member runs under the native launcher or an OCI runtime, per its zone's
 * runtime.oci; these four hide which.
 */
static bool member_started(const struct unit_member *mb)
{
        return mb->proc || mb->oci;
}

static pid_t member_pid(const struct unit_member *mb)
{
        return mb->proc ? container_pid(mb->proc) : mb->oci ? oci_container_pid(mb->oci) : 0;
}

static int member_pidfd(const struct unit_member *mb)
{
        return mb->proc ? container_pidfd(mb->proc) : oci_container_pidfd(mb->oci);
}

static int member_try_wait(struct unit_member *mb, int *ret_status)
{
        return mb->proc ? container_try_wait(mb->proc, ret_status)
                        : oci_container_try_wait(mb->oci, ret_status);
}

static const char *oci_runtime_name(enum manifest_oci o)
{
        return o == MANIFEST_OCI_CRUN ? "crun" : o == MANIFEST_OCI_RUNSC ? "runsc" : "runc";
}

static int member_spawn_oci(struct unit *u, struct unit_member *mb, struct container_spec *spec)
{
        const struct manifest_zone *z = manifest_zone(u->cfg.manifest, mb->mc->zone);
        cleanup_free char *dir = xasprintf("%s/run/oci", u->cfg.state_dir);
        /* Relative to the runtime's own cgroup, which is ours (control/):
         * the runtime joins the leaf the unit created, with its limits. */
        cleanup_free char *cg = xasprintf("../%s", mb->cgroup);
        struct oci_error err = { 0 };
        int r;

        r = mkdir_p_at(AT_FDCWD, dir, 0711);
        if (r < 0)
                return r;
        r = oci_container_spawn(&(struct oci_options){ .runtime = oci_runtime_name(z->oci),
                                                       .state_dir = dir,
                                                       .cgroups_path = cg },
                                spec, &mb->oci, &err);
        if (r < 0)
                log_error_errno(r, "container %s: %s", mb->mc->name, err.message ?: "oci: %m");
        oci_error_done(&err);
        return r;
}

static int member_start(struct unit *u, struct unit_member *mb, enum phase phase)
{
        struct container_spec spec = { .stdio_fd = -EBADF };
        struct cgroup_placement place = { .v2_fd = -EBADF };
        struct container_error err = { 0 };
        int r;

        u->plan.phase = phase;
        r = unit_plan_container(&u->plan, mb->mc, &spec);
        if (r < 0)
                return r;
        spec.shim_path = xstrdup(u->cfg.shim_path);
        spec.stdio_fd = u->cfg.log_fd;
        spec.weaken = u->cfg.weaken;
        spec.filter = u->filter;

        if (manifest_zone(u->cfg.manifest, mb->mc->zone)->oci != MANIFEST_OCI_NATIVE) {
                r = member_spawn_oci(u, mb, &spec);
                container_spec_done(&spec);
                if (r >= 0)
                        mb->status = -1;
                return r;
        }
        r = cgroup_placement_open(u->cfg.cgroups, mb->cgroup, &place);
        if (r < 0) {
                container_spec_done(&spec);
                return log_error_errno(r, "container %s: cgroup %s: %m", mb->mc->name, mb->cgroup);
        }
        spec.placement = &place;
        r = container_spawn(&spec, &mb->proc, &err);
        cgroup_placement_done(&place);
        container_spec_done(&spec);
        if (r < 0)
                return log_error_errno(r, "container %s: %s (index %d): %m", mb->mc->name,
                                       container_step_to_string(err.step), err.index);
        mb->status = -1;
        log_debug("container %s started as pid %d", mb->mc->name, (int) member_pid(mb));
        return 0;
}

/* Waits at most timeout for the shim to exit; -ETIMEDOUT if it still runs. */
static int member_wait(struct unit_member *mb, usec_t timeout)
{
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + timeout;
        int status;

        if (!member_started(mb))
                return 0;
        for (;;) {
                int r = member_try_wait(mb, &status);
                if (r >= 0) {
                        mb->status = status;
                        return 0;
                }
                if (r != -EAGAIN)
                        return r;
                usec_t now = now_usec(CLOCK_MONOTONIC);
                if (now >= deadline)
                        return -ETIMEDOUT;
                /* The pidfd turns readable when the shim exits. */
                struct pollfd p = { .fd = member_pidfd(mb), .events = POLLIN };
                int ms = (int) MIN((deadline - now + 999) / 1000, (usec_t) 1000);
                if (poll(&p, 1, ms) < 0 && errno != EINTR)
                        return -errno;
        }
}

static void member_stop(struct unit *u, struct unit_member *mb)
{
        (void) u;
        /* container_free() SIGKILLs the shim (and with it the pid namespace)
         * and reaps it; the cgroup kill below catches anything else. */
        if (member_started(mb) && mb->status < 0)
                (void) member_try_wait(mb, &mb->status);
        mb->proc = container_free(mb->proc);
        mb->oci = oci_container_free(mb->oci);
}

static bool member_running(struct unit_member *mb)
{
        int status;
        if (!member_started(mb) || mb->status >= 0)
                return false;
        if (member_try_wait(mb, &status) >= 0) {
                mb->status = status;
                return false;
        }
        return true;
}

/* --- sockets ---------------------------------------------------------- */

/*
 * Connects to a unix socket in a directory the container owns, without
 * following a symlink the container may have put there: the name is opened
 * O_PATH|O_NOFOLLOW, checked to be a socket, and connected through its
 * /proc/self/fd magic link.
 */
static int connect_socket_nofollow(const char *path)
{
        cleanup_close int pfd = -EBADF, fd = -EBADF;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct stat st;

        pfd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (pfd < 0)
                return -errno;
        if (fstat(pfd, &st) < 0)
                return -errno;
        if (!S_ISSOCK(st.st_mode))
                return -ENOTSOCK;
        (void) snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d", pfd);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return -errno;
        return TAKE_FD(fd);
}

/*
 * The pause between two readiness attempts. Each attempt is a connect() (and
 * for the env one small HTTP exchange), so a tight schedule is cheap, while
 * every pause is latency added to the reset: 100 µs doubling to at most 1 ms
 * for the first 100 ms after start, then at most 10 ms for slow starters.
 * Waits on the container's pidfd, so a container that dies ends the pause.
 */
static void readiness_pause(struct unit_member *mb, usec_t start, usec_t *delay)
{
        usec_t cap = now_usec(CLOCK_MONOTONIC) - start < 100 * USEC_PER_MSEC ? USEC_PER_MSEC
                                                                             : 10 * USEC_PER_MSEC;
        struct timespec ts = { .tv_nsec = (long) (MIN(*delay, cap) * 1000) };
        struct pollfd p = { .fd = member_started(mb) ? member_pidfd(mb) : -1, .events = POLLIN };

        (void) ppoll(&p, 1, &ts, NULL);
        *delay = MIN(*delay * 2, cap);
}

/* Waits until something accepts connections on path (bounded). */
static int wait_socket(struct unit_member *mb, const char *path, usec_t timeout)
{
        usec_t start = now_usec(CLOCK_MONOTONIC), deadline = start + timeout, delay = 100;

        for (;;) {
                int fd = connect_socket_nofollow(path);
                if (fd >= 0) {
                        safe_close(fd);
                        return 0;
                }
                if (!member_running(mb))
                        return -ECHILD;
                if (now_usec(CLOCK_MONOTONIC) >= deadline)
                        return -ETIMEDOUT;
                readiness_pause(mb, start, &delay);
        }
}

/* GET /health over the env's socket: healthy when the status is below 500. */
static int env_health_once(const char *path, usec_t timeout)
{
        static const char req[] = "GET /health HTTP/1.1\r\nHost: env\r\nConnection: close\r\n\r\n";
        cleanup_close int fd = connect_socket_nofollow(path);
        char buf[64] = "";
        struct timeval tv = { .tv_sec = (time_t) (timeout / USEC_PER_SEC),
                              .tv_usec = (suseconds_t) (timeout % USEC_PER_SEC) };
        unsigned status;
        ssize_t n;
        int r;

        if (fd < 0)
                return fd;
        (void) setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        r = write_all(fd, req, sizeof(req) - 1);
        if (r < 0)
                return r;
        n = recv(fd, buf, sizeof(buf) - 1, MSG_WAITALL);
        if (n < 12)
                return -EPROTO;
        buf[n] = '\0';
        if (sscanf(buf, "HTTP/1.%*1[01] %3u", &status) != 1)
                return -EPROTO;
        return status < 500 ? 0 : -EIO;
}

static int wait_env_healthy(struct unit *u, struct unit_member *env)
{
        usec_t start = now_usec(CLOCK_MONOTONIC), deadline = start + u->cfg.start_timeout;
        usec_t delay = 100;

        for (;;) {
                if (env_health_once(u->env_socket, USEC_PER_SEC) >= 0)
                        return 0;
                if (!member_running(env))
                        return -ECHILD;
                if (now_usec(CLOCK_MONOTONIC) >= deadline)
                        return -ETIMEDOUT;
                readiness_pause(env, start, &delay);
        }
}

/* --- assets ------------------------------------------------------------ */

/*
 * A private, world-readable copy of each asset under the (masked) state dir,
 * made once per daemon: observers are other uids in other user namespaces,
 * and the author's files may well be 0600.
 */
static int copy_assets(struct unit *u)
{
        const struct manifest *m = u->cfg.manifest;
        cleanup_free char *root = xasprintf("%s/assets", u->cfg.state_dir);
        cleanup_close int rootfd = -EBADF;
        int r;

        if (u->assets_copied)
                return 0;
        r = rm_rf_at(AT_FDCWD, root);
        if (r < 0 || (r = mkdir_p_at(AT_FDCWD, root, 0755)) < 0)
                return r;
        rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (rootfd < 0)
                return -errno;
        for (size_t i = 0; i < m->n_assets; i++) {
                const struct manifest_asset *a = &m->assets[i];
                cleanup_close int src = open(a->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
                struct custody_error err = { 0 };
                struct stat st;

                if (src < 0)
                        return log_error_errno(-errno, "asset %s: %s: %m", a->name, a->path);
                if (fstat(src, &st) < 0)
                        return -errno;
                if (S_ISDIR(st.st_mode)) {
                        r = custody_copy(src, NULL, rootfd, a->name, NULL, NULL, &err);
                } else if (S_ISREG(st.st_mode)) {
                        /* A file asset appears as /assets/<name>/<basename>. */
                        const char *base = strrchr(a->path, '/');
                        cleanup_free char *dir = xasprintf("%s/%s", root, a->name);
                        cleanup_free char *dst = xasprintf("%s/%s", dir, base ? base + 1 : a->path);
                        cleanup_free char *data = NULL;
                        cleanup_close int out = -EBADF;
                        size_t len;

                        if (mkdir(dir, 0755) < 0)
                                return -errno;
                        r = read_full_fd(src, CUSTODY_MAX_BYTES, &data, &len);
                        if (r < 0)
                                return log_error_errno(r, "asset %s: %m", a->name);
                        out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
                        if (out < 0)
                                return -errno;
                        r = write_all(out, data, len);
                } else {
                        return log_error_errno(-EINVAL, "asset %s: not a file or directory",
                                               a->name);
                }
                if (r < 0) {
                        log_error_errno(r, "asset %s: %s", a->name, err.message ?: "copy failed");
                        custody_error_done(&err);
                        return r;
                }
        }
        u->assets_copied = true;
        return 0;
}

/* --- episode lifecycle -------------------------------------------------- */

static void episode_teardown(struct unit *u)
{
        if (!u->episode_live)
                return;
        /* Relays first: nothing new reaches a container we are stopping. */
        u->relays = unit_relays_free(u->relays);
        for (size_t i = 0; i < u->n_members; i++)
                member_stop(u, &u->members[i]);
        for (int z = 0; z < MANIFEST_ZONE_MAX; z++) {
                (void) cgroup_thaw(u->cfg.cgroups, zone_cgroups[z]);
                (void) cgroup_kill(u->cfg.cgroups, zone_cgroups[z]);
        }
        for (int z = 0; z < MANIFEST_ZONE_MAX; z++) {
                int r = cgroup_wait_empty(u->cfg.cgroups, zone_cgroups[z], 5 * USEC_PER_SEC);
                if (r < 0)
                        log_warning_errno(r, "%s did not empty: %m", zone_cgroups[z]);
        }
        /* Only the leaves are per episode: their counters (OOM kills,
         * refused forks) are the evidence of this episode alone. The zones
         * keep their limits until unit_free(). */
        for (size_t i = 0; i < u->n_members; i++) {
                int r = cgroup_remove(u->cfg.cgroups, u->members[i].cgroup);
                if (r < 0 && r != -ENOENT)
                        log_warning_errno(r, "removing %s: %m", u->members[i].cgroup);
        }
        if (u->episode_dir) {
                int r = episode_fs_teardown(&u->plan);
                if (r < 0)
                        log_warning_errno(r, "episode %s: storage teardown: %m", u->episode_id);
        }
        u->episode_live = false;
}

static int create_cgroups(struct unit *u)
{
        const struct manifest *m = u->cfg.manifest;
        int r;

        /* The zones' limits never change: created once per unit. */
        for (int z = 0; !u->zones_created && z < MANIFEST_ZONE_MAX; z++) {
                struct cgroup_limits lim;
                limits_from(&m->zones[z].resources, &lim);
                r = cgroup_create(u->cfg.cgroups, zone_cgroups[z], &lim);
                if (r < 0)
                        return log_error_errno(r, "cgroup %s: %m", zone_cgroups[z]);
        }
        u->zones_created = true;
        for (size_t i = 0; i < u->n_members; i++) {
                struct cgroup_limits lim;
                limits_from(&u->members[i].mc->effective, &lim);
                r = cgroup_create(u->cfg.cgroups, u->members[i].cgroup, &lim);
                if (r < 0)
                        return log_error_errno(r, "cgroup %s: %m", u->members[i].cgroup);
        }
        return 0;
}

static int start_zone(struct unit *u, enum manifest_zone_kind zone, const char *only,
                      const char *skip)
{
        for (size_t i = 0; i < u->n_members; i++) {
                struct unit_member *mb = &u->members[i];
                int r;
                if (mb->mc->zone != zone)
                        continue;
                if ((only && !streq(mb->mc->name, only)) || (skip && streq(mb->mc->name, skip)))
                        continue;
                r = member_start(u, mb, PHASE_PROVISIONING);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int wait_services(struct unit *u)
{
        for (size_t i = 0; i < u->n_members; i++) {
                struct unit_member *mb = &u->members[i];
                cleanup_free char *dir = NULL, *path = NULL;
                int r;

                if (mb->mc->zone != MANIFEST_ZONE_SERVICES || !mb->mc->port)
                        continue;
                dir = unit_socket_dir(&u->plan, mb->mc->name);
                path = xasprintf("%s/svc.sock", dir);
                r = wait_socket(mb, path, u->cfg.start_timeout);
                if (r < 0)
                        return log_error_errno(r, "service %s did not start: %m", mb->mc->name);
        }
        return 0;
}

static int provision(struct unit *u)
{
        struct unit_member *env = member_find(u, manifest_find_container(u->cfg.manifest, "env"));
        int r;

        r = copy_assets(u);
        if (r < 0)
                return r;
        u->episode_live = true;
        r = episode_fs_setup(&u->plan);
        if (r < 0)
                return log_error_errno(r, "episode %s: storage: %m", u->episode_id);
        r = create_cgroups(u);
        if (r < 0)
                return r;
        r = unit_relays_new(u->cfg.loop, &u->plan,
                            &(struct unit_model){ .upstream = u->cfg.model_upstream,
                                                  .provider = u->cfg.model_provider,
                                                  .key = u->cfg.model_key },
                            &u->relays);
        if (r < 0)
                return log_error_errno(r, "episode %s: relays: %m", u->episode_id);
        /* Services and env start together: what the env needs of a service
         * at start is its relay (created above), and the env only counts as
         * ready once its /health answers, which is retried until
         * start_timeout — an env whose health depends on a service simply
         * answers later. The harness still starts after both. */
        r = start_zone(u, MANIFEST_ZONE_SERVICES, NULL, NULL);
        if (r < 0)
                return r;
        r = start_zone(u, MANIFEST_ZONE_AGENT, "env", NULL);
        if (r < 0)
                return r;
        r = wait_services(u);
        if (r < 0)
                return r;
        r = wait_env_healthy(u, env);
        if (r < 0)
                return log_error_errno(r, "env server did not become healthy: %m");
        return start_zone(u, MANIFEST_ZONE_AGENT, NULL, "env");
}

static void episode_reset_state(struct unit *u)
{
        char *id = NULL;

        if (random_hex(6, &id) < 0)
                id = xasprintf("%012llx", (unsigned long long) now_usec(CLOCK_REALTIME));
        (void) snprintf(u->episode_id, sizeof(u->episode_id), "%s", id);
        free(id);
        free(u->episode_dir);
        u->episode_dir = xasprintf("%s/episodes/%s", u->cfg.state_dir, u->episode_id);
        u->plan.episode_dir = u->episode_dir;
        u->plan.episode_id = u->episode_id;
        u->verdict = UNIT_VERDICT_NONE;
        u->reason = mfree(u->reason);
        u->blame = mfree(u->blame);
        json_decref(u->observers);
        u->observers = json_object();
        for (size_t i = 0; i < u->n_members; i++)
                u->members[i].status = -1;
}

static void start_early_observers(struct unit *u);

int unit_reset(struct unit *u, char *ret_refusal, size_t refusal_size)
{
        int r;

        /* Reset is legal from every phase, for the orchestrator only. */
        if (!phase_move_allowed(ACTOR_ORCHESTRATOR, u->phase.current, PHASE_PROVISIONING))
                return move(u, ACTOR_ORCHESTRATOR, PHASE_PROVISIONING, "reset", ret_refusal,
                            refusal_size);
        episode_teardown(u);
        episode_reset_state(u);
        r = move(u, ACTOR_ORCHESTRATOR, PHASE_PROVISIONING, "reset", ret_refusal, refusal_size);
        if (r < 0)
                return r;

        r = provision(u);
        if (r < 0) {
                verdict_set(u, UNIT_VERDICT_INFRASTRUCTURE_ERROR, "daemon",
                            "provisioning failed: %s", strerror(-r));
                (void) move(u, ACTOR_SYSTEM, PHASE_FAILED, "provisioning failed", NULL, 0);
                episode_teardown(u);
                return r;
        }
        r = move(u, ACTOR_SYSTEM, PHASE_READY, "healthy", NULL, 0);
        if (r >= 0)
                start_early_observers(u);
        return r;
}

int unit_first_step(struct unit *u)
{
        if (u->phase.current != PHASE_READY)
                return 0;
        return move(u, ACTOR_SYSTEM, PHASE_RUNNING, "first step", NULL, 0);
}

/* --- observers ---------------------------------------------------------- */

static int stage_inputs(struct unit *u, struct unit_member *mb)
{
        const struct manifest_container *c = mb->mc;

        for (size_t i = 0; i < c->n_reads; i++) {
                const struct manifest_read *rd = &c->reads[i];
                cleanup_free char *src = NULL, *inputs = NULL, *sub = NULL;
                cleanup_close int sfd = -EBADF, dfd = -EBADF;
                struct custody_error err = { 0 };
                struct custody_stats stats;
                int r;

                if (rd->kind != MANIFEST_READ_OUTPUT)
                        continue;
                src = unit_observer_dir(&u->plan, rd->target, "out");
                inputs = unit_observer_dir(&u->plan, c->name, "inputs");
                sfd = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                dfd = open(inputs, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sfd < 0 || dfd < 0) {
                        verdict_set(u, UNIT_VERDICT_INFRASTRUCTURE_ERROR, "daemon",
                                    "%s inputs: cannot open %s", c->name, sfd < 0 ? src : inputs);
                        return -EIO;
                }
                (void) rm_rf_at(dfd, rd->target);
                r = custody_copy(sfd, NULL, dfd, rd->target, NULL, &stats, &err);
                if (r < 0) {
                        sub = xasprintf("zones/observers/%s", rd->target);
                        if (custody_reason_is_source_fault(err.reason))
                                verdict_set(u, UNIT_VERDICT_AGENT_MISBEHAVIOR, sub, "%s output: %s",
                                            rd->target, err.message);
                        else
                                verdict_set(u, UNIT_VERDICT_INFRASTRUCTURE_ERROR, "daemon",
                                            "%s output: %s", rd->target,
                                            err.message ?: strerror(-r));
                        custody_error_done(&err);
                        return r;
                }
        }
        return 0;
}

/* An observer's result: its /out/verdict.json, a bounded JSON object. */
static json_t *read_result(struct unit *u, struct unit_member *mb, int *ret_error)
{
        cleanup_free char *out = unit_observer_dir(&u->plan, mb->mc->name, "out");
        cleanup_close int dfd = open(out, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        cleanup_close int fd = -EBADF;
        cleanup_free char *data = NULL;
        json_error_t jerr;
        struct stat st;
        json_t *j;
        size_t len;
        int r;

        *ret_error = 0;
        if (dfd < 0)
                return json_null();
        /* The observer wrote this file: no link, no FIFO, no device. */
        fd = openat(dfd, "verdict.json", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0) {
                if (errno != ENOENT)
                        *ret_error = -errno;
                return json_null();
        }
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                *ret_error = -EBADMSG;
                return json_null();
        }
        r = read_full_fd(fd, (size_t) VERDICT_MAX_BYTES, &data, &len);
        if (r < 0) {
                *ret_error = r;
                return json_null();
        }
        j = json_loadb(data, len, JSON_REJECT_DUPLICATES, &jerr);
        if (!j || !json_is_object(j)) {
                json_decref(j);
                *ret_error = -EBADMSG;
                return json_null();
        }
        return j;
}

static int observer_start(struct unit *u, struct unit_member *mb, enum phase phase)
{
        int r = stage_inputs(u, mb);
        if (r < 0)
                return r;
        r = member_start(u, mb, phase);
        if (r < 0)
                verdict_set(u, UNIT_VERDICT_INFRASTRUCTURE_ERROR, mb->cgroup,
                            "observer %s did not start", mb->mc->name);
        return r;
}

/*
 * Ends a started observer and records its result. why: the failure found so
 * far (taken over), NULL if none. killed: the daemon ended it on purpose (an
 * early observer at sealing), so death by SIGKILL is not a failure then.
 */
static int observer_collect(struct unit *u, struct unit_member *mb, char *why_in, bool killed)
{
        cleanup_free char *why = why_in;
        struct cgroup_stats stats = { 0 };
        json_t *result;
        int rerr;

        /* Anything it left behind dies before the next observer starts. */
        (void) cgroup_kill(u->cfg.cgroups, mb->cgroup);
        if (killed) /* its exit status, before container_free() reaps it */
                (void) member_wait(mb, 5 * USEC_PER_SEC);
        member_stop(u, mb);
        if (cgroup_wait_empty(u->cfg.cgroups, mb->cgroup, 5 * USEC_PER_SEC) < 0 && !why)
                why = xasprintf("observer %s did not exit", mb->mc->name);
        if (!why && cgroup_stats(u->cfg.cgroups, mb->cgroup, &stats) >= 0 && stats.oom_kills > 0)
                why = xasprintf("observer %s ran out of memory", mb->mc->name);
        if (!why && mb->status != 0 && !(killed && WIFSIGNALED(mb->status)))
                why = xasprintf("observer %s exited with status %d", mb->mc->name, mb->status);
        result = read_result(u, mb, &rerr);
        if (!why && rerr < 0)
                why = xasprintf("observer %s wrote an invalid verdict.json", mb->mc->name);
        json_object_set_new(u->observers, mb->mc->name, result);
        if (why) {
                verdict_set(u, UNIT_VERDICT_INFRASTRUCTURE_ERROR, mb->cgroup, "%s", why);
                return -EIO;
        }
        return 0;
}

static int run_observer(struct unit *u, struct unit_member *mb, enum phase phase)
{
        char *why = NULL;
        int r;

        if (member_started(mb)) {
                /* Started early (it lists ready or running too): never twice.
                 * Inspection leaves it running; at sealing or grading its turn
                 * is to finish and be collected, in `after` order. */
                if (phase == PHASE_FROZEN)
                        return 0;
        } else {
                r = observer_start(u, mb, phase);
                if (r < 0)
                        return r;
        }
        r = member_wait(mb, u->cfg.observer_timeout);
        if (r == -ETIMEDOUT)
                why = xasprintf("observer %s timed out", mb->mc->name);
        return observer_collect(u, mb, why, false);
}

static bool observer_lists(const struct manifest_container *c, enum phase p)
{
        return c->phases & PHASE_BIT(p);
}

/*
 * Observers listing ready or running start when the unit becomes ready and
 * run in the background, in the observers zone beside the agent: nothing
 * waits for them. A failure to start is the infrastructure's.
 */
static void start_early_observers(struct unit *u)
{
        const struct manifest_container *const *order;
        size_t n = manifest_observer_order(u->cfg.manifest, &order);

        for (size_t i = 0; i < n; i++) {
                struct unit_member *mb = member_find(u, order[i]);
                if (!observer_lists(order[i], PHASE_READY) &&
                    !observer_lists(order[i], PHASE_RUNNING))
                        continue;
                if (observer_start(u, mb, PHASE_READY) < 0)
                        return;
        }
}

/*
 * At sealing, early observers that list no later phase are stopped (if
 * still running) and their /out/verdict.json recorded; those that also list
 * sealed or grading are collected in their turn there.
 */
static void stop_early_observers(struct unit *u)
{
        const struct manifest_container *const *order;
        size_t n = manifest_observer_order(u->cfg.manifest, &order);

        for (size_t i = 0; i < n; i++) {
                struct unit_member *mb = member_find(u, order[i]);
                if (!member_started(mb) || observer_lists(order[i], PHASE_SEALED) ||
                    observer_lists(order[i], PHASE_GRADING))
                        continue;
                (void) observer_collect(u, mb, NULL, member_running(mb));
        }
}

/* Runs, in `after` order, the observers that list phase; stops at the first failure. */
static int run_observers(struct unit *u, enum phase phase)
{
        const struct manifest_container *const *order;
        size_t n = manifest_observer_order(u->cfg.manifest, &order);

        for (size_t i = 0; i < n; i++) {
                if (!(order[i]->phases & PHASE_BIT(phase)))
                        continue;
                int r = run_observer(u, member_find(u, order[i]), phase);
                if (r < 0)
                        return r;
        }
        return 0;
}

int unit_inspect(struct unit *u, json_t **ret_observers, char *ret_refusal, size_t refusal_size)
{
        int r = move(u, ACTOR_ORCHESTRATOR, PHASE_FROZEN, "inspect", ret_refusal, refusal_size);
        if (r < 0)
                return r;
        (void) cgroup_freeze(u->cfg.cgroups, "zones/services");
        r = cgroup_freeze(u->cfg.cgroups, "zones/agent");
        if (r >= 0)
                r = cgroup_wait_frozen(u->cfg.cgroups, "zones/agent", 5 * USEC_PER_SEC);
        if (r < 0)
                log_warning_errno(r, "agent zone did not freeze: %m");
        json_decref(u->observers);
        u->observers = json_object();
        (void) run_observers(u, PHASE_FROZEN);
        if (ret_observers)
                *ret_observers = json_incref(u->observers);
        return 0;
}

int unit_resume(struct unit *u, char *ret_refusal, size_t refusal_size)
{
        int r;

        /* Only a frozen unit resumes: the phase table also lets the
         * orchestrator move ready -> running, which is not a resume. */
        if (u->phase.current != PHASE_FROZEN) {
                if (ret_refusal)
                        (void) snprintf(ret_refusal, refusal_size,
                                        "orchestrator cannot resume the unit from %s",
                                        phase_to_string(u->phase.current));
                return -EPERM;
        }
        r = move(u, ACTOR_ORCHESTRATOR, PHASE_RUNNING, "resume", ret_refusal, refusal_size);
        if (r < 0)
                return r;
        (void) cgroup_thaw(u->cfg.cgroups, "zones/services");
        return cgroup_thaw(u->cfg.cgroups, "zones/agent");
}

/*
 * Evidence of agent misbehaviour that the kill itself would hide: a
 * container whose forks were refused by pids.max, or that was OOM-killed.
 * (Hitting memory.max alone is just reclaim, not misbehaviour.) Checked per
 * leaf, so blame names the subtree.
 */
static void check_agent_limits(struct unit *u)
{
        for (size_t i = 0; i < u->n_members; i++) {
                struct unit_member *mb = &u->members[i];
                struct cgroup_stats st;
                if (mb->mc->zone != MANIFEST_ZONE_AGENT)
                        continue;
                if (cgroup_stats(u->cfg.cgroups, mb->cgroup, &st) < 0)
                        continue;
                if (st.pids_max_events > 0)
                        verdict_set(u, UNIT_VERDICT_AGENT_MISBEHAVIOR, mb->cgroup,
                                    "%s hit its pids limit", mb->mc->name);
                else if (st.oom_kills > 0)
                        verdict_set(u, UNIT_VERDICT_AGENT_MISBEHAVIOR, mb->cgroup,
                                    "%s exhausted its memory", mb->mc->name);
        }
}

/*
 * Detached processes: the shim (the container's PID 1) forks exactly one
 * child, the principal; anything else whose parent is the shim is an orphan
 * the kernel reparented to it, i.e. a process the agent detached (double
 * fork, setsid + exit of its parent). They cannot outlive the principal —
 * when it exits the shim exits and takes the pid namespace with it — so the
 * evidence exists only while the container runs: at sealing, before the
 * kill. Returns how many such processes the leaf holds.
 */
static unsigned count_detached(struct unit *u, struct unit_member *mb)
{
        const char *root = cgroup_tree_path(u->cfg.cgroups, NULL);
        cleanup_free char *procs = NULL, *data = NULL;
        pid_t shim = member_pid(mb);
        unsigned children = 0;
        size_t len;

        if (!root || shim <= 0 || !member_running(mb))
                return 0;
        procs = xasprintf("%s/%s/cgroup.procs", root, mb->cgroup);
        if (read_full_file_at(AT_FDCWD, procs, UNIT_PROCS_MAX_BYTES, &data, &len) < 0)
                return 0;
        for (char *line = data, *next; line && *line; line = next) {
                cleanup_free char *stat = NULL, *path = NULL;
                unsigned pid;
                int ppid;
                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                if (parse_uint(line, 1, INT32_MAX, &pid) < 0 || (pid_t) pid == shim)
                        continue;
                path = xasprintf("/proc/%u/stat", pid);
                if (read_full_file_at(AT_FDCWD, path, 4096, &stat, NULL) < 0)
                        continue; /* gone meanwhile */
                /* "pid (comm) state ppid ...": comm may hold anything but ")". */
                const char *rp = strrchr(stat, ')');
                if (rp && sscanf(rp + 1, " %*c %d", &ppid) == 1 && ppid == shim)
                        children++;
        }
        /* One of them is the principal. */
        return children > 1 ? children - 1 : 0;
}

/*
 * A full workspace (its tmpfs is sized by the agent zone's disk_mb) is the
 * fault of whoever owns the bytes: each container writes as its own host uid
 * range, so the upper layer's files say who filled it. Bounded walk.
 */
struct disk_blame {
        uint64_t bytes[MANIFEST_MAX_CONTAINERS * MANIFEST_ZONE_MAX];
        size_t entries;
};

static void disk_account(struct unit *u, const struct stat *st, struct disk_blame *b)
{
        for (size_t i = 0; i < u->n_members && i < ELEMENTSOF(b->bytes); i++) {
                uid_t base = unit_container_host_uid(u->cfg.manifest, u->members[i].mc) -
                             UNIT_PRINCIPAL_UID;
                if (st->st_uid >= base && st->st_uid - base < UNIT_UID_RANGE)
                        b->bytes[i] += (uint64_t) st->st_blocks * 512;
        }
}

/* Depth-first with an explicit stack of open directories (no recursion). */
static void disk_walk(struct unit *u, int rootfd, struct disk_blame *b)
{
        DIR *stack[UNIT_DISK_BLAME_MAX_DEPTH];
        size_t depth = 0;

        stack[0] = fdopendir(rootfd);
        if (!stack[0]) {
                safe_close(rootfd);
                return;
        }
        depth = 1;
        while (depth > 0) {
                DIR *d = stack[depth - 1];
                struct dirent *de = b->entries < UNIT_DISK_BLAME_MAX_ENTRIES ? readdir(d) : NULL;
                struct stat st;

                if (!de) {
                        closedir(d);
                        depth--;
                        continue;
                }
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                b->entries++;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                disk_account(u, &st, b);
                if (S_ISDIR(st.st_mode) && depth < ELEMENTSOF(stack)) {
                        int sub = openat(dirfd(d), de->d_name,
                                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        DIR *sd = sub >= 0 ? fdopendir(sub) : NULL;
                        if (sd)
                                stack[depth++] = sd;
                        else if (sub >= 0)
                                safe_close(sub);
                }
        }
}

static void check_agent_disk(struct unit *u)
{
        const struct manifest_zone *z = manifest_zone(u->cfg.manifest, MANIFEST_ZONE_AGENT);
        cleanup_free char *upper = xasprintf("%s/workspace/upper", u->episode_dir);
        struct disk_blame b = { { 0 } };
        const char *subtree = "zones/agent";
        const char *who = "the agent zone";
        uint64_t most = 0;
        int fd;

        if (episode_fs_workspace_full(&u->plan) <= 0)
                return;
        fd = open(upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0)
                disk_walk(u, fd, &b);
        for (size_t i = 0; i < u->n_members && i < ELEMENTSOF(b.bytes); i++)
                if (u->members[i].mc->zone == MANIFEST_ZONE_AGENT && b.bytes[i] > most) {
                        most = b.bytes[i];
                        subtree = u->members[i].cgroup;
                        who = u->members[i].mc->name;
                }
        verdict_set(u, UNIT_VERDICT_AGENT_MISBEHAVIOR, subtree,
                    "%s filled its disk (workspace full at %llu MB)", who,
                    (unsigned long long) (z->resources.disk_mb ?: 256));
}

/* Kills the agent zone and waits for the kernel to report it empty. */
static int seal_agent_zone(struct unit *u)
{
        const struct manifest *m = u->cfg.manifest;
        usec_t deadline = (usec_t) (m->kill_deadline_s * (double) USEC_PER_SEC);
        int r;

        check_agent_limits(u);
        for (size_t i = 0; i < u->n_members; i++) {
                struct unit_member *mb = &u->members[i];
                unsigned n;
                if (mb->mc->zone != MANIFEST_ZONE_AGENT)
                        continue;
                n = count_detached(u, mb);
                if (n > 0)
                        verdict_set(u, UNIT_VERDICT_AGENT_MISBEHAVIOR, mb->cgroup,
                                    "%s left %u detached process%s behind", mb->mc->name, n,
                                    n == 1 ? "" : "es");
        }
        check_agent_disk(u);
        (void) cgroup_thaw(u->cfg.cgroups, "zones/agent");
        r = cgroup_kill(u->cfg.cgroups, "zones/agent");
        if (r < 0)
                log_warning_errno(r, "killing the agent zone: %m");
        r = cgroup_wait_empty(u->cfg.cgroups, "zones/agent", deadline);
        if (r < 0) {
                const char *subtree = "zones/agent";
                for (size_t i = 0; i < u->n_members; i++)
                        if (u->members[i].mc->zone == MANIFEST_ZONE_AGENT &&
                            cgroup_is_populated(u->cfg.cgroups, u->members[i].cgroup) > 0) {
                                subtree = u->members[i].cgroup;
                                break;
                        }
                verdict_set(u, UNIT_VERDICT_AGENT_MISBEHAVIOR, subtree,
                            "agent zone did not empty within %gs", m->kill_deadline_s);
        }
        for (size_t i = 0; i < u->n_members; i++)
                if (u->members[i].mc->zone == MANIFEST_ZONE_AGENT)
                        member_stop(u, &u->members[i]);
        return r;
}

int unit_end(struct unit *u, enum phase_actor actor, const char *reason, char *ret_refusal,
             size_t refusal_size)
{
        const struct manifest_zone *svc = manifest_zone(u->cfg.manifest, MANIFEST_ZONE_SERVICES);
        int r;

        /* Refuse early (409) rather than half-sealing. */
        if (!phase_move_allowed(actor, u->phase.current, PHASE_SEALED))
                return move(u, actor, PHASE_SEALED, reason, ret_refusal, refusal_size);

        if (svc->during_grading == MANIFEST_DURING_GRADING_FROZEN)
                (void) cgroup_freeze(u->cfg.cgroups, "zones/services");
        /* No agent byte reaches anything once sealing starts. */
        unit_relays_stop_agent(u->relays);
        (void) seal_agent_zone(u);
        r = move(u, actor, PHASE_SEALED, reason, ret_refusal, refusal_size);
        if (r < 0)
                return r;

        stop_early_observers(u);
        if (u->verdict == UNIT_VERDICT_NONE)
                (void) run_observers(u, PHASE_SEALED);
        if (u->verdict == UNIT_VERDICT_NONE) {
                (void) move(u, ACTOR_SYSTEM, PHASE_GRADING, "agent zone empty", NULL, 0);
                (void) run_observers(u, PHASE_GRADING);
        }
        if (u->verdict == UNIT_VERDICT_NONE)
                u->verdict = UNIT_VERDICT_GRADED;
        (void) move(u, ACTOR_SYSTEM, PHASE_CLOSED, verdict_names[u->verdict], NULL, 0);
        /* The verdict is complete: the caller replies first and tears the
         * episode down afterwards with unit_teardown(). */
        return 0;
}

void unit_teardown(struct unit *u)
{
        episode_teardown(u);
}

/* --- state ------------------------------------------------------------- */

enum phase unit_phase(const struct unit *u)
{
        return u->phase.current;
}

const char *unit_episode_id(const struct unit *u)
{
        return u->episode_id[0] ? u->episode_id : NULL;
}

const char *unit_env_socket(const struct unit *u)
{
        return u->env_socket;
}

bool unit_env_traffic_allowed(const struct unit *u)
{
        return u->phase.current == PHASE_READY || u->phase.current == PHASE_RUNNING;
}

enum unit_verdict_kind unit_verdict_kind(const struct unit *u)
{
        return u->verdict;
}

json_t *unit_verdict(const struct unit *u)
{
        json_t *v = json_object();
        json_object_set_new(v, "episode_id",
                            u->episode_id[0] ? json_string(u->episode_id) : json_null());
        json_object_set_new(v, "verdict",
                            verdict_names[u->verdict] ? json_string(verdict_names[u->verdict])
                                                      : json_null());
        json_object_set_new(v, "reason", u->reason ? json_string(u->reason) : json_null());
        json_object_set_new(v, "blame",
                            u->blame ? json_pack("{s:s}", "subtree", u->blame) : json_null());
        json_object_set_new(v, "observers",
                            u->observers ? json_incref(u->observers) : json_object());
        return v;
}

json_t *unit_info(const struct unit *u)
{
        json_t *info = json_object(), *hist = json_array();
        const struct phase_record *rec;

        for (size_t i = 0; (rec = phase_machine_history(&u->phase, i)); i++)
                json_array_append_new(
                        hist, json_pack("{s:s,s:s,s:s,s:s,s:f}", "from", phase_to_string(rec->from),
                                        "to", phase_to_string(rec->to), "actor",
                                        phase_actor_to_string(rec->actor), "reason", rec->reason,
                                        "at", (double) rec->at / (double) USEC_PER_SEC));
        json_object_set_new(info, "phase", json_string(phase_to_string(u->phase.current)));
        json_object_set_new(info, "episode_id",
                            u->episode_id[0] ? json_string(u->episode_id) : json_null());
        json_object_set_new(info, "isolation", json_string("on"));
        json_object_set_new(info, "verdict",
                            verdict_names[u->verdict] ? json_string(verdict_names[u->verdict])
                                                      : json_null());
        json_object_set_new(info, "history", hist);
        return info;
}

int unit_new(const struct unit_config *cfg, struct unit **ret)
{
        const struct manifest *m = cfg->manifest;
        cleanup(syscall_filter_freep) struct syscall_filter *filter = NULL;
        struct unit *u;
        size_t n = 0;
        int r;

        /* Compiled once here rather than by libseccomp in every child. */
        r = syscall_filter_new(&filter);
        if (r < 0)
                return r;
        u = xcalloc(1, sizeof(*u));
        u->filter = TAKE_PTR(filter);
        u->cfg = *cfg;
        phase_machine_init(&u->phase);
        for (int z = 0; z < MANIFEST_ZONE_MAX; z++)
                n += m->zones[z].n_containers;
        u->members = xcalloc(n, sizeof(*u->members));
        for (int z = 0; z < MANIFEST_ZONE_MAX; z++)
                for (size_t k = 0; k < m->zones[z].n_containers; k++) {
                        const struct manifest_container *c = &m->zones[z].containers[k];
                        u->members[u->n_members++] = (struct unit_member){
                                .mc = c,
                                .cgroup = xasprintf("%s/%s", zone_cgroups[z], c->name),
                                .status = -1,
                        };
                }
        u->plan = (struct unit_plan_context){
                .manifest = m,
                .state_dir = cfg->state_dir,
                .episode_dir = NULL,
                .episode_id = "",
                .extra_masks = cfg->extra_masks,
        };
        u->env_socket = xasprintf("%s/run/sock/env/env.sock", cfg->state_dir);
        u->observers = json_object();
        *ret = u;
        return 0;
}

struct unit *unit_free(struct unit *u)
{
        if (!u)
                return NULL;
        episode_teardown(u);
        if (u->zones_created)
                (void) cgroup_remove(u->cfg.cgroups, "zones");
        syscall_filter_free(u->filter);
        for (size_t i = 0; i < u->n_members; i++)
                free(u->members[i].cgroup);
        free(u->members);
        free(u->episode_dir);
        free(u->env_socket);
        free(u->reason);
        free(u->blame);
        json_decref(u->observers);
        free(u);
        return NULL;
}

bool unit_reap_pid(struct unit *u, pid_t pid)
{
        for (size_t i = 0; i < u->n_members; i++) {
                struct unit_member *mb = &u->members[i];
                if (member_started(mb) && member_pid(mb) == pid) {
                        (void) member_running(mb);
                        return true;
                }
        }
        return false;
}
