/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one mountinfo parser (base/mountinfo.h): fields, escapes, bounds and
 * lookups. Its fuzz target is fuzz-mountinfo.c beside this file.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "base/fd-util.h"
#include "base/limits.h"
#include "base/mountinfo.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "test-helpers.h"

static struct mountinfo *parse_mi(const char *s)
{
        struct mountinfo *m = NULL;
        cr_assert_eq(mountinfo_parse(s, strlen(s), &m), 0);
        return m;
}

Test(mountinfo, docker_lines_with_optional_fields)
{
        cleanup(mountinfo_freep) struct mountinfo *m =
                parse_mi("72 48 0:39 / / ro,relatime master:2 - overlay overlay rw,lowerdir=/a\n"
                         "74 72 0:43 / /dev rw,nosuid - tmpfs tmpfs rw,size=65536k,mode=755\n"
                         "89 72 254:0 /usr/bin/tini-static /sbin/docker-init ro,relatime - ext4 "
                         "/dev/vda rw\n"
                         "30 1 0:5 / /x rw shared:1 master:3 propagate_from:2 - tmpfs none ro\n");
        cr_assert_eq(m->n_entries, 4);
        cr_assert_eq(m->n_malformed, 0);
        cr_assert_not(m->truncated);
        cr_assert_eq(m->entries[0].mount_id, 72);
        cr_assert_eq(m->entries[0].parent_id, 48);
        cr_assert_eq(m->entries[0].major, 0);
        cr_assert_eq(m->entries[0].minor, 39);
        cr_assert_str_eq(m->entries[0].optional, "master:2");
        cr_assert_str_eq(m->entries[0].fstype, "overlay");
        cr_assert_str_eq(m->entries[2].root, "/usr/bin/tini-static");
        cr_assert_eq(m->entries[2].major, 254);
        cr_assert_str_eq(m->entries[2].source, "/dev/vda");
        cr_assert_str_eq(m->entries[3].optional, "shared:1 master:3 propagate_from:2");
        cr_assert_str_eq(m->entries[1].optional, "");
        cr_assert_str_eq(m->entries[1].super_options, "rw,size=65536k,mode=755");
}

Test(mountinfo, read_only_by_either_layer)
{
        cleanup(mountinfo_freep) struct mountinfo *m =
                parse_mi("1 0 0:1 / / ro - ext4 /dev/a rw\n"
                         "2 1 0:2 / /b rw - ext4 /dev/b ro\n"
                         "3 1 0:3 / /c rw,relatime - ext4 /dev/c rw,errors=remount-ro\n"
                         "4 1 0:4 / /d rw,nosuid - tmpfs tmpfs rw,rootcontext=ro\n");
        cr_assert(mountinfo_entry_is_read_only(&m->entries[0]));
        cr_assert(mountinfo_entry_is_read_only(&m->entries[1]));
        /* "errors=remount-ro" and "x=ro" are not the ro flag. */
        cr_assert_not(mountinfo_entry_is_read_only(&m->entries[2]));
        cr_assert_not(mountinfo_entry_is_read_only(&m->entries[3]));
}

Test(mountinfo, octal_escapes_are_decoded)
{
        cleanup(mountinfo_freep) struct mountinfo *m =
                parse_mi("5 1 0:9 /a\\040b /mnt/with\\040space\\011tab\\012nl\\134bs rw - tmpfs "
                         "my\\040src rw\n"
                         "6 1 0:9 / /bad\\000nul rw - tmpfs x rw\n"
                         "7 1 0:9 / /lit\\9x\\04 rw - tmpfs x rw\n");
        cr_assert_eq(m->n_entries, 2);
        cr_assert_eq(m->n_malformed, 1); /* \000 would be an embedded NUL */
        cr_assert_str_eq(m->entries[0].root, "/a b");
        cr_assert_str_eq(m->entries[0].mount_point, "/mnt/with space\ttab\nnl\\bs");
        cr_assert_str_eq(m->entries[0].source, "my src");
        cr_assert_str_eq(m->entries[1].mount_point, "/lit\\9x\\04");
}

Test(mountinfo, malformed_lines_are_counted_not_fatal)
{
        cleanup(mountinfo_freep) struct mountinfo *m =
                parse_mi("garbage\n"
                         "1 0 0:1 / / rw - ext4\n"             /* no source/options */
                         "1 0 0:1 / / rw ext4 /dev/a rw\n"     /* no separator */
                         "x 0 0:1 / / rw - ext4 /dev/a rw\n"   /* bad id */
                         "1 0 01 / / rw - ext4 /dev/a rw\n"    /* bad dev */
                         "1  0 0:1 / / rw - ext4 /dev/a rw\n"  /* empty field */
                         "9 1 0:1 / /ok rw - ext4 /dev/a rw"); /* no final newline */
        cr_assert_eq(m->n_entries, 1);
        cr_assert_eq(m->n_malformed, 6);
        cr_assert_str_eq(m->entries[0].mount_point, "/ok");
}

Test(mountinfo, bounds_set_truncated)
{
        cleanup_strbuf struct strbuf sb = STRBUF_INIT;
        struct mountinfo *m = NULL;

        for (int i = 0; i < MOUNTINFO_MAX_LINES + 1; i++)
                strbuf_addf(&sb, "%d 1 0:1 / /m%d rw - tmpfs t rw\n", i + 2, i);
        cr_assert_eq(mountinfo_parse(sb.buf, sb.len, &m), 0);
        cr_assert(m->truncated);
        cr_assert_eq(m->n_entries, MOUNTINFO_MAX_LINES);
        mountinfo_free(m);

        strbuf_reset(&sb);
        strbuf_adds(&sb, "1 0 0:1 / / rw - ext4 /dev/a rw\n2 1 0:1 / /");
        for (int i = 0; i < MOUNTINFO_MAX_LINE; i++)
                strbuf_addch(&sb, 'a');
        strbuf_adds(&sb, " rw - tmpfs t rw\n");
        cr_assert_eq(mountinfo_parse(sb.buf, sb.len, &m), 0);
        cr_assert(m->truncated);
        cr_assert_eq(m->n_entries, 1);
        mountinfo_free(m);
}

Test(mountinfo, find_by_path_prefers_deepest_and_latest)
{
        cleanup(mountinfo_freep) struct mountinfo *m =
                parse_mi("1 0 0:1 / / ro - ext4 a rw\n"
                         "2 1 0:2 / /dev rw - tmpfs b rw\n"
                         "3 2 0:3 / /dev/shm rw - tmpfs c rw\n"
                         "4 2 0:4 / /dev/shm rw - tmpfs d rw\n");
        cr_assert_eq(mountinfo_find_by_path(m, "/dev/shm/x")->mount_id, 4);
        cr_assert_eq(mountinfo_find_by_path(m, "/dev/shmx")->mount_id, 2);
        cr_assert_eq(mountinfo_find_by_path(m, "/etc")->mount_id, 1);
        cr_assert_eq(mountinfo_find_by_id(m, 3)->minor, 3);
        cr_assert_null(mountinfo_find_by_id(m, 99));
}

Test(mountinfo, parses_this_machines_table)
{
        cleanup_free char *buf = NULL;
        cleanup(mountinfo_freep) struct mountinfo *m = NULL;
        size_t len;

        cr_assert_eq(read_full_file_at(AT_FDCWD, "/proc/self/mountinfo", 4 << 20, &buf, &len), 0);
        cr_assert_eq(mountinfo_parse(buf, len, &m), 0);
        cr_assert_gt(m->n_entries, 0);
        cr_assert_eq(m->n_malformed, 0);
        cr_assert_not_null(mountinfo_find_by_path(m, "/"));
}

Test(mountinfo, load_reads_and_parses_a_file)
{
        cleanup(mountinfo_freep) struct mountinfo *m = NULL;

        cr_assert_eq(mountinfo_load_at(AT_FDCWD, "/proc/self/mountinfo", &m), 0);
        cr_assert_gt(m->n_entries, 0);
        cr_assert_not_null(mountinfo_find_by_path(m, "/"));
        cr_assert_eq(mountinfo_load_at(AT_FDCWD, "/nonexistent/mountinfo", &m), -ENOENT);
}

Test(mountinfo, option_lists_match_whole_words)
{
        cr_assert(mount_options_has("rw,nosuid,nodev", "nosuid"));
        cr_assert(mount_options_has("ro", "ro"));
        cr_assert_not(mount_options_has("rw,nosuidx", "nosuid"));
        cr_assert_not(mount_options_has("", "ro"));
        cr_assert_not(mount_options_has(NULL, "ro"));
        cr_assert(strn_list_has("cpu,memory:rest", 10, ',', "memory"));
        cr_assert_not(strn_list_has("cpu,memory:rest", 9, ',', "memory"));
}
