/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "base/fd-util.h"
#include "base/limits.h"
#include "base/parse-util.h"
#include "base/util.h"
#include "base/mountinfo.h"

/* Fields before the optional ones: id parent maj:min root mount_point options. */
#define N_FIXED_FIELDS 6

/* Decodes the kernel's \ooo escapes (fs/proc_namespace.c mangle()); anything
 * else is copied literally. An escape that would yield NUL is rejected: no
 * path the kernel prints contains one. */
static int unescape(const char *s, size_t n, char **ret)
{
        cleanup_free char *out = xmalloc(n + 1);
        size_t j = 0;

        for (size_t i = 0; i < n; i++) {
                if (s[i] == '\\' && n - i >= 4 && s[i + 1] >= '0' && s[i + 1] <= '3' &&
                    s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
                        unsigned v = (unsigned) (s[i + 1] - '0') * 64 +
                                     (unsigned) (s[i + 2] - '0') * 8 + (unsigned) (s[i + 3] - '0');
                        if (v == 0)
                                return -EINVAL;
                        out[j++] = (char) v;
                        i += 3;
                } else
                        out[j++] = s[i];
        }
        out[j] = '\0';
        *ret = TAKE_PTR(out);
        return 0;
}

static void entry_done(struct mountinfo_entry *e)
{
        free(e->root);
        free(e->mount_point);
        free(e->mount_options);
        free(e->optional);
        free(e->fstype);
        free(e->source);
        free(e->super_options);
        *e = (struct mountinfo_entry){};
}

struct field {
        const char *p;
        size_t n;
};

static int parse_dev(const struct field *f, unsigned *ret_major, unsigned *ret_minor)
{
        char buf[32];
        char *colon;
        unsigned ma, mi;

        if (f->n == 0 || f->n >= sizeof(buf))
                return -EINVAL;
        memcpy(buf, f->p, f->n);
        buf[f->n] = '\0';
        colon = strchr(buf, ':');
        if (!colon)
                return -EINVAL;
        *colon = '\0';
        if (parse_uint(buf, 0, UINT32_MAX, &ma) < 0 ||
            parse_uint(colon + 1, 0, UINT32_MAX, &mi) < 0)
                return -EINVAL;
        *ret_major = ma;
        *ret_minor = mi;
        return 0;
}

static int parse_id(const struct field *f, unsigned *ret)
{
        char buf[16];

        if (f->n == 0 || f->n >= sizeof(buf))
                return -EINVAL;
        memcpy(buf, f->p, f->n);
        buf[f->n] = '\0';
        return parse_uint(buf, 0, UINT32_MAX, ret);
}

/* One line without its '\n'. Fields are separated by single spaces; the
 * kernel escapes spaces inside fields, so an empty field means malformed. */
static int parse_line(const char *line, size_t len, struct mountinfo_entry *ret)
{
        struct field fields[N_FIXED_FIELDS];
        const char *p = line, *end = line + len;
        const char *opt_start, *opt_end;
        struct field tail[3];
        struct mountinfo_entry e = {};
        int r;

        for (size_t i = 0; i < N_FIXED_FIELDS; i++) {
                const char *sp;
                if (p >= end)
                        return -EINVAL;
                sp = memchr(p, ' ', (size_t) (end - p));
                if (!sp)
                        return -EINVAL;
                fields[i] = (struct field){ p, (size_t) (sp - p) };
                if (fields[i].n == 0)
                        return -EINVAL;
                p = sp + 1;
        }
        /* Optional fields ("shared:N", "master:N", ...) up to the lone "-". */
        opt_start = p;
        for (;;) {
                const char *sp;
                if (p >= end)
                        return -EINVAL;
                sp = memchr(p, ' ', (size_t) (end - p));
                if (!sp)
                        return -EINVAL;
                if (sp - p == 1 && *p == '-') {
                        opt_end = p;
                        p = sp + 1;
                        break;
                }
                if (sp == p)
                        return -EINVAL;
                p = sp + 1;
        }
        /* fstype source super_options; the last runs to the end of line. */
        for (size_t i = 0; i < 3; i++) {
                const char *sp = i < 2 ? memchr(p, ' ', (size_t) (end - p)) : NULL;
                if (p > end || (i < 2 && !sp))
                        return -EINVAL;
                tail[i] = (struct field){ p, (size_t) ((sp ? sp : end) - p) };
                if (tail[i].n == 0 && i != 1)
                        return -EINVAL;
                if (sp)
                        p = sp + 1;
        }

        if (parse_id(&fields[0], &e.mount_id) < 0 || parse_id(&fields[1], &e.parent_id) < 0 ||
            parse_dev(&fields[2], &e.major, &e.minor) < 0)
                return -EINVAL;
        r = unescape(fields[3].p, fields[3].n, &e.root);
        if (r >= 0)
                r = unescape(fields[4].p, fields[4].n, &e.mount_point);
        if (r >= 0)
                r = unescape(tail[1].p, tail[1].n, &e.source);
        if (r < 0) {
                entry_done(&e);
                return r;
        }
        e.mount_options = xstrndup(fields[5].p, fields[5].n);
        e.optional =
                xstrndup(opt_start, opt_end > opt_start ? (size_t) (opt_end - opt_start - 1) : 0);
        e.fstype = xstrndup(tail[0].p, tail[0].n);
        e.super_options = xstrndup(tail[2].p, tail[2].n);
        *ret = e;
        return 0;
}

int mountinfo_parse(const char *buf, size_t len, struct mountinfo **ret)
{
        struct mountinfo *m = xcalloc(1, sizeof(*m));
        size_t alloc = 0;
        const char *p = buf, *end = buf + len;

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                size_t n = (size_t) ((nl ? nl : end) - p);
                struct mountinfo_entry e;

                if (n > MOUNTINFO_MAX_LINE) {
                        /* Cannot judge this mount: the inventory is incomplete. */
                        m->truncated = true;
                        break;
                }
                if (n > 0) {
                        if (m->n_entries >= MOUNTINFO_MAX_LINES) {
                                m->truncated = true;
                                break;
                        }
                        if (parse_line(p, n, &e) < 0)
                                m->n_malformed++;
                        else {
                                if (m->n_entries == alloc) {
                                        alloc = alloc ? alloc * 2 : 32;
                                        m->entries =
                                                xrealloc(m->entries, alloc * sizeof(*m->entries));
                                }
                                m->entries[m->n_entries++] = e;
                        }
                }
                if (!nl)
                        break;
                p = nl + 1;
        }
        *ret = m;
        return 0;
}

int mountinfo_load_at(int dirfd, const char *path, struct mountinfo **ret)
{
        cleanup_free char *text = NULL;
        size_t len;
        int r;

        r = read_full_file_at(dirfd, path, MOUNTINFO_MAX_BYTES, &text, &len);
        if (r < 0)
                return r;
        return mountinfo_parse(text, len, ret);
}

struct mountinfo *mountinfo_free(struct mountinfo *m)
{
        if (!m)
                return NULL;
        for (size_t i = 0; i < m->n_entries; i++)
                entry_done(&m->entries[i]);
        free(m->entries);
        return mfree(m);
}

bool mount_options_has(const char *options, const char *opt)
{
        return options && strn_list_has(options, strlen(options), ',', opt);
}

bool mountinfo_entry_is_read_only(const struct mountinfo_entry *e)
{
        return mount_options_has(e->mount_options, "ro") ||
               mount_options_has(e->super_options, "ro");
}

static bool path_has_prefix(const char *path, const char *prefix)
{
        size_t n = strlen(prefix);

        if (streq(prefix, "/"))
                return path[0] == '/';
        return strncmp(path, prefix, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

const struct mountinfo_entry *mountinfo_find_by_path(const struct mountinfo *m, const char *path)
{
        const struct mountinfo_entry *best = NULL;

        /* Later lines are stacked on top of earlier ones at the same point. */
        for (size_t i = 0; i < m->n_entries; i++)
                if (path_has_prefix(path, m->entries[i].mount_point) &&
                    (!best || strlen(m->entries[i].mount_point) >= strlen(best->mount_point)))
                        best = &m->entries[i];
        return best;
}

const struct mountinfo_entry *mountinfo_find_by_id(const struct mountinfo *m, unsigned mount_id)
{
        for (size_t i = 0; i < m->n_entries; i++)
                if (m->entries[i].mount_id == mount_id)
                        return &m->entries[i];
        return NULL;
}
