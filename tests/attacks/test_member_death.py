#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Attack: kill members mid-episode and see whether the episode notices.

An env server or hidden service killed mid-episode used to go unnoticed:
/end_episode then returned `graded` with no reason and no blame (and the
exit status read "No child processes"). Here agent code kills its own env
server, a harness exits with a failure (and another one successfully), and
a hidden service is killed from outside (as the OOM killer or a crash
would).

Who killed it (src/unit/member-end.h): an operator's SIGKILL of the env's
container init from the host, and an OOM kill by a limit above the unit (a
limit the test sets on the slot cgroup over the env's leaf, as a pod's or
the host's would be), used to be the agent's misbehaviour; agent code that
SIGKILLs its container's init (PID 1) must change nothing.

Must not happen: a graded verdict after an env or service death; a death
missing from the verdict's events (actor, exit status or signal); blame on
anything but the dead member's subtree, or on the agent for a service's
death, an operator's signal or the host's OOM killer; a harness that
finished cleanly counted as a failure; anything left behind.
"""
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attacklib as A  # noqa: E402
from attacklib import check  # noqa: E402


def manifest(run, harness_moves=(), env_memory_mb=None):
    env_resources = ("          resources: {memory_mb: %d}\n" % env_memory_mb
                     if env_memory_mb else "")
    return run.manifest(A.manifest_head("member-death") + A.zones(
        A.argv("env", "8000"), A.argv("harness", *harness_moves), A.argv("service", "8080"),
        env_extra=env_resources))


def event(v, container):
    for e in v.get("events") or []:
        if e.get("what") == "exited" and e.get("container") == container:
            return e
    return None


def case_env_killed_by_agent(run):
    d = A.Daemon(run, manifest(run))
    try:
        d.ok("POST", "/step", {"action": {"message": "x"}})
        try:
            d.request("POST", "/attack", {"move": "kill_self", "args": {"sig": 9}}, timeout=10)
        except OSError:
            pass  # the env died mid-answer
        A.poll(lambda: d.phase() in ("closed", "grading", "sealed"), "the episode to end")
        v = d.wait_verdict()
        check(v["verdict"] == "agent_misbehavior", "verdict: %s" % v)
        check(v["blame"]["subtree"] == "zones/agent/env", "blame: %s" % v)
        check("killed by signal 9" in v["reason"], "reason: %s" % v["reason"])
        check(v["blame"].get("cause") == "inside", "its own code: %s" % v["blame"])
        e = event(v, "env")
        check(e and e.get("signal") == 9 and e.get("subtree") == "zones/agent/env",
              "the death is an event: %s" % v["events"])
        hist = [(h["from"], h["to"], h["actor"]) for h in d.info()["history"]]
        check(("running", "sealed", "system") in hist, "the system sealed it: %s" % hist)
        check("No child processes" not in str(v), "a real status: %s" % v)
        check(d.ok("POST", "/reset_unit")["phase"] == "ready", "the next episode")
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        d.kill()


def harness_exit(run, status):
    moves = ("write", {"path": "/workspace/harness.done", "data": "1"}, "exit_now",
             {"status": status})
    d = A.Daemon(run, manifest(run, moves))
    try:
        eid = d.info()["episode_id"]
        A.poll(lambda: d.info()["members"]["harness"]["running"] is False, "the harness's exit")
        d.ok("POST", "/step", {"action": {"message": "x"}})  # the episode goes on
        v = d.ok("POST", "/end_episode")
        check(v["episode_id"] == eid, "the same episode")
        e = event(v, "harness")
        check(e and e.get("exit_status") == status, "the exit is an event: %s" % v["events"])
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
        return v
    finally:
        d.kill()


def case_harness_fails(run):
    v = harness_exit(run, 3)
    check(v["verdict"] == "agent_misbehavior", "verdict: %s" % v)
    check(v["blame"]["subtree"] == "zones/agent/harness", "blame: %s" % v)
    check("exited with status 3" in v["reason"], "reason: %s" % v["reason"])


def case_harness_finishes(run):
    v = harness_exit(run, 0)
    check(v["verdict"] == "graded", "a harness that finished is no failure: %s" % v)


def case_service_killed(run):
    d = A.Daemon(run, manifest(run))
    try:
        d.ok("POST", "/step", {"action": {"message": "x"}})
        os.kill(d.principal("svc"), signal.SIGKILL)
        v = d.wait_verdict()
        check(v["verdict"] == "infrastructure_error", "verdict: %s" % v)
        check(v["blame"]["subtree"] == "zones/services/svc", "blame: %s" % v)
        check("killed by signal 9" in v["reason"], "reason: %s" % v["reason"])
        e = event(v, "svc")
        check(e and e.get("signal") == 9, "the death is an event: %s" % v["events"])
        check(d.ok("POST", "/reset_unit")["phase"] == "ready", "the next episode")
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        d.kill()


def init_of(d, name):
    """Host pid of a container's init (the shim): the principal's parent."""
    pids = d.container_pids(name)
    p = d.principal(name)
    shim = int((A.read("/proc/%d/stat" % p) or ") x 0").rsplit(")", 1)[1].split()[1])
    check(shim in pids, "%s's init %d is in its leaf %s" % (name, shim, pids))
    return shim


def case_agent_kills_its_init(run):
    d = A.Daemon(run, manifest(run))
    try:
        r = d.attack("signal_pid", pid=1, sig=9)
        # The kernel drops it (a namespace's init gets no signal from inside
        # it has no handler for): the call itself succeeds.
        check(r.get("ok") is True, "kill(1, SIGKILL) from inside: %s" % r)
        d.ok("POST", "/step", {"action": {"message": "x"}})
        check(d.phase() == "running", "the episode goes on: %s" % d.phase())
        v = d.ok("POST", "/end_episode")
        check(v["verdict"] == "graded", "nothing happened: %s" % v)
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        d.kill()


def case_operator_kills_env_init(run):
    d = A.Daemon(run, manifest(run))
    try:
        d.ok("POST", "/step", {"action": {"message": "x"}})
        os.kill(init_of(d, "env"), signal.SIGKILL)
        v = d.wait_verdict()
        check(v["verdict"] == "infrastructure_error", "not the agent's: %s" % v)
        check(v["blame"] == {"subtree": "zones/agent/env", "cause": "outside_signal"},
              "blame: %s" % v["blame"])
        check("from outside its container" in v["reason"], "reason: %s" % v["reason"])
        check(v["graders_ran"] is False, "no grader ran: %s" % v)
        e = event(v, "env")
        check(e and e.get("signal") == 9 and e.get("end") == "outside_signal",
              "the death is an event: %s" % v["events"])
        check(d.ok("POST", "/reset_unit")["phase"] == "ready", "the next episode")
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        d.kill()


def slot_limit(d, name, mb):
    """Sets (mb) or lifts (None) a memory limit on the cgroup above a
    container's leaf: a limit above the unit, as the host's would be."""
    leaf = d.info()["members"][name]["cgroup"]
    slot = os.path.dirname(leaf)
    if "memory" in d.cg:
        path = os.path.join(d.cg["memory"], slot, "memory.limit_in_bytes")
        value = "-1" if mb is None else str(mb << 20)
    else:
        path = os.path.join(d.cg["unified"], slot, "memory.max")
        value = "max" if mb is None else str(mb << 20)
    with open(path, "w") as f:
        f.write(value)
    return path


def case_oom_above_the_unit(run):
    d = A.Daemon(run, manifest(run, env_memory_mb=1024))
    path = None
    try:
        path = slot_limit(d, "env", 96)
        try:
            d.request("POST", "/attack", {"move": "balloon", "args": {"total_mb": 1024}},
                      timeout=60)
        except OSError:
            pass  # the env died mid-answer
        v = d.wait_verdict()
        check(v["verdict"] == "infrastructure_error", "not the agent's: %s" % v)
        check(v["blame"] == {"subtree": "zones/agent/env", "cause": "host_oom"},
              "blame: %s" % v["blame"])
        check("host's OOM killer" in v["reason"], "reason: %s" % v["reason"])
        e = event(v, "env")
        check(e and e.get("end") == "host_oom", "the death is an event: %s" % v["events"])
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        if path and os.path.exists(path):
            slot_limit(d, "env", None)
        d.kill()


def case_oom_at_its_own_limit(run):
    d = A.Daemon(run, manifest(run, env_memory_mb=96))
    try:
        try:
            d.request("POST", "/attack", {"move": "balloon", "args": {"total_mb": 1024}},
                      timeout=60)
        except OSError:
            pass
        v = d.wait_verdict()
        check(v["verdict"] == "agent_misbehavior", "its own limit: %s" % v)
        check(v["blame"] == {"subtree": "zones/agent/env", "cause": "memory_limit"},
              "blame: %s" % v["blame"])
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        d.kill()


CASES = [
    ("agent code kills its env server: agent_misbehavior on zones/agent/env, signal 9, sealed by "
     "the system", case_env_killed_by_agent),
    ("a harness exits 3: recorded, agent_misbehavior on zones/agent/harness", case_harness_fails),
    ("a harness exits 0: recorded, no failure", case_harness_finishes),
    ("a hidden service is killed: infrastructure_error on zones/services/svc, signal 9",
     case_service_killed),
    ("agent code SIGKILLs its container's init (PID 1): dropped by the kernel, graded",
     case_agent_kills_its_init),
    ("an operator SIGKILLs the env's init from the host: infrastructure_error, cause "
     "outside_signal", case_operator_kills_env_init),
    ("the OOM killer of a limit above the env's own: infrastructure_error, cause host_oom",
     case_oom_above_the_unit),
    ("the OOM killer at the env's own limit: agent_misbehavior, cause memory_limit",
     case_oom_at_its_own_limit),
]

if __name__ == "__main__":
    sys.exit(A.main(CASES))
