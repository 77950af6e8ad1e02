/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one directory walker (base/dir-walk.h) and rm_rf_at() built on it:
 * events and their order, symlinks never followed, the depth bound, SKIP
 * and STOP, relative paths, and a tree deeper than any recursion would like.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/dir-walk.h"
#include "base/fd-util.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "test-helpers.h"

static char tmp[] = "/tmp/openenv-dirwalk-XXXXXX";
static int tmp_fd = -EBADF;

static void setup(void)
{
        cr_assert_not_null(mkdtemp(tmp));
        tmp_fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(tmp_fd, 0);
}

static void teardown(void)
{
        safe_close(tmp_fd);
        (void) rm_rf_at(AT_FDCWD, tmp);
}

static void touch(const char *rel)
{
        int fd = openat(tmp_fd, rel, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        cr_assert_geq(fd, 0, "create %s", rel);
        close(fd);
}

/* A small tree: a/ (a/f, a/b/ (a/b/g)), h, l -> a (a symlink to a directory). */
static void make_tree(void)
{
        cr_assert_eq(mkdirat(tmp_fd, "a", 0755), 0);
        cr_assert_eq(mkdirat(tmp_fd, "a/b", 0755), 0);
        touch("a/f");
        touch("a/b/g");
        touch("h");
        cr_assert_eq(symlinkat("a", tmp_fd, "l"), 0);
}

struct log {
        struct strbuf sb;
        int skip_at; /* ENTER of this name returns SKIP */
        int stop_after;
        int n;
};

static const char *const event_names[] = { "entry", "enter", "leave", "error" };

static int log_visit(const struct dir_walk_entry *e, enum dir_walk_event ev, void *userdata)
{
        struct log *l = userdata;

        strbuf_addf(&l->sb, "%s %s %u%s%s;", event_names[ev], e->path ? e->path : "-", e->depth,
                    ev == DIR_WALK_ERROR ? " " : "",
                    ev == DIR_WALK_ERROR ? strerror(-e->error) : "");
        l->n++;
        if (l->stop_after && l->n >= l->stop_after)
                return DIR_WALK_STOP;
        if (ev == DIR_WALK_ENTER && l->skip_at && e->name[0] == (char) l->skip_at)
                return DIR_WALK_SKIP;
        return DIR_WALK_CONTINUE;
}

/* Events sorted, so readdir order does not matter to the assertion. */
static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static char *sorted_log(const char *log)
{
        cleanup_strv char **v = NULL;
        struct strbuf out = STRBUF_INIT;
        cleanup_free char *copy = xstrdup(log);
        char *save = NULL;

        for (char *t = strtok_r(copy, ";", &save); t; t = strtok_r(NULL, ";", &save))
                strv_push(&v, xstrdup(t));
        qsort(v, strv_length(v), sizeof(char *), cmp_str);
        for (char **i = v; i && *i; i++)
                strbuf_addf(&out, "%s;", *i);
        return strbuf_detach(&out, NULL);
}

Test(dir_walk, every_event_once_and_symlinks_are_entries, .init = setup, .fini = teardown)
{
        struct log l = { .sb = STRBUF_INIT };
        cleanup_free char *s = NULL;

        make_tree();
        cr_assert_eq(dir_walk(tmp_fd, &(struct dir_walk_options){ .paths = true }, log_visit, &l),
                     0);
        s = sorted_log(l.sb.buf);
        cr_assert_str_eq(s, "enter a 1;enter a/b 2;entry a/b/g 3;entry a/f 2;entry h 1;"
                            "entry l 1;leave a 1;leave a/b 2;");
        /* Depth first: a directory is left after everything below it. */
        cr_assert_lt(strstr(l.sb.buf, "enter a 1"), strstr(l.sb.buf, "entry a/b/g"));
        cr_assert_lt(strstr(l.sb.buf, "entry a/b/g"), strstr(l.sb.buf, "leave a/b 2"));
        cr_assert_lt(strstr(l.sb.buf, "leave a/b 2"), strstr(l.sb.buf, "leave a 1"));
        cr_assert_lt(strstr(l.sb.buf, "entry a/f"), strstr(l.sb.buf, "leave a 1"));
        strbuf_release(&l.sb);
}

Test(dir_walk, depth_bound_reports_eloop_and_opens_nothing_deeper, .init = setup, .fini = teardown)
{
        struct log l = { .sb = STRBUF_INIT };
        cleanup_free char *s = NULL;

        make_tree();
        cr_assert_eq(dir_walk(tmp_fd, &(struct dir_walk_options){ .paths = true, .max_depth = 1 },
                              log_visit, &l),
                     0);
        cleanup_free char *want =
                xasprintf("enter a 1;entry a/f 2;entry h 1;entry l 1;error a/b 2 %s;leave a 1;",
                          strerror(ELOOP));
        s = sorted_log(l.sb.buf);
        cr_assert_str_eq(s, want);
        strbuf_release(&l.sb);
}

Test(dir_walk, skip_leaves_a_directory_unvisited, .init = setup, .fini = teardown)
{
        struct log l = { .sb = STRBUF_INIT, .skip_at = 'a' };
        cleanup_free char *s = NULL;

        make_tree();
        cr_assert_eq(dir_walk(tmp_fd,
                              &(struct dir_walk_options){ .paths = true, .dirs_only = true },
                              log_visit, &l),
                     0);
        s = sorted_log(l.sb.buf);
        /* dirs_only: h and l are not visited; a was skipped: no LEAVE. */
        cr_assert_str_eq(s, "enter a 1;");
        strbuf_release(&l.sb);
}

Test(dir_walk, stop_ends_the_walk_and_closes_every_fd, .init = setup, .fini = teardown)
{
        struct log l = { .sb = STRBUF_INIT, .stop_after = 2 };
        int before = open("/dev/null", O_RDONLY | O_CLOEXEC), after;

        close(before);
        make_tree();
        cr_assert_eq(dir_walk(tmp_fd, NULL, log_visit, &l), 0);
        cr_assert_eq(l.n, 2);
        after = open("/dev/null", O_RDONLY | O_CLOEXEC);
        close(after);
        cr_assert_eq(before, after, "an fd leaked");
        strbuf_release(&l.sb);
}

static int fail_visit(const struct dir_walk_entry *e, enum dir_walk_event ev, void *userdata)
{
        (void) e, (void) ev, (void) userdata;
        return -EXDEV;
}

Test(dir_walk, a_negative_visit_is_the_result, .init = setup, .fini = teardown)
{
        make_tree();
        cr_assert_eq(dir_walk(tmp_fd, NULL, fail_visit, NULL), -EXDEV);
}

Test(dir_walk, rm_rf_removes_a_tree_deeper_than_recursion_likes, .init = setup, .fini = teardown)
{
        struct strbuf p = STRBUF_INIT;

        /* 600 levels: an fd per level, well below the fd limit. */
        for (int i = 0; i < 600; i++) {
                strbuf_adds(&p, i ? "/d" : "d");
                cr_assert_eq(mkdirat(tmp_fd, p.buf, 0755), 0, "level %d", i);
        }
        strbuf_adds(&p, "/file");
        touch(p.buf);
        cr_assert_eq(symlinkat("/etc", tmp_fd, "d/outside"), 0);
        cr_assert_eq(rm_rf_at(tmp_fd, "d"), 0);
        cr_assert_eq(faccessat(tmp_fd, "d", F_OK, AT_SYMLINK_NOFOLLOW), -1);
        /* The symlink went, not what it pointed at. */
        cr_assert_eq(access("/etc/passwd", F_OK), 0);
        strbuf_release(&p);
}

static int cmp_strp(const void *a, const void *b)
{
        return strcmp(*(char *const *) a, *(char *const *) b);
}

Test(dir_walk, list_names_is_one_level, .init = setup, .fini = teardown)
{
        cleanup_strv char **all = NULL, **dirs = NULL;

        make_tree();
        cr_assert_eq(dir_list_names(tmp_fd, false, &all), 0);
        cr_assert_eq(strv_length(all), 3); /* a, h, l: nothing below a */
        qsort(all, strv_length(all), sizeof(char *), cmp_strp);
        cr_assert_str_eq(all[0], "a");
        cr_assert_str_eq(all[1], "h");
        cr_assert_str_eq(all[2], "l");
        /* The symlink to a directory is not a directory. */
        cr_assert_eq(dir_list_names(tmp_fd, true, &dirs), 0);
        cr_assert_eq(strv_length(dirs), 1);
        cr_assert_str_eq(dirs[0], "a");
}
