/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fork-speed episodes' mechanism end to end, as root: the real template
 * program (python/openenvd_template.py, uvicorn from the system) in a
 * template container, its copies landing in nested containers through the
 * real shim (--adopt-fd), the daemon's side from sandbox/template-fork.h.
 * Each copy is a tiny ASGI app that reports what it is and can do, reached
 * through its container's socket dir like an env server; the checks are
 * made from the copy's side and from the host's.
 */
#include <jansson.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <linux/nsfs.h>

#include "sandbox/template-fork.h"
#include "sandbox-test.h"

#ifndef TEMPLATE_PY
#error "TEMPLATE_PY must be defined by the build"
#endif

#define T_HOST_UID (BOX_HOST_UID + 4 * 65536)
#define LANDINGS   3

static const char app_py[] =
        "import json, os, random\n"
        "def status():\n"
        "    return {l.split(':')[0]: l.split(':', 1)[1].strip()\n"
        "            for l in open('/proc/self/status') if ':' in l}\n"
        "async def app(scope, receive, send):\n"
        "    if scope['type'] != 'http':\n"
        "        return\n"
        "    if scope['path'] == '/killall':\n"
        "        try:\n"
        "            os.kill(-1, 9)\n"
        "            body = 'sent'\n"
        "        except OSError as e:\n"
        "            body = e.strerror\n"
        "    else:\n"
        "        st = status()\n"
        "        fds = {}\n"
        "        for fd in os.listdir('/proc/self/fd'):\n"
        "            try:\n"
        "                fds[fd] = os.readlink('/proc/self/fd/' + fd)\n"
        "            except OSError:\n"
        "                pass\n"
        "        body = json.dumps({'uid': os.getuid(), 'gid': os.getgid(), 'ppid': os.getppid(),\n"
        "                           'cap': st['CapEff'], 'seccomp': st['Seccomp'],\n"
        "                           'nnp': st['NoNewPrivs'], 'random': random.random(),\n"
        "                           'fds': fds, 'pids': len([p for p in os.listdir('/proc')\n"
        "                                                    if p.isdigit()])})\n"
        "    await send({'type': 'http.response.start', 'status': 200,\n"
        "                'headers': [[b'content-type', b'text/plain']]})\n"
        "    await send({'type': 'http.response.body', 'body': body.encode()})\n";

struct landing {
        struct container_spec spec;
        struct forward fwd;
        struct container_nest nest;
        char sockdir[64];
        int pass[1];
        int adopt_w;
        struct container *c;
        pid_t copy; /* the server's host pid, once adopted */
};

static struct {
        struct container *t;
        int ctl;   /* our end of the template's control socket */
        int t_out; /* the template's output */
        struct landing l[LANDINGS];
} T = { .ctl = -EBADF, .t_out = -EBADF };

static void tpl_fini(void)
{
        for (size_t i = 0; i < LANDINGS; i++) {
                T.l[i].c = container_free(T.l[i].c);
                T.l[i].adopt_w = safe_close(T.l[i].adopt_w);
                if (T.l[i].sockdir[0])
                        (void) rm_rf_at(AT_FDCWD, T.l[i].sockdir);
        }
        T.t = container_free(T.t);
        T.ctl = safe_close(T.ctl);
        T.t_out = safe_close(T.t_out);
        box_fini();
}

TestSuite(template, .fini = tpl_fini, .timeout = 120);

/* The box (box_init()) and the app in a dir of its own. */
static const char *write_app(void)
{
        box_init();
        const char *dir = box_tmpdir();
        cleanup_free char *path = xasprintf("%s/app.py", dir);
        cleanup_close int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        cr_assert(fd >= 0 && write_all(fd, app_py, strlen(app_py)) == 0);
        return dir;
}

/* The template: the box's spec as its root, with the landings' ranges. */
static void start_template(const char *app_dir, const char *app)
{
        static struct uid_extent extents[LANDINGS];
        static char *argv[16];
        static char *env[8];
        static int pass[2];
        static char pythonpath[128];

        for (size_t i = 0; i < LANDINGS; i++)
                extents[i] = (struct uid_extent){ .inside = (uid_t) (65536 * (i + 1)),
                                                  .host = (uid_t) (T_HOST_UID + 65536 * (i + 1)),
                                                  .count = 65536 };
        int pair[2];
        cr_assert(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) == 0);
        T.ctl = pair[0];
        int filter = memfd_create("filter", MFD_CLOEXEC);
        cr_assert(filter >= 0 && syscall_filter_export_bpf(filter) == 0);
        cr_assert(lseek(filter, 0, SEEK_SET) == 0);
        pass[0] = pair[1];
        pass[1] = filter;
        /* Bound in: the host's /tmp (where a clone may be) is not the
         * container's. */
        box_add_mount((struct mount_entry){ .kind = MOUNT_BIND,
                                            .source = (char *) app_dir,
                                            .target = (char *) "/opt/oe-tpl/app",
                                            .flags = MS_RDONLY | MS_NOSUID | MS_NODEV });
        box_add_mount((struct mount_entry){ .kind = MOUNT_BIND,
                                            .source = (char *) TEMPLATE_PY,
                                            .target = (char *) "/opt/oe-tpl/template.py",
                                            .flags = MS_RDONLY | MS_NOSUID | MS_NODEV,
                                            .is_file = true });
        (void) snprintf(pythonpath, sizeof(pythonpath), "PYTHONPATH=/opt/oe-tpl/app");
        env[0] = (char *) "PATH=/usr/bin:/bin";
        env[1] = (char *) "HOME=/tmp";
        env[2] = pythonpath;
        env[3] = NULL;
        char **a = argv;
        *a++ = (char *) "/usr/bin/python3";
        *a++ = (char *) "/opt/oe-tpl/template.py";
        *a++ = (char *) "3";
        *a++ = (char *) "4";
        *a++ = (char *) "--";
        *a++ = (char *) app;
        *a++ = (char *) "--host";
        *a++ = (char *) "127.0.0.1";
        *a++ = (char *) "--port";
        *a++ = (char *) "8000";
        *a = NULL;

        B.spec.argv = argv;
        B.spec.env = env;
        B.spec.workdir = (char *) "/opt/oe-tpl/app";
        B.spec.host_uid = T_HOST_UID;
        B.spec.uid = B.spec.gid = 0;
        B.spec.template_root = true;
        B.spec.uid_extents = extents;
        B.spec.n_uid_extents = LANDINGS;
        B.spec.pass_fds = pass;
        B.spec.n_pass_fds = 2;
        B.spec.principal_fds = 0x3;
        box_start();
        T.t = TAKE_PTR(B.c);
        T.t_out = TAKE_FD(B.out_r);
        safe_close(pair[1]);
        safe_close(filter);
}

/* The template's first word, within 60 s. */
static int wait_warm(char **reason)
{
        for (int i = 0; i < 6000; i++) {
                int r = template_read_warm(T.ctl, reason);
                if (r != -EAGAIN)
                        return r;
                (void) poll(&(struct pollfd){ .fd = T.ctl, .events = POLLIN }, 1, 10);
        }
        return -ETIMEDOUT;
}

static void start_landing(size_t i)
{
        struct landing *l = &T.l[i];
        memcpy(l->sockdir, "/tmp/oe-tpl-XXXXXX", sizeof("/tmp/oe-tpl-XXXXXX"));
        cr_assert(mkdtemp(l->sockdir));
        uid_t host = (uid_t) (T_HOST_UID + 65536 * (i + 1));
        cr_assert(chown(l->sockdir, host + BOX_UID, host + BOX_UID) == 0);
        int adopt[2];
        cr_assert(pipe2(adopt, O_CLOEXEC) == 0);
        l->pass[0] = adopt[0];
        l->adopt_w = adopt[1];
        l->fwd = (struct forward){ .kind = FORWARD_UNIX_TO_TCP,
                                   .host = (char *) "127.0.0.1",
                                   .port = 8000,
                                   .path = (char *) "/run/openenvd/env.sock" };
        l->nest = (struct container_nest){ .pidfd = container_pidfd(T.t),
                                           .owner = T_HOST_UID,
                                           .inside = (uid_t) (65536 * (i + 1)) };
        l->spec = B.spec;
        l->spec.template_root = false;
        l->spec.uid_extents = NULL;
        l->spec.n_uid_extents = 0;
        l->spec.principal_fds = 0;
        l->spec.host_uid = host;
        l->spec.uid = l->spec.gid = BOX_UID;
        l->spec.socket_dir = l->sockdir;
        l->spec.forwards = &l->fwd;
        l->spec.n_forwards = 1;
        l->spec.pass_fds = l->pass;
        l->spec.n_pass_fds = 1;
        l->spec.adopt = true;
        l->spec.adopt_pass_index = 0;
        l->spec.nest = &l->nest;
        l->spec.stdio_fd = -EBADF;
        struct container_error e = {};
        int r = container_spawn(&l->spec, &l->c, &e);
        safe_close(adopt[0]);
        cr_assert(r == 0, "landing %zu: %s", i, error_detail_text(&e.detail));
}

/* Forks a copy into landing i the way the daemon will: request, reply,
 * hello (its pid from the kernel), the landing's cgroups, go. */
static void fork_into(size_t i)
{
        struct landing *l = &T.l[i];
        int go = -EBADF;
        cr_assert(template_fork_send(T.ctl,
                                     &(struct template_fork_request){
                                             .landing_pidfd = container_pidfd(l->c),
                                             .adopt_w = l->adopt_w,
                                             .stdio_fd = STDERR_FILENO,
                                             .uid = BOX_UID,
                                             .gid = BOX_UID,
                                             .cwd = "/",
                                     },
                                     &go) == 0);
        cleanup_close int go_fd = go;
        l->adopt_w = safe_close(l->adopt_w);
        int r = -EAGAIN;
        for (int n = 0; n < 3000 && r == -EAGAIN; n++) {
                (void) poll(&(struct pollfd){ .fd = T.ctl, .events = POLLIN }, 1, 10);
                r = template_read_reply(T.ctl, NULL);
        }
        cr_assert(r == 0, "fork reply: %s", strerror(-r));
        pid_t pid = 0;
        r = -EAGAIN;
        for (int n = 0; n < 3000 && r == -EAGAIN; n++) {
                (void) poll(&(struct pollfd){ .fd = go_fd, .events = POLLIN }, 1, 10);
                r = template_copy_hello(go_fd, &pid, NULL);
        }
        cr_assert(r == 0, "hello: %s", strerror(-r));
        if (B.spec.placement)
                cr_assert(cgroup_placement_attach_all(B.spec.placement, pid) == 0);
        cr_assert(template_copy_go(go_fd) == 0);
}

/* GET path from landing i's server, through its socket dir; retried until
 * the copy listens (uvicorn's start), within 30 s. */
static char *get(size_t i, const char *path)
{
        cleanup_free char *sock = xasprintf("%s/env.sock", T.l[i].sockdir);
        for (int n = 0; n < 300; n++) {
                cleanup_close int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                struct sockaddr_un sa = { .sun_family = AF_UNIX };
                cr_assert(strlen(sock) < sizeof(sa.sun_path));
                memcpy(sa.sun_path, sock, strlen(sock) + 1);
                if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) == 0) {
                        cleanup_free char *req =
                                xasprintf("GET %s HTTP/1.0\r\nHost: x\r\n\r\n", path);
                        /* The shim closes it while the copy does not listen yet. */
                        if (send(fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t) strlen(req)) {
                                usleep(100 * 1000);
                                continue;
                        }
                        char buf[65536];
                        size_t len = 0;
                        ssize_t k;
                        while ((k = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
                                len += (size_t) k;
                        buf[len] = '\0';
                        const char *body = strstr(buf, "\r\n\r\n");
                        if (body && startswith(buf, "HTTP/1.1 200"))
                                return xstrdup(body + 4);
                }
                usleep(100 * 1000);
        }
        cr_assert_fail("landing %zu never answered %s", i, path);
        return NULL;
}

static json_t *report(size_t i)
{
        cleanup_free char *text = get(i, "/");
        json_t *j = json_loads(text, 0, NULL);
        cr_assert(j, "not JSON: %s", text);
        return j;
}

static bool alive(pid_t pid)
{
        return kill(pid, 0) == 0;
}

/* The copy is the principal of its landing: the landing's uid, no
 * capability, no_new_privs, the container's filter, a child of the
 * landing's shim; it holds no fd of the template's (its control socket,
 * its filter); on the host it runs with the landing's own uid, in its user
 * namespace and in its cgroup. */
Test(template, a_copy_lands_confined_in_its_container)
{
        const char *dir = write_app();
        start_template(dir, "app:app");
        box_cgroup(512ULL << 20, 256);
        char *reason = NULL;
        int r = wait_warm(&reason);
        cr_assert(r == 0, "template: %s (%s)", strerror(-r), reason ? reason : "");
        start_landing(0);
        fork_into(0);

        json_t *j = report(0);
        cr_assert_eq(json_integer_value(json_object_get(j, "uid")), BOX_UID);
        cr_assert_eq(json_integer_value(json_object_get(j, "gid")), BOX_UID);
        cr_assert_eq(json_integer_value(json_object_get(j, "ppid")), 1);
        cr_assert_str_eq(json_string_value(json_object_get(j, "cap")), "0000000000000000");
        cr_assert_str_eq(json_string_value(json_object_get(j, "seccomp")), "2");
        cr_assert_str_eq(json_string_value(json_object_get(j, "nnp")), "1");
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(j, "fds"), k, v)
        {
                const char *target = json_string_value(v);
                cr_assert(!startswith(target, "memfd:"), "fd %s: %s", k, target);
                cr_assert(!strstr(target, "template.py"), "fd %s: %s", k, target);
        }
        json_decref(j);

        pid_t shim = container_pid(T.l[0].c), copy = first_child(shim);
        cr_assert_eq(host_uid_of(copy), T_HOST_UID + 65536 + BOX_UID);
        struct stat a, b;
        cleanup_free char *pa = xasprintf("/proc/%d/ns/user", (int) copy);
        cleanup_free char *pb = xasprintf("/proc/%d/ns/user", (int) shim);
        cr_assert(stat(pa, &a) == 0 && stat(pb, &b) == 0 && a.st_ino == b.st_ino);
        /* In every hierarchy, the cgroup2 one too: where its shim is. */
        cleanup_free char *cg_path = xasprintf("/proc/%d/cgroup", (int) copy), *cg = NULL;
        cleanup_free char *shim_path = xasprintf("/proc/%d/cgroup", (int) shim), *shim_cg = NULL;
        cleanup_free char *want = xasprintf("oe-sbx-test-%d", (int) getpid());
        cr_assert(read_full_file_at(AT_FDCWD, cg_path, 1 << 16, &cg, NULL) == 0);
        cr_assert(read_full_file_at(AT_FDCWD, shim_path, 1 << 16, &shim_cg, NULL) == 0);
        cr_assert(strstr(cg, want), "copy not in the landing's cgroup: %s", cg);
        cr_assert_str_eq(cg, shim_cg, "the copy's cgroups are not its shim's");
}

/* Two copies of one template: each has its own random state; one that
 * SIGKILLs everything it may signal reaches neither the template nor its
 * sibling (it sees neither), and the template forks a third afterwards. */
Test(template, siblings_are_apart_from_each_other_and_the_template)
{
        const char *dir = write_app();
        start_template(dir, "app:app");
        char *reason = NULL;
        int r = wait_warm(&reason);
        cr_assert(r == 0, "template: %s (%s)", strerror(-r), reason ? reason : "");
        for (size_t i = 0; i < 2; i++) {
                start_landing(i);
                fork_into(i);
        }
        json_t *j0 = report(0), *j1 = report(1);
        double r0 = json_real_value(json_object_get(j0, "random"));
        double r1 = json_real_value(json_object_get(j1, "random"));
        cr_assert(r0 != r1, "siblings share random state: %f", r0);
        /* its own shim and itself: the template's and the sibling's
         * processes are not in its pid namespace */
        cr_assert_eq(json_integer_value(json_object_get(j0, "pids")), 2);
        json_decref(j0);
        json_decref(j1);

        pid_t zygote = first_child(container_pid(T.t));
        cleanup_free char *killed = get(0, "/killall");
        /* kill(-1) spares the caller and PID 1: with nobody else in
         * sight, the kernel finds no one to signal */
        cr_assert(streq(killed, "sent") || streq(killed, "No such process"), "%s", killed);
        cr_assert(alive(zygote), "the copy killed the template");
        json_decref(report(1));
        start_landing(2);
        fork_into(2);
        json_decref(report(2));
}

/* An app that cannot be imported: the template says why, and forks none. */
Test(template, a_template_that_cannot_warm_says_why)
{
        const char *dir = write_app();
        start_template(dir, "no_such_module:app");
        char *reason = NULL;
        int r = wait_warm(&reason);
        cr_assert_eq(r, -EPROTO);
        cr_assert(reason && strstr(reason, "no_such_module"), "reason: %s", reason ? reason : "");
        free(reason);
}
