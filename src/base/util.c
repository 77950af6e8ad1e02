/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "base/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <unistd.h>

void oom(void)
{
        static const char msg[] = "openenvd: out of memory\n";
        (void) !write(STDERR_FILENO, msg, sizeof(msg) - 1);
        abort();
}

void *xmalloc(size_t n)
{
        void *p = malloc(n ? n : 1);
        if (!p)
                oom();
        return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
        void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
        if (!p)
                oom();
        return p;
}

void *xrealloc(void *p, size_t n)
{
        p = realloc(p, n ? n : 1);
        if (!p)
                oom();
        return p;
}

char *xstrdup(const char *s)
{
        char *p = strdup(s);
        if (!p)
                oom();
        return p;
}

char *xstrndup(const char *s, size_t n)
{
        char *p = strndup(s, n);
        if (!p)
                oom();
        return p;
}

char *xasprintf(const char *fmt, ...)
{
        va_list ap;
        char *p;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&p, fmt, ap);
        va_end(ap);
        if (r < 0)
                oom();
        return p;
}

bool endswith(const char *s, const char *suffix)
{
        size_t a = strlen(s), b = strlen(suffix);
        return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

bool strn_list_has(const char *list, size_t len, char sep, const char *word)
{
        size_t wl = strlen(word);

        for (size_t i = 0; i < len;) {
                size_t n = 0;
                while (i + n < len && list[i + n] != sep)
                        n++;
                if (n == wl && strncmp(list + i, word, n) == 0)
                        return true;
                i += n + 1;
        }
        return false;
}

size_t strv_length(char *const *v)
{
        size_t n = 0;
        if (v)
                while (v[n])
                        n++;
        return n;
}

void strv_push(char ***v, char *s)
{
        size_t n = strv_length(*v);
        char **nv = xrealloc(*v, (n + 2) * sizeof(char *));
        nv[n] = s;
        nv[n + 1] = NULL;
        *v = nv;
}

char **strv_copy(char *const *v)
{
        size_t n = strv_length(v);
        char **c = xcalloc(n + 1, sizeof(char *));
        for (size_t i = 0; i < n; i++)
                c[i] = xstrdup(v[i]);
        return c;
}

bool strv_contains(char *const *v, const char *s)
{
        if (v)
                for (; *v; v++)
                        if (streq(*v, s))
                                return true;
        return false;
}

char *strv_join(char *const *v, const char *sep)
{
        size_t n = 1, sl = strlen(sep);
        char *s, *p;

        for (char *const *e = v; e && *e; e++)
                n += strlen(*e) + (e == v ? 0 : sl);
        p = s = xmalloc(n);
        for (char *const *e = v; e && *e; e++) {
                size_t l = strlen(*e);
                if (e != v) {
                        memcpy(p, sep, sl);
                        p += sl;
                }
                memcpy(p, *e, l);
                p += l;
        }
        *p = '\0';
        return s;
}

void strv_env_set(char ***v, char *kv)
{
        size_t klen = strcspn(kv, "=");

        for (char **e = *v; e && *e; e++)
                if (strncmp(*e, kv, klen) == 0 && ((*e)[klen] == '=' || (*e)[klen] == '\0')) {
                        free(*e);
                        *e = kv;
                        return;
                }
        strv_push(v, kv);
}

bool memeq_consttime(const void *a, size_t alen, const void *b, size_t blen)
{
        const unsigned char *x = a, *y = b;
        unsigned char d = 0;

        /* Length is not secret-dependent in a way that matters here (tokens
         * have fixed public formats), but the bytes are: compare them all. */
        if (alen != blen)
                return false;
        for (size_t i = 0; i < alen; i++)
                d |= x[i] ^ y[i];
        return d == 0;
}

int random_bytes(void *buf, size_t n)
{
        unsigned char *p = buf;
        while (n > 0) {
                ssize_t k = getrandom(p, n, 0);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                p += k;
                n -= (size_t) k;
        }
        return 0;
}

char *secret_free(char *s)
{
        if (s) {
                explicit_bzero(s, strlen(s));
                free(s);
        }
        return NULL;
}

int random_hex(size_t n, char **ret)
{
        static const char hex[] = "0123456789abcdef";
        unsigned char raw[256];
        char *s;
        int r;

        if (n > sizeof(raw))
                return -EINVAL;
        r = random_bytes(raw, n);
        if (r < 0)
                return r;
        s = xmalloc(2 * n + 1);
        for (size_t i = 0; i < n; i++) {
                s[2 * i] = hex[raw[i] >> 4];
                s[2 * i + 1] = hex[raw[i] & 15];
        }
        s[2 * n] = '\0';
        *ret = s;
        return 0;
}
