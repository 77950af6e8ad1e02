/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Every mount of the subject and its write check: nothing writable outside
 * the allotted roots, and results the helper can honestly report; then the
 * positive controls that prove the checks could have seen a write.
 */
#include <inttypes.h>
#include <string.h>

#include "base/mountinfo.h"
#include "base/util.h"
#include "probe/write-check.h"
#include "validate/containment-grading.h"

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

/* True if the space-separated optional fields of a and b name one shared
 * peer group ("shared:N"): mounts of one peer group propagate into each
 * other, so a subject mount in a host peer group is the host's. Peer group
 * ids are global, so they compare across mount namespaces. */
static bool same_peer_group(const char *a, const char *b)
{
        const char *p = a;

        while (p && *p) {
                size_t n = strcspn(p, " ");
                if (n > 7 && strncmp(p, "shared:", 7) == 0) {
                        const char *q = b;
                        while (q && *q) {
                                size_t m = strcspn(q, " ");
                                if (m == n && strncmp(p, q, n) == 0)
                                        return true;
                                q += m + strspn(q + m, " ");
                        }
                }
                p += n + strspn(p + n, " ");
        }
        return false;
}

/* The host mount that backs m, if any: one with the same device number (one
 * superblock: the same files) or in one of m's shared peer groups. What the
 * subject or its runtime calls the mount (its path, source or fstype) plays
 * no part. host_mounts is the validator's own mount table (and PID 1's). */
static const json_t *host_twin(const json_t *host_mounts, const char *dev, const char *optional)
{
        size_t i;
        json_t *h;

        json_array_foreach(host_mounts, i, h)
        {
                const char *hd = json_string_value(json_object_get(h, "dev"));
                const char *ho = json_string_value(json_object_get(h, "optional"));
                if ((hd && dev && streq(hd, dev)) ||
                    (ho && optional && same_peer_group(optional, ho)))
                        return h;
        }
        return NULL;
}

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
                        grading_malformed(g,
                                          "%s: denied with errno %" JSON_INTEGER_FORMAT
                                          " (impossible: only EACCES, EPERM or EROFS deny a write)",
                                          where, err);
                break;
        case WRITE_INCONCLUSIVE:
                if (err <= 0 && !streq(kind, "shadowed"))
                        grading_malformed(g, "%s: inconclusive without an errno (impossible)",
                                          where);
                break;
        case WRITE_NOT_STORAGE:
                if (!streq(kind, "file") || err != 0 || !type || strlen(type) != 1 ||
                    !strchr("cbpsl", type[0]))
                        grading_malformed(g,
                                          "%s: not-storage for a %s '%s' (impossible: only device "
                                          "nodes, FIFOs, sockets and symlinks are not storage)",
                                          where, kind, type ? type : "");
                break;
        case WRITE_WRITABLE:
                break;
        default:
                grading_malformed(g, "%s: unknown write result '%s'", where, result);
        }
}

/* A walk that hit a bound proves nothing about the rest of its mount. The
 * bound is named as in walk_bounds (max_entries, ...), which holds its value. */
static void grade_truncation(struct grading *g, const char *mp, const json_t *c,
                             const json_t *bounds)
{
        const char *by = grading_get_str(g, c, "truncated_by");
        json_int_t visited = 0, limit = -1;

        (void) grading_get_int(g, c, "visited", &visited);
        if (by && bounds && grading_get_int(g, bounds, by, &limit))
                grading_gap(g,
                            "write check truncated at %s: walk bound %s=%" JSON_INTEGER_FORMAT
                            " reached after %" JSON_INTEGER_FORMAT
                            " entries; the rest of the mount is unproven",
                            mp, by, limit, visited);
        else
                grading_gap(g,
                            "write check truncated at %s after %" JSON_INTEGER_FORMAT
                            " entries; the rest of the mount is unproven",
                            mp, visited);
}

/* Judges one mount's write check; returns the mount's verdict when it holds
 * no violation or gap ("denied" or "not-storage"). */
static const char *grade_check(struct grading *g, const char *mp, const char *fstype,
                               const json_t *c, const json_t *bounds)
{
        const char *result = grading_get_str(g, c, "result");
        const char *kind = grading_get_str(g, c, "kind");
        const char *type = grading_get_str(g, c, "type");
        json_int_t err = 0;
        bool truncated = false, any = false, finding_writable = false;
        json_t *findings, *f;
        size_t i;
        bool allowlisted = grading_str_in(mp, allowlisted_binds, ELEMENTSOF(allowlisted_binds));

        if (!result || !kind || !grading_get_int(g, c, "errno", &err)) {
                grading_malformed(g, "write_checks[] at %s: result, kind and errno are required",
                                  mp);
                return "unproven";
        }
        (void) grading_get_bool(g, c, "truncated", &truncated);
        check_plausible(g, mp, kind, result, err, type);

        findings = grading_get_array(g, c, "findings");
        if (findings)
                json_array_foreach(findings, i, f)
                {
                        const char *fr = json_is_object(f) ? grading_get_str(g, f, "result") : NULL;
                        const char *fp = json_is_object(f) ? grading_get_str(g, f, "path") : NULL;
                        const char *ft = json_is_object(f) ? grading_get_str(g, f, "type") : NULL;
                        json_int_t ferr = 0;

                        if (!fr || !fp || !grading_get_int(g, f, "errno", &ferr)) {
                                grading_malformed(
                                        g, "findings[] at %s: result, path and errno are required",
                                        mp);
                                continue;
                        }
                        /* A walk records only what it could write or could
                         * not decide; a recorded refusal is impossible. */
                        if (!streq(fr, "writable") && !streq(fr, "inconclusive")) {
                                grading_malformed(g, "finding %s: '%s' (impossible in a walk)", fp,
                                                  fr);
                                continue;
                        }
                        check_plausible(g, fp, "walk", fr, ferr, ft);
                        if (!streq(fr, "writable"))
                                continue;
                        finding_writable = true;
                        if (!streq(result, "writable"))
                                continue; /* refused below as inconsistent */
                        any = true;
                        /* writable with EACCES: refused now, but owned by
                         * the subject with its write bit off (write-check.h). */
                        grading_violation(
                                g,
                                "subject can write %s %s (on %s, %s%s): storage outside the "
                                "allotted roots",
                                ft && streq(ft, "f") ? "file" : "directory", fp, mp, fstype,
                                ferr == EACCES ? "; it owns it: a chmod undoes its mode" : "");
                        record_writable(g, fp);
                }
        if (finding_writable && !streq(result, "writable"))
                grading_malformed(
                        g, "write check at %s: '%s' although a finding is writable (impossible)",
                        mp, result);

        if (truncated)
                grade_truncation(g, mp, c, bounds);
        if (streq(result, "writable")) {
                if (!any) {
                        if (allowlisted)
                                grading_violation(
                                        g, "allowlisted bind %s is writable by the subject", mp);
                        else
                                grading_violation(g,
                                                  "subject can write %s (%s): storage outside the "
                                                  "allotted roots",
                                                  mp, fstype);
                        record_writable(g, mp);
                }
                return "violation";
        }
        if (streq(result, "inconclusive")) {
                if (streq(kind, "shadowed"))
                        grading_gap(g, "mount %s is over-mounted; its write check is unproven", mp);
                else
                        grading_gap(g, "write check inconclusive at %s (%s)", mp,
                                    err > 0 ? strerror((int) err) : "unknown");
                return "unproven";
        }
        return streq(result, "not-storage") ? "not-storage" : "denied";
}

/* An allotted root is allotted only if what backs it is what the contract
 * allots: a whole tmpfs of its own (root "/"), shared with no host mount.
 * Anything else at that path (a bind of host storage, a block filesystem, a
 * tmpfs the host also has mounted) is judged like any other mount, and if
 * read-write it fails here, whatever its mode or owner when looked at: a
 * positive control there would write to the host. Without the host's mount
 * table a private tmpfs cannot be told from a host one: unproven. */
static bool allotted_is_private(struct grading *g, const char *mp, const char *fstype,
                                const json_t *m, const json_t *host_mounts, const json_t *twin,
                                bool ro)
{
        const char *root = grading_get_str(g, m, "root");
        const char *dev = grading_get_str(g, m, "dev");
        const char *src = grading_get_str(g, m, "source");

        if (streq(fstype, "tmpfs") && root && streq(root, "/") && !twin) {
                if (host_mounts)
                        return true;
                grading_gap(g,
                            "whether allotted root %s is a private tmpfs is unproven: no host "
                            "mount table to compare with (engine not local)",
                            mp);
                return false;
        }
        if (ro)
                return false;
        if (twin)
                grading_violation(
                        g,
                        "allotted root %s is not a private tmpfs: it is host storage (%s %s, dev "
                        "%s, root %s), also mounted on the host at %s; what the subject writes "
                        "there stays on the host",
                        mp, fstype, src ? src : "?", dev ? dev : "?", root ? root : "?",
                        json_string_value(json_object_get(twin, "mount_point")));
        else
                grading_violation(g,
                                  "allotted root %s is not a private tmpfs: %s %s (root %s) is "
                                  "mounted there read-write",
                                  mp, fstype, src ? src : "?", root ? root : "?");
        return false;
}

/* Grades one mount; returns its verdict when it holds no violation or gap
 * (read-only, allotted, kernel-interface, denied, not-storage). A copy of
 * its write check goes into shown. */
static const char *grade_mount(struct grading *g, const json_t *m, const json_t *checks,
                               const json_t *bounds, const json_t *host_mounts, json_t *shown,
                               bool *root_seen)
{
        const char *mp, *fstype, *mopt, *sopt;
        const json_t *c, *twin;
        json_int_t id;
        bool ro;

        mp = grading_get_str(g, m, "mount_point");
        fstype = grading_get_str(g, m, "fstype");
        mopt = grading_get_str(g, m, "mount_options");
        sopt = grading_get_str(g, m, "super_options");
        if (!mp || !fstype || !mopt || !sopt || !grading_get_int(g, m, "mount_id", &id)) {
                grading_malformed(
                        g, "mounts[]: mount_id, mount_point, fstype and options are required");
                return "unproven";
        }
        ro = mount_options_has(mopt, "ro") || mount_options_has(sopt, "ro");
        if (streq(mp, "/")) {
                *root_seen = true;
                if (!ro)
                        grading_violation(g, "image root / is mounted read-write (%s, %s)", fstype,
                                          mopt);
        }
        twin = host_mounts ? host_twin(host_mounts, grading_get_str(g, m, "dev"),
                                       grading_get_str(g, m, "optional"))
                           : NULL;
        if (grading_is_allotted(g, mp) &&
            allotted_is_private(g, mp, fstype, m, host_mounts, twin, ro))
                return "allotted";
        if (ro)
                return "read-only";
        /* Host storage mounted read-write is a bind nobody asked for, as
         * in the launch rules, whatever its mode now: the host (or an owner
         * inside) can make it writable at any time. Docker's own plumbing
         * (the allowlist) is judged by its write check; / by its flags. */
        if (twin && !streq(mp, "/") && !grading_is_allotted(g, mp) &&
            !grading_str_in(mp, allowlisted_binds, ELEMENTSOF(allowlisted_binds)))
                grading_violation(g,
                                  "%s is host storage mounted read-write (%s, dev %s), also "
                                  "mounted on the host at %s",
                                  mp, fstype, json_string_value(json_object_get(twin, "dev")),
                                  json_string_value(json_object_get(twin, "mount_point")));
        /* Exempt by type only if it is not the host's (a host mqueue is the
         * host's IPC namespace). */
        if (!twin && grading_str_in(fstype, kernel_fstypes, ELEMENTSOF(kernel_fstypes))) {
                if (streq(fstype, "mqueue"))
                        grading_add(&g->notes,
                                    "%s (mqueue) holds POSIX message queues of the private IPC "
                                    "namespace, not file storage",
                                    mp);
                return "kernel-interface";
        }
        c = checks ? find_check(checks, id) : NULL;
        if (!c || !json_is_object(c)) {
                grading_gap(g, "no write check for %s (%s, read-write)", mp, fstype);
                return "unproven";
        }
        json_object_set_new(shown, "write_check", json_deep_copy(c));
        return grade_check(g, mp, fstype, c, bounds);
}

void grade_mounts(struct grading *g, const json_t *probe, const json_t *host_mounts)
{
        json_t *mounts = grading_get_array(g, probe, "mounts");
        json_t *checks = grading_get_array(g, probe, "write_checks");
        json_t *bounds = grading_get_object(g, probe, "walk_bounds");
        json_int_t x;
        bool b, root_seen = false;
        size_t i;
        json_t *m;

        if (grading_get_int(g, probe, "mounts_errno", &x) || !mounts ||
            json_array_size(mounts) == 0) {
                grading_gap(g, "mount inventory is missing");
                return;
        }
        if (grading_get_bool(g, probe, "mounts_truncated", &b) && b)
                grading_gap(g, "mount inventory is truncated");
        if (grading_get_int(g, probe, "mounts_malformed", &x) && x > 0)
                grading_gap(g, "mount inventory has %" JSON_INTEGER_FORMAT " unparsable lines", x);
        if (grading_get_int(g, probe, "root_errno", &x))
                grading_gap(g, "the subject's root could not be entered (%s)", strerror((int) x));

        json_array_foreach(mounts, i, m)
        {
                const char *verdict;
                json_t *shown;
                struct item_mark mark;

                if (!json_is_object(m)) {
                        grading_malformed(g, "mounts[] is not an object");
                        continue;
                }
                shown = json_deep_copy(m);
                if (!shown)
                        oom();
                mark = grading_item_begin(g, shown);
                verdict = grade_mount(g, m, checks, bounds, host_mounts, shown, &root_seen);
                grading_item_end(g, shown, mark, verdict);
                json_array_append_new(g->mounts, shown);
        }
        if (!root_seen)
                grading_gap(g, "mount inventory has no root mount");
}

void grade_controls(struct grading *g, const json_t *probe)
{
        json_t *controls = grading_get_array(g, probe, "controls");
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
                                const char *r =
                                        json_is_object(c) ? grading_get_str(g, c, "root") : NULL;
                                if (r && streq(r, want))
                                        found = c;
                        }
                if (!found) {
                        grading_gap(g, "positive control missing for %s", want);
                        continue;
                }
                res = grading_get_str(g, found, "result");
                if (!res || !grading_get_int(g, found, "errno", &err)) {
                        grading_malformed(g, "control for %s: result and errno are required", want);
                        continue;
                }
                check_plausible(g, want, "control", res, err, NULL);
                json_object_set_new(g->controls, want, json_string(res));
                if (!streq(res, "writable"))
                        grading_gap(g, "positive control failed for %s (%s%s%s)", want, res,
                                    err > 0 ? ": " : "", err > 0 ? strerror((int) err) : "");
        }
}
