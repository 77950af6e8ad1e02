/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sandbox/host-view.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/dir-walk.h"
#include "base/fd-util.h"
#include "base/limits.h"
#include "base/macro.h"
#include "base/util.h"

#define VIEW_BIND_FLAGS (MS_RDONLY | MS_NOSUID | MS_NODEV)

/* The loader paths: symlinks into /usr on a merged-/usr host (Debian since
 * bookworm), copied as such; real directories on an older layout, bound. */
static const char *const loader_paths[] = { "bin", "sbin", "lib", "lib32", "lib64", "libx32" };

/* Mount points the container's own file systems go on. */
static const char *const mount_points[] = { "proc", "sys", "dev", "tmp", "run" };

/* What programs read from /etc to start and run (the loader, name service,
 * time zone, protocol and MIME tables): copied when a regular file, copied
 * as a symlink when one (localtime, os-release). Nothing with a secret or a
 * host identity: no shadow, gshadow, ssh, machine-id, hostname, sudoers. */
static const char *const etc_files[] = {
        "ld.so.cache", "ld.so.conf",  "nsswitch.conf", "host.conf",      "gai.conf",
        "hosts",       "resolv.conf", "localtime",     "timezone",       "protocols",
        "services",    "mime.types",  "os-release",    "debian_version", "shells",
};

/* Directories of public configuration, copied one level deep (files and
 * symlinks): the loader's extra paths, Debian's alternatives (symlinks into
 * /usr), the CA certificates, Python's site configuration. Copied rather
 * than bound: every bind costs each container spawn two fds and a mount
 * (the view must fit a daemon given 64 fds); the cost is that a change on
 * the host (update-ca-certificates) reaches containers at the next start. */
static const char *const etc_dirs[] = {
        "ld.so.conf.d", "alternatives", "ssl/certs",  "python3",
        "python3.11",   "python3.12",   "python3.13",
};

const char *host_view_passwd(void)
{
        /* The principal (uid 1000 inside, unit-plan.h) gets a name and a
         * writable home; nothing of the host's accounts is shown. */
        return "root:x:0:0:root:/root:/usr/sbin/nologin\n"
               "openenv:x:1000:1000:openenv:/tmp:/usr/sbin/nologin\n"
               "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
}

const char *host_view_group(void)
{
        return "root:x:0:\n"
               "openenv:x:1000:\n"
               "nogroup:x:65534:\n";
}

static void add_bind(struct host_view *v, const char *source, const char *target)
{
        v->binds = xrealloc(v->binds, (v->n_binds + 1) * sizeof(*v->binds));
        v->binds[v->n_binds++] = (struct mount_entry){
                .kind = MOUNT_BIND,
                .source = xstrdup(source),
                .target = xstrdup(target),
                .flags = VIEW_BIND_FLAGS,
        };
}

/* Copies host's symlink name (relative to both dir fds) as a symlink. */
static int copy_symlink(int host_fd, int dst_fd, const char *name)
{
        char target[PATH_MAX];
        ssize_t l = readlinkat(host_fd, name, target, sizeof(target) - 1);
        if (l < 0)
                return -errno;
        target[l] = '\0';
        return symlinkat(target, dst_fd, name) < 0 ? -errno : 0;
}

static int copy_file(int host_fd, int dst_fd, const char *name)
{
        cleanup_free char *buf = NULL;
        size_t len;
        int r = read_full_file_at(host_fd, name, HOST_VIEW_FILE_MAX, &buf, &len);
        if (r < 0)
                return r;
        cleanup_close int fd =
                openat(dst_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        return write_all(fd, buf, len);
}

/* Copies host's directory name (relative to both dir fds) one level deep:
 * regular files and symlinks; anything else (a subdirectory, a socket) is
 * left out. */
static int copy_dir_flat(int host_fd, int dst_fd, const char *name)
{
        cleanup_close int src =
                openat(host_fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        cleanup_close int dst = -EBADF;
        cleanup_strv char **names = NULL;
        int r;

        if (src < 0)
                return -errno;
        r = mkdir_p_at(dst_fd, name, 0755);
        if (r < 0)
                return r;
        dst = openat(dst_fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dst < 0)
                return -errno;
        r = dir_list_names(src, false, &names);
        if (r < 0)
                return r;
        if (strv_length(names) > HOST_VIEW_DIR_ENTRIES)
                return -E2BIG;
        for (char **n = names; n && *n; n++) {
                struct stat st;
                if (fstatat(src, *n, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        return -errno;
                if (S_ISLNK(st.st_mode))
                        r = copy_symlink(src, dst, *n);
                else if (S_ISREG(st.st_mode))
                        r = copy_file(src, dst, *n);
                else
                        r = 0;
                if (r < 0)
                        return r;
        }
        return 0;
}

static int write_new_file(int dst_fd, const char *name, const char *s)
{
        cleanup_close int fd =
                openat(dst_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        return write_all(fd, s, strlen(s));
}

/* A loader path: the host's symlink copied, its directory bound, or
 * nothing when the host has none. */
static int add_loader_path(struct host_view *v, const char *host_root, int host_fd, int skel_fd,
                           const char *name)
{
        struct stat st;
        if (fstatat(host_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (S_ISLNK(st.st_mode))
                return copy_symlink(host_fd, skel_fd, name);
        if (!S_ISDIR(st.st_mode))
                return 0;
        if (mkdirat(skel_fd, name, 0755) < 0)
                return -errno;
        cleanup_free char *src = xasprintf("%s/%s", host_root, name);
        cleanup_free char *dst = xasprintf("/%s", name);
        add_bind(v, src, dst);
        return 0;
}

static int fill_etc(int host_fd, int skel_fd)
{
        cleanup_close int etc = -EBADF, host_etc = -EBADF;
        int r;

        if (mkdirat(skel_fd, "etc", 0755) < 0)
                return -errno;
        etc = openat(skel_fd, "etc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (etc < 0)
                return -errno;
        if ((r = write_new_file(etc, "passwd", host_view_passwd())) < 0 ||
            (r = write_new_file(etc, "group", host_view_group())) < 0)
                return r;
        host_etc = openat(host_fd, "etc", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (host_etc < 0)
                return errno == ENOENT ? 0 : -errno;

        for (size_t i = 0; i < ELEMENTSOF(etc_files); i++) {
                struct stat st;
                if (fstatat(host_etc, etc_files[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue; /* not on this host */
                if (S_ISLNK(st.st_mode))
                        r = copy_symlink(host_etc, etc, etc_files[i]);
                else if (S_ISREG(st.st_mode))
                        r = copy_file(host_etc, etc, etc_files[i]);
                else
                        r = 0;
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < ELEMENTSOF(etc_dirs); i++) {
                struct stat st;
                /* A real directory only, as the host has it. */
                if (fstatat(host_etc, etc_dirs[i], &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISDIR(st.st_mode))
                        continue;
                r = copy_dir_flat(host_etc, etc, etc_dirs[i]);
                if (r < 0)
                        return r;
        }
        /* openssl.cnf beside the certificates (ssl/private stays out). */
        cleanup_close int ssl = openat(etc, "ssl", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (ssl >= 0) {
                cleanup_close int host_ssl =
                        openat(host_etc, "ssl", O_PATH | O_DIRECTORY | O_CLOEXEC);
                struct stat st;
                if (host_ssl >= 0 &&
                    fstatat(host_ssl, "openssl.cnf", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                    S_ISREG(st.st_mode)) {
                        r = copy_file(host_ssl, ssl, "openssl.cnf");
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* host_fd: the host's root; host_root: the prefix of the bind sources. */
static int make_skeleton(struct host_view *v, int host_fd, const char *host_root, int skel_fd)
{
        int r;

        for (size_t i = 0; i < ELEMENTSOF(loader_paths); i++) {
                r = add_loader_path(v, host_root, host_fd, skel_fd, loader_paths[i]);
                if (r < 0)
                        return r;
        }
        if (mkdirat(skel_fd, "usr", 0755) < 0)
                return -errno;
        cleanup_free char *usr = xasprintf("%s/usr", host_root);
        add_bind(v, usr, "/usr");
        for (size_t i = 0; i < ELEMENTSOF(mount_points); i++)
                if (mkdirat(skel_fd, mount_points[i], 0755) < 0)
                        return -errno;
        return fill_etc(host_fd, skel_fd);
}

int host_view_make(const char *host_root, const char *dir, struct host_view *ret)
{
        struct host_view v = { 0 };
        int r;

        if (mkdir(dir, 0755) < 0)
                return -errno;
        /* Whatever the umask: the skeleton is what every zone sees. */
        if (chmod(dir, 0755) < 0)
                return -errno;
        cleanup_close int skel = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (skel < 0)
                return -errno;
        cleanup_close int host = open(host_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (host < 0)
                return -errno;
        /* "/" + "/usr" would be "//usr": the root's own paths start bare. */
        r = make_skeleton(&v, host, streq(host_root, "/") ? "" : host_root, skel);
        if (r < 0) {
                host_view_done(&v);
                return r;
        }
        v.root = xstrdup(dir);
        *ret = v;
        return 0;
}

void host_view_done(struct host_view *v)
{
        if (!v)
                return;
        for (size_t i = 0; i < v->n_binds; i++) {
                free(v->binds[i].source);
                free(v->binds[i].target);
        }
        free(v->binds);
        free(v->root);
        *v = (struct host_view){ 0 };
}

static bool path_at_or_below(const char *path, const char *base)
{
        size_t n = strlen(base);
        return strncmp(path, base, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* Where every container gets file systems of its own (sandbox/mount-setup.c),
 * whatever its root. */
static const char *const container_mounts[] = { "/proc", "/sys", "/dev", "/tmp", "/run" };

static const char *mount_holding(const char *path)
{
        for (size_t i = 0; i < ELEMENTSOF(container_mounts); i++)
                if (path_at_or_below(path, container_mounts[i]))
                        return container_mounts[i];
        return NULL;
}

const char *host_view_hidden_by(const char *path, bool view)
{
        const char *by = mount_holding(path);

        if (by)
                return by;
        if (path_at_or_below(path, "/workspace"))
                return "/workspace";
        return view && path_at_or_below(path, "/etc") ? "/etc" : NULL;
}

bool host_view_covers(const struct host_view *v, const char *path)
{
        /* /etc is the view's own (filtered); the loader paths are symlinks
         * or binds; the container's mounts are its own file systems. */
        static const char *const own[] = { "/etc",   "/bin",   "/sbin",  "/lib",
                                           "/lib32", "/lib64", "/libx32" };

        if (streq(path, "/") || mount_holding(path))
                return true;
        for (size_t i = 0; i < ELEMENTSOF(own); i++)
                if (path_at_or_below(path, own[i]))
                        return true;
        for (size_t i = 0; i < v->n_binds; i++)
                if (path_at_or_below(path, v->binds[i].target))
                        return true;
        return false;
}
