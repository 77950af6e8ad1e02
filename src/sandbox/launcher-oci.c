/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A container's life under an OCI runtime: the bundle written, `create` and
 * `start`, the init reaped through its pidfd, everything undone on free.
 * The parts it uses are listed in oci-internal.h.
 */
#include "sandbox/launcher-oci.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/exit-code.h"
#include "base/fd-util.h"
#include "base/parse-util.h"
#include "base/util.h"
#include "sandbox/cgroup-view-ns.h"
#include "sandbox/oci-internal.h"

static int container_reap(struct oci_container *c, int flags)
{
        siginfo_t si = { 0 };

        if (c->reaped)
                return 0;
        if (c->pidfd < 0)
                return -ESRCH;
        for (;;) {
                if (waitid(P_PIDFD, (id_t) c->pidfd, &si, WEXITED | flags) == 0)
                        break;
                if (errno != EINTR)
                        return -errno;
        }
        if (si.si_pid == 0)
                return -EAGAIN;
        c->status = exit_status_from_siginfo(si.si_code, si.si_status);
        c->init_signal = si.si_code == CLD_EXITED ? 0 : si.si_status;
        c->reaped = true;
        return 0;
}

struct oci_container *oci_container_free(struct oci_container *c)
{
        if (!c)
                return NULL;
        if (c->pidfd >= 0 && !c->reaped) {
                (void) pidfd_send_signal(c->pidfd, SIGKILL, NULL, 0);
                (void) container_reap(c, 0);
        }
        if (c->created) {
                const char *args[] = { "delete", "--force", c->id, NULL };
                int status;
                (void) oci_runtime_run(c, args, -EBADF, NULL, 0, &status);
        }
        /* Before the unmounts below: the view's copies of them go with it. */
        safe_close(c->view_ns);
        if (c->root_mounted) {
                cleanup_free char *rootfs = xasprintf("%s/rootfs", c->bundle);
                cleanup_free char *layers = xasprintf("%s/layers", c->bundle);
                (void) umount2(rootfs, MNT_DETACH);
                (void) umount2(layers, MNT_DETACH);
                (void) rmdir(layers);
        }
        if (c->bundle)
                oci_bundle_remove(c->bundle);
        safe_close(c->pidfd);
        free(c->runtime);
        free(c->root);
        free(c->bundle);
        free(c->id);
        free(c);
        return NULL;
}

static int read_pid_file(const char *bundle, pid_t *ret)
{
        cleanup_free char *path = xasprintf("%s/init.pid", bundle), *s = NULL;
        int v, r;

        r = read_full_file_at(AT_FDCWD, path, 64, &s, NULL);
        if (r < 0)
                return r;
        s[strcspn(s, "\n")] = '\0';
        r = parse_int(s, 1, INT32_MAX, &v);
        if (r < 0)
                return r;
        *ret = (pid_t) v;
        return 0;
}

int oci_container_spawn(const struct oci_options *opts, const struct container_spec *spec,
                        struct oci_container **ret, struct error_detail *ret_err)
{
        cleanup(oci_container_freep) struct oci_container *c = NULL;
        cleanup_free char *bundles = NULL, *rootfs = NULL, *config_path = NULL,
                          *cgroups_path = NULL, *pid_path = NULL, *text = NULL;
        const char *shim;
        json_t *cfg = NULL;
        int r, subreaper = 0;

        if (!opts || !opts->state_dir || opts->state_dir[0] != '/')
                return error_detail_set(ret_err, -EINVAL,
                                        "OCI launcher: state_dir must be an absolute path");
        r = oci_spec_check(spec);
        if (r < 0)
                return error_detail_set(ret_err, r, "OCI launcher: invalid container spec");
        shim = opts->shim_path ? opts->shim_path : spec->shim_path;
        if (opts->id && !oci_name_ok(opts->id))
                return error_detail_set(ret_err, -EINVAL, "OCI launcher: invalid container id");
        /* Without this the container's init is re-parented past us and its
         * exit status is lost; see the header. */
        if (getpid() != 1 && (prctl(PR_GET_CHILD_SUBREAPER, &subreaper) < 0 || !subreaper))
                return error_detail_set(
                        ret_err, -ECHILD,
                        "OCI launcher: the caller must be PID 1 or a child subreaper");

        c = xcalloc(1, sizeof(*c));
        c->pidfd = c->view_ns = -EBADF;
        r = oci_runtime_find(opts->runtime, &c->runtime);
        if (r < 0)
                return error_detail_set(ret_err, r, "OCI runtime %s is not installed",
                                        opts->runtime ? opts->runtime : "(runc, crun, runsc)");
        if (opts->id)
                c->id = xstrdup(opts->id);
        else {
                cleanup_free char *hex = NULL;
                r = random_hex(4, &hex);
                if (r < 0)
                        return error_detail_set(ret_err, r, "OCI launcher: random id: %s",
                                                strerror(-r));
                c->id = xasprintf("openenvd-%s-%s", spec->name, hex);
        }

        /* Runtime root private to us; bundles traversable (0711) by the
         * mapped root, which resolves the rootfs path inside the userns. */
        c->root = xasprintf("%s/oci", opts->state_dir);
        bundles = xasprintf("%s/bundles", opts->state_dir);
        if ((mkdir(c->root, 0700) < 0 && errno != EEXIST) ||
            (mkdir(bundles, 0711) < 0 && errno != EEXIST))
                return error_detail_set(ret_err, -errno, "OCI launcher: %s: %m", opts->state_dir);
        c->bundle = xasprintf("%s/%s", bundles, c->id);
        if (mkdir(c->bundle, 0711) < 0) {
                r = -errno;
                free(c->bundle);
                c->bundle = NULL; /* not ours: never remove it */
                return error_detail_set(ret_err, r, "OCI launcher: bundle for %s: %s", c->id,
                                        strerror(-r));
        }
        rootfs = xasprintf("%s/rootfs", c->bundle);
        if (mkdir(rootfs, 0755) < 0)
                return error_detail_set(ret_err, -errno, "OCI launcher: %s: %m", rootfs);
        r = oci_rootfs_prepare(spec, c->bundle, rootfs);
        if (r < 0)
                return error_detail_set(ret_err, r, "OCI launcher: root overlay of %s: %s",
                                        spec->rootfs, strerror(-r));
        c->root_mounted = true;
        /* After the root's mount, which the view's copy of our mounts holds. */
        if (opts->cgroup_view) {
                r = cgroup_view_ns_create(opts->cgroup_view, &c->view_ns);
                if (r < 0)
                        return error_detail_set(ret_err, r, "OCI launcher: cgroup view for %s: %s",
                                                c->id, strerror(-r));
        }

        cgroups_path = opts->cgroups_path ? xstrdup(opts->cgroups_path)
                                          : xasprintf("openenvd-oci-%s", c->id);
        r = oci_config_render(spec, rootfs, shim, cgroups_path, opts->limits, &cfg);
        if (r < 0)
                return error_detail_set(ret_err, r, "OCI launcher: rendering config.json: %s",
                                        strerror(-r));
        text = json_dumps(cfg, JSON_INDENT(2));
        json_decref(cfg);
        if (!text)
                return error_detail_set(ret_err, -ENOMEM, "OCI launcher: rendering config.json");
        config_path = xasprintf("%s/config.json", c->bundle);
        {
                cleanup_close int fd = open(
                        config_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
                if (fd < 0)
                        return error_detail_set(ret_err, -errno, "OCI launcher: %s: %m",
                                                config_path);
                r = write_all(fd, text, strlen(text));
                if (r < 0)
                        return error_detail_set(ret_err, r, "OCI launcher: %s: %s", config_path,
                                                strerror(-r));
        }

        /* create: the runtime sets everything up and leaves the init blocked
         * before exec; its stdio is the container's. */
        pid_path = xasprintf("%s/init.pid", c->bundle);
        c->created = true; /* from here on a failed create may leave state: delete it */
        {
                char preserve[16];
                (void) snprintf(preserve, sizeof(preserve), "%zu", spec->n_pass_fds);
                r = oci_runtime_cmd(c, ret_err,
                                    (const char *[]){ "create", "--bundle", c->bundle, "--pid-file",
                                                      pid_path, "--preserve-fds", preserve, c->id,
                                                      NULL },
                                    spec->stdio_fd, spec->pass_fds, spec->n_pass_fds);
        }
        if (r < 0)
                return r;
        r = read_pid_file(c->bundle, &c->pid);
        if (r < 0)
                return error_detail_set(ret_err, r, "%s create %s: no init pid: %s",
                                        oci_runtime_name(c), c->id, strerror(-r));
        c->pidfd = pidfd_open(c->pid, 0);
        if (c->pidfd < 0)
                return error_detail_set(ret_err, -errno, "%s create %s: pidfd of %d: %m",
                                        oci_runtime_name(c), c->id, (int) c->pid);
        {
                /* The init must be our child now (adopted as subreaper). */
                siginfo_t si = { 0 };
                if (waitid(P_PIDFD, (id_t) c->pidfd, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
                        return error_detail_set(ret_err, -errno,
                                                "%s create %s: init %d is not our child: %m",
                                                oci_runtime_name(c), c->id, (int) c->pid);
        }
        r = oci_runtime_cmd(c, ret_err, (const char *[]){ "start", c->id, NULL }, -EBADF, NULL, 0);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(c);
        return 0;
}

const char *oci_container_id(const struct oci_container *c)
{
        return c->id;
}

const char *oci_container_bundle(const struct oci_container *c)
{
        return c->bundle;
}

int oci_container_pidfd(const struct oci_container *c)
{
        return c->pidfd;
}

pid_t oci_container_pid(const struct oci_container *c)
{
        return c->pid;
}

int oci_container_kill(struct oci_container *c, int sig)
{
        if (c->reaped || c->pidfd < 0)
                return -ESRCH;
        if (pidfd_send_signal(c->pidfd, sig, NULL, 0) < 0)
                return -errno;
        return 0;
}

int oci_container_wait(struct oci_container *c, int *ret_status)
{
        int r = container_reap(c, 0);
        if (r < 0)
                return r;
        *ret_status = c->status;
        return 0;
}

int oci_container_init_signal(const struct oci_container *c)
{
        return c->reaped ? c->init_signal : 0;
}

int oci_container_try_wait(struct oci_container *c, int *ret_status)
{
        int r = container_reap(c, WNOHANG);
        if (r < 0)
                return r;
        *ret_status = c->status;
        return 0;
}
