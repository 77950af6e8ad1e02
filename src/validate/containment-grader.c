/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/util.h"
#include "probe/containment-probe.h"
#include "base/mountinfo.h"
#include "probe/write-check.h"
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
        char **violations;                 /* proven: FAIL */
        char **unproven;                   /* gaps: SKIP */
        char **notes;                      /* PASS-side evidence */
        char **malformed;                  /* shape errors and impossible results: FAIL */
        unsigned n_violations, n_unproven; /* every report, even a repeated line */
        json_t *item; /* borrowed: problems[] of the process/mount being graded */
        uint64_t uid, gid;
        json_t *allotted;         /* borrowed */
        json_t *writable_outside; /* owned array */
        json_t *controls;         /* owned object */
        json_t *processes;        /* owned array: measured processes with verdicts */
        json_t *mounts;           /* owned array: measured mounts with verdicts */
};

static void vadd(char ***v, const char *fmt, va_list ap) printf_fmt(2, 0);
static void vadd(char ***v, const char *fmt, va_list ap)
{
        cleanup_strbuf struct strbuf sb = STRBUF_INIT;

        strbuf_vaddf(&sb, fmt, ap);
        /* The same gap seen on many processes is one line. */
        if (!strv_contains(*v, sb.buf))
                strv_push(v, strbuf_detach(&sb, NULL));
}

static void add(char ***v, const char *fmt, ...) printf_fmt(2, 3);
static void add(char ***v, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vadd(v, fmt, ap);
        va_end(ap);
}

/* A proven violation (FAIL) or a gap (SKIP); either is also recorded on the
 * item being graded, so the report shows each mount's and process's verdict
 * with its reasons. */
static void record_problem(struct grading *g, bool is_violation, const char *fmt, va_list ap)
        printf_fmt(3, 0);
static void record_problem(struct grading *g, bool is_violation, const char *fmt, va_list ap)
{
        cleanup_strbuf struct strbuf sb = STRBUF_INIT;

        strbuf_vaddf(&sb, fmt, ap);
        add(is_violation ? &g->violations : &g->unproven, "%s", sb.buf);
        if (is_violation)
                g->n_violations++;
        else
                g->n_unproven++;
        if (g->item)
                json_array_append_new(g->item, json_string(sb.buf));
}

static void violation(struct grading *g, const char *fmt, ...) printf_fmt(2, 3);
static void violation(struct grading *g, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        record_problem(g, true, fmt, ap);
        va_end(ap);
}

static void gap(struct grading *g, const char *fmt, ...) printf_fmt(2, 3);
static void gap(struct grading *g, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        record_problem(g, false, fmt, ap);
        va_end(ap);
}

static void malformed(struct grading *g, const char *fmt, ...) printf_fmt(2, 3);
static void malformed(struct grading *g, const char *fmt, ...)
{
        va_list ap;

        /* A handful say enough; a hostile document could repeat one forever. */
        if (strv_length(g->malformed) >= 8)
                return;
        va_start(ap, fmt);
        vadd(&g->malformed, fmt, ap);
        va_end(ap);
}

/* Grading one process or mount: its problems go to obj.problems, and its
 * verdict is "violation", "unproven" or ok_verdict. */
struct item_mark {
        unsigned violations, unproven;
};

static struct item_mark item_begin(struct grading *g, json_t *obj)
{
        json_t *problems = json_array();

        if (!problems || json_object_set_new(obj, "problems", problems) < 0)
                oom();
        g->item = problems;
        return (struct item_mark){ g->n_violations, g->n_unproven };
}

static void item_end(struct grading *g, json_t *obj, struct item_mark m, const char *ok_verdict)
{
        const char *v = g->n_violations > m.violations ? "violation"
                        : g->n_unproven > m.unproven   ? "unproven"
                                                       : ok_verdict;
        json_object_set_new(obj, "verdict", json_string(v));
        g->item = NULL;
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
                malformed(g, "%s", k);
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
                malformed(g, "%s", k);
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
                malformed(g, "%s", k);
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
                malformed(g, "%s", k);
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
                malformed(g, "%s", k);
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
                gap(g, "launch settings were not inspected");
                return;
        }
        if (!get_bool(g, launch, "read_only_rootfs", &b))
                gap(g, "launch: read-only root setting unknown");
        else if (!b)
                violation(g, "launch: image root is writable (ReadonlyRootfs=false)");
        if (get_bool(g, launch, "privileged", &b) && b)
                violation(g, "launch: subject runs privileged (Privileged=true)");
        if ((arr = get_array(g, launch, "cap_add")))
                json_array_foreach(arr, i, v) if (json_is_string(v))
                        violation(g, "launch: capability added: %s", json_string_value(v));
        arr = get_array(g, launch, "cap_drop");
        if (!arr || !strings_contain(arr, "ALL"))
                violation(g, "launch: capabilities not all dropped (CapDrop lacks ALL)");
        arr = get_array(g, launch, "security_opt");
        if (!arr || (!strings_contain(arr, "no-new-privileges") &&
                     !strings_contain(arr, "no-new-privileges:true") &&
                     !strings_contain(arr, "no-new-privileges=true")))
                violation(g, "launch: no-new-privileges is not set");
        if (arr && (strings_contain(arr, "seccomp=unconfined") ||
                    strings_contain(arr, "seccomp:unconfined")))
                violation(g, "launch: seccomp is unconfined");
        if (arr && (strings_contain(arr, "apparmor=unconfined") ||
                    strings_contain(arr, "apparmor:unconfined")))
                violation(g, "launch: apparmor is unconfined");

        (void) snprintf(expected_user, sizeof(expected_user), "%" PRIu64 ":%" PRIu64, g->uid,
                        g->gid);
        s = get_str(g, launch, "user");
        if (user_is_root(s))
                violation(g, "launch: subject user is root ('%s')", s ? s : "");
        else if (!streq(s, expected_user))
                violation(g, "launch: subject user is '%s', not %s", s, expected_user);

        static const struct {
                const char *key, *what;
        } modes[] = {
                { "pid_mode", "PID" },         { "ipc_mode", "IPC" },     { "uts_mode", "UTS" },
                { "network_mode", "network" }, { "userns_mode", "user" },
        };
        for (size_t k = 0; k < ELEMENTSOF(modes); k++) {
                s = get_str(g, launch, modes[k].key);
                if (s && streq(s, "host"))
                        violation(g, "launch: shares the host's %s namespace (%s=host)",
                                  modes[k].what, modes[k].key);
                else if (s && startswith(s, "container:"))
                        violation(g, "launch: joins another container's %s namespace (%s)",
                                  modes[k].what, s);
        }
        s = get_str(g, launch, "cgroupns_mode");
        if (!s || !streq(s, "private"))
                violation(g, "launch: cgroup namespace is not private (CgroupnsMode=%s)",
                          s ? s : "");
        json_int_t n;
        if (get_int(g, launch, "devices", &n) && n > 0)
                violation(g, "launch: %" JSON_INTEGER_FORMAT " host devices exposed", n);
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
                                violation(g, "launch: %s mount at %s", type, dst ? dst : "?");
                }
        if ((arr = get_array(g, launch, "tmpfs")))
                json_array_foreach(arr, i, v) if (json_is_string(v) &&
                                                  !is_allotted(g, json_string_value(v)))
                        violation(g, "launch: extra tmpfs at %s", json_string_value(v));
        if ((arr = get_array(g, launch, "port_host_ips")))
                json_array_foreach(arr, i, v) if (json_is_string(v) &&
                                                  !streq(json_string_value(v), "127.0.0.1"))
                        violation(g, "launch: port published on '%s', not 127.0.0.1",
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
                malformed(g, "%s", k);
                return false;
        }
        for (size_t i = 0; i < n; i++) {
                json_t *v = json_array_get(arr, i);
                if (!json_is_integer(v) || json_integer_value(v) < 0) {
                        malformed(g, "%s", k);
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
                gap(g, "status of subject process %" JSON_INTEGER_FORMAT " unreadable (%s)", pid,
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
                                        violation(g,
                                                  "process %" JSON_INTEGER_FORMAT
                                                  " (%s) runs as root (%s 0)",
                                                  pid, comm, key);
                                else
                                        violation(g,
                                                  "process %" JSON_INTEGER_FORMAT
                                                  " (%s) has %s %" PRIu64 ", not %" PRIu64,
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
                                violation(g,
                                          "process %" JSON_INTEGER_FORMAT
                                          " (%s) holds supplementary group %" JSON_INTEGER_FORMAT,
                                          pid, comm, json_integer_value(v));
                }
        bool b;
        if (get_bool(g, p, "groups_truncated", &b) && b)
                gap(g, "supplementary groups of process %" JSON_INTEGER_FORMAT " truncated", pid);

        static const char *const caps[] = { "cap_inh", "cap_prm", "cap_eff", "cap_bnd", "cap_amb" };
        for (size_t c = 0; c < ELEMENTSOF(caps); c++) {
                const char *hex = get_str(g, p, caps[c]);
                if (!hex) {
                        unknown = true;
                        continue;
                }
                if (strspn(hex, "0123456789abcdefABCDEF") != strlen(hex) || !*hex) {
                        malformed(g, "%s", caps[c]);
                        continue;
                }
                if (strspn(hex, "0") != strlen(hex))
                        violation(g,
                                  "process %" JSON_INTEGER_FORMAT " (%s) holds capabilities: %s=%s",
                                  pid, comm, caps[c], hex);
        }
        if (!get_int(g, p, "no_new_privs", &x))
                unknown = true;
        else if (x != 1)
                violation(g,
                          "process %" JSON_INTEGER_FORMAT
                          " (%s) lacks no_new_privs (NoNewPrivs=%" JSON_INTEGER_FORMAT ")",
                          pid, comm, x);
        if (!get_int(g, p, "seccomp", &x))
                unknown = true;
        else if (x == 0)
                violation(g,
                          "process %" JSON_INTEGER_FORMAT " (%s) runs without seccomp (Seccomp=0)",
                          pid, comm);
        if (unknown)
                gap(g, "confinement of process %" JSON_INTEGER_FORMAT " (%s) partly unknown", pid,
                    comm);

        ns = get_object(g, p, "ns");
        if (!ns) {
                gap(g, "namespaces of process %" JSON_INTEGER_FORMAT " unknown", pid);
                return;
        }
        for (size_t k = 0; k < ELEMENTSOF(separate_ns); k++) {
                json_t *mine = json_object_get(ns, separate_ns[k]);
                json_t *host = host_ns ? json_object_get(host_ns, separate_ns[k]) : NULL;
                json_t *first = first_ns ? json_object_get(first_ns, separate_ns[k]) : NULL;
                if (!mine || !json_is_integer(mine)) {
                        gap(g, "%s namespace of process %" JSON_INTEGER_FORMAT " unknown",
                            separate_ns[k], pid);
                        continue;
                }
                if (host && json_is_integer(host) &&
                    json_integer_value(host) == json_integer_value(mine))
                        violation(g, "subject shares the host's %s namespace (measured)",
                                  separate_ns[k]);
                if (first && json_is_integer(first) &&
                    json_integer_value(first) != json_integer_value(mine))
                        violation(g,
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
                gap(g, "the subject's init could not be measured (%s)", strerror((int) x));
        if (!procs || json_array_size(procs) == 0) {
                gap(g, "process inventory is missing");
                return;
        }
        if (get_bool(g, probe, "processes_truncated", &b) && b)
                gap(g, "process inventory is truncated");
        if (get_int(g, probe, "foreign_processes", &x) && x > 0)
                violation(g,
                          "%" JSON_INTEGER_FORMAT
                          " processes outside the subject are visible in its PID namespace",
                          x);
        if (get_int(g, probe, "unreadable_processes", &x) && x > 0)
                gap(g,
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
        json_array_foreach(procs, i, p)
        {
                /* The report shows each process as measured, with its verdict. */
                json_t *shown = json_is_object(p) ? json_deep_copy(p) : json_object();
                struct item_mark m;

                if (!shown)
                        oom();
                m = item_begin(g, shown);
                grade_process(g, p, first_ns, host_ns);
                item_end(g, shown, m, "confined");
                json_array_append_new(g->processes, shown);
        }
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

/* What the helper can honestly report (probe/write-check.h): a refusal always
 * carries EACCES, EPERM or EROFS; "not-storage" is a file type, reported only
 * for a file mount; a failure that proves nothing carries its errno. Anything
 * else is impossible: a broken helper, or a forgery such as a tracer
 * rewriting "writable" into "denied", and the whole document is refused. */
static void check_plausible(struct grading *g, const char *where, const char *kind,
                            const char *result, json_int_t err, const char *type)
{
        switch (write_result_from_string(result)) {
        case WRITE_DENIED:
                if (err != EACCES && err != EPERM && err != EROFS)
                        malformed(g,
                                  "%s: denied with errno %" JSON_INTEGER_FORMAT
                                  " (impossible: only EACCES, EPERM or EROFS deny a write)",
                                  where, err);
                break;
        case WRITE_INCONCLUSIVE:
                if (err <= 0 && !streq(kind, "shadowed"))
                        malformed(g, "%s: inconclusive without an errno (impossible)", where);
                break;
        case WRITE_NOT_STORAGE:
                if (!streq(kind, "file") || err != 0 || !type || strlen(type) != 1 ||
                    !strchr("cbpsl", type[0]))
                        malformed(g,
                                  "%s: not-storage for a %s '%s' (impossible: only device "
                                  "nodes, FIFOs, sockets and symlinks are not storage)",
                                  where, kind, type ? type : "");
                break;
        case WRITE_WRITABLE:
                break;
        default:
                malformed(g, "%s: unknown write result '%s'", where, result);
        }
}

/* A walk that hit a bound proves nothing about the rest of its mount. The
 * bound is named as in walk_bounds (max_entries, ...), which holds its value. */
static void grade_truncation(struct grading *g, const char *mp, const json_t *c,
                             const json_t *bounds)
{
        const char *by = get_str(g, c, "truncated_by");
        json_int_t visited = 0, limit = -1;

        (void) get_int(g, c, "visited", &visited);
        if (by && bounds && get_int(g, bounds, by, &limit))
                gap(g,
                    "write check truncated at %s: walk bound %s=%" JSON_INTEGER_FORMAT
                    " reached after %" JSON_INTEGER_FORMAT
                    " entries; the rest of the mount is unproven",
                    mp, by, limit, visited);
        else
                gap(g,
                    "write check truncated at %s after %" JSON_INTEGER_FORMAT
                    " entries; the rest of the mount is unproven",
                    mp, visited);
}

/* Judges one mount's write check; returns the mount's verdict when it holds
 * no violation or gap ("denied" or "not-storage"). */
static const char *grade_check(struct grading *g, const char *mp, const char *fstype,
                               const json_t *c, const json_t *bounds)
{
        const char *result = get_str(g, c, "result");
        const char *kind = get_str(g, c, "kind");
        const char *type = get_str(g, c, "type");
        json_int_t err = 0;
        bool truncated = false, any = false, finding_writable = false;
        json_t *findings, *f;
        size_t i;
        bool allowlisted = str_in(mp, allowlisted_binds, ELEMENTSOF(allowlisted_binds));

        if (!result || !kind || !get_int(g, c, "errno", &err)) {
                malformed(g, "write_checks[] at %s: result, kind and errno are required", mp);
                return "unproven";
        }
        (void) get_bool(g, c, "truncated", &truncated);
        check_plausible(g, mp, kind, result, err, type);

        findings = get_array(g, c, "findings");
        if (findings)
                json_array_foreach(findings, i, f)
                {
                        const char *fr = json_is_object(f) ? get_str(g, f, "result") : NULL;
                        const char *fp = json_is_object(f) ? get_str(g, f, "path") : NULL;
                        const char *ft = json_is_object(f) ? get_str(g, f, "type") : NULL;
                        json_int_t ferr = 0;

                        if (!fr || !fp || !get_int(g, f, "errno", &ferr)) {
                                malformed(g,
                                          "findings[] at %s: result, path and errno are required",
                                          mp);
                                continue;
                        }
                        /* A walk records only what it could write or could
                         * not decide; a recorded refusal is impossible. */
                        if (!streq(fr, "writable") && !streq(fr, "inconclusive")) {
                                malformed(g, "finding %s: '%s' (impossible in a walk)", fp, fr);
                                continue;
                        }
                        check_plausible(g, fp, "walk", fr, ferr, ft);
                        if (!streq(fr, "writable"))
                                continue;
                        finding_writable = true;
                        if (!streq(result, "writable"))
                                continue; /* refused below as inconsistent */
                        any = true;
                        violation(g,
                                  "subject can write %s %s (on %s, %s): storage outside the "
                                  "allotted roots",
                                  ft && streq(ft, "f") ? "file" : "directory", fp, mp, fstype);
                        record_writable(g, fp);
                }
        if (finding_writable && !streq(result, "writable"))
                malformed(g, "write check at %s: '%s' although a finding is writable (impossible)",
                          mp, result);

        if (truncated)
                grade_truncation(g, mp, c, bounds);
        if (streq(result, "writable")) {
                if (!any) {
                        if (allowlisted)
                                violation(g, "allowlisted bind %s is writable by the subject", mp);
                        else
                                violation(g,
                                          "subject can write %s (%s): storage outside the "
                                          "allotted roots",
                                          mp, fstype);
                        record_writable(g, mp);
                }
                return "violation";
        }
        if (streq(result, "inconclusive")) {
                if (streq(kind, "shadowed"))
                        gap(g, "mount %s is over-mounted; its write check is unproven", mp);
                else
                        gap(g, "write check inconclusive at %s (%s)", mp,
                            err > 0 ? strerror((int) err) : "unknown");
                return "unproven";
        }
        return streq(result, "not-storage") ? "not-storage" : "denied";
}

/* Grades one mount; returns its verdict when it holds no violation or gap
 * (read-only, allotted, kernel-interface, denied, not-storage). A copy of
 * its write check goes into shown. */
static const char *grade_mount(struct grading *g, const json_t *m, const json_t *checks,
                               const json_t *bounds, json_t *shown, bool *root_seen)
{
        const char *mp, *fstype, *mopt, *sopt;
        const json_t *c;
        json_int_t id;
        bool ro;

        mp = get_str(g, m, "mount_point");
        fstype = get_str(g, m, "fstype");
        mopt = get_str(g, m, "mount_options");
        sopt = get_str(g, m, "super_options");
        if (!mp || !fstype || !mopt || !sopt || !get_int(g, m, "mount_id", &id)) {
                malformed(g, "mounts[]: mount_id, mount_point, fstype and options are required");
                return "unproven";
        }
        ro = mount_options_has(mopt, "ro") || mount_options_has(sopt, "ro");
        if (streq(mp, "/")) {
                *root_seen = true;
                if (!ro)
                        violation(g, "image root / is mounted read-write (%s, %s)", fstype, mopt);
        }
        if (is_allotted(g, mp))
                return "allotted";
        if (ro)
                return "read-only";
        if (str_in(fstype, kernel_fstypes, ELEMENTSOF(kernel_fstypes))) {
                if (streq(fstype, "mqueue"))
                        add(&g->notes,
                            "%s (mqueue) holds POSIX message queues of the private IPC "
                            "namespace, not file storage",
                            mp);
                return "kernel-interface";
        }
        c = checks ? find_check(checks, id) : NULL;
        if (!c || !json_is_object(c)) {
                gap(g, "no write check for %s (%s, read-write)", mp, fstype);
                return "unproven";
        }
        json_object_set_new(shown, "write_check", json_deep_copy(c));
        return grade_check(g, mp, fstype, c, bounds);
}

static void grade_mounts(struct grading *g, const json_t *probe)
{
        json_t *mounts = get_array(g, probe, "mounts");
        json_t *checks = get_array(g, probe, "write_checks");
        json_t *bounds = get_object(g, probe, "walk_bounds");
        json_int_t x;
        bool b, root_seen = false;
        size_t i;
        json_t *m;

        if (get_int(g, probe, "mounts_errno", &x) || !mounts || json_array_size(mounts) == 0) {
                gap(g, "mount inventory is missing");
                return;
        }
        if (get_bool(g, probe, "mounts_truncated", &b) && b)
                gap(g, "mount inventory is truncated");
        if (get_int(g, probe, "mounts_malformed", &x) && x > 0)
                gap(g, "mount inventory has %" JSON_INTEGER_FORMAT " unparsable lines", x);
        if (get_int(g, probe, "root_errno", &x))
                gap(g, "the subject's root could not be entered (%s)", strerror((int) x));

        json_array_foreach(mounts, i, m)
        {
                const char *verdict;
                json_t *shown;
                struct item_mark mark;

                if (!json_is_object(m)) {
                        malformed(g, "mounts[] is not an object");
                        continue;
                }
                shown = json_deep_copy(m);
                if (!shown)
                        oom();
                mark = item_begin(g, shown);
                verdict = grade_mount(g, m, checks, bounds, shown, &root_seen);
                item_end(g, shown, mark, verdict);
                json_array_append_new(g->mounts, shown);
        }
        if (!root_seen)
                gap(g, "mount inventory has no root mount");
}

static void grade_controls(struct grading *g, const json_t *probe)
{
        json_t *controls = get_array(g, probe, "controls");
        size_t i;
        json_t *root;

        json_array_foreach(g->allotted, i, root)
        {
                const char *want = json_string_value(root), *res;
                const json_t *found = NULL;
                json_int_t err = 0;
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
                        gap(g, "positive control missing for %s", want);
                        continue;
                }
                res = get_str(g, found, "result");
                if (!res || !get_int(g, found, "errno", &err)) {
                        malformed(g, "control for %s: result and errno are required", want);
                        continue;
                }
                check_plausible(g, want, "control", res, err, NULL);
                json_object_set_new(g->controls, want, json_string(res));
                if (!streq(res, "writable"))
                        gap(g, "positive control failed for %s (%s%s%s)", want, res,
                            err > 0 ? ": " : "", err > 0 ? strerror((int) err) : "");
        }
}

/* ---- the image and the helper ---- */

static void grade_image(struct grading *g, const json_t *image)
{
        json_t *volumes = get_array(g, image, "volumes"), *v;
        size_t i;

        if (!volumes) {
                malformed(g, "image.volumes is required");
                return;
        }
        /* Docker gives every declared VOLUME an anonymous volume: storage on
         * the host's disk that outlives the subject and is bounded by no
         * budget, wherever it is mounted (under /tmp too). */
        json_array_foreach(volumes, i, v)
        {
                if (!json_is_string(v)) {
                        malformed(g, "image.volumes[] is not a string");
                        continue;
                }
                violation(g,
                          "image declares VOLUME %s: persistent storage outside the allotted "
                          "roots and their budget",
                          json_string_value(v));
        }
}

/* The helper's own account of whether anyone could have tampered with it
 * (containment-probe.h). Refused outright when it was traceable or traced:
 * nothing else in the document can then be believed. */
static void grade_helper(struct grading *g, const json_t *probe)
{
        json_t *helper = get_object(g, probe, "helper");
        json_int_t dumpable = -1, tracer = 0;

        if (!helper || !get_int(g, helper, "dumpable_at_start", &dumpable)) {
                malformed(g, "probe.helper.dumpable_at_start is required");
                return;
        }
        /* 1 is SUID_DUMP_USER: the kernel did not make the helper
         * non-dumpable at exec, so its binary was readable. */
        if (dumpable == 1)
                malformed(g, "the helper was dumpable when it started (its binary is readable): a "
                             "process of the subject's uid could trace it and rewrite its results");
        if (!get_int(g, helper, "tracer_pid", &tracer))
                gap(g, "whether the helper was traced is unknown");
        else if (tracer != 0)
                malformed(g,
                          "the helper was traced by process %" JSON_INTEGER_FORMAT
                          ": its results cannot be trusted",
                          tracer);
}

/* Grades section (may be NULL) with fn, and shows a copy of it in measured
 * under key with its verdict and problems. */
static void grade_section(struct grading *g, json_t *measured, const char *key,
                          const json_t *section, const char *ok_verdict,
                          void (*fn)(struct grading *, const json_t *))
{
        json_t *shown = section ? json_deep_copy(section) : json_object();
        struct item_mark m;

        if (!shown)
                oom();
        m = item_begin(g, shown);
        fn(g, section);
        item_end(g, shown, m, section ? ok_verdict : "unproven");
        json_object_set_new(measured, key, shown);
}

static struct check_result *result_from(struct grading *g)
{
        struct check_result *r;

        if (g->malformed) {
                r = check_result_new(CONTAINMENT_CHECK_ID, CHECK_FAIL);
                for (char **l = g->malformed; *l; l++) {
                        cleanup_free char *line =
                                xasprintf("malformed containment evidence: %s", *l);
                        check_result_add_evidence(r, line);
                }
                r->remediation = xstrdup(CONTAINMENT_MALFORMED_REMEDIATION);
        } else if (g->violations && g->violations[0]) {
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
        json_object_set(r->measured, "allotted_roots", g->allotted ? g->allotted : json_array());
        json_object_set(r->measured, "writable_outside_roots", g->writable_outside);
        json_object_set(r->measured, "controls", g->controls);
        return r;
}

static void grading_done(struct grading *g)
{
        strv_free(g->violations);
        strv_free(g->unproven);
        strv_free(g->notes);
        strv_free(g->malformed);
        json_decref(g->writable_outside);
        json_decref(g->controls);
        json_decref(g->processes);
        json_decref(g->mounts);
}

/* What the report shows of the helper: the image it ran from (provider) and
 * its own account (probe). */
static json_t *helper_shown(const json_t *ev, const json_t *probe)
{
        json_t *h = json_object(), *x, *val;
        const char *k;

        if (!h)
                oom();
        x = json_object_get(ev, "helper_image");
        if (json_is_object(x))
                json_object_update(h, x);
        x = probe ? json_object_get(probe, "helper") : NULL;
        if (json_is_object(x))
                json_object_foreach(x, k, val) if (!streq(k, "ns")) json_object_set(h, k, val);
        return h;
}

struct check_result *containment_grade(const json_t *ev)
{
        struct grading g = { .uid = 65532, .gid = 65532 };
        json_t *measured = json_object();
        struct check_result *r;
        json_t *user, *probe = NULL, *host_ns, *launch, *image, *v;
        json_int_t x;
        const char *perr;

        if (!measured)
                oom();
        if (!ev) {
                r = check_result_new(CONTAINMENT_CHECK_ID, CHECK_SKIP);
                check_result_add_evidence(r, "containment evidence is unavailable");
                json_decref(measured);
                return r;
        }
        g.writable_outside = json_array();
        g.controls = json_object();
        g.processes = json_array();
        g.mounts = json_array();
        if (!g.writable_outside || !g.controls || !g.processes || !g.mounts)
                oom();
        if (!json_is_object(ev)) {
                malformed(&g, "not an object");
                goto done;
        }
        if (!get_int(&g, ev, "schema", &x) || x != CONTAINMENT_EVIDENCE_SCHEMA) {
                malformed(&g, "schema is not %d", CONTAINMENT_EVIDENCE_SCHEMA);
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
        image = get_object(&g, ev, "image");
        launch = get_object(&g, ev, "launch");
        host_ns = get_object(&g, ev, "host_ns");
        probe = get_object(&g, ev, "probe");
        if (!image)
                malformed(&g, "image is required");
        if (g.malformed)
                goto done;

        grade_section(&g, measured, "image", image, "ok", grade_image);
        grade_section(&g, measured, "launch", launch, "hardened", grade_launch);
        if (!probe) {
                perr = get_str(&g, ev, "probe_error");
                gap(&g, "helper measurement is unavailable%s%s", perr ? ": " : "",
                    perr ? perr : "");
        } else if (!get_int(&g, probe, "probe_schema", &x) || x != CONTAINMENT_PROBE_SCHEMA)
                malformed(&g, "probe.probe_schema is not %d", CONTAINMENT_PROBE_SCHEMA);
        else {
                grade_helper(&g, probe);
                grade_processes(&g, probe, host_ns);
                grade_mounts(&g, probe);
                grade_controls(&g, probe);
        }
        json_object_set_new(measured, "helper", helper_shown(ev, probe));
        json_object_set(measured, "processes", g.processes);
        json_object_set(measured, "mounts", g.mounts);
done:
        r = result_from(&g);
        json_object_update(r->measured, measured);
        json_decref(measured);
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
                r->remediation = xstrdup(CONTAINMENT_MALFORMED_REMEDIATION);
                return r;
        }
        r = containment_grade(ev);
        json_decref(ev);
        return r;
}
