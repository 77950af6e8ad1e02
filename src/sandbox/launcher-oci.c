/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sandbox/launcher-oci.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/exit-code.h"
#include "base/command.h"
#include "base/fd-util.h"
#include "base/json-util.h"
#include "base/limits.h"
#include "base/macro.h"
#include "base/parse-util.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "sandbox/syscall-filter.h"

#define OCI_PATH_ENV  "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define SHIM_INSIDE   "/run/openenvd-shim"
#define LOG_TAIL_MAX  2000
#define CPU_PERIOD_US 100000

/* Only for WEAKEN_KEEP_CAPS (tests that prove a capability check can fail):
 * Docker's default set. */
static const char *const weak_caps[] = {
        "CAP_CHOWN",   "CAP_DAC_OVERRIDE", "CAP_FSETID",           "CAP_FOWNER",
        "CAP_MKNOD",   "CAP_NET_RAW",      "CAP_SETGID",           "CAP_SETUID",
        "CAP_SETFCAP", "CAP_SETPCAP",      "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT",
        "CAP_KILL",    "CAP_AUDIT_WRITE",
};

struct oci_container {
        char *runtime; /* owned: absolute path of the runtime binary */
        char *root;    /* owned: <state>/oci, the runtime's --root */
        char *bundle;  /* owned: <state>/bundles/<id> */
        char *id;      /* owned */
        bool root_mounted;
        bool created; /* runtime state exists: `delete` needed */
        int pidfd;    /* owned */
        pid_t pid;
        bool reaped;
        int status;
};

void oci_error_done(struct oci_error *e)
{
        if (!e)
                return;
        free(e->message);
        *e = (struct oci_error){ 0 };
}

static int fail(struct oci_error *e, int r, const char *fmt, ...) printf_fmt(3, 4);
static int fail(struct oci_error *e, int r, const char *fmt, ...)
{
        va_list ap;

        if (e && !e->message) {
                cleanup_strbuf struct strbuf sb = STRBUF_INIT;
                va_start(ap, fmt);
                strbuf_vaddf(&sb, fmt, ap);
                va_end(ap);
                e->error = -r;
                e->message = strbuf_detach(&sb, NULL);
        }
        return r;
}

/* ---------------------------------------------------------------- render */

static json_t *mount_json(const char *dest, const char *type, const char *source,
                          const char *const *opts, size_t n_opts)
{
        return json_pack("{s:s, s:s, s:s, s:o}", "destination", dest, "type", type, "source",
                         source, "options", strn_to_json(opts, n_opts));
}

/* Appends the MS_* flags of a spec mount as OCI option words. */
static void append_flag_options(json_t *opts, unsigned long flags)
{
        json_array_append_new(opts, json_string(flags & MS_RDONLY ? "ro" : "rw"));
        if (flags & MS_NOSUID)
                json_array_append_new(opts, json_string("nosuid"));
        if (flags & MS_NODEV)
                json_array_append_new(opts, json_string("nodev"));
        if (flags & MS_NOEXEC)
                json_array_append_new(opts, json_string("noexec"));
        if (flags & MS_NOSYMFOLLOW)
                json_array_append_new(opts, json_string("nosymfollow"));
}

static int spec_mount_json(const struct mount_entry *m, json_t **ret)
{
        json_t *opts = json_array();

        switch (m->kind) {
        case MOUNT_BIND:
                if (!m->source)
                        break;
                /* rbind + rprivate: submounts come along, and nothing the
                 * container unmounts propagates back to the host. */
                json_array_append_new(opts, json_string("rbind"));
                json_array_append_new(opts, json_string("rprivate"));
                append_flag_options(opts, m->flags);
                *ret = json_pack("{s:s, s:s, s:s, s:o}", "destination", m->target, "type", "bind",
                                 "source", m->source, "options", opts);
                return 0;
        case MOUNT_TMPFS:
                json_array_append_new(
                        opts, json_sprintf("size=%llu", (unsigned long long) m->size_bytes));
                json_array_append_new(opts, json_sprintf("mode=%o", (unsigned) (m->mode & 07777)));
                append_flag_options(opts, m->flags);
                *ret = mount_json(m->target, "tmpfs", "tmpfs", NULL, 0);
                json_object_set_new(*ret, "options", opts);
                return 0;
        case MOUNT_OVERLAY:
                if (!m->source || !m->upper || !m->work)
                        break;
                json_array_append_new(opts, json_sprintf("lowerdir=%s", m->source));
                json_array_append_new(opts, json_sprintf("upperdir=%s", m->upper));
                json_array_append_new(opts, json_sprintf("workdir=%s", m->work));
                append_flag_options(opts, m->flags);
                *ret = mount_json(m->target, "overlay", "overlay", NULL, 0);
                json_object_set_new(*ret, "options", opts);
                return 0;
        }
        json_decref(opts);
        return -EINVAL;
}

static int render_mounts(const struct container_spec *spec, const char *shim_host, json_t **ret)
{
        char shm_size[64], tmp_size[64];
        json_t *a = json_array();
        uint64_t tmp_bytes = spec->tmp_bytes ? spec->tmp_bytes : 64ULL * 1024 * 1024;

        (void) snprintf(shm_size, sizeof(shm_size), "size=%llu", (unsigned long long) tmp_bytes);
        (void) snprintf(tmp_size, sizeof(tmp_size), "size=%llu", (unsigned long long) tmp_bytes);

        json_array_append_new(a, mount_json("/proc", "proc", "proc",
                                            (const char *[]){ "nosuid", "noexec", "nodev" }, 3));
        json_array_append_new(a, mount_json("/dev", "tmpfs", "tmpfs",
                                            (const char *[]){ "nosuid", "strictatime", "mode=755",
                                                              "size=65536k" },
                                            4));
        /* No gid=5: the tty group is not mapped into the user namespace. */
        json_array_append_new(a, mount_json("/dev/pts", "devpts", "devpts",
                                            (const char *[]){ "nosuid", "noexec", "newinstance",
                                                              "ptmxmode=0666", "mode=0620" },
                                            5));
        json_array_append_new(a, mount_json("/dev/shm", "tmpfs", "shm",
                                            (const char *[]){ "nosuid", "noexec", "nodev",
                                                              "mode=1777", shm_size },
                                            5));
        json_array_append_new(a, mount_json("/dev/mqueue", "mqueue", "mqueue",
                                            (const char *[]){ "nosuid", "noexec", "nodev" }, 3));
        json_array_append_new(a,
                              mount_json("/sys", "sysfs", "sysfs",
                                         (const char *[]){ "nosuid", "noexec", "nodev", "ro" }, 4));
        json_array_append_new(
                a, mount_json("/tmp", "tmpfs", "tmpfs",
                              (const char *[]){ "nosuid", "nodev", "mode=1777", tmp_size }, 4));
        /* A fresh /run, so /run/openenvd can be created without making the
         * image writable, and nothing of the host's /run shows through. */
        json_array_append_new(a, mount_json("/run", "tmpfs", "tmpfs",
                                            (const char *[]){ "nosuid", "nodev", "noexec",
                                                              "mode=755", "size=1m" },
                                            5));
        if (spec->socket_dir)
                json_array_append_new(a, mount_json("/run/openenvd", "bind", spec->socket_dir,
                                                    (const char *[]){ "rbind", "rprivate", "nosuid",
                                                                      "nodev", "noexec" },
                                                    5));
        /* The shim is a read-only file bind; not noexec, it is what runs. */
        if (shim_host)
                json_array_append_new(
                        a, mount_json(SHIM_INSIDE, "bind", shim_host,
                                      (const char *[]){ "bind", "ro", "nosuid", "nodev" }, 4));
        for (size_t i = 0; i < spec->n_mounts; i++) {
                json_t *m;
                if (spec_mount_json(&spec->mounts[i], &m) < 0) {
                        json_decref(a);
                        return -EINVAL;
                }
                json_array_append_new(a, m);
        }
        *ret = a;
        return 0;
}

static json_t *render_resources(const struct cgroup_limits *l)
{
        json_t *r = json_object();

        /* Device access is decided by the (empty) /dev tmpfs; deny all in
         * the devices cgroup too. */
        json_object_set_new(r, "devices", json_pack("[{s:b, s:s}]", "allow", 0, "access", "rwm"));
        if (!l)
                return r;
        if (l->memory_bytes)
                /* swap = limit: memory+swap may not exceed the limit (no swap). */
                json_object_set_new(r, "memory",
                                    json_pack("{s:I, s:I}", "limit", (json_int_t) l->memory_bytes,
                                              "swap", (json_int_t) l->memory_bytes));
        if (l->pids)
                json_object_set_new(r, "pids", json_pack("{s:I}", "limit", (json_int_t) l->pids));
        if (l->cpu > 0) {
                json_int_t quota = (json_int_t) (l->cpu * CPU_PERIOD_US);
                /* The kernel refuses quotas below 1 ms. */
                if (quota < 1000)
                        quota = 1000;
                json_object_set_new(r, "cpu",
                                    json_pack("{s:I, s:I}", "quota", quota, "period",
                                              (json_int_t) CPU_PERIOD_US));
        }
        return r;
}

static json_t *render_caps(bool keep)
{
        json_t *caps = json_object();
        const char *sets[] = { "bounding", "effective", "inheritable", "permitted", "ambient" };

        for (size_t i = 0; i < ELEMENTSOF(sets); i++)
                json_object_set_new(caps, sets[i],
                                    keep && !streq(sets[i], "ambient") &&
                                                    !streq(sets[i], "inheritable")
                                            ? strn_to_json(weak_caps, ELEMENTSOF(weak_caps))
                                            : json_array());
        return caps;
}

static bool name_ok(const char *s)
{
        if (!s || !*s || strlen(s) > 64)
                return false;
        for (const char *p = s; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.'))
                        return false;
        return true;
}

static int spec_check(const struct container_spec *spec)
{
        if (!spec || !name_ok(spec->name) || !spec->argv || !spec->argv[0] || !spec->rootfs)
                return -EINVAL;
        /* The principal is never root inside, the range never maps host root. */
        if (spec->uid == 0 || spec->gid == 0 || spec->host_uid == 0 || spec->uid_count == 0 ||
            spec->uid >= spec->uid_count || spec->gid >= spec->uid_count)
                return -EINVAL;
        return 0;
}

int oci_config_render(const struct container_spec *spec, const char *root_path,
                      const char *shim_host, const char *cgroups_path,
                      const struct cgroup_limits *limits, json_t **ret)
{
        json_t *cfg = NULL, *args, *env, *rlimits, *process, *linux_, *mounts, *masked, *ro,
               *seccomp = NULL;
        cleanup(container_policy_done) struct container_policy policy = {};
        int r;

        r = spec_check(spec);
        if (r < 0)
                return r;
        if (!root_path)
                return -EINVAL;

        /* Masks, read-only paths and the shim's command line: the policy
         * the native launcher applies too. */
        container_policy_init(&policy, spec, SHIM_INSIDE);
        args = json_array();
        for (char **a = shim_host ? policy.shim_argv : spec->argv; *a; a++)
                json_array_append_new(args, json_string(*a));

        env = json_array();
        if (spec->env)
                for (char **e = spec->env; *e; e++)
                        json_array_append_new(env, json_string(*e));
        else
                json_array_append_new(env, json_string(OCI_PATH_ENV));

        rlimits = json_pack("[{s:s, s:I, s:I}]", "type", "RLIMIT_CORE", "hard", (json_int_t) 0,
                            "soft", (json_int_t) 0);
        {
                json_int_t nofile = spec->nofile ? (json_int_t) spec->nofile : 4096;
                json_array_append_new(rlimits, json_pack("{s:s, s:I, s:I}", "type", "RLIMIT_NOFILE",
                                                         "hard", nofile, "soft", nofile));
        }
        if (spec->nproc)
                json_array_append_new(rlimits, json_pack("{s:s, s:I, s:I}", "type", "RLIMIT_NPROC",
                                                         "hard", (json_int_t) spec->nproc, "soft",
                                                         (json_int_t) spec->nproc));

        process = json_pack("{s:b, s:{s:I, s:I}, s:o, s:o, s:s, s:o, s:o, s:b}", "terminal", 0,
                            "user", "uid", (json_int_t) spec->uid, "gid", (json_int_t) spec->gid,
                            "args", args, "env", env, "cwd", spec->workdir ? spec->workdir : "/",
                            "capabilities", render_caps(spec->weaken & WEAKEN_KEEP_CAPS), "rlimits",
                            rlimits, "noNewPrivileges", 1);

        r = render_mounts(spec, shim_host, &mounts);
        if (r < 0) {
                json_decref(process);
                return r;
        }

        masked = strn_to_json((const char *const *) policy.masked, strv_length(policy.masked));
        ro = strn_to_json((const char *const *) policy.readonly, strv_length(policy.readonly));

        linux_ = json_pack("{s:[{s:s},{s:s},{s:s},{s:s},{s:s},{s:s},{s:s}],"
                           " s:[{s:I, s:I, s:I}], s:[{s:I, s:I, s:I}],"
                           " s:o, s:o, s:o, s:{s:s}}",
                           "namespaces", "type", "pid", "type", "network", "type", "ipc", "type",
                           "uts", "type", "mount", "type", "cgroup", "type", "user", "uidMappings",
                           "containerID", (json_int_t) 0, "hostID", (json_int_t) spec->host_uid,
                           "size", (json_int_t) spec->uid_count, "gidMappings", "containerID",
                           (json_int_t) 0, "hostID", (json_int_t) spec->host_uid, "size",
                           (json_int_t) spec->uid_count, "resources", render_resources(limits),
                           "maskedPaths", masked, "readonlyPaths", ro, "sysctl",
                           "net.ipv4.ip_unprivileged_port_start", "0");
        if (cgroups_path)
                json_object_set_new(linux_, "cgroupsPath", json_string(cgroups_path));
        if (!(spec->weaken & WEAKEN_NO_SECCOMP)) {
                r = syscall_filter_to_oci(&seccomp);
                if (r < 0) {
                        json_decref(process);
                        json_decref(mounts);
                        json_decref(linux_);
                        return r;
                }
                json_object_set_new(linux_, "seccomp", seccomp);
        }

        cfg = json_pack("{s:s, s:o, s:{s:s, s:b}, s:s, s:o, s:{s:s}, s:o}", "ociVersion", "1.0.2",
                        "process", process, "root", "path", root_path, "readonly",
                        !(spec->weaken & WEAKEN_WRITABLE_ROOT), "hostname", spec->name, "mounts",
                        mounts, "annotations", "org.openenvd.openenvd.container", spec->name,
                        "linux", linux_);
        if (!cfg)
                return -ENOMEM;
        *ret = cfg;
        return 0;
}

/* ---------------------------------------------------------------- runtime */

int oci_runtime_find(const char *runtime, char **ret_path)
{
        static const char *const defaults[] = { "runc", "crun", "runsc" };

        if (runtime && runtime[0] == '/') {
                if (access(runtime, X_OK) < 0)
                        return -errno;
                *ret_path = xstrdup(runtime);
                return 0;
        }
        if (runtime && (strchr(runtime, '/') || !*runtime))
                return -EINVAL;
        for (size_t i = 0; i < (runtime ? 1 : ELEMENTSOF(defaults)); i++)
                if (command_find_binary(runtime ? runtime : defaults[i], ret_path) >= 0)
                        return 0;
        return -ENOENT;
}

static const char *runtime_name(const struct oci_container *c)
{
        const char *s = strrchr(c->runtime, '/');
        return s ? s + 1 : c->runtime;
}

/*
 * Runs `<runtime> --root R --log L <args...>` and waits for it. stdin is
 * /dev/null; stdout and stderr go to out_fd (-EBADF: /dev/null); pass_fds
 * become 3, 4, ... (`create --preserve-fds n` hands them to the init). No
 * shell: the arguments are never parsed again. The runtime keeps our signal
 * mask and process group, which it passes on to the container's init as
 * the native launcher does.
 */
static int runtime_run(const struct oci_container *c, const char *const *args, int out_fd,
                       const int *pass_fds, size_t n_pass, int *ret_status)
{
        cleanup_free char *log = xasprintf("%s/runtime.log", c->bundle);
        char *const envp[] = { (char *) OCI_PATH_ENV, NULL };
        struct command_output out;
        const char *argv[32];
        size_t n = 0;
        int r;

        if (n_pass > CONTAINER_MAX_PASS_FDS)
                return -E2BIG;
        argv[n++] = c->runtime;
        argv[n++] = "--root";
        argv[n++] = c->root;
        argv[n++] = "--log";
        argv[n++] = log;
        for (; *args && n < ELEMENTSOF(argv) - 1; args++)
                argv[n++] = *args;
        argv[n] = NULL;

        r = command_run(&(const struct command_spec){ .argv = (char *const *) argv,
                                                      .envp = envp,
                                                      .stdin_fd = -EBADF,
                                                      .pass_fds = pass_fds,
                                                      .n_pass = n_pass,
                                                      .flags = COMMAND_OUTPUT_TO_FD |
                                                               COMMAND_INHERIT_SIGNALS,
                                                      .output_fd = out_fd,
                                                      .cancel_fd = -EBADF },
                        &out);
        if (r < 0)
                return r;
        *ret_status = out.exit_status;
        command_output_done(&out);
        return 0;
}

/* Last LOG_TAIL_MAX bytes of the runtime's log, trimmed, for error text. */
static char *runtime_log_tail(const struct oci_container *c)
{
        cleanup_free char *path = xasprintf("%s/runtime.log", c->bundle);
        cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        char buf[LOG_TAIL_MAX + 1];
        off_t size;
        ssize_t n;

        if (fd < 0)
                return xstrdup("(no runtime log)");
        size = lseek(fd, 0, SEEK_END);
        if (size < 0 || lseek(fd, size > LOG_TAIL_MAX ? size - LOG_TAIL_MAX : 0, SEEK_SET) < 0)
                return xstrdup("(unreadable runtime log)");
        n = read(fd, buf, LOG_TAIL_MAX);
        if (n < 0)
                n = 0;
        buf[n] = '\0';
        while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
                buf[--n] = '\0';
        return xstrdup(n > 0 ? buf : "(empty runtime log)");
}

static int runtime_cmd(struct oci_container *c, struct oci_error *err, const char *const *args,
                       int out_fd, const int *pass_fds, size_t n_pass)
{
        int status = 0, r;

        r = runtime_run(c, args, out_fd, pass_fds, n_pass, &status);
        if (r < 0)
                return fail(err, r, "%s %s %s: %s", runtime_name(c), args[0], c->id, strerror(-r));
        if (status != 0) {
                cleanup_free char *tail = runtime_log_tail(c);
                return fail(err, -EIO, "%s %s %s failed (exit %d): %s", runtime_name(c), args[0],
                            c->id, status, tail);
        }
        return 0;
}

/* --------------------------------------------------------------- rootfs */

/*
 * The runtime needs a root it can pivot onto; "/" itself cannot be. Bind the
 * image root (not recursively) and make the bind private, read-only, nosuid
 * and nodev. Not recursive on purpose: this bind lives in the caller's mount
 * namespace, and a recursive bind of "/" would capture every other live
 * container's root bind (mount trees growing with each container, and
 * rootfs dirs that can no longer be removed: EBUSY). The runtime mounts
 * /proc, /dev, /sys, /tmp and /run itself; other submounts of the image
 * root are not visible inside.
 * runc's own root.readonly would remount only the top mount anyway.
 */
/* Creates, in the upper layer root, every mount destination of spec that
 * the image (lower) lacks: directories, or empty files for file binds.
 * Destinations the image has are left to it, modes and owners included. */
static int rootfs_add_mountpoints(const struct container_spec *spec, const char *root)
{
        cleanup_close int rfd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        cleanup_close int lfd = open(spec->rootfs, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        static const char *const fixed[] = { "run", "proc", "dev", "sys", "tmp" };

        if (rfd < 0 || lfd < 0)
                return -errno;
        for (size_t i = 0; i < ELEMENTSOF(fixed); i++)
                if (faccessat(lfd, fixed[i], F_OK, AT_SYMLINK_NOFOLLOW) < 0 &&
                    mkdirat(rfd, fixed[i], 0755) < 0 && errno != EEXIST)
                        return -errno;
        for (size_t i = 0; i < spec->n_mounts; i++) {
                const struct mount_entry *m = &spec->mounts[i];
                const char *rel = m->target + strspn(m->target, "/");
                cleanup_free char *dir = xstrdup(rel);
                char *slash = strrchr(dir, '/');
                int r;

                if (faccessat(lfd, rel, F_OK, AT_SYMLINK_NOFOLLOW) == 0 ||
                    faccessat(rfd, rel, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
                        continue;
                if (slash) {
                        *slash = '\0';
                        r = mkdir_p_at(rfd, dir, 0755);
                        if (r < 0)
                                return r;
                }
                if (m->is_file) {
                        int fd = openat(rfd, rel,
                                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
                        if (fd < 0)
                                return -errno;
                        safe_close(fd);
                } else if (mkdirat(rfd, rel, 0755) < 0 && errno != EEXIST) {
                        return -errno;
                }
        }
        return 0;
}

/*
 * The container's root: the image root as the lower layer of an overlay
 * whose upper layer, on a small tmpfs in the bundle, holds only the mount
 * destinations the image lacks. The runtime cannot create them on a
 * read-only root (runc: "mkdir .../workspace: read-only file system") and
 * the image itself must never be written; the runtime then remounts the
 * whole root read-only (root.readonly).
 */
static int rootfs_mount(const struct container_spec *spec, const char *layers, const char *target)
{
        cleanup_free char *upper = xasprintf("%s/upper", layers);
        cleanup_free char *work = xasprintf("%s/work", layers);
        cleanup_free char *opts = NULL;
        int r;

        if (mount("tmpfs", layers, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0700") < 0)
                return -errno;
        if (mkdir(upper, 0755) < 0 || mkdir(work, 0700) < 0)
                return -errno;
        r = rootfs_add_mountpoints(spec, upper);
        if (r < 0)
                return r;
        opts = xasprintf("lowerdir=%s,upperdir=%s,workdir=%s", spec->rootfs, upper, work);
        if (mount("overlay", target, "overlay", MS_NOSUID | MS_NODEV, opts) < 0)
                return -errno;
        if (mount(NULL, target, NULL, MS_PRIVATE, NULL) < 0 ||
            mount(NULL, target, NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0) {
                r = -errno;
                (void) umount2(target, MNT_DETACH);
                return r;
        }
        return 0;
}

static int rootfs_prepare(const struct container_spec *spec, const char *bundle, const char *target)
{
        cleanup_free char *layers = xasprintf("%s/layers", bundle);
        int r;

        if (mkdir(layers, 0700) < 0)
                return -errno;
        r = rootfs_mount(spec, layers, target);
        if (r < 0) {
                (void) umount2(layers, MNT_DETACH);
                (void) rmdir(layers);
        }
        return r;
}

/*
 * Removes exactly what the launcher put in the bundle, name by name. Never
 * recursive: if the root bind could not be unmounted, rmdir fails with
 * EBUSY instead of walking into the image.
 */
static void bundle_remove(const char *bundle)
{
        static const char *const files[] = { "config.json", "runtime.log", "init.pid" };
        cleanup_close int fd = open(bundle, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

        if (fd < 0)
                return;
        for (size_t i = 0; i < ELEMENTSOF(files); i++)
                (void) unlinkat(fd, files[i], 0);
        (void) unlinkat(fd, "rootfs", AT_REMOVEDIR);
        (void) rmdir(bundle);
}

/* -------------------------------------------------------------- lifecycle */

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
                (void) runtime_run(c, args, -EBADF, NULL, 0, &status);
        }
        if (c->root_mounted) {
                cleanup_free char *rootfs = xasprintf("%s/rootfs", c->bundle);
                cleanup_free char *layers = xasprintf("%s/layers", c->bundle);
                (void) umount2(rootfs, MNT_DETACH);
                (void) umount2(layers, MNT_DETACH);
                (void) rmdir(layers);
        }
        if (c->bundle)
                bundle_remove(c->bundle);
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
                        struct oci_container **ret, struct oci_error *ret_err)
{
        cleanup(oci_container_freep) struct oci_container *c = NULL;
        cleanup_free char *bundles = NULL, *rootfs = NULL, *config_path = NULL,
                          *cgroups_path = NULL, *pid_path = NULL, *text = NULL;
        const char *shim;
        json_t *cfg = NULL;
        int r, subreaper = 0;

        if (ret_err)
                *ret_err = (struct oci_error){ 0 };
        if (!opts || !opts->state_dir || opts->state_dir[0] != '/')
                return fail(ret_err, -EINVAL, "OCI launcher: state_dir must be an absolute path");
        r = spec_check(spec);
        if (r < 0)
                return fail(ret_err, r, "OCI launcher: invalid container spec");
        shim = opts->shim_path ? opts->shim_path : spec->shim_path;
        if (opts->id && !name_ok(opts->id))
                return fail(ret_err, -EINVAL, "OCI launcher: invalid container id");
        /* Without this the container's init is re-parented past us and its
         * exit status is lost; see the header. */
        if (getpid() != 1 && (prctl(PR_GET_CHILD_SUBREAPER, &subreaper) < 0 || !subreaper))
                return fail(ret_err, -ECHILD,
                            "OCI launcher: the caller must be PID 1 or a child subreaper");

        c = xcalloc(1, sizeof(*c));
        c->pidfd = -EBADF;
        r = oci_runtime_find(opts->runtime, &c->runtime);
        if (r < 0)
                return fail(ret_err, r, "OCI runtime %s is not installed",
                            opts->runtime ? opts->runtime : "(runc, crun, runsc)");
        if (opts->id)
                c->id = xstrdup(opts->id);
        else {
                cleanup_free char *hex = NULL;
                r = random_hex(4, &hex);
                if (r < 0)
                        return fail(ret_err, r, "OCI launcher: random id: %s", strerror(-r));
                c->id = xasprintf("openenvd-%s-%s", spec->name, hex);
        }

        /* Runtime root private to us; bundles traversable (0711) by the
         * mapped root, which resolves the rootfs path inside the userns. */
        c->root = xasprintf("%s/oci", opts->state_dir);
        bundles = xasprintf("%s/bundles", opts->state_dir);
        if ((mkdir(c->root, 0700) < 0 && errno != EEXIST) ||
            (mkdir(bundles, 0711) < 0 && errno != EEXIST))
                return fail(ret_err, -errno, "OCI launcher: %s: %m", opts->state_dir);
        c->bundle = xasprintf("%s/%s", bundles, c->id);
        if (mkdir(c->bundle, 0711) < 0) {
                r = -errno;
                free(c->bundle);
                c->bundle = NULL; /* not ours: never remove it */
                return fail(ret_err, r, "OCI launcher: bundle for %s: %s", c->id, strerror(-r));
        }
        rootfs = xasprintf("%s/rootfs", c->bundle);
        if (mkdir(rootfs, 0755) < 0)
                return fail(ret_err, -errno, "OCI launcher: %s: %m", rootfs);
        r = rootfs_prepare(spec, c->bundle, rootfs);
        if (r < 0)
                return fail(ret_err, r, "OCI launcher: root overlay of %s: %s", spec->rootfs,
                            strerror(-r));
        c->root_mounted = true;

        cgroups_path = opts->cgroups_path ? xstrdup(opts->cgroups_path)
                                          : xasprintf("openenvd-oci-%s", c->id);
        r = oci_config_render(spec, rootfs, shim, cgroups_path, opts->limits, &cfg);
        if (r < 0)
                return fail(ret_err, r, "OCI launcher: rendering config.json: %s", strerror(-r));
        text = json_dumps(cfg, JSON_INDENT(2));
        json_decref(cfg);
        if (!text)
                return fail(ret_err, -ENOMEM, "OCI launcher: rendering config.json");
        config_path = xasprintf("%s/config.json", c->bundle);
        {
                cleanup_close int fd = open(
                        config_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
                if (fd < 0)
                        return fail(ret_err, -errno, "OCI launcher: %s: %m", config_path);
                r = write_all(fd, text, strlen(text));
                if (r < 0)
                        return fail(ret_err, r, "OCI launcher: %s: %s", config_path, strerror(-r));
        }

        /* create: the runtime sets everything up and leaves the init blocked
         * before exec; its stdio is the container's. */
        pid_path = xasprintf("%s/init.pid", c->bundle);
        c->created = true; /* from here on a failed create may leave state: delete it */
        {
                char preserve[16];
                (void) snprintf(preserve, sizeof(preserve), "%zu", spec->n_pass_fds);
                r = runtime_cmd(c, ret_err,
                                (const char *[]){ "create", "--bundle", c->bundle, "--pid-file",
                                                  pid_path, "--preserve-fds", preserve, c->id,
                                                  NULL },
                                spec->stdio_fd, spec->pass_fds, spec->n_pass_fds);
        }
        if (r < 0)
                return r;
        r = read_pid_file(c->bundle, &c->pid);
        if (r < 0)
                return fail(ret_err, r, "%s create %s: no init pid: %s", runtime_name(c), c->id,
                            strerror(-r));
        c->pidfd = pidfd_open(c->pid, 0);
        if (c->pidfd < 0)
                return fail(ret_err, -errno, "%s create %s: pidfd of %d: %m", runtime_name(c),
                            c->id, (int) c->pid);
        {
                /* The init must be our child now (adopted as subreaper). */
                siginfo_t si = { 0 };
                if (waitid(P_PIDFD, (id_t) c->pidfd, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
                        return fail(ret_err, -errno, "%s create %s: init %d is not our child: %m",
                                    runtime_name(c), c->id, (int) c->pid);
        }
        r = runtime_cmd(c, ret_err, (const char *[]){ "start", c->id, NULL }, -EBADF, NULL, 0);
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

int oci_container_try_wait(struct oci_container *c, int *ret_status)
{
        int r = container_reap(c, WNOHANG);
        if (r < 0)
                return r;
        *ret_status = c->status;
        return 0;
}
