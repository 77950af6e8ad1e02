/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The isolated daemon: one event loop serving the unit's port, driving the
 * unit, reaping every child. Nothing in here waits: control calls that take
 * time (a reset, an inspection, an end) are answered when the unit reports
 * back, while /healthz, /info and the relays go on.
 */
#include "daemon/daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/event-loop.h"
#include "base/fd-util.h"
#include "base/limits.h"
#include "base/log.h"
#include "base/prom-text.h"
#include "base/sd-notify.h"
#include "base/util.h"
#include "cgroup/cgroup.h"
#include "daemon/control-logs.h"
#include "daemon/control-query.h"
#include "daemon/daemon-host.h"
#include "daemon/metrics.h"
#include "relay/credentials.h"
#include "relay/frontend.h"
#include "relay/http-proxy.h"
#include "relay/listen-socket.h"
#include "sandbox/host-view.h"
#include "unit/assets.h"
#include "unit/uid-block.h"
#include "unit/unit-plan.h"
#include "unit/unit.h"

#define MODEL_KEY_MAX 4096
/* The state tmpfs holds the asset copy plus the daemon's own small files
 * (mount points, sockets, bundles); container-writable storage sits on
 * tmpfs of its own, mounted below it. */
#define STATE_BASE_BYTES (64ULL * 1024 * 1024)

enum op_kind {
        OP_RESET,
        OP_INSPECT,
        OP_END,
        OP_VERDICT, /* GET /verdict?wait=1 */
};

/* A control request waiting for the unit. */
struct pending_op {
        struct daemon *d;
        enum op_kind kind;
        const char *refusal; /* the phase machine's words, when refused at once */
        unsigned lane;       /* the lane it acts on */
        char episode_id[QUERY_EPISODE_ID_SIZE]; /* whose verdict it answers with; "": the first
                                                   lane's */
        struct http_handle *h;                  /* the proxy's handle of the waiting client */
        struct pending_op *next;
};

struct daemon {
        const struct daemon_options *opts; /* borrowed */
        const struct manifest *manifest;   /* borrowed */
        struct loop *loop;                 /* owned */
        struct cgroup_tree *cgroups;       /* owned */
        struct unit *unit;                 /* owned */
        struct frontend *frontend;         /* owned */
        struct uid_block uids;             /* owned */
        struct credentials creds;          /* owned */
        char *model_key;                   /* owned, wiped on exit */
        struct pending_op *pending;        /* owned */
        struct loop_source *signals[3];    /* owned by the loop */
        bool state_mounted;
        double start_time;          /* CLOCK_REALTIME, seconds: process_start_time_seconds */
        struct metrics_self self;   /* owned: for /metrics */
        struct host_view host_view; /* owned: the containers' root without --rootfs */
};

/* --- control API --------------------------------------------------------- */

static void reply_json(struct frontend_reply *reply, unsigned status, json_t *j)
{
        reply->status = status;
        reply->json = json_dumps(j, JSON_COMPACT);
        json_decref(j);
}

/* The error and words for people: the phase machine's refusal, or why an
 * episode could not start; never a path or an errno text (the log's). */
static void reply_error(struct daemon *d, struct frontend_reply *reply, int r, const char *refusal)
{
        if (r == -EPERM || r == -ECANCELED || r == -EBUSY) {
                reply->status = 409;
                reply->error_code = "conflict";
                if (r == -EPERM && refusal && *refusal)
                        reply->error_message = xstrdup(refusal);
                else if (r == -ECANCELED)
                        reply->error_message = xstrdup("superseded: a reset or an end came first");
                return;
        }
        reply->status = 500;
        reply->error_code = "infrastructure_error";
        if (r == -EIO)
                (void) unit_ready(d->unit, &reply->error_message);
}

static void op_free(struct daemon *d, struct pending_op *op)
{
        for (struct pending_op **p = &d->pending; *p; p = &(*p)->next)
                if (*p == op) {
                        *p = op->next;
                        break;
                }
        free(op);
}

static void op_done(void *userdata, int result)
{
        struct pending_op *op = userdata;
        struct daemon *d = op->d;
        struct frontend_reply reply = {};

        if (result < 0)
                reply_error(d, &reply, result, op->refusal);
        else if (op->kind == OP_END || op->kind == OP_VERDICT) {
                /* Its episode's (the first lane's without one); the first
                 * lane's when that one is no longer kept. */
                json_t *v = unit_verdict(d->unit, op->episode_id[0] ? op->episode_id : NULL);
                reply_json(&reply, 200, v ?: unit_verdict(d->unit, NULL));
        } else if (op->kind == OP_INSPECT) {
                json_t *j = unit_info(d->unit);
                json_object_set_new(j, "observers", unit_inspection(d->unit, op->lane));
                reply_json(&reply, 200, j);
        } else
                reply_json(&reply, 200, unit_info(d->unit));
        frontend_answer(op->h, &reply);
        op_free(d, op);
}

static struct pending_op *op_new(struct daemon *d, enum op_kind kind, unsigned lane,
                                 const struct frontend_request *req)
{
        struct pending_op *op = xcalloc(1, sizeof(*op));
        const char *id = unit_episode_id(d->unit, lane);

        op->d = d;
        op->kind = kind;
        op->lane = lane;
        if (id)
                (void) snprintf(op->episode_id, sizeof(op->episode_id), "%s", id);
        op->h = frontend_later(req);
        op->next = d->pending;
        d->pending = op;
        return op;
}

static void on_pending_gone(void *userdata, struct http_handle *h)
{
        struct daemon *d = userdata;

        for (struct pending_op *op = d->pending; op; op = op->next)
                if (op->h == h) {
                        unit_forget(d->unit, op);
                        op_free(d, op);
                        return;
                }
}

static void control_metrics(struct daemon *d, const struct frontend_request *req,
                            struct frontend_reply *reply)
{
        (void) req;
        struct unit_stats us;
        struct http_proxy_stats relay;
        struct cgroup_stats subtree;
        bool have_subtree = cgroup_stats(d->cgroups, "", &subtree) >= 0;

        unit_stats(d->unit, &us);
        frontend_stats(d->frontend, &relay);
        reply->text = metrics_render(
                &(struct metrics_input){
                        .unit = &us,
                        .phase = unit_phase(d->unit),
                        .relay = &relay,
                        .connections = frontend_connections(d->frontend),
                        .subtree = have_subtree ? &subtree : NULL,
                        .start_time = d->start_time,
                        .self = &d->self,
                },
                &reply->text_len);
        reply->content_type = PROM_TEXT_CONTENT_TYPE;
        reply->status = 200;
        unit_stats_done(&us);
}

static void control_info(struct daemon *d, const struct frontend_request *req,
                         struct frontend_reply *reply)
{
        (void) req;
        reply_json(reply, 200, unit_info(d->unit));
}

static void control_episodes(struct daemon *d, const struct frontend_request *req,
                             struct frontend_reply *reply)
{
        (void) req;
        reply_json(reply, 200, unit_episodes(d->unit));
}

static void control_verdict(struct daemon *d, const struct frontend_request *req,
                            struct frontend_reply *reply)
{
        char id[QUERY_EPISODE_ID_SIZE], wait[2];
        struct query_param q[] = {
                query_episode_id(id),
                { "wait", wait, sizeof(wait), "wait: 0 or 1", NULL },
        };
        bool wait_final;
        json_t *v;
        int lane;

        if (query_refused(query_parse(req->query, q, ELEMENTSOF(q)), reply) ||
            query_refused(query_flag(&q[1], &wait_final), reply))
                return;
        /* wait=1: a live episode's verdict once it is final, instead of
         * a client polling through its grading (without an id, the first
         * lane's). */
        lane = q[0].value ? unit_lane_of(d->unit, q[0].value) : 0;
        if (lane >= 0 && wait_final && unit_verdict_pending(d->unit, (unsigned) lane)) {
                struct pending_op *op = op_new(d, OP_VERDICT, (unsigned) lane, req);
                int r = unit_wait_verdict(d->unit, (unsigned) lane, op_done, op);
                reply->later = true;
                if (r != 1)
                        op_done(op, r < 0 ? r : 0);
                return;
        }
        v = unit_verdict(d->unit, q[0].value);
        if (!v) {
                /* Older than what is kept, or never one of this unit's. */
                reply->status = 404;
                reply->error_code = "not_found";
                reply->error_message =
                        xasprintf("no episode %s among the live one and the last %u that ended "
                                  "(openenvd --verdict-history)",
                                  q[0].value, unit_verdict_history(d->unit));
                return;
        }
        reply_json(reply, 200, v);
}

static void control_logs_of(struct daemon *d, const struct frontend_request *req,
                            struct frontend_reply *reply)
{
        control_logs(d->manifest, d->unit, req, reply);
}

/* The phase machine's refusal is the orchestrator's to read (409), and the
 * log's (docs/DAEMON.md: a refusal names actor, from and to). */
static void log_refusal(const struct frontend_request *req, int r, const char *refusal)
{
        if (r == -EPERM)
                log_info_fields(LOG_FIELDS({ "route", req->route }), "%s refused: %s", req->route,
                                refusal);
}

/* The lane an operation acts on: the one whose live episode ?episode_id=
 * names; without one, the only lane. -1: refused (the reply says why). */
static int query_lane(struct daemon *d, const struct frontend_request *req,
                      struct frontend_reply *reply)
{
        char id[QUERY_EPISODE_ID_SIZE];
        struct query_param q[] = { query_episode_id(id) };
        int lane;

        if (query_refused(query_parse(req->query, q, ELEMENTSOF(q)), reply))
                return -1;
        if (!q[0].value) {
                if (unit_lanes(d->unit) == 1)
                        return 0;
                reply->status = 400;
                reply->error_code = "bad_request";
                reply->error_message = xasprintf(
                        "this unit runs up to %u episodes at once: name one (?episode_id=; "
                        "GET /episodes lists the live ones)",
                        unit_lanes(d->unit));
                return -1;
        }
        lane = unit_lane_of(d->unit, q[0].value);
        if (lane < 0) {
                reply->status = 404;
                reply->error_code = "not_found";
                reply->error_message =
                        xasprintf("no live episode %s (GET /episodes lists them)", q[0].value);
        }
        return lane;
}

static void control_resume(struct daemon *d, const struct frontend_request *req,
                           struct frontend_reply *reply)
{
        char refusal[128] = "";
        int lane = query_lane(d, req, reply), r;

        if (lane < 0)
                return;
        r = unit_resume(d->unit, (unsigned) lane, refusal, sizeof(refusal));
        if (r < 0) {
                log_refusal(req, r, refusal);
                reply_error(d, reply, r, refusal);
                return;
        }
        reply_json(reply, 200, unit_info(d->unit));
}

/* The routes the unit answers once an operation ends (op_done()). */
static void control_operation(struct daemon *d, const struct frontend_request *req,
                              struct frontend_reply *reply)
{
        char refusal[128] = "";
        struct pending_op *op;
        int lane = query_lane(d, req, reply), r;

        if (lane < 0)
                return;
        switch (req->id) {
        case CR_RESET_UNIT:
                op = op_new(d, OP_RESET, (unsigned) lane, req);
                r = unit_reset(d->unit, (unsigned) lane, "reset", op_done, op, refusal,
                               sizeof(refusal));
                break;
        case CR_INSPECT:
                op = op_new(d, OP_INSPECT, (unsigned) lane, req);
                r = unit_inspect(d->unit, (unsigned) lane, op_done, op, refusal, sizeof(refusal));
                break;
        default:
                op = op_new(d, OP_END, (unsigned) lane, req);
                r = unit_end(d->unit, (unsigned) lane, ACTOR_ORCHESTRATOR, "ended_by_orchestrator",
                             op_done, op, refusal, sizeof(refusal));
                break;
        }
        reply->later = true;
        if (r == 1)
                return; /* op_done() answers */
        log_refusal(req, r, refusal);
        op->refusal = refusal;
        op_done(op, r < 0 ? r : 0);
}

typedef void control_fn(struct daemon *d, const struct frontend_request *req,
                        struct frontend_reply *reply);

/* One handler per route the frontend asks the unit about, by the route
 * table's index (relay/control-routes.h); the public ones it answers
 * itself. daemon_new() refuses to start with a route left out. */
static control_fn *const control_handlers[_CR_MAX] = {
        [CR_INFO] = control_info,
        [CR_EPISODES] = control_episodes,
        [CR_VERDICT] = control_verdict,
        [CR_LOGS] = control_logs_of,
        [CR_METRICS] = control_metrics,
        [CR_RESET_UNIT] = control_operation,
        [CR_INSPECT] = control_operation,
        [CR_RESUME] = control_resume,
        [CR_END_EPISODE] = control_operation,
};

static void on_control(void *userdata, const struct frontend_request *req,
                       struct frontend_reply *reply)
{
        struct daemon *d = userdata;

        /* A route that takes no parameter refuses a query it cannot
         * understand, never ignores it. */
        if (!control_route_table[req->id].query &&
            query_refused(query_parse(req->query, NULL, 0), reply))
                return;
        control_handlers[req->id](d, req, reply);
}

/* Whether every route the frontend may ask about has its handler. */
static bool control_handlers_complete(void)
{
        for (int id = 0; id < _CR_MAX; id++)
                if (!control_route_public(id) && !control_handlers[id]) {
                        log_error("internal error: no handler for %s",
                                  control_route_table[id].path);
                        return false;
                }
        return true;
}

static bool on_env_allowed(void *userdata, unsigned lane)
{
        struct daemon *d = userdata;
        return unit_env_traffic_allowed(d->unit, lane);
}

static const char *on_phase(void *userdata)
{
        struct daemon *d = userdata;
        return phase_to_string(unit_phase(d->unit));
}

static bool on_ready(void *userdata, char **ret_reason)
{
        struct daemon *d = userdata;
        return unit_ready(d->unit, ret_reason);
}

static int on_request_episode(void *userdata, unsigned lane, frontend_done_fn done, void *cookie)
{
        struct daemon *d = userdata;
        return unit_request_episode(d->unit, lane, done, cookie);
}

static void on_forget(void *userdata, void *cookie)
{
        struct daemon *d = userdata;
        unit_forget(d->unit, cookie);
}

static void on_action(void *userdata, unsigned lane, const struct openenv_action *a)
{
        struct daemon *d = userdata;
        unit_note_actions(d->unit, lane, a);
}

static void on_done(void *userdata, unsigned lane)
{
        struct daemon *d = userdata;
        unit_note_done(d->unit, lane);
}

static int on_acquire(void *userdata)
{
        struct daemon *d = userdata;
        return unit_lane_acquire(d->unit);
}

static void on_release(void *userdata, unsigned lane)
{
        struct daemon *d = userdata;
        unit_lane_release(d->unit, lane);
}

static const struct frontend_ops frontend_ops = {
        .control = on_control,
        .pending_gone = on_pending_gone,
        .env_traffic_allowed = on_env_allowed,
        .phase = on_phase,
        .ready = on_ready,
        .request_episode = on_request_episode,
        .forget = on_forget,
        .on_action = on_action,
        .on_done = on_done,
        .acquire = on_acquire,
        .release = on_release,
};

static int env_tcp_socket(void *userdata, unsigned lane, int family)
{
        struct daemon *d = userdata;
        return unit_env_tcp_socket(d->unit, lane, family, NULL);
}

static void on_env_changed(void *userdata, unsigned lane, const char *env_socket)
{
        struct daemon *d = userdata;
        struct frontend_env env = { .socket = env_socket };
        int r;

        if (!d->frontend)
                return;
        /* Straight into the env's namespace when the daemon keeps it: one
         * hop (and two wake-ups a message) less than through the shim. */
        if (env_socket && unit_env_tcp_socket(d->unit, lane, -1, &env.port) >= 0) {
                env.make_socket = env_tcp_socket;
                env.make_socket_userdata = d;
        }
        r = frontend_set_env(d->frontend, lane, env_socket ? &env : NULL);
        if (r < 0)
                log_warning_errno(r, "episode %s: its env server cannot be reached: %m",
                                  unit_episode_id(d->unit, lane));
}

/* The unit can serve: said once on stdout, for whoever started us, and to
 * systemd (a Type=notify unit starts its dependents now). */
static void on_unit_ready(void *userdata)
{
        int r;

        (void) userdata;
        log_info("ready: an episode can serve");
        printf("openenvd ready\n");
        fflush(stdout);
        r = sd_notify_send("READY=1\nSTATUS=an episode can serve");
        if (r < 0)
                log_warning_errno(r, "NOTIFY_SOCKET: %m");
}

static const struct unit_ops unit_ops = {
        .env_changed = on_env_changed,
        .ready = on_unit_ready,
};

/* --- signals and children ------------------------------------------------- */

static int on_quit(struct loop_source *s, const struct signalfd_siginfo *si, void *userdata)
{
        struct daemon *d = userdata;
        (void) s;
        log_info("signal %u: shutting down", si->ssi_signo);
        (void) sd_notify_send("STOPPING=1");
        loop_quit(d->loop, 0);
        return 0;
}

/*
 * PID 1 (or a subreaper) inherits every orphan. Peek at each zombie without
 * reaping it (WNOWAIT): the unit's own containers and jobs are reaped
 * through their pidfds so their status reaches the episode; everything else
 * is reaped here.
 */
static void daemon_reap(struct daemon *d)
{
        for (;;) {
                siginfo_t si = { 0 };
                if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid == 0)
                        return;
                /* The unit reaps its own through their pidfds, now. */
                if (d->unit && unit_owns_pid(d->unit, si.si_pid))
                        continue;
                (void) waitid(P_PID, (id_t) si.si_pid, &si, WEXITED | WNOHANG);
        }
}

static int on_child(struct loop_source *s, const struct signalfd_siginfo *si, void *userdata)
{
        (void) s;
        (void) si;
        daemon_reap(userdata);
        return 0;
}

/* --- setup ------------------------------------------------------------------ */

/*
 * The state directory becomes a tmpfs in our mount namespace: everything
 * the daemon keeps there (sockets, episode mount points, the asset copy)
 * is invisible to other processes — other units' containers included —
 * and vanishes with the daemon, however it ends. What was on disk below it
 * stays hidden, untouched.
 */
static int prepare_state(struct daemon *d)
{
        const char *state = d->opts->state_dir;
        cleanup_free char *opts = NULL;
        static const struct {
                const char *name;
                mode_t mode;
        } dirs[] = { { "private", 0700 }, { "episodes", 0711 }, { "assets", 0755 } };
        int r;

        r = check_traversable(state);
        if (r < 0)
                return r;
        r = mkdir_p_at(AT_FDCWD, state, 0711);
        if (r < 0)
                return r;
        opts = xasprintf("size=%llu,mode=0711",
                         (unsigned long long) (STATE_BASE_BYTES + assets_bytes(d->manifest)));
        if (mount("tmpfs", state, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts) < 0)
                return -errno;
        d->state_mounted = true;
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                cleanup_free char *p = xasprintf("%s/%s", state, dirs[i].name);
                if (mkdir(p, dirs[i].mode) < 0 || chmod(p, dirs[i].mode) < 0)
                        return -errno;
        }
        return 0;
}

/* The containers' default root, said once: an image (--rootfs), the whole
 * host (--host-root-unfiltered, with the operator's reason), or the host
 * view, built here in the state tmpfs (docs/SANDBOX.md, "The host view"). */
static int setup_root(struct daemon *d)
{
        const struct daemon_options *o = d->opts;

        /* The whole host's / was warned about with its reason at start-up
         * (main.c, the preflight's containers_root check). */
        if (o->host_root_reason) {
                log_info("the containers' root: / (--host-root-unfiltered)");
                return 0;
        }
        if (o->rootfs) {
                log_info("the containers' root: the image at %s", o->rootfs);
                return 0;
        }
        cleanup_free char *dir = xasprintf("%s/host-view", o->state_dir);
        int r = host_view_make("/", dir, &d->host_view);
        if (r < 0)
                return log_error_errno(r, "the containers' root (host view at %s): %m", dir);
        log_info("the containers' root: the host view (/usr, the loader paths, a filtered "
                 "/etc and the unit's own directories, read-only)");
        return 0;
}

static void daemon_done(struct daemon *d)
{
        metrics_self_close(&d->self);
        d->frontend = frontend_free(d->frontend);
        while (d->pending)
                op_free(d, d->pending);
        d->unit = unit_free(d->unit);
        daemon_reap(d);
        if (d->cgroups) {
                int r = cgroup_tree_destroy(d->cgroups);
                if (r < 0)
                        log_warning_errno(r, "removing the cgroup subtree: %m");
                d->cgroups = cgroup_tree_free(d->cgroups);
        }
        /* The loop frees its own state only; the sources are ours. */
        for (size_t i = 0; i < ELEMENTSOF(d->signals); i++)
                d->signals[i] = loop_source_free(d->signals[i]);
        d->loop = loop_free(d->loop);
        if (d->state_mounted)
                (void) umount2(d->opts->state_dir, MNT_DETACH);
        uid_block_release(&d->uids);
        host_view_done(&d->host_view);
        credentials_done(&d->creds);
        d->model_key = secret_free(d->model_key);
}

static int setup_cgroups(struct daemon *d)
{
        struct cgroup_layout layout;
        enum cgroup_mode mode;
        cleanup_free char *subtree = xasprintf("openenvd-%d", (int) getpid());
        int r;

        r = cgroup_layout_detect(&layout, &mode);
        if (r < 0)
                return log_error_errno(r, "cgroup layout: %m");
        /* A SIGKILLed daemon's subtree beside ours: killed and removed. */
        r = cgroup_sweep_stale(&layout, "openenvd-");
        if (r > 0)
                log_info("removed %d cgroup subtree%s a killed openenvd left", r,
                         r == 1 ? "" : "s");
        layout.subtree_name = subtree;
        for (size_t k = 0; k < MANIFEST_ZONE_MAX; k++)
                if (d->manifest->zones[k].n_containers > 0 &&
                    d->manifest->zones[k].oci != MANIFEST_OCI_NATIVE)
                        layout.flags |= CGROUP_LAYOUT_DEVICES;
        r = cgroup_tree_open(&layout, &d->cgroups);
        cgroup_layout_done(&layout); /* the tree keeps copies of what it needs */
        if (r < 0)
                return log_error_errno(r, "cgroup subtree: %m");
        r = cgroup_tree_adopt_self(d->cgroups);
        if (r < 0)
                return log_error_errno(r, "cgroup subtree: adopting ourselves: %m");
        log_info("cgroups: %s", cgroup_mode_to_string(mode));
        return 0;
}

static int daemon_setup(struct daemon *d)
{
        const struct daemon_options *o = d->opts;
        uint16_t port = o->port ?: d->manifest->port;
        int fd, r;

        r = enter_private_mount_ns();
        if (r < 0)
                return log_error_errno(r, "private mount namespace: %m");
        if (getpid() != 1 && prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
                log_warning_errno(-errno, "cannot become a child subreaper: %m");
        if (o->model_key_file) {
                r = read_secret_file(o->model_key_file, MODEL_KEY_MAX, &d->model_key);
                if (r < 0)
                        return log_error_errno(r, "model key file %s: %m", o->model_key_file);
        }
        r = prepare_state(d);
        if (r < 0)
                return log_error_errno(r, "state directory %s: %m", o->state_dir);
        r = assets_copy(d->manifest, o->state_dir);
        if (r < 0)
                return log_error_errno(r, "privileged assets: %m");
        r = setup_root(d);
        if (r < 0)
                return r;
        /* The slots (the live episodes, the standby pool, one retiring) of
         * one uid range per container each, and the env template's range
         * after them. */
        unsigned standby = o->no_standby ? 0 : d->manifest->standby;
        uint32_t slot_size = (uint32_t) unit_container_count(d->manifest) * UNIT_UID_RANGE;
        uint32_t slots_size = unit_slot_count(d->manifest->concurrent, standby) * slot_size;
        r = uid_block_acquire(slots_size + UNIT_UID_RANGE, o->uid_lock_dir, &d->uids);
        if (r < 0)
                return log_error_errno(r, "host uid range: %m");
        {
                char first[16], last[16];
                (void) snprintf(first, sizeof(first), "%u", (unsigned) d->uids.base);
                (void) snprintf(last, sizeof(last), "%u",
                                (unsigned) (d->uids.base + d->uids.size - 1));
                log_info_fields(LOG_FIELDS({ "uid_first", first }, { "uid_last", last }),
                                "host uids %s-%s", first, last);
        }
        log_fd_limits();
        r = setup_cgroups(d);
        if (r < 0)
                return r;

        r = loop_new(&d->loop);
        if (r < 0)
                return r;
        if ((r = loop_add_signal(d->loop, SIGTERM, on_quit, d, &d->signals[0])) < 0 ||
            (r = loop_add_signal(d->loop, SIGINT, on_quit, d, &d->signals[1])) < 0 ||
            (r = loop_add_signal(d->loop, SIGCHLD, on_child, d, &d->signals[2])) < 0)
                return log_error_errno(r, "signals: %m");
        (void) signal(SIGPIPE, SIG_IGN);

        r = unit_new(
                &(struct unit_config){
                        .manifest = d->manifest,
                        .state_dir = o->state_dir,
                        .cgroups = d->cgroups,
                        .loop = d->loop,
                        .shim_path = o->shim_path,
                        .rootfs = o->rootfs,
                        .host_view = o->rootfs ? NULL : &d->host_view,
                        .start_timeout = (usec_t) (o->start_timeout_s * USEC_PER_SEC),
                        .observer_timeout = (usec_t) (o->observer_timeout_s * USEC_PER_SEC),
                        .weaken = o->weaken,
                        .env_origin = o->env_origin,
                        .model = { .upstream = o->model_upstream,
                                   .provider = o->model_provider,
                                   .key = d->model_key },
                        .standby = standby,
                        .concurrent = d->manifest->concurrent,
                        .quiet_containers = o->quiet_containers,
                        .uid_base = d->uids.base,
                        .uid_slot_size = slot_size,
                        .template_uid = d->uids.base + slots_size,
                        .verdict_history = o->verdict_history,
                },
                &unit_ops, d, &d->unit);
        if (r < 0)
                return log_error_errno(r, "unit: %m");

        d->creds = *o->creds;
        *o->creds = (struct credentials){};
        if (o->token_generated) {
                /* Printed once, never logged again. */
                printf("OPENENVD_TOKEN=%s\n", d->creds.orchestrator);
                fflush(stdout);
        }
        r = socket_listen_tcp(o->listen_address, port, &fd);
        if (r < 0)
                return log_error_errno(r, "listen on %s:%u: %m", o->listen_address, port);
        r = frontend_new(d->loop, fd,
                         &(struct frontend_config){ .creds = &d->creds,
                                                    .agent_paths = d->manifest->agent_paths,
                                                    .lanes = d->manifest->concurrent,
                                                    .session_idle = d->manifest->session_idle_s *
                                                                    USEC_PER_SEC },
                         &frontend_ops, d, &d->frontend);
        if (r < 0)
                return log_error_errno(r, "external listener: %m");
        /* Listening comes first on stdout, "openenvd ready" when an episode
         * can serve (on_unit_ready(); at once if none is to start). */
        log_info("listening on %s:%u", o->listen_address, port);
        printf("openenvd listening\n");
        fflush(stdout);
        r = unit_start(d->unit, !o->no_initial_episode);
        if (r < 0)
                return log_error_errno(r, "first episode: %m");
        /* Started: the key file goes now (read once, then deleted), not
         * before, so a daemon that failed to start can be started again. */
        if (o->model_key_file && unlink(o->model_key_file) < 0)
                log_warning_errno(-errno, "cannot delete the model key file: %m");
        return 0;
}

int daemon_run_isolated(const struct daemon_options *opts, const struct manifest *m)
{
        struct daemon d = { .opts = opts,
                            .manifest = m,
                            .start_time = (double) now_usec(CLOCK_REALTIME) / USEC_PER_SEC };
        int r;

        if (!control_handlers_complete())
                return DAEMON_EXIT_FAILURE;
        metrics_self_open(&d.self);
        r = daemon_setup(&d);
        if (r >= 0)
                r = loop_run(d.loop);
        daemon_done(&d);
        if (r < 0)
                return DAEMON_EXIT_FAILURE;
        return DAEMON_EXIT_OK;
}
