#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Attack: get at a grader that exists before its turn.

An observer that runs only once the agent zone stops is made while the
episode provisions, its program held at the shim's gate (docs/DAEMON.md,
"Observers made ahead of their turn"). So while agent code runs, the
grader's container already exists: its namespaces, cgroup leaf, mounts and
shim.

Must not happen: the grader's program runs before its turn (it would see
the live episode, or an empty workspace copy); it starts with values of
the live episode (the phase, the count of actions) instead of the turn's;
what agent code writes after the grader was made is missing from its
copy; a grader that dies at its gate fails the episode or never runs.
"""
import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attacklib as A  # noqa: E402
from attacklib import check, poll, read  # noqa: E402

JUDGE = ("import json, os, time; "
         "json.dump({'started': time.time(), 'phase': os.environ['OPENENVD_PHASE'], "
         "'actions': os.environ['OPENENVD_ACTIONS'], 'ws': sorted(os.listdir('/workspace'))}, "
         "open('/out/verdict.json', 'w'))")


def manifest(run):
    return run.manifest(A.manifest_head("observers-ahead") + """    agent:
      containers:
        env:
          argv: %s
    observers:
      containers:
        judge:
          argv: [python3, -c, %s]
          reads: [workspace]
          phases: [grading]
""" % (A.argv("env", "8000"), json.dumps(JUDGE)))


def gated_shim(d):
    """The host pid of the judge's shim, made ahead (the daemon's debug log)."""
    def find():
        for line in (read(d.log) or "").splitlines():
            if "container judge made ahead of its turn as pid" in line:
                return int(line.rsplit("pid ", 1)[1].split()[0])
        return None
    return poll(find, "the judge made ahead", 30)


def children(pid):
    c = read("/proc/%d/task/%d/children" % (pid, pid))
    check(c is not None, "the shim (pid %d) is there, its children listed" % pid)
    return c.split()


def case_nothing_runs_before_its_turn(run):
    d = A.Daemon(run, manifest(run), args=("--log-level", "debug"))
    try:
        shim = gated_shim(d)
        check(children(shim) == [], "the judge's shim holds no principal while the agent runs: %s"
              % children(shim))
        d.ok("POST", "/step", {"action": {"message": "one"}})
        d.attack("write", path="/workspace/late.txt", data="written after the judge was made")
        d.ok("POST", "/step", {"action": {"message": "two"}})
        check(children(shim) == [], "still held after two steps")
        done_at = time.time()
        v = d.ok("POST", "/end_episode")
        check(v["verdict"] == "graded", "graded: %s" % v)
        j = v["observers"]["judge"]
        check(j["started"] > done_at, "the judge's program started after the end: %s < %s"
              % (j["started"], done_at))
        check(j["phase"] == "grading" and j["actions"] == "2",
              "the turn's values, not the provisioning's: %s" % j)
        check("late.txt" in j["ws"], "the copy holds what agent code wrote late: %s" % j["ws"])
        check("container judge released" in read(d.log), "the judge made ahead was the one used")
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        d.kill()


def case_dead_at_its_gate_is_made_anew(run):
    d = A.Daemon(run, manifest(run), args=("--log-level", "debug"))
    try:
        shim = gated_shim(d)
        os.kill(shim, signal.SIGKILL)
        poll(lambda: "observer judge exited before its turn" in read(d.log),
             "the daemon saw it go", 30)
        d.ok("POST", "/step", {"action": {"message": "one"}})
        check(d.phase() == "running", "no failure while the agent runs: %s" % d.phase())
        v = d.ok("POST", "/end_episode")
        check(v["verdict"] == "graded", "graded all the same: %s" % v)
        check(v["observers"]["judge"]["actions"] == "1", "the judge ran: %s" % v["observers"])
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        d.kill()


CASES = [
    ("a grader made ahead runs nothing before its turn: its program starts after the end, with "
     "the turn's phase and count, and copies what agent code wrote after it was made",
     case_nothing_runs_before_its_turn),
    ("a grader killed at its gate is made anew at its turn: no failure, graded",
     case_dead_at_its_gate_is_made_anew),
]

if __name__ == "__main__":
    sys.exit(A.main(CASES))
