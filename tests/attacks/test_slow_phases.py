#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Attack (by the clock): make provisioning and grading long, and see who waits.

Control calls used to run synchronously in the one event loop: during a
15 s provisioning or grading, /healthz waited 14 s. Here the env takes 15 s
to listen (provisioning), and agent code fills its workspace with 200 MB in
2,000 files before a grader that takes 15 s (grading: a custody copy of all
of it, then the grader; then the teardown of both); meanwhile /healthz (no token) and /info (token) are
called without pause.

Must not happen: a /healthz or /info not answered during either; the verdict
not arriving; anything left behind. (How fast they were answered is
measured in bench/attacks, never asserted here.)
"""
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attacklib as A  # noqa: E402
from attacklib import check  # noqa: E402


def manifest(run, env_moves=()):
    return run.manifest(A.manifest_head("slow-phases") + """\
    agent:
      resources: {disk_mb: 256}
      containers:
        env:
          argv: %s
        harness:
          argv: %s
    observers:
      containers:
        grader:
          argv: %s
          reads: [workspace]
          phases: [grading]
""" % (A.argv("env", "8000", *env_moves),
       A.argv("harness", "many_files", {"dir": "/workspace/bulk", "n": 2000, "size": 100000}),
       A.argv("observer", "sleep", {"s": 15}, "listdir", {"path": "/workspace/bulk"})))


S = {}  # what probe_while() saw of readiness


def readiness(d, notify=None):
    """/health and /readyz (no token) and whether stdout (and systemd) were
    told ready, while busy."""
    S.setdefault("starting", [])
    S["ready_early"] = "openenvd ready" in (A.read(d.out) or "")
    S["notified_early"] = notified(notify) if notify else []
    for route in ("/health", "/readyz"):
        S["starting"].append((route, d.request("GET", route, token=None, timeout=10)))


def probe_while(d, busy, starting=False, notify=None):
    """Calls /healthz and /info until busy() is false: (answered, unanswered, slowest s).
    starting: /health and /readyz too, once, while still busy."""
    ok = bad = 0
    slowest = 0.0
    S.clear()
    while busy():
        if starting and not S:
            readiness(d, notify)
        for call in (d.healthz, lambda: d.request("GET", "/info", timeout=10)[0] == 200):
            t0 = time.monotonic()
            try:
                good = call()
            except OSError:
                good = False
            slowest = max(slowest, time.monotonic() - t0)
            ok, bad = (ok + 1, bad) if good else (ok, bad + 1)
    return ok, bad, slowest


def notify_socket(run):
    """A Type=notify manager's end: what openenvd tells systemd."""
    path = run.path("notify")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    s.setblocking(False)
    return s, path


def notified(s):
    out = []
    while True:
        try:
            out.append(s.recv(4096).decode())
        except BlockingIOError:
            return out


def case_provisioning(run):
    notify, path = notify_socket(run)
    d = A.Daemon(run, manifest(run, env_moves=("sleep", {"s": 15})), args=["--no-standby"],
                 first_episode=False, env={"NOTIFY_SOCKET": path})
    try:
        t0 = time.monotonic()
        ok, bad, slowest = probe_while(d, lambda: d.phase() == "provisioning", starting=True,
                                       notify=notify)
        A.note("provisioning %.1f s: %d answers, slowest %.3f s" % (time.monotonic() - t0, ok,
                                                                     slowest))
        check(bad == 0, "%d calls unanswered while provisioning" % bad)
        check(ok >= 20, "only %d answers in 15 s of provisioning" % ok)
        check(d.phase() == "ready", "ready after: %s" % d.phase())
        check(S.get("starting"), "no /health answer seen while provisioning")
        for route, answer in S["starting"]:
            check(answer[0] == 503 and answer[1].get("reason") ==
                  "the first episode is still starting", "%s while provisioning: %s"
                  % (route, answer))
        check(not S["ready_early"], "stdout said 'openenvd ready' while provisioning")
        check(S["notified_early"] == [], "systemd told before an episode served: %s"
              % S["notified_early"])
        health = d.request("GET", "/health", token=None)
        check(health == (200, {"status": "healthy", "phase": "ready"}), "/health after: %s"
              % (health,))
        A.poll(lambda: "openenvd ready" in (A.read(d.out) or ""), "'openenvd ready' once ready")
        told = A.poll(lambda: notified(notify), "systemd told READY=1")
        check(told == ["READY=1\nSTATUS=an episode can serve"], "sd_notify: %s" % told)
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
        check(notified(notify) == ["STOPPING=1"], "STOPPING=1 at SIGTERM")
    finally:
        d.kill()
        notify.close()


def case_grading(run):
    d = A.Daemon(run, manifest(run), args=["--no-standby"])
    try:
        A.poll(lambda: A.read(d.workspace("harness.0.many_files.json")), "the bulk", 120)
        end = A.Background(d.request, "POST", "/end_episode", timeout=120)
        t0 = time.monotonic()
        after = []

        def busy():
            # Grading, then the teardown that follows the verdict (3 s).
            if not end.alive() and not after:
                after.append(time.monotonic() + 3)
            return not after or time.monotonic() < after[0]
        ok, bad, slowest = probe_while(d, busy)
        A.note("sealing, grading and teardown %.1f s: %d answers, slowest %.3f s"
               % (time.monotonic() - t0, ok, slowest))
        status, v = end.result()
        check(status == 200 and v["verdict"] == "graded", "graded: %s %s" % (status, v))
        # Between episodes the unit stays ready: a reset is served.
        health = d.request("GET", "/health", token=None)
        check(health[0] == 200 and health[1]["status"] == "healthy", "/health after the "
              "verdict: %s" % (health,))
        listed = v["observers"]["grader"]["results"][1]
        check(listed["ok"] and len(listed["entries"]) == 2000, "the grader saw the copy: %s"
              % str(listed)[:200])
        check(bad == 0, "%d calls unanswered while grading" % bad)
        check(ok >= 20, "only %d answers in 15 s of grading" % ok)
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        d.kill()


CASES = [
    ("a 15 s provisioning: /healthz and /info answered throughout; /health and /readyz 503 "
     "with the reason until the episode is up, 'openenvd ready' only then", case_provisioning),
    ("a custody copy of 200 MB and a 15 s grader: /healthz and /info answered throughout",
     case_grading),
]

if __name__ == "__main__":
    sys.exit(A.main(CASES))
