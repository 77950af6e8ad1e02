#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Attack: exhaust the unit's port without a token.

4,096 `POST /healthz` with an unsent body used to be held until the 600 s
idle timeout, and nobody else was answered; at the fd limit the daemon spun
at 100 % CPU. Here an attacker without credentials opens 4,096 connections
from eight loopback addresses (half of them a POST whose body never comes,
half a head that never ends) and holds them; then the same against a daemon
whose fd limit is 256, still trying new connections.

Must not happen: the orchestrator's /info or /healthz not answered while
the flood is held, at the first attempt; the daemon
holding more unauthenticated connections than its cap, or holding them past
the unauthenticated timeout; the daemon spinning at its fd limit (more than
half a CPU over two idle seconds: an awake, spinning loop uses all of one);
a unit that does not work once the attacker leaves; anything left behind.
"""
import os
import resource
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attacklib as A  # noqa: E402
from attacklib import check  # noqa: E402

UNAUTH_MAX = 1024   # HTTP_MAX_UNAUTH_CONNECTIONS (src/base/limits.h)
UNAUTH_TIMEOUT = 5  # HTTP_UNAUTH_TIMEOUT, seconds
SOURCES = ["127.0.0.%d" % i for i in range(2, 10)]


def manifest(run):
    return run.manifest(A.manifest_head("connection-flood") + """\
    agent:
      containers:
        env:
          argv: %s
""" % A.argv("env", "8000"))


def open_flood(d, n):
    """n unauthenticated connections, held; those refused at connect are counted."""
    held, refused = [], 0
    for i in range(n):
        s = socket.socket()
        s.setblocking(False)
        s.bind((SOURCES[i % len(SOURCES)], 0))
        try:
            s.connect(("127.0.0.1", d.port))
        except BlockingIOError:
            pass
        except OSError:
            refused += 1
            s.close()
            continue
        held.append(s)
    # Half a POST whose body never comes, half a head that never ends.
    for i, s in enumerate(held):
        try:
            s.send(b"POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n"
                   if i % 2 else b"GET /heal")
        except OSError:
            pass
    return held, refused


def answered(d, what, attempts=1):
    """The orchestrator's call, answered."""
    for _ in range(attempts):
        try:
            if what == "/healthz":
                if d.request("GET", "/healthz", token=None, timeout=10)[0] == 200:
                    return True
            elif d.request("GET", what, timeout=10)[0] == 200:
                return True
        except OSError:
            pass
    return False


def sockets_of(pid):
    n = 0
    for fd in A.fds_of(pid):
        try:
            n += os.readlink("/proc/%d/fd/%d" % (pid, fd)).startswith("socket:")
        except OSError:
            pass  # closed meanwhile
    return n


def raise_own_fd_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = max(hard, 16384)
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, want))


def case_four_thousand(run):
    raise_own_fd_limit()
    d = A.Daemon(run, manifest(run))
    held = []
    try:
        base = sockets_of(d.pid)
        held, refused = open_flood(d, 4096)
        A.poll(lambda: sockets_of(d.pid) >= base + UNAUTH_MAX // 2, "the flood accepted")
        for what in ("/info", "/healthz", "/info"):
            check(answered(d, what), "%s unanswered while 4,096 connections are held" % what)
        n = sockets_of(d.pid) - base
        A.note("4,096 held (%d refused at connect): the daemon holds %d client sockets"
               % (refused, n))
        check(n <= UNAUTH_MAX + 16, "the daemon holds %d unauthenticated connections" % n)
        # Past the unauthenticated timeout, the held ones are gone.
        A.poll(lambda: sockets_of(d.pid) <= base + 4, "the held connections to be closed",
               UNAUTH_TIMEOUT * 4)
        check(d.ok("POST", "/step", {"action": {"message": "x"}})["done"] is False,
              "the unit works after the flood")
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        for s in held:
            s.close()
        d.kill()


def case_fd_limit(run):
    raise_own_fd_limit()
    d = A.Daemon(run, manifest(run), nofile=256)
    held = []
    try:
        held, _ = open_flood(d, 600)
        # At its limit now, with more connections pending: still answers.
        for what in ("/info", "/healthz", "/info", "/info"):
            check(answered(d, what), "%s unanswered at the fd limit" % what)
        more, _ = open_flood(d, 200)
        held += more
        check(answered(d, "/info"), "/info unanswered at the fd limit under a new wave")
        # Held, at the limit: the loop sleeps.
        t0 = d.cpu_ticks()
        time.sleep(2)
        used = d.cpu_ticks() - t0
        A.note("at the fd limit: %d CPU ticks in 2 s" % used)
        check(used < os.sysconf("SC_CLK_TCK"), "the daemon spun: %d ticks in 2 s" % used)
        check(answered(d, "/info"), "/info after the idle wait")
        for s in held:
            s.close()
        held = []
        check(d.ok("POST", "/step", {"action": {"message": "x"}})["done"] is False,
              "the unit works after the flood")
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        for s in held:
            s.close()
        d.kill()


CASES = [
    ("4,096 held unauthenticated connections from 8 addresses: the orchestrator is answered, "
     "the cap holds, the timeout frees them", case_four_thousand),
    ("at a 256-fd limit under a connection flood: the orchestrator is answered, no spinning",
     case_fd_limit),
]

if __name__ == "__main__":
    sys.exit(A.main(CASES))
