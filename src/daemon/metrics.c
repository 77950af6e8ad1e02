/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The names follow Prometheus' conventions: a unit suffix (_seconds,
 * _bytes), _total on counters, and the client libraries' process_* family
 * for the daemon's own process. Every counter starts at the daemon's start
 * (process_start_time_seconds says when), and every combination of a
 * family's fixed labels is written, zeros included, so a rate() sees a
 * series from its first scrape on.
 */
#include "daemon/metrics.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/prom-text.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "base/version.h"

/* A family of one sample without labels. */
struct scalar {
        const char *name, *type, *help;
        uint64_t value;
};

static void render_scalars(struct strbuf *sb, const struct scalar *v, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                prom_family(sb, v[i].name, v[i].type, v[i].help);
                prom_sample_u64(sb, v[i].name, NULL, 0, v[i].value);
        }
}

static void render_episodes(struct strbuf *sb, const struct unit_stats *u)
{
        prom_family(sb, "openenvd_episodes_total", "counter",
                    "Episodes that ended, by verdict (none: ended without one) and by how they "
                    "ended.");
        for (int v = 0; v < _VERDICT_KIND_MAX; v++)
                for (int e = 0; e < _UNIT_END_MAX; e++) {
                        const struct prom_label l[] = {
                                { "verdict", verdict_kind_to_string(v) ?: "none" },
                                { "reason", unit_end_to_string(e) },
                        };
                        prom_sample_u64(sb, "openenvd_episodes_total", l, ELEMENTSOF(l),
                                        u->episodes[v][e]);
                }
        const struct scalar scalars[] = {
                { "openenvd_episode_actions_total", "counter",
                  "Agent actions: steps, /ws step messages, MCP tool calls.", u->actions },
                { "openenvd_standby_failures_total", "counter",
                  "Standby episodes that failed to provision or lost a member before use.",
                  u->standby_failures },
                { "openenvd_standby_replaced_total", "counter",
                  "Ready standby episodes whose env started cold, replaced by a template's "
                  "copy once one was warm.",
                  u->standby_replaced },
                { "openenvd_standby_ready", "gauge",
                  "Standby episodes ready now (a reset makes the oldest live).", u->standby_ready },
                { "openenvd_standby_target", "gauge",
                  "Standby episodes the unit keeps (the manifest's standby).", u->standby_target },
        };
        render_scalars(sb, scalars, ELEMENTSOF(scalars));
}

static void render_env_starts(struct strbuf *sb, const struct unit_stats *u)
{
        const struct scalar counters[] = {
                { "openenvd_env_template_builds_total", "counter", "Env templates started.",
                  u->templates.builds },
                { "openenvd_env_template_discards_total", "counter",
                  "Env templates discarded: their program ended, their code changed on disk, or "
                  "a fork failed.",
                  u->templates.discards },
                { "openenvd_env_template_fork_failures_total", "counter",
                  "Forks from a template that failed (the env started cold).",
                  u->templates.fork_failures },
                { "openenvd_env_template_warm_failures_total", "counter",
                  "Env templates that could not warm (templates off for the daemon's life).",
                  u->templates.warm_failures },
        };

        prom_family(sb, "openenvd_env_starts_total", "counter",
                    "Episodes provisioned, by how their env server started: forked from the "
                    "unit's warm template, or cold (its own command).");
        for (int s = 0; s < _UNIT_ENV_START_MAX; s++) {
                const struct prom_label l[] = { { "path", unit_env_start_to_string(s) } };
                prom_sample_u64(sb, "openenvd_env_starts_total", l, 1, u->env_starts[s]);
        }
        render_scalars(sb, counters, ELEMENTSOF(counters));
}

static void render_phases(struct strbuf *sb, const struct unit_stats *u, enum phase current)
{
        prom_family(sb, "openenvd_phase", "gauge", "The unit's phase: 1 for the current one.");
        for (int p = 0; p < PHASE_MAX; p++) {
                const struct prom_label l[] = { { "phase", phase_to_string(p) } };
                prom_sample_u64(sb, "openenvd_phase", l, 1, p == (int) current);
        }
        prom_family(sb, "openenvd_phase_duration_seconds", "histogram",
                    "Time the unit spent in a phase, observed when it left it.");
        for (int p = 0; p < PHASE_MAX; p++) {
                const struct prom_label l[] = { { "phase", phase_to_string(p) } };
                prom_histogram(sb, "openenvd_phase_duration_seconds", l, 1, &u->phase_seconds[p]);
        }
        prom_family(sb, "openenvd_reset_duration_seconds", "histogram",
                    "From a reset taking effect to the episode being ready, by where the "
                    "episode came from: a ready standby, a standby still provisioning, or a "
                    "cold start.");
        for (int s = 0; s < _UNIT_RESET_SOURCE_MAX; s++) {
                const struct prom_label l[] = { { "source", unit_reset_source_to_string(s) } };
                prom_histogram(sb, "openenvd_reset_duration_seconds", l, 1, &u->reset_seconds[s]);
        }
}

static void render_limit_events(struct strbuf *sb, const struct unit_stats *u, const char *name,
                                const char *help, bool oom)
{
        prom_family(sb, name, "counter", help);
        for (size_t i = 0; i < u->n_containers; i++) {
                const struct unit_container_stats *c = &u->containers[i];
                const struct prom_label l[] = {
                        { "zone", manifest_zone_kind_to_string(c->mc->zone) },
                        { "container", c->mc->name },
                };
                prom_sample_u64(sb, name, l, ELEMENTSOF(l),
                                oom ? c->oom_kills : c->pids_limit_events);
        }
}

static void render_relay(struct strbuf *sb, const struct metrics_input *in)
{
        const struct http_proxy_stats *r = in->relay;
        const struct prom_label req[] = { { "direction", "request" } };
        const struct prom_label resp[] = { { "direction", "response" } };

        prom_family(sb, "openenvd_relay_requests_total", "counter",
                    "Requests routed on the unit's port (control, health and env traffic).");
        prom_sample_u64(sb, "openenvd_relay_requests_total", NULL, 0, r->requests);
        prom_family(sb, "openenvd_relay_bytes_total", "counter",
                    "Bytes relayed between clients and the env server: requests to it, "
                    "responses from it.");
        prom_sample_u64(sb, "openenvd_relay_bytes_total", req, 1, r->bytes_up);
        prom_sample_u64(sb, "openenvd_relay_bytes_total", resp, 1, r->bytes_down);
        prom_family(sb, "openenvd_relay_upstream_failures_total", "counter",
                    "Requests answered 502: the env server could not be reached or did not "
                    "answer.");
        prom_sample_u64(sb, "openenvd_relay_upstream_failures_total", NULL, 0,
                        r->upstream_failures);
        prom_family(sb, "openenvd_connections", "gauge", "Open connections on the unit's port.");
        prom_sample_u64(sb, "openenvd_connections", NULL, 0, in->connections);
        prom_family(sb, "openenvd_unauthenticated_evictions_total", "counter",
                    "Connections without credentials closed to make room for new ones.");
        prom_sample_u64(sb, "openenvd_unauthenticated_evictions_total", NULL, 0, r->evicted);
        prom_family(sb, "openenvd_fd_limit_refusals_total", "counter",
                    "Connections accepted and closed at once: the daemon had no fd left and "
                    "no unauthenticated connection to evict.");
        prom_sample_u64(sb, "openenvd_fd_limit_refusals_total", NULL, 0, r->refused_at_fd_limit);
}

static void render_subtree(struct strbuf *sb, const struct cgroup_stats *st)
{
        if (!st)
                return;
        prom_family(sb, "openenvd_subtree_cpu_seconds_total", "counter",
                    "CPU time of the daemon's cgroup subtree: the daemon and every container "
                    "of the unit.");
        prom_sample(sb, "openenvd_subtree_cpu_seconds_total", NULL, 0,
                    (double) st->cpu_usage_usec / 1e6);
        prom_family(sb, "openenvd_subtree_memory_bytes", "gauge",
                    "Memory charged to the daemon's cgroup subtree (what a pod is charged).");
        prom_sample_u64(sb, "openenvd_subtree_memory_bytes", NULL, 0, st->memory_current);
        prom_family(sb, "openenvd_subtree_processes", "gauge",
                    "Processes in the daemon's cgroup subtree.");
        prom_sample_u64(sb, "openenvd_subtree_processes", NULL, 0, st->pids_current);
}

void metrics_self_open(struct metrics_self *ret)
{
        ret->fd_dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (ret->fd_dir < 0)
                ret->fd_dir = -EBADF;
        ret->statm = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
        if (ret->statm < 0)
                ret->statm = -EBADF;
}

void metrics_self_close(struct metrics_self *s)
{
        s->fd_dir = safe_close(s->fd_dir);
        s->statm = safe_close(s->statm);
}

/* Open fds (these two included), read through the kept directory fd with
 * getdents64() from its start: no fd needed now. -1: unreadable. */
static long count_fds(const struct metrics_self *s)
{
        char buf[4096];
        long n = 0;
        ssize_t k;

        if (s->fd_dir < 0 || lseek(s->fd_dir, 0, SEEK_SET) < 0)
                return -1;
        while ((k = getdents64(s->fd_dir, buf, sizeof(buf))) > 0)
                for (ssize_t off = 0; off < k;) {
                        const struct dirent64 *de = (const struct dirent64 *) (buf + off);
                        if (de->d_name[0] != '.')
                                n++;
                        off += de->d_reclen;
                }
        return k < 0 ? -1 : n;
}

/* Resident set size from the kept /proc/self/statm (pages); -1: unreadable.
 * pread() at 0 makes the kernel render the file afresh. */
static int64_t resident_bytes(const struct metrics_self *s)
{
        char buf[128];
        unsigned long long size, resident;
        ssize_t k;

        if (s->statm < 0 || (k = pread(s->statm, buf, sizeof(buf) - 1, 0)) <= 0)
                return -1;
        buf[k] = '\0';
        if (sscanf(buf, "%llu %llu", &size, &resident) != 2)
                return -1;
        return (int64_t) resident * (int64_t) sysconf(_SC_PAGESIZE);
}

static void render_process(struct strbuf *sb, const struct metrics_self *self, double start_time)
{
        struct rusage ru;
        struct rlimit rl;
        long fds = count_fds(self);
        int64_t rss = resident_bytes(self);

        if (getrusage(RUSAGE_SELF, &ru) == 0) {
                prom_family(sb, "process_cpu_seconds_total", "counter",
                            "User and system CPU time of the daemon's own process.");
                prom_sample(sb, "process_cpu_seconds_total", NULL, 0,
                            (double) (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                                    (double) (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
        }
        if (rss >= 0) {
                prom_family(sb, "process_resident_memory_bytes", "gauge",
                            "Resident memory of the daemon's own process.");
                prom_sample_u64(sb, "process_resident_memory_bytes", NULL, 0, (uint64_t) rss);
        }
        if (fds >= 0) {
                prom_family(sb, "process_open_fds", "gauge", "Open file descriptors.");
                prom_sample_u64(sb, "process_open_fds", NULL, 0, (uint64_t) fds);
        }
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
                prom_family(sb, "process_max_fds", "gauge", "The daemon's file descriptor limit.");
                prom_sample_u64(sb, "process_max_fds", NULL, 0, (uint64_t) rl.rlim_cur);
        }
        prom_family(sb, "process_start_time_seconds", "gauge",
                    "When the daemon started, in seconds since the epoch.");
        prom_sample(sb, "process_start_time_seconds", NULL, 0, start_time);
}

char *metrics_render(const struct metrics_input *in, size_t *ret_len)
{
        const struct prom_label version[] = { { "version", openenvd_version } };
        struct strbuf sb = STRBUF_INIT;

        prom_family(&sb, "openenvd_build_info", "gauge",
                    "Always 1; the label says which build answers.");
        prom_sample_u64(&sb, "openenvd_build_info", version, 1, 1);
        render_episodes(&sb, in->unit);
        render_env_starts(&sb, in->unit);
        render_phases(&sb, in->unit, in->phase);
        render_limit_events(&sb, in->unit, "openenvd_container_oom_kills_total",
                            "Processes the OOM killer killed in a container (its memory limit).",
                            true);
        render_limit_events(&sb, in->unit, "openenvd_container_pids_limit_events_total",
                            "Forks a container's pids limit refused.", false);
        render_relay(&sb, in);
        render_subtree(&sb, in->subtree);
        render_process(&sb, in->self, in->start_time);
        return strbuf_detach(&sb, ret_len);
}
