/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Files: what must not be readable (masked paths, secrets, asset sources),
 * what must not be writable (the root, /usr, /etc), the model key nowhere
 * in reach, and no fd inherited that leads out.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/limits.h"
#include "base/mountinfo.h"
#include "base/parse-util.h"
#include "base/util.h"
#include "probe/attack-internal.h"
#include "probe/write-check.h"

/* Allowed iff at least one byte (or one directory entry) comes back. */
void attack_read(const char *path, struct attack_outcome *o)
{
        cleanup_close int fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        struct stat st;
        char buf[4096] __attribute__((aligned(8)));

        if (fd < 0)
                return attack_outcome_errno(o, errno, attack_deny_access, "open");
        if (fstat(fd, &st) < 0)
                return attack_outcome_errno(o, errno, (const int[]){ 0 }, "fstat");
        if (S_ISDIR(st.st_mode)) {
                unsigned n_entries = 0;
                for (;;) {
                        long n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
                        if (n < 0)
                                return attack_outcome_errno(o, errno, attack_deny_access,
                                                            "getdents");
                        if (n == 0)
                                break;
                        for (long off = 0; off < n;) {
                                const struct dirent64 *de = (const void *) (buf + off);
                                off += de->d_reclen;
                                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                                        n_entries++;
                        }
                }
                if (n_entries > 0)
                        return attack_outcome_set(o, ATTACK_ALLOWED, "directory lists %u entries",
                                                  n_entries);
                return attack_outcome_set(o, ATTACK_DENIED, "empty directory");
        }
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0)
                return attack_outcome_errno(o, errno, (const int[]){ EACCES, EPERM, EINVAL, 0 },
                                            "read");
        if (n == 0)
                return attack_outcome_set(o, ATTACK_DENIED, "empty");
        attack_outcome_set(o, ATTACK_ALLOWED, "read %zd bytes", n);
}

/* Create-and-remove a unique entry (write-check.h): never leaves anything. */
void attack_write_dir(const char *path, struct attack_outcome *o)
{
        cleanup_close int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        char buf[16];
        int err = 0;

        if (fd < 0)
                return attack_outcome_errno(o, errno, attack_deny_access, "open");
        enum write_result w = write_check_dir(fd, &err);
        switch (w) {
        case WRITE_DENIED:
                return attack_outcome_set(o, ATTACK_DENIED, "create: %s",
                                          attack_errno_name(err, buf));
        case WRITE_WRITABLE:
                return attack_outcome_set(o, ATTACK_ALLOWED, "created an entry");
        default:
                return attack_outcome_set(o, ATTACK_ERROR, "create: inconclusive %s",
                                          attack_errno_name(err, buf));
        }
}

/* Opens an existing file for writing, without O_TRUNC, and writes nothing:
 * for procfs/sysfs the permission decision is taken at open. */
void attack_write_file(const char *path, struct attack_outcome *o)
{
        cleanup_close int fd = open(path, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return attack_outcome_errno(o, errno, attack_deny_access, "open for writing");
        attack_outcome_set(o, ATTACK_ALLOWED, "opened for writing");
}

void attack_mkdir(const char *path, struct attack_outcome *o)
{
        if (mkdir(path, 0700) < 0)
                return attack_outcome_errno(o, errno, attack_deny_access, "mkdir");
        (void) rmdir(path);
        attack_outcome_set(o, ATTACK_ALLOWED, "created a directory");
}

/* The mount containing path must be read-only by its mount or superblock
 * flags: a root that only DAC protects is writable by whoever the image
 * lets in. */
void attack_root_rw(const char *path, struct attack_outcome *o)
{
        cleanup(mountinfo_freep) struct mountinfo *mi = NULL;
        int r;

        r = mountinfo_load_at(AT_FDCWD, "/proc/self/mountinfo", &mi);
        if (r < 0)
                return attack_outcome_errno(o, -r, (const int[]){ 0 }, "mountinfo");
        const struct mountinfo_entry *e = mountinfo_find_by_path(mi, path);
        if (!e || mi->truncated)
                return attack_outcome_set(o, ATTACK_ERROR, "no complete mount table entry for %s",
                                          path);
        if (mountinfo_entry_is_read_only(e))
                return attack_outcome_set(o, ATTACK_DENIED, "mount %u is read-only (%s)",
                                          e->mount_id, e->mount_options);
        attack_outcome_set(o, ATTACK_ALLOWED, "mount %u at %s is read-write (%s / %s)", e->mount_id,
                           e->mount_point, e->mount_options, e->super_options);
}

static int hex_decode(const char *hex, char *out, size_t size)
{
        size_t n = strlen(hex);
        if (n % 2 || n / 2 + 1 > size || n == 0)
                return -EINVAL;
        for (size_t i = 0; i < n / 2; i++) {
                unsigned v;
                char two[3] = { hex[2 * i], hex[2 * i + 1], 0 };
                if (sscanf(two, "%2x", &v) != 1)
                        return -EINVAL;
                out[i] = (char) v;
        }
        out[n / 2] = '\0';
        return (int) (n / 2);
}

static bool file_contains(int dirfd, const char *path, const char *needle, size_t nlen)
{
        cleanup_free char *data = NULL;
        size_t len;

        if (read_full_file_at(dirfd, path, (size_t) PROC_STATUS_MAX_BYTES, &data, &len) < 0)
                return false;
        return memmem(data, len, needle, nlen) != NULL;
}

/* The marker (passed hex-encoded, so our own argv never contains it) must
 * not appear in the environment or command line of any process we can see:
 * the real key is only ever held outside the zone. */
void attack_find_secret(const char *hex, struct attack_outcome *o)
{
        char marker[128];
        int n = hex_decode(hex, marker, sizeof(marker));
        DIR *d;
        struct dirent *de;
        unsigned sources = 0;

        if (n <= 0)
                return attack_outcome_set(o, ATTACK_ERROR, "bad marker");
        d = opendir("/proc");
        if (!d)
                return attack_outcome_errno(o, errno, (const int[]){ 0 }, "opendir /proc");
        while ((de = readdir(d))) {
                int pid;
                char p[64];
                if (parse_int(de->d_name, 1, INT32_MAX, &pid) < 0)
                        continue;
                static const char *const files[] = { "environ", "cmdline" };
                for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                        (void) snprintf(p, sizeof(p), "/proc/%d/%s", pid, files[i]);
                        sources++;
                        if (file_contains(AT_FDCWD, p, marker, (size_t) n)) {
                                closedir(d);
                                return attack_outcome_set(o, ATTACK_ALLOWED, "key found in %s", p);
                        }
                }
        }
        closedir(d);
        attack_outcome_set(o, ATTACK_DENIED, "not found in %u process files", sources);
}

void attack_inherited_fds(const struct attack_context *ctx, struct attack_outcome *o)
{
        if (ctx->first_inherited < -1)
                return attack_outcome_set(o, ATTACK_ERROR, "/proc/self/fd could not be read");
        if (ctx->inherited_fds > 0)
                return attack_outcome_set(o, ATTACK_ALLOWED, "%u inherited fds (first %d)",
                                          ctx->inherited_fds, ctx->first_inherited);
        if (ctx->dir_fds > 0)
                return attack_outcome_set(o, ATTACK_ALLOWED, "a standard fd is a directory");
        attack_outcome_set(o, ATTACK_DENIED, "only stdin/stdout/stderr, none a directory");
}
