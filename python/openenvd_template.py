# SPDX-License-Identifier: LGPL-2.1-or-later
"""openenvd's template ("zygote") for an ASGI env server: import the app once,
fork one copy per episode into that episode's landing container.

    python3 -c "<this source>" CTL_FD FILTER_FD -- UVICORN_ARGS...

(The daemon hands the source over as fd 5 and runs a one-line bootstrap
with -c that reads and executes it: src/unit/env-template.c. Either way
sys.argv[1:] is CTL_FD FILTER_FD -- UVICORN_ARGS and sys.path[0] is the
working directory, as for `python3 -m uvicorn`.)

The daemon runs this inside the template container, as root of its user
namespace with every capability there and no seccomp filter. UVICORN_ARGS
are what follows `uvicorn` on the env's command line; cwd and environment
are the env server's.

Warm-up. UVICORN_ARGS go through uvicorn's own click command (uvicorn.main
.main with uvicorn.main.run swapped for a function that keeps its kwargs),
so every option means what it means to uvicorn. Then uvicorn.Config(...)
.load() imports the app and builds the protocol classes: no socket is bound
and the app's lifespan does not run (both happen in a copy). FILTER_FD (a
memfd holding the container's seccomp filter as raw struct sock_filter[],
as seccomp_export_bpf() writes it) is read once and closed. Last, the
files of the imported modules, but the standard library's, are stat()ed:
a fork request that finds one changed (mtime, size, inode) or gone since
is refused, and the template exits (see "error stale" below). The look is
made when inotify on their directories saw an event since the last one, and
at least once a second in any case (RECHECK_S: a change inotify cannot see,
on an overlay's lower layer or a network filesystem, is caught within it);
a look costs ~3 ms per 1,000 files, too much for every fork.

Protocol on CTL_FD (AF_UNIX SOCK_SEQPACKET, one message each way):

    template -> daemon  "warm"                 warm-up done; requests welcome
                        "fail <reason>"        warm-up failed; exit 1
    daemon -> template  {"op": "fork", "uid": U, "gid": G, "cwd": "/path",
                         "nofile": N, "nproc": M,      (0: limit untouched)
                         "env": ["KEY=VALUE", ...]}    (optional)
                        + SCM_RIGHTS [PIDFD, ADOPT_W, STDIO, GO]
    template -> daemon  "forked <pid>"         the copy, in the template's
                                               pid namespace
                        "error <reason>"       nothing forked; fds closed
                        "error stale: <path>"  nothing forked; a file the
                                               template imported changed:
                                               it exits 1 (to be rebuilt)
    EOF on CTL_FD: the template exits 0.

PIDFD is the landing container's PID 1 (its user and pid namespaces are
children of the template's), ADOPT_W a pipe that PID 1 reads, STDIO the
copy's stdout and stderr, GO a SOCK_SEQPACKET socket to the daemon, one
per copy. The copy joins the landing's namespaces, a fresh session keyring,
sends "hello" on GO and waits for "go" (meanwhile the daemon moves it, by
its SCM_CREDENTIALS pid, into the episode's cgroup), drops to U/G with no
capabilities, no_new_privs, the rlimits and the seccomp filter, then forks
the server and exits: the server is PID 1's child. It writes "<pid>\\n" to
ADOPT_W, keeps only stdio (every fd of the template is closed), reseeds
the random generators, replaces its whole environment with "env" if the
request has one (the episode's own variables, such as OPENENVD_EPISODE,
which a template started once per unit cannot have; without "env" the
server keeps the template's) and runs uvicorn. A copy that fails a step
writes "openenvd-template: copy: <step>: <error>" to STDIO and exits 126.

Shared with the template on purpose, as after any fork: the str/bytes hash
secret (PYTHONHASHSEED-derived: it is not a secret an env should rely on,
and changing it would rehash every warm dict), the address-space layout
(ASLR is per exec; re-randomising means an exec, i.e. the cold start this
avoids) and the warm heap, copy-on-write (gc.freeze() keeps the collector
from touching, and so copying, the template's objects). Not shared: the
random generators (reseeded), keyrings, fds, namespaces, credentials.

Standard library only, plus uvicorn from the env's PYTHONPATH; Python >= 3.8.
"""
import array
import ctypes
import errno
import gc
import importlib
import json
import logging
import os
import random
import signal
import socket
import stat
import sys
import sysconfig
import time

CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS = 0x20000, 0x02000000, 0x04000000
CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID = 0x08000000, 0x10000000, 0x20000000
CLONE_NEWNET = 0x40000000
LANDING_NS = (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC
              | CLONE_NEWUTS | CLONE_NEWCGROUP)
PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP = 24, 38, 22
SECCOMP_MODE_FILTER = 2
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
KEYCTL_JOIN_SESSION_KEYRING = 1
SYS_KEYCTL = {"x86_64": 250, "aarch64": 219}
FD_COUNT = 4                    # PIDFD, ADOPT_W, STDIO, GO
REQUEST_KEYS = ("uid", "gid", "cwd", "nofile", "nproc")
BPF_MAXINSNS = 4096
ENV_MAX = 1024                  # entries of a request's "env"
U64 = (1 << 64) - 1             # file keys are unsigned 64-bit numbers (Prints)
RECHECK_S = 1.0                 # the imported files looked at at least this often
IN_NONBLOCK, IN_CLOEXEC = 0o4000, 0o2000000
# A file written, touched, made, renamed or removed; the directory itself
# moved or removed.
IN_WATCH = (0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800)

libc = ctypes.CDLL(None, use_errno=True)
# What a fresh interpreter has (SIGINT's KeyboardInterrupt, SIGPIPE
# ignored...): the server gets these back, not the template's SIGCHLD.
FRESH_HANDLERS = {s: signal.getsignal(s) for s in signal.valid_signals()
                  if s not in (signal.SIGKILL, signal.SIGSTOP)
                  and signal.getsignal(s) is not None}


class Step(Exception):
    """A copy's failed step: "<step>: <error>"."""


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def check(ret, what):
    if ret < 0:
        e = ctypes.get_errno()
        raise OSError(e, "%s: %s" % (what, os.strerror(e)))
    return ret


def setns(fd, flags):
    check(libc.setns(ctypes.c_int(fd), ctypes.c_int(flags)), "setns 0x%x" % flags)


def prctl(option, a2=0, a3=0, a4=0, a5=0):
    args = [ctypes.c_ulong(a) if isinstance(a, int) else a for a in (a2, a3, a4, a5)]
    return check(libc.prctl(ctypes.c_int(option), *args), "prctl %d" % option)


# --- warm-up -----------------------------------------------------------------

def uvicorn_kwargs(args):
    """uvicorn's CLI parses ARGS; its run() is swapped for a recorder."""
    cli = importlib.import_module("uvicorn.main")   # the module, not the command
    seen = []
    real_run = cli.run
    cli.run = lambda app, **kw: seen.append((app, kw))
    try:
        cli.main.main(args=list(args), prog_name="uvicorn", standalone_mode=False)
    except Exception as ex:
        if hasattr(ex, "format_message"):       # click's usage errors
            raise RuntimeError("uvicorn: " + ex.format_message())
        raise
    finally:
        cli.run = real_run
    if not seen:
        raise RuntimeError("uvicorn's command line did not start a server: %r" % (args,))
    return seen[0]


class LastError(logging.Handler):
    """uvicorn logs why load() failed, then sys.exit(1)s: keep the why."""
    message = None

    def emit(self, record):
        if record.levelno >= logging.ERROR:
            self.message = record.getMessage()


def load_config(args):
    import uvicorn
    app, kw = uvicorn_kwargs(args)
    app_dir = kw.pop("app_dir", None)       # what uvicorn.run does with it
    if app_dir is not None:
        sys.path.insert(0, app_dir)
    config = uvicorn.Config(app, **kw)
    if config.should_reload or config.workers > 1:
        raise RuntimeError("--reload and --workers are not for a template")
    last = LastError()
    log = logging.getLogger("uvicorn.error")
    log.addHandler(last)
    try:
        config.load()
    except SystemExit as ex:
        raise RuntimeError("config.load(): %s" % (last.message or "exit %s" % ex.code))
    finally:
        log.removeHandler(last)
    return config


def find_rngs():
    """Generator objects alive in the template (module-level ones of the
    app and its libraries); found once, reseeded in every server."""
    kinds = [random.Random]
    np = sys.modules.get("numpy")
    if np is not None:
        kinds += [np.random.RandomState, np.random.Generator]
    return [o for o in gc.get_objects()
            if isinstance(o, tuple(kinds)) and not isinstance(o, random.SystemRandom)
            and o is not random._inst]


def fingerprint():
    """Prints of the files of the imported modules
    (what the warm heap was built from) but the standard library's: those
    change only with a Python package upgrade, which is out of scope, and
    each re-stat() costs every fork request ~2-3 us (OpenEnv's connect4
    imports 1481 files, 220 of them the standard library's)."""
    std, sites = library_dirs()
    out = {}
    for m in list(sys.modules.values()):
        path = getattr(m, "__file__", None)
        if not isinstance(path, str) or path in out:
            continue
        if path.startswith(std) and not path.startswith(sites):
            continue
        try:
            st = os.stat(path)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            out[path] = file_key(st)
    return Prints(out.items())


def library_dirs():
    """(stdlib dirs, site-packages dirs) of the base interpreter (a venv's
    packages are no stdlib), each ending in "/". The second because a
    build's site-packages may lie inside its stdlib dir
    (/usr/local/lib/python3.X/site-packages): those files count."""
    paths = sysconfig.get_paths(vars={"base": sys.base_prefix,
                                      "platbase": sys.base_exec_prefix})
    return tuple(tuple(os.path.join(paths[k], "") for k in keys)
                 for keys in (("stdlib", "platstdlib"), ("purelib", "platlib")))


def file_key(st):
    """(mtime_ns, size, ino), each as an unsigned 64-bit number."""
    return (st.st_mtime_ns & U64, st.st_size, st.st_ino)


class Prints:
    """The imported files' (path, key), packed in two flat objects: their
    paths NUL-terminated in one bytes, their keys three a file in one
    array. A look writes none of the template's long-lived objects. As a
    list of tuples, each look wrote every tuple's, str's and int's reference
    count, and so copied those pages away from the copies that shared them
    with the template; the last such copy then held them alone: 1.7 MiB of
    a live connect4 copy's private memory (1,261 files; bench/openenv). A
    look's temporaries reuse the same few freed blocks."""

    def __init__(self, items):
        items = list(items)
        self.paths = b"".join(os.fsencode(path) + b"\0" for path, _ in items)
        self.keys = array.array("Q", [v for _, key in items for v in key])

    def __iter__(self):
        """(path as bytes, key) of each file."""
        start = 0
        for i in range(0, len(self.keys), 3):
            end = self.paths.index(b"\0", start)
            yield self.paths[start:end], tuple(self.keys[i:i + 3])
            start = end + 1


class Watch:
    """Whether the imported files need a look before a fork: an inotify
    event on one of their directories since the last look, RECHECK_S since
    it, or no inotify at all (every fork looks, as without it)."""

    def __init__(self, prints):
        self.last = -RECHECK_S     # the first fork looks: a change before the watches
        self.fd = libc.inotify_init1(ctypes.c_int(IN_NONBLOCK | IN_CLOEXEC))
        for d in sorted({os.path.dirname(path) for path, _ in prints}):
            if self.fd >= 0 and libc.inotify_add_watch(
                    ctypes.c_int(self.fd), os.fsencode(d), ctypes.c_uint32(IN_WATCH)) < 0:
                os.close(self.fd)        # ENOSPC, EACCES...: no watch is a look each time
                self.fd = -1

    def due(self):
        """True when a look is due (the caller makes it)."""
        seen = self.fd < 0
        while self.fd >= 0:
            try:
                if not os.read(self.fd, 65536):
                    break
                seen = True
            except BlockingIOError:
                break
        now = time.monotonic()
        if seen or now - self.last >= RECHECK_S:
            self.last = now
            return True
        return False


def first_changed(prints):
    """The first file that changed or went away since warm-up, or None."""
    for path, key in prints:
        try:
            if file_key(os.stat(path)) != key:
                return os.fsdecode(path)
        except OSError:
            return os.fsdecode(path)
    return None


def read_filter(fd):
    """The whole memfd from offset 0 (the daemon may have left it at the end)."""
    chunks, off = [], 0
    while True:
        b = os.pread(fd, 65536, off)
        if not b:
            break
        chunks.append(b)
        off += len(b)
    os.close(fd)
    data = b"".join(chunks)
    if len(data) % 8 or len(data) // 8 > BPF_MAXINSNS:
        raise RuntimeError("seccomp filter: %d bytes is not a BPF program" % len(data))
    return data


# --- the copy (never returns) ------------------------------------------------

def copy_main(req, fds, ctx):
    pidfd, adopt_w, stdio, go = fds
    ctx["report"] = stdio            # fd 2 once the server has dup2'ed it
    try:
        enter_landing(pidfd, ctx)
        wait_for_go(go)
        drop_privileges(req["uid"], req["gid"])
        set_rlimits(req["nofile"], req["nproc"])
        install_filter(ctx["filter"])
        if os.fork() != 0:
            os._exit(0)       # the server is reparented to the landing's PID 1
        server_main(req, adopt_w, stdio, go, ctx)
    except BaseException as ex:
        # A Step names itself ("<step>: <error>"); anything else by its repr.
        what = str(ex) if isinstance(ex, Step) else repr(ex)
        try:
            os.write(ctx["report"], b"openenvd-template: copy: %s\n"
                     % what.encode(errors="replace"))
            # Before its go, the daemon waits for its hello: the reason
            # there too (after it, GO is closed or says nothing).
            os.write(go, b"fail " + what.encode(errors="replace")[:400])
        except OSError:
            pass
        finally:
            os._exit(126)


def step(name, fn, *args):
    try:
        return fn(*args)
    except Exception as ex:
        raise Step("%s: %s" % (name, ex))


def enter_landing(pidfd, ctx):
    step("close", os.close, ctx["ctl"])
    step("close", os.close, ctx["own_pidns"])
    if ctx["watch"].fd >= 0:
        step("close", os.close, ctx["watch"].fd)
    # One call: user first (the kernel orders it), so the others are
    # checked against the landing's user namespace. Kernel >= 5.8.
    step("setns", setns, pidfd, LANDING_NS)
    step("close", os.close, pidfd)
    nr = SYS_KEYCTL.get(os.uname().machine)
    if nr is None:
        raise Step("keyctl: no syscall number for %s" % os.uname().machine)
    # A fresh anonymous session keyring: none shared with template or siblings.
    step("keyctl", join_fresh_keyring, nr)


def join_fresh_keyring(nr):
    if libc.syscall(ctypes.c_long(nr), ctypes.c_long(KEYCTL_JOIN_SESSION_KEYRING),
                    ctypes.c_void_p(None)) >= 0:
        return
    e = ctypes.get_errno()
    # Refused by a filter around the daemon (Docker's default denies keyctl):
    # then nothing in the container has keyrings either (the container's own
    # filter denies them too), so there is none to share.
    if e not in (errno.EPERM, errno.ENOSYS):
        raise OSError(e, "keyctl: %s" % os.strerror(e))


def wait_for_go(go):
    def exchange():
        os.write(go, b"hello")
        msg = os.read(go, 16)
        if msg != b"go":
            raise RuntimeError("expected go, got %r" % msg)
    step("go", exchange)


def drop_privileges(uid, gid):
    def bounding_set():
        with open("/proc/sys/kernel/cap_last_cap") as f:
            last = int(f.read())
        for cap in range(last + 1):
            prctl(PR_CAPBSET_DROP, cap)
    step("capbset", bounding_set)
    step("setgroups", os.setgroups, [])
    step("setresgid", os.setresgid, gid, gid, gid)
    step("setresuid", os.setresuid, uid, uid, uid)
    # setresuid clears the capabilities only when leaving uid 0 of the
    # *current* user namespace: the copy is still the template's root
    # (setns keeps the uids), not the landing's. So clear them by hand
    # (ambient follows permitted & inheritable).
    step("capset", capset_none)
    step("no_new_privs", prctl, PR_SET_NO_NEW_PRIVS, 1)

    def verify():
        with open("/proc/self/status") as f:
            eff = [ln.split()[1] for ln in f if ln.startswith("CapEff:")]
        if eff != ["0000000000000000"]:
            raise RuntimeError("CapEff %s" % eff)
    step("capeff", verify)


def capset_none():
    header = (ctypes.c_uint32 * 2)(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()              # 2 x {effective, permitted, inheritable}
    check(libc.capset(header, data), "capset")


def set_rlimits(nofile, nproc):
    import resource
    for name, res, n in (("nofile", resource.RLIMIT_NOFILE, nofile),
                         ("nproc", resource.RLIMIT_NPROC, nproc)):
        if n:
            step("rlimit " + name, resource.setrlimit, res, (n, n))


def install_filter(prog):
    def install():
        if not prog:
            raise RuntimeError("empty filter")
        buf = ctypes.create_string_buffer(prog, len(prog))
        fprog = SockFprog(len(prog) // 8, ctypes.addressof(buf))
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog))
    step("seccomp", install)


def server_main(req, adopt_w, stdio, go, ctx):
    """The episode's server, G; PID 1's child. Never returns."""
    step("setsid", os.setsid)
    step("adopt", os.write, adopt_w, b"%d\n" % os.getpid())
    step("close", os.close, adopt_w)
    step("close", os.close, go)
    step("stdio", os.dup2, stdio, 1)
    step("stdio", os.dup2, stdio, 2)
    ctx["report"] = 2
    null = step("stdin", os.open, "/dev/null", os.O_RDONLY)   # the landing's
    step("stdin", os.dup2, null, 0)
    # Everything the template held (and stdio's, null's originals): gone.
    os.closerange(3, step("fd limit", os.sysconf, "SC_OPEN_MAX"))
    step("chdir", os.chdir, req["cwd"])
    step("reseed", reseed, ctx["rngs"])
    step("signals", reset_signals)
    if "env" in req:
        step("env", set_environ, req["env"])
    import uvicorn
    server = uvicorn.Server(ctx["config"])
    server.run()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0 if server.started else 3)    # 3: uvicorn's STARTUP_FAILURE


def reseed(rngs):
    """What a fork would otherwise share. random's module generator, secrets,
    uuid4, os.urandom and OpenSSL need nothing here (CPython reseeds random's
    after a fork; the rest read the kernel per call or notice the new pid);
    left: every generator object built before the fork."""
    random.seed()
    for r in rngs:
        if isinstance(r, random.Random):
            r.seed()
        elif type(r).__name__ == "RandomState":
            r.seed()
        elif type(r).__name__ == "Generator":
            bg = r.bit_generator
            bg.state = type(bg)().state


def set_environ(env):
    """Exactly ENV: os.environ's setters putenv/unsetenv, so C code reading
    environ sees the same."""
    os.environ.clear()
    for entry in env:
        key, value = entry.split("=", 1)
        os.environ[key] = value


def reset_signals():
    for sig, handler in FRESH_HANDLERS.items():
        signal.signal(sig, handler)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])


# --- the template's loop -----------------------------------------------------

def reap(*_):
    """The copies exit right after forking their server: reap, never block."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def recv_request(ctl):
    """(bytes, fds); (b"", []) at EOF. Python 3.8 has no socket.recv_fds."""
    width = array.array("i").itemsize
    msg, anc, flags, _ = ctl.recvmsg(65536, socket.CMSG_SPACE(16 * width))
    fds = array.array("i")
    for level, kind, data in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[:len(data) - len(data) % width])
    if flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC):
        for fd in fds:
            os.close(fd)
        return msg or b"?", None
    return msg, list(fds)


def parse_request(msg, fds):
    """The request dict, or raise ValueError(reason)."""
    if fds is None:
        raise ValueError("message or its fds truncated")
    try:
        req = json.loads(msg.decode())
    except (ValueError, UnicodeDecodeError) as ex:
        raise ValueError("bad JSON: %s" % ex)
    if not isinstance(req, dict) or req.get("op") != "fork":
        raise ValueError("not a fork request")
    for k in REQUEST_KEYS:
        if k not in req:
            raise ValueError("missing %s" % k)
    for k in ("uid", "gid", "nofile", "nproc"):
        v = req[k]
        if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < 2**32:
            raise ValueError("bad %s" % k)
    if not isinstance(req["cwd"], str) or not req["cwd"].startswith("/"):
        raise ValueError("bad cwd")
    if "env" in req and not valid_env(req["env"]):
        raise ValueError("bad env")
    if len(fds) != FD_COUNT:
        raise ValueError("%d fds, want %d" % (len(fds), FD_COUNT))
    return req


def valid_env(env):
    """A list of "KEY=VALUE" str: what putenv takes (no NUL, a key before "=")."""
    return (isinstance(env, list) and len(env) <= ENV_MAX
            and all(isinstance(e, str) and e.find("=") > 0 and "\0" not in e for e in env))


def fork_copy(req, fds, ctx):
    """The copy's pid (the template's view). Its pid namespace is the
    landing's: only pid_ns_for_children changes, undone right after."""
    setns(fds[0], CLONE_NEWPID)
    pid = None
    try:
        pid = os.fork()
        if pid == 0:
            copy_main(req, fds, ctx)
    finally:
        if pid is None or pid > 0:
            # Failing here would put every later copy in this landing.
            try:
                setns(ctx["own_pidns"], CLONE_NEWPID)
            except OSError as ex:
                fatal("restoring the pid namespace: %s" % ex)
    return pid


def fatal(reason):
    sys.stderr.write("openenvd-template: %s\n" % reason)
    os._exit(1)


def handle(ctl, msg, fds, ctx):
    """Answers one request; False when the template must go: a file it
    imported changed, so a copy would run code that is no longer the env's.
    The daemon takes the template's exit as "discard and rebuild"."""
    fresh = True
    try:
        req = parse_request(msg, fds)
        changed = first_changed(ctx["imported"]) if ctx["watch"].due() else None
        if changed is not None:
            fresh = False
            raise ValueError("stale: %s" % changed)
        pid = fork_copy(req, fds, ctx)
        reply = "forked %d" % pid
    except (ValueError, OSError) as ex:
        reply = "error %s" % one_line(ex)
    for fd in fds or []:
        os.close(fd)
    ctl.send(reply.encode())
    return fresh


def one_line(x):
    return " ".join(str(x).split()) or type(x).__name__


def serve(ctl, ctx):
    """The template's exit status: 0 at EOF, 1 once stale."""
    while True:
        try:
            msg, fds = recv_request(ctl)
        except ConnectionResetError:
            return 0
        if not msg and not fds:
            return 0
        if not handle(ctl, msg, fds, ctx):
            return 1
        reap()


def warm_up(argv):
    if len(argv) < 3 or argv[2] != "--":
        raise RuntimeError("usage: CTL_FD FILTER_FD -- UVICORN_ARGS...")
    ctx = {"filter": read_filter(int(argv[1]))}
    ctx["config"] = load_config(argv[3:])
    ctx["rngs"] = find_rngs()
    ctx["own_pidns"] = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
    ctx["imported"] = fingerprint()
    ctx["watch"] = Watch(ctx["imported"])
    # The collector leaves the template's objects alone in every copy: no
    # copy-on-write of their headers.
    gc.collect()
    gc.freeze()
    return ctx


def main(argv):
    try:
        ctl = socket.socket(fileno=int(argv[0]))
    except (IndexError, ValueError, OSError) as ex:
        fatal("CTL_FD: %s" % ex)
    try:
        ctx = warm_up(argv)
    except BaseException as ex:
        ctl.send(("fail %s" % one_line(ex)).encode()[:4096])
        sys.stderr.flush()
        return 1
    ctx["ctl"] = ctl.fileno()
    sys.stdout.flush()       # nothing buffered may be written again by a copy
    sys.stderr.flush()
    signal.signal(signal.SIGCHLD, reap)
    ctl.send(b"warm")
    return serve(ctl, ctx)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
