/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One probe container: planned exactly like the manifest container it
 * stands for (only argv differs), run under the native launcher with the
 * probe as its principal, its report read back and checked against the
 * plan; and what only the host can see (listeners reached, the symlinked
 * mount source).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
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
#include "sandbox/launcher-native.h"

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
static void run_probe(struct enforce_world *R, const struct manifest_container *c, const char *leaf,
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
                                  err.index, strerror(err.detail.error ?: -r));
                error_detail_done(&err.detail);
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
static void drain_listeners(struct enforce_world *R, unsigned *ret_tcp, unsigned *ret_unix)
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

static void probe_symlink_source(struct enforce_world *R, const struct manifest_container *c,
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

static void host_checks(struct enforce_world *R, const char *leaf, struct enforce_plan *p)
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

void enforce_probe_container(struct enforce_world *R, const struct manifest_container *c,
                             struct enforce_plan *p)
{
        const struct manifest_zone *z = manifest_zone(R->m, c->zone);
        const struct cgroup_limits probe_limits = { .memory_bytes = PROBE_MEMORY_BYTES,
                                                    .pids = PROBE_PIDS };
        const struct cgroup_limits zone_limits = unit_cgroup_limits(&z->resources, 1);
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
