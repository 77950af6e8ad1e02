/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sandbox/ns-helper.h"

#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/util.h"

/* Under AddressSanitizer a child running on a foreign stack makes ASan
 * report false stack overflows (as in launcher-native.c): sanitizer builds
 * run the helper fork-like, on a copy of our memory. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NS_HELPER_UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define NS_HELPER_UNDER_ASAN 1
#endif

/* fn may clone a container of its own, on its own stack: little is needed
 * here (the launcher's setup runs in that container, not in us). */
#define HELPER_STACK_SIZE ((size_t) 256 * 1024)

/* Shared with the helper whether or not it shares the rest of our memory. */
struct helper_shared {
        int ret;
        /* fn casts it to its own struct */
        _Alignas(max_align_t) unsigned char out[NS_HELPER_OUT_MAX];
};

struct helper_call {
        ns_helper_fn fn;
        void *userdata;
        struct helper_shared *shared;
};

static int helper_main(void *p)
{
        struct helper_call *c = p;
        c->shared->ret = c->fn(c->userdata, c->shared->out);
        return 0;
}

/* Mapped once and kept: the helper runs on the daemon's hot paths. */
static struct helper_shared *shared_page(void)
{
        static struct helper_shared *shared;
        if (!shared) {
                void *p = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
                               MAP_SHARED | MAP_ANONYMOUS, -1, 0);
                if (p == MAP_FAILED)
                        return NULL;
                shared = p;
        }
        return shared;
}

static pid_t helper_start(struct helper_call *call)
{
#ifndef NS_HELPER_UNDER_ASAN
        static void *stack;
        if (!stack) {
                void *p = mmap(NULL, HELPER_STACK_SIZE, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
                if (p == MAP_FAILED)
                        return -errno;
                stack = p;
        }
        /* CLONE_VFORK: we sleep until it has exited, so it may use our
         * memory (and our errno) without racing us. */
        pid_t pid = clone(helper_main, (char *) stack + HELPER_STACK_SIZE,
                          CLONE_VM | CLONE_VFORK | CLONE_FILES | SIGCHLD, call);
        return pid < 0 ? -errno : pid;
#else
        long pid = syscall(SYS_clone, CLONE_VFORK | CLONE_FILES | SIGCHLD, 0, NULL, NULL, 0);
        if (pid == 0) {
                (void) helper_main(call);
                _exit(0);
        }
        return pid < 0 ? -errno : (pid_t) pid;
#endif
}

int ns_helper_run(ns_helper_fn fn, void *userdata, void *out, size_t out_size)
{
        struct helper_shared *shared = shared_page();
        int status;

        if (out_size > NS_HELPER_OUT_MAX)
                return -EINVAL;
        if (!shared)
                return -ENOMEM;
        shared->ret = -ECHILD; /* what a helper that dies says */
        struct helper_call call = { fn, userdata, shared };
        pid_t pid = helper_start(&call);
        if (pid < 0)
                return pid;
        /* Reaped here, before the event loop's SIGCHLD handler sees it. */
        while (waitpid(pid, &status, __WALL) < 0 && errno == EINTR)
                ;
        if (out_size > 0)
                memcpy(out, shared->out, out_size);
        return shared->ret;
}
