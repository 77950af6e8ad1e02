/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "unit/member.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/limits.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "base/text-escape.h"
#include "base/time-util.h"
#include "base/util.h"
#include "sandbox/launcher-native.h"
#include "sandbox/launcher-oci.h"

struct member {
        struct loop *loop; /* borrowed */
        char *name;        /* owned */
        const struct member_ops *ops;
        void *userdata;

        const struct member_launcher *launcher; /* borrowed: native, OCI or a test's */
        void *handle;                           /* owned through launcher->free */
        struct loop_source *exit_src; /* EPOLLIN on the pidfd (the fd is the launcher's) */
        bool exited;
        int status;

        int log_fd; /* owned: read end of the container's stdout+stderr */
        struct loop_source *log_src, *log_timer;
        struct member_log *log;   /* owned until member_take_output() */
        char *forward_episode_id; /* owned; NULL: output not forwarded */
        size_t forward_pos;       /* log bytes looked at for forwarding */
        size_t forward_used;      /* of MEMBER_LOG_FORWARD_BYTES; SIZE_MAX: capped */
        uint64_t tokens;          /* bytes that may be read now (token bucket) */
        usec_t tokens_at;

        int notify_fd; /* owned: read end of the shim's readiness pipe */
        struct loop_source *notify_src;
        bool ready;

        int gate_fd; /* owned: write end of the shim's gate pipe, until the release */
};

static const char *oci_runtime_name(enum manifest_oci o)
{
        return o == MANIFEST_OCI_CRUN ? "crun" : o == MANIFEST_OCI_RUNSC ? "runsc" : "runc";
}

int member_pidfd(const struct member *m)
{
        return m->launcher->exit_fd(m->handle);
}

pid_t member_pid(const struct member *m)
{
        return m->handle ? m->launcher->pid(m->handle) : 0;
}

const char *member_name(const struct member *m)
{
        return m->name;
}

bool member_is_ready(const struct member *m)
{
        return m->ready;
}

bool member_exited(const struct member *m, int *ret_status)
{
        if (m->exited && ret_status)
                *ret_status = m->status;
        return m->exited;
}

int member_init_signal(const struct member *m)
{
        return m->exited ? m->launcher->init_signal(m->handle) : 0;
}

int member_kill(struct member *m, int sig)
{
        return m->exited ? -ESRCH : m->launcher->kill(m->handle, sig);
}

static void log_drain(struct member *m);

bool member_poll_exit(struct member *m)
{
        int status;

        if (m->exited)
                return true;
        if (m->launcher->try_wait(m->handle, &status) < 0)
                return false;
        m->exited = true;
        m->status = status;
        m->exit_src = loop_source_free(m->exit_src);
        log_drain(m);
        if (m->ops && m->ops->exited)
                m->ops->exited(m, status, m->userdata);
        return true;
}

static int on_pidfd(struct loop_source *s, int fd, uint32_t revents, void *userdata)
{
        (void) s;
        (void) fd;
        (void) revents;
        (void) member_poll_exit(userdata);
        return 0;
}

/* --- output ------------------------------------------------------------- */

static int on_log(struct loop_source *s, int fd, uint32_t revents, void *userdata);

static int log_watch(struct member *m)
{
        return loop_add_io(m->loop, m->log_fd, EPOLLIN, on_log, m, &m->log_src);
}

static int on_log_resume(struct loop_source *s, usec_t now, void *userdata)
{
        struct member *m = userdata;
        (void) s;
        (void) now;
        if (m->log_fd >= 0 && !m->log_src && log_watch(m) < 0)
                m->log_fd = safe_close(m->log_fd);
        return 0;
}

/* Every complete line of the log not yet looked at (every line left, at
 * EOF) goes to the daemon's log, until MEMBER_LOG_FORWARD_BYTES are used: a
 * line costs its bytes plus MEMBER_LOG_FORWARD_LINE_COST, so a flood of
 * short lines is bounded in entries as well as in bytes. */
static void log_forward(struct member *m, bool eof)
{
        const struct strbuf *log = &m->log->bytes;

        while (m->forward_episode_id && m->forward_used != SIZE_MAX && m->forward_pos < log->len) {
                const char *p = log->buf + m->forward_pos;
                size_t left = log->len - m->forward_pos;
                const char *nl = memchr(p, '\n', left);
                size_t n = nl ? (size_t) (nl - p) : left;
                size_t shown = MIN(n, (size_t) MEMBER_LOG_FORWARD_LINE_BYTES);

                if (!nl && !eof)
                        return;
                if (m->forward_used + shown + MEMBER_LOG_FORWARD_LINE_COST >
                    MEMBER_LOG_FORWARD_BYTES) {
                        log_info_fields(LOG_FIELDS({ "episode_id", m->forward_episode_id },
                                                   { "container", m->name }),
                                        "%s| [openenvd: output in this log capped; GET "
                                        "/logs?container=%s has its first %lu KiB]",
                                        m->name, m->name,
                                        (unsigned long) (MEMBER_LOG_MAX_BYTES / 1024));
                        m->forward_used = SIZE_MAX;
                        return;
                }
                /* Escaped here, so the JSON format's message is safe text
                 * too (the text format's own escaping then changes nothing). */
                cleanup_free char *line = xstrndup(p, shown);
                cleanup_free char *safe = text_escape(line);
                log_info_fields(LOG_FIELDS({ "episode_id", m->forward_episode_id },
                                           { "container", m->name }),
                                "%s| %s%s", m->name, safe, n > shown ? "..." : "");
                m->forward_used += shown + MEMBER_LOG_FORWARD_LINE_COST;
                m->forward_pos += n + (nl ? 1 : 0);
        }
}

/*
 * Level-triggered and bounded per wake-up, so a flooding container shares
 * the loop; a token bucket bounds what it costs per second. Out of tokens,
 * the pipe leaves the epoll set (even an idle fd reports EPOLLHUP) until a
 * timer brings it back: the writer then blocks on its own full pipe.
 */
static int on_log(struct loop_source *s, int fd, uint32_t revents, void *userdata)
{
        struct member *m = userdata;
        char buf[MEMBER_LOG_READ_BYTES];
        usec_t now = loop_now(m->loop);
        ssize_t n;

        (void) s;
        (void) revents;
        m->tokens = MIN(m->tokens + (now - m->tokens_at) * MEMBER_LOG_RATE_BYTES / USEC_PER_SEC,
                        (uint64_t) MEMBER_LOG_RATE_BYTES);
        m->tokens_at = now;
        if (m->tokens == 0) {
                m->log_src = loop_source_free(m->log_src);
                if (!m->log_timer)
                        (void) loop_add_timer(m->loop, USEC_INFINITY, on_log_resume, m,
                                              &m->log_timer);
                /* Back when one read's worth of tokens has accrued. */
                loop_timer_set(m->log_timer,
                               now + MEMBER_LOG_READ_BYTES * USEC_PER_SEC / MEMBER_LOG_RATE_BYTES);
                return 0;
        }
        n = read(fd, buf, (size_t) MIN((uint64_t) sizeof(buf), m->tokens));
        if (n > 0) {
                m->tokens -= (uint64_t) n;
                /* The wall clock, as people and other logs tell time. */
                member_log_append(m->log, buf, (size_t) n, now_usec(CLOCK_REALTIME));
                log_forward(m, false);
                return 0;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        /* EOF: every writer in the container is gone. */
        log_forward(m, true);
        member_log_close(m->log);
        m->log_src = loop_source_free(m->log_src);
        m->log_fd = safe_close(m->log_fd);
        return 0;
}

/*
 * The container is gone, and what it wrote last is in the pipe already; but
 * its exit and its output wake the same epoll_wait(), and the exit may be
 * handled first. Read what is there now (within the token budget, a few
 * reads at most: a writer that outlived the container is not waited for),
 * so its "last output" is its last output.
 */
static void log_drain(struct member *m)
{
        if (!m->log)
                return; /* taken: nothing is read into it any more */
        for (int i = 0; i < MEMBER_EXIT_DRAIN_READS && m->log_src; i++) {
                size_t before = m->log->bytes.len;
                (void) on_log(m->log_src, m->log_fd, EPOLLIN, m);
                if (m->log->bytes.len == before)
                        break; /* EAGAIN, or EOF: nothing more now */
        }
}

const struct member_log *member_output(const struct member *m)
{
        return m->log;
}

struct member_log *member_take_output(struct member *m)
{
        /* Nothing is read into it any more: what is still in the pipe goes
         * with the container. */
        m->log_src = loop_source_free(m->log_src);
        m->log_timer = loop_source_free(m->log_timer);
        m->log_fd = safe_close(m->log_fd);
        member_log_close(m->log);
        return TAKE_PTR(m->log);
}

char *member_output_tail(const struct member *m, size_t max_lines)
{
        return m->log ? member_log_tail_text(m->log, m->name, max_lines) : xstrdup("");
}

/* --- readiness ----------------------------------------------------------- */

static int on_notify(struct loop_source *s, int fd, uint32_t revents, void *userdata)
{
        struct member *m = userdata;
        char buf[64];
        ssize_t n = read(fd, buf, sizeof(buf) - 1);

        (void) s;
        (void) revents;
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        /* The shim writes once and closes; whatever follows is EOF. */
        m->notify_src = loop_source_free(m->notify_src);
        m->notify_fd = safe_close(m->notify_fd);
        if (n > 0 && memmem(buf, (size_t) n, "READY=1", 7) && !m->ready) {
                m->ready = true;
                if (m->ops && m->ops->ready)
                        m->ops->ready(m, m->userdata);
        }
        return 0;
}

/* --- start --------------------------------------------------------------- */

static int pipe_nonblocking_read(int ret[2])
{
        if (pipe2(ret, O_CLOEXEC) < 0)
                return -errno;
        if (fcntl(ret[0], F_SETFL, O_NONBLOCK) < 0) {
                int r = -errno;
                safe_close(ret[0]);
                safe_close(ret[1]);
                return r;
        }
        return 0;
}

/* --- the two real launchers -------------------------------------------------- */

static int oci_spawn(void *data, const char *name, const struct member_start *a,
                     const struct container_spec *spec, void **ret_handle,
                     struct error_detail *ret_err)
{
        struct cgroup_view view = {};
        struct oci_container *c = NULL;
        cleanup_free char *cg = NULL;
        /* The runtime joins the leaf made for it. On a hybrid host it sees
         * only the leaf's parent in each hierarchy, where "/<leaf>" is the
         * leaf; on a pure cgroup2 host the path is relative to its own
         * cgroup, the daemon's (control/). */
        const char *leaf = strrchr(a->cgroup, '/');
        int r = cgroup_view_open(a->cgroups, a->cgroup, &view);

        (void) data;
        (void) name;
        if (r == -EOPNOTSUPP)
                cg = xasprintf("../%s", a->cgroup);
        else if (r >= 0)
                cg = xasprintf("/%s", leaf ? leaf + 1 : a->cgroup);
        else
                return error_detail_set(ret_err, r, "cgroup %s: %s", a->cgroup, strerror(-r));
        r = oci_container_spawn(&(struct oci_options){ .runtime = oci_runtime_name(a->runtime),
                                                       .state_dir = a->oci_state_dir,
                                                       .cgroups_path = cg,
                                                       .cgroup_view = view.n > 0 ? &view : NULL },
                                spec, &c, ret_err);
        cgroup_view_done(&view);
        *ret_handle = c;
        return r;
}

static int native_spawn(void *data, const char *name, const struct member_start *a,
                        const struct container_spec *spec, void **ret_handle,
                        struct error_detail *ret_err)
{
        struct cgroup_placement place = { .v2_fd = -EBADF };
        struct container_error err = {};
        struct container *c = NULL;
        struct container_spec placed = *spec;
        int r;

        (void) data;
        (void) name;
        r = cgroup_placement_open(a->cgroups, a->cgroup, &place);
        if (r < 0)
                return error_detail_set(ret_err, r, "cgroup %s: %s", a->cgroup, strerror(-r));
        placed.placement = &place;
        r = container_spawn(&placed, &c, &err);
        cgroup_placement_done(&place);
        /* The step's words are the member's; the step itself is the
         * launcher's business. */
        if (r < 0 && ret_err && !ret_err->message)
                *ret_err = err.detail;
        else
                error_detail_done(&err.detail);
        *ret_handle = c;
        return r;
}

/* The launchers' own functions, behind the one interface (void * is their
 * container). */
static int native_exit_fd(void *h)
{
        return container_pidfd(h);
}
static pid_t native_pid(void *h)
{
        return container_pid(h);
}
static int native_kill(void *h, int sig)
{
        return container_kill(h, sig);
}
static int native_try_wait(void *h, int *ret_status)
{
        return container_try_wait(h, ret_status);
}
static int native_init_signal(void *h)
{
        return container_init_signal(h);
}
static void native_free(void *h)
{
        (void) container_free(h);
}

static const struct member_launcher native_launcher = {
        .spawn = native_spawn,
        .exit_fd = native_exit_fd,
        .pid = native_pid,
        .kill = native_kill,
        .try_wait = native_try_wait,
        .init_signal = native_init_signal,
        .free = native_free,
};

static int oci_exit_fd(void *h)
{
        return oci_container_pidfd(h);
}
static pid_t oci_pid(void *h)
{
        return oci_container_pid(h);
}
static int oci_kill(void *h, int sig)
{
        return oci_container_kill(h, sig);
}
static int oci_try_wait(void *h, int *ret_status)
{
        return oci_container_try_wait(h, ret_status);
}
static int oci_init_signal(void *h)
{
        return oci_container_init_signal(h);
}
static void oci_free(void *h)
{
        (void) oci_container_free(h);
}

static const struct member_launcher oci_launcher = {
        .spawn = oci_spawn,
        .exit_fd = oci_exit_fd,
        .pid = oci_pid,
        .kill = oci_kill,
        .try_wait = oci_try_wait,
        .init_signal = oci_init_signal,
        .free = oci_free,
};

static int spawn(struct member *m, const struct member_start *a, struct container_spec *spec,
                 struct error_detail *ret_err)
{
        m->launcher = a->launcher
                              ?: a->runtime == MANIFEST_OCI_NATIVE ? &native_launcher
                                                                   : &oci_launcher;
        return m->launcher->spawn(m->launcher->data, m->name, a, spec, &m->handle, ret_err);
}

int member_start(struct loop *l, const char *name, const struct member_start *a,
                 const struct member_ops *ops, void *userdata, struct member **ret,
                 struct error_detail *ret_err)
{
        cleanup(member_freep) struct member *m = xcalloc(1, sizeof(*m));
        struct container_spec spec = *a->spec;
        int pass[CONTAINER_MAX_PASS_FDS];
        int logp[2], notp[2] = { -EBADF, -EBADF }, gatep[2] = { -EBADF, -EBADF };
        int r;

        m->loop = l;
        m->name = xstrdup(name);
        m->forward_episode_id = a->forward_episode_id ? xstrdup(a->forward_episode_id) : NULL;
        m->ops = ops;
        m->userdata = userdata;
        m->log = member_log_new();
        m->log_fd = m->notify_fd = m->gate_fd = -EBADF;
        m->tokens = MEMBER_LOG_RATE_BYTES;
        m->tokens_at = loop_now(l);

        if (spec.n_pass_fds + (a->notify ? 1 : 0) + (a->gated ? 1 : 0) > CONTAINER_MAX_PASS_FDS)
                return -E2BIG;
        r = pipe_nonblocking_read(logp);
        if (r < 0)
                return r;
        m->log_fd = logp[0];
        cleanup_close int log_w = logp[1];
        if (a->notify) {
                r = pipe_nonblocking_read(notp);
                if (r < 0)
                        return r;
                m->notify_fd = notp[0];
        }
        cleanup_close int notify_w = notp[1];
        /* The release is at most SHIM_GATE_MAX_BYTES into an empty pipe:
         * a write that would block is a failed release, never a wait. */
        if (a->gated && pipe2(gatep, O_CLOEXEC) < 0)
                return -errno;
        cleanup_close int gate_r = gatep[0];
        m->gate_fd = gatep[1];
        if (m->gate_fd >= 0 && fcntl(m->gate_fd, F_SETFL, O_NONBLOCK) < 0)
                return -errno;

        /* The container's side: stdout+stderr, then the notify pipe and the
         * gate, after the spec's own fds. */
        memcpy(pass, spec.pass_fds ? spec.pass_fds : pass, spec.n_pass_fds * sizeof(int));
        if (a->notify) {
                spec.notify = true;
                spec.notify_pass_index = (unsigned) spec.n_pass_fds;
                pass[spec.n_pass_fds++] = notify_w;
        }
        if (a->gated) {
                spec.gate = true;
                spec.gate_pass_index = (unsigned) spec.n_pass_fds;
                pass[spec.n_pass_fds++] = gate_r;
        }
        spec.pass_fds = pass;
        spec.stdio_fd = log_w;

        r = spawn(m, a, &spec, ret_err);
        if (r < 0)
                return r;
        /* (On failure the cleanup kills the container.) */
        if (a->adopt &&
            (r = a->adopt->supply(a->adopt->data, a, member_pidfd(m), log_w, ret_err)) < 0)
                return r;
        /* Ours now; the write ends live only in the container. */
        safe_close(TAKE_FD(log_w));
        safe_close(TAKE_FD(notify_w));
        safe_close(TAKE_FD(gate_r));

        if ((r = loop_add_io(l, member_pidfd(m), EPOLLIN, on_pidfd, m, &m->exit_src)) < 0 ||
            (r = log_watch(m)) < 0 ||
            (m->notify_fd >= 0 &&
             (r = loop_add_io(l, m->notify_fd, EPOLLIN, on_notify, m, &m->notify_src)) < 0))
                return error_detail_set(ret_err, r, "event loop: %s", strerror(-r));
        *ret = TAKE_PTR(m);
        return 0;
}

int member_release(struct member *m, char *const *env)
{
        struct strbuf sb = STRBUF_INIT;
        int r;

        if (m->gate_fd < 0)
                return -EALREADY;
        for (char *const *e = env; e && *e; e++)
                strbuf_addf(&sb, "%s\n", *e);
        strbuf_addch(&sb, '\n');
        r = sb.len <= SHIM_GATE_MAX_BYTES ? write_all(m->gate_fd, sb.buf, sb.len) : -E2BIG;
        strbuf_release(&sb);
        m->gate_fd = safe_close(m->gate_fd);
        return r;
}

bool member_is_gated(const struct member *m)
{
        return m->gate_fd >= 0;
}

struct member *member_free(struct member *m)
{
        if (!m)
                return NULL;
        m->exit_src = loop_source_free(m->exit_src);
        m->log_src = loop_source_free(m->log_src);
        m->log_timer = loop_source_free(m->log_timer);
        m->notify_src = loop_source_free(m->notify_src);
        /* SIGKILL of the shim takes its pid namespace with it; reaped here. */
        if (m->handle)
                m->launcher->free(m->handle);
        safe_close(m->log_fd);
        safe_close(m->notify_fd);
        safe_close(m->gate_fd);
        member_log_free(m->log);
        free(m->forward_episode_id);
        free(m->name);
        return mfree(m);
}
