/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sandbox/netns-keep.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/util.h"
#include "sandbox/mount-api.h"
#include "sandbox/ns-helper.h"

/* Sockets made per helper run; unused ones go with the namespace. */
#define SOCKET_BATCH 8

struct kept_netns {
        int fd;       /* nsfs: the namespace */
        int sysfs_fd; /* detached sysfs of the namespace */
        int pool_family;
        size_t n_pool;
        int pool[SOCKET_BATCH];
};

int netns_loopback_up(void)
{
        /* Only the kernel's lo exists in a new network namespace; it starts
         * down. */
        cleanup_close int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        struct ifreq ifr = { .ifr_name = "lo" };

        if (fd < 0)
                return -errno;
        if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
                return -errno;
        ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
        if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
                return -errno;
        return 0;
}

/*
 * The namespace every new one is made from. A new network namespace gets a
 * TCP and a UDP hash table of its own when the namespace of the task that
 * makes it says so (tcp_child_ehash_entries, udp_child_hash_entries; kernel
 * >= 6.1 and 6.2), else it shares the host's. Shared, an agent's
 * connections sit in the same buckets as the host's and every other
 * unit's, and each read of /proc/net/tcp (the shim's readiness check, 2 per
 * poll) walks all of the host's buckets: 262,144 on a 24 GiB machine, 6.8
 * ms of kernel time per check, a fifth of a fork-speed episode's CPU. So
 * the daemon keeps one empty namespace that says so, and its helpers step
 * into it before they make one.
 */
#define CHILD_TCP_BUCKETS "1024"
#define CHILD_UDP_BUCKETS "256"

static int incubator_fd = -EBADF;
static int incubator_error;

struct sysctl_setting {
        const char *path, *value;
        bool optional; /* a kernel without it: skipped */
};

/* In a helper: a new network namespace of our own (unshare()), *ret_fd its
 * nsfs fd, proven joinable: joining the namespace we are in is a no-op that
 * proves setns() works (a seccomp profile may refuse it), without which
 * nothing could be cloned into it nor a socket made there. Then its
 * sysctls, through a procfs instance of our own, detached: /proc/sys/net
 * shows the namespace of the task that opens it, and the daemon's /proc/sys
 * may be read-only (a container runtime mounts it so). */
static int unshare_netns(int *ret_fd, const struct sysctl_setting *sysctls, size_t n)
{
        if (unshare(CLONE_NEWNET) < 0)
                return -errno;
        *ret_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
        if (*ret_fd < 0)
                return -errno;
        if (setns(*ret_fd, CLONE_NEWNET) < 0)
                return -errno;
        cleanup_close int proc = mount_fs_new("proc", NULL, 0, MOUNT_ATTR_NOEXEC);
        if (proc < 0)
                return proc;
        for (size_t i = 0; i < n; i++) {
                int r = write_string_file_at(proc, sysctls[i].path, sysctls[i].value);
                if (r < 0 && !(r == -ENOENT && sysctls[i].optional))
                        return r;
        }
        return 0;
}

/* In the helper: the incubator. A sysctl the kernel lacks is no error (its
 * children then share the host's table, as before); one that refuses
 * setns() is (none is used then, and nothing fails for want of it). */
static int make_incubator(void *userdata, void *out)
{
        static const struct sysctl_setting sysctls[] = {
                { "sys/net/ipv4/tcp_child_ehash_entries", CHILD_TCP_BUCKETS, true },
                { "sys/net/ipv4/udp_child_hash_entries", CHILD_UDP_BUCKETS, true },
        };
        int *fd = out;

        (void) userdata;
        *fd = -EBADF;
        return unshare_netns(fd, sysctls, ELEMENTSOF(sysctls));
}

int netns_incubator(void)
{
        if (incubator_fd >= 0 || incubator_error < 0)
                return incubator_fd >= 0 ? incubator_fd : incubator_error;
        int fd = -EBADF;
        int r = ns_helper_run(make_incubator, NULL, &fd, sizeof(fd));
        if (r < 0) {
                safe_close(fd);
                return incubator_error = r;
        }
        return incubator_fd = fd;
}

bool netns_enter_incubator(int fd)
{
        return fd < 0 || setns(fd, CLONE_NEWNET) == 0;
}

/* What the helper hands back: fds it opened in our (shared) fd table. */
struct made {
        int fd, sysfs_fd;
};

/* In the helper: a new namespace, set up. Only system calls. */
static int make_inside(void *userdata, void *out)
{
        static const struct sysctl_setting sysctls[] = {
                { "sys/net/ipv4/ip_unprivileged_port_start", "0", false },
                { "sys/net/ipv4/tcp_max_tw_buckets", "0", false },
        };
        struct made *m = out;
        int r;

        m->fd = m->sysfs_fd = -EBADF;
        if (!netns_enter_incubator(*(const int *) userdata))
                return -errno;
        r = unshare_netns(&m->fd, sysctls, ELEMENTSOF(sysctls));
        if (r >= 0)
                r = netns_loopback_up();
        if (r < 0)
                return r;
        /* A sysfs instance belongs to the network namespace of its mounter;
         * it stays detached (no path anywhere) until a container clones it. */
        m->sysfs_fd = mount_fs_new("sysfs", NULL, 0,
                                   MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                                           MOUNT_ATTR_NOEXEC);
        return m->sysfs_fd < 0 ? m->sysfs_fd : 0;
}

int kept_netns_new(struct kept_netns **ret)
{
        struct made m = { -EBADF, -EBADF };
        int incubator = netns_incubator();
        int r = ns_helper_run(make_inside, &incubator, &m, sizeof(m));
        if (r < 0) {
                /* The helper shares our fd table: what it opened is ours. */
                safe_close(m.fd);
                safe_close(m.sysfs_fd);
                return r;
        }
        struct kept_netns *k = xcalloc(1, sizeof(*k));
        k->fd = m.fd;
        k->sysfs_fd = m.sysfs_fd;
        *ret = k;
        return 0;
}

static void pool_drain(struct kept_netns *k)
{
        while (k->n_pool > 0)
                safe_close(k->pool[--k->n_pool]);
}

struct kept_netns *kept_netns_free(struct kept_netns *k)
{
        if (!k)
                return NULL;
        pool_drain(k);
        safe_close(k->fd);
        safe_close(k->sysfs_fd);
        return mfree(k);
}

int kept_netns_fd(const struct kept_netns *k)
{
        return k->fd;
}

struct batch {
        int n;
        int fds[SOCKET_BATCH];
};

struct batch_request {
        int ns_fd, family;
};

/* In the helper: SOCKET_BATCH sockets, or as many as it got before the
 * first error (returned when it got none). */
static int make_sockets(void *userdata, void *out)
{
        const struct batch_request *q = userdata;
        struct batch *b = out;

        b->n = 0;
        if (setns(q->ns_fd, CLONE_NEWNET) < 0)
                return -errno;
        /* A socket belongs for good to the namespace it was made in. */
        while (b->n < SOCKET_BATCH) {
                int fd = socket(q->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
                if (fd < 0)
                        return b->n > 0 ? 0 : -errno;
                b->fds[b->n++] = fd;
        }
        return 0;
}

int kept_netns_socket(struct kept_netns *k, int family)
{
        if (k->n_pool > 0 && k->pool_family != family)
                pool_drain(k);
        if (k->n_pool == 0) {
                struct batch b = {};
                int r = ns_helper_run(make_sockets, &(struct batch_request){ k->fd, family }, &b,
                                      sizeof(b));
                if (r < 0) {
                        for (int i = 0; i < b.n; i++)
                                safe_close(b.fds[i]);
                        return r;
                }
                /* Handed out last-made first: any order serves. */
                for (int i = 0; i < b.n; i++)
                        k->pool[k->n_pool++] = b.fds[i];
                k->pool_family = family;
        }
        return k->pool[--k->n_pool];
}

int kept_netns_sysfs_fd(const struct kept_netns *k)
{
        return k->sysfs_fd;
}
