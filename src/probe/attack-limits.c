/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The zone's limits hold: forks past pids.max are refused, allocations past
 * memory.max stopped.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/parse-util.h"
#include "base/util.h"
#include "probe/attack-internal.h"

/* Forks `count` children that wait for EOF on a pipe; a refused fork
 * (EAGAIN from pids.max) is the expected outcome. */
void attack_fork_past_pids(const char *arg, struct attack_outcome *o)
{
        unsigned count, made = 0;
        int p[2];
        int err = 0;

        if (parse_uint(arg, 1, 100000, &count) < 0)
                return attack_outcome_set(o, ATTACK_ERROR, "bad count '%s'", arg);
        if (pipe2(p, O_CLOEXEC) < 0)
                return attack_outcome_errno(o, errno, (const int[]){ 0 }, "pipe");
        for (; made < count; made++) {
                pid_t pid = fork();
                if (pid < 0) {
                        err = errno;
                        break;
                }
                if (pid == 0) {
                        char c;
                        (void) close(p[1]);
                        while (read(p[0], &c, 1) < 0 && errno == EINTR)
                                ;
                        _exit(0);
                }
        }
        (void) close(p[1]);
        (void) close(p[0]);
        while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
                ;
        if (made == count)
                return attack_outcome_set(o, ATTACK_ALLOWED, "forked %u processes", made);
        char b[16];
        if (err == EAGAIN)
                return attack_outcome_set(o, ATTACK_DENIED, "fork refused after %u: EAGAIN", made);
        attack_outcome_set(o, ATTACK_ERROR, "fork failed after %u: %s", made,
                           attack_errno_name(err, b));
}

/* Touches `bytes` of anonymous memory, 1 MiB at a time. Being killed (OOM,
 * seen by attack_run) or refused memory is the expected outcome. */
void attack_alloc_past_memory(const char *arg, struct attack_outcome *o)
{
        uint64_t bytes, done = 0;
        const size_t chunk = (size_t) 1024 * 1024;

        if (parse_uint64(arg, 1, UINT64_C(1) << 40, &bytes) < 0)
                return attack_outcome_set(o, ATTACK_ERROR, "bad size '%s'", arg);
        while (done < bytes) {
                void *m = mmap(NULL, chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                               0);
                if (m == MAP_FAILED)
                        return attack_outcome_errno(o, errno, (const int[]){ ENOMEM, 0 }, "mmap");
                memset(m, 0x5a, chunk);
                done += chunk;
        }
        attack_outcome_set(o, ATTACK_ALLOWED, "touched %llu MiB",
                           (unsigned long long) (done / chunk));
}
