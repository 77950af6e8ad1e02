/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The attacks' common ground: their outcomes, the table of kinds, the
 * context the probe observed at startup, and running one attempt in a
 * forked child, bounded. The attempts themselves are one file per seam
 * (attack-internal.h lists them).
 */
#include "probe/attack.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/macro.h"
#include "base/parse-util.h"
#include "base/string-table.h"
#include "base/time-util.h"
#include "base/util.h"
#include "probe/attack-internal.h"

static const char *const attack_result_table[_ATTACK_RESULT_MAX] = {
        [ATTACK_DENIED] = "denied",
        [ATTACK_ALLOWED] = "allowed",
        [ATTACK_ERROR] = "error",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING_FALLBACK(attack_result, enum attack_result, "error");
DEFINE_STRING_TABLE_LOOKUP_FROM_STRING(attack_result);

static const char *const probe_fault_table[_PROBE_FAULT_MAX] = {
        [PROBE_FAULT_SILENT] = "silent",
        [PROBE_FAULT_PARTIAL] = "partial",
        [PROBE_FAULT_GARBLE] = "garble",
        [PROBE_FAULT_CRASH] = "crash",
};

DEFINE_STRING_TABLE_LOOKUP_FROM_STRING(probe_fault);

const char *attack_errno_name(int err, char buf[static 16])
{
        const char *n;

        if (err < 0)
                err = -err;
        if (err == 0)
                return "0";
        n = strerrorname_np(err);
        if (n)
                return n;
        (void) snprintf(buf, 16, "E%d", err);
        return buf;
}

void attack_outcome_set(struct attack_outcome *o, enum attack_result r, const char *fmt, ...)
{
        va_list ap;
        o->result = r;
        va_start(ap, fmt);
        (void) vsnprintf(o->detail, sizeof(o->detail), fmt, ap);
        va_end(ap);
}

/* A refusal is one of the errnos in `denied` (0-terminated); anything else
 * is not proof of anything and is reported as an error. */
void attack_outcome_errno(struct attack_outcome *o, int err, const int *denied, const char *what)
{
        char buf[16];
        const char *name = attack_errno_name(err, buf);

        for (const int *d = denied; *d; d++)
                if (err == *d) {
                        attack_outcome_set(o, ATTACK_DENIED, "%s: %s", what, name);
                        return;
                }
        attack_outcome_set(o, ATTACK_ERROR, "%s: unexpected %s", what, name);
}

const int attack_deny_access[] = { EACCES, EPERM, ENOENT, ENOTDIR, ELOOP, EROFS, ENXIO, 0 };
const int attack_deny_perm[] = { EPERM, EACCES, 0 };
const int attack_deny_net[] = { ECONNREFUSED, ENETUNREACH, EHOSTUNREACH,  ETIMEDOUT,
                                EACCES,       EPERM,       EADDRNOTAVAIL, 0 };
const int attack_deny_unix[] = { ENOENT, ECONNREFUSED, EACCES, EPERM, ENOTDIR, ELOOP, 0 };

/* Every kind the probe knows, with what it takes: an argument (docs/ENFORCEMENT.md
 * says what each means), nothing, or what the probe saw at startup. */
static const struct attack_kind {
        const char *kind;
        void (*with_arg)(const char *arg, struct attack_outcome *o);
        void (*no_arg)(struct attack_outcome *o);
        void (*with_context)(const struct attack_context *ctx, struct attack_outcome *o);
} kinds[] = {
        { "read", .with_arg = attack_read },
        { "write-dir", .with_arg = attack_write_dir },
        { "write-file", .with_arg = attack_write_file },
        { "mkdir", .with_arg = attack_mkdir },
        { "root-rw", .with_arg = attack_root_rw },
        { "connect-tcp", .with_arg = attack_connect_tcp },
        { "connect-unix", .with_arg = attack_connect_unix },
        { "proc-visible", .no_arg = attack_proc_visible },
        { "kill", .with_arg = attack_kill },
        { "uid", .no_arg = attack_uid },
        { "caps", .no_arg = attack_caps },
        { "mount", .no_arg = attack_mount },
        { "fsopen", .no_arg = attack_fsopen },
        { "umount", .with_arg = attack_umount },
        { "unshare", .with_arg = attack_unshare },
        { "setns", .with_arg = attack_setns },
        { "ptrace-attach", .with_arg = attack_ptrace_attach },
        { "ptrace-traceme", .no_arg = attack_ptrace_traceme },
        { "bpf", .no_arg = attack_bpf },
        { "perf-event", .no_arg = attack_perf_event },
        { "keyctl", .no_arg = attack_keyctl },
        { "io-uring", .no_arg = attack_io_uring },
        { "mknod-char", .with_arg = attack_mknod_char },
        { "find-secret", .with_arg = attack_find_secret },
        { "inherited-fds", .with_context = attack_inherited_fds },
        { "fork-past-pids", .with_arg = attack_fork_past_pids },
        { "alloc-past-memory", .with_arg = attack_alloc_past_memory },
};

static const struct attack_kind *kind_find(const char *kind)
{
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++)
                if (streq(kinds[i].kind, kind))
                        return &kinds[i];
        return NULL;
}

bool attack_kind_known(const char *kind)
{
        return kind_find(kind) != NULL;
}

static void attack_dispatch(const char *k, const char *a, const struct attack_context *ctx,
                            struct attack_outcome *o)
{
        const struct attack_kind *kind = kind_find(k);

        if (!kind)
                attack_outcome_set(o, ATTACK_ERROR, "unknown attack kind '%s'", k);
        else if (kind->with_arg)
                kind->with_arg(a, o);
        else if (kind->no_arg)
                kind->no_arg(o);
        else
                kind->with_context(ctx, o);
}

void attack_context_init(struct attack_context *ret)
{
        struct attack_context c = { .first_inherited = -1 };
        DIR *d = opendir("/proc/self/fd");
        struct dirent *de;

        if (!d) {
                c.first_inherited = -2; /* unknown: attack_inherited_fds reports an error */
                *ret = c;
                return;
        }
        while ((de = readdir(d))) {
                int fd;
                struct stat st;
                if (parse_int(de->d_name, 0, INT32_MAX, &fd) < 0 || fd == dirfd(d))
                        continue;
                if (fd > 2) {
                        c.inherited_fds++;
                        if (c.first_inherited < 0 || fd < c.first_inherited)
                                c.first_inherited = fd;
                } else if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
                        c.dir_fds++;
                }
        }
        closedir(d);
        *ret = c;
}

/*
 * Not base/child-job.h, deliberately: a job's result is complete only at EOF
 * of its pipe, and an attack may leave children holding the pipe's write
 * end (fork-past-pids forks hundreds that live until we reap the attempt).
 * Here the outcome is one fixed-size write, read as soon as it arrives; and
 * the probe, a one-shot static program, has no event loop to run a job on.
 */
int attack_run(const char *kind, const char *arg, const struct attack_context *ctx,
               struct attack_outcome *ret)
{
        struct attack_outcome o = { .result = ATTACK_ERROR };
        int p[2], status = 0;
        char b[16];
        pid_t pid;

        if (pipe2(p, O_CLOEXEC) < 0) {
                int err = errno;
                attack_outcome_set(ret, ATTACK_ERROR, "pipe: %s", attack_errno_name(err, b));
                return -err;
        }
        pid = fork();
        if (pid < 0) {
                int err = errno;
                (void) close(p[0]);
                (void) close(p[1]);
                attack_outcome_set(ret, ATTACK_ERROR, "fork: %s", attack_errno_name(err, b));
                return -err;
        }
        if (pid == 0) {
                (void) close(p[0]);
                attack_dispatch(kind, arg ? arg : "", ctx, &o);
                (void) !write(p[1], &o, sizeof(o));
                _exit(0);
        }
        (void) close(p[1]);

        /* Bounded: a hung attempt is killed and reported, never waited on. */
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + ATTACK_TIMEOUT_USEC;
        ssize_t n = -1;
        bool timed_out = false;
        for (;;) {
                usec_t now = now_usec(CLOCK_MONOTONIC);
                if (now >= deadline) {
                        timed_out = true;
                        break;
                }
                struct pollfd pf = { .fd = p[0], .events = POLLIN };
                int k = poll(&pf, 1, (int) ((deadline - now + 999) / 1000));
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        continue;
                n = read(p[0], &o, sizeof(o));
                if (n < 0 && errno == EINTR)
                        continue;
                break;
        }
        (void) close(p[0]);
        if (timed_out)
                (void) kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;

        if (timed_out) {
                attack_outcome_set(&o, ATTACK_ERROR, "timed out after %llu s",
                                   (unsigned long long) (ATTACK_TIMEOUT_USEC / USEC_PER_SEC));
        } else if (n != (ssize_t) sizeof(o)) {
                if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL &&
                    streq(kind, "alloc-past-memory"))
                        /* The memory cgroup's OOM killer: the limit held. */
                        attack_outcome_set(&o, ATTACK_DENIED, "killed by SIGKILL (out of memory)");
                else if (WIFSIGNALED(status))
                        attack_outcome_set(&o, ATTACK_ERROR, "attempt killed by signal %d",
                                           WTERMSIG(status));
                else
                        attack_outcome_set(&o, ATTACK_ERROR, "attempt reported nothing (exit %d)",
                                           WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        } else {
                o.detail[sizeof(o.detail) - 1] = '\0';
                if ((unsigned) o.result >= _ATTACK_RESULT_MAX)
                        attack_outcome_set(&o, ATTACK_ERROR, "garbled outcome");
        }
        *ret = o;
        return 0;
}
