/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "base/limits.h"
#include "validate/image-ref.h"

/* Spans, not copies: every check below reads s[0..n). */

static bool is_digit(char c)
{
        return c >= '0' && c <= '9';
}

static bool is_lower_alnum(char c)
{
        return (c >= 'a' && c <= 'z') || is_digit(c);
}

static bool is_alpha(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_alnum(char c)
{
        return is_alpha(c) || is_digit(c);
}

static bool is_hex(char c)
{
        return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool is_word(char c)
{
        return is_alnum(c) || c == '_';
}

/* [a-z0-9]+ ( ( "." | "_" | "__" | "-"+ ) [a-z0-9]+ )* */
static bool path_component_ok(const char *s, size_t n)
{
        size_t i = 0;

        if (n == 0 || !is_lower_alnum(s[0]))
                return false;
        for (;;) {
                while (i < n && is_lower_alnum(s[i]))
                        i++;
                if (i == n)
                        return true;
                if (s[i] == '.')
                        i++;
                else if (s[i] == '_')
                        i += i + 1 < n && s[i + 1] == '_' ? 2 : 1;
                else if (s[i] == '-')
                        while (i < n && s[i] == '-')
                                i++;
                else
                        return false;
                if (i == n || !is_lower_alnum(s[i]))
                        return false;
        }
}

/* path-component ( "/" path-component )* */
static bool path_ok(const char *s, size_t n)
{
        size_t start = 0;

        for (size_t i = 0; i <= n; i++)
                if (i == n || s[i] == '/') {
                        if (!path_component_ok(s + start, i - start))
                                return false;
                        start = i + 1;
                }
        return true;
}

/* [a-zA-Z0-9] | [a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9] */
static bool domain_component_ok(const char *s, size_t n)
{
        if (n == 0 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
                return false;
        for (size_t i = 1; i + 1 < n; i++)
                if (!is_alnum(s[i]) && s[i] != '-')
                        return false;
        return true;
}

/* host [ ":" port ], host a dotted name or a bracketed IPv6 address. */
static bool domain_ok(const char *s, size_t n)
{
        size_t host_len, start = 0;
        const char *colon;

        if (n > 0 && s[0] == '[') {
                const char *close = memchr(s, ']', n);
                if (!close || close == s + 1)
                        return false;
                for (const char *p = s + 1; p < close; p++)
                        if (!is_hex(*p) && *p != ':')
                                return false;
                host_len = (size_t) (close - s) + 1;
        } else {
                colon = memchr(s, ':', n);
                host_len = colon ? (size_t) (colon - s) : n;
                for (size_t i = 0; i <= host_len; i++)
                        if (i == host_len || s[i] == '.') {
                                if (!domain_component_ok(s + start, i - start))
                                        return false;
                                start = i + 1;
                        }
        }
        if (host_len == n)
                return true;
        if (s[host_len] != ':' || host_len + 1 == n)
                return false;
        for (size_t i = host_len + 1; i < n; i++)
                if (!is_digit(s[i]))
                        return false;
        return true;
}

/* [\w][\w.-]{0,127} */
static bool tag_ok(const char *s, size_t n)
{
        if (n == 0 || n > IMAGE_REF_TAG_MAX || !is_word(s[0]))
                return false;
        for (size_t i = 1; i < n; i++)
                if (!is_word(s[i]) && s[i] != '.' && s[i] != '-')
                        return false;
        return true;
}

/* algorithm ":" hex{32,}; algorithm components [A-Za-z][A-Za-z0-9]*
 * separated by one of [-_+.]. */
static bool digest_ok(const char *s, size_t n)
{
        const char *colon = memchr(s, ':', n);
        size_t alg, i;

        if (!colon)
                return false;
        alg = (size_t) (colon - s);
        for (i = 0; i < alg;) {
                if (!is_alpha(s[i]))
                        return false;
                while (i < alg && is_alnum(s[i]))
                        i++;
                if (i == alg)
                        break;
                if (!strchr("-_+.", s[i]) || i + 1 == alg)
                        return false;
                i++;
        }
        if (alg == 0 || n - alg - 1 < 32)
                return false;
        for (i = alg + 1; i < n; i++)
                if (!is_hex(s[i]))
                        return false;
        return true;
}

int image_ref_check(const char *ref, const char **ret_reason)
{
        const char *why = NULL, *at, *slash, *colon;
        size_t n, name_len;

        if (!ref || !*ref)
                why = "empty image reference";
        else if (ref[0] == '-')
                why = "image reference starts with '-' (an option, not an image)";
        else if (strnlen(ref, IMAGE_REF_MAX_BYTES + 1) > IMAGE_REF_MAX_BYTES)
                why = "image reference is longer than IMAGE_REF_MAX_BYTES";
        if (why)
                goto invalid;

        n = strlen(ref);
        at = strchr(ref, '@');
        if (at) {
                if (!digest_ok(at + 1, n - (size_t) (at - ref) - 1)) {
                        why = "digest is not <algorithm>:<at least 32 hex digits>";
                        goto invalid;
                }
                n = (size_t) (at - ref);
        }
        /* A tag follows the last ':' that comes after the last '/'; a ':'
         * before a '/' belongs to the domain's port. */
        slash = memrchr(ref, '/', n);
        colon = memrchr(ref, ':', n);
        name_len = n;
        if (colon && (!slash || colon > slash)) {
                name_len = (size_t) (colon - ref);
                if (!tag_ok(colon + 1, n - name_len - 1)) {
                        why = "tag is not [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}";
                        goto invalid;
                }
        }
        if (name_len == 0) {
                why = "image reference has no name";
                goto invalid;
        }
        if (name_len > IMAGE_REF_NAME_MAX) {
                why = "image name is longer than 255 bytes";
                goto invalid;
        }
        slash = memchr(ref, '/', name_len);
        if (path_ok(ref, name_len) || (slash && domain_ok(ref, (size_t) (slash - ref)) &&
                                       path_ok(slash + 1, name_len - (size_t) (slash - ref) - 1)))
                return 0;
        why = "image name is not [domain[:port]/]path with lowercase path components";
invalid:
        if (ret_reason)
                *ret_reason = why;
        return -EINVAL;
}
