#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Attack: from one unit, reach another unit's sockets and state on the same host.

Two daemons on one host used to give their containers the same host uids:
unit A listed unit B's socket dirs and drove B's env and hidden service
through B's sockets. Here units A and B run side by side (on the attack image
and on this host's own root); A's env and harness go after everything of B's
they can name: B's state dir, the env socket and the service relay socket at
their host paths, B's container processes (by host pid), and B's host uids.
Then A is SIGKILLed while its containers run and a third unit starts.

Must not happen: overlapping uid ranges; a zone process outside its unit's
range; A listing, connecting to or signalling anything of B's; B's env or
service seeing a request from A; the third unit taking A's range while A's
containers (or any process with a uid of that range) still run; anything left
behind.
"""
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attacklib as A  # noqa: E402
from attacklib import check  # noqa: E402


def manifest(run, host_root):
    h = run if host_root else None
    return run.manifest(A.manifest_head("two-units") + A.zones(
        A.argv("env", "8000", host_root=h), A.argv("harness", host_root=h),
        A.argv("service", "8080", host_root=h)))


def zone_uids(d):
    uids = set()
    for pid in d.member_pids():
        for line in (A.read("/proc/%d/status" % pid) or "").splitlines():
            if line.startswith("Uid:"):
                uids.update(int(u) for u in line.split()[1:])
    return uids


def disjoint(a, b):
    return a[1] < b[0] or b[1] < a[0]


def go_after(a, b):
    """A's env attacks everything of B's it can name; returns what got through."""
    eid = b.info()["episode_id"]
    through = []
    for path in (b.state, b.state + "/private", b.state + "/episodes",
                 "%s/episodes/%s/sock/env" % (b.state, eid)):
        r = a.attack("listdir", path=path)
        if r["ok"] and r["entries"]:
            through.append("listed %s: %s" % (path, r["entries"]))
    for path in ("%s/private/%s/env.sock" % (b.state, eid),
                 "%s/private/%s/svc.sock" % (b.state, eid),
                 "%s/episodes/%s/sock/env/svc-svc.sock" % (b.state, eid)):
        r = a.attack("connect_unix", path=path)
        if r["ok"]:
            through.append("connected to %s: %s" % (path, r))
    seen = a.attack("procs")
    for pid in b.member_pids():
        if str(pid) in seen:
            through.append("sees B's pid %d" % pid)
        r = a.attack("signal_pid", pid=pid, sig=0)
        if r["ok"]:
            through.append("may signal B's pid %d" % pid)
    r = a.attack("http", url="http://127.0.0.1:%d/healthz" % b.port, timeout=3)
    if r.get("status"):
        through.append("reached B's port: %s" % r)
    lo, hi = b.uids
    if any(lo <= u <= hi for u in seen.values()):
        through.append("sees a process with one of B's uids: %s" % seen)
    return through


def two_units(run, host_root):
    m = manifest(run, host_root)
    args = A.UNFILTERED if host_root else ()
    a = A.Daemon(run, m, rootfs=not host_root, args=args)
    b = A.Daemon(run, m, rootfs=not host_root, args=args)
    try:
        check(disjoint(a.uids, b.uids), "uid ranges overlap: %s %s" % (a.uids, b.uids))
        for d in (a, b):
            lo, hi = d.uids
            us = zone_uids(d)
            check(us and all(lo <= u <= hi for u in us),
                  "zone uids %s outside the unit's range %s" % (sorted(us), d.uids))
        # Control: each unit's env reaches its own hidden service.
        for d in (a, b):
            r = d.attack("http", url="http://svc.local:80/results")
            check(r.get("status") == 200, "an env reaches its own service: %s" % r)
        through = go_after(a, b) + go_after(b, a)
        check(not through, "across units: %s" % through)
        # What the attacker sent through a socket it reached (connect_unix
        # speaks HTTP/1.0; the test's own requests are HTTP/1.1).
        for d in (a, b):
            seen = d.ok("GET", "/seen")["requests"]
            check(not [r for r in seen if r.endswith("HTTP/1.0")],
                  "an env saw the other unit's requests: %s" % seen)
        for d in (a, b):
            rc, _ = d.stop()
            check(rc == 0, "clean exit")
    finally:
        a.kill()
        b.kill()


def case_image_root(run):
    two_units(run, host_root=False)


def case_host_root(run):
    two_units(run, host_root=True)


def plant_straggler(uid):
    """A sleeping child of ours running as uid; returns its pid once it has
    taken the uid, so the daemon that starts next can see it."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            os.write(w, b"1")
            signal.pause()
        finally:
            os._exit(1)
    os.close(w)
    ok = os.read(r, 1)
    os.close(r)
    check(ok == b"1", "the straggler took uid %d" % uid)
    return pid


def case_crashed_unit_range_not_reused(run):
    m = manifest(run, False)
    a = A.Daemon(run, m)
    c = None
    try:
        old = a.uids
        check(zone_uids(a), "A's containers run")
        a.proc.send_signal(signal.SIGKILL)
        a.proc.wait()
        # A's containers may outlive it for a moment, or not: the kernel
        # tears their namespaces down on its own time. A straggler of ours,
        # with a uid of A's range, stands for one that got away, so the next
        # unit always meets a live process in that range.
        straggler = plant_straggler(old[1])
        try:
            check(A.pids_with_uid_in(*old), "a process with a uid of A's range runs")
            c = A.Daemon(run, m)
            check(disjoint(c.uids, old), "the next unit took the range %s of a crashed unit "
                  "whose processes still ran (%s)" % (old, c.uids))
        finally:
            os.kill(straggler, signal.SIGKILL)
            os.waitpid(straggler, 0)
        a.assert_nothing_left()
        rc, _ = c.stop()
        check(rc == 0, "clean exit")
    finally:
        a.kill()
        if c:
            c.kill()


CASES = [
    ("two units on the attack image: distinct uid ranges, neither reaches the other's state, "
     "sockets or processes", case_image_root),
    ("the same with this host's whole / as both units' root (--host-root-unfiltered)",
     case_host_root),
    ("a SIGKILLed unit's uid range is not reused while a process of that range runs",
     case_crashed_unit_range_not_reused),
]

if __name__ == "__main__":
    sys.exit(A.main(CASES))
