/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Other processes cannot be seen, signalled or traced; the principal is not
 * root and holds no capability.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/parse-util.h"
#include "base/util.h"
#include "probe/attack-internal.h"
#include "probe/proc-status.h"

/* Every pid in /proc that is not the container's init (the shim), our
 * parent (the probe) or ourselves belongs to someone else. */
void attack_proc_visible(struct attack_outcome *o)
{
        DIR *d = opendir("/proc");
        unsigned foreign = 0, seen = 0;
        int first = 0;
        pid_t self = getpid(), parent = getppid();
        struct dirent *de;

        if (!d)
                return attack_outcome_errno(o, errno, (const int[]){ 0 }, "opendir /proc");
        while ((de = readdir(d))) {
                int pid;
                if (parse_int(de->d_name, 1, INT32_MAX, &pid) < 0)
                        continue;
                seen++;
                if (pid == 1 || pid == self || pid == parent)
                        continue;
                if (!first)
                        first = pid;
                foreign++;
        }
        closedir(d);
        if (seen == 0)
                return attack_outcome_set(o, ATTACK_ERROR, "/proc lists no process at all");
        if (foreign > 0)
                return attack_outcome_set(o, ATTACK_ALLOWED,
                                          "%u foreign processes visible (pid %d)", foreign, first);
        attack_outcome_set(o, ATTACK_DENIED, "only the container's own %u processes", seen);
}

void attack_kill(const char *arg, struct attack_outcome *o)
{
        int pid;
        if (parse_int(arg, 1, INT32_MAX, &pid) < 0)
                return attack_outcome_set(o, ATTACK_ERROR, "bad pid '%s'", arg);
        /* Signal 0: existence and permission checks only, nothing is sent. */
        if (kill(pid, 0) < 0)
                return attack_outcome_errno(o, errno, (const int[]){ ESRCH, EPERM, 0 }, "kill");
        attack_outcome_set(o, ATTACK_ALLOWED, "pid %d can be signalled", pid);
}

void attack_uid(struct attack_outcome *o)
{
        uid_t u[3];
        gid_t g[3];

        if (getresuid(&u[0], &u[1], &u[2]) < 0 || getresgid(&g[0], &g[1], &g[2]) < 0)
                return attack_outcome_errno(o, errno, (const int[]){ 0 }, "getresuid");
        for (int i = 0; i < 3; i++)
                if (u[i] == 0 || g[i] == 0)
                        return attack_outcome_set(o, ATTACK_ALLOWED,
                                                  "runs as uid %u/%u/%u gid %u/%u/%u", u[0], u[1],
                                                  u[2], g[0], g[1], g[2]);
        attack_outcome_set(o, ATTACK_DENIED, "uid %u gid %u", u[0], g[0]);
}

void attack_caps(struct attack_outcome *o)
{
        cleanup_free char *text = NULL;
        struct proc_status st;
        size_t len;
        int r;

        r = read_full_file_at(AT_FDCWD, "/proc/self/status", (size_t) PROC_STATUS_MAX_BYTES, &text,
                              &len);
        if (r < 0)
                return attack_outcome_errno(o, -r, (const int[]){ 0 }, "/proc/self/status");
        r = proc_status_parse(text, len, &st);
        if (r < 0)
                return attack_outcome_errno(o, -r, (const int[]){ 0 }, "/proc/self/status");
        for (int i = 0; i < _PROC_CAP_MAX; i++) {
                /* Unknown is never "no capabilities". */
                if (!st.has_caps[i])
                        return attack_outcome_set(o, ATTACK_ERROR, "%s unknown",
                                                  proc_cap_set_to_string((enum proc_cap_set) i));
                if (st.caps[i] != 0)
                        return attack_outcome_set(o, ATTACK_ALLOWED, "%s=%016llx",
                                                  proc_cap_set_to_string((enum proc_cap_set) i),
                                                  (unsigned long long) st.caps[i]);
        }
        attack_outcome_set(o, ATTACK_DENIED, "every capability set is empty");
}

void attack_ptrace_attach(const char *arg, struct attack_outcome *o)
{
        int pid;
        if (parse_int(arg, 1, INT32_MAX, &pid) < 0)
                return attack_outcome_set(o, ATTACK_ERROR, "bad pid '%s'", arg);
        /* SEIZE, not ATTACH: same permission check (ptrace_may_access with
         * PTRACE_MODE_ATTACH_REALCREDS) but no SIGSTOP, and our exit detaches,
         * so a success leaves the target running untouched. */
        if (ptrace(PTRACE_SEIZE, pid, NULL, NULL) < 0)
                return attack_outcome_errno(o, errno, (const int[]){ EPERM, EACCES, ESRCH, 0 },
                                            "PTRACE_SEIZE");
        attack_outcome_set(o, ATTACK_ALLOWED, "attached to pid %d", pid);
}

void attack_ptrace_traceme(struct attack_outcome *o)
{
        if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
                return attack_outcome_errno(o, errno, attack_deny_perm, "PTRACE_TRACEME");
        attack_outcome_set(o, ATTACK_ALLOWED, "PTRACE_TRACEME succeeded");
}
