/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The OCI runtime-spec config.json of a container: its mounts (the
 * container policy's masks and read-only paths included), namespaces, uid
 * maps, resources, capabilities, seccomp filter and the shim as its
 * process.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>

#include "base/json-util.h"
#include "base/util.h"
#include "sandbox/oci-internal.h"
#include "sandbox/syscall-filter.h"

/* Only for WEAKEN_KEEP_CAPS (tests that prove a capability check can fail):
 * Docker's default set. */
static const char *const weak_caps[] = {
        "CAP_CHOWN",   "CAP_DAC_OVERRIDE", "CAP_FSETID",           "CAP_FOWNER",
        "CAP_MKNOD",   "CAP_NET_RAW",      "CAP_SETGID",           "CAP_SETUID",
        "CAP_SETFCAP", "CAP_SETPCAP",      "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT",
        "CAP_KILL",    "CAP_AUDIT_WRITE",
};

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

/* m was checked by container_spec_validate() (oci_spec_check()), which
 * holds the rules of each kind; NULL only if jansson failed (a NULL string
 * it cannot pack included), so a mount is never silently dropped. */
static json_t *spec_mount_json(const struct mount_entry *m)
{
        json_t *opts = json_array(), *ret;

        switch (m->kind) {
        case MOUNT_BIND:
                /* rbind + rprivate: submounts come along, and nothing the
                 * container unmounts propagates back to the host. */
                json_array_append_new(opts, json_string("rbind"));
                json_array_append_new(opts, json_string("rprivate"));
                append_flag_options(opts, m->flags);
                return json_pack("{s:s, s:s, s:s, s:o}", "destination", m->target, "type", "bind",
                                 "source", m->source, "options", opts);
        case MOUNT_TMPFS:
                json_array_append_new(
                        opts, json_sprintf("size=%llu", (unsigned long long) m->size_bytes));
                json_array_append_new(opts, json_sprintf("mode=%o", (unsigned) (m->mode & 07777)));
                append_flag_options(opts, m->flags);
                ret = mount_json(m->target, "tmpfs", "tmpfs", NULL, 0);
                break;
        case MOUNT_OVERLAY:
                json_array_append_new(opts, json_sprintf("lowerdir=%s", m->source));
                json_array_append_new(opts, json_sprintf("upperdir=%s", m->upper));
                json_array_append_new(opts, json_sprintf("workdir=%s", m->work));
                append_flag_options(opts, m->flags);
                ret = mount_json(m->target, "overlay", "overlay", NULL, 0);
                break;
        default:
                ret = NULL;
                break;
        }
        if (!ret) {
                json_decref(opts);
                return NULL;
        }
        json_object_set_new(ret, "options", opts);
        return ret;
}

static int render_mounts(const struct container_spec *spec, const char *shim_host, json_t **ret)
{
        char shm_size[64], tmp_size[64];
        json_t *a = json_array();

        /* tmp_bytes is never 0 here (container_spec_validate()). */
        (void) snprintf(shm_size, sizeof(shm_size), "size=%llu",
                        (unsigned long long) spec->tmp_bytes);
        (void) snprintf(tmp_size, sizeof(tmp_size), "size=%llu",
                        (unsigned long long) spec->tmp_bytes);

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
                json_t *m = spec_mount_json(&spec->mounts[i]);
                if (!m) {
                        json_decref(a);
                        return -ENOMEM;
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

bool oci_name_ok(const char *s)
{
        if (!s || !*s || strlen(s) > 64)
                return false;
        for (const char *p = s; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.'))
                        return false;
        return true;
}

int oci_spec_check(const struct container_spec *spec)
{
        /* Every rule about the spec is the one validator's, which the native
         * launcher calls too: this launcher once had its own copy of a few
         * of them and missed the rest (mounts, masks, forwards, fds,
         * workdir, /tmp size, counts). */
        int r = container_spec_validate(spec);
        if (r < 0)
                return r;
        /* Only here does the name become part of a path: the runtime's
         * container id "openenvd-<name>-<hex>" names the bundle directory
         * under <state>/bundles, where a '/' or ".." would lead elsewhere.
         * The native launcher makes it the hostname only. */
        if (!oci_name_ok(spec->name))
                return -EINVAL;
        /* A runtime makes its own namespaces: none can nest in a template's. */
        if (spec->template_root || spec->n_uid_extents > 0 || spec->nest)
                return -EOPNOTSUPP;
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

        r = oci_spec_check(spec);
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
