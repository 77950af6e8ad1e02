/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of the probe library: the status parser, namespace link
 * parsing and write checks on a private temp dir (its JSON writer is base's:
 * tests/base/test-json-writer.c).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fd-util.h"
#include "base/limits.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "probe/attack.h"
#include "probe/namespace-ids.h"
#include "probe/proc-status.h"
#include "probe/write-check.h"
#include "test-helpers.h"

static struct proc_status parse_st(const char *s)
{
        struct proc_status st;
        cr_assert_eq(proc_status_parse(s, strlen(s), &st), 0);
        return st;
}

Test(status, docker_subject)
{
        struct proc_status st = parse_st("Name:\tdocker-init\nUmask:\t0022\nPPid:\t0\n"
                                         "TracerPid:\t0\n"
                                         "Uid:\t65532\t65532\t65532\t65532\n"
                                         "Gid:\t65532\t65532\t65532\t65533\n"
                                         "Groups:\t65532 \n"
                                         "CapInh:\t0000000000000000\nCapPrm:\t0000000000000000\n"
                                         "CapEff:\t0000000000000000\nCapBnd:\t0000003ffeffffff\n"
                                         "CapAmb:\t0000000000000000\nNoNewPrivs:\t1\n"
                                         "Seccomp:\t2\nSeccomp_filters:\t1\n");
        cr_assert(st.has_name);
        cr_assert_str_eq(st.name, "docker-init");
        cr_assert(st.has_uid && st.has_gid && st.has_groups);
        cr_assert_eq(st.uid[3], 65532);
        cr_assert_eq(st.gid[3], 65533);
        cr_assert_eq(st.n_groups, 1);
        cr_assert_eq(st.groups[0], 65532);
        cr_assert(st.has_caps[PROC_CAP_BND]);
        cr_assert_eq(st.caps[PROC_CAP_BND], 0x3ffeffffffULL);
        cr_assert_eq(st.caps[PROC_CAP_EFF], 0);
        cr_assert(st.has_no_new_privs && st.no_new_privs == 1);
        cr_assert(st.has_seccomp && st.seccomp == 2);
        cr_assert(st.has_tracer_pid && st.tracer_pid == 0);
}

Test(status, missing_lines_are_unknown_not_zero)
{
        struct proc_status st = parse_st("Name:\tx\nUid:\t0\t0\t0\n" /* 3 fields: malformed */
                                         "CapEff:\tzz\nCapPrm:\t00000000000000000\n"
                                         "Groups:\n");
        cr_assert_not(st.has_uid);
        cr_assert_not(st.has_gid);
        cr_assert_not(st.has_caps[PROC_CAP_EFF]);
        cr_assert_not(st.has_caps[PROC_CAP_PRM]); /* 17 digits */
        cr_assert_not(st.has_caps[PROC_CAP_BND]);
        cr_assert_not(st.has_no_new_privs);
        cr_assert_not(st.has_seccomp);
        cr_assert(st.has_groups);
        cr_assert_eq(st.n_groups, 0);
}

Test(status, duplicates_first_wins_and_ranges)
{
        struct proc_status st = parse_st("NoNewPrivs:\t1\nNoNewPrivs:\t0\nSeccomp:\t3\n"
                                         "Uid:\t1\t2\t3\t4\t5\n"
                                         "TracerPid:\t42\nTracerPid:\t0\n");
        cr_assert(st.has_no_new_privs && st.no_new_privs == 1);
        /* A tracer cannot hide behind a second, clean line. */
        cr_assert(st.has_tracer_pid && st.tracer_pid == 42);
        cr_assert_not(st.has_seccomp);
        cr_assert_not(st.has_uid);
}

Test(status, groups_bounded)
{
        cleanup_strbuf struct strbuf sb = STRBUF_INIT;
        struct proc_status st;

        strbuf_adds(&sb, "Groups:\t");
        for (int i = 0; i < PROC_STATUS_MAX_GROUPS + 10; i++)
                strbuf_addf(&sb, "%d ", 1000 + i);
        strbuf_adds(&sb, "\n");
        cr_assert_eq(proc_status_parse(sb.buf, sb.len, &st), 0);
        cr_assert(st.has_groups);
        cr_assert(st.groups_truncated);
        cr_assert_eq(st.n_groups, PROC_STATUS_MAX_GROUPS);
}

Test(status, this_process)
{
        cleanup_free char *buf = NULL;
        struct proc_status st;
        size_t len;

        cr_assert_eq(
                read_full_file_at(AT_FDCWD, "/proc/self/status", PROC_STATUS_MAX_BYTES, &buf, &len),
                0);
        cr_assert_eq(proc_status_parse(buf, len, &st), 0);
        cr_assert(st.has_uid && st.has_gid && st.has_groups);
        cr_assert_eq(st.uid[1], geteuid());
        for (int i = 0; i < _PROC_CAP_MAX; i++)
                cr_assert(st.has_caps[i]);
        cr_assert(st.has_no_new_privs && st.has_seccomp);
}

Test(ns, link_parse_and_read)
{
        struct ns_ids ids;
        uint64_t ino;
        int fd;

        cr_assert_eq(ns_link_parse("mnt", "mnt:[4026531841]", &ino), 0);
        cr_assert_eq(ino, 4026531841ULL);
        cr_assert_lt(ns_link_parse("mnt", "net:[1]", &ino), 0);
        cr_assert_lt(ns_link_parse("mnt", "mnt:[]", &ino), 0);
        cr_assert_lt(ns_link_parse("mnt", "mnt:[12", &ino), 0);
        cr_assert_lt(ns_link_parse("mnt", "mnt:[1x]", &ino), 0);
        cr_assert_eq(ns_kind_from_string("cgroup"), NS_CGROUP);
        cr_assert_lt(ns_kind_from_string("bogus"), 0);

        fd = open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(fd, 0);
        ns_ids_read_at(fd, &ids);
        close(fd);
        cr_assert(ids.has[NS_MNT] && ids.has[NS_PID] && ids.has[NS_NET]);
        cr_assert_neq(ids.ino[NS_MNT], 0);
}

static char tmpdir[64];

static void mk_tmp(void)
{
        (void) snprintf(tmpdir, sizeof(tmpdir), "/tmp/openenvd-probe-test-XXXXXX");
        cr_assert_not_null(mkdtemp(tmpdir));
}

static void rm_tmp(void)
{
        (void) rm_rf_at(AT_FDCWD, tmpdir);
}

Test(write_check, dir_file_device_and_walk, .init = mk_tmp, .fini = rm_tmp)
{
        cleanup_close int dfd = open(tmpdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        struct write_walk_bounds b = { .max_depth = 4, .max_entries = 100, .max_findings = 8 };
        struct write_walk w;
        enum write_result r;
        char type;
        int err, fd;

        cr_assert_geq(dfd, 0);
        r = write_check_dir(dfd, &err);
        cr_assert_eq(r, WRITE_WRITABLE);
        cr_assert_eq(err, 0);

        fd = openat(dfd, "f", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        cr_assert_geq(fd, 0);
        cr_assert_eq(write(fd, "keep", 4), 4);
        close(fd);
        cr_assert_eq(symlinkat("/etc/passwd", dfd, "link"), 0);
        cr_assert_eq(mkfifoat(dfd, "fifo", 0666), 0);
        cr_assert_eq(mkdirat(dfd, "sub", 0755), 0);

        r = write_check_file_at(dfd, "f", &type, &err);
        cr_assert_eq(r, WRITE_WRITABLE);
        cr_assert_eq(type, 'f');
        r = write_check_file_at(dfd, "link", &type, &err);
        cr_assert_eq(r, WRITE_NOT_STORAGE);
        cr_assert_eq(type, 'l');
        r = write_check_file_at(dfd, "fifo", &type, &err);
        cr_assert_eq(r, WRITE_NOT_STORAGE);
        cr_assert_eq(type, 'p');

        /* Content untouched: no O_TRUNC, no write. */
        cleanup_free char *content = NULL;
        size_t len;
        cr_assert_eq(read_full_file_at(dfd, "f", 64, &content, &len), 0);
        cr_assert_str_eq(content, "keep");

        cr_assert_eq(write_walk_run(dfd, "/x", &b, &w), 0);
        cr_assert_eq(w.result, WRITE_WRITABLE);
        cr_assert_eq(w.visited, 5); /* root + 4 entries */
        cr_assert_eq(w.not_storage, 2);
        cr_assert_not(w.truncated);
        cr_assert_eq(w.truncated_by, WALK_BOUND_NONE);
        cr_assert_eq(w.n_findings, 3); /* /x, /x/f, /x/sub (order of readdir) */
        bool saw_sub = false;
        for (unsigned i = 0; i < w.n_findings; i++)
                if (streq(w.findings[i].path, "/x/sub"))
                        saw_sub = true;
        cr_assert(saw_sub);
        write_walk_done(&w);

        /* Bounds: a walk that cannot finish says so. */
        b.max_entries = 2;
        cr_assert_eq(write_walk_run(dfd, "/x", &b, &w), 0);
        cr_assert(w.truncated);
        cr_assert_str_eq(write_walk_bound_to_string(w.truncated_by), "max_entries");
        write_walk_done(&w);
        b = (struct write_walk_bounds){ .max_depth = 0, .max_entries = 100, .max_findings = 8 };
        cr_assert_eq(write_walk_run(dfd, "/x", &b, &w), 0);
        cr_assert(w.truncated);
        cr_assert_str_eq(write_walk_bound_to_string(w.truncated_by), "max_depth");
        write_walk_done(&w);
}

Test(write_check, in_root_resolution_refuses_symlinks, .init = mk_tmp, .fini = rm_tmp)
{
        cleanup_close int dfd = open(tmpdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        int fd = -1;

        cr_assert_eq(mkdirat(dfd, "d", 0755), 0);
        cr_assert_eq(symlinkat("/", dfd, "esc"), 0);
        cr_assert_eq(path_open_in_root(dfd, "/d", O_PATH | O_DIRECTORY, &fd), 0);
        close(fd);
        cr_assert_lt(path_open_in_root(dfd, "/esc/etc", O_PATH, &fd), 0);
        /* ".." cannot climb out of the root. */
        cr_assert_eq(path_open_in_root(dfd, "/../../d", O_PATH | O_DIRECTORY, &fd), 0);
        close(fd);
}

/* In a child with the subject's uid: what it owns with its write bit off is
 * writable (a chmod away); what someone else owns in the same mode is not.
 * Returns a bit per wrong answer. */
static int owned_checks(int dfd, bool drop)
{
        cleanup_close int owned = openat(dfd, "owned", O_PATH | O_DIRECTORY | O_CLOEXEC);
        cleanup_close int other = drop ? openat(dfd, "other", O_PATH | O_DIRECTORY | O_CLOEXEC)
                                       : open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        int err = 0, bad = 0;
        char type;

        if (drop && (setresgid(65532, 65532, 65532) < 0 || setresuid(65532, 65532, 65532) < 0))
                return 64;
        if (write_check_dir(owned, &err) != WRITE_WRITABLE || err != EACCES)
                bad |= 1;
        if (write_check_file_at(owned, "f", &type, &err) != WRITE_WRITABLE || err != EACCES)
                bad |= 2;
        if (write_check_dir(other, &err) != WRITE_DENIED || err != EACCES)
                bad |= 4;
        return bad;
}

Test(write_check, owned_is_writable_whatever_its_mode, .init = mk_tmp, .fini = rm_tmp)
{
        cleanup_close int dfd = open(tmpdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        bool drop = geteuid() == 0;
        uid_t u = drop ? 65532 : geteuid();
        int fd, status;
        pid_t pid;

        cr_assert_eq(mkdirat(dfd, "owned", 0755), 0);
        fd = openat(dfd, "owned/f", O_CREAT | O_WRONLY | O_CLOEXEC, 0444);
        cr_assert_geq(fd, 0);
        close(fd);
        cr_assert_eq(fchownat(dfd, "owned/f", u, u, 0), 0);
        cr_assert_eq(fchmodat(dfd, "owned", 0555, 0), 0);
        cr_assert_eq(fchownat(dfd, "owned", u, u, 0), 0);
        cr_assert_eq(mkdirat(dfd, "other", 0555), 0);
        cr_assert_eq(chmod(tmpdir, 0755), 0);
        pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0)
                _exit(owned_checks(dfd, drop));
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFEXITED(status));
        cr_assert_eq(WEXITSTATUS(status), 0, "wrong answers: %#x", WEXITSTATUS(status));
}

Test(write_check, errno_mapping)
{
        cr_assert_eq(write_result_from_errno(EROFS), WRITE_DENIED);
        cr_assert_eq(write_result_from_errno(EACCES), WRITE_DENIED);
        cr_assert_eq(write_result_from_errno(EPERM), WRITE_DENIED);
        cr_assert_eq(write_result_from_errno(ENOSPC), WRITE_WRITABLE);
        cr_assert_eq(write_result_from_errno(EDQUOT), WRITE_WRITABLE);
        cr_assert_eq(write_result_from_errno(EIO), WRITE_INCONCLUSIVE);
        cr_assert_eq(write_result_from_string("not-storage"), WRITE_NOT_STORAGE);
        cr_assert_lt(write_result_from_string("maybe"), 0);
}

Test(tables, names_round_trip)
{
        for (int i = 0; i < _ATTACK_RESULT_MAX; i++)
                cr_assert_eq(attack_result_from_string(attack_result_to_string(i)), i);
        for (int i = 0; i < _WRITE_RESULT_MAX; i++)
                cr_assert_eq(write_result_from_string(write_result_to_string(i)), i);
        for (int i = 0; i < _NS_KIND_MAX; i++)
                cr_assert_eq(ns_kind_from_string(ns_kind_to_string(i)), i);
        cr_assert_str_eq(attack_result_to_string(_ATTACK_RESULT_MAX), "error");
        cr_assert_null(write_walk_bound_to_string(_WALK_BOUND_MAX));
        cr_assert_str_eq(proc_cap_set_to_string(PROC_CAP_EFF), "CapEff");
        cr_assert_eq(probe_fault_from_string("garble"), PROBE_FAULT_GARBLE);
        cr_assert_eq(probe_fault_from_string("none"), -EINVAL);
        cr_assert_eq(attack_result_from_string("nope"), -EINVAL);
}
