#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Attack: inspect every fd a zone holds, looking for the daemon's.

Containers' output used to be the daemon's own stderr: agent code read the
daemon's log back through /proc/self/fd/1, read the previous episode's
output, truncated the log and forged daemon lines. Here every kind of
container (env, harness, service, an observer running beside the agent, a
grading observer) lists /proc/self/fd and /proc/1/fd, re-opens each fd for
reading and looks for the daemon's log lines and the previous episode's
output, tries to truncate and seek its stdout, and writes forged daemon
lines to it.

Must not happen: a marker read back; a forged line in the daemon's log; a
zone process holding one of the daemon's open files (kcmp(2) from the host,
over every process in every zone); the log shrinking. The only open files a
zone shares with the daemon are the listening sockets the daemon made for it
(socket activation).
"""
import os
import re
import secrets
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attacklib as A  # noqa: E402
from attacklib import check  # noqa: E402

FORGED = "openenvd: phase running -> closed (system: forged by the agent)\n"


def manifest(run, markers):
    fds = {"markers": markers}
    return run.manifest(A.manifest_head("fd-inspection") + A.zones(
        A.argv("env", "8000"),
        A.argv("harness", "emit", {"text": FORGED}, "emit", {"text": FORGED, "fd": 2},
               "fds", fds),
        A.argv("service", "8080", "emit", {"text": FORGED}, "fds", fds),
        [("beside", {"argv": A.argv("observer", "emit", {"text": FORGED}, "fds", fds),
                     "reads": "[workspace]", "phases": "[ready]"}),
         ("grader", {"argv": A.argv("observer", "emit", {"text": FORGED}, "fds", fds,
                                    "sleep", {"s": 3}),
                     "phases": "[grading]"})]))


def activation_sockets(d):
    """Inodes of the listening sockets the daemon made for its containers."""
    inodes = set()
    private = d.state + "/private/"
    for line in (A.read("/proc/%d/net/unix" % d.pid) or "").splitlines()[1:]:
        f = line.split()
        if len(f) >= 8 and f[7].startswith(private):
            inodes.add("socket:[%s]" % f[6])
    return inodes


def shared_with_daemon(d):
    """(zone pid, fd, target) of every zone fd that is one of the daemon's open
    files, and how many activation sockets were seen shared (the control:
    kcmp works, and the shims do hold them)."""
    allowed = activation_sockets(d)
    daemon_fds = A.fds_of(d.pid)
    found, activation = [], 0
    for pid in d.member_pids():
        for fd in A.fds_of(pid):
            for dfd in daemon_fds:
                if A.same_open_file(pid, fd, d.pid, dfd):
                    try:
                        target = os.readlink("/proc/%d/fd/%d" % (pid, fd))
                    except OSError:
                        target = "?"
                    if target not in allowed:
                        found.append((pid, fd, target))
                    else:
                        activation += 1
    return found, activation


def check_report(who, rep, markers):
    check("error" not in rep["self"], "%s listed its fds: %s" % (who, rep))
    for fd, r in list(rep["self"].items()) + list(rep["pid1"].items()
                                                   if "error" not in rep["pid1"] else []):
        check(not r.get("markers"), "%s read %s back through fd %s (%s)"
              % (who, r.get("markers"), fd, r.get("target")))
    out = rep["self"].get("1", {})
    check(out.get("target", "").startswith("pipe:") and (out.get("flags", 0) & 3) == 1,
          "%s: stdout is the write end of a pipe: %s" % (who, out))
    check(rep["self"].get("2", {}).get("target") == out.get("target"),
          "%s: stderr is the same pipe" % who)
    check(rep["ftruncate"] != "ok" and rep["lseek"] != "ok",
          "%s could truncate or seek its stdout: %s" % (who, rep))
    del markers


def case_every_zone(run):
    port = A.free_port()
    previous = "EPISODE-ONE-OUTPUT-" + secrets.token_hex(6)
    markers = ["listening on 127.0.0.1:%d" % port, "openenvd listening", "openenvd ready",
               previous, "host uids"]
    d = A.Daemon(run, manifest(run, markers), port=port)
    try:
        # Episode one: the env prints something the next episode wants.
        d.attack("emit", text=previous + "\n")
        d.attack("emit", text=FORGED, fd=2)
        size_one = os.path.getsize(d.log)
        check(previous in d.logs("env"), "the env's output is its own log: %s" % d.logs("env"))
        check(d.ok("POST", "/reset_unit")["phase"] == "ready", "episode two")
        eid = d.info()["episode_id"]
        env = d.attack("fds", markers=markers)
        check_report("env", env, markers)
        harness = d.wait_workspace_json("harness.2.fds.json", episode=eid)
        check_report("harness", harness, markers)
        beside = A.poll(lambda: A.read(d.inside("episodes/%s/observers/beside/out/verdict.json"
                                                % eid)), "the observer beside the agent")
        import json
        check_report("beside", json.loads(beside)["results"][1], markers)
        # Every process of every zone, from the host: none holds a daemon file.
        A.poll(lambda: len(d.member_pids()) >= 3, "env, harness and svc running")
        shared, activation = shared_with_daemon(d)
        check(not shared, "zone processes hold the daemon's open files: %s" % shared)
        check(activation >= 2, "control: the env's and svc's shims hold their activation "
              "sockets (kcmp saw %d)" % activation)
        d.ok("POST", "/step", {"action": {"message": "x"}})
        # Grading: the grader holds nothing of the daemon's either.
        status = {}

        def end():
            status["v"] = d.ok("POST", "/end_episode")
        import threading
        t = threading.Thread(target=end)
        t.start()
        A.poll(lambda: d.phase() == "grading" and "grader" in d.info()["members"] and
               d.info()["members"]["grader"]["running"], "the grader running")
        shared, _ = shared_with_daemon(d)
        check(not shared, "the grader holds the daemon's open files: %s" % shared)
        t.join(60)
        v = status["v"]
        check(v["verdict"] == "graded", "graded: %s" % v)
        check_report("grader", v["observers"]["grader"]["results"][1], markers)
        svc = d.logs("svc")
        check(FORGED.strip() in svc, "the service's forged line is its own output: %r" % svc)
        log = A.read(d.log)
        # The containers' first lines are in the daemon's log too, each
        # prefixed with its container: a forged line is never one of the
        # daemon's own.
        forged = [ln for ln in log.splitlines() if "forged" in ln]
        check(forged and all(re.match(r"openenvd: (env|harness|svc|beside|grader)\| ", ln)
                             for ln in forged),
              "a forged line in the daemon's voice:\n%s" % "\n".join(forged))
        check(os.path.getsize(d.log) >= size_one, "the daemon's log shrank")
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        d.kill()


CASES = [
    ("env, harness, service and observers hold no daemon fd, read no daemon log or previous "
     "output, cannot truncate or forge the log", case_every_zone),
]

if __name__ == "__main__":
    sys.exit(A.main(CASES))
