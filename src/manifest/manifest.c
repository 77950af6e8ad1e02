/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * openenv.yaml -> struct manifest: the typed pass over the positioned YAML
 * tree (manifest-node.c). Every key is checked for type, range and enum
 * membership here, defaults are merged field by field, effective per-container
 * policy is computed, and the cross-container rules run in manifest-rules.c.
 * Errors are collected, never returned early, so one run reports everything.
 */
#include "manifest/manifest.h"

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
#include "base/string-table.h"
#include "base/util.h"
#include "manifest/manifest-internal.h"

static const char *const manifest_zone_kind_table[MANIFEST_ZONE_MAX] = {
        [MANIFEST_ZONE_AGENT] = "agent",
        [MANIFEST_ZONE_SERVICES] = "services",
        [MANIFEST_ZONE_OBSERVERS] = "observers",
};
static const char *const manifest_egress_table[] = {
        [MANIFEST_EGRESS_NONE] = "none",
        [MANIFEST_EGRESS_RELAYS_ONLY] = "relays-only",
};
static const char *const manifest_oci_table[] = {
        [MANIFEST_OCI_NATIVE] = "native",
        [MANIFEST_OCI_CRUN] = "crun",
        [MANIFEST_OCI_RUNC] = "runc",
        [MANIFEST_OCI_RUNSC] = "runsc",
};
static const char *const manifest_during_grading_table[] = {
        [MANIFEST_DURING_GRADING_FROZEN] = "frozen",
        [MANIFEST_DURING_GRADING_SERVE_OBSERVERS] = "serve-observers",
};
static const char *const manifest_read_kind_table[] = {
        [MANIFEST_READ_ASSET] = "asset",
        [MANIFEST_READ_WORKSPACE] = "workspace",
        [MANIFEST_READ_SERVICE_STATE] = "service_state",
        [MANIFEST_READ_OUTPUT] = "output",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(manifest_zone_kind, enum manifest_zone_kind);
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(manifest_egress, enum manifest_egress);
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(manifest_oci, enum manifest_oci);
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(manifest_during_grading, enum manifest_during_grading);
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(manifest_read_kind, enum manifest_read_kind);

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

static char *path_key(const char *path, const char *key)
{
        return path[0] ? xasprintf("%s.%s", path, key) : xstrdup(key);
}

static char *path_index(const char *path, size_t i)
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
static bool map_fields(struct manifest_ctx *x, const struct mnode *n, const char *path,
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
                                path_key(streq(path, "openenvd") ? "" : path, key->value);
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
static bool user_map(struct manifest_ctx *x, const struct mnode *n, const char *path, size_t max,
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
                                cleanup_free char *p = path_key(path, mnode_key(n, i)->value);
                                ctx_error(x, mnode_key(n, i), p,
                                          "duplicate key '%s' (first at %u:%u)",
                                          mnode_key(n, i)->value, mnode_key(n, j)->line,
                                          mnode_key(n, j)->column);
                                break;
                        }
        return true;
}

static bool get_string(struct manifest_ctx *x, const struct mnode *n, const char *path,
                       const char **ret)
{
        if (n->kind != MNODE_SCALAR || mnode_is_null(n)) {
                ctx_error(x, n, path, "expected a string");
                return false;
        }
        *ret = n->value;
        return true;
}

static bool get_uint(struct manifest_ctx *x, const struct mnode *n, const char *path, uint64_t min,
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
static bool get_bool(struct manifest_ctx *x, const struct mnode *n, const char *path, bool *ret)
{
        if (n->kind == MNODE_SCALAR && n->plain) {
                if (streq(n->value, "true") || streq(n->value, "True") || streq(n->value, "TRUE")) {
                        *ret = true;
                        return true;
                }
                if (streq(n->value, "false") || streq(n->value, "False") ||
                    streq(n->value, "FALSE")) {
                        *ret = false;
                        return true;
                }
        }
        ctx_error(x, n, path, "expected true or false%s%s%s",
                  n->kind == MNODE_SCALAR ? ", got '" : "", n->kind == MNODE_SCALAR ? n->value : "",
                  n->kind == MNODE_SCALAR ? "'" : "");
        return false;
}

static bool get_port(struct manifest_ctx *x, const struct mnode *n, const char *path, uint16_t *ret)
{
        uint64_t v;

        if (!get_uint(x, n, path, 1, 65535, &v))
                return false;
        *ret = (uint16_t) v;
        return true;
}

/* Positive, finite, at most max. */
static bool get_positive_double(struct manifest_ctx *x, const struct mnode *n, const char *path,
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

static bool get_enum(struct manifest_ctx *x, const struct mnode *n, const char *path,
                     const char *what, const char *const *names, size_t n_names, unsigned *ret)
{
        const char *s;
        struct strbuf allowed = STRBUF_INIT;

        if (!get_string(x, n, path, &s))
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
static bool get_container_path(struct manifest_ctx *x, const struct mnode *n, const char *path,
                               const char *what, char **ret)
{
        const char *s;

        if (!get_string(x, n, path, &s))
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

static bool is_dns_label(const char *s)
{
        size_t l = strlen(s);

        if (l == 0 || l > MANIFEST_NAME_MAX || s[0] == '-' || s[l - 1] == '-')
                return false;
        for (size_t i = 0; i < l; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
                        return false;
        return true;
}

static bool is_hostname(const char *s)
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

static bool is_env_name(const char *s)
{
        if (!((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
                return false;
        for (const char *p = s + 1; *p; p++)
                if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
                      (*p >= '0' && *p <= '9') || *p == '_'))
                        return false;
        return true;
}

static bool is_asset_name(const char *s)
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
static bool is_app_string(const char *s)
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
static bool resolve_host_path(struct manifest_ctx *x, const struct mnode *n, const char *path,
                              const char *what, char **ret)
{
        struct strbuf sb = STRBUF_INIT;
        const char *s;

        if (!get_string(x, n, path, &s))
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

static void check_host_path_exists(struct manifest_ctx *x, const struct mnode *n, const char *path,
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

/* ---- resources and network ---- */

static const char *const resource_keys[] = { "memory_mb", "pids", "cpu", "disk_mb" };

/* Field by field: only the keys present replace what is already in *res. */
static void parse_resources(struct manifest_ctx *x, const struct mnode *n, const char *path,
                            struct manifest_resources *res)
{
        const struct mnode *k[4], *v[4];

        if (!map_fields(x, n, path, resource_keys, 4, false, k, v))
                return;
        for (size_t i = 0; i < 4; i++) {
                cleanup_free char *p = NULL;
                uint64_t u;
                double d;

                if (!v[i])
                        continue;
                p = path_key(path, resource_keys[i]);
                switch (i) {
                case 0:
                        if (get_uint(x, v[i], p, 1, MANIFEST_MAX_MEMORY_MB, &u))
                                res->memory_mb = u;
                        break;
                case 1:
                        if (get_uint(x, v[i], p, 1, MANIFEST_MAX_PIDS, &u))
                                res->pids = u;
                        break;
                case 2:
                        if (get_positive_double(x, v[i], p, MANIFEST_MAX_CPU, &d))
                                res->cpu = d;
                        break;
                default:
                        if (get_uint(x, v[i], p, 1, MANIFEST_MAX_DISK_MB, &u))
                                res->disk_mb = u;
                        break;
                }
        }
}

/* Returns the egress value, or -1 if absent or wrong (error added). */
static int parse_network(struct manifest_ctx *x, const struct mnode *n, const char *path)
{
        static const char *const keys[] = { "egress" };
        static const char *const names[] = { "none", "relays-only", "allowlist" };
        const struct mnode *k[1], *v[1];
        cleanup_free char *p = NULL;
        unsigned e;

        if (!map_fields(x, n, path, keys, 1, false, k, v) || !v[0])
                return -1;
        p = path_key(path, "egress");
        if (!get_enum(x, v[0], p, "egress", names, ELEMENTSOF(names), &e))
                return -1;
        if (e == 2) {
                /* Never silently accept a policy nothing enforces. */
                ctx_error(x, v[0], p, "egress 'allowlist' is not supported yet");
                return -1;
        }
        return (int) e;
}

/* ---- containers ---- */

static const char *const container_keys[CK_MAX] = {
        "argv",  "env",    "resources", "network", "port",  "phases",
        "reads", "expose", "state",     "output",  "after", "rootfs",
};

static char **parse_string_list(struct manifest_ctx *x, const struct mnode *n, const char *path,
                                const struct mnode ***ret_nodes)
{
        char **v = xcalloc(1, sizeof(char *));

        if (n->kind != MNODE_SEQ) {
                ctx_error(x, n, path, "expected a list");
                return v;
        }
        if (n->n_children > MANIFEST_MAX_LIST) {
                ctx_error(x, n, path, "too many entries (%zu, at most %d)", n->n_children,
                          MANIFEST_MAX_LIST);
                return v;
        }
        if (ret_nodes)
                *ret_nodes = xcalloc(n->n_children + 1, sizeof(const struct mnode *));
        for (size_t i = 0; i < n->n_children; i++) {
                cleanup_free char *p = path_index(path, i);
                const char *s;
                if (!get_string(x, n->children[i], p, &s))
                        continue;
                if (ret_nodes)
                        (*ret_nodes)[strv_length(v)] = n->children[i];
                strv_push(&v, xstrdup(s));
        }
        return v;
}

static void parse_env(struct manifest_ctx *x, const struct mnode *n, const char *path,
                      struct manifest_container *c)
{
        if (!user_map(x, n, path, MANIFEST_MAX_LIST, "environment variables"))
                return;
        for (size_t i = 0; i < mnode_map_size(n); i++) {
                const struct mnode *k = mnode_key(n, i);
                cleanup_free char *p = path_key(path, k->value);
                const char *val;

                if (!is_env_name(k->value)) {
                        ctx_error(x, k, p, "'%s' is not a valid environment variable name",
                                  k->value);
                        continue;
                }
                if (!get_string(x, mnode_value(n, i), p, &val))
                        continue;
                strv_push(&c->env, xasprintf("%s=%s", k->value, val));
        }
}

static bool parse_read(struct manifest_ctx *x, const struct mnode *n, const char *path,
                       struct manifest_read *ret)
{
        const char *s, *rest;
        size_t l;

        if (!get_string(x, n, path, &s))
                return false;
        l = strlen(s);
        if (streq(s, "workspace")) {
                *ret = (struct manifest_read){ .kind = MANIFEST_READ_WORKSPACE };
                return true;
        }
        if ((rest = startswith(s, "assets.")) && rest[0] && !strchr(rest, '.')) {
                *ret = (struct manifest_read){ .kind = MANIFEST_READ_ASSET,
                                               .target = xstrdup(rest) };
                return true;
        }
        if ((rest = startswith(s, "services."))) {
                const char *dot = strchr(rest, '.');
                if (dot && dot != rest && streq(dot, ".state")) {
                        *ret = (struct manifest_read){ .kind = MANIFEST_READ_SERVICE_STATE,
                                                       .target = xstrndup(rest, dot - rest) };
                        return true;
                }
                ctx_error(x, n, path,
                          "unknown read '%s' (a service offers only services.<name>.state)", s);
                return false;
        }
        if (l > 7 && endswith(s, ".output") && !memchr(s, '.', l - 7)) {
                *ret = (struct manifest_read){ .kind = MANIFEST_READ_OUTPUT,
                                               .target = xstrndup(s, l - 7) };
                return true;
        }
        ctx_error(x, n, path,
                  "unknown read '%s' (expected workspace, assets.<name>, services.<name>.state "
                  "or <observer>.output)",
                  s);
        return false;
}

static void parse_reads(struct manifest_ctx *x, const struct mnode *n, const char *path,
                        struct container_info *ci)
{
        struct manifest_container *c = ci->c;

        if (n->kind != MNODE_SEQ) {
                ctx_error(x, n, path, "expected a list");
                return;
        }
        if (n->n_children > MANIFEST_MAX_LIST) {
                ctx_error(x, n, path, "too many entries (%zu, at most %d)", n->n_children,
                          MANIFEST_MAX_LIST);
                return;
        }
        c->reads = xcalloc(n->n_children + 1, sizeof(*c->reads));
        ci->read_nodes = xcalloc(n->n_children + 1, sizeof(const struct mnode *));
        for (size_t i = 0; i < n->n_children; i++) {
                cleanup_free char *p = path_index(path, i);
                struct manifest_read r;
                bool dup = false;

                if (!parse_read(x, n->children[i], p, &r))
                        continue;
                for (size_t j = 0; j < c->n_reads; j++)
                        if (c->reads[j].kind == r.kind && streq_ptr(c->reads[j].target, r.target))
                                dup = true;
                if (dup) {
                        ctx_error(x, n->children[i], p, "'%s' is listed twice",
                                  n->children[i]->value);
                        free(r.target);
                        continue;
                }
                ci->read_nodes[c->n_reads] = n->children[i];
                c->reads[c->n_reads++] = r;
        }
}

static void parse_phases(struct manifest_ctx *x, const struct mnode *n, const char *path,
                         struct container_info *ci)
{
        const char *phase_names[PHASE_MANIFEST_MAX];

        if (n->kind != MNODE_SEQ) {
                ctx_error(x, n, path, "expected a list");
                return;
        }
        if (n->n_children == 0) {
                ctx_error(x, n, path, "observers must list at least one phase");
                return;
        }
        if (n->n_children > MANIFEST_MAX_LIST) {
                ctx_error(x, n, path, "too many entries (%zu, at most %d)", n->n_children,
                          MANIFEST_MAX_LIST);
                return;
        }
        /* What a manifest may name: every phase but `failed`. */
        for (unsigned i = 0; i < PHASE_MANIFEST_MAX; i++)
                phase_names[i] = phase_to_string(i);
        ci->phase_nodes = xcalloc(n->n_children, sizeof(const struct mnode *));
        for (size_t i = 0; i < n->n_children; i++) {
                cleanup_free char *p = path_index(path, i);
                unsigned ph;

                if (!get_enum(x, n->children[i], p, "phase", phase_names, PHASE_MANIFEST_MAX, &ph))
                        continue;
                if (!(PHASE_BIT(ph) & MANIFEST_OBSERVER_PHASES)) {
                        ctx_error(x, n->children[i], p,
                                  "observers cannot run in '%s' (allowed: ready, running, frozen, "
                                  "sealed, grading)",
                                  phase_names[ph]);
                        continue;
                }
                if (ci->listed_phases & PHASE_BIT(ph)) {
                        ctx_error(x, n->children[i], p, "phase '%s' is listed twice",
                                  phase_names[ph]);
                        continue;
                }
                ci->listed_phases |= PHASE_BIT(ph);
                ci->phase_nodes[ci->n_phase_nodes++] = n->children[i];
        }
}

static void parse_expose(struct manifest_ctx *x, const struct mnode *n, const char *path,
                         struct manifest_container *c)
{
        static const char *const keys[] = { "host", "port" };
        const struct mnode *k[2], *v[2];
        cleanup_free char *ph = path_key(path, "host");
        cleanup_free char *pp = path_key(path, "port");
        const char *host;
        uint16_t port = 0;

        if (!map_fields(x, n, path, keys, 2, false, k, v))
                return;
        if (mnode_is_null(n) || !v[0] || !v[1]) {
                ctx_error(x, n, path, "expose needs both host and port");
                return;
        }
        if (!get_string(x, v[0], ph, &host))
                return;
        if (!is_hostname(host)) {
                ctx_error(x, v[0], ph, "'%s' is not a valid host name", host);
                return;
        }
        if (!get_port(x, v[1], pp, &port))
                return;
        c->expose.host = xstrdup(host);
        c->expose.port = port;
}

/* Keys only some zones may use; rejected before their value is looked at. */
static bool key_allowed(struct manifest_ctx *x, enum manifest_zone_kind zone, enum container_key k,
                        const struct mnode *key, const char *path)
{
        bool observer_only = k == CK_PHASES || k == CK_READS || k == CK_OUTPUT || k == CK_AFTER;
        bool service_only = k == CK_EXPOSE || k == CK_STATE;
        cleanup_free char *p = path_key(path, key->value);

        if (observer_only && zone != MANIFEST_ZONE_OBSERVERS) {
                if (zone == MANIFEST_ZONE_AGENT && k == CK_PHASES)
                        ctx_error(x, key, p,
                                  "only observers declare phases (agent containers live in ready "
                                  "and running)");
                else if (k == CK_PHASES)
                        ctx_error(x, key, p,
                                  "only observers declare phases (services follow the unit)");
                else
                        ctx_error(x, key, p, "only observers declare %s", key->value);
                return false;
        }
        if (service_only && zone != MANIFEST_ZONE_SERVICES) {
                ctx_error(x, key, p, "only services declare %s", key->value);
                return false;
        }
        return true;
}

static void parse_container(struct manifest_ctx *x, struct manifest_zone *z,
                            struct container_info *ci)
{
        struct manifest_container *c = ci->c;
        const char *path = ci->path;
        const struct mnode **vals = ci->vals;

        if (!map_fields(x, ci->node, path, container_keys, CK_MAX, false, ci->keys, ci->vals))
                return;
        for (size_t k = 0; k < CK_MAX; k++) {
                cleanup_free char *p = NULL;
                int e;

                if (!vals[k])
                        continue;
                if (!key_allowed(x, z->kind, k, ci->keys[k], path)) {
                        vals[k] = NULL;
                        continue;
                }
                p = path_key(path, container_keys[k]);
                switch ((enum container_key) k) {
                case CK_ARGV:
                        c->argv = parse_string_list(x, vals[k], p, NULL);
                        if (vals[k]->kind == MNODE_SEQ && vals[k]->n_children == 0)
                                ctx_error(x, vals[k], p, "argv must not be empty");
                        if (!c->argv[0])
                                c->argv = strv_free(c->argv);
                        break;
                case CK_ENV:
                        parse_env(x, vals[k], p, c);
                        break;
                case CK_RESOURCES:
                        parse_resources(x, vals[k], p, &c->resources);
                        break;
                case CK_NETWORK:
                        e = parse_network(x, vals[k], p);
                        /* Narrowing is checked in finalize_container(). */
                        if (e >= 0)
                                c->egress = (enum manifest_egress) e;
                        else
                                vals[k] = NULL; /* keep the zone's egress */
                        break;
                case CK_PORT:
                        (void) get_port(x, vals[k], p, &c->port);
                        break;
                case CK_PHASES:
                        parse_phases(x, vals[k], p, ci);
                        break;
                case CK_READS:
                        parse_reads(x, vals[k], p, ci);
                        break;
                case CK_EXPOSE:
                        parse_expose(x, vals[k], p, c);
                        break;
                case CK_STATE:
                        (void) get_container_path(x, vals[k], p, "state", &c->state);
                        break;
                case CK_OUTPUT:
                        if (get_container_path(x, vals[k], p, "output", &c->output) &&
                            !startswith(c->output, "/out/") && !streq(c->output, "/out")) {
                                /* Only /out is custody-copied to later observers. */
                                ctx_error(x, vals[k], p,
                                          "output must be under /out (only /out is passed on to "
                                          "later observers), got '%s'",
                                          c->output);
                        }
                        break;
                case CK_AFTER:
                        if (vals[k]->kind == MNODE_SCALAR) {
                                const char *s;
                                c->after = xcalloc(1, sizeof(char *));
                                if (get_string(x, vals[k], p, &s)) {
                                        strv_push(&c->after, xstrdup(s));
                                        ci->after_nodes = xcalloc(1, sizeof(const struct mnode *));
                                        ci->after_nodes[0] = vals[k];
                                }
                        } else {
                                c->after = parse_string_list(x, vals[k], p, &ci->after_nodes);
                        }
                        break;
                case CK_ROOTFS:
                        (void) get_container_path(x, vals[k], p, "rootfs", &c->rootfs);
                        break;
                case CK_MAX:
                        break;
                }
        }
}

/* The value of key in mapping n, or NULL. */
static const struct mnode *map_value(const struct mnode *n, const char *key)
{
        if (!n || n->kind != MNODE_MAP)
                return NULL;
        for (size_t i = 0; i < mnode_map_size(n); i++)
                if (streq(mnode_key(n, i)->value, key))
                        return mnode_value(n, i);
        return NULL;
}

/* Defaults, argv, phases and the effective (zone-narrowed) policy. */
static void finalize_container(struct manifest_ctx *x, const struct manifest_zone *z,
                               struct container_info *ci)
{
        struct manifest_container *c = ci->c;
        struct manifest *m = x->m;
        const struct manifest_resources *own = &c->resources, *zr = &z->resources;
        struct manifest_resources *eff = &c->effective;
        const struct mnode *at = ci->key ? ci->key : ci->node;
        const struct mnode *rnode = ci->vals[CK_RESOURCES];

        if (z->kind == MANIFEST_ZONE_AGENT && streq(c->name, "env")) {
                /* The env server runs the very command it runs without
                 * openenvd (docs/DESIGN.md §8), on the unit's port. */
                if (!c->port)
                        c->port = m->port;
                if (!c->argv && !ci->vals[CK_ARGV]) {
                        if (m->app) {
                                c->argv = xcalloc(1, sizeof(char *));
                                strv_push(&c->argv, xstrdup("uvicorn"));
                                strv_push(&c->argv, xstrdup(m->app));
                                strv_push(&c->argv, xstrdup("--host"));
                                strv_push(&c->argv, xstrdup("0.0.0.0"));
                                strv_push(&c->argv, xstrdup("--port"));
                                strv_push(&c->argv, xasprintf("%u", (unsigned) c->port));
                        } else if (!x->app_invalid) {
                                ctx_error(x, at, ci->path,
                                          "the env container has no argv and the manifest sets no "
                                          "app (set the top-level app:, openenvd.app or an argv)");
                        }
                }
        } else if (!c->argv && !ci->vals[CK_ARGV]) {
                ctx_error(x, at, ci->path, "argv is required");
        }

        switch (z->kind) {
        case MANIFEST_ZONE_AGENT:
                c->phases = MANIFEST_AGENT_PHASES;
                break;
        case MANIFEST_ZONE_SERVICES:
                c->phases = MANIFEST_OBSERVER_PHASES;
                break;
        default:
                c->phases = ci->listed_phases;
                if (!ci->vals[CK_PHASES])
                        ctx_error(x, at, ci->path, "observers must list at least one phase");
                break;
        }

        /* A container may only narrow its zone (docs/DESIGN.md §3). */
        if (!ci->vals[CK_NETWORK]) {
                c->egress = z->egress;
        } else if (c->egress > z->egress) {
                cleanup_free char *p = path_key(ci->path, "network.egress");
                ctx_error(x, map_value(ci->vals[CK_NETWORK], "egress"), p,
                          "egress '%s' is wider than the zone's '%s'",
                          manifest_egress_to_string(c->egress),
                          manifest_egress_to_string(z->egress));
                c->egress = z->egress;
        }

#define NARROW(field, fmt, cast)                                                         \
        do {                                                                             \
                eff->field = own->field ? own->field : zr->field;                        \
                if (own->field && zr->field && own->field > zr->field) {                 \
                        cleanup_free char *p_ = path_key(ci->path, "resources." #field); \
                        ctx_error(x, map_value(rnode, #field), p_,                       \
                                  #field " " fmt " exceeds the zone ceiling " fmt,       \
                                  (cast) own->field, (cast) zr->field);                  \
                        eff->field = zr->field;                                          \
                }                                                                        \
        } while (0)
        NARROW(memory_mb, "%llu", unsigned long long);
        NARROW(pids, "%llu", unsigned long long);
        NARROW(cpu, "%g", double);
        NARROW(disk_mb, "%llu", unsigned long long);
#undef NARROW

        if (ci->vals[CK_EXPOSE] && !c->port && !ci->vals[CK_PORT]) {
                cleanup_free char *p = path_key(ci->path, "expose");
                ctx_error(x, ci->keys[CK_EXPOSE], p,
                          "expose needs the service's listening port (set port:)");
        }
        c->workdir = xstrdup(z->kind == MANIFEST_ZONE_AGENT ? "/workspace" : "/");
        if (!c->after)
                c->after = xcalloc(1, sizeof(char *));
        if (!c->argv)
                c->argv = xcalloc(1, sizeof(char *)); /* invalid manifest; keeps free simple */
}

static struct container_info *ctx_add_container(struct manifest_ctx *x, struct manifest_zone *z,
                                                const struct mnode *key, const struct mnode *node,
                                                const char *name)
{
        struct container_info *ci;

        x->ci = xrealloc(x->ci, (x->n_ci + 1) * sizeof(*x->ci));
        ci = &x->ci[x->n_ci++];
        *ci = (struct container_info){
                .c = &z->containers[z->n_containers++],
                .key = key,
                .node = node,
                .path = xasprintf("zones.%s.containers.%s", manifest_zone_kind_to_string(z->kind),
                                  name),
        };
        ci->c->name = xstrdup(name);
        ci->c->zone = z->kind;
        ci->c->env = xcalloc(1, sizeof(char *));
        return ci;
}

static void zone_set_defaults(struct manifest_zone *z, enum manifest_zone_kind kind)
{
        /* docs/MANIFEST.md, "Zone defaults". */
        static const struct manifest_resources defaults[MANIFEST_ZONE_MAX] = {
                [MANIFEST_ZONE_AGENT] = { .memory_mb = 1024, .pids = 512, .disk_mb = 256 },
                [MANIFEST_ZONE_SERVICES] = { .memory_mb = 512, .pids = 256, .disk_mb = 256 },
                [MANIFEST_ZONE_OBSERVERS] = { .memory_mb = 512, .pids = 256, .disk_mb = 128 },
        };
        z->kind = kind;
        z->egress =
                kind == MANIFEST_ZONE_AGENT ? MANIFEST_EGRESS_RELAYS_ONLY : MANIFEST_EGRESS_NONE;
        z->resources = defaults[kind];
        z->oci = MANIFEST_OCI_NATIVE;
        z->during_grading = MANIFEST_DURING_GRADING_FROZEN;
}

static void parse_zone(struct manifest_ctx *x, enum manifest_zone_kind kind,
                       const struct mnode *key, const struct mnode *n)
{
        static const char *const keys[] = { "network", "resources", "runtime", "containers",
                                            "during_grading" };
        struct manifest_zone *z = &x->m->zones[kind];
        const struct mnode *k[5] = { 0 }, *v[5] = { 0 };
        cleanup_free char *path = xasprintf("zones.%s", manifest_zone_kind_to_string(kind));
        size_t first = x->n_ci;
        bool ok;

        x->zone_keys[kind] = key;
        ok = map_fields(x, n, path, keys, 5, false, k, v);
        if (ok && v[0]) {
                cleanup_free char *p = path_key(path, "network");
                int e = parse_network(x, v[0], p);
                if (e >= 0 && kind == MANIFEST_ZONE_AGENT && e != MANIFEST_EGRESS_RELAYS_ONLY) {
                        cleanup_free char *pe = path_key(p, "egress");
                        ctx_error(x, map_value(v[0], "egress"), pe,
                                  "the agent zone's egress is fixed to relays-only (every call "
                                  "the agent makes goes through a relay)");
                } else if (e >= 0) {
                        z->egress = (enum manifest_egress) e;
                }
        }
        if (ok && v[1]) {
                cleanup_free char *p = path_key(path, "resources");
                parse_resources(x, v[1], p, &z->resources);
        }
        if (ok && v[2]) {
                static const char *const rkeys[] = { "oci" };
                const struct mnode *rk[1], *rv[1];
                cleanup_free char *p = path_key(path, "runtime");
                unsigned o;
                if (map_fields(x, v[2], p, rkeys, 1, false, rk, rv) && rv[0]) {
                        cleanup_free char *po = path_key(p, "oci");
                        if (get_enum(x, rv[0], po, "oci runtime", manifest_oci_table,
                                     ELEMENTSOF(manifest_oci_table), &o))
                                z->oci = (enum manifest_oci) o;
                }
        }
        if (ok && v[4]) {
                cleanup_free char *p = path_key(path, "during_grading");
                unsigned d;
                if (kind != MANIFEST_ZONE_SERVICES)
                        ctx_error(x, k[4], p, "during_grading only applies to the services zone");
                else if (get_enum(x, v[4], p, "during_grading value", manifest_during_grading_table,
                                  ELEMENTSOF(manifest_during_grading_table), &d))
                        z->during_grading = (enum manifest_during_grading) d;
        }

        if (!ok || !v[3]) {
                /* The agent zone always has its env server. */
                if (kind == MANIFEST_ZONE_AGENT) {
                        z->containers = xcalloc(1, sizeof(*z->containers));
                        ctx_add_container(x, z, NULL, NULL, "env");
                }
        } else {
                cleanup_free char *p = path_key(path, "containers");
                x->zone_containers[kind] = k[3];
                if (user_map(x, v[3], p, MANIFEST_MAX_CONTAINERS, "containers")) {
                        size_t nc = mnode_map_size(v[3]);
                        z->containers = xcalloc(nc ? nc : 1, sizeof(*z->containers));
                        for (size_t i = 0; i < nc; i++) {
                                const struct mnode *ck = mnode_key(v[3], i);
                                struct container_info *ci;
                                if (!is_dns_label(ck->value)) {
                                        cleanup_free char *pc = path_key(p, ck->value);
                                        ctx_error(x, ck, pc,
                                                  "container name '%s' must be a DNS label "
                                                  "(a-z, 0-9 and '-', at most 63 characters)",
                                                  ck->value);
                                }
                                ci = ctx_add_container(x, z, ck, mnode_value(v[3], i), ck->value);
                                parse_container(x, z, ci);
                        }
                }
        }
        for (size_t i = first; i < x->n_ci; i++)
                finalize_container(x, z, &x->ci[i]);
        if (kind == MANIFEST_ZONE_AGENT && !manifest_find_container(x->m, "env"))
                ctx_error(x, x->zone_containers[kind], "zones.agent.containers",
                          "an 'env' container is required (it runs the environment server)");
}

static void parse_assets(struct manifest_ctx *x, const struct mnode *n)
{
        struct manifest *m = x->m;
        size_t na;

        if (!user_map(x, n, "privileged_assets", MANIFEST_MAX_LIST, "assets"))
                return;
        na = mnode_map_size(n);
        m->assets = xcalloc(na + 1, sizeof(*m->assets));
        x->asset_keys = xcalloc(na + 1, sizeof(const struct mnode *));
        for (size_t i = 0; i < na; i++) {
                const struct mnode *k = mnode_key(n, i), *v = mnode_value(n, i);
                cleanup_free char *p = path_key("privileged_assets", k->value);
                char *abs;

                if (!is_asset_name(k->value)) {
                        ctx_error(x, k, p,
                                  "asset name '%s' must be letters, digits, '-' or '_' (at most "
                                  "63)",
                                  k->value);
                        continue;
                }
                if (!resolve_host_path(x, v, p, "an asset path", &abs))
                        continue;
                check_host_path_exists(x, v, p, abs, false);
                x->asset_keys[m->n_assets] = k;
                m->assets[m->n_assets++] =
                        (struct manifest_asset){ .name = xstrdup(k->value), .path = abs };
        }
}

/* model: {budget: {requests, bytes, tokens}}; absent fields stay 0 (unlimited). */
static void parse_model(struct manifest_ctx *x, const struct mnode *n)
{
        static const char *const keys[] = { "budget" };
        static const char *const bkeys[] = { "requests", "bytes", "tokens" };
        static const uint64_t max[] = { MANIFEST_MAX_MODEL_REQUESTS, MANIFEST_MAX_MODEL_BYTES,
                                        MANIFEST_MAX_MODEL_TOKENS };
        struct manifest_model_budget *b = &x->m->model.budget;
        uint64_t *fields[] = { &b->requests, &b->bytes, &b->tokens };
        const struct mnode *k[1], *v[1], *bk[3], *bv[3];

        if (!map_fields(x, n, "model", keys, 1, false, k, v) || !v[0] ||
            !map_fields(x, v[0], "model.budget", bkeys, 3, false, bk, bv))
                return;
        for (size_t i = 0; i < ELEMENTSOF(bkeys); i++) {
                cleanup_free char *p = NULL;
                if (!bv[i])
                        continue;
                p = path_key("model.budget", bkeys[i]);
                (void) get_uint(x, bv[i], p, 0, max[i], fields[i]);
        }
}

/* An origin-form path as the unit's port normalises it: "/a/b", no
 * escapes, no empty, "." or ".." segment, no trailing slash. */
static bool is_route(const char *s)
{
        if (s[0] != '/' || s[1] == '\0')
                return false;
        for (const char *seg = s + 1;;) {
                size_t n = strcspn(seg, "/");
                if (n == 0 || (n == 1 && seg[0] == '.') || (n == 2 && startswith(seg, "..")))
                        return false;
                for (size_t i = 0; i < n; i++)
                        if (!isalnum((unsigned char) seg[i]) &&
                            !strchr("-._~!$&'()*+,;=:@", seg[i]))
                                return false;
                if (seg[n] == '\0')
                        return true;
                seg += n + 1;
        }
}

static void parse_agent_paths(struct manifest_ctx *x, const struct mnode *n)
{
        const struct mnode **nodes = NULL;

        x->m->agent_paths = parse_string_list(x, n, "agent_paths", &nodes);
        for (size_t i = 0; x->m->agent_paths[i]; i++)
                if (!is_route(x->m->agent_paths[i])) {
                        cleanup_free char *p = path_index("agent_paths", i);
                        ctx_error(x, nodes[i], p,
                                  "'%s' is not a path like /tools/run (no escapes, query, "
                                  "trailing slash, '.' or '..')",
                                  x->m->agent_paths[i]);
                }
        free(nodes);
}

static void parse_openenvd(struct manifest_ctx *x, const struct mnode *n, const char **app,
                           uint16_t *port, bool *have_port)
{
        static const char *const keys[] = {
                "app",   "port",  "kill_deadline_s", "workspace_seed", "privileged_assets",
                "zones", "model", "standby",         "agent_paths"
        };
        static const char *const zkeys[] = { "agent", "services", "observers" };
        const struct mnode *k[ELEMENTSOF(keys)], *v[ELEMENTSOF(keys)], *zk[3] = { 0 },
                                                                       *zv[3] = { 0 };
        bool ok = map_fields(x, n, "openenvd", keys, ELEMENTSOF(keys), false, k, v);

        if (ok && v[0] && get_string(x, v[0], "app", app) && !is_app_string(*app)) {
                ctx_error(x, v[0], "app", "app '%s' must look like module:attribute", *app);
                *app = NULL;
                x->app_invalid = true;
        }
        if (ok && v[1] && get_port(x, v[1], "port", port))
                *have_port = true;
        if (ok && v[2])
                (void) get_positive_double(x, v[2], "kill_deadline_s", MANIFEST_MAX_KILL_DEADLINE_S,
                                           &x->m->kill_deadline_s);
        if (ok && v[3] &&
            resolve_host_path(x, v[3], "workspace_seed", "workspace_seed", &x->m->workspace_seed))
                check_host_path_exists(x, v[3], "workspace_seed", x->m->workspace_seed, true);
        if (ok && v[4])
                parse_assets(x, v[4]);
        if (ok && v[6])
                parse_model(x, v[6]);
        if (ok && v[7])
                (void) get_bool(x, v[7], "standby", &x->m->standby);
        if (ok && v[8])
                parse_agent_paths(x, v[8]);
        if (!x->m->assets)
                x->m->assets = xcalloc(1, sizeof(*x->m->assets));

        /* The app and port must be final before the env container's argv. */
        if (ok && v[5])
                ok = map_fields(x, v[5], "zones", zkeys, 3, false, zk, zv);
        for (unsigned z = 0; z < MANIFEST_ZONE_MAX; z++)
                zone_set_defaults(&x->m->zones[z], z);
        x->m->app = *app ? xstrdup(*app) : x->m->app;
        if (*have_port)
                x->m->port = *port;
        for (unsigned z = 0; z < MANIFEST_ZONE_MAX; z++)
                parse_zone(x, z, ok ? zk[z] : NULL, ok ? zv[z] : NULL);
}

static void ctx_done(struct manifest_ctx *x)
{
        for (size_t i = 0; i < x->n_ci; i++) {
                free(x->ci[i].path);
                free(x->ci[i].read_nodes);
                free(x->ci[i].after_nodes);
                free(x->ci[i].phase_nodes);
        }
        free(x->ci);
        free(x->asset_keys);
}

int manifest_parse(const char *data, size_t size, const char *base_dir, unsigned flags,
                   struct manifest_errors *errors, struct manifest **ret)
{
        static const char *const top_keys[] = { "app",  "port", "openenvd", "spec_version",
                                                "name", "type", "runtime" };
        cleanup(manifest_freep) struct manifest *m = NULL;
        struct mdoc doc = { 0 };
        struct manifest_ctx x = { .errors = errors, .flags = flags };
        const struct mnode *k[7] = { 0 }, *v[7] = { 0 };
        const char *top_app = NULL, *app = NULL;
        uint16_t top_port = 0, port = 0;
        bool have_port = false;
        size_t before = errors->n;
        int r;

        if (!base_dir || base_dir[0] != '/')
                return -EINVAL;
        r = mdoc_parse(data, size, errors, &doc);
        if (r < 0) {
                manifest_errors_sort(errors);
                return r;
        }

        m = xcalloc(1, sizeof(*m));
        m->base_dir = xstrdup(base_dir);
        m->port = MANIFEST_DEFAULT_PORT;
        m->kill_deadline_s = MANIFEST_DEFAULT_KILL_DEADLINE_S;
        m->standby = true;
        x.m = m;
        x.root = doc.root;

        if (doc.root && !mnode_is_null(doc.root) && doc.root->kind != MNODE_MAP) {
                ctx_error(&x, doc.root, "", "the manifest must be a mapping");
        } else {
                /* Standard OpenEnv keys outside `openenvd:` are the env
                 * image's business; only app and port feed the contract. */
                (void) map_fields(&x, doc.root, "", top_keys, 7, true, k, v);
                if (v[0] && get_string(&x, v[0], "app", &top_app) && !is_app_string(top_app)) {
                        ctx_error(&x, v[0], "app", "app '%s' must look like module:attribute",
                                  top_app);
                        top_app = NULL;
                        x.app_invalid = true;
                }
                if (v[1] && get_port(&x, v[1], "port", &top_port)) {
                        port = top_port;
                        have_port = true;
                }
                app = top_app;
                parse_openenvd(&x, v[2], &app, &port, &have_port);
                /* Cross-container rules run even after structural errors,
                 * on what did parse, so one run reports everything. */
                if (!errors->truncated)
                        manifest_check_rules(&x);
        }

        ctx_done(&x);
        mdoc_done(&doc);
        if (errors->n > before || errors->truncated) {
                manifest_errors_sort(errors);
                return -EINVAL;
        }
        *ret = TAKE_PTR(m);
        return 0;
}

int manifest_load(const char *path, struct manifest_errors *errors, struct manifest **ret)
{
        cleanup_close int fd = -EBADF;
        cleanup_free char *buf = NULL, *real = NULL;
        struct stat st;
        size_t len;
        char *slash;
        int r;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        /* A FIFO or device could block forever or never end. */
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        if (st.st_size > (off_t) MANIFEST_MAX_BYTES) {
                manifest_errors_add(errors, 1, 1, "",
                                    "file is %lld bytes, larger than the limit of %d bytes",
                                    (long long) st.st_size, MANIFEST_MAX_BYTES);
                return -EINVAL;
        }
        r = read_full_fd(fd, (size_t) MANIFEST_MAX_BYTES, &buf, &len);
        if (r == -EFBIG) {
                manifest_errors_add(errors, 1, 1, "", "file is larger than the limit of %d bytes",
                                    MANIFEST_MAX_BYTES);
                return -EINVAL;
        }
        if (r < 0)
                return r;
        real = realpath(path, NULL);
        if (!real)
                return negative_errno();
        slash = strrchr(real, '/');
        if (slash == real)
                slash[1] = '\0';
        else if (slash)
                *slash = '\0';
        return manifest_parse(buf, len, real, MANIFEST_CHECK_PATHS, errors, ret);
}

static void container_done(struct manifest_container *c)
{
        free(c->name);
        strv_free(c->argv);
        strv_free(c->env);
        for (size_t i = 0; i < c->n_reads; i++)
                free(c->reads[i].target);
        free(c->reads);
        free(c->expose.host);
        free(c->state);
        free(c->output);
        strv_free(c->after);
        free(c->rootfs);
        free(c->workdir);
}

struct manifest *manifest_free(struct manifest *m)
{
        if (!m)
                return NULL;
        for (unsigned z = 0; z < MANIFEST_ZONE_MAX; z++) {
                for (size_t i = 0; i < m->zones[z].n_containers; i++)
                        container_done(&m->zones[z].containers[i]);
                free(m->zones[z].containers);
        }
        for (size_t i = 0; i < m->n_assets; i++) {
                free(m->assets[i].name);
                free(m->assets[i].path);
        }
        free(m->assets);
        free(m->observer_order);
        free(m->app);
        free(m->base_dir);
        free(m->workspace_seed);
        strv_free(m->agent_paths);
        return mfree(m);
}

const struct manifest_zone *manifest_zone(const struct manifest *m, enum manifest_zone_kind kind)
{
        return (unsigned) kind < MANIFEST_ZONE_MAX ? &m->zones[kind] : NULL;
}

const struct manifest_container *manifest_find_container(const struct manifest *m, const char *name)
{
        for (unsigned z = 0; z < MANIFEST_ZONE_MAX; z++)
                for (size_t i = 0; i < m->zones[z].n_containers; i++)
                        if (streq(m->zones[z].containers[i].name, name))
                                return &m->zones[z].containers[i];
        return NULL;
}

const struct manifest_asset *manifest_find_asset(const struct manifest *m, const char *name)
{
        for (size_t i = 0; i < m->n_assets; i++)
                if (streq(m->assets[i].name, name))
                        return &m->assets[i];
        return NULL;
}

size_t manifest_observer_order(const struct manifest *m,
                               const struct manifest_container *const **ret)
{
        *ret = m->observer_order;
        return m->n_observer_order;
}

bool manifest_container_reads(const struct manifest_container *c, enum manifest_read_kind kind)
{
        for (size_t i = 0; i < c->n_reads; i++)
                if (c->reads[i].kind == kind)
                        return true;
        return false;
}

char *manifest_container_command_line(const struct manifest_container *c)
{
        struct strbuf sb = STRBUF_INIT;

        for (char **a = c->argv; a && *a; a++)
                strbuf_addf(&sb, "%s%s", a == c->argv ? "" : " ", *a);
        return strbuf_detach(&sb, NULL);
}

char *manifest_read_to_string(const struct manifest_read *r)
{
        switch (r->kind) {
        case MANIFEST_READ_ASSET:
                return xasprintf("assets.%s", r->target);
        case MANIFEST_READ_WORKSPACE:
                return xstrdup("workspace");
        case MANIFEST_READ_SERVICE_STATE:
                return xasprintf("services.%s.state", r->target);
        case MANIFEST_READ_OUTPUT:
                return xasprintf("%s.output", r->target);
        }
        return xstrdup("?");
}
