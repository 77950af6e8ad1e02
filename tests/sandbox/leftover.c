/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * leftover: the principal of the network-namespace tests (test-netns-keep.c).
 * Episode N runs "leave" and tries to leave something behind in every place a
 * container can write; episode N+1 runs "look" in the namespace made for it
 * (and the control in N's) and reports what of it it can see or reach. One
 * "result: ..." line each. Statically linked: it is bind-mounted in.
 *
 *   leftover leave [hold]   state everywhere; with hold, print "ready" and
 *                           keep it all until SIGTERM (the control)
 *   leftover look           what of it is visible
 *   leftover tables         the namespace's TCP and UDP hash table sizes
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/keyctl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#define PORT     7070
#define SYSV_KEY 0x0e0e0e
#define ABSTRACT "oe-leftover"
#define KEY_DESC "oe-leftover"

static char line[2048];
static size_t len;

static void add(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void add(const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(line + len, sizeof(line) - len, fmt, ap);
        va_end(ap);
        if (n > 0 && (size_t) n < sizeof(line) - len)
                len += (size_t) n;
}

static const char *err(long r)
{
        return r >= 0 ? "ok" : strerrorname_np(errno);
}

static socklen_t abstract_addr(struct sockaddr_un *sun)
{
        *sun = (struct sockaddr_un){ .sun_family = AF_UNIX };
        memcpy(sun->sun_path + 1, ABSTRACT, strlen(ABSTRACT));
        return (socklen_t) (offsetof(struct sockaddr_un, sun_path) + 1 + strlen(ABSTRACT));
}

static struct sockaddr_in loopback(uint16_t port)
{
        struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
        sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        return sin;
}

/* Entries of a /proc/net table (lines after the header). */
static int table_entries(const char *path)
{
        FILE *f = fopen(path, "re");
        char buf[512];
        int n = -1;
        if (!f)
                return -1;
        while (fgets(buf, sizeof(buf), f))
                n++;
        fclose(f);
        return n;
}

/* Entries of /dev/pts besides ptmx: this container's pseudo-terminals. */
static int pty_count(void)
{
        int ptys = 0;
        DIR *d = opendir("/dev/pts");
        struct dirent *de;
        if (!d)
                return -1;
        while ((de = readdir(d)))
                if (de->d_name[0] != '.' && strcmp(de->d_name, "ptmx"))
                        ptys++;
        closedir(d);
        return ptys;
}

static int do_leave(bool hold)
{
        struct sockaddr_un sun;
        socklen_t sl = abstract_addr(&sun);

        /* An abstract unix listener: lives in the network namespace. */
        int u = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        long r = u < 0 ? -1 : bind(u, (struct sockaddr *) &sun, sl);
        if (r >= 0)
                r = listen(u, 4);
        add("abstract=%s", err(r));

        /* A TCP listener, and a connection to it that the client closes
         * first: in a namespace that keeps TIME_WAIT, that socket stays. */
        struct sockaddr_in sin = loopback(PORT);
        int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        r = l < 0 ? -1 : bind(l, (struct sockaddr *) &sin, sizeof(sin));
        if (r >= 0)
                r = listen(l, 4);
        add(" listen=%s", err(r));
        int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        r = c < 0 ? -1 : connect(c, (struct sockaddr *) &sin, sizeof(sin));
        int a = r < 0 ? -1 : accept4(l, NULL, NULL, SOCK_CLOEXEC);
        add(" connect=%s", err(a));
        if (!hold) {
                close(c);
                usleep(1000);
                close(a);
        }

        /* A pseudo-terminal: /dev/pts/0 in this container's devpts. */
        int pt = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        add(" pty=%s ptys=%d", err(pt < 0 || grantpt(pt) < 0 || unlockpt(pt) < 0 ? -1 : 0),
            pty_count());

        /* Files in the two writable scratch places. */
        int f1 = open("/tmp/oe-leftover", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        int f2 = open("/dev/shm/oe-leftover", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        add(" tmp=%s shm=%s", err(f1), err(f2));

        /* SysV shared memory (the IPC namespace) and a key (keyrings). */
        add(" sysv=%s", err(shmget(SYSV_KEY, 4096, IPC_CREAT | 0600)));
        add(" add_key=%s",
            err(syscall(SYS_add_key, "user", KEY_DESC, "x", 1, KEY_SPEC_USER_KEYRING)));
        /* A sysctl of the namespace (it is not ours to change). */
        int s = open("/proc/sys/net/ipv4/ip_local_port_range", O_WRONLY | O_CLOEXEC);
        add(" sysctl=%s", err(s < 0 ? -1 : write(s, "2000 3000", 9)));

        /* A process that outlives the principal, in its own session. */
        pid_t p = fork();
        if (p == 0) {
                setsid();
                if (fork() == 0) {
                        for (;;)
                                pause();
                }
                _exit(0);
        }
        add(" survivor=%s", err(p));

        if (hold) {
                sigset_t set;
                struct signalfd_siginfo si;
                sigemptyset(&set);
                sigaddset(&set, SIGTERM);
                sigprocmask(SIG_BLOCK, &set, NULL);
                int fd = signalfd(-1, &set, SFD_CLOEXEC);
                printf("result: ready %s\n", line);
                fflush(stdout);
                if (fd >= 0)
                        (void) !read(fd, &si, sizeof(si));
                return 0;
        }
        printf("result: %s\n", line);
        return 0;
}

static int do_look(void)
{
        struct sockaddr_un sun;
        socklen_t sl = abstract_addr(&sun);

        int u = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        add("abstract=%s", err(u < 0 ? -1 : connect(u, (struct sockaddr *) &sun, sl)));

        /* No SO_REUSEADDR: a TIME_WAIT or listening socket on the port
         * makes this EADDRINUSE. */
        struct sockaddr_in sin = loopback(PORT);
        int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        add(" bind=%s", err(l < 0 ? -1 : bind(l, (struct sockaddr *) &sin, sizeof(sin))));
        if (l >= 0)
                close(l);
        /* A low port: ip_unprivileged_port_start is 0 here as in a fresh one. */
        sin = loopback(80);
        l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        add(" bind80=%s", err(l < 0 ? -1 : bind(l, (struct sockaddr *) &sin, sizeof(sin))));
        if (l >= 0)
                close(l);
        if (u >= 0)
                close(u);
        add(" tcp=%d tcp6=%d udp=%d unix=%d", table_entries("/proc/net/tcp"),
            table_entries("/proc/net/tcp6"), table_entries("/proc/net/udp"),
            table_entries("/proc/net/unix"));

        /* /dev is a clone of one template shared by every container: its
         * devpts must be this container's own (only ptmx in it). */
        add(" ptys=%d", pty_count());

        struct stat st;
        add(" tmp=%s", err(stat("/tmp/oe-leftover", &st)));
        add(" shm=%s", err(stat("/dev/shm/oe-leftover", &st)));
        add(" sysv=%s", err(shmget(SYSV_KEY, 0, 0)));
        add(" key=%s",
            err(syscall(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, "user", KEY_DESC, 0)));

        char range[64] = "";
        int s = open("/proc/sys/net/ipv4/ip_local_port_range", O_RDONLY | O_CLOEXEC);
        ssize_t n = s < 0 ? -1 : read(s, range, sizeof(range) - 1);
        range[n > 0 ? n : 0] = '\0';
        range[strcspn(range, "\n")] = '\0';
        for (char *p = range; *p; p++)
                if (*p == '\t')
                        *p = ' ';
        add(" port_range=%s", range);

        /* Every process of this container: the shim (1) and us (2). */
        add(" pids=");
        for (int pid = 1; pid < 64; pid++) {
                char path[32];
                snprintf(path, sizeof(path), "/proc/%d", pid);
                if (access(path, F_OK) == 0)
                        add("%s%d", line[len - 1] == '=' ? "" : ",", pid);
        }
        printf("result: %s\n", line);
        return 0;
}

/* The first line of a /proc/sys file, or its errno's name. */
static void add_sysctl(const char *name, const char *path)
{
        char v[32] = "";
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? -1 : read(fd, v, sizeof(v) - 1);
        if (n < 0) {
                add(" %s=%s", name, err(-1));
        } else {
                v[n] = '\0';
                v[strcspn(v, "\n")] = '\0';
                add(" %s=%s", name, v);
        }
        if (fd >= 0)
                close(fd);
}

/* Whose TCP and UDP hash tables the namespace uses: a negative count is
 * the host's (shared by every namespace without its own). */
static int do_tables(void)
{
        add("tables");
        add_sysctl("tcp_ehash", "/proc/sys/net/ipv4/tcp_ehash_entries");
        add_sysctl("udp_hash", "/proc/sys/net/ipv4/udp_hash_entries");
        printf("result: %s\n", line);
        return 0;
}

int main(int argc, char **argv)
{
        if (argc == 2 && !strcmp(argv[1], "tables"))
                return do_tables();
        if (argc >= 2 && !strcmp(argv[1], "leave"))
                return do_leave(argc >= 3 && !strcmp(argv[2], "hold"));
        if (argc == 2 && !strcmp(argv[1], "look"))
                return do_look();
        printf("result: usage\n");
        return 2;
}
