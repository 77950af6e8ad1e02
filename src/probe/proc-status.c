/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "base/parse-util.h"
#include "base/string-table.h"
#include "base/util.h"
#include "probe/proc-status.h"

static const char *const proc_cap_set_table[_PROC_CAP_MAX] = {
        [PROC_CAP_INH] = "CapInh", [PROC_CAP_PRM] = "CapPrm", [PROC_CAP_EFF] = "CapEff",
        [PROC_CAP_BND] = "CapBnd", [PROC_CAP_AMB] = "CapAmb",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(proc_cap_set, enum proc_cap_set);

/* Splits a value on tabs/spaces into at most max uint32 fields; returns the
 * count, or -EINVAL if a token is not a number or there are more than max. */
static int parse_u32_list(const char *v, uint32_t *out, size_t max, bool *ret_overflow)
{
        size_t n = 0;
        const char *p = v;

        *ret_overflow = false;
        for (;;) {
                char tok[16];
                size_t l;
                unsigned x;

                while (*p == ' ' || *p == '\t')
                        p++;
                if (!*p)
                        break;
                l = strcspn(p, " \t");
                if (l >= sizeof(tok))
                        return -EINVAL;
                memcpy(tok, p, l);
                tok[l] = '\0';
                if (parse_uint(tok, 0, UINT32_MAX, &x) < 0)
                        return -EINVAL;
                if (n == max) {
                        *ret_overflow = true;
                        return (int) n;
                }
                out[n++] = x;
                p += l;
        }
        return (int) n;
}

static int parse_hex64(const char *v, uint64_t *ret)
{
        uint64_t x = 0;
        size_t n = strlen(v);

        /* The kernel prints exactly 16 hex digits (fs/proc/array.c). */
        if (n == 0 || n > 16)
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                char c = v[i];
                unsigned d;
                if (c >= '0' && c <= '9')
                        d = (unsigned) (c - '0');
                else if (c >= 'a' && c <= 'f')
                        d = (unsigned) (c - 'a' + 10);
                else if (c >= 'A' && c <= 'F')
                        d = (unsigned) (c - 'A' + 10);
                else
                        return -EINVAL;
                x = (x << 4) | d;
        }
        *ret = x;
        return 0;
}

static void parse_field(struct proc_status *s, const char *key, const char *v)
{
        uint32_t ids[4];
        bool overflow;
        int n;

        /* Duplicate keys: the first one wins (the kernel never repeats
         * one, so a repeat is hostile or corrupt input). */
        if (streq(key, "Name")) {
                if (s->has_name)
                        return;
                size_t l = strlen(v);
                if (l < sizeof(s->name)) {
                        memcpy(s->name, v, l + 1);
                        s->has_name = true;
                }
        } else if (streq(key, "PPid") || streq(key, "TracerPid")) {
                bool is_ppid = key[0] == 'P';
                int x;
                if (is_ppid ? s->has_ppid : s->has_tracer_pid)
                        return;
                if (parse_int(v, 0, INT32_MAX, &x) >= 0) {
                        if (is_ppid) {
                                s->ppid = x;
                                s->has_ppid = true;
                        } else {
                                s->tracer_pid = x;
                                s->has_tracer_pid = true;
                        }
                }
        } else if (streq(key, "Uid") || streq(key, "Gid")) {
                bool is_uid = key[0] == 'U';
                if (is_uid ? s->has_uid : s->has_gid)
                        return;
                n = parse_u32_list(v, ids, 4, &overflow);
                if (n == 4 && !overflow) {
                        memcpy(is_uid ? s->uid : s->gid, ids, sizeof(ids));
                        if (is_uid)
                                s->has_uid = true;
                        else
                                s->has_gid = true;
                }
        } else if (streq(key, "Groups")) {
                if (s->has_groups)
                        return;
                n = parse_u32_list(v, s->groups, PROC_STATUS_MAX_GROUPS, &overflow);
                if (n >= 0) {
                        s->n_groups = (size_t) n;
                        s->groups_truncated = overflow;
                        s->has_groups = true;
                }
        } else if (streq(key, "NoNewPrivs") || streq(key, "Seccomp")) {
                int x;
                if ((key[0] == 'N' && s->has_no_new_privs) || (key[0] == 'S' && s->has_seccomp))
                        return;
                if (parse_int(v, 0, 2, &x) >= 0) {
                        if (key[0] == 'N' && x <= 1) {
                                s->no_new_privs = x;
                                s->has_no_new_privs = true;
                        } else if (key[0] == 'S') {
                                s->seccomp = x;
                                s->has_seccomp = true;
                        }
                }
        } else {
                for (size_t i = 0; i < _PROC_CAP_MAX; i++)
                        if (streq(key, proc_cap_set_table[i]) && !s->has_caps[i]) {
                                uint64_t c;
                                if (parse_hex64(v, &c) >= 0) {
                                        s->caps[i] = c;
                                        s->has_caps[i] = true;
                                }
                        }
        }
}

int proc_status_parse(const char *buf, size_t len, struct proc_status *ret)
{
        struct proc_status s = {};
        const char *p = buf, *end;

        if (!buf && len > 0)
                return -EINVAL;
        if (len > PROC_STATUS_MAX_BYTES) {
                len = PROC_STATUS_MAX_BYTES;
                s.truncated = true;
        }
        end = buf + len;
        while (p && p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                size_t n = (size_t) ((nl ? nl : end) - p);
                const char *colon = memchr(p, ':', n);

                /* A line cut by the bound is not trusted. */
                if (colon && (nl || !s.truncated)) {
                        char key[32];
                        char val[1024];
                        size_t kl = (size_t) (colon - p);
                        const char *v = colon + 1;
                        size_t vl = n - kl - 1;

                        while (vl > 0 && (*v == '\t' || *v == ' ')) {
                                v++;
                                vl--;
                        }
                        while (vl > 0 && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
                                vl--;
                        if (kl < sizeof(key) && memchr(p, '\0', n) == NULL) {
                                bool cut = false;
                                memcpy(key, p, kl);
                                key[kl] = '\0';
                                if (vl >= sizeof(val)) {
                                        /* Only Groups can be this long: keep
                                         * whole numbers up to the buffer and
                                         * say the list is cut. */
                                        vl = sizeof(val) - 1;
                                        while (vl > 0 && v[vl] != ' ' && v[vl] != '\t')
                                                vl--;
                                        cut = true;
                                }
                                memcpy(val, v, vl);
                                val[vl] = '\0';
                                if (!cut || streq(key, "Groups"))
                                        parse_field(&s, key, val);
                                if (cut && s.has_groups && streq(key, "Groups"))
                                        s.groups_truncated = true;
                        }
                }
                p = nl ? nl + 1 : NULL;
        }
        *ret = s;
        return 0;
}
