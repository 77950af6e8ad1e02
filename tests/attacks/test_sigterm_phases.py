#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Attack (by the clock): stop the daemon in every phase, the slow ones held open.

Control calls used to run synchronously: SIGTERM during a 15 s provisioning
or grading took 14 s, past `docker stop`'s 10 s grace, after which SIGKILL
left cgroups and state behind. Here a daemon is stopped with SIGTERM in
each phase: provisioning (an env that takes 30 s to listen), ready, running,
frozen, sealed (an observer of the sealed phase that takes 30 s), grading
(a grader that takes 30 s, with a custody copy of a busy workspace behind
it), closed, and failed; also while a reset is pending and a standby
episode provisions.

Must not happen: an exit later than 2 s after the signal, an exit status
other than 0, or anything left behind (cgroups, processes, mounts, state).
"""
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attacklib as A  # noqa: E402
from attacklib import check  # noqa: E402

DEADLINE = 2.0  # seconds from SIGTERM to exit (issue 10)


def manifest(run, env_moves=(), observers=()):
    return run.manifest(A.manifest_head("sigterm") + A.zones(
        A.argv("env", "8000", *env_moves),
        A.argv("harness", "many_files", {"dir": "/workspace/busy", "n": 2000}),
        A.argv("service", "8080"), observers))


def slow_observer(phase):
    """An observer of the workspace that sleeps through its phase."""
    return [("slow", {"argv": A.argv("observer", "sleep", {"s": 30}), "reads": "[workspace]",
                      "phases": "[%s]" % phase})]


def stop_within_deadline(d, phase):
    rc, elapsed = d.stop(signal.SIGTERM, deadline=30)
    A.note("%s: exit %s %.2f s after SIGTERM" % (phase, rc, elapsed))
    check(rc == 0, "%s: exit status %s\n%s" % (phase, rc, d.tail()))
    check(elapsed <= DEADLINE, "%s: %.2f s from SIGTERM to exit" % (phase, elapsed))


def case_provisioning(run):
    m = manifest(run, env_moves=("sleep", {"s": 30}))
    d = A.Daemon(run, m, first_episode=False)
    try:
        A.poll(lambda: d.info()["members"].get("env", {}).get("running"), "env started")
        check(d.phase() == "provisioning", "provisioning")
        stop_within_deadline(d, "provisioning")
    finally:
        d.kill()


def case_reset_pending(run):
    m = manifest(run, env_moves=("sleep", {"s": 30}))
    d = A.Daemon(run, m, args=["--no-initial-episode", "--no-standby"])
    try:
        reset = A.Background(d.request, "POST", "/reset_unit", timeout=60)
        A.poll(lambda: d.phase() == "provisioning", "the reset provisioning")
        stop_within_deadline(d, "provisioning with a reset pending")
        reset.thread.join(10)
        check(not reset.alive(), "the pending reset's client was let go")
    finally:
        d.kill()


def simple(run, phase, drive):
    d = A.Daemon(run, manifest(run))
    try:
        drive(d)
        check(d.phase() == phase, "in %s: %s" % (phase, d.phase()))
        stop_within_deadline(d, phase)
    finally:
        d.kill()


def case_ready(run):
    # The standby episode provisions meanwhile.
    simple(run, "ready", lambda d: None)


def case_running(run):
    simple(run, "running", lambda d: d.ok("POST", "/step", {"action": {"message": "x"}}))


def case_frozen(run):
    def drive(d):
        d.ok("POST", "/step", {"action": {"message": "x"}})
        d.ok("POST", "/inspect")
    simple(run, "frozen", drive)


def case_closed(run):
    simple(run, "closed", lambda d: d.ok("POST", "/end_episode"))


def held_by_observer(run, phase):
    d = A.Daemon(run, manifest(run, observers=slow_observer(phase)))
    try:
        A.poll(lambda: A.read(d.workspace("harness.0.many_files.json")), "the busy workspace")
        end = A.Background(d.request, "POST", "/end_episode", timeout=60)
        A.poll(lambda: d.phase() == phase and d.info()["members"].get("slow", {}).get("running"),
               "the slow observer in %s" % phase)
        stop_within_deadline(d, phase)
        end.thread.join(10)
        check(not end.alive(), "the pending end's client was let go")
    finally:
        d.kill()


def case_sealed(run):
    held_by_observer(run, "sealed")


def case_grading(run):
    held_by_observer(run, "grading")


def case_failed(run):
    m = manifest(run, env_moves=("exit_now", {"status": 3}))
    d = A.Daemon(run, m)
    try:
        check(d.phase() == "failed", "failed: %s" % d.phase())
        stop_within_deadline(d, "failed")
    finally:
        d.kill()


CASES = [
    ("SIGTERM while provisioning (env takes 30 s to listen)", case_provisioning),
    ("SIGTERM with a reset pending", case_reset_pending),
    ("SIGTERM when ready (standby provisioning)", case_ready),
    ("SIGTERM when running", case_running),
    ("SIGTERM when frozen", case_frozen),
    ("SIGTERM when sealed (a 30 s sealed-phase observer)", case_sealed),
    ("SIGTERM when grading (a 30 s grader)", case_grading),
    ("SIGTERM when closed", case_closed),
    ("SIGTERM when failed", case_failed),
]

if __name__ == "__main__":
    sys.exit(A.main(CASES))
