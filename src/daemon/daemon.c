/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The isolated daemon: one event loop serving the unit's port, driving the
 * unit, reaping every child.
 */
#include "daemon/daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/log.h"
#include "base/util.h"
#include "cgroup/cgroup.h"
#include "base/event-loop.h"
#include "relay/frontend.h"
#include "relay/listen-socket.h"
#include "unit/unit.h"

#define MODEL_KEY_MAX 4096

struct daemon {
        const struct daemon_options *opts; /* borrowed */
        const struct manifest *manifest;   /* borrowed */
        struct loop *loop;                 /* owned */
        struct cgroup_tree *cgroups;       /* owned */
        struct unit *unit;                 /* owned */
        struct frontend *frontend;         /* owned */
        char *token;                       /* owned */
        char *model_key;                   /* owned, wiped on exit */
        bool end_pending;                  /* an environment "done" is being handled */
        struct loop_source *signals[3];    /* owned by the loop */
};

/* --- control API --------------------------------------------------------- */

/*
 * A closed episode's containers, relays and storage go after the reply that
 * carries (or follows) the verdict: at the end of the loop round, so replies
 * already dispatched in it are out first. d outlives the loop; a reset in
 * between already tore the episode down (and the phase is no longer closed).
 */
static void teardown_closed(void *userdata)
{
        struct daemon *d = userdata;

        if (d->unit && unit_phase(d->unit) == PHASE_CLOSED)
                unit_teardown(d->unit);
}

static void reply_json(struct frontend_reply *reply, unsigned status, json_t *j)
{
        reply->status = status;
        reply->json = json_dumps(j, JSON_COMPACT);
        json_decref(j);
}

static void reply_error(struct frontend_reply *reply, int r)
{
        /* Never a message: paths and errno texts stay in the log. */
        if (r == -EPERM) {
                reply->status = 409;
                reply->error_code = "conflict";
        } else {
                reply->status = 500;
                reply->error_code = "infrastructure_error";
        }
}

static void on_control(void *userdata, const char *method, const char *path, const char *body,
                       size_t body_len, struct frontend_reply *reply)
{
        struct daemon *d = userdata;
        char refusal[128] = "";
        json_t *observers = NULL;
        int r;

        (void) method;
        (void) body;
        (void) body_len;
        if (streq(path, "/info")) {
                reply_json(reply, 200, unit_info(d->unit));
                return;
        }
        if (streq(path, "/verdict")) {
                reply_json(reply, 200, unit_verdict(d->unit));
                return;
        }
        if (streq(path, "/reset_unit"))
                r = unit_reset(d->unit, refusal, sizeof(refusal));
        else if (streq(path, "/inspect"))
                r = unit_inspect(d->unit, &observers, refusal, sizeof(refusal));
        else if (streq(path, "/resume"))
                r = unit_resume(d->unit, refusal, sizeof(refusal));
        else if (streq(path, "/end_episode")) {
                r = unit_end(d->unit, ACTOR_ORCHESTRATOR, "ended_by_orchestrator", refusal,
                             sizeof(refusal));
                if (r >= 0)
                        loop_defer(d->loop, teardown_closed, d);
        } else {
                reply->status = 404;
                reply->error_code = "not_found";
                return;
        }
        if (r < 0) {
                if (r == -EPERM)
                        log_info("%s refused: %s", path, refusal);
                json_decref(observers);
                reply_error(reply, r);
                return;
        }
        if (streq(path, "/end_episode")) {
                reply_json(reply, 200, unit_verdict(d->unit));
        } else if (observers) {
                json_t *j = unit_info(d->unit);
                json_object_set_new(j, "observers", observers);
                reply_json(reply, 200, j);
        } else {
                reply_json(reply, 200, unit_info(d->unit));
        }
}

static bool on_env_allowed(void *userdata)
{
        struct daemon *d = userdata;
        return unit_env_traffic_allowed(d->unit);
}

static void on_step(void *userdata)
{
        struct daemon *d = userdata;
        (void) unit_first_step(d->unit);
}

static void finish_episode(void *userdata)
{
        struct daemon *d = userdata;
        char refusal[128];
        int r;

        d->end_pending = false;
        r = unit_end(d->unit, ACTOR_ENVIRONMENT, "done", refusal, sizeof(refusal));
        if (r == -EPERM)
                log_info("environment reported done: %s", refusal);
        else if (r >= 0)
                /* Deferred from a deferred callback: runs next round, after
                 * a GET /verdict that arrived during grading is answered. */
                loop_defer(d->loop, teardown_closed, d);
}

static void on_done(void *userdata)
{
        struct daemon *d = userdata;

        /* After this dispatch round, so the final observation that carried
         * "done" is delivered before the env is killed. */
        if (d->end_pending)
                return;
        d->end_pending = true;
        loop_defer(d->loop, finish_episode, d);
}

static const struct frontend_ops frontend_ops = {
        .control = on_control,
        .env_traffic_allowed = on_env_allowed,
        .on_step = on_step,
        .on_done = on_done,
};

/* --- signals and children ------------------------------------------------- */

static int on_quit(struct loop_source *s, const struct signalfd_siginfo *si, void *userdata)
{
        struct daemon *d = userdata;
        (void) s;
        log_info("signal %u: shutting down", si->ssi_signo);
        loop_quit(d->loop, 0);
        return 0;
}

/*
 * PID 1 (or a subreaper) inherits every orphan. Peek at each zombie without
 * reaping it (WNOWAIT): the unit's own containers are reaped through their
 * pidfds so their exit status reaches grading; everything else is reaped here.
 */
static void daemon_reap(struct daemon *d)
{
        for (;;) {
                siginfo_t si = { 0 };
                if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid == 0)
                        return;
                if (d->unit && unit_reap_pid(d->unit, si.si_pid))
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
 * Every mount the daemon makes (overlays, views) lives in its own mount
 * namespace: when the daemon exits, they are gone, whatever happened.
 */
static int enter_private_mount_ns(void)
{
        if (unshare(CLONE_NEWNS) < 0)
                return -errno;
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return -errno;
        return 0;
}

static int read_model_key(const char *path, char **ret)
{
        cleanup_free char *key = NULL;
        size_t len;
        int r;

        r = read_full_file_at(AT_FDCWD, path, MODEL_KEY_MAX, &key, &len);
        if (r < 0)
                return r;
        /* Read once, then deleted: the key exists only in this process. */
        if (unlink(path) < 0)
                log_warning_errno(-errno, "cannot delete the model key file: %m");
        while (len > 0 && (key[len - 1] == '\n' || key[len - 1] == '\r'))
                key[--len] = '\0';
        if (len == 0)
                return -EINVAL;
        *ret = TAKE_PTR(key);
        return 0;
}

/*
 * Containers resolve their mount sources (socket dirs, overlays) from inside
 * their own user namespaces, as unprivileged host uids: every ancestor of the
 * state directory must be searchable by others.
 */
static int check_traversable(const char *state)
{
        cleanup_free char *p = xstrdup(state);

        for (char *slash = strrchr(p, '/'); slash; slash = strrchr(p, '/')) {
                struct stat st;
                *slash = '\0';
                if (stat(p[0] ? p : "/", &st) < 0)
                        return -errno;
                if (!(st.st_mode & S_IXOTH)) {
                        log_error("%s is not searchable by others (mode %o): containers cannot "
                                  "reach the state directory below it",
                                  p[0] ? p : "/", (unsigned) (st.st_mode & 07777));
                        return -EACCES;
                }
        }
        return 0;
}

static int prepare_state(const char *state)
{
        cleanup_free char *run = xasprintf("%s/run", state);
        int r;

        r = check_traversable(state);
        if (r < 0)
                return r;

        r = mkdir_p_at(AT_FDCWD, state, 0711);
        if (r < 0)
                return r;
        /* Traverse-only: user namespaces resolve mount sources through it. */
        if (chmod(state, 0711) < 0)
                return -errno;
        (void) rm_rf_at(AT_FDCWD, run);
        r = mkdir_p_at(AT_FDCWD, run, 0711);
        if (r < 0)
                return r;
        return chmod(run, 0711) < 0 ? -errno : 0;
}

static void daemon_done(struct daemon *d)
{
        d->frontend = frontend_free(d->frontend);
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
        /* Episodes, sockets and the asset copy are per daemon run; the state
         * directory itself is the operator's. */
        if (d->opts->state_dir) {
                static const char *const ephemeral[] = { "run", "episodes", "assets" };
                cleanup_close int sfd =
                        open(d->opts->state_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                for (size_t i = 0; sfd >= 0 && i < ELEMENTSOF(ephemeral); i++)
                        (void) rm_rf_at(sfd, ephemeral[i]);
        }
        free(d->token);
        if (d->model_key) {
                explicit_bzero(d->model_key, strlen(d->model_key));
                free(d->model_key);
        }
}

static int daemon_setup(struct daemon *d)
{
        const struct daemon_options *o = d->opts;
        struct cgroup_layout layout;
        enum cgroup_mode mode;
        cleanup_free char *subtree = xasprintf("openenvd-%d", (int) getpid());
        uint16_t port = o->port ?: d->manifest->port;
        bool generated = false;
        int fd, r;

        r = enter_private_mount_ns();
        if (r < 0)
                return log_error_errno(r, "private mount namespace: %m");
        if (getpid() != 1 && prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
                log_warning_errno(-errno, "cannot become a child subreaper: %m");
        r = prepare_state(o->state_dir);
        if (r < 0)
                return log_error_errno(r, "state directory %s: %m", o->state_dir);
        if (o->model_key_file) {
                r = read_model_key(o->model_key_file, &d->model_key);
                if (r < 0)
                        return log_error_errno(r, "model key file: %m");
        }

        r = cgroup_layout_detect(&layout, &mode);
        if (r < 0)
                return log_error_errno(r, "cgroup layout: %m");
        layout.subtree_name = subtree;
        r = cgroup_tree_open(&layout, &d->cgroups);
        cgroup_layout_done(&layout); /* the tree keeps copies of what it needs */
        if (r < 0)
                return log_error_errno(r, "cgroup subtree: %m");
        r = cgroup_tree_adopt_self(d->cgroups);
        if (r < 0)
                return log_error_errno(r, "cgroup subtree: adopting ourselves: %m");
        log_info("cgroups: %s", cgroup_mode_to_string(mode));

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
                        .log_fd = STDERR_FILENO,
                        .start_timeout = (usec_t) (o->start_timeout_s * USEC_PER_SEC),
                        .observer_timeout = (usec_t) (o->observer_timeout_s * USEC_PER_SEC),
                        .weaken = o->weaken,
                        .model_upstream = o->model_upstream,
                        .model_key = d->model_key,
                        .model_provider = o->model_provider,
                },
                &d->unit);
        if (r < 0)
                return log_error_errno(r, "unit: %m");

        r = frontend_token_load(o->token_file, &d->token, &generated);
        if (r < 0)
                return log_error_errno(r, "orchestrator token: %m");
        if (generated) {
                /* Printed once, never logged again. */
                printf("OPENENVD_TOKEN=%s\n", d->token);
                fflush(stdout);
        }
        r = socket_listen_tcp(o->listen_address, port, &fd);
        if (r < 0)
                return log_error_errno(r, "listen on %s:%u: %m", o->listen_address, port);
        r = frontend_new(d->loop, fd,
                         &(struct frontend_config){ .env_socket = unit_env_socket(d->unit),
                                                    .token = d->token },
                         &frontend_ops, d, &d->frontend);
        if (r < 0)
                return log_error_errno(r, "external listener: %m");
        log_info("listening on %s:%u", o->listen_address, port);
        printf("openenvd ready\n");
        fflush(stdout);
        return 0;
}

int daemon_run_isolated(const struct daemon_options *opts, const struct manifest *m)
{
        struct daemon d = { .opts = opts, .manifest = m };
        int r;

        r = daemon_setup(&d);
        if (r >= 0)
                r = loop_run(d.loop);
        daemon_done(&d);
        if (r < 0)
                return DAEMON_EXIT_FAILURE;
        return DAEMON_EXIT_OK;
}
