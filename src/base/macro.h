/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Small language helpers used everywhere: ownership (cleanup attributes and
 * TAKE_*), array sizes, branch hints. Nothing here allocates.
 *
 * Ownership idiom (systemd's): every owned local is declared with a cleanup
 * attribute; handing ownership on is spelled TAKE_PTR()/TAKE_FD(), which reads
 * the value and leaves NULL/-EBADF behind so the cleanup does nothing.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#define ELEMENTSOF(x)    (sizeof(x) / sizeof((x)[0]))
#define likely(x)        __builtin_expect(!!(x), 1)
#define unlikely(x)      __builtin_expect(!!(x), 0)
#define maybe_unused     __attribute__((unused))
#define noreturn_fn      __attribute__((noreturn))
#define printf_fmt(a, b) __attribute__((format(printf, a, b)))
#define must_check       __attribute__((warn_unused_result))

#define MIN(a, b)        ((a) < (b) ? (a) : (b))
#define MAX(a, b)        ((a) > (b) ? (a) : (b))

#define TAKE_PTR(p)                            \
        ({                                     \
                __typeof__(p) take_tmp_ = (p); \
                (p) = NULL;                    \
                take_tmp_;                     \
        })

#define TAKE_FD(fd)                      \
        ({                               \
                int take_fd_tmp_ = (fd); \
                (fd) = -EBADF;           \
                take_fd_tmp_;            \
        })

/* Destructors accept NULL / -EBADF and return the "empty" value. */
static inline void *mfree(void *p)
{
        free(p);
        return NULL;
}

static inline int safe_close(int fd)
{
        if (fd >= 0) {
                int saved = errno;
                /* close() may fail with EINTR but the fd is gone anyway on
                 * Linux; never retry (see close(2), "Dealing with error
                 * returns from close()"). */
                (void) close(fd);
                errno = saved;
        }
        return -EBADF;
}

static inline void freep(void *p)
{
        free(*(void **) p);
}

static inline void closep(int *fd)
{
        safe_close(*fd);
}

/* Frees a NULL-terminated vector of strings and the vector. */
static inline char **strv_free(char **v)
{
        if (v)
                for (char **i = v; *i; i++)
                        free(*i);
        free(v);
        return NULL;
}

static inline void strv_freep(char ***v)
{
        strv_free(*v);
}

/* NOLINTNEXTLINE(bugprone-macro-parentheses): an attribute argument */
#define cleanup(f)    __attribute__((cleanup(f)))
#define cleanup_free  cleanup(freep)
#define cleanup_close cleanup(closep)
#define cleanup_strv  cleanup(strv_freep)

/* Declares name##p() for a destructor "T *name(T *)". */
/* `type` is a type name, it cannot be parenthesised. */
/* NOLINTBEGIN(bugprone-macro-parentheses) */
#define DEFINE_CLEANUP_FUNC(type, func)      \
        static inline void func##p(type **p) \
        {                                    \
                if (*p)                      \
                        *p = func(*p);       \
        }
/* NOLINTEND(bugprone-macro-parentheses) */

/* Negative errno from a libc call that sets errno; never returns 0. */
static inline int negative_errno(void)
{
        return errno > 0 ? -errno : -EIO;
}
