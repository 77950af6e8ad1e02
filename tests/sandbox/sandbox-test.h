/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Shared by the sandbox kernel tests: a "box" is one container whose
 * principal is the static attacker program (tests/sandbox/attacker.c),
 * bind-mounted at ATTACKER_IN (a path that does not exist in the image, so
 * every box also exercises mount-target creation). stdout+stderr of the
 * container come back through a pipe; the attacker prints one
 * "result: ..." line per attempt.
 *
 * Each test process uses one global box (Criterion forks per test);
 * box_fini() is the suite's .fini and removes everything the box created
 * (container, socket dir, cgroup subtree) even after a failed assertion.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/util.h"
#include "cgroup/cgroup.h"
#include "sandbox/launcher-native.h"
#include "sandbox/syscall-filter.h"
#include "test-helpers.h"

#ifndef SHIM_PATH
#error "SHIM_PATH must be defined by the build"
#endif
#ifndef ATTACKER_PATH
#error "ATTACKER_PATH must be defined by the build"
#endif

#define ATTACKER_IN  "/opt/oe-sbx-test/attacker"
#define BOX_HOST_UID 300000u
#define BOX_UID      1000u

struct box {
        struct container_spec spec;
        struct mount_entry mounts[8];
        char *argv[8];
        char *masks[8];
        struct forward forwards[4];
        char sockdir[64];
        int out_r; /* read end of the container's stdout/stderr */
        struct container *c;
        struct syscall_filter *filter;
        struct cgroup_tree *tree;
        struct cgroup_placement placement;
        char *out; /* everything read so far */
        size_t out_len;
        char tmpdirs[4][64]; /* host dirs made by box_tmpdir(), removed by box_fini() */
};

static struct box B = { .out_r = -EBADF };

static inline void box_fini(void)
{
        B.c = container_free(B.c);
        B.out_r = safe_close(B.out_r);
        if (B.sockdir[0]) {
                (void) rm_rf_at(AT_FDCWD, B.sockdir);
                B.sockdir[0] = '\0';
        }
        if (B.tree) {
                cgroup_placement_done(&B.placement);
                (void) cgroup_tree_destroy(B.tree);
                B.tree = cgroup_tree_free(B.tree);
        }
        B.filter = syscall_filter_free(B.filter);
        B.out = mfree(B.out);
        for (size_t i = 0; i < ELEMENTSOF(B.tmpdirs); i++)
                if (B.tmpdirs[i][0]) {
                        (void) rm_rf_at(AT_FDCWD, B.tmpdirs[i]);
                        B.tmpdirs[i][0] = '\0';
                }
}

/* The real uid of a host pid, from its status (not from the /proc dir's
 * owner, which follows dumpability). */
static inline uid_t host_uid_of(pid_t pid)
{
        cleanup_free char *path = xasprintf("/proc/%d/status", (int) pid), *text = NULL;
        unsigned uid = 0;
        cr_assert(read_full_file_at(AT_FDCWD, path, 1 << 16, &text, NULL) == 0);
        const char *p = strstr(text, "\nUid:");
        cr_assert(p && sscanf(p + 5, "%u", &uid) == 1);
        return (uid_t) uid;
}

/* The first child of a host pid (a shim's principal). */
static inline pid_t first_child(pid_t pid)
{
        cleanup_free char *path = xasprintf("/proc/%d/task/%d/children", (int) pid, (int) pid);
        cleanup_free char *text = NULL;
        int child = 0;
        cr_assert(read_full_file_at(AT_FDCWD, path, 4096, &text, NULL) == 0);
        cr_assert(sscanf(text, "%d", &child) == 1, "%d has no child", (int) pid);
        return child;
}

/* A host scratch dir (0755: traversable by the container's root, which
 * resolves masks and overlay layers), removed by box_fini(). */
static inline const char *box_tmpdir(void)
{
        for (size_t i = 0; i < ELEMENTSOF(B.tmpdirs); i++)
                if (!B.tmpdirs[i][0]) {
                        memcpy(B.tmpdirs[i], "/tmp/oe-sbx-dir-XXXXXX",
                               sizeof("/tmp/oe-sbx-dir-XXXXXX"));
                        cr_assert(mkdtemp(B.tmpdirs[i]));
                        cr_assert(chmod(B.tmpdirs[i], 0755) == 0);
                        return B.tmpdirs[i];
                }
        cr_assert_fail("too many tmpdirs");
        return NULL;
}

/* A box with the production confinement and the attacker bound in. */
static inline void box_init(void)
{
        require_root();
        B = (struct box){ .out_r = -EBADF };
        memcpy(B.sockdir, "/tmp/oe-sbx-XXXXXX", sizeof("/tmp/oe-sbx-XXXXXX"));
        cr_assert(mkdtemp(B.sockdir));
        /* The principal (uid 1000 inside) is host uid BOX_HOST_UID + 1000. */
        cr_assert(chown(B.sockdir, BOX_HOST_UID + BOX_UID, BOX_HOST_UID + BOX_UID) == 0);
        cr_assert(syscall_filter_new(&B.filter) == 0);

        B.mounts[0] = (struct mount_entry){
                .kind = MOUNT_BIND,
                .source = (char *) ATTACKER_PATH,
                .target = (char *) ATTACKER_IN,
                .flags = MS_RDONLY | MS_NOSUID | MS_NODEV,
                .is_file = true,
        };
        B.argv[0] = (char *) ATTACKER_IN;
        /* LeakSanitizer needs ptrace, which the syscall filter denies: in
         * sanitizer builds the shim and attacker run without it. */
        static char *env[] = { (char *) "PATH=/usr/bin:/bin", (char *) "HOME=/tmp",
                               (char *) "ASAN_OPTIONS=detect_leaks=0", NULL };
        B.spec = (struct container_spec){
                .name = (char *) "sbx-test",
                .argv = B.argv,
                .env = env,
                .rootfs = (char *) "/",
                .shim_path = (char *) SHIM_PATH,
                .socket_dir = B.sockdir,
                .host_uid = BOX_HOST_UID,
                .uid_count = 65536,
                .uid = BOX_UID,
                .gid = BOX_UID,
                .mounts = B.mounts,
                .n_mounts = 1,
                .masks = B.masks,
                .forwards = B.forwards,
                .tmp_bytes = 16ULL << 20,
                .nofile = 1024,
                .filter = B.filter,
                .stdio_fd = -EBADF,
        };
}

static inline void box_add_mount(struct mount_entry m)
{
        cr_assert(B.spec.n_mounts < ELEMENTSOF(B.mounts));
        B.mounts[B.spec.n_mounts++] = m;
}

/* Places the box in its own cgroup subtree with these limits. */
static inline void box_cgroup(uint64_t memory_bytes, uint64_t pids)
{
        struct cgroup_layout layout = {};
        struct cgroup_limits limits = { .memory_bytes = memory_bytes, .pids = pids };
        enum cgroup_mode mode;
        char name[64];

        int r = cgroup_layout_detect(&layout, &mode);
        require_feature(r >= 0, "cgroup layout");
        (void) snprintf(name, sizeof(name), "oe-sbx-test-%d", (int) getpid());
        layout.subtree_name = name;
        r = cgroup_tree_open(&layout, &B.tree);
        require_feature(r >= 0, "cgroup tree");
        cr_assert(cgroup_create(B.tree, "c", &limits) == 0);
        cr_assert(cgroup_placement_open(B.tree, "c", &B.placement) == 0);
        B.spec.placement = &B.placement;
}

static inline int box_spawn(struct container_error *err)
{
        int p[2];
        cr_assert(pipe2(p, O_CLOEXEC) == 0);
        B.out_r = p[0];
        B.spec.stdio_fd = p[1];
        int r = container_spawn(&B.spec, &B.c, err);
        safe_close(p[1]);
        B.spec.stdio_fd = -EBADF;
        return r;
}

static inline void box_start(void)
{
        struct container_error e = {};
        int r = box_spawn(&e);
        cr_assert(r == 0, "spawn failed at %s", error_detail_text(&e.detail));
}

/* Reads output until a line containing what (or EOF when what is NULL). */
static inline bool box_read_until(const char *what)
{
        for (;;) {
                if (what && B.out && strstr(B.out, what))
                        return true;
                B.out = xrealloc(B.out, B.out_len + 4097);
                ssize_t n = read(B.out_r, B.out + B.out_len, 4096);
                if (n < 0 && errno == EINTR)
                        continue;
                cr_assert(n >= 0, "read: %s", strerror(errno));
                if (n == 0) {
                        B.out[B.out_len] = '\0';
                        return what == NULL;
                }
                B.out_len += (size_t) n;
                B.out[B.out_len] = '\0';
        }
}

/* Waits for the container; returns its status with all output read. */
static inline int box_wait(void)
{
        int status = -1;
        box_read_until(NULL);
        cr_assert(container_wait(B.c, &status) == 0);
        return status;
}

/* The first "result: " line, without the prefix (static buffer). */
static inline const char *box_result(void)
{
        static char line[512];
        const char *p = B.out ? strstr(B.out, "result: ") : NULL;
        cr_assert(p, "no result line in output: %s", B.out ? B.out : "(none)");
        p += strlen("result: ");
        size_t n = strcspn(p, "\n");
        cr_assert(n < sizeof(line));
        memcpy(line, p, n);
        line[n] = '\0';
        return line;
}

/* Runs one attack in a fresh box (after any box_* customisation) and returns
 * its result line; asserts the attacker itself exited 0. */
static inline const char *box_attack(const char *attack, const char *x, const char *y)
{
        B.argv[1] = (char *) attack;
        B.argv[2] = (char *) x;
        B.argv[3] = x ? (char *) y : NULL;
        box_start();
        int status = box_wait();
        cr_assert(status == 0, "attacker %s exited %d: %s", attack, status, B.out);
        return box_result();
}

static inline void box_reset(void)
{
        B.c = container_free(B.c);
        B.out_r = safe_close(B.out_r);
        B.out = mfree(B.out);
        B.out_len = 0;
}
