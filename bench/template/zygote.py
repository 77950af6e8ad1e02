# SPDX-License-Identifier: LGPL-2.1-or-later
"""A warm template for an ASGI env server, forking a copy per episode
(issue 27; bench/README.md, "bench/template"). A bench, not the engine.

    zygote.py APP_SPEC CONTROL_SOCKET        (e.g. server.app:app /tmp/x/ctl)

Run it where `uvicorn APP_SPEC` would run (cwd = the env dir, PYTHONPATH
with uvicorn on it). It imports the app once and loads uvicorn's config
(protocol classes, middleware): the template. It never serves a request and
never runs the app's lifespan. Then it prints "warm PID" on stdout, listens
on CONTROL_SOCKET (AF_UNIX, SOCK_SEQPACKET: one message per request) and
answers, one connection at a time:

  fork PORT [noreseed]   a copy binds 127.0.0.1:PORT and runs uvicorn on it;
                         the copy itself answers "pid N" once it listens
  fork fd [noreseed]     the same on the listening socket passed with the
                         message (SCM_RIGHTS)
  probe [noreseed]       a copy answers "probe JSON" (its first random
                         values, and what stays shared) and exits
  nsfork | plainfork     a copy that unshares mount, pid, net and ipc
                         namespaces (or not), forks its pid 1 there, which
                         answers "ns pid N copy PID"; then both exit (root)
  cpu PID                "cpu PID SECONDS" once the template reaped the copy
                         (user + system, wait4's rusage), else "cpu PID -"
  self                   "self PID SECONDS": the template's own CPU time
  quit                   the template kills its copies and exits

"noreseed" skips the copy's reseeding, to show what it is for. The reseed is
python/openenvd_template.py's; otherwise standard library only, plus uvicorn
(imported from PYTHONPATH).
"""
import ctypes
import gc
import json
import os
import random
import signal
import socket
import sys
import time

# What a copy reseeds, and how the template finds it: the engine's own
# (python/openenvd_template.py), so the bench measures what episodes do.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from openenvd_template import find_rngs, reseed  # noqa: E402

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWPID, CLONE_NEWNET = 0x20000, 0x08000000, 0x20000000, 0x40000000

copies = {}  # pid -> CPU seconds once reaped (None while alive)


def reap(*_):
    while True:
        try:
            pid, _status, ru = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        copies[pid] = ru.ru_utime + ru.ru_stime


def probe():
    """First values a copy would hand out, and what stays shared."""
    import secrets
    import uuid
    v = {"random": random.random(), "secrets": secrets.token_hex(8),
         "uuid4": str(uuid.uuid4()), "urandom": os.urandom(8).hex(),
         "hash": hash("openenvd"), "heap": hex(id(object()))}
    np = sys.modules.get("numpy")
    if np is not None:
        v["numpy"] = float(np.random.rand())
    with open("/proc/self/maps") as f:
        for line in f:
            if "libc.so" in line or "[stack]" in line:
                v["libc" if "libc" in line else "stack"] = line.split("-")[0]
                if "libc" in v and "stack" in v:
                    break
    return v


def copy_main(conn, config, rngs, args, fds):
    """In the copy: never returns."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if "noreseed" not in args:
        reseed(rngs)
    if args[0] == "probe":
        conn.send(b"probe " + json.dumps(probe()).encode())
        os._exit(0)
    if args[0] in ("nsfork", "plainfork"):
        if args[0] == "nsfork":
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC) != 0:
                conn.send(b"ns error %d" % ctypes.get_errno())
                os._exit(1)
        copy, pid = os.getpid(), os.fork()
        if pid == 0:
            conn.send(b"ns pid %d copy %d" % (os.getpid(), copy))
            os._exit(0)
        os.waitpid(pid, 0)
        os._exit(0)
    if args[0] == "fd":
        sock = socket.socket(fileno=fds[0])
    else:
        # proto given, not 0: asyncio sets TCP_NODELAY on accepted sockets
        # only when their proto says TCP, and without it every response
        # (h11 writes head and body apart) waits for a delayed ACK, 40 ms.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", int(args[0])))
        sock.listen(2048)
    conn.send(b"pid %d" % os.getpid())
    conn.close()
    import uvicorn
    uvicorn.Server(config).run(sockets=[sock])
    os._exit(0)


def serve(ctl, config, rngs):
    while True:
        conn, _ = ctl.accept()
        with conn:
            while True:
                try:
                    msg, fds, _flags, _addr = socket.recv_fds(conn, 4096, 1)
                except ConnectionError:
                    break
                if not msg:
                    break
                args = msg.decode().split()
                cmd = args[0]
                if cmd in ("fork", "probe", "nsfork", "plainfork"):
                    rest = args[1:] if cmd == "fork" else args
                    pid = os.fork()
                    if pid == 0:
                        try:
                            ctl.close()
                            copy_main(conn, config, rngs, rest, fds)
                        finally:
                            os._exit(70)
                    copies[pid] = None
                    for fd in fds:
                        os.close(fd)
                elif cmd == "cpu":
                    c = copies.get(int(args[1]))
                    conn.send(b"cpu %s %s" % (args[1].encode(),
                                               b"-" if c is None else repr(c).encode()))
                elif cmd == "self":
                    ru = os.times()
                    conn.send(b"self %d %r" % (os.getpid(), ru.user + ru.system))
                elif cmd == "quit":
                    for pid, c in list(copies.items()):
                        if c is None:
                            try:
                                os.kill(pid, signal.SIGKILL)
                            except ProcessLookupError:
                                pass
                    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                    for pid, c in list(copies.items()):
                        if c is None:
                            try:
                                os.waitpid(pid, 0)
                            except ChildProcessError:
                                pass
                    conn.send(b"bye")
                    return
                else:
                    conn.send(b"error unknown command")


def main():
    spec, path = sys.argv[1], sys.argv[2]
    t0 = time.perf_counter()
    sys.path.insert(0, os.getcwd())  # what `uvicorn --app-dir .` does
    import uvicorn
    from uvicorn.importer import import_from_string
    app = import_from_string(spec)
    # The same defaults as `python3 -m uvicorn APP`; load() imports the
    # protocol classes and wraps the app, so that a copy does none of it.
    config = uvicorn.Config(app, host="127.0.0.1", port=0)
    config.load()
    rngs = find_rngs()
    # Keep the collector off the template's objects in every copy: no
    # copy-on-write of their headers (the zygote's "gc freeze").
    gc.collect()
    gc.freeze()
    ctl = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    ctl.bind(path)
    ctl.listen(8)
    signal.signal(signal.SIGCHLD, reap)
    print("warm %d %.3f rngs=%s" % (os.getpid(), time.perf_counter() - t0,
                                     ",".join(type(r).__name__ for r in rngs) or "-"),
          flush=True)
    serve(ctl, config, rngs)
    ctl.close()
    os.unlink(path)


if __name__ == "__main__":
    main()
