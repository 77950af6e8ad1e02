/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "fake-backend.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/util.h"

/* --- the launcher -------------------------------------------------------------- */

static void signal_exit(struct fake_member *fm, int status, int init_signal)
{
        uint64_t one = 1;

        if (fm->exited)
                return;
        fm->exited = true;
        fm->status = status;
        fm->init_signal = init_signal;
        /* As the kernel does: the pidfd turns readable, the output pipe's
         * last writer goes, the activation socket stops being served. */
        (void) write_all(fm->exit_fd, &one, sizeof(one));
        fm->log_fd = safe_close(fm->log_fd);
        fm->notify_fd = safe_close(fm->notify_fd);
        fm->listen_src = loop_source_free(fm->listen_src);
        fm->listen_fd = safe_close(fm->listen_fd);
}

static int on_conn(struct loop_source *s, int fd, uint32_t revents, void *userdata)
{
        static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n"
                                 "\r\n{}";
        struct fake_backend *fb = userdata;
        char buf[512];
        ssize_t n = read(fd, buf, sizeof(buf));

        (void) s;
        (void) revents;
        if (n < 0 && errno == EAGAIN)
                return 0;
        /* One request fits in one read here (the probe's is 60 bytes). */
        if (n > 0)
                (void) write_all(fd, ok, sizeof(ok) - 1);
        for (size_t i = 0; i < FAKE_MAX_CONNS; i++)
                if (fb->conns[i].fd == fd) {
                        fb->conns[i].src = loop_source_free(fb->conns[i].src);
                        fb->conns[i].fd = safe_close(fb->conns[i].fd);
                }
        return 0;
}

/* The env server's side of its activation socket: GET /health, 200. */
static int on_listen(struct loop_source *s, int fd, uint32_t revents, void *userdata)
{
        struct fake_member *fm = userdata;
        struct fake_backend *fb = fm->fb;
        int c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

        (void) s;
        (void) revents;
        if (c < 0)
                return 0;
        for (size_t i = 0; i < FAKE_MAX_CONNS; i++)
                if (fb->conns[i].fd < 0) {
                        fb->conns[i].fd = c;
                        if (loop_add_io(fb->loop, c, EPOLLIN, on_conn, fb, &fb->conns[i].src) < 0)
                                fb->conns[i].fd = safe_close(c);
                        return 0;
                }
        safe_close(c);
        return 0;
}

static int fake_spawn(void *data, const char *name, const struct member_start *a,
                      const struct container_spec *spec, void **ret_handle,
                      struct error_detail *ret_err)
{
        struct fake_backend *fb = data;

        (void) a;
        struct fake_member *fm;

        if (fb->fail_start && streq(fb->fail_start, name))
                return error_detail_set(ret_err, -ENOENT, "execve: No such file or directory");
        if (fb->n_members >= FAKE_MAX_MEMBERS)
                return -E2BIG;
        fm = xcalloc(1, sizeof(*fm));
        fm->fb = fb;
        fm->name = xstrdup(name);
        fm->host_uid = spec->host_uid;
        fm->seq = (unsigned) fb->n_members;
        fm->exit_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        fm->log_fd = fcntl(spec->stdio_fd, F_DUPFD_CLOEXEC, 3);
        fm->notify_fd = fm->listen_fd = fm->gate_fd = -EBADF;
        fm->status = -1;
        if (spec->notify)
                fm->notify_fd = fcntl(spec->pass_fds[spec->notify_pass_index], F_DUPFD_CLOEXEC, 3);
        if (spec->gate) {
                fm->gated = true;
                fm->gate_fd = fcntl(spec->pass_fds[spec->gate_pass_index], F_DUPFD_CLOEXEC, 3);
                (void) fcntl(fm->gate_fd, F_SETFL, O_NONBLOCK);
        }
        /* The first passed fd of an activated container: its listening socket. */
        if (spec->n_pass_fds > (spec->notify ? 1u : 0u) + (spec->gate ? 1u : 0u)) {
                fm->listen_fd = fcntl(spec->pass_fds[0], F_DUPFD_CLOEXEC, 3);
                if (fm->listen_fd >= 0)
                        (void) loop_add_io(fb->loop, fm->listen_fd, EPOLLIN, on_listen, fm,
                                           &fm->listen_src);
        }
        fb->members[fb->n_members++] = fm;
        if (!fb->manual_ready && fm->notify_fd >= 0)
                fake_ready(fm);
        *ret_handle = fm;
        return 0;
}

static int fake_exit_fd(void *handle)
{
        return ((struct fake_member *) handle)->exit_fd;
}

static pid_t fake_pid(void *handle)
{
        (void) handle;
        return 0; /* no process: nothing may signal or reap it but us */
}

static int fake_kill(void *handle, int sig)
{
        struct fake_member *fm = handle;

        if (fm->exited)
                return -ESRCH;
        fm->kills++;
        fm->last_signal = sig;
        if (sig == SIGKILL || sig == SIGTERM)
                signal_exit(fm, 128 + sig, sig);
        return 0;
}

static int fake_try_wait(void *handle, int *ret_status)
{
        struct fake_member *fm = handle;

        if (!fm->exited)
                return -EAGAIN;
        *ret_status = fm->status;
        return 0;
}

static int fake_init_signal(void *handle)
{
        return ((struct fake_member *) handle)->init_signal;
}

static void fake_free(void *handle)
{
        struct fake_member *fm = handle;

        /* member_free()'s contract: whatever still runs is killed. */
        if (!fm->exited) {
                fm->kills++;
                fm->last_signal = SIGKILL;
                signal_exit(fm, 128 + SIGKILL, SIGKILL);
        }
        fm->freed = true;
}

/* --- storage: plain directories --------------------------------------------------- */

static int mk(const char *path)
{
        return mkdir_p_at(AT_FDCWD, path, 0755);
}

static int fake_storage_setup(const struct unit_plan_context *ctx)
{
        const struct manifest *m = ctx->manifest;
        static const char *const dirs[] = { "sock", "services", "observers", "workspace/upper",
                                            "workspace/merged" };
        cleanup_free char *copy = unit_workspace_copy_dir(ctx);
        cleanup_free char *actions = unit_actions_dir(ctx);
        int r;

        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                cleanup_free char *d = xasprintf("%s/%s", ctx->episode_dir, dirs[i]);
                if ((r = mk(d)) < 0)
                        return r;
        }
        if ((r = mk(copy)) < 0 || (r = mk(actions)) < 0)
                return r;
        for (int z = 0; z < MANIFEST_ZONE_MAX; z++)
                for (size_t k = 0; k < m->zones[z].n_containers; k++) {
                        const struct manifest_container *c = &m->zones[z].containers[k];
                        cleanup_free char *sock = unit_socket_dir(ctx, c->name);
                        cleanup_free char *out = unit_observer_dir(ctx, c->name, "out");
                        cleanup_free char *in = unit_observer_dir(ctx, c->name, "inputs");
                        if ((r = mk(sock)) < 0)
                                return r;
                        if (z == MANIFEST_ZONE_OBSERVERS && ((r = mk(out)) < 0 || (r = mk(in)) < 0))
                                return r;
                }
        return 0;
}

static int fake_storage_teardown(const struct unit_plan_context *ctx)
{
        int r = rm_rf_at(AT_FDCWD, ctx->episode_dir);
        return r == -ENOENT ? 0 : r;
}

static int fake_storage_reset_copy(const struct unit_plan_context *ctx)
{
        cleanup_free char *copy = unit_workspace_copy_dir(ctx);
        (void) rm_rf_at(AT_FDCWD, copy);
        return mk(copy);
}

/* The test's word (fake_workspace_fill()), kept beside the layers as the
 * real tmpfs keeps its counts: storage functions get no backend to ask. */
static int fake_storage_full(const struct unit_plan_context *ctx)
{
        cleanup_free char *mark = xasprintf("%s/workspace/" FAKE_FULL_MARK, ctx->episode_dir);
        cleanup_free char *how = NULL;
        int r = read_full_file_at(AT_FDCWD, mark, 16, &how, NULL);

        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        return streq(how, "inodes") ? EPISODE_FS_FULL_INODES : EPISODE_FS_FULL_BYTES;
}

void fake_workspace_fill(const char *episode_dir, int how)
{
        cleanup_free char *mark = xasprintf("%s/workspace/" FAKE_FULL_MARK, episode_dir);
        cleanup_close int fd = open(mark, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        const char *word = how == EPISODE_FS_FULL_INODES ? "inodes" : "bytes";

        if (fd < 0 || write_all(fd, word, strlen(word)) < 0)
                abort();
}

static int fake_netns_new(struct kept_netns **ret)
{
        *ret = NULL; /* the container's own */
        return 0;
}

/* --- the test's side ---------------------------------------------------------------- */

void fake_backend_init(struct fake_backend *fb, struct loop *l)
{
        *fb = (struct fake_backend){ .loop = l };
        for (size_t i = 0; i < FAKE_MAX_CONNS; i++)
                fb->conns[i].fd = -EBADF;
        fb->launcher = (struct member_launcher){
                .spawn = fake_spawn,
                .exit_fd = fake_exit_fd,
                .pid = fake_pid,
                .kill = fake_kill,
                .try_wait = fake_try_wait,
                .init_signal = fake_init_signal,
                .free = fake_free,
                .data = fb,
        };
        fb->backend = (struct episode_backend){
                .launcher = &fb->launcher,
                .netns_new = fake_netns_new,
                .storage_setup = fake_storage_setup,
                .storage_teardown = fake_storage_teardown,
                .storage_reset_workspace_copy = fake_storage_reset_copy,
                .storage_workspace_full = fake_storage_full,
        };
}

void fake_backend_done(struct fake_backend *fb)
{
        for (size_t i = 0; i < FAKE_MAX_CONNS; i++) {
                fb->conns[i].src = loop_source_free(fb->conns[i].src);
                fb->conns[i].fd = safe_close(fb->conns[i].fd);
        }
        for (size_t i = 0; i < fb->n_members; i++) {
                struct fake_member *fm = fb->members[i];
                fm->listen_src = loop_source_free(fm->listen_src);
                safe_close(fm->listen_fd);
                safe_close(fm->log_fd);
                safe_close(fm->notify_fd);
                safe_close(fm->gate_fd);
                safe_close(fm->exit_fd);
                free(fm->name);
                free(fm);
        }
        fb->n_members = 0;
}

struct fake_member *fake_in_uids(struct fake_backend *fb, const char *name, uid_t first,
                                 uint32_t count)
{
        for (size_t i = fb->n_members; i > 0; i--) {
                struct fake_member *fm = fb->members[i - 1];
                if (streq(fm->name, name) && fm->host_uid - first < count)
                        return fm;
        }
        return NULL;
}

struct fake_member *fake_last(struct fake_backend *fb, const char *name)
{
        for (size_t i = fb->n_members; i > 0; i--)
                if (streq(fb->members[i - 1]->name, name))
                        return fb->members[i - 1];
        return NULL;
}

bool fake_principal_started(struct fake_member *fm)
{
        size_t len = strlen(fm->release);
        ssize_t n;

        if (!fm->gated || fm->released)
                return !fm->gated || fm->released;
        /* As the shim reads it (gate_wait()): lines, then an empty one. */
        while (fm->gate_fd >= 0 && len < sizeof(fm->release) - 1 &&
               (n = read(fm->gate_fd, fm->release + len, sizeof(fm->release) - 1 - len)) > 0)
                len += (size_t) n;
        fm->release[len] = '\0';
        fm->released = streq(fm->release, "\n") ||
                       (len >= 2 && fm->release[len - 1] == '\n' && fm->release[len - 2] == '\n');
        if (fm->released)
                fm->gate_fd = safe_close(fm->gate_fd);
        return fm->released;
}

void fake_close_gate(struct fake_member *fm)
{
        fm->gate_fd = safe_close(fm->gate_fd);
}

struct fake_member *fake_find(struct fake_backend *fb, const char *name)
{
        for (size_t i = fb->n_members; i > 0; i--) {
                struct fake_member *fm = fb->members[i - 1];
                if (streq(fm->name, name) && !fm->freed && fake_principal_started(fm))
                        return fm;
        }
        return NULL;
}

unsigned fake_starts(struct fake_backend *fb, const char *name)
{
        unsigned n = 0;
        for (size_t i = 0; i < fb->n_members; i++)
                n += streq(fb->members[i]->name, name) && fake_principal_started(fb->members[i]);
        return n;
}

void fake_ready(struct fake_member *fm)
{
        if (fm->notify_fd >= 0)
                (void) write_all(fm->notify_fd, "READY=1\n", 8);
        fm->notify_fd = safe_close(fm->notify_fd);
}

void fake_output(struct fake_member *fm, const char *text)
{
        if (fm->log_fd >= 0)
                (void) write_all(fm->log_fd, text, strlen(text));
}

void fake_exit(struct fake_member *fm, int status)
{
        signal_exit(fm, status, status > 128 ? status - 128 : 0);
}
