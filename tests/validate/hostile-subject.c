/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hostile-subject: the entrypoint of the hostile images in test-docker.c. It
 * runs as the subject (uid 65532, no capabilities, no-new-privileges) and
 * goes after the validator's helper, which shares its PID namespace and uid:
 *
 *   hostile-subject trace        ptrace-attach every new process and rewrite
 *                                each "result":"writable" it writes to stdout
 *                                into "result":"denied" (a forged PASS)
 *   hostile-subject stop|kill    SIGSTOP/SIGKILL every new process at once
 *                                (this hits the runtime's init before exec)
 *   hostile-subject stop-helper|kill-helper
 *                                the same, but only once the process runs
 *                                the helper (comm "openenvd-probe")
 *
 * "New" means any process but the engine's init (pid 1) and us. While one
 * is pending (not yet the helper, not yet attachable) /proc is polled in a
 * tight loop: the helper runs for milliseconds. The attacks never stop; the
 * validator removes the container. Static, so the images need nothing else.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_PID      (1 << 22)
#define FORGE_MAX    (16 << 20)
#define HELPER_COMM  "openenvd-probe"
#define WRITABLE_STR "\"result\":\"writable\""
#define DENIED_STR   "\"result\":\"denied\"  " /* same length: JSON allows the spaces */

static unsigned char *done; /* per pid: 1 = ours or already handled */

static int pid_of(const char *name)
{
        char *end;
        long v;

        errno = 0;
        v = strtol(name, &end, 10);
        if (errno || *end || v <= 0 || v >= MAX_PID)
                return -1;
        return (int) v;
}

static bool comm_is(int pid, const char *want)
{
        char path[64], buf[32] = "";
        ssize_t n;
        int fd;

        (void) snprintf(path, sizeof(path), "/proc/%d/comm", pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return false;
        buf[n] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        return strcmp(buf, want) == 0;
}

static void pause_briefly(void)
{
        struct timespec ts = { 0, 200 * 1000 };
        (void) nanosleep(&ts, NULL);
}

/* Calls fn for every pid that is not done; fn says whether it is done now.
 * Returns whether any is still pending (then the caller polls again at
 * once: the helper runs for milliseconds only). */
static bool for_new_pids(bool (*fn)(int pid, void *arg), void *arg)
{
        DIR *d = opendir("/proc");
        struct dirent *de;
        bool pending = false;

        if (!d)
                return false;
        while ((de = readdir(d))) {
                int pid = pid_of(de->d_name);
                if (pid <= 0 || done[pid])
                        continue;
                if (fn(pid, arg))
                        done[pid] = 1;
                else
                        pending = true;
        }
        closedir(d);
        return pending;
}

struct signal_attack {
        int sig;
        bool helper_only;
};

static bool signal_one(int pid, void *arg)
{
        const struct signal_attack *a = arg;

        /* Not yet the helper: the runtime's init about to exec it. */
        if (a->helper_only && !comm_is(pid, HELPER_COMM))
                return false;
        if (kill(pid, a->sig) < 0)
                return errno == ESRCH;
        fprintf(stderr, "hostile-subject: signal %d sent to %d\n", a->sig, pid);
        return true;
}

/* Rewrites the tracee's write(1, buf, len) in place, before the kernel sees
 * it. Through /proc/<pid>/mem: Docker's seccomp profile refuses
 * process_vm_readv/writev, but a tracer may open the tracee's memory. */
static void forge(int pid, uint64_t addr, uint64_t len)
{
        static char buf[FORGE_MAX];
        size_t wl = strlen(WRITABLE_STR);
        bool changed = false;
        char path[64];
        int fd;

        if (len == 0 || len > FORGE_MAX)
                return;
        (void) snprintf(path, sizeof(path), "/proc/%d/mem", pid);
        fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd < 0)
                return;
        if (pread(fd, buf, len, (off_t) addr) == (ssize_t) len) {
                for (char *p = buf; (p = memmem(p, len - (size_t) (p - buf), WRITABLE_STR, wl));
                     p += wl) {
                        memcpy(p, DENIED_STR, wl);
                        changed = true;
                }
                if (changed && pwrite(fd, buf, len, (off_t) addr) == (ssize_t) len)
                        fprintf(stderr, "hostile-subject: forged the output of %d\n", pid);
        }
        close(fd);
}

/* Follows one tracee's system calls until it exits. */
static void trace_until_exit(int pid)
{
        for (;;) {
                struct __ptrace_syscall_info info;
                int st, sig = 0;

                if (waitpid(pid, &st, __WALL) < 0 || WIFEXITED(st) || WIFSIGNALED(st))
                        return;
                if (!WIFSTOPPED(st))
                        continue;
                if (WSTOPSIG(st) == (SIGTRAP | 0x80)) {
                        long n = ptrace(PTRACE_GET_SYSCALL_INFO, pid, (void *) sizeof(info), &info);
                        if (n > 0 && info.op == PTRACE_SYSCALL_INFO_ENTRY &&
                            info.entry.nr == SYS_write && info.entry.args[0] == 1)
                                forge(pid, info.entry.args[1], info.entry.args[2]);
                } else if ((st >> 16) == 0)
                        sig = WSTOPSIG(st); /* a real signal: deliver it */
                if (ptrace(PTRACE_SYSCALL, pid, NULL, (void *) (uintptr_t) sig) < 0 &&
                    errno == ESRCH)
                        return;
        }
}

static bool trace_one(int pid, void *arg)
{
        (void) arg;
        /* Refused (EPERM) while the process is not dumpable: try again,
         * it may exec something dumpable. */
        if (ptrace(PTRACE_SEIZE, pid, NULL, (void *) PTRACE_O_TRACESYSGOOD) < 0)
                return errno == ESRCH;
        fprintf(stderr, "hostile-subject: attached to %d\n", pid);
        if (ptrace(PTRACE_INTERRUPT, pid, NULL, NULL) == 0)
                trace_until_exit(pid);
        return true;
}

int main(int argc, char **argv)
{
        struct signal_attack sa = {};
        bool (*fn)(int, void *) = NULL;
        void *arg = NULL;

        done = calloc(MAX_PID, 1);
        if (!done || argc != 2)
                return 2;
        if (strcmp(argv[1], "trace") == 0)
                fn = trace_one;
        else {
                sa.sig = strncmp(argv[1], "stop", 4) == 0 ? SIGSTOP : SIGKILL;
                sa.helper_only = strstr(argv[1], "-helper") != NULL;
                if (strcmp(argv[1], "stop") && strcmp(argv[1], "kill") &&
                    strcmp(argv[1], "stop-helper") && strcmp(argv[1], "kill-helper"))
                        return 2;
                fn = signal_one;
                arg = &sa;
        }
        /* The subject's PID namespace holds the engine's init (1) and us;
         * anything else came from outside, whenever it came. */
        done[1] = 1;
        done[getpid()] = 1;
        for (;;)
                if (!for_new_pids(fn, arg))
                        pause_briefly();
}
