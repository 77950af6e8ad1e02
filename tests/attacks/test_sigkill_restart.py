#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Attack (by the supervisor): SIGKILL the daemon mid-episode, start it again.

A SIGKILLed daemon cannot clean up: its containers live on (they are not in
its process, and the kernel keeps their cgroups), and whatever it kept in
its state dir would be found by the next one. Here the daemon is SIGKILLed
while provisioning, while running (every zone busy, a harness flooding its
output) and while grading (a grader running, a custody copy behind it); a
new daemon starts on the same --state from the same cgroup parent.

Must not happen: the new daemon serving (listening) before the old one's
cgroups and processes are gone; anything of the old daemon's state visible
to the new one; the new daemon failing its first episode; anything of
either left behind once the new one stops.
"""
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attacklib as A  # noqa: E402
from attacklib import check  # noqa: E402


def manifest(run, env_moves=(), busy="busy"):
    """busy: the workspace dir the harness fills (the new daemon's harness
    fills another, so that the old one's can be told from it)."""
    return run.manifest(A.manifest_head("sigkill") + A.zones(
        A.argv("env", "8000", *env_moves),
        A.argv("harness", "many_files", {"dir": "/workspace/" + busy, "n": 500},
               "flood", {"fd": 1, "total": 1 << 30, "wait": True}),
        A.argv("service", "8080"),
        [("grader", {"argv": A.argv("observer", "sleep", {"s": 60}), "reads": "[workspace]",
                     "phases": "[grading]"})]))


def old_is_gone(old):
    """What of a SIGKILLed daemon is still there: cgroups, processes."""
    left = [p for p in old.cg.values() if os.path.exists(p)]
    if old.uids:
        left += ["pid %d" % p for p in A.pids_with_uid_in(*old.uids)]
    return left


def kill_and_restart(run, m, drive, first_episode=True):
    old = A.Daemon(run, m, first_episode=first_episode)
    new = None
    try:
        drive(old)
        before = old.member_pids()
        check(before, "the old daemon's containers run")
        old.proc.send_signal(signal.SIGKILL)
        old.proc.wait()
        check(any(os.path.exists("/proc/%d" % p) for p in before),
              "its containers outlive a SIGKILLed daemon (what the restart must clean)")
        new = A.Daemon(run, manifest(run, busy="busy-new"), state=old.state, wait=False)
        new.wait_ready(first_episode=False)
        # It listens: by now the old one's subtree and processes are gone.
        check(not old_is_gone(old), "the new daemon serves while the old one's %s remain"
              % old_is_gone(old))
        log = A.read(new.log)
        check(log.index("removed 1 cgroup subtree") < log.index("listening on"),
              "the sweep comes before serving:\n%s" % log)
        A.poll(lambda: new.phase() != "provisioning", "the new daemon's first episode")
        check(new.phase() == "ready", "the new daemon's first episode: %s\n%s"
              % (new.phase(), new.tail()))
        r = new.attack("listdir", path="/workspace")
        check(r["ok"] and "busy" not in r["entries"], "the old episode's workspace is gone: %s"
              % r)
        check(new.ok("POST", "/step", {"action": {"message": "x"}})["done"] is False, "a step")
        rc, _ = new.stop()
        check(rc == 0, "clean exit")
    finally:
        old.kill()
        if new:
            new.kill()


def case_provisioning(run):
    m = manifest(run, env_moves=("sleep", {"s": 30}))
    kill_and_restart(run, m, lambda d: A.poll(
        lambda: d.info()["members"].get("env", {}).get("running"), "env started"),
                     first_episode=False)


def case_running(run):
    def drive(d):
        d.ok("POST", "/step", {"action": {"message": "x"}})
        A.poll(lambda: A.read(d.workspace("harness.0.many_files.json")), "the busy workspace")
    kill_and_restart(run, manifest(run), drive)


def case_grading(run):
    def drive(d):
        A.poll(lambda: A.read(d.workspace("harness.0.many_files.json")), "the busy workspace")
        A.Background(d.request, "POST", "/end_episode", timeout=60)
        A.poll(lambda: d.phase() == "grading" and d.info()["members"].get("grader", {})
               .get("running"), "the grader running")
    kill_and_restart(run, manifest(run), drive)


CASES = [
    ("SIGKILL while provisioning, restart on the same state: swept before serving",
     case_provisioning),
    ("SIGKILL while running (every zone busy), restart: swept before serving, a clean episode",
     case_running),
    ("SIGKILL while grading (a grader running), restart: swept before serving", case_grading),
]

if __name__ == "__main__":
    sys.exit(A.main(CASES))
