/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One table of container specs, each fed to both launchers' public entry
 * points, container_spawn() and oci_container_spawn(): they must take or
 * refuse it alike, with the errno the table says. The expected errno is in
 * the table, not only the agreement: a rule dropped from the one validator
 * would make both launchers take a broken spec alike.
 *
 * No container starts and nothing is created, so no root is needed. A
 * refused spec stops at the entry check; a spec taken stops at the step
 * right after it, which fails here without side effects: the native
 * launcher opens a shim that does not exist (before any pipe or clone3()),
 * the OCI launcher looks up a runtime that does not exist (before the
 * bundle is made). Each launcher says which step failed (the native one's
 * {step}, the OCI one's message), so taken and refused cannot be confused.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "base/fd-util.h"
#include "base/limits.h"
#include "base/util.h"
#include "sandbox/launcher-native.h"
#include "sandbox/launcher-oci.h"
#include "test-helpers.h"

#define NO_SHIM    "/nonexistent/openenvd-test-shim"
#define NO_RUNTIME "/nonexistent/openenvd-test-runtime"

static char state[] = "/tmp/spec-check-XXXXXX";

static void state_setup(void)
{
        cr_assert_not_null(mkdtemp(state));
        /* The OCI launcher refuses a caller that would lose its container's
         * init (launcher-oci.h); that check comes after the spec's. */
        cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
}

static void state_teardown(void)
{
        if (state[sizeof(state) - 2] != 'X')
                (void) rm_rf_at(AT_FDCWD, state);
}

TestSuite(spec_check, .init = state_setup, .fini = state_teardown);

/* 0: the native launcher took the spec (it went on to open the shim);
 * else the errno its entry check refused it with. */
static int native_entry(const struct container_spec *s, const char *what)
{
        struct container *c = NULL;
        struct container_error err = {};
        int r = container_spawn(s, &c, &err);

        error_detail_done(&err.detail);
        if (r == 0)
                container_free(c);
        cr_assert_lt(r, 0, "%s: the native launcher started a container", what);
        if (err.step == CONTAINER_STEP_VALIDATE)
                return r;
        cr_assert(err.step == CONTAINER_STEP_SHIM && r == -ENOENT,
                  "%s: native launcher stopped at %s: %s", what, container_step_to_string(err.step),
                  strerror(-r));
        return 0;
}

/* The same for the OCI launcher (it went on to look up the runtime). */
static int oci_entry(const struct container_spec *s, const char *what)
{
        struct oci_container *c = NULL;
        struct error_detail err = {};
        int r = oci_container_spawn(
                &(struct oci_options){ .runtime = NO_RUNTIME, .state_dir = state }, s, &c, &err);
        cleanup_free char *message = TAKE_PTR(err.message);

        if (r == 0)
                oci_container_free(c);
        cr_assert_lt(r, 0, "%s: the OCI launcher started a container", what);
        cr_assert_not_null(message, "%s", what);
        if (streq(message, "OCI launcher: invalid container spec"))
                return r;
        cr_assert(r == -ENOENT && startswith(message, "OCI runtime " NO_RUNTIME),
                  "%s: OCI launcher stopped at: %s", what, message);
        return 0;
}

static char *argv_ok[] = { (char *) "/bin/true", (char *) "--flag", NULL };
static char *env_ok[] = { (char *) "PATH=/usr/bin:/bin", (char *) "LANG=C.UTF-8", NULL };

static struct container_spec good(void)
{
        return (struct container_spec){
                .name = (char *) "agent-env",
                .argv = argv_ok,
                .env = env_ok,
                .rootfs = (char *) "/",
                .shim_path = (char *) NO_SHIM,
                .host_uid = 200000,
                .uid_count = 65536,
                .uid = 1000,
                .gid = 1000,
                .tmp_bytes = 16 << 20,
                .nofile = 1024,
                .stdio_fd = -EBADF,
        };
}

/* --- well-formed parts, and arrays to fill up to (and past) a limit --- */

static struct mount_entry mounts_ok[] = {
        { .kind = MOUNT_BIND,
          .source = (char *) "/srv/ws",
          .target = (char *) "/workspace",
          .flags = MS_RDONLY | MS_NOSUID | MS_NODEV },
        { .kind = MOUNT_TMPFS, .target = (char *) "/scratch", .size_bytes = 1 << 20, .mode = 0700 },
        { .kind = MOUNT_OVERLAY,
          .source = (char *) "/l",
          .upper = (char *) "/u",
          .work = (char *) "/w",
          .target = (char *) "/state/" },
};
static char *masks_ok[] = { (char *) "/var/lib/openenvd", (char *) "/run/secrets", NULL };
static const int fds_ok[] = { 0, 1 }; /* only their numbers are checked */
static struct forward forwards_ok[] = {
        { .kind = FORWARD_TCP_TO_UNIX,
          .host = (char *) "127.0.0.1",
          .port = 8000,
          .path = (char *) "/run/openenvd/mcp.sock" },
        { .kind = FORWARD_UNIX_TO_TCP,
          .host = (char *) "127.0.0.1",
          .port = 8080,
          .path = (char *) "/run/openenvd/svc.sock" },
        { .kind = FORWARD_FD_TO_TCP, .host = (char *) "127.0.0.1", .port = 8001, .pass_index = 0 },
};

static char *many_argv[MANIFEST_MAX_LIST + 2];
static char *many_masks[CONTAINER_MAX_MASKS + 2];
static struct mount_entry many_mounts[CONTAINER_MAX_MOUNTS + 1];
static struct forward many_forwards[CONTAINER_MAX_FORWARDS + 1];
static const int many_fds[CONTAINER_MAX_PASS_FDS + 1];

/* n well-formed entries of each (NULL-terminated where the spec wants it). */
static void fill_argv(struct container_spec *s, size_t n)
{
        for (size_t i = 0; i < n; i++)
                many_argv[i] = (char *) "/bin/true";
        many_argv[n] = NULL;
        s->argv = many_argv;
}

static void fill_masks(struct container_spec *s, size_t n)
{
        for (size_t i = 0; i < n; i++)
                many_masks[i] = (char *) "/proc/x";
        many_masks[n] = NULL;
        s->masks = many_masks;
}

static void fill_mounts(struct container_spec *s, size_t n)
{
        for (size_t i = 0; i < n; i++)
                many_mounts[i] = mounts_ok[0];
        s->mounts = many_mounts;
        s->n_mounts = n;
}

static void fill_forwards(struct container_spec *s, size_t n)
{
        for (size_t i = 0; i < n; i++)
                many_forwards[i] = forwards_ok[0];
        s->forwards = many_forwards;
        s->n_forwards = n;
}

/* One mount, one forward: the spec's only one, with everything it needs. */
static struct mount_entry one_mount;
static struct forward one_forward;

static void with_mount(struct container_spec *s, struct mount_entry m)
{
        one_mount = m;
        s->mounts = &one_mount;
        s->n_mounts = 1;
}

static void with_forward(struct container_spec *s, struct forward f)
{
        one_forward = f;
        s->forwards = &one_forward;
        s->n_forwards = 1;
        s->pass_fds = fds_ok;
        s->n_pass_fds = ELEMENTSOF(fds_ok);
}

/* --- the table: what each row changes in good() --- */

static void minimal(struct container_spec *s)
{
        (void) s;
}

static void every_part(struct container_spec *s)
{
        s->workdir = (char *) "/workspace";
        s->socket_dir = (char *) "/state/run/sock/agent-env";
        s->mounts = mounts_ok;
        s->n_mounts = ELEMENTSOF(mounts_ok);
        s->masks = masks_ok;
        s->forwards = forwards_ok;
        s->n_forwards = ELEMENTSOF(forwards_ok);
        s->pass_fds = fds_ok;
        s->n_pass_fds = ELEMENTSOF(fds_ok);
        s->notify = true;
        s->notify_pass_index = 1;
}

/* A name of n bytes (at most HOST_NAME_MAX + 1). */
static char *name_of_length(size_t n)
{
        static char name[HOST_NAME_MAX + 2];

        memset(name, 'n', n);
        name[n] = '\0';
        return name;
}

static void at_every_limit(struct container_spec *s)
{
        s->name = name_of_length(HOST_NAME_MAX);
        fill_argv(s, MANIFEST_MAX_LIST);
        fill_mounts(s, CONTAINER_MAX_MOUNTS);
        fill_masks(s, CONTAINER_MAX_MASKS);
        fill_forwards(s, CONTAINER_MAX_FORWARDS);
        s->pass_fds = many_fds;
        s->n_pass_fds = CONTAINER_MAX_PASS_FDS;
        s->uid = s->gid = s->uid_count - 1;
}

static void root_weakened(struct container_spec *s)
{
        s->uid = s->gid = 0;
        s->weaken = WEAKEN_KEEP_CAPS;
}

static void name_null(struct container_spec *s)
{
        s->name = NULL;
}

static void name_empty(struct container_spec *s)
{
        s->name = (char *) "";
}

static void name_too_long(struct container_spec *s)
{
        s->name = name_of_length(HOST_NAME_MAX + 1);
}

static void argv_null(struct container_spec *s)
{
        s->argv = NULL;
}

static void argv_empty(struct container_spec *s)
{
        static char *empty[] = { NULL };
        s->argv = empty;
}

static void argv_too_long(struct container_spec *s)
{
        fill_argv(s, MANIFEST_MAX_LIST + 1);
}

static void rootfs_null(struct container_spec *s)
{
        s->rootfs = NULL;
}

static void maps_host_root(struct container_spec *s)
{
        s->host_uid = 0;
}

static void range_empty(struct container_spec *s)
{
        s->uid_count = 0;
}

static void range_overflows(struct container_spec *s)
{
        s->host_uid = UINT32_MAX - 10;
}

static void uid_outside(struct container_spec *s)
{
        s->uid = s->uid_count;
}

static void gid_outside(struct container_spec *s)
{
        s->gid = 70000;
}

static void uid_root(struct container_spec *s)
{
        s->uid = 0;
}

static void gid_root(struct container_spec *s)
{
        s->gid = 0;
}

static void workdir_relative(struct container_spec *s)
{
        s->workdir = (char *) "workspace";
}

static void workdir_dotdot(struct container_spec *s)
{
        s->workdir = (char *) "/workspace/../etc";
}

static void workdir_dot(struct container_spec *s)
{
        s->workdir = (char *) "/./workspace";
}

static void workdir_empty_component(struct container_spec *s)
{
        s->workdir = (char *) "/a//b";
}

static void tmp_zero(struct container_spec *s)
{
        s->tmp_bytes = 0;
}

static void mount_target_relative(struct container_spec *s)
{
        with_mount(s, (struct mount_entry){ .kind = MOUNT_BIND,
                                            .source = (char *) "/x",
                                            .target = (char *) "workspace" });
}

static void mount_target_root(struct container_spec *s)
{
        with_mount(s, (struct mount_entry){ .kind = MOUNT_BIND,
                                            .source = (char *) "/x",
                                            .target = (char *) "/" });
}

static void mount_target_dotdot(struct container_spec *s)
{
        with_mount(s, (struct mount_entry){ .kind = MOUNT_BIND,
                                            .source = (char *) "/x",
                                            .target = (char *) "/workspace/../etc" });
}

static void mount_target_null(struct container_spec *s)
{
        with_mount(s, (struct mount_entry){ .kind = MOUNT_BIND, .source = (char *) "/x" });
}

static void bind_without_source(struct container_spec *s)
{
        with_mount(s, (struct mount_entry){ .kind = MOUNT_BIND, .target = (char *) "/workspace" });
}

static void tmpfs_without_size(struct container_spec *s)
{
        with_mount(s, (struct mount_entry){ .kind = MOUNT_TMPFS, .target = (char *) "/scratch" });
}

static void overlay_without_upper(struct container_spec *s)
{
        with_mount(s, (struct mount_entry){ .kind = MOUNT_OVERLAY,
                                            .source = (char *) "/l",
                                            .work = (char *) "/w",
                                            .target = (char *) "/state" });
}

static void overlay_without_work(struct container_spec *s)
{
        with_mount(s, (struct mount_entry){ .kind = MOUNT_OVERLAY,
                                            .source = (char *) "/l",
                                            .upper = (char *) "/u",
                                            .target = (char *) "/state" });
}

static void overlay_without_lower(struct container_spec *s)
{
        with_mount(s, (struct mount_entry){ .kind = MOUNT_OVERLAY,
                                            .upper = (char *) "/u",
                                            .work = (char *) "/w",
                                            .target = (char *) "/state" });
}

static void mount_unknown_kind(struct container_spec *s)
{
        with_mount(s, (struct mount_entry){ .kind = (enum mount_kind) 99,
                                            .source = (char *) "/x",
                                            .target = (char *) "/workspace" });
}

static void mounts_too_many(struct container_spec *s)
{
        fill_mounts(s, CONTAINER_MAX_MOUNTS + 1);
}

static void mask_relative(struct container_spec *s)
{
        static char *masks[] = { (char *) "/proc/kcore", (char *) "run/secrets", NULL };
        s->masks = masks;
}

static void mask_dotdot(struct container_spec *s)
{
        static char *masks[] = { (char *) "/proc/../etc/shadow", NULL };
        s->masks = masks;
}

static void masks_too_many(struct container_spec *s)
{
        fill_masks(s, CONTAINER_MAX_MASKS + 1);
}

static void pass_fd_negative(struct container_spec *s)
{
        static const int fds[] = { 0, -1 };
        s->pass_fds = fds;
        s->n_pass_fds = ELEMENTSOF(fds);
}

static void pass_fds_missing(struct container_spec *s)
{
        s->pass_fds = NULL;
        s->n_pass_fds = 1;
}

static void pass_fds_too_many(struct container_spec *s)
{
        s->pass_fds = many_fds;
        s->n_pass_fds = CONTAINER_MAX_PASS_FDS + 1;
}

static void notify_past_fds(struct container_spec *s)
{
        s->pass_fds = fds_ok;
        s->n_pass_fds = ELEMENTSOF(fds_ok);
        s->notify = true;
        s->notify_pass_index = ELEMENTSOF(fds_ok);
}

static void gate_past_fds(struct container_spec *s)
{
        s->pass_fds = fds_ok;
        s->n_pass_fds = ELEMENTSOF(fds_ok);
        s->gate = true;
        s->gate_pass_index = ELEMENTSOF(fds_ok);
}

static void gate_is_notify(struct container_spec *s)
{
        s->pass_fds = fds_ok;
        s->n_pass_fds = ELEMENTSOF(fds_ok);
        s->notify = s->gate = true;
        s->notify_pass_index = s->gate_pass_index = 0;
}

static void forward_host_null(struct container_spec *s)
{
        with_forward(s, (struct forward){ .kind = FORWARD_TCP_TO_UNIX,
                                          .port = 8000,
                                          .path = (char *) "/run/openenvd/a.sock" });
}

static void forward_port_zero(struct container_spec *s)
{
        with_forward(s, (struct forward){ .kind = FORWARD_TCP_TO_UNIX,
                                          .host = (char *) "127.0.0.1",
                                          .path = (char *) "/run/openenvd/a.sock" });
}

static void forward_host_equals(struct container_spec *s)
{
        /* The shim splits "host:port=path" at '=': the path would change. */
        with_forward(s, (struct forward){ .kind = FORWARD_TCP_TO_UNIX,
                                          .host = (char *) "127.0.0.1=/x",
                                          .port = 8000,
                                          .path = (char *) "/run/openenvd/a.sock" });
}

static void forward_host_colon(struct container_spec *s)
{
        with_forward(s, (struct forward){ .kind = FORWARD_UNIX_TO_TCP,
                                          .host = (char *) "::1",
                                          .port = 8000,
                                          .path = (char *) "/run/openenvd/a.sock" });
}

static void forward_path_relative(struct container_spec *s)
{
        with_forward(s, (struct forward){ .kind = FORWARD_TCP_TO_UNIX,
                                          .host = (char *) "127.0.0.1",
                                          .port = 8000,
                                          .path = (char *) "a.sock" });
}

static void forward_path_null(struct container_spec *s)
{
        with_forward(s, (struct forward){ .kind = FORWARD_UNIX_TO_TCP,
                                          .host = (char *) "127.0.0.1",
                                          .port = 8000 });
}

static void forward_fd_past_fds(struct container_spec *s)
{
        with_forward(s, (struct forward){ .kind = FORWARD_FD_TO_TCP,
                                          .host = (char *) "127.0.0.1",
                                          .port = 8000,
                                          .pass_index = ELEMENTSOF(fds_ok) });
}

static void forward_fd_is_notify(struct container_spec *s)
{
        with_forward(s, (struct forward){ .kind = FORWARD_FD_TO_TCP,
                                          .host = (char *) "127.0.0.1",
                                          .port = 8000,
                                          .pass_index = 1 });
        s->notify = true;
        s->notify_pass_index = 1;
}

static void forward_fd_is_gate(struct container_spec *s)
{
        with_forward(s, (struct forward){ .kind = FORWARD_FD_TO_TCP,
                                          .host = (char *) "127.0.0.1",
                                          .port = 8000,
                                          .pass_index = 1 });
        s->gate = true;
        s->gate_pass_index = 1;
}

static void forward_unknown_kind(struct container_spec *s)
{
        with_forward(s, (struct forward){ .kind = (enum forward_kind) 99,
                                          .host = (char *) "127.0.0.1",
                                          .port = 8000,
                                          .path = (char *) "/run/openenvd/a.sock" });
}

static void forwards_too_many(struct container_spec *s)
{
        fill_forwards(s, CONTAINER_MAX_FORWARDS + 1);
}

struct row {
        const char *what;
        void (*change)(struct container_spec *s);
        int expect; /* 0: taken; else the -errno both refuse it with */
};

static const struct row rows[] = {
        { "a minimal spec", minimal, 0 },
        { "every optional part, well formed", every_part, 0 },
        { "every count at its limit", at_every_limit, 0 },
        { "a root principal, weakened on purpose", root_weakened, 0 },
        { "no name", name_null, -EINVAL },
        { "an empty name", name_empty, -EINVAL },
        { "a name longer than a hostname", name_too_long, -EINVAL },
        { "no argv", argv_null, -EINVAL },
        { "an empty argv", argv_empty, -EINVAL },
        { "argv past its limit", argv_too_long, -E2BIG },
        { "no rootfs", rootfs_null, -EINVAL },
        { "a range that maps host root", maps_host_root, -EINVAL },
        { "an empty range", range_empty, -EINVAL },
        { "a range past uid_t", range_overflows, -EINVAL },
        { "a uid outside the range", uid_outside, -EINVAL },
        { "a gid outside the range", gid_outside, -EINVAL },
        { "a root uid", uid_root, -EINVAL },
        { "a root gid", gid_root, -EINVAL },
        { "a relative workdir", workdir_relative, -EINVAL },
        { "a workdir with ..", workdir_dotdot, -EINVAL },
        { "a workdir with .", workdir_dot, -EINVAL },
        { "a workdir with //", workdir_empty_component, -EINVAL },
        { "no /tmp size", tmp_zero, -EINVAL },
        { "a relative mount target", mount_target_relative, -EINVAL },
        { "a mount over /", mount_target_root, -EINVAL },
        { "a mount target with ..", mount_target_dotdot, -EINVAL },
        { "a mount without target", mount_target_null, -EINVAL },
        { "a bind without source", bind_without_source, -EINVAL },
        { "a tmpfs without size", tmpfs_without_size, -EINVAL },
        { "an overlay without upper", overlay_without_upper, -EINVAL },
        { "an overlay without work", overlay_without_work, -EINVAL },
        { "an overlay without lower", overlay_without_lower, -EINVAL },
        { "a mount of no known kind", mount_unknown_kind, -EINVAL },
        { "mounts past their limit", mounts_too_many, -E2BIG },
        { "a relative mask", mask_relative, -EINVAL },
        { "a mask with ..", mask_dotdot, -EINVAL },
        { "masks past their limit", masks_too_many, -E2BIG },
        { "a negative passed fd", pass_fd_negative, -EBADF },
        { "passed fds counted but missing", pass_fds_missing, -EBADF },
        { "passed fds past their limit", pass_fds_too_many, -E2BIG },
        { "a notify fd past the passed fds", notify_past_fds, -EINVAL },
        { "a gate fd past the passed fds", gate_past_fds, -EINVAL },
        { "one fd as gate and notify pipe", gate_is_notify, -EINVAL },
        { "a forward without host", forward_host_null, -EINVAL },
        { "a forward to port 0", forward_port_zero, -EINVAL },
        { "a forward host with =", forward_host_equals, -EINVAL },
        { "a forward host with :", forward_host_colon, -EINVAL },
        { "a forward to a relative socket", forward_path_relative, -EINVAL },
        { "a forward without socket", forward_path_null, -EINVAL },
        { "a forward of an fd past the passed fds", forward_fd_past_fds, -EINVAL },
        { "a forward of the notify fd", forward_fd_is_notify, -EINVAL },
        { "a forward of the gate fd", forward_fd_is_gate, -EINVAL },
        { "a forward of no known kind", forward_unknown_kind, -EINVAL },
        { "forwards past their limit", forwards_too_many, -E2BIG },
};

/* Nothing either launcher could have left: no child, no bundle. */
static void assert_nothing_created(void)
{
        siginfo_t si = {};
        cleanup_free char *bundles = xasprintf("%s/bundles", state);
        cleanup_free char *oci = xasprintf("%s/oci", state);

        cr_assert_eq(waitid(P_ALL, 0, &si, WEXITED | WNOHANG), -1);
        cr_assert_eq(errno, ECHILD);
        cr_assert_neq(access(bundles, F_OK), 0, "the OCI launcher made %s", bundles);
        cr_assert_neq(access(oci, F_OK), 0, "the OCI launcher made %s", oci);
}

Test(spec_check, both_launchers_take_and_refuse_alike)
{
        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                struct container_spec s = good();
                rows[i].change(&s);
                int native = native_entry(&s, rows[i].what);
                int oci = oci_entry(&s, rows[i].what);
                cr_expect_eq(native, oci, "%s: native %s, OCI %s", rows[i].what,
                             native ? strerror(-native) : "takes it",
                             oci ? strerror(-oci) : "takes it");
                cr_expect_eq(native, rows[i].expect, "%s: native %s, want %s", rows[i].what,
                             native ? strerror(-native) : "takes it",
                             rows[i].expect ? strerror(-rows[i].expect) : "taken");
                cr_expect_eq(oci, rows[i].expect, "%s: OCI %s, want %s", rows[i].what,
                             oci ? strerror(-oci) : "takes it",
                             rows[i].expect ? strerror(-rows[i].expect) : "taken");
        }
        assert_nothing_created();
}

/* --- what only one launcher needs (its own small check after the common
 * one): the differences, each on purpose --- */

static void no_shim(struct container_spec *s)
{
        s->shim_path = NULL;
}

static void name_with_slash(struct container_spec *s)
{
        s->name = (char *) "../evil";
}

static void name_with_space(struct container_spec *s)
{
        s->name = (char *) "agent env";
}

static const struct {
        const char *what;
        void (*change)(struct container_spec *s);
        int native, oci;
} own_rows[] = {
        /* The native launcher always execs the shim; an OCI runtime can run
         * argv as the init itself. */
        { "no shim", no_shim, -EINVAL, 0 },
        /* A hostname to the native launcher; part of the bundle's path
         * (the runtime's container id) to the OCI one. */
        { "a name with / and ..", name_with_slash, 0, -EINVAL },
        { "a name with a space", name_with_space, 0, -EINVAL },
};

Test(spec_check, each_launcher_adds_only_its_own)
{
        for (size_t i = 0; i < ELEMENTSOF(own_rows); i++) {
                struct container_spec s = good();
                own_rows[i].change(&s);
                cr_expect_eq(native_entry(&s, own_rows[i].what), own_rows[i].native, "%s: native",
                             own_rows[i].what);
                cr_expect_eq(oci_entry(&s, own_rows[i].what), own_rows[i].oci, "%s: OCI",
                             own_rows[i].what);
        }
        assert_nothing_created();
}
