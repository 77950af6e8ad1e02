/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * From a failed preflight check to the `docker run` option that fixes it.
 *
 * Inside a Docker container most failures have one cause on the command
 * line: a capability Docker did not grant, its default seccomp profile
 * (which has no pivot_root and allows unshare/mount only with
 * CAP_SYS_ADMIN), its masked /proc and /sys paths (the kernel refuses a
 * fresh proc or sysfs in a user namespace while any instance is partly
 * covered: fs/namespace.c mount_too_revealing()), or the host cgroup
 * namespace. docs/LANES.md has the measurement behind every rule here; the
 * rules are a pure function so tests/preflight/test-preflight-fix.c can
 * walk them without a kernel.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/mountinfo.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "preflight/preflight.h"

/* Measured with `--cap-drop ALL` (docs/LANES.md): SYS_ADMIN for namespaces
 * and mounts, SETUID/SETGID to write a container's uid and gid maps, CHOWN
 * to hand episode storage to a container's uids, DAC_OVERRIDE for
 * overlayfs's mode-0 work directory. Everything else a container needs it
 * holds inside its own user namespace (a new one starts with a full
 * bounding set). */
const struct preflight_cap preflight_required_caps[] = {
        { CAP_SYS_ADMIN, "SYS_ADMIN" },
        { CAP_SETUID, "SETUID" },
        { CAP_SETGID, "SETGID" },
        { CAP_CHOWN, "CHOWN" },
        { CAP_DAC_OVERRIDE, "DAC_OVERRIDE" },
};
const size_t preflight_n_required_caps = ELEMENTSOF(preflight_required_caps);

const char *preflight_cap_name(int cap)
{
        for (size_t i = 0; i < preflight_n_required_caps; i++)
                if (preflight_required_caps[i].cap == cap)
                        return preflight_required_caps[i].name;
        return NULL;
}

#define SECCOMP_OPT   "--security-opt seccomp=openenvd-seccomp.json (deploy/docker/ of openenvd)"
#define SYSTEMPATHS   "--security-opt systempaths=unconfined"
#define CGROUPNS      "--cgroupns=private"
#define AS_ENTRYPOINT "run openenvd as the container's entrypoint (PID 1 mounts its cgroup tree)"

static bool missing(const struct preflight_env *env, int cap)
{
        return env->missing_caps & (UINT64_C(1) << cap);
}

static void add(struct strbuf *sb, const char *opt)
{
        strbuf_addf(sb, "%s%s", sb->len ? " " : "add ", opt);
}

static void add_cap(struct strbuf *sb, int cap)
{
        strbuf_addf(sb, "%s--cap-add %s", sb->len ? " " : "add ", preflight_cap_name(cap));
}

/* The syscalls Docker's default profile refuses (EPERM) or allows only with
 * CAP_SYS_ADMIN: unshare/clone with namespace flags, mount, the new mount
 * API, and pivot_root (never). */
static bool seccomp_gated(int step)
{
        switch (step) {
        case PREFLIGHT_STEP_UNSHARE_USER:
        case PREFLIGHT_STEP_UNSHARE_NS:
        case PREFLIGHT_STEP_UNSHARE_PID:
        case PREFLIGHT_STEP_UNSHARE_NET:
        case PREFLIGHT_STEP_UNSHARE_IPC:
        case PREFLIGHT_STEP_UNSHARE_UTS:
        case PREFLIGHT_STEP_UNSHARE_CGROUP:
        case PREFLIGHT_STEP_MAKE_PRIVATE:
        case PREFLIGHT_STEP_MOUNT_TMPFS:
        case PREFLIGHT_STEP_MOUNT_OVERLAY:
        case PREFLIGHT_STEP_BIND:
        case PREFLIGHT_STEP_REMOUNT_NOSYMFOLLOW:
        case PREFLIGHT_STEP_PIVOT_ROOT:
        case PREFLIGHT_STEP_FSOPEN:
        case PREFLIGHT_STEP_FSCONFIG:
        case PREFLIGHT_STEP_FSMOUNT:
                return true;
        default:
                return false;
        }
}

static void fix_cgroup(struct strbuf *sb, int step, int err, const struct preflight_env *env)
{
        /* Docker 20.10 puts a container in the host's cgroup namespace on
         * cgroup v1 and hybrid hosts: its cgroup is then a path below mount
         * roots it cannot see, and a fresh cgroup2 mount shows the host's
         * whole tree. */
        if (!env->cgroupns_private) {
                add(sb, CGROUPNS);
                return;
        }
        /* Docker mounts the cgroup file systems read-only and (runc 1.1,
         * hybrid host) no cgroup2 at all; PID 1 mounts cgroup2 and remounts
         * its own v1 views writable, which takes CAP_SYS_ADMIN. */
        if (step != PREFLIGHT_STEP_CGROUP_MOUNT && err != EROFS && err != EPERM && err != EACCES)
                return;
        if (!env->pid1) {
                strbuf_addf(sb, "%s", AS_ENTRYPOINT); /* not an option: no "add" */
                return;
        }
        /* mkdir /sys/fs/cgroup/unified on Docker's mode-0555 tmpfs, mount. */
        if (missing(env, CAP_SYS_ADMIN))
                add_cap(sb, CAP_SYS_ADMIN);
        if (missing(env, CAP_DAC_OVERRIDE))
                add_cap(sb, CAP_DAC_OVERRIDE);
}

char *preflight_fix(const char *check, int step, int err, const struct preflight_env *env)
{
        struct strbuf sb = STRBUF_INIT;

        if (!check || !env || !env->docker)
                return NULL;
        if (streq(check, "privileges")) {
                for (size_t i = 0; i < preflight_n_required_caps; i++)
                        if (missing(env, preflight_required_caps[i].cap))
                                add_cap(&sb, preflight_required_caps[i].cap);
        } else if (streq(check, "uid_range")) {
                /* A daemon started with --userns-remap maps 65536 ids. */
                add(&sb, "--userns=host");
        } else if (streq(check, "cgroup")) {
                fix_cgroup(&sb, step, err, env);
        } else if (err == EPERM || err == EACCES) {
                bool mounts_fresh = streq(check, "procfs") || streq(check, "sysfs");
                /* Without SYS_ADMIN the kernel refuses namespaces and mounts
                 * whatever the profile says; with it, Docker's default
                 * profile allows all of them but pivot_root. */
                if (missing(env, CAP_SYS_ADMIN) && seccomp_gated(step))
                        add_cap(&sb, CAP_SYS_ADMIN);
                if (err == EACCES && missing(env, CAP_DAC_OVERRIDE))
                        add_cap(&sb, CAP_DAC_OVERRIDE); /* overlayfs's mode-0 work dir */
                /* The profile: always for pivot_root (Docker's default has
                 * none), else for a gated call refused although SYS_ADMIN is
                 * there (fsmount refused is the masks, below). */
                bool profile = streq(check, "pivot_root") ||
                               (err == EPERM && seccomp_gated(step) &&
                                !missing(env, CAP_SYS_ADMIN) && step != PREFLIGHT_STEP_FSMOUNT);
                if (profile && env->seccomp_filtered)
                        add(&sb, SECCOMP_OPT);
                /* mount_too_revealing(): named as soon as Docker's masks are
                 * seen, so one run lists every option. */
                if (mounts_fresh && (step == PREFLIGHT_STEP_FSMOUNT || env->proc_masked))
                        add(&sb, SYSTEMPATHS);
        }
        if (!sb.len) {
                strbuf_release(&sb);
                return NULL;
        }
        return strbuf_detach(&sb, NULL);
}

/* ---- environment (reads files; kept apart from the pure rules above) ---- */

#define ENV_FILE_MAX ((size_t) 1024 * 1024)

/*
 * One pass over our mountinfo for two hints.
 *
 * Docker, the cheap way: it bind-mounts its per-container hostname file
 * (<data-root>/containers/<id>/hostname) on /etc/hostname, whatever the
 * image. /.dockerenv alone is not enough: Docker creates it in every
 * container, but it survives `docker export`, so machines (and this
 * project's development VMs) booted from an exported image carry it too.
 * Only the wording of the reasons depends on this, never a decision.
 *
 * Docker's maskedPaths/readonlyPaths: anything mounted on a /proc/ path.
 */
static void scan_mountinfo(bool *ret_docker, bool *ret_proc_masked)
{
        cleanup(mountinfo_freep) struct mountinfo *mi = NULL;

        *ret_docker = *ret_proc_masked = false;
        if (mountinfo_load_at(AT_FDCWD, "/proc/self/mountinfo", &mi) < 0)
                return;
        for (size_t i = 0; i < mi->n_entries; i++) {
                const struct mountinfo_entry *e = &mi->entries[i];
                if (streq(e->mount_point, "/etc/hostname") && endswith(e->root, "/hostname") &&
                    strstr(e->root, "/containers/"))
                        *ret_docker = true;
                if (startswith(e->mount_point, "/proc/"))
                        *ret_proc_masked = true;
        }
}

static bool cgroupns_private(void)
{
        cleanup_free char *cg = NULL;
        bool any = false;

        if (read_full_file_at(AT_FDCWD, "/proc/self/cgroup", ENV_FILE_MAX, &cg, NULL) < 0)
                return false;
        for (char *line = cg, *eol; line && *line; line = eol ? eol + 1 : NULL) {
                eol = strchr(line, '\n');
                if (eol)
                        *eol = '\0';
                const char *path = strrchr(line, ':');
                if (!path || !streq(path, ":/"))
                        return false;
                any = true;
        }
        return any;
}

static bool seccomp_filtered(void)
{
        cleanup_free char *st = NULL;
        const char *p;

        if (read_full_file_at(AT_FDCWD, "/proc/self/status", ENV_FILE_MAX, &st, NULL) < 0)
                return false;
        /* "Seccomp:\t2": SECCOMP_MODE_FILTER. */
        p = strstr(st, "\nSeccomp:");
        return p && p[strspn(p + 9, " \t") + 9] == '2';
}

void preflight_env_detect(struct preflight_env *ret)
{
        bool docker, masked;

        scan_mountinfo(&docker, &masked);
        /* missing_caps stays 0: the privileges check reads the capabilities. */
        *ret = (struct preflight_env){
                .docker = docker,
                .seccomp_filtered = seccomp_filtered(),
                .cgroupns_private = cgroupns_private(),
                .proc_masked = masked,
                .pid1 = getpid() == 1,
        };
}
