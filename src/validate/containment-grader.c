/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/util.h"
#include "probe/mountinfo.h"
#include "validate/containment-grader.h"

/*
 * Filesystems that are kernel interfaces rather than storage, exempt from the
 * "no writable storage" rule by type:
 *  - proc, sysfs, cgroup, cgroup2: control files, not files a process can
 *    create; the engine masks or mounts the dangerous parts read-only.
 *  - devpts: holds only pty nodes the kernel creates on open of ptmx.
 *  - mqueue: see docs/VALIDATE.md "/dev/mqueue". Docker mounts it rw with
 *    mode 1777 in every container; an unprivileged process can create POSIX
 *    message queues there, but they are kernel IPC objects of the subject's
 *    own (private) IPC namespace: bounded by RLIMIT_MSGQUEUE and
 *    fs.mqueue.queues_max, not directories or files, not executable, gone
 *    with the namespace. The private IPC namespace itself is required by the
 *    namespace rules, so a host-shared mqueue still fails.
 */
static const char *const kernel_fstypes[] = {
        "proc", "sysfs", "cgroup", "cgroup2", "devpts", "mqueue",
};

/* Engine plumbing that may be bound into the subject, accepted only when the
 * subject cannot write it (upstream list; both Docker init paths). */
static const char *const allowlisted_binds[] = {
        "/etc/hosts",        "/etc/hostname",         "/etc/resolv.conf",
        "/sbin/docker-init", "/usr/sbin/docker-init", "/run/podman-init",
};

/* Namespaces that must differ from the host's. user and time are shared
 * with the host by rootful Docker without userns-remap, by design. */
static const char *const separate_ns[] = { "pid", "mnt", "net", "ipc", "uts", "cgroup" };

struct grading {
        char **violations; /* proven: FAIL */
        char **unproven;   /* gaps: SKIP */
        char **notes;      /* PASS-side evidence */
        char *malformed;   /* first shape error */
        uint64_t uid, gid;
        json_t *allotted;         /* borrowed */
        json_t *writable_outside; /* owned array */
        json_t *controls;         /* owned object */
};

static void add(char ***v, const char *fmt, ...) printf_fmt(2, 3);
static void add(char ***v, const char *fmt, ...)
{
        cleanup_strbuf struct strbuf sb = STRBUF_INIT;
        va_list ap;

        va_start(ap, fmt);
        strbuf_vaddf(&sb, fmt, ap);
        va_end(ap);
        /* The same gap seen on many processes is one line. */
        if (!strv_contains(*v, sb.buf))
                strv_push(v, strbuf_detach(&sb, NULL));
}

static void malformed(struct grading *g, const char *what)
{
        if (!g->malformed)
                g->malformed = xstrdup(what);
}

static bool str_in(const char *s, const char *const *list, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (streq(s, list[i]))
                        return true;
        return false;
}

/* Typed accessors: a present value of the wrong type is malformed; absent or
 * null is "unknown" (false return, no error). */
static bool get_bool(struct grading *g, const json_t *o, const char *k, bool *ret)
{
        json_t *v = json_object_get(o, k);
        if (!v || json_is_null(v))
                return false;
        if (!json_is_boolean(v)) {
                malformed(g, k);
                return false;
        }
        *ret = json_is_true(v);
        return true;
}

static bool get_int(struct grading *g, const json_t *o, const char *k, json_int_t *ret)
{
        json_t *v = json_object_get(o, k);
        if (!v || json_is_null(v))
                return false;
        if (!json_is_integer(v)) {
                malformed(g, k);
                return false;
        }
        *ret = json_integer_value(v);
        return true;
}

static const char *get_str(struct grading *g, const json_t *o, const char *k)
{
        json_t *v = json_object_get(o, k);
        if (!v || json_is_null(v))
                return NULL;
        if (!json_is_string(v)) {
                malformed(g, k);
                return NULL;
        }
        return json_string_value(v);
}

static json_t *get_array(struct grading *g, const json_t *o, const char *k)
{
        json_t *v = json_object_get(o, k);
        if (!v || json_is_null(v))
                return NULL;
        if (!json_is_array(v)) {
                malformed(g, k);
                return NULL;
        }
        return v;
}

static json_t *get_object(struct grading *g, const json_t *o, const char *k)
{
        json_t *v = json_object_get(o, k);
        if (!v || json_is_null(v))
                return NULL;
        if (!json_is_object(v)) {
                malformed(g, k);
                return NULL;
        }
        return v;
}

static bool strings_contain(const json_t *arr, const char *s)
{
        size_t i;
        json_t *v;

        json_array_foreach(arr, i,
                           v) if (json_is_string(v) && streq(json_string_value(v), s)) return true;
        return false;
}

static bool is_allotted(const struct grading *g, const char *path)
{
        return strings_contain(g->allotted, path);
}

/* ---- launch settings (engine inspection) ---- */

static bool user_is_root(const char *user)
{
        /* Docker: "" means the image default, which is root unless the
         * image says otherwise; we always pass --user, so "" is suspect. */
        return !user || !*user || streq(user, "0") || streq(user, "root") ||
               startswith(user, "0:") || startswith(user, "root:");
}

static void grade_launch(struct grading *g, const json_t *launch)
{
        bool b;
        const char *s;
        json_t *arr, *v;
        size_t i;
        char expected_user[48];

        if (!launch) {
                add(&g->unproven, "launch settings were not inspected");
                return;
        }
        if (!get_bool(g, launch, "read_only_rootfs", &b))
                add(&g->unproven, "launch: read-only root setting unknown");
        else if (!b)
                add(&g->violations, "launch: image root is writable (ReadonlyRootfs=false)");
        if (get_bool(g, launch, "privileged", &b) && b)
                add(&g->violations, "launch: subject runs privileged (Privileged=true)");
        if ((arr = get_array(g, launch, "cap_add")))
                json_array_foreach(arr, i, v) if (json_is_string(v))
                        add(&g->violations, "launch: capability added: %s", json_string_value(v));
        arr = get_array(g, launch, "cap_drop");
        if (!arr || !strings_contain(arr, "ALL"))
                add(&g->violations, "launch: capabilities not all dropped (CapDrop lacks ALL)");
        arr = get_array(g, launch, "security_opt");
        if (!arr || (!strings_contain(arr, "no-new-privileges") &&
                     !strings_contain(arr, "no-new-privileges:true") &&
                     !strings_contain(arr, "no-new-privileges=true")))
                add(&g->violations, "launch: no-new-privileges is not set");
        if (arr && (strings_contain(arr, "seccomp=unconfined") ||
                    strings_contain(arr, "seccomp:unconfined")))
                add(&g->violations, "launch: seccomp is unconfined");
        if (arr && (strings_contain(arr, "apparmor=unconfined") ||
                    strings_contain(arr, "apparmor:unconfined")))
                add(&g->violations, "launch: apparmor is unconfined");

        (void) snprintf(expected_user, sizeof(expected_user), "%" PRIu64 ":%" PRIu64, g->uid,
                        g->gid);
        s = get_str(g, launch, "user");
        if (user_is_root(s))
                add(&g->violations, "launch: subject user is root ('%s')", s ? s : "");
        else if (!streq(s, expected_user))
                add(&g->violations, "launch: subject user is '%s', not %s", s, expected_user);

        static const struct {
                const char *key, *what;
        } modes[] = {
                { "pid_mode", "PID" },         { "ipc_mode", "IPC" },     { "uts_mode", "UTS" },
                { "network_mode", "network" }, { "userns_mode", "user" },
        };
        for (size_t k = 0; k < ELEMENTSOF(modes); k++) {
                s = get_str(g, launch, modes[k].key);
                if (s && streq(s, "host"))
                        add(&g->violations, "launch: shares the host's %s namespace (%s=host)",
                            modes[k].what, modes[k].key);
                else if (s && startswith(s, "container:"))
                        add(&g->violations, "launch: joins another container's %s namespace (%s)",
                            modes[k].what, s);
        }
        s = get_str(g, launch, "cgroupns_mode");
        if (!s || !streq(s, "private"))
                add(&g->violations, "launch: cgroup namespace is not private (CgroupnsMode=%s)",
                    s ? s : "");
        json_int_t n;
        if (get_int(g, launch, "devices", &n) && n > 0)
                add(&g->violations, "launch: %" JSON_INTEGER_FORMAT " host devices exposed", n);
        if ((arr = get_array(g, launch, "mounts")))
                json_array_foreach(arr, i, v)
                {
                        const char *type, *dst;
                        if (!json_is_object(v)) {
                                malformed(g, "launch.mounts[]");
                                continue;
                        }
                        type = get_str(g, v, "type");
                        dst = get_str(g, v, "destination");
                        if (type && (streq(type, "bind") || streq(type, "volume")))
                                add(&g->violations, "launch: %s mount at %s", type,
                                    dst ? dst : "?");
                }
        if ((arr = get_array(g, launch, "tmpfs")))
                json_array_foreach(arr, i, v) if (json_is_string(v) &&
                                                  !is_allotted(g, json_string_value(v)))
                        add(&g->violations, "launch: extra tmpfs at %s", json_string_value(v));
        if ((arr = get_array(g, launch, "port_host_ips")))
                json_array_foreach(arr, i, v) if (json_is_string(v) &&
                                                  !streq(json_string_value(v), "127.0.0.1"))
                        add(&g->violations, "launch: port published on '%s', not 127.0.0.1",
                            json_string_value(v));
}

/* ---- processes ---- */

static bool get_u64_array(struct grading *g, const json_t *o, const char *k, uint64_t *out,
                          size_t n)
{
        json_t *arr = get_array(g, o, k);
        if (!arr)
                return false;
        if (json_array_size(arr) != n) {
                malformed(g, k);
                return false;
        }
        for (size_t i = 0; i < n; i++) {
                json_t *v = json_array_get(arr, i);
                if (!json_is_integer(v) || json_integer_value(v) < 0) {
                        malformed(g, k);
                        return false;
                }
                out[i] = (uint64_t) json_integer_value(v);
        }
        return true;
}

static void grade_process(struct grading *g, const json_t *p, const json_t *first_ns,
                          const json_t *host_ns)
{
        json_int_t pid = 0, x;
        const char *comm;
        uint64_t ids[4];
        json_t *ns, *groups, *v;
        size_t i;
        bool unknown = false;

        if (!json_is_object(p)) {
                malformed(g, "processes[]");
                return;
        }
        if (!get_int(g, p, "pid", &pid)) {
                malformed(g, "processes[].pid");
                return;
        }
        comm = get_str(g, p, "comm");
        if (!comm)
                comm = "?";
        if (get_int(g, p, "status_errno", &x)) {
                add(&g->unproven,
                    "status of subject process %" JSON_INTEGER_FORMAT " unreadable (%s)", pid,
                    strerror((int) x));
                return;
        }
        for (int k = 0; k < 2; k++) {
                const char *key = k == 0 ? "uid" : "gid";
                uint64_t want = k == 0 ? g->uid : g->gid;
                if (!get_u64_array(g, p, key, ids, 4)) {
                        unknown = true;
                        continue;
                }
                for (int j = 0; j < 4; j++)
                        if (ids[j] != want) {
                                if (ids[j] == 0)
                                        add(&g->violations,
                                            "process %" JSON_INTEGER_FORMAT
                                            " (%s) runs as root (%s 0)",
                                            pid, comm, key);
                                else
                                        add(&g->violations,
                                            "process %" JSON_INTEGER_FORMAT " (%s) has %s %" PRIu64
                                            ", not %" PRIu64,
                                            pid, comm, key, ids[j], want);
                                break;
                        }
        }
        groups = get_array(g, p, "groups");
        if (!groups)
                unknown = true;
        else
                json_array_foreach(groups, i, v)
                {
                        if (!json_is_integer(v)) {
                                malformed(g, "processes[].groups[]");
                                break;
                        }
                        if ((uint64_t) json_integer_value(v) != g->gid)
                                add(&g->violations,
                                    "process %" JSON_INTEGER_FORMAT
                                    " (%s) holds supplementary group %" JSON_INTEGER_FORMAT,
                                    pid, comm, json_integer_value(v));
                }
        bool b;
        if (get_bool(g, p, "groups_truncated", &b) && b)
                add(&g->unproven,
                    "supplementary groups of process %" JSON_INTEGER_FORMAT " truncated", pid);

        static const char *const caps[] = { "cap_inh", "cap_prm", "cap_eff", "cap_bnd", "cap_amb" };
        for (size_t c = 0; c < ELEMENTSOF(caps); c++) {
                const char *hex = get_str(g, p, caps[c]);
                if (!hex) {
                        unknown = true;
                        continue;
                }
                if (strspn(hex, "0123456789abcdefABCDEF") != strlen(hex) || !*hex) {
                        malformed(g, caps[c]);
                        continue;
                }
                if (strspn(hex, "0") != strlen(hex))
                        add(&g->violations,
                            "process %" JSON_INTEGER_FORMAT " (%s) holds capabilities: %s=%s", pid,
                            comm, caps[c], hex);
        }
        if (!get_int(g, p, "no_new_privs", &x))
                unknown = true;
        else if (x != 1)
                add(&g->violations,
                    "process %" JSON_INTEGER_FORMAT
                    " (%s) lacks no_new_privs (NoNewPrivs=%" JSON_INTEGER_FORMAT ")",
                    pid, comm, x);
        if (!get_int(g, p, "seccomp", &x))
                unknown = true;
        else if (x == 0)
                add(&g->violations,
                    "process %" JSON_INTEGER_FORMAT " (%s) runs without seccomp (Seccomp=0)", pid,
                    comm);
        if (unknown)
                add(&g->unproven,
                    "confinement of process %" JSON_INTEGER_FORMAT " (%s) partly unknown", pid,
                    comm);

        ns = get_object(g, p, "ns");
        if (!ns) {
                add(&g->unproven, "namespaces of process %" JSON_INTEGER_FORMAT " unknown", pid);
                return;
        }
        for (size_t k = 0; k < ELEMENTSOF(separate_ns); k++) {
                json_t *mine = json_object_get(ns, separate_ns[k]);
                json_t *host = host_ns ? json_object_get(host_ns, separate_ns[k]) : NULL;
                json_t *first = first_ns ? json_object_get(first_ns, separate_ns[k]) : NULL;
                if (!mine || !json_is_integer(mine)) {
                        add(&g->unproven,
                            "%s namespace of process %" JSON_INTEGER_FORMAT " unknown",
                            separate_ns[k], pid);
                        continue;
                }
                if (host && json_is_integer(host) &&
                    json_integer_value(host) == json_integer_value(mine))
                        add(&g->violations, "subject shares the host's %s namespace (measured)",
                            separate_ns[k]);
                if (first && json_is_integer(first) &&
                    json_integer_value(first) != json_integer_value(mine))
                        add(&g->violations,
                            "process %" JSON_INTEGER_FORMAT
                            " (%s) is in another %s namespace than the subject's init",
                            pid, comm, separate_ns[k]);
        }
}

static void grade_processes(struct grading *g, const json_t *probe, const json_t *host_ns)
{
        json_t *procs = get_array(g, probe, "processes");
        json_int_t x;
        bool b;
        size_t i;
        json_t *p, *first_ns = NULL;

        if (get_int(g, probe, "anchor_errno", &x))
                add(&g->unproven, "the subject's init could not be measured (%s)",
                    strerror((int) x));
        if (!procs || json_array_size(procs) == 0) {
                add(&g->unproven, "process inventory is missing");
                return;
        }
        if (get_bool(g, probe, "processes_truncated", &b) && b)
                add(&g->unproven, "process inventory is truncated");
        if (get_int(g, probe, "foreign_processes", &x) && x > 0)
                add(&g->violations,
                    "%" JSON_INTEGER_FORMAT
                    " processes outside the subject are visible in its PID namespace",
                    x);
        if (get_int(g, probe, "unreadable_processes", &x) && x > 0)
                add(&g->unproven,
                    "%" JSON_INTEGER_FORMAT
                    " processes in the subject's PID namespace could not be attributed",
                    x);
        p = json_array_get(procs, 0);
        if (json_is_object(p))
                first_ns = json_object_get(p, "ns");
        if (first_ns && !json_is_object(first_ns))
                first_ns = NULL;
        if (!host_ns)
                add(&g->notes, "host namespaces not comparable here; judged by launch modes");
        json_array_foreach(procs, i, p) grade_process(g, p, first_ns, host_ns);
}

/* ---- mounts, write checks, controls ---- */

static const json_t *find_check(const json_t *checks, json_int_t mount_id)
{
        size_t i;
        json_t *c;

        json_array_foreach(checks, i, c)
        {
                json_t *id = json_object_get(c, "mount_id");
                if (json_is_integer(id) && json_integer_value(id) == mount_id)
                        return c;
        }
        return NULL;
}

static void record_writable(struct grading *g, const char *path)
{
        if (json_array_size(g->writable_outside) < 64)
                json_array_append_new(g->writable_outside, json_string(path));
}

static void grade_check(struct grading *g, const char *mp, const char *fstype, const json_t *c)
{
        const char *result = get_str(g, c, "result");
        const char *kind = get_str(g, c, "kind");
        json_int_t err = 0;
        bool truncated = false;
        json_t *findings;
        size_t i;
        json_t *f;
        bool allowlisted = str_in(mp, allowlisted_binds, ELEMENTSOF(allowlisted_binds));

        (void) get_int(g, c, "errno", &err);
        (void) get_bool(g, c, "truncated", &truncated);
        if (!result || !kind) {
                malformed(g, "write_checks[].result");
                return;
        }
        if (streq(result, "writable")) {
                bool any = false;
                findings = get_array(g, c, "findings");
                if (findings)
                        json_array_foreach(findings, i, f)
                        {
                                const char *fr = json_is_object(f) ? get_str(g, f, "result") : NULL;
                                const char *fp = json_is_object(f) ? get_str(g, f, "path") : NULL;
                                const char *ft = json_is_object(f) ? get_str(g, f, "type") : NULL;
                                if (!fr || !fp) {
                                        malformed(g, "findings[]");
                                        continue;
                                }
                                if (!streq(fr, "writable"))
                                        continue;
                                any = true;
                                add(&g->violations,
                                    "subject can write %s %s (on %s, %s): storage outside the "
                                    "allotted roots",
                                    ft && streq(ft, "f") ? "file" : "directory", fp, mp, fstype);
                                record_writable(g, fp);
                        }
                if (!any) {
                        if (allowlisted)
                                add(&g->violations,
                                    "allowlisted bind %s is writable by the subject", mp);
                        else
                                add(&g->violations,
                                    "subject can write %s (%s): storage outside the allotted roots",
                                    mp, fstype);
                        record_writable(g, mp);
                }
                return;
        }
        if (streq(result, "inconclusive")) {
                if (streq(kind, "shadowed"))
                        add(&g->unproven, "mount %s is over-mounted; its write check is unproven",
                            mp);
                else
                        add(&g->unproven, "write check inconclusive at %s (%s)", mp,
                            err > 0 ? strerror((int) err) : "unknown");
                return;
        }
        if (truncated) {
                add(&g->unproven, "write check truncated at %s", mp);
                return;
        }
        if (!streq(result, "denied") && !streq(result, "not-storage"))
                malformed(g, "write_checks[].result");
}

static void grade_mounts(struct grading *g, const json_t *probe)
{
        json_t *mounts = get_array(g, probe, "mounts");
        json_t *checks = get_array(g, probe, "write_checks");
        json_int_t x;
        bool b, root_seen = false;
        size_t i;
        json_t *m;
        unsigned n_exempt = 0;

        if (get_int(g, probe, "mounts_errno", &x) || !mounts || json_array_size(mounts) == 0) {
                add(&g->unproven, "mount inventory is missing");
                return;
        }
        if (get_bool(g, probe, "mounts_truncated", &b) && b)
                add(&g->unproven, "mount inventory is truncated");
        if (get_int(g, probe, "mounts_malformed", &x) && x > 0)
                add(&g->unproven, "mount inventory has %" JSON_INTEGER_FORMAT " unparsable lines",
                    x);
        if (get_int(g, probe, "root_errno", &x))
                add(&g->unproven, "the subject's root could not be entered (%s)",
                    strerror((int) x));

        json_array_foreach(mounts, i, m)
        {
                const char *mp, *fstype, *mopt, *sopt;
                json_int_t id;
                bool ro;
                const json_t *c;

                if (!json_is_object(m)) {
                        malformed(g, "mounts[]");
                        continue;
                }
                mp = get_str(g, m, "mount_point");
                fstype = get_str(g, m, "fstype");
                mopt = get_str(g, m, "mount_options");
                sopt = get_str(g, m, "super_options");
                if (!mp || !fstype || !mopt || !sopt || !get_int(g, m, "mount_id", &id)) {
                        malformed(g, "mounts[] fields");
                        continue;
                }
                ro = mount_options_has(mopt, "ro") || mount_options_has(sopt, "ro");
                if (streq(mp, "/")) {
                        root_seen = true;
                        if (!ro)
                                add(&g->violations, "image root / is mounted read-write (%s, %s)",
                                    fstype, mopt);
                }
                if (is_allotted(g, mp) || ro)
                        continue;
                if (str_in(fstype, kernel_fstypes, ELEMENTSOF(kernel_fstypes))) {
                        n_exempt++;
                        if (streq(fstype, "mqueue"))
                                add(&g->notes,
                                    "%s (mqueue) holds POSIX message queues of the private IPC "
                                    "namespace, not file storage",
                                    mp);
                        continue;
                }
                c = checks ? find_check(checks, id) : NULL;
                if (!c) {
                        add(&g->unproven, "no write check for %s (%s, read-write)", mp, fstype);
                        continue;
                }
                grade_check(g, mp, fstype, c);
        }
        if (!root_seen)
                add(&g->unproven, "mount inventory has no root mount");
        (void) n_exempt;
}

static void grade_controls(struct grading *g, const json_t *probe)
{
        json_t *controls = get_array(g, probe, "controls");
        size_t i;
        json_t *root;

        json_array_foreach(g->allotted, i, root)
        {
                const char *want = json_string_value(root);
                const json_t *found = NULL;
                size_t j;
                json_t *c;

                if (!want)
                        continue;
                if (controls)
                        json_array_foreach(controls, j, c)
                        {
                                const char *r = json_is_object(c) ? get_str(g, c, "root") : NULL;
                                if (r && streq(r, want))
                                        found = c;
                        }
                if (!found) {
                        add(&g->unproven, "positive control missing for %s", want);
                        continue;
                }
                const char *res = get_str(g, found, "result");
                json_int_t err = 0;
                (void) get_int(g, found, "errno", &err);
                json_object_set_new(g->controls, want, json_string(res ? res : "unknown"));
                if (!res || !streq(res, "writable"))
                        add(&g->unproven, "positive control failed for %s (%s%s%s)", want,
                            res ? res : "no result", err > 0 ? ": " : "",
                            err > 0 ? strerror((int) err) : "");
        }
}

static struct check_result *result_from(struct grading *g)
{
        struct check_result *r;

        if (g->malformed) {
                cleanup_free char *line =
                        xasprintf("malformed containment evidence: %s", g->malformed);
                r = check_result_new(CONTAINMENT_CHECK_ID, CHECK_FAIL);
                check_result_add_evidence(r, line);
                r->remediation = xstrdup("Report this: the helper and the grader disagree on "
                                         "the evidence format.");
                return r;
        }
        if (g->violations && g->violations[0]) {
                /* FAIL beats SKIP: a proven escape stands on its own. */
                r = check_result_new(CONTAINMENT_CHECK_ID, CHECK_FAIL);
                for (char **l = g->violations; *l; l++)
                        check_result_add_evidence(r, *l);
                for (char **l = g->unproven; l && *l; l++) {
                        cleanup_free char *line = xasprintf("also unproven: %s", *l);
                        check_result_add_evidence(r, line);
                }
                r->remediation = xstrdup(CONTAINMENT_REMEDIATION);
        } else if (g->unproven && g->unproven[0]) {
                r = check_result_new(CONTAINMENT_CHECK_ID, CHECK_SKIP);
                for (char **l = g->unproven; *l; l++)
                        check_result_add_evidence(r, *l);
        } else {
                r = check_result_new(CONTAINMENT_CHECK_ID, CHECK_PASS);
                check_result_add_evidence(r, "measured containment matches the contract");
                for (char **l = g->notes; l && *l; l++)
                        check_result_add_evidence(r, *l);
        }
        json_object_set(r->measured, "allotted_roots", g->allotted);
        json_object_set(r->measured, "writable_outside_roots", g->writable_outside);
        json_object_set(r->measured, "controls", g->controls);
        return r;
}

static void grading_done(struct grading *g)
{
        strv_free(g->violations);
        strv_free(g->unproven);
        strv_free(g->notes);
        free(g->malformed);
        json_decref(g->writable_outside);
        json_decref(g->controls);
}

struct check_result *containment_grade(const json_t *ev)
{
        struct grading g = { .uid = 65532, .gid = 65532 };
        struct check_result *r;
        json_t *user, *probe = NULL, *host_ns, *launch, *v;
        json_int_t x;
        const char *perr;

        if (!ev) {
                r = check_result_new(CONTAINMENT_CHECK_ID, CHECK_SKIP);
                check_result_add_evidence(r, "containment evidence is unavailable");
                return r;
        }
        g.writable_outside = json_array();
        g.controls = json_object();
        if (!g.writable_outside || !g.controls)
                oom();
        if (!json_is_object(ev)) {
                malformed(&g, "not an object");
                goto done;
        }
        if (!get_int(&g, ev, "schema", &x) || x != 1) {
                malformed(&g, "schema");
                goto done;
        }
        user = get_object(&g, ev, "subject_user");
        if (user) {
                json_int_t u, gg;
                if (!get_int(&g, user, "uid", &u) || !get_int(&g, user, "gid", &gg) || u < 0 ||
                    gg < 0) {
                        malformed(&g, "subject_user");
                        goto done;
                }
                g.uid = (uint64_t) u;
                g.gid = (uint64_t) gg;
        }
        g.allotted = get_array(&g, ev, "allotted_roots");
        if (!g.allotted || json_array_size(g.allotted) == 0) {
                malformed(&g, "allotted_roots");
                goto done;
        }
        launch = get_object(&g, ev, "launch");
        host_ns = get_object(&g, ev, "host_ns");
        probe = get_object(&g, ev, "probe");
        if (g.malformed)
                goto done;

        grade_launch(&g, launch);
        if (!probe) {
                perr = get_str(&g, ev, "probe_error");
                add(&g.unproven, "helper measurement is unavailable%s%s", perr ? ": " : "",
                    perr ? perr : "");
        } else {
                if (!get_int(&g, probe, "probe_schema", &x) || x != 1)
                        malformed(&g, "probe.probe_schema");
                else {
                        grade_processes(&g, probe, host_ns);
                        grade_mounts(&g, probe);
                        grade_controls(&g, probe);
                }
        }
done:
        r = result_from(&g);
        if (probe && (v = json_object_get(probe, "processes")) && json_is_array(v))
                json_object_set_new(r->measured, "process_count",
                                    json_integer((json_int_t) json_array_size(v)));
        if (probe && (v = json_object_get(probe, "mounts")) && json_is_array(v))
                json_object_set_new(r->measured, "mount_count",
                                    json_integer((json_int_t) json_array_size(v)));
        grading_done(&g);
        return r;
}

struct check_result *containment_grade_text(const char *text, size_t len)
{
        json_error_t err;
        json_t *ev = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
        struct check_result *r;

        if (!ev) {
                cleanup_free char *line = xasprintf("malformed containment evidence: %s (line %d)",
                                                    err.text, err.line);
                r = check_result_new(CONTAINMENT_CHECK_ID, CHECK_FAIL);
                check_result_add_evidence(r, line);
                r->remediation = xstrdup("Report this: the helper and the grader disagree on "
                                         "the evidence format.");
                return r;
        }
        r = containment_grade(ev);
        json_decref(ev);
        return r;
}
