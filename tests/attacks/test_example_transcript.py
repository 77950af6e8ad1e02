#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Attack: claim steps in the echo example without taking them.

The example's verdict used to count the transcript the env container writes:
code in the env container appended two lines and got score 1.0 for one
step. Here the example (examples/echo, unchanged but for its env's argv) runs
on the attack image with agent code in its env container that appends two
transcript lines and posts two lines to the hidden sim service before the
example's own server starts; the orchestrator takes one step. A control runs
the example as shipped with three honest steps.

Must not happen: a score other than 0.0 for one step, whatever the agent
zone wrote; the cheat going unnoticed (the verdict reports the claims it did
not trust); the honest three steps scoring anything but 1.0; anything left
behind.
"""
import os
import shutil
import sys

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attacklib as A  # noqa: E402
from attacklib import check  # noqa: E402


def example(run, cheat):
    """examples/echo as a unit dir (its seed and assets), its env optionally hostile."""
    run.n += 1
    d = run.path("echo-%d" % run.n)
    shutil.copytree(os.path.join(A.REPO, "examples/echo"), d,
                    ignore=shutil.ignore_patterns("__pycache__"))
    for root, dirs, files in os.walk(d):
        os.chmod(root, 0o755)
    path = os.path.join(d, "openenv.yaml")
    if cheat:
        with open(path) as f:
            m = yaml.safe_load(f)
        env = m["openenvd"]["zones"]["agent"]["containers"]["env"]
        env["argv"] = ["/usr/bin/python3", "/opt/attack/echo_cheat.py"]
        env.setdefault("env", {})["CHEAT_LINES"] = "2"
        with open(path, "w") as f:
            yaml.safe_dump(m, f)
    return path


def episode(run, cheat, steps):
    d = A.Daemon(run, example(run, cheat))
    try:
        for i in range(steps):
            r = d.ok("POST", "/step", {"action": {"message": "m%d" % i}})
        check(r["done"] is (steps >= 3), "the echo env's done: %s" % r)
        v = d.wait_verdict() if steps >= 3 else d.ok("POST", "/end_episode")
        check(v["verdict"] == "graded", "graded: %s" % v)
        check(v["actions"] == steps, "the verdict carries the daemon's count: %s" % v)
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
        return v["observers"]["verdict"], v["observers"]["runner"]
    finally:
        d.kill()


def case_cheat(run):
    grade, runner = episode(run, cheat=True, steps=1)
    # The attack is real: what the workspace says would pass a transcript count.
    check(runner["steps"] == 3, "the transcript claims 3 steps: %s" % runner)
    check(grade["claimed"] == {"transcript": 3, "sim": 3}, "the claims are reported: %s" % grade)
    check(grade["steps"] == 1 and grade["score"] == 0.0, "one step scores 0.0: %s" % grade)
    check(grade["tampered"] is True, "the cheat is noticed: %s" % grade)


def case_honest(run):
    grade, _ = episode(run, cheat=False, steps=3)
    check(grade["steps"] == 3 and grade["score"] == 1.0, "three steps score 1.0: %s" % grade)
    check(grade["tampered"] is False and grade["claimed"] == {"transcript": 3, "sim": 3},
          "an honest episode claims what it did: %s" % grade)


CASES = [
    ("agent code in the echo env writes two transcript and two sim lines: one step still "
     "scores 0.0 (the verdict counts the daemon's steps)", case_cheat),
    ("control: the example as shipped, three honest steps, scores 1.0", case_honest),
]

if __name__ == "__main__":
    sys.exit(A.main(CASES, install=[("examples/echo", "/opt/openenv-echo")]))
