/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The typed values of openenv.yaml: mappings with known keys, strings,
 * numbers in range, enums, container paths, names and host paths, each read
 * off the positioned YAML tree (manifest-node.c) and reported at its node.
 * The bottom of the typed pass: its error sink (ctx_error) and key paths are
 * here too, so every file above calls down (manifest-internal.h).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fd-util.h"
#include "base/limits.h"
#include "base/parse-util.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "manifest/manifest-internal.h"

/* ---- errors and paths ---- */

void ctx_error(struct manifest_ctx *x, const struct mnode *at, const char *path, const char *fmt,
               ...)
{
        struct strbuf sb = STRBUF_INIT;
        unsigned line = 1, column = 1;
        va_list ap;

        /* Defaulted things have no node: point at the document (1:1 or the root). */
        if (at) {
                line = at->line;
                column = at->column;
        } else if (x->root) {
                line = x->root->line;
                column = x->root->column;
        }
        va_start(ap, fmt);
        strbuf_vaddf(&sb, fmt, ap);
        va_end(ap);
        manifest_errors_add(x->errors, line, column, path, "%s", sb.buf);
        strbuf_release(&sb);
}

char *mpath_key(const char *path, const char *key)
{
        return path[0] ? xasprintf("%s.%s", path, key) : xstrdup(key);
}

char *mpath_index(const char *path, size_t i)
{
        return xasprintf("%s[%zu]", path, i);
}

/* ---- generic shape checks ---- */

/*
 * Checks that n is a mapping (NULL or a YAML null counts as an empty one) and
 * records where each known key is. Unknown keys are errors unless
 * allow_unknown; a known key given twice is an error naming both positions.
 * Cost is O(keys * known), so a hostile map with many keys stays linear.
 */
bool mnode_fields(struct manifest_ctx *x, const struct mnode *n, const char *path,
                  const char *const *known, size_t n_known, bool allow_unknown,
                  const struct mnode **keys, const struct mnode **vals)
{
        for (size_t k = 0; k < n_known; k++)
                keys[k] = vals[k] = NULL;
        if (!n || mnode_is_null(n))
                return true;
        if (n->kind != MNODE_MAP) {
                ctx_error(x, n, path, "expected a mapping");
                return false;
        }
        for (size_t i = 0; i < mnode_map_size(n); i++) {
                const struct mnode *key = mnode_key(n, i);
                size_t k;

                for (k = 0; k < n_known; k++)
                        if (streq(key->value, known[k]))
                                break;
                if (k == n_known) {
                        if (!allow_unknown) {
                                struct strbuf allowed = STRBUF_INIT;
                                for (size_t j = 0; j < n_known; j++)
                                        strbuf_addf(&allowed, "%s%s", j ? ", " : "", known[j]);
                                ctx_error(x, key, path, "unknown key '%s' (allowed: %s)",
                                          key->value, allowed.buf);
                                strbuf_release(&allowed);
                        }
                        continue;
                }
                if (keys[k]) {
                        /* Paths are relative to the openenvd block. */
                        cleanup_free char *p =
                                mpath_key(streq(path, "openenvd") ? "" : path, key->value);
                        ctx_error(x, key, p, "duplicate key '%s' (first at %u:%u)", key->value,
                                  keys[k]->line, keys[k]->column);
                        continue;
                }
                keys[k] = key;
                vals[k] = mnode_value(n, i);
        }
        return true;
}

/* A mapping whose keys are names the author chose: bounded, no duplicates.
 * Returns false (error added) if it is not a usable mapping. */
bool mnode_user_map(struct manifest_ctx *x, const struct mnode *n, const char *path, size_t max,
                    const char *what)
{
        if (mnode_is_null(n))
                return true;
        if (n->kind != MNODE_MAP) {
                ctx_error(x, n, path, "expected a mapping of %s", what);
                return false;
        }
        if (mnode_map_size(n) > max) {
                ctx_error(x, n, path, "too many %s (%zu, at most %zu)", what, mnode_map_size(n),
                          max);
                return false;
        }
        /* O(n^2) is fine: n <= max, and max is small. */
        for (size_t i = 1; i < mnode_map_size(n); i++)
                for (size_t j = 0; j < i; j++)
                        if (streq(mnode_key(n, i)->value, mnode_key(n, j)->value)) {
                                cleanup_free char *p = mpath_key(path, mnode_key(n, i)->value);
                                ctx_error(x, mnode_key(n, i), p,
                                          "duplicate key '%s' (first at %u:%u)",
                                          mnode_key(n, i)->value, mnode_key(n, j)->line,
                                          mnode_key(n, j)->column);
                                break;
                        }
        return true;
}

bool mnode_get_string(struct manifest_ctx *x, const struct mnode *n, const char *path,
                      const char **ret)
{
        if (n->kind != MNODE_SCALAR || mnode_is_null(n)) {
                ctx_error(x, n, path, "expected a string");
                return false;
        }
        *ret = n->value;
        return true;
}

bool mnode_get_uint(struct manifest_ctx *x, const struct mnode *n, const char *path, uint64_t min,
                    uint64_t max, uint64_t *ret)
{
        if (n->kind != MNODE_SCALAR || !n->plain || parse_uint64(n->value, min, max, ret) < 0) {
                ctx_error(x, n, path, "expected an integer in %llu..%llu%s%s%s",
                          (unsigned long long) min, (unsigned long long) max,
                          n->kind != MNODE_SCALAR ? ""
                          : n->plain              ? ", got '"
                                                  : ", got the quoted string '",
                          n->kind == MNODE_SCALAR ? n->value : "",
                          n->kind == MNODE_SCALAR ? "'" : "");
                return false;
        }
        return true;
}

/* YAML 1.2 core schema booleans, plain (unquoted) only. */
bool mnode_as_bool(const struct mnode *n, bool *ret)
{
        static const char *const yes[] = { "true", "True", "TRUE" }, *const no[] = { "false",
                                                                                     "False",
                                                                                     "FALSE" };

        if (n->kind != MNODE_SCALAR || !n->plain)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(yes); i++)
                if (streq(n->value, yes[i]) || streq(n->value, no[i])) {
                        *ret = streq(n->value, yes[i]);
                        return true;
                }
        return false;
}

bool mnode_get_bool(struct manifest_ctx *x, const struct mnode *n, const char *path, bool *ret)
{
        if (mnode_as_bool(n, ret))
                return true;
        ctx_error(x, n, path, "expected true or false%s%s%s",
                  n->kind == MNODE_SCALAR ? ", got '" : "", n->kind == MNODE_SCALAR ? n->value : "",
                  n->kind == MNODE_SCALAR ? "'" : "");
        return false;
}

bool mnode_get_port(struct manifest_ctx *x, const struct mnode *n, const char *path, uint16_t *ret)
{
        uint64_t v;

        if (!mnode_get_uint(x, n, path, 1, 65535, &v))
                return false;
        *ret = (uint16_t) v;
        return true;
}

/* Positive, finite, at most max. */
bool mnode_get_positive_double(struct manifest_ctx *x, const struct mnode *n, const char *path,
                               double max, double *ret)
{
        double v;

        if (n->kind != MNODE_SCALAR || !n->plain || parse_double(n->value, 0, max, &v) < 0 ||
            !(v > 0)) {
                ctx_error(x, n, path, "expected a number greater than 0 and at most %g%s%s%s", max,
                          n->kind != MNODE_SCALAR ? ""
                          : n->plain              ? ", got '"
                                                  : ", got the quoted string '",
                          n->kind == MNODE_SCALAR ? n->value : "",
                          n->kind == MNODE_SCALAR ? "'" : "");
                return false;
        }
        *ret = v;
        return true;
}

bool mnode_get_enum(struct manifest_ctx *x, const struct mnode *n, const char *path,
                    const char *what, const char *const *names, size_t n_names, unsigned *ret)
{
        const char *s;
        struct strbuf allowed = STRBUF_INIT;

        if (!mnode_get_string(x, n, path, &s))
                return false;
        for (size_t i = 0; i < n_names; i++)
                if (streq(s, names[i])) {
                        *ret = (unsigned) i;
                        return true;
                }
        for (size_t i = 0; i < n_names; i++)
                strbuf_addf(&allowed, "%s%s", i ? ", " : "", names[i]);
        ctx_error(x, n, path, "unknown %s '%s' (expected one of: %s)", what, s, allowed.buf);
        strbuf_release(&allowed);
        return false;
}

/* A path inside a container: absolute, no "..", no empty or "." tricks that
 * would make two spellings of one directory look different. */
bool mnode_get_container_path(struct manifest_ctx *x, const struct mnode *n, const char *path,
                              const char *what, char **ret)
{
        const char *s;

        if (!mnode_get_string(x, n, path, &s))
                return false;
        if (s[0] != '/') {
                ctx_error(x, n, path, "%s must be an absolute path, got '%s'", what, s);
                return false;
        }
        for (const char *p = s; *p;) {
                size_t l;
                while (*p == '/')
                        p++;
                l = strcspn(p, "/");
                if ((l == 2 && p[0] == '.' && p[1] == '.') || (l == 1 && p[0] == '.')) {
                        ctx_error(x, n, path,
                                  "%s must not contain '.' or '..' components, got '%s'", what, s);
                        return false;
                }
                p += l;
        }
        *ret = xstrdup(s);
        return true;
}

bool manifest_is_dns_label(const char *s)
{
        size_t l = strlen(s);

        if (l == 0 || l > MANIFEST_NAME_MAX || s[0] == '-' || s[l - 1] == '-')
                return false;
        for (size_t i = 0; i < l; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
                        return false;
        return true;
}

bool manifest_is_hostname(const char *s)
{
        size_t l = strlen(s);

        if (l == 0 || l > 253)
                return false;
        for (const char *p = s;;) {
                size_t n = strcspn(p, ".");
                if (n == 0 || n > 63 || p[0] == '-' || p[n - 1] == '-')
                        return false;
                for (size_t i = 0; i < n; i++) {
                        char c = p[i];
                        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                              (c >= '0' && c <= '9') || c == '-'))
                                return false;
                }
                if (!p[n])
                        return true;
                p += n + 1;
        }
}

bool manifest_is_env_name(const char *s)
{
        if (!((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
                return false;
        for (const char *p = s + 1; *p; p++)
                if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
                      (*p >= '0' && *p <= '9') || *p == '_'))
                        return false;
        return true;
}

bool manifest_is_asset_name(const char *s)
{
        size_t l = strlen(s);

        if (l == 0 || l > MANIFEST_NAME_MAX)
                return false;
        for (size_t i = 0; i < l; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
                      (s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '_'))
                        return false;
        return true;
}

/* "module.sub:attr": what uvicorn accepts as an app import string. */
bool manifest_is_app_string(const char *s)
{
        const char *colon = strchr(s, ':');

        if (!colon || colon == s || !colon[1] || strchr(colon + 1, ':'))
                return false;
        for (const char *p = s; *p; p++)
                if (p != colon && !((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
                                    (*p >= '0' && *p <= '9') || *p == '_' || *p == '.'))
                        return false;
        return true;
}

/*
 * Resolves a host path from the manifest against base_dir. Components "." and
 * empty ones are dropped; ".." is refused rather than normalised, because a
 * lexical ".." and the kernel's disagree across symlinks (use an absolute
 * path instead).
 */
bool manifest_resolve_host_path(struct manifest_ctx *x, const struct mnode *n, const char *path,
                                const char *what, char **ret)
{
        struct strbuf sb = STRBUF_INIT;
        const char *s;

        if (!mnode_get_string(x, n, path, &s))
                return false;
        if (s[0] != '/')
                strbuf_adds(&sb, x->m->base_dir);
        for (const char *p = s; *p;) {
                size_t l;
                while (*p == '/')
                        p++;
                l = strcspn(p, "/");
                if (l == 2 && p[0] == '.' && p[1] == '.') {
                        ctx_error(x, n, path,
                                  "%s must not contain '..' (write an absolute path instead), got "
                                  "'%s'",
                                  what, s);
                        strbuf_release(&sb);
                        return false;
                }
                if (l > 0 && !(l == 1 && p[0] == '.')) {
                        if (sb.len == 0 || sb.buf[sb.len - 1] != '/')
                                strbuf_addch(&sb, '/');
                        strbuf_add(&sb, p, l);
                }
                p += l;
        }
        if (sb.len == 0)
                strbuf_addch(&sb, '/');
        *ret = strbuf_detach(&sb, NULL);
        return true;
}

void manifest_check_host_path(struct manifest_ctx *x, const struct mnode *n, const char *path,
                              const char *abs, bool want_dir)
{
        struct stat st;

        if (!(x->flags & MANIFEST_CHECK_PATHS))
                return;
        if (stat(abs, &st) < 0) {
                ctx_error(x, n, path, "'%s': %s", n->value, strerror(errno));
                return;
        }
        if (want_dir && !S_ISDIR(st.st_mode))
                ctx_error(x, n, path, "'%s' is not a directory", n->value);
        else if (!want_dir && !S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
                ctx_error(x, n, path, "'%s' is neither a regular file nor a directory", n->value);
}

const struct mnode *mnode_lookup(const struct mnode *n, const char *key)
{
        if (!n || n->kind != MNODE_MAP)
                return NULL;
        for (size_t i = 0; i < mnode_map_size(n); i++)
                if (streq(mnode_key(n, i)->value, key))
                        return mnode_value(n, i);
        return NULL;
}
