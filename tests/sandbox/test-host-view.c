/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The host view's skeleton, built from a fake host tree (no root needed):
 * what of the host's /etc and loader paths reaches the containers' root,
 * and what never does.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "base/fd-util.h"
#include "base/util.h"
#include "sandbox/host-view.h"
#include "test-helpers.h"

static char tmp[] = "/tmp/openenvd-host-view.XXXXXX";
static char *host, *view;

static void put(const char *rel, const char *content)
{
        cleanup_free char *p = xasprintf("%s/%s", host, rel);
        cleanup_free char *dir = xstrdup(p);
        *strrchr(dir, '/') = '\0';
        cr_assert_eq(mkdir_p_at(AT_FDCWD, dir, 0755), 0);
        FILE *f = fopen(p, "w");
        cr_assert_not_null(f, "%s", p);
        fputs(content, f);
        fclose(f);
}

static void link_in_host(const char *target, const char *rel)
{
        cleanup_free char *p = xasprintf("%s/%s", host, rel);
        cr_assert_eq(symlink(target, p), 0, "%s", p);
}

static bool in_view(const char *rel)
{
        struct stat st;
        cleanup_free char *p = xasprintf("%s/%s", view, rel);
        return lstat(p, &st) == 0;
}

static char *view_file(const char *rel)
{
        char *s = NULL;
        cleanup_free char *p = xasprintf("%s/%s", view, rel);
        cr_assert_eq(read_full_file_at(AT_FDCWD, p, 1 << 20, &s, NULL), 0, "%s", p);
        return s;
}

static const struct mount_entry *bind_of(const struct host_view *v, const char *target)
{
        for (size_t i = 0; i < v->n_binds; i++)
                if (streq(v->binds[i].target, target))
                        return &v->binds[i];
        return NULL;
}

static void setup(void)
{
        cr_assert_not_null(mkdtemp(tmp));
        host = xasprintf("%s/host", tmp);
        view = xasprintf("%s/view", tmp);
        cr_assert_eq(mkdir(host, 0755), 0);
        put("usr/bin/python3", "");
        put("usr/lib/x86_64-linux-gnu/libc.so.6", "");
        put("lib64/ld-linux-x86-64.so.2", ""); /* a real directory, not merged */
        link_in_host("usr/lib", "lib");
        link_in_host("usr/bin", "bin");
        put("etc/passwd", "root:x:0:0::/root:/bin/bash\nalice:x:1000:1000::/home/alice:/bin/sh\n");
        put("etc/group", "root:x:0:\nsudo:x:27:alice\n");
        put("etc/shadow", "root:$6$secret:19000:0:99999:7:::\n");
        put("etc/gshadow", "root:*::\n");
        put("etc/machine-id", "0123456789abcdef0123456789abcdef\n");
        put("etc/hostname", "build-host-7\n");
        put("etc/ssh/ssh_host_ed25519_key", "PRIVATE KEY\n");
        put("etc/ssl/private/host.key", "PRIVATE KEY\n");
        put("etc/ssl/certs/ca-certificates.crt", "CERTS\n");
        put("etc/ssl/openssl.cnf", "# openssl\n");
        put("etc/ssl/certs/sub/hidden.pem", "NESTED\n");
        link_in_host("ca-certificates.crt", "etc/ssl/certs/ca.pem");
        put("etc/ld.so.cache", "ld.so-1.7.0");
        put("etc/ld.so.conf.d/x86_64-linux-gnu.conf", "/usr/lib/x86_64-linux-gnu\n");
        put("etc/nsswitch.conf", "passwd: files\n");
        put("etc/python3.11/sitecustomize.py", "");
        link_in_host("/usr/share/zoneinfo/Etc/UTC", "etc/localtime");
        put("srv/other-checkout/examples/echo/assets/oracle.json", "{\"answer\": 42}\n");
}

static void teardown(void)
{
        (void) rm_rf_at(AT_FDCWD, tmp);
        free(host);
        free(view);
}

TestSuite(host_view, .init = setup, .fini = teardown);

Test(host_view, etc_is_filtered_and_secrets_never_reach_the_view)
{
        struct host_view v;

        cr_assert_eq(host_view_make(host, view, &v), 0);
        static const char *const never[] = { "etc/shadow",   "etc/gshadow", "etc/machine-id",
                                             "etc/hostname", "etc/ssh",     "etc/ssl/private",
                                             "srv",          "home",        "root" };
        for (size_t i = 0; i < ELEMENTSOF(never); i++)
                cr_expect_not(in_view(never[i]), "%s is in the view", never[i]);
        cr_expect_null(bind_of(&v, "/etc/ssl/private"));
        cr_expect_null(bind_of(&v, "/etc"), "never the whole /etc");

        /* The host's accounts stay out: a generated passwd and group. */
        cleanup_free char *passwd = view_file("etc/passwd");
        cleanup_free char *group = view_file("etc/group");
        cr_expect_null(strstr(passwd, "alice"), "%s", passwd);
        cr_expect_str_eq(passwd, host_view_passwd());
        cr_expect_null(strstr(group, "sudo"), "%s", group);

        /* What programs need: copied, symlinks as symlinks, dirs bound. */
        cleanup_free char *cache = view_file("etc/ld.so.cache");
        cr_expect_str_eq(cache, "ld.so-1.7.0");
        cleanup_free char *cnf = view_file("etc/ssl/openssl.cnf");
        cr_expect_str_eq(cnf, "# openssl\n");
        char target[256] = "";
        cleanup_free char *lt = xasprintf("%s/etc/localtime", view);
        cr_expect_gt(readlink(lt, target, sizeof(target) - 1), 0);
        cr_expect_str_eq(target, "/usr/share/zoneinfo/Etc/UTC");
        /* Public configuration directories: copied one level deep (a bind
         * would cost every spawn fds and a mount). */
        cleanup_free char *certs = view_file("etc/ssl/certs/ca-certificates.crt");
        cr_expect_str_eq(certs, "CERTS\n");
        cleanup_free char *conf = view_file("etc/ld.so.conf.d/x86_64-linux-gnu.conf");
        cr_expect_str_eq(conf, "/usr/lib/x86_64-linux-gnu\n");
        cr_expect(in_view("etc/python3.11/sitecustomize.py"));
        cleanup_free char *pem = xasprintf("%s/etc/ssl/certs/ca.pem", view);
        memset(target, 0, sizeof(target));
        cr_expect_gt(readlink(pem, target, sizeof(target) - 1), 0, "a symlink stays one");
        cr_expect_str_eq(target, "ca-certificates.crt");
        cr_expect_not(in_view("etc/ssl/certs/sub"), "one level only");
        for (size_t i = 0; i < v.n_binds; i++)
                cr_expect_neq(strncmp(v.binds[i].target, "/etc", 4), 0, "%s bound from the host",
                              v.binds[i].target);
        host_view_done(&v);
}

Test(host_view, usr_and_the_loader_paths_as_the_host_lays_them_out)
{
        struct host_view v;
        char target[64] = "";

        cr_assert_eq(host_view_make(host, view, &v), 0);
        const struct mount_entry *usr = bind_of(&v, "/usr");
        cr_assert_not_null(usr);
        cr_expect(usr->flags & MS_RDONLY && usr->flags & MS_NOSUID && usr->flags & MS_NODEV);
        /* Merged /usr: the symlink itself, relative as on the host. */
        cleanup_free char *lib = xasprintf("%s/lib", view);
        cr_expect_gt(readlink(lib, target, sizeof(target) - 1), 0);
        cr_expect_str_eq(target, "usr/lib");
        cr_expect_null(bind_of(&v, "/lib"));
        /* A real directory: bound. */
        const struct mount_entry *lib64 = bind_of(&v, "/lib64");
        cr_assert_not_null(lib64);
        cleanup_free char *src = xasprintf("%s/lib64", host);
        cr_expect_str_eq(lib64->source, src);
        /* Absent on the host: absent in the view. */
        cr_expect_not(in_view("libx32"));
        cr_expect_null(bind_of(&v, "/libx32"));
        static const char *const points[] = { "proc", "sys", "dev", "tmp", "run" };
        for (size_t i = 0; i < ELEMENTSOF(points); i++)
                cr_expect(in_view(points[i]), "mount point %s", points[i]);
        host_view_done(&v);
}

Test(host_view, covers_its_own_paths_only)
{
        struct host_view v;

        cr_assert_eq(host_view_make(host, view, &v), 0);
        cr_expect(host_view_covers(&v, "/"));
        cr_expect(host_view_covers(&v, "/usr"));
        cr_expect(host_view_covers(&v, "/usr/local/bin"));
        cr_expect(host_view_covers(&v, "/etc/anything"), "no host dir below /etc is bound");
        cr_expect(host_view_covers(&v, "/tmp/x"));
        cr_expect_not(host_view_covers(&v, "/usrx"));
        cr_expect_not(host_view_covers(&v, "/opt/openenv-echo"));
        cr_expect_not(host_view_covers(&v, "/srv"));
        host_view_done(&v);
}

Test(host_view, hidden_by_names_the_containers_own_mount_point)
{
        /* Where a start directory is not the host's inside a container. */
        cr_expect_str_eq(host_view_hidden_by("/tmp", true), "/tmp");
        cr_expect_str_eq(host_view_hidden_by("/tmp/clone/x y", true), "/tmp");
        cr_expect_str_eq(host_view_hidden_by("/run/user/0", false), "/run");
        cr_expect_str_eq(host_view_hidden_by("/workspace/a", false), "/workspace");
        cr_expect_str_eq(host_view_hidden_by("/etc/app", true), "/etc");
        cr_expect_null(host_view_hidden_by("/etc/app", false), "an image's own /etc is its");
        cr_expect_null(host_view_hidden_by("/tmpx", true));
        cr_expect_null(host_view_hidden_by("/opt/openenv-echo", true));
        cr_expect_null(host_view_hidden_by("/", true));
        cr_expect_null(host_view_hidden_by("/var/tmp/u", true));
}

Test(host_view, refuses_an_existing_directory)
{
        struct host_view v;

        cr_assert_eq(mkdir(view, 0755), 0);
        cr_expect_eq(host_view_make(host, view, &v), -EEXIST);
}
