/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * attacker: run as the principal of a container by the kernel tests. Tries
 * one thing and prints exactly one line starting with "result: ", e.g.
 * "result: denied EROFS" or "result: allowed", so each test asserts the
 * precise outcome. Statically linked: it is bind-mounted into containers.
 *
 *   attacker ATTACK [ARGS...]
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void result(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void result(const char *fmt, ...)
{
        char buf[1024];
        va_list ap;
        int n = snprintf(buf, sizeof(buf), "result: ");
        va_start(ap, fmt);
        n += vsnprintf(buf + n, sizeof(buf) - (size_t) n - 1, fmt, ap);
        va_end(ap);
        if (n > (int) sizeof(buf) - 2)
                n = (int) sizeof(buf) - 2;
        buf[n++] = '\n';
        (void) !write(STDOUT_FILENO, buf, (size_t) n);
}

/* "allowed" when r >= 0, else "denied <ERRNO NAME>" (errno is read now). */
static int verdict(long r)
{
        if (r >= 0)
                result("allowed");
        else
                result("denied %s", strerrorname_np(errno));
        return 0;
}

static long num(const char *s)
{
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (errno || *end || end == s) {
                result("bad number %s", s);
                exit(2);
        }
        return v;
}

static int do_read(const char *path)
{
        struct stat st;
        if (stat(path, &st) < 0)
                return verdict(-1);
        if (S_ISDIR(st.st_mode)) {
                DIR *d = opendir(path);
                struct dirent *de;
                int n = 0;
                if (!d)
                        return verdict(-1);
                while ((de = readdir(d)))
                        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
                                n++;
                closedir(d);
                if (n == 0)
                        result("empty");
                else
                        result("entries %d", n);
                return 0;
        }
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0)
                return verdict(-1);
        char buf[4096];
        ssize_t n = read(fd, buf, sizeof(buf));
        close(fd);
        if (n < 0)
                return verdict(-1);
        if (n == 0)
                result("empty");
        else
                result("data %zd", n);
        return 0;
}

static int do_pids(void)
{
        char line[512] = "";
        size_t len = 0;
        struct dirent *de;
        DIR *d = opendir("/proc");
        if (!d)
                return verdict(-1);
        /* Sorted by the kernel for /proc's pid entries. */
        while ((de = readdir(d)))
                if (de->d_name[0] >= '0' && de->d_name[0] <= '9')
                        len += (size_t) snprintf(line + len, sizeof(line) - len, " %s", de->d_name);
        closedir(d);
        result("pids%s", line);
        return 0;
}

static int do_ids(void)
{
        char buf[8192], out[512];
        size_t o = 0;
        int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
        if (n < 0)
                return verdict(-1);
        close(fd);
        buf[n] = '\0';
        o += (size_t) snprintf(out + o, sizeof(out) - o, "uid=%d euid=%d gid=%d groups=%d",
                               (int) getuid(), (int) geteuid(), (int) getgid(), getgroups(0, NULL));
        static const char *const keys[] = { "CapInh:", "CapPrm:",     "CapEff:", "CapBnd:",
                                            "CapAmb:", "NoNewPrivs:", "Seccomp:" };
        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
                char *p = strstr(buf, keys[i]);
                if (!p)
                        continue;
                p += strlen(keys[i]);
                while (*p == '\t' || *p == ' ')
                        p++;
                size_t l = strcspn(p, "\n");
                o += (size_t) snprintf(out + o, sizeof(out) - o, " %.*s=%.*s",
                                       (int) strlen(keys[i]) - 1, keys[i], (int) l, p);
        }
        result("%s", out);
        return 0;
}

static int do_netifs(void)
{
        char line[512] = "";
        size_t len = 0;
        struct if_nameindex *ifs = if_nameindex();
        if (!ifs)
                return verdict(-1);
        for (struct if_nameindex *i = ifs; i->if_index; i++)
                len += (size_t) snprintf(line + len, sizeof(line) - len, " %s", i->if_name);
        if_freenameindex(ifs);
        DIR *d = opendir("/sys/class/net");
        struct dirent *de;
        len += (size_t) snprintf(line + len, sizeof(line) - len, " /");
        while (d && (de = readdir(d)))
                if (de->d_name[0] != '.')
                        len += (size_t) snprintf(line + len, sizeof(line) - len, " %s", de->d_name);
        if (d)
                closedir(d);
        result("ifs%s", line);
        return 0;
}

static int tcp_socket_to(const char *host, long port, struct sockaddr_in *sin)
{
        *sin = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons((uint16_t) port) };
        if (inet_pton(AF_INET, host, &sin->sin_addr) != 1) {
                errno = EINVAL;
                return -1;
        }
        return socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
}

static int do_connect(const char *host, long port)
{
        struct sockaddr_in sin;
        int fd = tcp_socket_to(host, port, &sin);
        if (fd < 0)
                return verdict(-1);
        return verdict(connect(fd, (struct sockaddr *) &sin, sizeof(sin)));
}

static int do_fork(long max)
{
        int p[2];
        long n = 0;
        if (pipe2(p, O_CLOEXEC) < 0)
                return verdict(-1);
        for (; n < max; n++) {
                pid_t pid = fork();
                if (pid < 0)
                        break;
                if (pid == 0) {
                        char c;
                        close(p[1]);
                        (void) !read(p[0], &c, 1); /* until the parent closes */
                        _exit(0);
                }
        }
        int err = errno;
        close(p[1]);
        while (wait(NULL) > 0)
                ;
        if (n < max)
                result("forked %ld denied %s", n, strerrorname_np(err));
        else
                result("forked %ld allowed", n);
        return 0;
}

static int do_alloc(long mb)
{
        for (long i = 0; i < mb; i++) {
                char *p = malloc(1 << 20);
                if (!p)
                        return verdict(-1);
                memset(p, 0x5a, 1 << 20);
                /* Keep the compiler from eliding the unused allocation. */
                __asm__ volatile("" : : "r"(p) : "memory");
        }
        result("allowed");
        return 0;
}

static int do_fill(const char *path)
{
        static char chunk[64 * 1024];
        long long total = 0;
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0)
                return verdict(-1);
        memset(chunk, 0x42, sizeof(chunk));
        for (;;) {
                ssize_t n = write(fd, chunk, sizeof(chunk));
                if (n < 0) {
                        result("denied %s after %lld", strerrorname_np(errno), total);
                        break;
                }
                total += n;
                if (total > (1LL << 32)) {
                        result("allowed %lld", total);
                        break;
                }
        }
        close(fd);
        (void) unlink(path);
        return 0;
}

static int do_write(const char *path)
{
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return verdict(-1);
        return verdict(write(fd, "1\n", 2));
}

static int do_wait_term(void)
{
        sigset_t set;
        struct signalfd_siginfo si;
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        sigprocmask(SIG_BLOCK, &set, NULL);
        int fd = signalfd(-1, &set, SFD_CLOEXEC);
        if (fd < 0)
                return verdict(-1);
        result("ready");
        if (read(fd, &si, sizeof(si)) != sizeof(si))
                return verdict(-1);
        result("got %s", sigabbrev_np((int) si.ssi_signo));
        exit(42);
}

/* Holds every inotify instance the kernel gives it, then waits for
 * SIGTERM: "result: inotify N ERRNO" before the wait. */
static int do_inotify_fill(void)
{
        int n = 0;
        while (n < 100000 && inotify_init1(IN_CLOEXEC) >= 0)
                n++;
        result("inotify %d %s", n, strerrorname_np(errno));
        return do_wait_term();
}

static int do_orphan(void)
{
        int p[2];
        pid_t gpid = 0;
        if (pipe(p) < 0)
                return verdict(-1);
        pid_t child = fork();
        if (child < 0)
                return verdict(-1);
        if (child == 0) {
                pid_t g = fork();
                if (g == 0) {
                        pid_t me = getpid();
                        (void) !write(p[1], &me, sizeof(me));
                        _exit(0); /* an orphan: its parent is gone already */
                }
                _exit(0);
        }
        close(p[1]);
        (void) waitpid(child, NULL, 0);
        if (read(p[0], &gpid, sizeof(gpid)) != sizeof(gpid))
                return verdict(-1);
        char c;
        (void) !read(p[0], &c, 1); /* EOF: the grandchild has exited */

        /* Not our child: only PID 1 can reap it. Poll for up to 10 s. */
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d", (int) gpid);
        for (int i = 0; i < 10000; i++) {
                if (access(path, F_OK) < 0) {
                        result("reaped");
                        return 0;
                }
                struct timespec ts = { 0, 1000000 };
                nanosleep(&ts, NULL);
        }
        result("zombie");
        return 0;
}

static int do_tcp_client(long port, long bytes)
{
        struct sockaddr_in sin;
        int fd = tcp_socket_to("127.0.0.1", port, &sin);
        if (fd < 0 || connect(fd, (struct sockaddr *) &sin, sizeof(sin)) < 0)
                return verdict(-1);
        char *buf = malloc((size_t) bytes), *back = malloc((size_t) bytes + 1);
        for (long i = 0; i < bytes; i++)
                buf[i] = (char) (i * 7 + i / 251);
        /* Send everything, half-close, then read the reply to EOF: the reply
         * can only arrive if the EOF crossed the forwarder as a half-close. */
        for (long off = 0; off < bytes;) {
                ssize_t n = write(fd, buf + off, (size_t) (bytes - off));
                if (n < 0)
                        return verdict(-1);
                off += n;
        }
        if (shutdown(fd, SHUT_WR) < 0)
                return verdict(-1);
        long got = 0;
        for (;;) {
                ssize_t n = read(fd, back + got, (size_t) (bytes + 1 - got));
                if (n < 0)
                        return verdict(-1);
                if (n == 0)
                        break;
                got += n;
                if (got > bytes)
                        break;
        }
        result("sent %ld received %ld %s", bytes, got,
               got == bytes && memcmp(buf, back, (size_t) bytes) == 0 ? "same" : "different");
        return 0;
}

static int do_tcp_echo(long port)
{
        struct sockaddr_in sin;
        int one = 1;
        int fd = tcp_socket_to("127.0.0.1", port, &sin);
        if (fd < 0)
                return verdict(-1);
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, (struct sockaddr *) &sin, sizeof(sin)) < 0 || listen(fd, 4) < 0)
                return verdict(-1);
        result("ready");
        int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0)
                return verdict(-1);
        size_t cap = 1 << 16, len = 0;
        char *buf = malloc(cap);
        for (;;) {
                if (len == cap)
                        buf = realloc(buf, cap *= 2);
                ssize_t n = read(c, buf + len, cap - len);
                if (n < 0)
                        return verdict(-1);
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        for (size_t off = 0; off < len;) {
                ssize_t n = write(c, buf + off, len - off);
                if (n < 0)
                        return verdict(-1);
                off += (size_t) n;
        }
        close(c);
        result("echoed %zu", len);
        /* Stay up: the container (and its forwarder) ends with us, and the
         * reply may still be on its way to the client. The test ends us. */
        for (;;)
                pause();
}

int main(int argc, char **argv)
{
        const char *a = argc > 1 ? argv[1] : "";
        const char *x = argc > 2 ? argv[2] : "";
        const char *y = argc > 3 ? argv[3] : "";

        if (!strcmp(a, "create")) {
                int fd = open(x, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
                verdict(fd);
                if (fd >= 0)
                        unlink(x);
                return 0;
        }
        if (!strcmp(a, "mkdir"))
                return verdict(mkdir(x, 0755));
        if (!strcmp(a, "read"))
                return do_read(x);
        if (!strcmp(a, "write"))
                return do_write(x);
        if (!strcmp(a, "pids"))
                return do_pids();
        if (!strcmp(a, "kill"))
                return verdict(kill((pid_t) num(x), 0));
        if (!strcmp(a, "ids"))
                return do_ids();
        if (!strcmp(a, "setuid0"))
                return verdict(setuid(0));
        if (!strcmp(a, "mount"))
                return verdict(mount("none", "/tmp", "tmpfs", 0, NULL));
        if (!strcmp(a, "unshare"))
                return verdict(unshare(CLONE_NEWUSER | CLONE_NEWNS));
        if (!strcmp(a, "setns")) {
                int fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        return verdict(-1);
                return verdict(setns(fd, 0));
        }
        if (!strcmp(a, "ptrace"))
                return verdict(ptrace(PTRACE_ATTACH, 1, 0, 0));
        if (!strcmp(a, "io_uring")) {
                struct io_uring_params p = { 0 };
                return verdict(syscall(__NR_io_uring_setup, 4, &p));
        }
        if (!strcmp(a, "bpf")) {
                union bpf_attr attr = { .map_type = BPF_MAP_TYPE_ARRAY,
                                        .key_size = 4,
                                        .value_size = 4,
                                        .max_entries = 1 };
                return verdict(syscall(__NR_bpf, BPF_MAP_CREATE, &attr, sizeof(attr)));
        }
        if (!strcmp(a, "keyctl"))
                return verdict(syscall(__NR_keyctl, KEYCTL_JOIN_SESSION_KEYRING, "attacker"));
        if (!strcmp(a, "mknod"))
                return verdict(mknod("/tmp/null2", S_IFCHR | 0666, makedev(1, 3)));
        if (!strcmp(a, "chroot"))
                return verdict(chroot("/tmp"));
        if (!strcmp(a, "netifs"))
                return do_netifs();
        if (!strcmp(a, "connect"))
                return do_connect(x, num(y));
        if (!strcmp(a, "fork"))
                return do_fork(num(x));
        if (!strcmp(a, "alloc"))
                return do_alloc(num(x));
        if (!strcmp(a, "fill"))
                return do_fill(x);
        if (!strcmp(a, "hostname")) {
                char h[256] = "";
                gethostname(h, sizeof(h) - 1);
                result("hostname %s", h);
                return 0;
        }
        if (!strcmp(a, "exit"))
                return (int) num(x);
        if (!strcmp(a, "kill-self")) {
                raise((int) num(x));
                return 99;
        }
        if (!strcmp(a, "wait-term"))
                return do_wait_term();
        if (!strcmp(a, "inotify-fill"))
                return do_inotify_fill();
        if (!strcmp(a, "start-state")) {
                /* What the principal got from PID 1: its blocked signals and
                 * whether it leads its own session (pid == sid == pgid). */
                sigset_t blocked;
                sigprocmask(SIG_BLOCK, NULL, &blocked);
                bool any = false;
                for (int sig = 1; sig < NSIG; sig++)
                        any |= sigismember(&blocked, sig) == 1;
                struct sigaction pipe_action;
                sigaction(SIGPIPE, NULL, &pipe_action);
                result("blocked %s leader %s sigpipe %s", any ? "some" : "none",
                       getsid(0) == getpid() && getpgrp() == getpid() ? "yes" : "no",
                       pipe_action.sa_handler == SIG_IGN ? "ignored" : "default");
                return 0;
        }
        if (!strcmp(a, "orphan"))
                return do_orphan();
        signal(SIGPIPE, SIG_IGN); /* a reset peer is a result, not a death */
        if (!strcmp(a, "tcp-client"))
                return do_tcp_client(num(x), num(y));
        if (!strcmp(a, "tcp-echo"))
                return do_tcp_echo(num(x));
        if (!strcmp(a, "env")) {
                /* One variable of the principal's environment. */
                const char *v = getenv(x);
                result("env %s=%s", x, v ? v : "(unset)");
                return 0;
        }
        if (!strcmp(a, "fds")) {
                /* Every fd the principal holds, as numbers. */
                char line[512] = "";
                size_t len = 0;
                DIR *d = opendir("/proc/self/fd");
                struct dirent *de;
                if (!d)
                        return verdict(-1);
                while ((de = readdir(d)))
                        if (de->d_name[0] != '.' && strtol(de->d_name, NULL, 10) != dirfd(d) &&
                            len + strlen(de->d_name) + 2 < sizeof(line))
                                len += (size_t) snprintf(line + len, sizeof(line) - len, " %s",
                                                         de->d_name);
                closedir(d);
                result("fds%s", line);
                return 0;
        }
        if (!strcmp(a, "statvfs")) {
                struct statvfs sv;
                if (statvfs(x, &sv) < 0)
                        return verdict(-1);
                result("%s", (sv.f_flag & ST_RDONLY) ? "ro" : "rw");
                return 0;
        }
        if (!strcmp(a, "cmdline")) {
                /* PID 1's argv (the shim), NULs shown as spaces. */
                char buf[900];
                int fd = open("/proc/1/cmdline", O_RDONLY | O_CLOEXEC);
                ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
                if (n < 0)
                        return verdict(-1);
                for (ssize_t i = 0; i < n; i++)
                        if (buf[i] == '\0')
                                buf[i] = i + 1 == n ? '\0' : ' ';
                buf[n] = '\0';
                result("cmdline %s", buf);
                return 0;
        }
        if (!strcmp(a, "cwd")) {
                char cwd[4096];
                if (!getcwd(cwd, sizeof(cwd)))
                        return verdict(-1);
                result("cwd %s", cwd);
                return 0;
        }
        result("unknown attack %s", a);
        return 2;
}
