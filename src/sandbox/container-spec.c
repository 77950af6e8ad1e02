/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sandbox/container-spec.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/limits.h"
#include "base/string-table.h"
#include "base/util.h"

/* Indexed by the flag's bit number. */
static const char *const container_weaken_table[] = {
        "no-seccomp",    /* WEAKEN_NO_SECCOMP */
        "no-masks",      /* WEAKEN_NO_MASKS */
        "keep-caps",     /* WEAKEN_KEEP_CAPS */
        "writable-root", /* WEAKEN_WRITABLE_ROOT */
};

int container_weaken_from_string(const char *s)
{
        ssize_t bit = string_table_lookup_from_string(container_weaken_table,
                                                      ELEMENTSOF(container_weaken_table), s);
        return bit < 0 ? (int) bit : 1 << bit;
}

void container_spec_done(struct container_spec *spec)
{
        if (!spec)
                return;
        free(spec->name);
        spec->argv = strv_free(spec->argv);
        spec->env = strv_free(spec->env);
        free(spec->workdir);
        free(spec->rootfs);
        free(spec->shim_path);
        free(spec->socket_dir);
        for (size_t i = 0; i < spec->n_mounts; i++) {
                free(spec->mounts[i].source);
                free(spec->mounts[i].upper);
                free(spec->mounts[i].work);
                free(spec->mounts[i].target);
        }
        free(spec->mounts);
        spec->masks = strv_free(spec->masks);
        for (size_t i = 0; i < spec->n_forwards; i++) {
                free(spec->forwards[i].host);
                free(spec->forwards[i].path);
        }
        free(spec->forwards);
        *spec = (struct container_spec){ .stdio_fd = -EBADF };
}

/* Absolute, no "." or ".." component, no empty component but a trailing one,
 * shorter than PATH_MAX. Targets are resolved confined to the new root anyway
 * (RESOLVE_IN_ROOT); this keeps specs unambiguous. */
static bool path_is_normal_absolute(const char *p)
{
        if (!p || p[0] != '/' || strlen(p) >= PATH_MAX)
                return false;
        for (const char *c = p + 1; *c;) {
                size_t n = strcspn(c, "/");
                if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
                        return false;
                if (n == 0 && c[1] != '\0')
                        return false;
                c += n;
                if (*c == '/')
                        c++;
        }
        return true;
}

/*
 * Every rule about the spec itself, for both launchers: each calls this at
 * its entry, before it creates anything, and adds only what it alone needs
 * (launcher-native.c native_spec_check(): a shim; oci-config.c
 * oci_spec_check(): a name a runtime takes as part of an id). Two copies of
 * these rules drifted: the OCI launcher had checked none of the mounts,
 * masks, forwards, fds, workdir, /tmp size or counts below.
 */
/* Whether pass_fds[i] is one of the shim's own pipes (notify, gate, adopt),
 * which neither a forwarder nor the principal may take. */
static bool pass_index_is_shims(const struct container_spec *spec, unsigned i)
{
        return (spec->notify && i == spec->notify_pass_index) ||
               (spec->gate && i == spec->gate_pass_index) ||
               (spec->adopt && i == spec->adopt_pass_index);
}

/* A template's extra map lines: none maps host root or overlaps its own
 * range inside; a nested container: a template to nest in, and a network
 * namespace of its own (a kept one belongs to the daemon's user namespace,
 * which no copy can join). */
static int spec_templates_check(const struct container_spec *spec)
{
        if (spec->n_uid_extents > CONTAINER_MAX_UID_EXTENTS)
                return -E2BIG;
        if (spec->n_uid_extents > 0 && !spec->uid_extents)
                return -EINVAL;
        for (size_t i = 0; i < spec->n_uid_extents; i++) {
                const struct uid_extent *x = &spec->uid_extents[i];
                if (x->count == 0 || x->host == 0 || x->inside < spec->uid_count ||
                    (uint64_t) x->host + x->count > (uint64_t) UINT32_MAX ||
                    (uint64_t) x->inside + x->count > (uint64_t) UINT32_MAX)
                        return -EINVAL;
        }
        if (spec->nest &&
            (spec->nest->pidfd < 0 || spec->nest->owner == 0 || spec->netns || spec->template_root))
                return -EINVAL;
        return 0;
}

int container_spec_validate(const struct container_spec *spec)
{
        /* The name is the hostname inside, whichever launcher starts it. */
        if (!spec || !spec->name || !spec->name[0] || strlen(spec->name) > HOST_NAME_MAX)
                return -EINVAL;
        if (!spec->argv || !spec->argv[0] || !spec->rootfs)
                return -EINVAL;
        if (strv_length(spec->argv) > MANIFEST_MAX_LIST)
                return -E2BIG;
        /* The range must not map host root, must fit in uid_t, and must
         * contain the principal, which is never root inside unless a test
         * weakens the container on purpose. */
        if (spec->uid_count == 0 || spec->host_uid == 0 ||
            (uint64_t) spec->host_uid + spec->uid_count > (uint64_t) UINT32_MAX)
                return -EINVAL;
        if (spec->uid >= spec->uid_count || spec->gid >= spec->uid_count)
                return -EINVAL;
        if ((spec->uid == 0 || spec->gid == 0) &&
            !(spec->weaken & WEAKEN_KEEP_CAPS || spec->template_root))
                return -EINVAL;
        int r = spec_templates_check(spec);
        if (r < 0)
                return r;
        if (spec->workdir && !path_is_normal_absolute(spec->workdir))
                return -EINVAL;
        /* /tmp and /dev/shm are sized from it; 0 would leave the size to
         * each file system's default (half of RAM for tmpfs). */
        if (spec->tmp_bytes == 0)
                return -EINVAL;
        if (spec->n_mounts > CONTAINER_MAX_MOUNTS || spec->n_forwards > CONTAINER_MAX_FORWARDS ||
            spec->n_pass_fds > CONTAINER_MAX_PASS_FDS)
                return -E2BIG;
        for (size_t i = 0; i < spec->n_pass_fds; i++)
                if (!spec->pass_fds || spec->pass_fds[i] < 0)
                        return -EBADF;
        if (spec->masks && strv_length(spec->masks) > CONTAINER_MAX_MASKS)
                return -E2BIG;
        for (size_t i = 0; i < spec->n_mounts; i++) {
                const struct mount_entry *m = &spec->mounts[i];
                if (!path_is_normal_absolute(m->target) || streq(m->target, "/"))
                        return -EINVAL;
                switch (m->kind) {
                case MOUNT_BIND:
                        if (!m->source)
                                return -EINVAL;
                        break;
                case MOUNT_TMPFS:
                        if (m->size_bytes == 0)
                                return -EINVAL;
                        break;
                case MOUNT_OVERLAY:
                        if (!m->source || !m->upper || !m->work)
                                return -EINVAL;
                        break;
                default:
                        return -EINVAL;
                }
        }
        for (size_t i = 0; spec->masks && spec->masks[i]; i++)
                if (!path_is_normal_absolute(spec->masks[i]))
                        return -EINVAL;
        if (spec->notify && spec->notify_pass_index >= spec->n_pass_fds)
                return -EINVAL;
        if (spec->gate && (spec->gate_pass_index >= spec->n_pass_fds ||
                           (spec->notify && spec->gate_pass_index == spec->notify_pass_index)))
                return -EINVAL;
        if (spec->adopt && (spec->gate || spec->adopt_pass_index >= spec->n_pass_fds ||
                            (spec->notify && spec->adopt_pass_index == spec->notify_pass_index)))
                return -EINVAL;
        for (unsigned i = 0; i < 32; i++)
                if (spec->principal_fds & (1u << i) &&
                    (i >= spec->n_pass_fds || pass_index_is_shims(spec, i)))
                        return -EINVAL;
        for (size_t i = 0; i < spec->n_forwards; i++) {
                const struct forward *f = &spec->forwards[i];
                if (!f->host || f->port == 0 || strchr(f->host, '=') || strchr(f->host, ':'))
                        return -EINVAL;
                if (f->kind == FORWARD_FD_TO_TCP) {
                        if (f->pass_index >= spec->n_pass_fds ||
                            pass_index_is_shims(spec, f->pass_index))
                                return -EINVAL;
                        continue;
                }
                if (!f->path || f->path[0] != '/')
                        return -EINVAL;
                if (f->kind != FORWARD_TCP_TO_UNIX && f->kind != FORWARD_UNIX_TO_TCP)
                        return -EINVAL;
                /* unix-to-tcp is rendered "path=host:port" and split at the last
                 * '=', tcp-to-unix "host:port=path" at the first. */
        }
        return 0;
}

/* Docker's maskedPaths and readonlyPaths (moby oci/defaults.go). */
static const char *const default_masked[] = {
        "/proc/acpi",       "/proc/asound",      "/proc/interrupts",
        "/proc/kcore",      "/proc/keys",        "/proc/latency_stats",
        "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug",
        "/proc/scsi",       "/sys/firmware",     "/sys/devices/virtual/powercap",
};
static const char *const default_readonly[] = {
        "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger",
};

void container_policy_init(struct container_policy *ret, const struct container_spec *spec,
                           const char *shim_argv0)
{
        struct container_policy p = {};

        if (!(spec->weaken & WEAKEN_NO_MASKS)) {
                for (size_t i = 0; i < ELEMENTSOF(default_masked); i++)
                        strv_push(&p.masked, xstrdup(default_masked[i]));
                for (size_t i = 0; spec->masks && spec->masks[i]; i++)
                        strv_push(&p.masked, xstrdup(spec->masks[i]));
        }
        /* Read-only paths stay even when masks are weakened: no test needs
         * /proc/sys writable, and the native launcher writes its one
         * sysctl before they are applied. */
        for (size_t i = 0; i < ELEMENTSOF(default_readonly); i++)
                strv_push(&p.readonly, xstrdup(default_readonly[i]));

        /* Passed fds arrive as 3, 4, ... in pass_fds order. */
        strv_push(&p.shim_argv, xstrdup(shim_argv0));
        for (size_t i = 0; i < spec->n_forwards; i++) {
                const struct forward *f = &spec->forwards[i];
                switch (f->kind) {
                case FORWARD_TCP_TO_UNIX:
                        strv_push(&p.shim_argv, xstrdup("--tcp-to-unix"));
                        strv_push(&p.shim_argv, xasprintf("%s:%u=%s", f->host, f->port, f->path));
                        break;
                case FORWARD_UNIX_TO_TCP:
                        strv_push(&p.shim_argv, xstrdup("--unix-to-tcp"));
                        strv_push(&p.shim_argv, xasprintf("%s=%s:%u", f->path, f->host, f->port));
                        break;
                case FORWARD_FD_TO_TCP:
                        strv_push(&p.shim_argv, xstrdup("--fd-to-tcp"));
                        strv_push(&p.shim_argv,
                                  xasprintf("%u=%s:%u", 3 + f->pass_index, f->host, f->port));
                        break;
                }
        }
        if (spec->notify) {
                strv_push(&p.shim_argv, xstrdup("--notify-fd"));
                strv_push(&p.shim_argv, xasprintf("%u", 3 + spec->notify_pass_index));
        }
        if (spec->gate) {
                strv_push(&p.shim_argv, xstrdup("--gate-fd"));
                strv_push(&p.shim_argv, xasprintf("%u", 3 + spec->gate_pass_index));
        }
        for (unsigned i = 0; i < 32; i++)
                if (spec->principal_fds & (1u << i)) {
                        strv_push(&p.shim_argv, xstrdup("--pass-fd"));
                        strv_push(&p.shim_argv, xasprintf("%u", 3 + i));
                }
        /* A template's pid namespace holds its copies' nested ones, which
         * die with its PID 1: the shim outlives the template's principal. */
        if (spec->template_root)
                strv_push(&p.shim_argv, xstrdup("--linger"));
        if (spec->adopt) {
                /* The principal is the copy the shim adopts: no argv. */
                strv_push(&p.shim_argv, xstrdup("--adopt-fd"));
                strv_push(&p.shim_argv, xasprintf("%u", 3 + spec->adopt_pass_index));
        } else {
                strv_push(&p.shim_argv, xstrdup("--"));
                for (char **a = spec->argv; a && *a; a++)
                        strv_push(&p.shim_argv, xstrdup(*a));
        }
        *ret = p;
}

void container_policy_done(struct container_policy *p)
{
        p->masked = strv_free(p->masked);
        p->readonly = strv_free(p->readonly);
        p->shim_argv = strv_free(p->shim_argv);
}

void container_spec_add_bind(struct container_spec *spec, const char *source, const char *target,
                             unsigned long flags, bool is_file)
{
        spec->mounts = xrealloc(spec->mounts, (spec->n_mounts + 1) * sizeof(*spec->mounts));
        spec->mounts[spec->n_mounts++] = (struct mount_entry){
                .kind = MOUNT_BIND,
                .source = xstrdup(source),
                .target = xstrdup(target),
                .flags = flags,
                .is_file = is_file,
        };
}

static const char *const container_mark_table[_CONTAINER_MARK_MAX] = {
        [CONTAINER_MARK_START] = "start",       [CONTAINER_MARK_CLONED] = "clone3",
        [CONTAINER_MARK_GO] = "maps+cgroups",   [CONTAINER_MARK_CHILD_GO] = "child-wakeup",
        [CONTAINER_MARK_ROOT] = "root+sources", [CONTAINER_MARK_PROC] = "proc",
        [CONTAINER_MARK_DEV] = "dev",           [CONTAINER_MARK_SYS] = "sys",
        [CONTAINER_MARK_TMP_RUN] = "tmp+run",   [CONTAINER_MARK_SPEC_MOUNTS] = "spec-mounts",
        [CONTAINER_MARK_POLICY] = "masks",      [CONTAINER_MARK_PIVOT] = "seal+pivot",
        [CONTAINER_MARK_CREDS] = "creds+stdio", [CONTAINER_MARK_FILTER] = "seccomp",
        [CONTAINER_MARK_EXECED] = "exec",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING_FALLBACK(container_mark, enum container_mark, "unknown");

void container_mark(const struct container_spec *spec, enum container_mark m)
{
        struct timespec ts;

        if (!spec->timing || clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
                return;
        spec->timing->ns[m] = (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}
