/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * String and memory helpers. The x*() allocators abort on out-of-memory (see
 * strbuf.h for why); they are for small, bounded allocations only.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/macro.h"

noreturn_fn void oom(void);
void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) printf_fmt(1, 2);

static inline bool streq(const char *a, const char *b)
{
        return strcmp(a, b) == 0;
}
static inline bool streq_ptr(const char *a, const char *b)
{
        return (!a && !b) || (a && b && streq(a, b));
}
/* Returns the rest of s after prefix, or NULL. */
static inline const char *startswith(const char *s, const char *prefix)
{
        size_t n = strlen(prefix);
        return strncmp(s, prefix, n) == 0 ? s + n : NULL;
}
bool endswith(const char *s, const char *suffix);
/* True if the first len bytes of list, split at sep ("rw,nosuid" at ','),
 * hold exactly word: mount options, cgroup controller lists. */
bool strn_list_has(const char *list, size_t len, char sep, const char *word);

/* NULL-terminated string vectors (owned strings). */
size_t strv_length(char *const *v);
void strv_push(char ***v, char *s); /* takes ownership of s */
char **strv_copy(char *const *v);
bool strv_contains(char *const *v, const char *s);
/* The strings joined by sep: a new string ("" for an empty vector). */
char *strv_join(char *const *v, const char *sep);
/* Environment vectors ("KEY=VALUE"): sets kv (taking ownership), replacing
 * an entry with the same key in place. getenv() and Python's os.environ
 * take the *first* of duplicate keys, so "later wins" needs replacing. */
void strv_env_set(char ***v, char *kv);

/* Constant-time comparison for secrets (tokens, keys). */
bool memeq_consttime(const void *a, size_t alen, const void *b, size_t blen);
/* Wipes and frees a secret string; returns NULL. */
char *secret_free(char *s);

/* Fills buf with n random bytes from getrandom(); -errno. */
int random_bytes(void *buf, size_t n);
/* Lowercase hex of n random bytes into a new string. */
int random_hex(size_t n, char **ret);
