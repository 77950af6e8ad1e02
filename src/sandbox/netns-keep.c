/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sandbox/netns-keep.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/util.h"
#include "sandbox/mount-api.h"

#define MAX_PROTOCOLS 64
#define PROC_MAX      ((size_t) 64 * 1024)

struct proto_count {
        char name[16];
        long sockets;
};

struct kept_netns {
        int fd;       /* nsfs: the kept namespace */
        int home_fd;  /* nsfs: where the creating thread came from */
        int sysfs_fd; /* detached sysfs of the namespace */
        struct proto_count baseline[MAX_PROTOCOLS];
        size_t n_baseline;
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

/* The per-namespace socket counts (third column) of /proc/net/protocols as
 * the calling thread sees it. */
static int read_protocols(struct proto_count *ret, size_t *ret_n)
{
        cleanup_free char *text = NULL;
        size_t n = 0;
        int r = read_full_file_at(AT_FDCWD, "/proc/thread-self/net/protocols", PROC_MAX, &text,
                                  NULL);
        if (r < 0)
                return r;
        const char *line = strchr(text, '\n'); /* skip the header */
        while (line && *++line) {
                struct proto_count p = {};
                long size;
                if (sscanf(line, "%15s %ld %ld", p.name, &size, &p.sockets) != 3)
                        return -EBADMSG;
                if (n >= MAX_PROTOCOLS)
                        return -E2BIG;
                ret[n++] = p;
                line = strchr(line, '\n');
        }
        *ret_n = n;
        return 0;
}

/* The number after key on the line of /proc/net/<file> starting with tag,
 * e.g. ("sockstat", "TCP:", "tw"). */
static int read_sockstat(const char *file, const char *tag, const char *key, long *ret)
{
        cleanup_free char *path = xasprintf("/proc/thread-self/net/%s", file);
        cleanup_free char *text = NULL;
        int r = read_full_file_at(AT_FDCWD, path, PROC_MAX, &text, NULL);
        if (r < 0)
                return r;
        for (const char *line = text; line && *line; line = strchr(line, '\n'), line += !!line) {
                if (!startswith(line, tag))
                        continue;
                size_t eol = strcspn(line, "\n");
                const char *p = line + strlen(tag);
                while (p < line + eol) {
                        char word[32];
                        long v;
                        int used = 0;
                        if (sscanf(p, "%31s %ld%n", word, &v, &used) != 2 || used == 0)
                                break;
                        if (streq(word, key)) {
                                *ret = v;
                                return 0;
                        }
                        p += used;
                }
                return -EBADMSG;
        }
        return -ENOENT;
}

int kept_netns_enter(const struct kept_netns *k)
{
        if (setns(k->fd, CLONE_NEWNET) < 0)
                return -errno;
        return 0;
}

int kept_netns_leave(const struct kept_netns *k)
{
        if (setns(k->home_fd, CLONE_NEWNET) < 0)
                return -errno;
        return 0;
}

int kept_netns_socket(const struct kept_netns *k, int family)
{
        int r = kept_netns_enter(k);
        if (r < 0)
                return r;
        /* A socket belongs for good to the namespace it was made in. */
        int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        r = fd < 0 ? -errno : fd;
        if (kept_netns_leave(k) < 0)
                abort(); /* see kept_netns_new() */
        return r;
}

int kept_netns_sysfs_fd(const struct kept_netns *k)
{
        return k->sysfs_fd;
}

/* Runs in the new namespace (the calling thread was moved there). */
static int setup_inside(struct kept_netns *k)
{
        static const struct {
                const char *path, *value;
        } sysctls[] = {
                { "sys/net/ipv4/ip_unprivileged_port_start", "0" },
                { "sys/net/ipv4/tcp_max_tw_buckets", "0" },
                { "sys/net/ipv4/tcp_no_metrics_save", "1" },
        };
        int r;

        k->fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
        if (k->fd < 0)
                return -errno;
        r = netns_loopback_up();
        if (r < 0)
                return r;
        /* /proc/sys/net shows the namespace of the task that opens it. A
         * procfs instance of our own, detached: the daemon's /proc/sys may
         * be read-only (a container runtime mounts it so). */
        cleanup_close int proc = mount_fs_new("proc", NULL, 0, MOUNT_ATTR_NOEXEC);
        if (proc < 0)
                return proc;
        for (size_t i = 0; i < ELEMENTSOF(sysctls); i++) {
                r = write_string_file_at(proc, sysctls[i].path, sysctls[i].value);
                if (r < 0)
                        return r;
        }
        /* A sysfs instance belongs to the network namespace of its mounter;
         * it stays detached (no path anywhere) until a container clones it. */
        k->sysfs_fd = mount_fs_new("sysfs", NULL, 0,
                                   MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                                           MOUNT_ATTR_NOEXEC);
        if (k->sysfs_fd < 0)
                return k->sysfs_fd;
        return read_protocols(k->baseline, &k->n_baseline);
}

int kept_netns_new(struct kept_netns **ret)
{
        cleanup(kept_netns_freep) struct kept_netns *k = xcalloc(1, sizeof(*k));
        k->fd = k->sysfs_fd = -EBADF;
        k->home_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
        if (k->home_fd < 0)
                return -errno;
        /* Rejoining our own namespace is a no-op that proves the way back
         * exists (a seccomp profile may refuse setns()) before we leave. */
        if (setns(k->home_fd, CLONE_NEWNET) < 0)
                return -errno;
        if (unshare(CLONE_NEWNET) < 0)
                return -errno;
        int r = setup_inside(k);
        /* Back home on every path: the daemon's own sockets live there. */
        if (setns(k->home_fd, CLONE_NEWNET) < 0)
                abort(); /* we hold CAP_SYS_ADMIN and came from there */
        if (r < 0)
                return r;
        *ret = TAKE_PTR(k);
        return 0;
}

struct kept_netns *kept_netns_free(struct kept_netns *k)
{
        if (!k)
                return NULL;
        safe_close(k->fd);
        safe_close(k->home_fd);
        safe_close(k->sysfs_fd);
        return mfree(k);
}

static long baseline_of(const struct kept_netns *k, const char *name)
{
        for (size_t i = 0; i < k->n_baseline; i++)
                if (streq(k->baseline[i].name, name))
                        return k->baseline[i].sockets;
        return 0; /* a protocol registered since (a module loaded) */
}

static int check_inside(const struct kept_netns *k, char *what, size_t what_size)
{
        struct proto_count now[MAX_PROTOCOLS];
        size_t n = 0;
        long v = 0;
        int r = read_protocols(now, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++)
                if (now[i].sockets > baseline_of(k, now[i].name)) {
                        (void) snprintf(what, what_size, "%s: %ld socket(s)", now[i].name,
                                        now[i].sockets - baseline_of(k, now[i].name));
                        return -EBUSY;
                }
        static const struct {
                const char *file, *tag, *key, *what;
        } counters[] = {
                { "sockstat", "TCP:", "tw", "TCP: TIME_WAIT" },
                { "sockstat", "FRAG:", "inuse", "IPv4 fragment queues" },
                { "sockstat6", "FRAG6:", "inuse", "IPv6 fragment queues" },
        };
        for (size_t i = 0; i < ELEMENTSOF(counters); i++) {
                r = read_sockstat(counters[i].file, counters[i].tag, counters[i].key, &v);
                if (r < 0)
                        return r;
                if (v > 0) {
                        (void) snprintf(what, what_size, "%s: %ld", counters[i].what, v);
                        return -EBUSY;
                }
        }
        return 0;
}

int kept_netns_check(struct kept_netns *k, char *what, size_t what_size)
{
        char dummy[1];
        if (!what) {
                what = dummy;
                what_size = sizeof(dummy);
        }
        if (what_size > 0)
                what[0] = '\0';
        int r = kept_netns_enter(k);
        if (r < 0)
                return r;
        r = check_inside(k, what, what_size);
        if (kept_netns_leave(k) < 0)
                abort(); /* see kept_netns_new() */
        return r;
}
