/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "unit/env-template.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/log.h"
#include "base/time-util.h"
#include "base/util.h"
#include "sandbox/syscall-filter.h"
#include "sandbox/template-fork.h"
#include "unit/episode-fs.h"
#include "unit/unit-plan.h"

/* python/openenvd_template.py, embedded at build time (tools/embed-text.py). */
extern const char env_template_source[];

/* The template program's fds, as its argv names them: its end of the
 * control socket and the syscall filter (pass_fds 0 and 1); the program
 * itself comes as fd 5 (pass_fds 2), which the bootstrap reads and closes.
 * Through an fd rather than as `-c SOURCE`: every copy's command line is
 * then a line, not the program, and it says what runs (ps, or an env's
 * code looking for its server, finds "uvicorn" as in a cold start's). */
#define TEMPLATE_CTL_FD    "3"
#define TEMPLATE_FILTER_FD "4"
#define TEMPLATE_BOOTSTRAP                                                          \
        "'openenvd template: uvicorn'; import os; f = os.fdopen(5); s = f.read(); " \
        "f.close(); exec(compile(s, 'openenvd_template.py', 'exec'))"

struct env_template_gen {
        unsigned refs;
        unsigned number;
        struct env_template *owner; /* borrowed; NULL once the template is freed */
        struct env_template_gen *next;
        struct member *m;            /* the template container */
        struct cgroup_tree *cgroups; /* borrowed */
        char *cgroup;                /* zones/agent/template-<n> */
        int ctl;                     /* our end of its control socket */
        struct loop_source *ctl_src;
        struct loop_source *warm_timer; /* the warm-up's deadline */
        usec_t started;
        uint64_t forks; /* copies it made */
        bool warm, discarded;
};

struct env_template {
        const struct episode_config *cfg; /* borrowed */
        const struct manifest_container *env;
        char *python;        /* the interpreter that runs uvicorn */
        char **uvicorn_args; /* what follows uvicorn on the env's command line */
        uid_t host_uid;
        uid_t slot_base[UNIT_SLOTS_MAX];
        unsigned n_slots;
        char *dir;                        /* <state>/template: what the template's plan mounts */
        struct env_template_gen *current; /* one reference */
        struct env_template_gen *gens;    /* every generation alive (current, draining) */
        unsigned generations;
        usec_t next_build; /* loop clock */
        char *off;         /* why templates are off for good */
        unsigned barren;   /* generations in a row discarded without a copy */
        char *last_discard;
        struct env_template_stats stats;
        void (*settled)(void *userdata); /* env_template_set_notify() */
        void *settled_data;
        struct loop_source *settled_timer; /* calls it from the loop */
};

/* The interpreter and uvicorn's arguments of the env's command, or false. */
static bool uvicorn_command(char *const *argv, const char **ret_python, char *const **ret_args)
{
        const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];

        if (streq(base, "uvicorn")) {
                /* Its script's interpreter is not known here: the image's. */
                *ret_python = "python3";
                *ret_args = argv + 1;
                return true;
        }
        if (startswith(base, "python") && argv[1] && streq(argv[1], "-m") && argv[2] &&
            streq(argv[2], "uvicorn")) {
                *ret_python = argv[0];
                *ret_args = argv + 3;
                return true;
        }
        return false;
}

static const struct manifest_container *env_container(const struct manifest *m)
{
        return manifest_find_container(m, "env");
}

const char *env_template_unsupported(const struct episode_config *cfg)
{
        const struct manifest *m = cfg->manifest;
        const char *python;
        char *const *args;

        if (!m->env_template)
                return "the manifest says template: false";
        if (cfg->backend)
                return "a test backend starts no process";
        if (cfg->weaken)
                return "a weakened container (tests) must start cold";
        if (manifest_zone(m, MANIFEST_ZONE_AGENT)->oci != MANIFEST_OCI_NATIVE)
                return "an OCI runtime starts the agent zone";
        if (!uvicorn_command(env_container(m)->argv, &python, &args))
                return "the env's command is not uvicorn's";
        return NULL;
}

/* --- generations ------------------------------------------------------------ */

static void gen_free(struct env_template_gen *g)
{
        struct env_template *t = g->owner;

        if (t)
                for (struct env_template_gen **p = &t->gens; *p; p = &(*p)->next)
                        if (*p == g) {
                                *p = g->next;
                                break;
                        }
        g->ctl_src = loop_source_free(g->ctl_src);
        g->warm_timer = loop_source_free(g->warm_timer);
        safe_close(g->ctl);
        /* Its leaf killed first, then its shim reaped: without CAP_KILL (a
         * least-privilege container) the reap's own SIGKILL is refused, and
         * the reap then waited forever for a shim that lingers. The shim's
         * end takes any copy left with it. The leaf goes now if the kernel
         * is done with it, else with the zones at the unit's end. */
        if (g->cgroup)
                (void) cgroup_kill(g->cgroups, g->cgroup);
        g->m = member_free(g->m);
        if (g->cgroup)
                (void) cgroup_remove(g->cgroups, g->cgroup);
        free(g->cgroup);
        free(g);
}

struct env_template_gen *env_template_gen_ref(struct env_template_gen *g)
{
        g->refs++;
        return g;
}

struct env_template_gen *env_template_gen_unref(struct env_template_gen *g)
{
        if (g && --g->refs == 0)
                gen_free(g);
        return NULL;
}

/* No more copies from g. EOF on its control socket: the template program
 * exits; its shim lingers while copies run. */
static void gen_retire(struct env_template_gen *g)
{
        g->discarded = true;
        g->ctl_src = loop_source_free(g->ctl_src);
        g->warm_timer = loop_source_free(g->warm_timer);
        g->ctl = safe_close(g->ctl);
}

/* The current generation stopped warming (it is warm, or gone): the unit
 * may now want its standby. Told from the loop, never inside a call of
 * the unit's (a fork fails inside an episode's member start). */
static void notify_settled(struct env_template *t)
{
        if (t->settled)
                loop_timer_set(t->settled_timer, loop_now(t->cfg->loop));
}

static int on_settled_timer(struct loop_source *s, usec_t now, void *userdata)
{
        struct env_template *t = userdata;

        (void) s;
        (void) now;
        if (t->settled)
                t->settled(t->settled_data);
        return 0;
}

/* As gen_retire(), and new episodes start cold until the next one is
 * warm. Its copies run on; it goes with the last of them. */
static void gen_discard(struct env_template_gen *g, const char *why)
{
        struct env_template *t = g->owner;

        if (g->discarded)
                return;
        gen_retire(g);
        if (!t || t->current != g)
                return;
        t->stats.discards++;
        free(t->last_discard);
        t->last_discard = xstrdup(why);
        /* A discard that repeats itself (a fork the host refuses every
         * time) would cost a warm-up a second, forever. */
        t->barren = g->forks ? 0 : t->barren + 1;
        if (t->barren >= ENV_TEMPLATE_MAX_BARREN && !t->off) {
                t->off = xasprintf("%u templates in a row made no copy, the last: %s", t->barren,
                                   why);
                log_warning("env template %u discarded: %s; templates off, every episode "
                            "starts cold",
                            g->number, t->off);
                t->current = NULL;
                env_template_gen_unref(g);
                notify_settled(t);
                return;
        }
        t->next_build = loop_now(t->cfg->loop) + ENV_TEMPLATE_REBUILD_DELAY;
        log_warning("env template %u discarded: %s; episodes start cold until the next one is "
                    "warm",
                    g->number, why);
        t->current = NULL;
        env_template_gen_unref(g);
        notify_settled(t);
}

/* Templates off for the unit's life: this env cannot be warmed. */
static void turn_off(struct env_template *t, struct env_template_gen *g, const char *why)
{
        t->stats.warm_failures++;
        free(t->off);
        t->off = xstrdup(why);
        log_warning("env template %u could not warm: %s; every episode starts cold", g->number,
                    why);
        gen_discard(g, why);
}

static int on_ctl(struct loop_source *s, int fd, uint32_t revents, void *userdata)
{
        struct env_template_gen *g = userdata;
        struct env_template *t = g->owner;
        cleanup_free char *reason = NULL;
        int r;

        (void) s;
        (void) revents;
        if (g->warm) {
                /* Between forks it says nothing: a word now is its EOF (it
                 * ended) or a stray one. */
                r = template_read_reply(fd, &reason);
                if (r != -EAGAIN)
                        gen_discard(g, r == -ECONNRESET ? "the template program ended"
                                                        : "it spoke out of turn");
                return 0;
        }
        r = template_read_warm(fd, &reason);
        if (r == -EAGAIN)
                return 0;
        if (r == -EPROTO) {
                turn_off(t, g, reason ?: "an unreadable first word");
                return 0;
        }
        if (r < 0) {
                cleanup_free char *tail = member_output_tail(g->m, 3);
                cleanup_free char *why = xasprintf("the template program ended before it was "
                                                   "warm%s%s",
                                                   tail[0] ? ": " : "", tail);
                turn_off(t, g, why);
                return 0;
        }
        g->warm = true;
        g->warm_timer = loop_source_free(g->warm_timer);
        log_info("env template %u warm in %.2f s", g->number,
                 (double) (now_usec(CLOCK_MONOTONIC) - g->started) / USEC_PER_SEC);
        if (t && t->current == g)
                notify_settled(t);
        return 0;
}

/* Not warm within the env's start timeout: an import that hangs would
 * hold a container, and the standby that waits for it, for ever. */
static int on_warm_deadline(struct loop_source *s, usec_t now, void *userdata)
{
        struct env_template_gen *g = userdata;
        cleanup_free char *why = xasprintf("not warm within %gs (the env's start timeout)",
                                           (double) g->owner->cfg->start_timeout / USEC_PER_SEC);

        (void) s;
        (void) now;
        turn_off(g->owner, g, why);
        return 0;
}

static void on_gen_exited(struct member *m, int status, void *userdata)
{
        struct env_template_gen *g = userdata;
        cleanup_free char *why = xasprintf("its container exited with status %d", status);

        (void) m;
        if (g->owner && !g->warm && !g->discarded)
                turn_off(g->owner, g, why);
        else
                gen_discard(g, why);
}

static const struct member_ops gen_ops = { .exited = on_gen_exited };

/* The planning context of the template, an episode of none. */
static struct unit_plan_context plan_context(const struct env_template *t)
{
        const struct episode_config *cfg = t->cfg;
        return (struct unit_plan_context){
                .manifest = cfg->manifest,
                .state_dir = cfg->state_dir,
                .episode_dir = t->dir,
                .episode_id = "template",
                .uid_base = t->host_uid,
                .rootfs = cfg->rootfs,
                .host_view = cfg->host_view,
                .extra_masks = cfg->extra_masks,
                .env_origin = cfg->env_origin,
        };
}

/* The layout the env's plan mounts, for a template that uses none of it:
 * an empty workspace, the hosts file, its socket dir. */
static int make_dir_layout(struct env_template *t)
{
        const struct unit_plan_context ctx = plan_context(t);
        static const char *const dirs[] = { "", "/workspace", "/workspace/merged", "/sock",
                                            "/sock/env" };
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                cleanup_free char *d = xasprintf("%s%s", t->dir, dirs[i]);
                if (mkdir(d, i == ELEMENTSOF(dirs) - 1 ? 0700 : 0711) < 0)
                        return -errno;
        }
        cleanup_free char *sock = unit_socket_dir(&ctx, t->env->name);
        if (chown(sock, t->host_uid, t->host_uid) < 0)
                return -errno;
        return episode_fs_write_hosts(&ctx);
}

/* The env container's plan, turned into the template's: its argv, its own
 * uid range with the slots' env ranges after it, root of its namespace,
 * no forwarders (it serves nothing), its control socket and filter. */
static int plan_template(struct env_template *t, const int pass[3],
                         struct uid_extent extents[UNIT_SLOTS_MAX], struct container_spec *ret)
{
        const struct episode_config *cfg = t->cfg;
        const struct unit_plan_context ctx = plan_context(t);
        struct container_spec s;
        int r = unit_plan_container(&ctx, t->env, &s);

        if (r < 0)
                return r;
        strv_free(s.argv);
        s.argv = NULL;
        strv_push(&s.argv, xstrdup(t->python));
        strv_push(&s.argv, xstrdup("-c"));
        strv_push(&s.argv, xstrdup(TEMPLATE_BOOTSTRAP));
        strv_push(&s.argv, xstrdup(TEMPLATE_CTL_FD));
        strv_push(&s.argv, xstrdup(TEMPLATE_FILTER_FD));
        strv_push(&s.argv, xstrdup("--"));
        for (char **a = t->uvicorn_args; *a; a++)
                strv_push(&s.argv, xstrdup(*a));
        free(s.name);
        s.name = xstrdup("env-template");
        for (size_t i = 0; i < s.n_forwards; i++) {
                free(s.forwards[i].host);
                free(s.forwards[i].path);
        }
        s.forwards = mfree(s.forwards);
        s.n_forwards = 0;
        s.host_uid = t->host_uid;
        s.uid = s.gid = 0;
        s.template_root = true;
        for (unsigned i = 0; i < t->n_slots; i++)
                extents[i] = (struct uid_extent){
                        .inside = UNIT_UID_RANGE * (i + 1),
                        .host = t->slot_base[i] +
                                (uid_t) (unit_container_index(cfg->manifest, t->env) *
                                         UNIT_UID_RANGE),
                        .count = UNIT_UID_RANGE,
                };
        s.uid_extents = extents;
        s.n_uid_extents = t->n_slots;
        s.pass_fds = pass;
        s.n_pass_fds = 3;
        s.principal_fds = 0x7;
        s.shim_path = xstrdup(cfg->shim_path);
        s.filter = cfg->filter;
        *ret = s;
        return 0;
}

/* A memfd that fill() wrote, read from its start; -errno. */
static int memfd_filled(const char *name, int (*fill)(int fd), int *ret)
{
        cleanup_close int fd = memfd_create(name, MFD_CLOEXEC);
        int r;

        if (fd < 0)
                return -errno;
        r = fill(fd);
        if (r < 0)
                return r;
        if (lseek(fd, 0, SEEK_SET) < 0)
                return -errno;
        *ret = TAKE_FD(fd);
        return 0;
}

static int write_program(int fd)
{
        return write_all(fd, env_template_source, strlen(env_template_source));
}

static int gen_start(struct env_template *t)
{
        const struct cgroup_limits lim = unit_cgroup_limits(&t->env->effective, 1);
        struct env_template_gen *g = xcalloc(1, sizeof(*g));
        cleanup_error_detail struct error_detail err = {};
        struct container_spec spec = { .stdio_fd = -EBADF };
        struct uid_extent extents[UNIT_SLOTS_MAX];
        cleanup_close int theirs = -EBADF, filter = -EBADF, program = -EBADF;
        int pair[2], r;

        g->refs = 1;
        g->number = ++t->generations;
        g->owner = t;
        g->ctl = -EBADF;
        g->started = now_usec(CLOCK_MONOTONIC);
        g->cgroups = t->cfg->cgroups;
        g->next = t->gens;
        t->gens = g;
        t->stats.builds++;
        g->cgroup = xasprintf("%s/template-%u", unit_zone_cgroup(MANIFEST_ZONE_AGENT), g->number);
        r = cgroup_create(t->cfg->cgroups, g->cgroup, &lim);
        if (r < 0) {
                error_detail_set(&err, r, "cgroup %s: %s", g->cgroup, strerror(-r));
                goto fail;
        }
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0) {
                r = error_detail_set(&err, -errno, "socketpair: %m");
                goto fail;
        }
        g->ctl = pair[0];
        theirs = pair[1];
        /* The copies' filter, the one every native container gets, as BPF
         * for the template program to install. */
        r = memfd_filled("openenvd-filter", syscall_filter_export_bpf, &filter);
        if (r < 0) {
                error_detail_set(&err, r, "the syscall filter: %s", strerror(-r));
                goto fail;
        }
        r = memfd_filled("openenvd_template.py", write_program, &program);
        if (r < 0) {
                error_detail_set(&err, r, "the template program: %s", strerror(-r));
                goto fail;
        }
        r = plan_template(t, (const int[]){ theirs, filter, program }, extents, &spec);
        if (r < 0) {
                error_detail_set(&err, r, "plan: %s", strerror(-r));
                goto fail;
        }
        r = member_start(t->cfg->loop, "env-template",
                         &(struct member_start){
                                 .spec = &spec,
                                 .runtime = MANIFEST_OCI_NATIVE,
                                 .cgroups = t->cfg->cgroups,
                                 .cgroup = g->cgroup,
                                 .forward_episode_id = t->cfg->quiet_containers ? NULL : "template",
                         },
                         &gen_ops, g, &g->m, &err);
        container_spec_done(&spec);
        if (r < 0)
                goto fail;
        r = loop_add_io(t->cfg->loop, g->ctl, EPOLLIN, on_ctl, g, &g->ctl_src);
        if (r >= 0)
                r = loop_add_timer(t->cfg->loop, g->started + t->cfg->start_timeout,
                                   on_warm_deadline, g, &g->warm_timer);
        if (r < 0) {
                error_detail_set(&err, r, "event loop: %s", strerror(-r));
                goto fail;
        }
        t->current = g;
        log_debug("env template %u starting", g->number);
        return 0;
fail:
        turn_off(t, g, err.message ?: strerror(-r));
        env_template_gen_unref(g);
        return r;
}

/* --- the template ----------------------------------------------------------- */

int env_template_new(const struct episode_config *cfg, uid_t host_uid, const uid_t *slot_base,
                     unsigned n_slots, struct env_template **ret)
{
        struct env_template *t = xcalloc(1, sizeof(*t));
        const char *python;
        char *const *args;
        int r;

        t->cfg = cfg;
        t->env = env_container(cfg->manifest);
        if (!uvicorn_command(t->env->argv, &python, &args)) {
                free(t);
                return -EOPNOTSUPP;
        }
        t->python = xstrdup(python);
        t->uvicorn_args = strv_copy(args);
        t->host_uid = host_uid;
        assert(n_slots <= UNIT_SLOTS_MAX);
        memcpy(t->slot_base, slot_base, n_slots * sizeof(*slot_base));
        t->n_slots = n_slots;
        t->dir = xasprintf("%s/template", cfg->state_dir);
        r = loop_add_timer(cfg->loop, USEC_INFINITY, on_settled_timer, t, &t->settled_timer);
        if (r >= 0)
                r = make_dir_layout(t);
        if (r < 0) {
                log_error_errno(r, "%s: %m", t->dir);
                env_template_free(t);
                return r;
        }
        *ret = t;
        return 0;
}

struct env_template *env_template_free(struct env_template *t)
{
        if (!t)
                return NULL;
        if (t->current) {
                struct env_template_gen *g = TAKE_PTR(t->current);
                gen_retire(g);
                env_template_gen_unref(g);
        }
        /* Generations a copy still holds outlive it (the unit frees its
         * episodes first, so none should). */
        for (struct env_template_gen *g = t->gens; g; g = g->next)
                g->owner = NULL;
        loop_source_free(t->settled_timer);
        (void) rm_rf_at(AT_FDCWD, t->dir);
        free(t->dir);
        free(t->python);
        strv_free(t->uvicorn_args);
        free(t->off);
        free(t->last_discard);
        return mfree(t);
}

void env_template_start(struct env_template *t)
{
        if (t && !t->current && !t->off)
                (void) gen_start(t);
}

struct env_template_gen *env_template_take(struct env_template *t)
{
        if (!t || t->off)
                return NULL;
        if (!t->current && loop_now(t->cfg->loop) >= t->next_build)
                (void) gen_start(t);
        if (!t->current || !t->current->warm)
                return NULL;
        return env_template_gen_ref(t->current);
}

void env_template_set_notify(struct env_template *t, void (*settled)(void *userdata),
                             void *userdata)
{
        t->settled = settled;
        t->settled_data = userdata;
}

bool env_template_warming(const struct env_template *t)
{
        return t && !t->off && t->current && !t->current->warm;
}

bool env_template_ready(const struct env_template *t)
{
        return t && !t->off && t->current && t->current->warm;
}

bool env_template_owns_pid(struct env_template *t, pid_t pid)
{
        for (struct env_template_gen *g = t ? t->gens : NULL; g; g = g->next)
                if (g->m && member_pid(g->m) == pid) {
                        (void) member_poll_exit(g->m);
                        return true;
                }
        return false;
}

void env_template_stats(const struct env_template *t, struct env_template_stats *ret)
{
        *ret = t ? t->stats : (struct env_template_stats){};
}

json_t *env_template_info(const struct env_template *t)
{
        const char *state = t->off             ? "off"
                            : !t->current      ? "rebuilding"
                            : t->current->warm ? "ready"
                                               : "warming";
        const char *reason = t->off ?: t->last_discard;
        unsigned copies = 0;

        for (const struct env_template_gen *g = t->gens; g; g = g->next)
                copies += g->refs - (g == t->current);
        return json_pack("{s:s,s:I,s:s?,s:I}", "state", state, "generation",
                         (json_int_t) t->generations, "reason", reason, "copies",
                         (json_int_t) copies);
}

/* --- landings ----------------------------------------------------------------- */

/* Waits (bounded by deadline) for fn's word on fd; -ETIMEDOUT past it. */
static int wait_word(int fd, usec_t deadline, int (*fn)(int fd, void *arg), void *arg)
{
        for (;;) {
                int r = fn(fd, arg);
                if (r != -EAGAIN)
                        return r;
                usec_t now = now_usec(CLOCK_MONOTONIC);
                if (now >= deadline)
                        return -ETIMEDOUT;
                int ms = (int) ((deadline - now + USEC_PER_MSEC - 1) / USEC_PER_MSEC);
                if (poll(&(struct pollfd){ .fd = fd, .events = POLLIN }, 1, ms) < 0 &&
                    errno != EINTR)
                        return -errno;
        }
}

static int read_reply(int fd, void *arg)
{
        return template_read_reply(fd, arg);
}

struct hello {
        pid_t pid;
        char *reason; /* the copy's "fail ..." */
};

static int read_hello(int fd, void *arg)
{
        struct hello *h = arg;
        return template_copy_hello(fd, &h->pid, &h->reason);
}

/*
 * member_adopt.supply(): the fork, once the landing is up. The template
 * forks a copy into it; the copy says hello from inside (its pid is the
 * kernel's word, SCM_CREDENTIALS), goes into the landing's cgroups, and only
 * then drops to the principal and runs the server. Synchronous, bounded by
 * ENV_TEMPLATE_FORK_TIMEOUT: the template is the env's own code, warmed
 * before any episode, and never reads an episode's byte; one that is slow
 * or wrong is discarded.
 */
static int supply(void *data, const struct member_start *a, int pidfd, int stdio_fd,
                  struct error_detail *ret_err)
{
        struct env_template_landing *l = data;
        struct env_template_gen *g = l->gen;
        const struct container_spec *spec = l->spec;
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + ENV_TEMPLATE_FORK_TIMEOUT;
        struct cgroup_placement place = { .v2_fd = -EBADF };
        cleanup_free char *reason = NULL;
        cleanup_close int go = -EBADF;
        struct hello hello = {};
        int r;

        if (g->discarded) {
                r = -ESTALE;
                reason = xstrdup("discarded meanwhile");
                goto fail;
        }
        r = template_fork_send(g->ctl,
                               &(struct template_fork_request){
                                       .landing_pidfd = pidfd,
                                       .adopt_w = l->adopt_w,
                                       .stdio_fd = stdio_fd,
                                       .uid = spec->uid,
                                       .gid = spec->gid,
                                       .cwd = spec->workdir ?: "/",
                                       .nofile = spec->nofile,
                                       .nproc = spec->nproc,
                                       .env = spec->env,
                               },
                               &go);
        /* The copy's now: the shim sees EOF once it is gone. */
        l->adopt_w = safe_close(l->adopt_w);
        if (r < 0) {
                reason = xasprintf("fork request: %s", strerror(-r));
                goto fail;
        }
        r = wait_word(g->ctl, deadline, read_reply, &reason);
        if (r < 0) {
                if (!reason)
                        reason = xasprintf("its answer: %s", strerror(-r));
                goto fail;
        }
        r = wait_word(go, deadline, read_hello, &hello);
        if (r < 0) {
                reason = hello.reason ? xasprintf("the copy failed: %s", hello.reason)
                                      : xasprintf("the copy's hello: %s", strerror(-r));
                free(hello.reason);
                goto fail;
        }
        r = cgroup_placement_open(a->cgroups, a->cgroup, &place);
        if (r >= 0)
                r = cgroup_placement_attach_all(&place, hello.pid);
        cgroup_placement_done(&place);
        if (r < 0)
                /* The landing's failure, not the template's: the copy
                 * gives up once go closes. */
                return error_detail_set(ret_err, r, "cgroup %s: %s", a->cgroup, strerror(-r));
        r = template_copy_go(go);
        if (r < 0) {
                reason = xasprintf("go: %s", strerror(-r));
                goto fail;
        }
        g->forks++;
        if (g->owner)
                g->owner->stats.forks++;
        return 0;
fail:
        l->fork_failed = true;
        if (g->owner)
                g->owner->stats.fork_failures++;
        /* (The caller's reference keeps g.) */
        r = error_detail_set(ret_err, r, "env template %u: %s", g->number, reason);
        gen_discard(g, reason);
        return r;
}

int env_template_landing_init(struct env_template_gen *g, unsigned slot,
                              struct container_spec *spec, struct env_template_landing *ret)
{
        int adopt[2];

        assert(g->owner && slot < g->owner->n_slots && spec->n_pass_fds < CONTAINER_MAX_PASS_FDS);
        if (pipe2(adopt, O_CLOEXEC) < 0)
                return -errno;
        *ret = (struct env_template_landing){
                .gen = g,
                .nest = { .pidfd = member_pidfd(g->m),
                          .owner = g->owner->host_uid,
                          .inside = UNIT_UID_RANGE * (slot + 1) },
                .adopt_r = adopt[0],
                .adopt_w = adopt[1],
                .adopt = { .supply = supply, .data = ret },
                .spec = spec,
        };
        memcpy(ret->pass, spec->pass_fds, spec->n_pass_fds * sizeof(int));
        ret->pass[spec->n_pass_fds] = adopt[0];
        spec->pass_fds = ret->pass;
        spec->adopt = true;
        spec->adopt_pass_index = (unsigned) spec->n_pass_fds++;
        spec->nest = &ret->nest;
        spec->netns = NULL;
        return 0;
}

void env_template_landing_done(struct env_template_landing *l)
{
        l->adopt_r = safe_close(l->adopt_r);
        l->adopt_w = safe_close(l->adopt_w);
}
