#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""TAP: python/openenvd_template.py, the warm template forking a copy of an
ASGI env server per episode into a landing container. Root required.

The test plays the daemon. It builds a template container (user namespace
with a two-range uid map, pid, mount and net namespaces) and starts the
template in it the way the daemon does (python3 -c SOURCE CTL FILTER -- ...),
then landing containers whose user and pid namespaces are children of the
template's (a helper joins the template's user and pid namespaces as its
root and unshares them, as /work/exp2-reference.py does); each landing's
PID 1 is an exec'd python that relays what it reads on the adopt pipe. The
app is a tiny ASGI function answering GET / with what the copy sees (JSON);
the test fetches it from inside the landing's network namespace.
"""
import array
import ctypes
import errno
import fcntl
import gc
import json
import os
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import traceback
import unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests"))
import unittest_tap  # noqa: E402
SOURCE = open(os.path.join(REPO, "python", "openenvd_template.py")).read()
PY = "/usr/bin/python3"
BT, BE = 1512000000, 1512100000     # host uids of the template's 0 and 65536
PORT = 8000
UVICORN_ARGS = ["app:app", "--host", "127.0.0.1", "--port", str(PORT),
                "--log-level", "warning", "--no-access-log", "--timeout-keep-alive", "3"]
NEWNS, NEWCG, NEWUTS, NEWIPC = 0x20000, 0x02000000, 0x04000000, 0x08000000
NEWUSER, NEWPID, NEWNET = 0x10000000, 0x20000000, 0x40000000
MACHINE = os.uname().machine
SYS_KEYCTL = {"x86_64": 250, "aarch64": 219}[MACHINE]
SYS_PIDFD_OPEN = 434
TEMPLATE_ENV = "OPENENVD_TEMPLATE_TEST=template"     # the template's; a copy given env lacks it
EPISODE_ENV = ["OPENENVD_EPISODE=abc", "FOO=1"]
libc = ctypes.CDLL(None, use_errno=True)

APP = r'''
import ctypes, errno, json, os, random, resource
RNG = random.Random(7)      # module-level: only the template's reseed differs it
LIFESPAN = []               # pids that ran the lifespan startup
FIRST = {}
libc = ctypes.CDLL(None, use_errno=True)
SYS_KEYCTL = {"x86_64": 250, "aarch64": 219}[os.uname().machine]

def c_environ():
    """What C code (getenv) sees: libc's environ, not os.environ's copy."""
    env = ctypes.POINTER(ctypes.c_char_p).in_dll(libc, "environ")
    out, i = [], 0
    while env[i] is not None:
        out.append(env[i].decode(errors="replace"))
        i += 1
    return sorted(out)

def facts():
    if not FIRST:
        FIRST.update(random=random.random(), rng=RNG.random())
    with open("/proc/self/status") as f:
        st = dict((l.split(":", 1)[0], l.split(":", 1)[1].strip()) for l in f if ":" in l)
    fds = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            fds[fd] = os.readlink("/proc/self/fd/" + fd)
        except OSError:
            pass
    d = "/tmp/openenvd-template-test-%d" % os.getpid()
    try:
        os.mkdir(d)
        os.rmdir(d)
        mk = 0
    except OSError as ex:
        mk = ex.errno
    key = libc.syscall(ctypes.c_long(SYS_KEYCTL), ctypes.c_long(0), ctypes.c_long(-3),
                       ctypes.c_long(0))
    return dict(FIRST, pid=os.getpid(), ppid=os.getppid(), uid=os.getresuid(),
                gid=os.getresgid(), groups=os.getgroups(), cwd=os.getcwd(),
                status={k: st.get(k) for k in ("CapEff", "CapPrm", "CapBnd", "CapAmb",
                                               "NoNewPrivs", "Seccomp")},
                ns={n: os.readlink("/proc/self/ns/" + n) for n in ("user", "pid", "net", "mnt")},
                fds=fds, keyring=key, mkdir=mk, lifespan=LIFESPAN,
                nofile=resource.getrlimit(resource.RLIMIT_NOFILE), sid=os.getsid(0),
                env=sorted("%s=%s" % kv for kv in os.environ.items()), c_env=c_environ())

async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            m = await receive()
            if m["type"] == "lifespan.startup":
                LIFESPAN.append(os.getpid())
                await send({"type": "lifespan.startup.complete"})
            elif m["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    body = json.dumps(facts()).encode()
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": body})
'''

LANDING_INIT = r'''
import os, signal, sys
r, rep = int(sys.argv[1]), int(sys.argv[2])
def reap(*_):
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
signal.signal(signal.SIGCHLD, reap)
os.write(rep, b"ready %s\n" % os.readlink("/proc/self").encode())
buf = b""
while True:
    d = os.read(r, 4096)
    if not d:
        break
    buf += d
    while b"\n" in buf:
        line, buf = buf.split(b"\n", 1)
        os.write(rep, b"adopt " + line + b"\n")
while True:
    signal.pause()
'''


def bpf(code, jt, jf, k):
    return struct.pack("=HBBI", code, jt, jf, k)


ALLOW = bpf(0x06, 0, 0, 0x7fff0000)      # BPF_RET|BPF_K SECCOMP_RET_ALLOW


def deny_mkdir():
    """mkdir and mkdirat: EPERM; anything else allowed (a test filter)."""
    arch, nrs = {"x86_64": (0xc000003e, (83, 258)), "aarch64": (0xc00000b7, (34, 34))}[MACHINE]
    return b"".join([
        bpf(0x20, 0, 0, 4),            # ld arch
        bpf(0x15, 0, 3, arch),         # jeq arch ? next : allow
        bpf(0x20, 0, 0, 0),            # ld nr
        bpf(0x15, 2, 0, nrs[0]),       # jeq mkdir -> eperm
        bpf(0x15, 1, 0, nrs[1]),       # jeq mkdirat -> eperm
        ALLOW,
        bpf(0x06, 0, 0, 0x00050000 | errno.EPERM),   # SECCOMP_RET_ERRNO
    ])


def chk(r, what):
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, "%s: %s" % (what, os.strerror(e)))
    return r


def setns(fd, flags):
    chk(libc.setns(fd, flags), "setns 0x%x" % flags)


def unshare(flags):
    chk(libc.unshare(flags), "unshare 0x%x" % flags)


def pidfd_open(pid):
    return chk(libc.syscall(ctypes.c_long(SYS_PIDFD_OPEN), ctypes.c_long(pid),
                            ctypes.c_long(0)), "pidfd_open")


def write_maps(pid, lines):
    for f in ("uid_map", "gid_map"):
        with open("/proc/%d/%s" % (pid, f), "w") as fh:
            fh.write(lines)


def children(pid, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            kids = [int(x) for x in f.read().split()]
        if kids:
            return kids
        time.sleep(0.01)
    raise AssertionError("pid %d has no children" % pid)


def die_with_parent():
    """PR_SET_PDEATHSIG: nothing outlives a killed test (a credential
    change clears it: set again after each)."""
    chk(libc.prctl(1, signal.SIGKILL, 0, 0, 0), "pdeathsig")


def in_child(fn):
    """fork; the child runs fn and _exits (99 and a traceback on error)."""
    pid = os.fork()
    if pid == 0:
        try:
            die_with_parent()
            fn()
            os._exit(0)
        except BaseException:
            traceback.print_exc()
            os._exit(99)
    return pid


def lo_up():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    ifr = fcntl.ioctl(s, 0x8913, struct.pack("16sH22x", b"lo", 0))          # SIOCGIFFLAGS
    flags = struct.unpack("16sH", ifr[:18])[1]
    fcntl.ioctl(s, 0x8914, struct.pack("16sH22x", b"lo", flags | 1))         # SIOCSIFFLAGS
    s.close()


def private_kib(pid):
    """Private_Clean + Private_Dirty of pid, in KiB."""
    kib = 0
    with open("/proc/%d/smaps_rollup" % pid) as f:
        for line in f:
            k, v = line.split()[:2]
            if k in ("Private_Clean:", "Private_Dirty:"):
                kib += int(v)
    return kib


def exit_code(status):
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)


class Template:
    """Template container T (user+pid+mnt+net), its PID 1 (I, a fork) and
    the template Z exec'd under I. I exits with Z's exit code, T with I's."""

    def __init__(self, filt, args=UVICORN_ARGS):
        self.ctl, zctl = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.ctl.settimeout(30)
        memfd = os.memfd_create("filter", 0)
        os.write(memfd, filt)           # left at the end: the template preads
        r1, w1 = os.pipe()
        r2, w2 = os.pipe()

        def t_main():
            self.ctl.close()
            unshare(NEWUSER)
            os.write(w1, b"u")
            os.read(r2, 1)
            os.setresgid(0, 0, 0)
            os.setresuid(0, 0, 0)
            die_with_parent()
            unshare(NEWPID | NEWNS | NEWNET)

            def i_main():
                def z_main():
                    for fd in (zctl.fileno(), memfd):
                        os.set_inheritable(fd, True)
                    os.chdir(APPDIR)
                    key, value = TEMPLATE_ENV.split("=", 1)
                    os.execve(PY, [PY, "-c", SOURCE, str(zctl.fileno()), str(memfd), "--"]
                              + list(args), dict(os.environ, **{key: value}))
                z = in_child(z_main)
                zctl.close()
                _, st = os.waitpid(z, 0)
                os._exit(exit_code(st))
            _, st = os.waitpid(in_child(i_main), 0)
            os._exit(exit_code(st))
        self.t = in_child(t_main)
        zctl.close()
        os.close(memfd)
        os.read(r1, 1)
        write_maps(self.t, "0 %d 65536\n65536 %d 65536\n" % (BT, BE))
        os.write(w2, b"g")
        for fd in (r1, w1, r2, w2):
            os.close(fd)
        self.first = self.ctl.recv(4096)
        self.i = children(self.t)[0]
        self.z = children(self.i)[0]

    def close(self):
        try:
            os.kill(self.i, signal.SIGKILL)
        except (ProcessLookupError, AttributeError):
            pass
        self.ctl.close()
        return self.wait()

    def wait(self):
        _, st = os.waitpid(self.t, 0)
        return exit_code(st)

    def request(self, msg, fds=()):
        anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
        self.ctl.sendmsg([msg if isinstance(msg, bytes) else json.dumps(msg).encode()], anc)
        return self.ctl.recv(4096).decode()


class Landing:
    """A landing container whose user and pid namespaces are the template's
    children; its PID 1 (exec'd) relays the adopt pipe on a report pipe."""

    def __init__(self, tmpl):
        self.adopt_r, self.adopt_w = os.pipe()
        self.rep, rep_w = os.pipe()
        self.buf = b""
        r1, w1 = os.pipe()
        r2, w2 = os.pipe()

        def h_main():
            zfd = pidfd_open(tmpl.z)
            chk(libc.prctl(28, 1 << 2, 0, 0, 0), "securebits")   # SECBIT_KEEP_CAPS
            os.setresgid(-1, BT, -1)
            os.setresuid(-1, BT, -1)         # the landing's user ns: owned by T's root
            libc.setfsuid(0)
            libc.setfsgid(0)
            die_with_parent()
            setns(zfd, NEWUSER | NEWPID)

            def e0_main():
                unshare(NEWUSER | NEWNS | NEWNET | NEWIPC | NEWUTS | NEWPID | NEWCG)
                os.write(w1, b"u")
                os.read(r2, 1)

                def e_main():
                    os.setresgid(0, 0, 0)
                    os.setresuid(0, 0, 0)
                    die_with_parent()
                    lo_up()
                    for fd in (self.adopt_r, rep_w):
                        os.set_inheritable(fd, True)
                    os.execv(PY, [PY, "-c", LANDING_INIT, str(self.adopt_r), str(rep_w)])
                os.waitpid(in_child(e_main), 0)
            e0 = in_child(e0_main)
            os.read(r1, 1)
            write_maps(e0, "0 65536 65536\n")
            os.write(w2, b"g")
            os.waitpid(e0, 0)
        self.h = in_child(h_main)
        for fd in (r1, w1, r2, w2, rep_w, self.adopt_r):
            os.close(fd)
        self.pid1 = int(self.line(b"ready "))

    def line(self, prefix, timeout=20):
        deadline = time.monotonic() + timeout
        while True:
            while b"\n" in self.buf:
                ln, self.buf = self.buf.split(b"\n", 1)
                if ln.startswith(prefix):
                    return ln[len(prefix):].decode()
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.rep], [], [], left)[0]:
                raise AssertionError("landing: no %r line" % prefix)
            d = os.read(self.rep, 4096)
            if not d:
                raise AssertionError("landing: PID 1 gone before %r" % prefix)
            self.buf += d

    def ns(self, name):
        return os.readlink("/proc/%d/ns/%s" % (self.pid1, name))

    def close(self):
        try:
            os.kill(self.pid1, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(self.h, 0)
        os.close(self.rep)
        os.close(self.adopt_w)


class Copy:
    """One fork request as the daemon makes it: hello, credentials, go."""

    def __init__(self, tmpl, landing, uid=1000, gid=1001, nofile=0, nproc=0, go=b"go",
                 env=None):
        self.landing = landing
        fd, self.stdio = tempfile.mkstemp(dir=APPDIR, prefix="stdio.")
        go_d, go_c = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        go_d.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        go_d.settimeout(30)
        self.go_ino = os.fstat(go_c.fileno()).st_ino
        pidfd = pidfd_open(landing.pid1)
        req = {"op": "fork", "uid": uid, "gid": gid, "cwd": APPDIR,
               "nofile": nofile, "nproc": nproc}
        if env is not None:
            req["env"] = env
        self.reply = tmpl.request(req, [pidfd, landing.adopt_w, fd, go_c.fileno()])
        for x in (pidfd, fd):
            os.close(x)
        go_c.close()
        msg, anc, _, _ = go_d.recvmsg(64, socket.CMSG_SPACE(12))
        self.hello = msg
        self.creds = [struct.unpack("iII", d[:12]) for lvl, kind, d in anc
                      if lvl == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS]
        go_d.send(go)
        self.go_d = go_d

    def output(self):
        with open(self.stdio, "rb") as f:
            return f.read().decode(errors="replace")

    def get(self, timeout=20):
        """GET / from inside the landing's network namespace."""
        r, w = os.pipe()
        pid1 = self.landing.pid1

        def fetch():
            os.close(r)
            setns(os.open("/proc/%d/ns/net" % pid1, os.O_RDONLY), NEWNET)
            deadline = time.monotonic() + timeout
            while True:
                try:
                    s = socket.create_connection(("127.0.0.1", PORT), timeout=5)
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
            s.sendall(b"GET / HTTP/1.0\r\nHost: x\r\n\r\n")
            data = b""
            while True:
                d = s.recv(65536)
                if not d:
                    break
                data += d
            os.write(w, data)
        pid = in_child(fetch)
        os.close(w)
        data = b""
        while True:
            d = os.read(r, 65536)
            if not d:
                break
            data += d
        os.close(r)
        _, st = os.waitpid(pid, 0)
        if exit_code(st) != 0 or b"\r\n\r\n" not in data:
            raise AssertionError("GET failed; copy's output:\n" + self.output())
        return json.loads(data.split(b"\r\n\r\n", 1)[1])


APPDIR = None
F = None    # the shared fixture: a template, two landings, a copy in each


class Fixture:
    def __init__(self):
        # The template inherits this session keyring: a copy must not keep it.
        self.keyring = chk(libc.syscall(ctypes.c_long(SYS_KEYCTL), ctypes.c_long(1),
                                        ctypes.c_void_p(None)), "keyctl join")
        self.tmpl = Template(deny_mkdir())
        self.landings.append(Landing(self.tmpl))
        self.landings.append(Landing(self.tmpl))
        self.a = Copy(self.tmpl, self.landings[0], uid=1000, gid=1001, nofile=256)
        self.b = Copy(self.tmpl, self.landings[1], uid=1002, gid=1003, env=EPISODE_ENV)
        self.fa = self.a.get()
        self.fb = self.b.get()

    def close(self):
        for ln in self.landings:
            ln.close()
        if self.tmpl is not None:
            self.tmpl.close()


def setUpModule():
    global APPDIR, F
    APPDIR = tempfile.mkdtemp(prefix="template-test.")
    os.chmod(APPDIR, 0o755)
    with open(os.path.join(APPDIR, "app.py"), "w") as f:
        f.write(APP)
    F = Fixture.__new__(Fixture)
    F.landings, F.tmpl = [], None
    try:
        F.__init__()
    except BaseException:
        F.close()
        raise


def tearDownModule():
    F.close()
    shutil.rmtree(APPDIR, ignore_errors=True)


class Copies(unittest.TestCase):
    def test_warm_before_any_fork_and_forked_replies(self):
        self.assertEqual(F.tmpl.first, b"warm")
        for c in (F.a, F.b):
            self.assertRegex(c.reply, r"^forked [0-9]+$")

    def test_template_never_listens_nor_runs_the_lifespan(self):
        listening = []
        for proto in ("tcp", "tcp6"):
            with open("/proc/%d/net/%s" % (F.tmpl.z, proto)) as f:
                for ln in f.readlines()[1:]:
                    local, state = ln.split()[1], ln.split()[3]
                    if state == "0A" and int(local.split(":")[1], 16) == PORT:
                        listening.append(ln)
        self.assertEqual(listening, [])
        self.assertNotEqual(os.readlink("/proc/%d/ns/net" % F.tmpl.z), F.landings[0].ns("net"))
        for f in (F.fa, F.fb):
            self.assertEqual(f["lifespan"], [f["pid"]])

    def test_lands_in_the_landing_namespaces(self):
        for f, landing in ((F.fa, F.landings[0]), (F.fb, F.landings[1])):
            for n in ("user", "pid", "net", "mnt"):
                self.assertEqual(f["ns"][n], landing.ns(n), n)
                self.assertNotEqual(f["ns"][n], os.readlink("/proc/%d/ns/%s" % (F.tmpl.z, n)), n)

    def test_runs_as_the_requested_uid_and_gid(self):
        self.assertEqual(F.fa["uid"], [1000] * 3)
        self.assertEqual(F.fa["gid"], [1001] * 3)
        self.assertEqual(F.fb["uid"], [1002] * 3)
        self.assertEqual(F.fb["gid"], [1003] * 3)
        self.assertEqual(F.fa["groups"], [])
        self.assertEqual(F.fa["cwd"], APPDIR)

    def test_no_capabilities_and_no_new_privs(self):
        for f in (F.fa, F.fb):
            for k in ("CapEff", "CapPrm", "CapBnd", "CapAmb"):
                self.assertEqual(int(f["status"][k], 16), 0, k)
            self.assertEqual(f["status"]["NoNewPrivs"], "1")

    def test_seccomp_filter_installed_and_enforced(self):
        for f in (F.fa, F.fb):
            self.assertEqual(f["status"]["Seccomp"], "2")
            self.assertEqual(f["mkdir"], errno.EPERM)

    def test_server_is_the_landing_pid1s_child_and_adopted(self):
        for f, c in ((F.fa, F.a), (F.fb, F.b)):
            self.assertEqual(f["ppid"], 1)
            self.assertEqual(f["sid"], f["pid"])
            self.assertEqual(int(c.landing.line(b"adopt ")), f["pid"])

    def test_hello_comes_from_inside_the_landing(self):
        for c in (F.a, F.b):
            self.assertEqual(c.hello, b"hello")
            self.assertEqual(len(c.creds), 1)
            pid, uid, gid = c.creds[0]
            self.assertGreater(pid, 0)
            self.assertEqual((uid, gid), (BT, BT))    # still the template's root

    def test_siblings_are_reseeded_and_have_their_own_keyrings(self):
        self.assertNotEqual(F.fa["random"], F.fb["random"])
        self.assertNotEqual(F.fa["rng"], F.fb["rng"])
        self.assertGreater(F.fa["keyring"], 0)
        self.assertGreater(F.fb["keyring"], 0)
        self.assertNotEqual(F.fa["keyring"], F.fb["keyring"])
        self.assertNotIn(F.keyring, (F.fa["keyring"], F.fb["keyring"]))

    def test_only_stdio_and_uvicorns_own_fds(self):
        template_inos = {"socket:[%d]" % F.a.go_ino, "socket:[%d]" % F.b.go_ino}
        for f, c in ((F.fa, F.a), (F.fb, F.b)):
            fds = f["fds"]
            self.assertEqual(fds["0"], "/dev/null")
            self.assertEqual(fds["1"], c.stdio)
            self.assertEqual(fds["2"], c.stdio)
            rest = {k: v for k, v in fds.items() if int(k) > 2}
            for k, v in rest.items():
                self.assertTrue(v.startswith("socket:[") or v == "anon_inode:[eventpoll]",
                                "fd %s: %s" % (k, v))
                self.assertNotIn(v, template_inos)

    def test_rlimits_when_asked(self):
        self.assertEqual(F.fa["nofile"], [256, 256])
        self.assertNotEqual(F.fb["nofile"], [256, 256])

    def test_env_replaces_the_environment_when_given(self):
        self.assertEqual(F.fb["env"], sorted(EPISODE_ENV))
        self.assertEqual(F.fb["c_env"], sorted(EPISODE_ENV))
        for k in ("env", "c_env"):
            self.assertIn(TEMPLATE_ENV, F.fa[k])
            self.assertNotIn("OPENENVD_EPISODE=abc", F.fa[k])

    def test_template_reaps_its_copies(self):
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            with open("/proc/%d/task/%d/children" % (F.tmpl.z, F.tmpl.z)) as f:
                kids = f.read().split()
            if not kids:
                break
            time.sleep(0.05)
        self.assertEqual(kids, [])


class Requests(unittest.TestCase):
    def test_malformed_requests_get_an_error_and_their_fds_closed(self):
        t = F.tmpl
        self.assertRegex(t.request(b"{not json"), "^error ")
        self.assertRegex(t.request(b"\xff\xfe"), "^error ")
        self.assertRegex(t.request({"op": "exec"}), "^error ")
        r, w = os.pipe()
        good = {"op": "fork", "uid": 1, "gid": 1, "cwd": "/", "nofile": 0, "nproc": 0}
        bad = dict(good)
        del bad["cwd"]
        self.assertRegex(t.request(bad, [w, w, w, w]), "^error missing cwd")
        self.assertRegex(t.request(good, [w, w]), "^error 2 fds")
        self.assertRegex(t.request(dict(good, uid="1"), [w] * 4), "^error bad uid")
        self.assertRegex(t.request(dict(good, cwd="rel"), [w] * 4), "^error bad cwd")
        for env in ("A=1", {"A": "1"}, ["A"], ["=1"], [1], [["A=1"]], ["A=\0"],
                    ["A=1"] * 1025):
            self.assertRegex(t.request(dict(good, env=env), [w] * 4), "^error bad env", env)
        self.assertRegex(t.request(good, [w] * 5), "^error 5 fds")
        self.assertRegex(t.request(good), "^error 0 fds")
        os.close(w)
        # The template closed every copy it got: the read end sees EOF.
        self.assertEqual(select.select([r], [], [], 5)[0], [r])
        self.assertEqual(os.read(r, 1), b"")
        os.close(r)

    def test_keeps_serving_and_a_copy_without_go_gives_up(self):
        self.assertRegex(F.tmpl.request(b"junk"), "^error ")
        c = Copy(F.tmpl, F.landings[0], go=b"stop")
        self.assertRegex(c.reply, r"^forked [0-9]+$")
        self.assertEqual(c.hello, b"hello")
        out = self.wait_output(c)
        self.assertIn("openenvd-template: copy: go: expected go", out)

    def test_a_failing_step_is_reported_on_stdio(self):
        c = Copy(F.tmpl, F.landings[1], uid=70000, gid=70000)   # unmapped in the landing
        self.assertRegex(c.reply, r"^forked [0-9]+$")
        self.assertRegex(self.wait_output(c), r"openenvd-template: copy: setresgid: .*Invalid")

    def wait_output(self, c):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not c.output():
            time.sleep(0.05)
        return c.output()


class Lifecycle(unittest.TestCase):
    def test_eof_on_ctl_exits_zero(self):
        t = Template(ALLOW)
        self.assertEqual(t.first, b"warm")
        t.ctl.close()
        self.assertEqual(t.wait(), 0)

    def run_plain(self, args, filt=ALLOW):
        ctl, zctl = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        memfd = os.memfd_create("filter", 0)
        os.write(memfd, filt)
        p = subprocess.Popen([PY, "-c", SOURCE, str(zctl.fileno()), str(memfd), "--"] + args,
                             pass_fds=[zctl.fileno(), memfd], cwd=APPDIR,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        zctl.close()
        os.close(memfd)
        ctl.settimeout(30)
        msg = ctl.recv(4096).decode()
        ctl.close()
        return msg, p.wait(30)

    def test_a_changed_module_file_makes_a_stale_template_refuse_and_exit_1(self):
        def grow(path):
            with open(path, "a") as f:
                f.write("# changed\n")

        def touch(path):                  # same size, older mtime
            st = os.stat(path)
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - 10**9))

        def replace(path):                # same bytes and mtime, new inode
            st = os.stat(path)
            shutil.copy2(path, path + ".new")
            os.rename(path + ".new", path)
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))

        path = os.path.join(APPDIR, "stale_app.py")
        good = {"op": "fork", "uid": 1, "gid": 1, "cwd": "/", "nofile": 0, "nproc": 0}
        for change in (grow, touch, replace, os.unlink):
            with open(path, "w") as f:
                f.write(APP)
            t = Template(ALLOW, args=["stale_app:app"] + UVICORN_ARGS[1:])
            self.assertEqual(t.first, b"warm")
            change(path)
            r, w = os.pipe()
            self.assertEqual(t.request(good, [w] * 4), "error stale: " + path, change.__name__)
            os.close(r)
            os.close(w)
            # Gone without being told: EOF (T's copy of the socket goes last).
            self.assertEqual(select.select([t.ctl], [], [], 10)[0], [t.ctl], change.__name__)
            self.assertEqual(t.ctl.recv(16), b"")
            self.assertEqual(t.wait(), 1, change.__name__)
            t.ctl.close()

    def test_the_stale_look_is_due_on_an_inotify_event_or_after_a_second(self):
        """Watch, the program's own: the first fork looks; then a look is due
        only once a watched directory saw a change (inotify, at once, well
        within RECHECK_S here) or RECHECK_S after the last; without inotify
        every fork looks."""
        ns = {"__name__": "openenvd_template_under_test"}
        exec(compile(SOURCE, "openenvd_template.py", "exec"), ns)
        Watch = ns["Watch"]
        d = tempfile.mkdtemp(prefix="openenvd-watch.", dir="/var/tmp")
        try:
            path = os.path.join(d, "mod.py")
            with open(path, "w") as f:
                f.write("x = 1\n")
            w = Watch([(path, None)])
            self.assertGreaterEqual(w.fd, 0)
            self.assertTrue(w.due(), "the first fork looks")
            self.assertFalse(w.due(), "nothing changed, within a second")
            for change in (lambda: os.utime(path), lambda: open(path, "a").write("#\n"),
                           lambda: os.rename(path, path + ".x"),
                           lambda: os.rename(path + ".x", path),
                           lambda: open(os.path.join(d, "new.py"), "w").close()):
                change()
                self.assertTrue(w.due(), "a change in the directory")
                self.assertFalse(w.due(), "its events drained")
            w.last -= ns["RECHECK_S"]
            self.assertTrue(w.due(), "RECHECK_S since the last look")
            os.close(w.fd)
            w.fd = -1
            self.assertTrue(w.due() and w.due(), "without inotify: every time")
        finally:
            shutil.rmtree(d)

    def test_a_stale_look_writes_no_page_a_copy_shares(self):
        """Prints, the program's own: a look in the template (first_changed)
        must not copy pages its copies share with it. A page the template
        writes goes on belonging to every copy forked before, and to the
        last of them alone once the others exit (a live copy's private
        memory grew by 1.7 MiB each time the previous episode ended). Here
        a child shares the looker's heap; its private memory must not grow
        by more than a few pages of temporaries during 20 looks at 4,000
        files (as a list of (str, tuple) it grew by ~1 MiB)."""
        ns = {"__name__": "openenvd_template_under_test"}
        exec(compile(SOURCE, "openenvd_template.py", "exec"), ns)
        d = tempfile.mkdtemp(prefix="openenvd-prints.", dir="/var/tmp")
        try:
            items = []
            for i in range(4000):
                path = os.path.join(d, "module_with_a_long_name_%05d.py" % i)
                open(path, "w").close()
                items.append((path, ns["file_key"](os.stat(path))))
            prints = ns["Prints"](items)
            self.assertEqual([(os.fsdecode(p), k) for p, k in prints], items, "round trip")
            self.assertIsNone(ns["first_changed"](prints), "nothing changed")
            os.utime(items[7][0], ns=(1, 1))
            self.assertEqual(ns["first_changed"](prints), items[7][0], "a change is seen")
            os.utime(items[7][0], ns=(items[7][1][0], items[7][1][0]))
            self.assertIsNone(ns["first_changed"](prints), "and its undoing")
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(w)
                os.read(r, 1)       # until the looks are done
                os._exit(0)
            os.close(r)
            try:
                time.sleep(0.1)
                # A collection of the whole heap during the looks writes the
                # header of every object it walks (pages the child shares):
                # not what is measured here. Once, under CI load, the looks
                # alone grew it by exactly the old bound, 128 KiB.
                gc.disable()
                before = private_kib(pid)
                for _ in range(20):
                    ns["first_changed"](prints)
                grown = private_kib(pid) - before
                gc.enable()
            finally:
                os.close(w)
                os.waitpid(pid, 0)
            self.assertLess(grown, 256, "the child's private memory grew by %d KiB" % grown)
        finally:
            shutil.rmtree(d)

    def test_warm_up_failures_say_why_and_exit_1(self):
        for args, why in ((["nosuchmodule:app"], "nosuchmodule"),
                          (["app:app", "--no-such-option"], "no-such-option"),
                          (["app:app", "--reload"], "--reload"),
                          (["app:app", "--port", "x"], "port")):
            msg, code = self.run_plain(args)
            self.assertRegex(msg, "^fail .*" + why)
            self.assertNotIn("\n", msg)
            self.assertEqual(code, 1, args)
        msg, code = self.run_plain(["app:app"], filt=b"\x06\x00")
        self.assertRegex(msg, "^fail seccomp filter")


if __name__ == "__main__":
    sys.exit(unittest_tap.main(sys.modules[__name__], root=True, watchdog_s=100))
