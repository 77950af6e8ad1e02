/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/limits.h"
#include "base/parse-util.h"
#include "base/util.h"
#include "probe/containment-probe.h"
#include "base/mountinfo.h"
#include "probe/namespace-ids.h"
#include "probe/proc-status.h"

/* Pseudo filesystems whose "writable" entries are kernel interfaces, not
 * storage: probing their root is cheap and recorded, walking them is not
 * (procfs alone has thousands of writable-looking control files). */
static const char *const no_walk_fstypes[] = {
        "proc",    "sysfs", "cgroup",      "cgroup2", "devpts",   "mqueue", "securityfs", "debugfs",
        "tracefs", "bpf",   "binfmt_misc", "fusectl", "configfs", "pstore", "nsfs",
};

int read_bounded_at(int dirfd, const char *path, size_t max, char **ret, size_t *ret_len,
                    bool *ret_truncated)
{
        cleanup_close int fd = openat(dirfd, path, O_RDONLY | O_NOCTTY | O_CLOEXEC);
        cleanup_free char *buf = NULL;
        size_t len = 0;
        bool truncated = false;

        if (fd < 0)
                return negative_errno();
        buf = xmalloc(max + 1);
        for (;;) {
                char extra;
                ssize_t n;
                if (len == max) {
                        /* One more byte tells "exactly max" from "more". */
                        n = read(fd, &extra, 1);
                        if (n < 0 && errno == EINTR)
                                continue;
                        if (n < 0)
                                return negative_errno();
                        truncated = n > 0;
                        break;
                }
                n = read(fd, buf + len, max - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return negative_errno();
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        buf[len] = '\0';
        *ret = TAKE_PTR(buf);
        *ret_len = len;
        *ret_truncated = truncated;
        return 0;
}

static void progress(const struct containment_probe_options *o, const char *phase, size_t i,
                     size_t n)
{
        char line[96];
        int len;

        if (o->progress_fd < 0)
                return;
        len = n > 0 ? snprintf(line, sizeof(line), CONTAINMENT_PROBE_PROGRESS "%s %zu/%zu\n", phase,
                               i, n)
                    : snprintf(line, sizeof(line), CONTAINMENT_PROBE_PROGRESS "%s\n", phase);
        if (len > 0 && (size_t) len < sizeof(line))
                (void) write_all(o->progress_fd, line, (size_t) len);
}

static void hold(unsigned ms)
{
        struct timespec until;

        /* Absolute, so a SIGSTOP/SIGCONT in between does not extend it. */
        (void) clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += ms / 1000;
        until.tv_nsec += (long) (ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000L;
        }
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
                ;
}

static void write_ns(struct jwriter *w, const struct ns_ids *ids)
{
        jwriter_object_begin(w);
        for (int k = 0; k < _NS_KIND_MAX; k++)
                if (ids->has[k])
                        jwriter_kv_uint(w, ns_kind_to_string(k), ids->ino[k]);
        jwriter_object_end(w);
}

static void write_hex64(struct jwriter *w, const char *key, uint64_t v, bool has)
{
        char buf[24];
        jwriter_key(w, key);
        if (!has) {
                jwriter_null(w);
                return;
        }
        (void) snprintf(buf, sizeof(buf), "%016" PRIx64, v);
        jwriter_text(w, buf);
}

static void write_process(struct jwriter *w, pid_t pid, const struct proc_status *st,
                          const struct ns_ids *ns, int status_err)
{
        jwriter_object_begin(w);
        jwriter_kv_int(w, "pid", pid);
        if (status_err) {
                jwriter_kv_int(w, "status_errno", status_err);
                jwriter_key(w, "ns");
                write_ns(w, ns);
                jwriter_object_end(w);
                return;
        }
        jwriter_kv_text(w, "comm", st->has_name ? st->name : "");
        if (st->has_ppid)
                jwriter_kv_int(w, "ppid", st->ppid);
        for (int i = 0; i < 2; i++) {
                const uint32_t *ids = i == 0 ? st->uid : st->gid;
                jwriter_key(w, i == 0 ? "uid" : "gid");
                if (!(i == 0 ? st->has_uid : st->has_gid)) {
                        jwriter_null(w);
                        continue;
                }
                jwriter_array_begin(w);
                for (int j = 0; j < 4; j++)
                        jwriter_uint(w, ids[j]);
                jwriter_array_end(w);
        }
        jwriter_key(w, "groups");
        if (st->has_groups) {
                jwriter_array_begin(w);
                for (size_t j = 0; j < st->n_groups; j++)
                        jwriter_uint(w, st->groups[j]);
                jwriter_array_end(w);
        } else
                jwriter_null(w);
        jwriter_kv_bool(w, "groups_truncated", st->groups_truncated);
        write_hex64(w, "cap_inh", st->caps[PROC_CAP_INH], st->has_caps[PROC_CAP_INH]);
        write_hex64(w, "cap_prm", st->caps[PROC_CAP_PRM], st->has_caps[PROC_CAP_PRM]);
        write_hex64(w, "cap_eff", st->caps[PROC_CAP_EFF], st->has_caps[PROC_CAP_EFF]);
        write_hex64(w, "cap_bnd", st->caps[PROC_CAP_BND], st->has_caps[PROC_CAP_BND]);
        write_hex64(w, "cap_amb", st->caps[PROC_CAP_AMB], st->has_caps[PROC_CAP_AMB]);
        jwriter_key(w, "no_new_privs");
        if (st->has_no_new_privs)
                jwriter_int(w, st->no_new_privs);
        else
                jwriter_null(w);
        jwriter_key(w, "seccomp");
        if (st->has_seccomp)
                jwriter_int(w, st->seccomp);
        else
                jwriter_null(w);
        jwriter_key(w, "ns");
        write_ns(w, ns);
        jwriter_object_end(w);
}

static int pid_from_name(const char *name, pid_t *ret)
{
        int pid;
        if (parse_int(name, 1, INT32_MAX, &pid) < 0)
                return -EINVAL;
        *ret = pid;
        return 0;
}

/* Processes: every pid sharing the anchor's mount namespace. */
static void probe_processes(const struct containment_probe_options *o, int proc_fd,
                            const struct ns_ids *self, const struct ns_ids *anchor,
                            struct jwriter *w)
{
        int fd = openat(proc_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        unsigned n = 0, foreign = 0, unreadable = 0;
        bool truncated = false;
        DIR *d = NULL;
        struct dirent *de;

        jwriter_key(w, "processes");
        jwriter_array_begin(w);
        if (fd >= 0) {
                d = fdopendir(fd); /* owns fd on success */
                if (!d)
                        safe_close(fd);
        }
        while (d && (de = readdir(d))) {
                cleanup_close int pfd = -EBADF;
                cleanup_free char *buf = NULL;
                struct proc_status st = {};
                struct ns_ids ns;
                size_t len = 0;
                bool cut;
                pid_t pid;
                int r;

                if (pid_from_name(de->d_name, &pid) < 0)
                        continue;
                pfd = openat(dirfd(d), de->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (pfd < 0 && (errno == ENOENT || errno == ESRCH))
                        continue; /* exited */
                if (pfd < 0) {
                        /* EMFILE (a subject may prlimit us: same uid) or
                         * worse: never silently drop a process. */
                        unreadable++;
                        continue;
                }
                ns_ids_read_at(pfd, &ns);
                if (ns.has[NS_MNT] && self->has[NS_MNT] && ns.ino[NS_MNT] == self->ino[NS_MNT])
                        continue; /* the helper itself */
                if (!ns.has[NS_MNT]) {
                        /* Cannot tell whose it is: ptrace checks refused us. */
                        unreadable++;
                        continue;
                }
                if (!anchor->has[NS_MNT] || ns.ino[NS_MNT] != anchor->ino[NS_MNT]) {
                        foreign++;
                        continue;
                }
                if (n >= PROBE_MAX_PROCESSES) {
                        truncated = true;
                        continue;
                }
                r = read_bounded_at(pfd, "status", PROC_STATUS_MAX_BYTES, &buf, &len, &cut);
                if (r >= 0)
                        (void) proc_status_parse(buf, len, &st);
                write_process(w, pid, &st, &ns, r < 0 ? -r : 0);
                n++;
        }
        if (d)
                closedir(d);
        jwriter_array_end(w);
        jwriter_kv_bool(w, "processes_truncated", truncated);
        jwriter_kv_uint(w, "foreign_processes", foreign);
        jwriter_kv_uint(w, "unreadable_processes", unreadable);
        (void) o;
}

static void write_mount(struct jwriter *w, const struct mountinfo_entry *e)
{
        char dev[32];

        (void) snprintf(dev, sizeof(dev), "%u:%u", e->major, e->minor);
        jwriter_object_begin(w);
        jwriter_kv_uint(w, "mount_id", e->mount_id);
        jwriter_kv_uint(w, "parent_id", e->parent_id);
        jwriter_kv_text(w, "dev", dev);
        jwriter_kv_text(w, "root", e->root);
        jwriter_kv_text(w, "mount_point", e->mount_point);
        jwriter_kv_text(w, "mount_options", e->mount_options);
        jwriter_kv_text(w, "optional", e->optional);
        jwriter_kv_text(w, "fstype", e->fstype);
        jwriter_kv_text(w, "source", e->source);
        jwriter_kv_text(w, "super_options", e->super_options);
        jwriter_object_end(w);
}

static void write_check_common(struct jwriter *w, const char *path, const char *kind,
                               enum write_result r, int err)
{
        jwriter_kv_text(w, "path", path);
        jwriter_kv_text(w, "kind", kind);
        jwriter_kv_text(w, "result", write_result_to_string(r));
        jwriter_kv_int(w, "errno", err);
}

/* One mount not proven read-only by its flags: walk a directory, probe a file. */
static void probe_mount(const struct containment_probe_options *o, int root_fd,
                        const struct mountinfo_entry *e, struct jwriter *w)
{
        cleanup_close int fd = -EBADF;
        uint64_t reached = 0;
        struct stat st;
        bool no_walk = false;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(no_walk_fstypes); i++)
                if (streq(e->fstype, no_walk_fstypes[i]))
                        no_walk = true;

        jwriter_object_begin(w);
        jwriter_kv_uint(w, "mount_id", e->mount_id);
        r = path_open_in_root(root_fd, e->mount_point, O_PATH, &fd);
        if (r < 0) {
                /* EACCES on the way there: the subject cannot reach it either. */
                write_check_common(w, e->mount_point, "path", write_result_from_errno(-r), -r);
                jwriter_object_end(w);
                return;
        }
        if (fd_mount_id(fd, &reached) >= 0 && reached != e->mount_id) {
                /* Over-mounted: not reachable at this path. */
                write_check_common(w, e->mount_point, "shadowed", WRITE_INCONCLUSIVE, 0);
                jwriter_kv_uint(w, "reached_mount_id", reached);
                jwriter_object_end(w);
                return;
        }
        if (fstat(fd, &st) < 0) {
                write_check_common(w, e->mount_point, "path", WRITE_INCONCLUSIVE, errno);
                jwriter_object_end(w);
                return;
        }
        if (!S_ISDIR(st.st_mode)) {
                /* A file bind mount (/etc/hosts, the init binary, /dev/null
                 * over masked /proc files). Devices are not storage. */
                char t[2] = { file_type_char(st.st_mode), '\0' };
                enum write_result wr = WRITE_NOT_STORAGE;
                int err = 0;
                if (S_ISREG(st.st_mode)) {
                        cleanup_close int wfd = -EBADF;
                        /* No O_TRUNC: the open itself is the question. */
                        r = path_open_in_root(root_fd, e->mount_point,
                                              O_WRONLY | O_NONBLOCK | O_NOCTTY, &wfd);
                        wr = r >= 0 ? WRITE_WRITABLE : write_result_from_errno(-r);
                        err = r >= 0 ? 0 : -r;
                        if (wfd >= 0 && (fstat(wfd, &st) < 0 || !S_ISREG(st.st_mode))) {
                                wr = WRITE_INCONCLUSIVE;
                                err = EAGAIN;
                        }
                }
                write_check_common(w, e->mount_point, "file", wr, err);
                jwriter_kv_text(w, "type", t);
                jwriter_object_end(w);
                return;
        }
        if (no_walk) {
                int err;
                enum write_result wr = write_check_dir(fd, &err);
                write_check_common(w, e->mount_point, "root", wr, err);
                jwriter_object_end(w);
                return;
        }

        struct write_walk ww = {};
        r = write_walk_run(fd, e->mount_point, &o->walk, &ww);
        if (r < 0) {
                write_check_common(w, e->mount_point, "walk", WRITE_INCONCLUSIVE, -r);
                jwriter_object_end(w);
                return;
        }
        write_check_common(w, e->mount_point, "walk", ww.result,
                           ww.result == WRITE_DENIED ? ww.denied_err : ww.err);
        jwriter_kv_uint(w, "visited", ww.visited);
        jwriter_kv_uint(w, "not_storage", ww.not_storage);
        jwriter_kv_uint(w, "nested_mounts", ww.nested_mounts);
        jwriter_kv_bool(w, "truncated", ww.truncated);
        if (ww.truncated)
                jwriter_kv_text(w, "truncated_by", write_walk_bound_to_string(ww.truncated_by));
        jwriter_key(w, "findings");
        jwriter_array_begin(w);
        for (unsigned i = 0; i < ww.n_findings; i++) {
                char t[2] = { ww.findings[i].type, '\0' };
                jwriter_object_begin(w);
                jwriter_kv_text(w, "path", ww.findings[i].path);
                jwriter_kv_text(w, "type", t);
                jwriter_kv_text(w, "result", write_result_to_string(ww.findings[i].result));
                jwriter_kv_int(w, "errno", ww.findings[i].err);
                jwriter_object_end(w);
        }
        jwriter_array_end(w);
        write_walk_done(&ww);
        jwriter_object_end(w);
}

static void probe_controls(const struct containment_probe_options *o, int root_fd,
                           struct jwriter *w)
{
        jwriter_key(w, "controls");
        jwriter_array_begin(w);
        for (char *const *p = o->allotted; p && *p; p++) {
                cleanup_close int fd = -EBADF;
                enum write_result r;
                int err = 0;

                if (root_fd < 0) {
                        r = WRITE_INCONCLUSIVE;
                        err = EBADF;
                } else {
                        int q = path_open_in_root(root_fd, *p, O_PATH | O_DIRECTORY, &fd);
                        r = q < 0 ? write_result_from_errno(-q) : write_check_dir(fd, &err);
                        if (q < 0)
                                err = -q;
                }
                jwriter_object_begin(w);
                jwriter_kv_text(w, "root", *p);
                jwriter_kv_text(w, "result", write_result_to_string(r));
                jwriter_kv_int(w, "errno", err);
                jwriter_object_end(w);
        }
        jwriter_array_end(w);
}

/* Who we are and whether anyone could have tampered with us, read last so
 * that a tracer attached at any point up to now shows. (A tracer could forge
 * this too: the defence is that none can attach; this is the tripwire.) */
static void probe_self(const struct containment_probe_options *o, int self_fd,
                       const struct ns_ids *self, struct jwriter *w)
{
        cleanup_free char *buf = NULL;
        struct proc_status st = {};
        size_t len = 0;
        bool cut;
        int r = self_fd < 0 ? -EBADF
                            : read_bounded_at(self_fd, "status", PROC_STATUS_MAX_BYTES, &buf, &len,
                                              &cut);

        if (r >= 0)
                (void) proc_status_parse(buf, len, &st);
        jwriter_key(w, "helper");
        jwriter_object_begin(w);
        jwriter_kv_uint(w, "uid", geteuid());
        jwriter_kv_uint(w, "gid", getegid());
        jwriter_kv_int(w, "dumpable_at_start", o->dumpable_at_start);
        jwriter_key(w, "tracer_pid");
        if (st.has_tracer_pid)
                jwriter_int(w, st.tracer_pid);
        else
                jwriter_null(w);
        jwriter_key(w, "ns");
        write_ns(w, self);
        jwriter_object_end(w);
}

int containment_probe_run(const struct containment_probe_options *o, struct jwriter *w)
{
        cleanup_close int proc_fd = -EBADF, self_fd = -EBADF, anchor_fd = -EBADF, root_fd = -EBADF;
        cleanup(mountinfo_freep) struct mountinfo *mi = NULL;
        cleanup_free char *buf = NULL;
        struct ns_ids self = {}, anchor = {};
        char anchor_name[16];
        size_t len = 0;
        bool cut = false;
        int r, anchor_err = 0;

        proc_fd = open(o->proc_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (proc_fd < 0)
                return negative_errno();
        self_fd = openat(proc_fd, "self", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (self_fd >= 0)
                ns_ids_read_at(self_fd, &self);
        (void) snprintf(anchor_name, sizeof(anchor_name), "%d", (int) o->anchor_pid);
        anchor_fd = openat(proc_fd, anchor_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (anchor_fd >= 0)
                ns_ids_read_at(anchor_fd, &anchor);
        else
                anchor_err = errno; /* now: the writer below may allocate */

        progress(o, "started", 0, 0);
        if (o->test_hold_ms > 0)
                hold(o->test_hold_ms);
        jwriter_object_begin(w);
        jwriter_kv_uint(w, "probe_schema", CONTAINMENT_PROBE_SCHEMA);
        jwriter_key(w, "walk_bounds");
        jwriter_object_begin(w);
        jwriter_kv_uint(w, write_walk_bound_to_string(WALK_BOUND_DEPTH), o->walk.max_depth);
        jwriter_kv_uint(w, write_walk_bound_to_string(WALK_BOUND_ENTRIES), o->walk.max_entries);
        jwriter_kv_uint(w, write_walk_bound_to_string(WALK_BOUND_FINDINGS), o->walk.max_findings);
        jwriter_object_end(w);

        jwriter_kv_int(w, "anchor_pid", o->anchor_pid);
        if (anchor_fd < 0)
                jwriter_kv_int(w, "anchor_errno", anchor_err);
        else if (anchor.has[NS_MNT] && self.has[NS_MNT] && anchor.ino[NS_MNT] == self.ino[NS_MNT])
                /* The anchor is the helper itself: measuring it would
                 * describe the helper, not the subject. */
                jwriter_kv_int(w, "anchor_errno", EDEADLK);
        else if (!anchor.has[NS_MNT])
                jwriter_kv_int(w, "anchor_errno", anchor.err[NS_MNT]);

        progress(o, "processes", 0, 0);
        probe_processes(o, proc_fd, &self, &anchor, w);
        progress(o, "mounts", 0, 0);

        /* The anchor's mount table, and its root to reach paths through. */
        jwriter_key(w, "mounts");
        jwriter_array_begin(w);
        r = -EBADF;
        if (anchor_fd >= 0 && anchor.has[NS_MNT] && anchor.ino[NS_MNT] != self.ino[NS_MNT])
                r = read_bounded_at(anchor_fd, "mountinfo", MOUNTINFO_MAX_BYTES, &buf, &len, &cut);
        if (r >= 0) {
                (void) mountinfo_parse(buf, len, &mi);
                for (size_t i = 0; i < mi->n_entries; i++)
                        write_mount(w, &mi->entries[i]);
        }
        jwriter_array_end(w);
        if (r < 0)
                jwriter_kv_int(w, "mounts_errno", -r);
        jwriter_kv_bool(w, "mounts_truncated", cut || (mi && mi->truncated));
        jwriter_kv_uint(w, "mounts_malformed", mi ? mi->n_malformed : 0);

        if (mi) {
                /* Following the kernel's own magic link is the point here:
                 * it is how we enter the subject's mount tree. */
                root_fd = openat(anchor_fd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (root_fd < 0)
                        jwriter_kv_int(w, "root_errno", errno);
        }

        jwriter_key(w, "write_checks");
        jwriter_array_begin(w);
        for (size_t i = 0; root_fd >= 0 && i < mi->n_entries; i++) {
                const struct mountinfo_entry *e = &mi->entries[i];
                /* Proven read-only by flags: nothing to attempt. An
                 * allotted path is checked too: whether it is the allotted
                 * storage is the grader's call (by what backs it), and if
                 * it is not, this is its evidence. */
                if (mountinfo_entry_is_read_only(e))
                        continue;
                /* Kernel interfaces the grader exempts by type: probing
                 * them says nothing about storage. */
                if (streq(e->fstype, "proc") || streq(e->fstype, "sysfs") ||
                    streq(e->fstype, "cgroup") || streq(e->fstype, "cgroup2"))
                        continue;
                progress(o, "write-check", i + 1, mi->n_entries);
                probe_mount(o, root_fd, e, w);
        }
        jwriter_array_end(w);

        progress(o, "controls", 0, 0);
        probe_controls(o, root_fd, w);
        probe_self(o, self_fd, &self, w);
        jwriter_object_end(w);
        progress(o, "done", 0, 0);
        return 0;
}
