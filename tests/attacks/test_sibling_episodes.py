#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Attack: one episode of several at once goes after its sibling.

A unit with `episodes: {concurrent: 2}` runs two episodes side by side, one
per WebSocket session. Episode A's agent code (its env server, driven by
the attacker's own steps) forks until the kernel refuses, balloons its
memory, fills its disk, or kills its own env server; meanwhile episode B
forks a child, holds memory of its own, writes its workspace and steps on.

The zone's resources are each episode's (its slot's cgroup): before they
were, the zone's ceiling was one pool that A's fork bomb or balloon took
from B (a shared 48 pids or 192 MiB).

Must not happen: B refused a fork, OOM-killed, refused a write, its env
server restarted or signalled, its session closed, or anything of A's in
B's verdict (events, blame); A's own verdict naming anything but A.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attacklib as A  # noqa: E402
from attacklib import check  # noqa: E402


def manifest(run):
    head = A.manifest_head("siblings").replace("  zones:\n",
                                               "  episodes: {concurrent: 2}\n  zones:\n")
    return run.manifest(head + "    agent:\n"
                        "      resources: {memory_mb: 192, pids: 48, disk_mb: 16}\n"
                        "      containers:\n"
                        "        env:\n"
                        "          argv: %s\n" % A.argv("env", "8000"))


def step(s, message="x", move=None, **args):
    data = {"message": message}
    if move:
        data.update(move=move, args=args)
    r = s.call({"type": "step", "data": data})
    check(r.get("type") == "observation", "a step's answer: %s" % r)
    return r["data"]


def episode_of(d, lane):
    live = [e for e in d.ok("GET", "/episodes")["live_episodes"] if e["lane"] == lane]
    check(len(live) == 1, "lane %d's episode: %s" % (lane, live))
    return live[0]["episode_id"]


def siblings(run, attack, expect_a):
    """A and B at once; attack(a) is A's; B's own moves before, during and
    after it; then B ends and is graded as if A had never been there."""
    d = A.Daemon(run, manifest(run))
    a = b = None
    try:
        a, b = A.WsSession(d), A.WsSession(d)
        check({a.lane, b.lane} == {0, 1}, "two lanes: %s %s" % (a.lane, b.lane))
        for s in (a, b):
            r = s.call({"type": "reset", "data": {}})
            check(r.get("type") == "observation", "reset: %s" % r)
        ea, eb = episode_of(d, a.lane), episode_of(d, b.lane)
        check(ea != eb, "two episodes: %s %s" % (ea, eb))
        pid_b = step(b)["observation"]["pid"]
        check(step(b, move="fork_child")["observation"]["report"] == {"ok": True},
              "B forks before the attack")

        report = attack(a)
        A.note("A's attack: %s" % report)

        # B, during (A's bomb, balloon and full disk are still held) and after.
        obs = step(b, move="fork_child")["observation"]
        check(obs["report"] == {"ok": True}, "B still forks: %s" % obs)
        obs = step(b, move="balloon", total_mb=128)["observation"]
        check(obs["report"] == {"held_mb": 128} and obs["pid"] == pid_b,
              "B holds 128 MiB of its own, same env server: %s" % obs)
        obs = step(b, move="write", path="/workspace/b.txt", data="b" * 4096)["observation"]
        check(obs["report"].get("ok") is True, "B writes its workspace: %s" % obs)
        check(step(b, move="fork_child")["observation"]["report"] == {"ok": True},
              "B forks after")
        r = b.call({"type": "step", "data": {"message": "done"}})
        check(r.get("type") == "observation" and r["data"]["done"], "B's done: %s" % r)
        vb = d.ok("GET", "/verdict?wait=1&episode_id=" + eb)
        check(vb["verdict"] == "graded" and vb["episode_id"] == eb and vb["actions"] == 7 and
              not vb.get("blame") and not vb.get("events"),
              "B's verdict knows nothing of A: %s" % vb)
        va = expect_a(d, a, ea)
        check(va["episode_id"] == ea, "A's verdict is A's: %s" % va)
        for s in (a, b):
            s.close()
        a = b = None
        A.poll(lambda: d.ok("GET", "/info")["episodes"]["sessions"] == 0, "the lanes free", 30)
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        for s in (a, b):
            if s:
                s.close()
        d.kill()


def a_ends(d, a, ea):
    r = a.call({"type": "step", "data": {"message": "done"}})
    check(r.get("type") == "observation" and r["data"]["done"], "A's done: %s" % r)
    return d.ok("GET", "/verdict?wait=1&episode_id=" + ea)


def case_fork_bomb(run):
    def attack(a):
        report = step(a, move="fork_bomb")["observation"]["report"]
        check(report.get("errno") == "EAGAIN" and report["forked"] > 0,
              "A's bomb met its own limit: %s" % report)
        return report

    def expect_a(d, a, ea):
        v = a_ends(d, a, ea)
        check(any(e.get("what") == "pids_limit" for e in v.get("events") or []),
              "A's pids limit is A's event: %s" % v)
        return v
    siblings(run, attack, expect_a)


def case_memory_balloon(run):
    def attack(a):
        # Below A's own ceiling, held for the rest of its episode: with one
        # pool for the zone, B's 128 MiB did not fit beside it.
        report = step(a, move="balloon", total_mb=144)["observation"]["report"]
        check(report == {"held_mb": 144}, "A holds 144 MiB: %s" % report)
        return report
    siblings(run, attack, a_ends)


def case_disk_fill(run):
    def attack(a):
        report = step(a, move="fill", dir="/workspace")["observation"]["report"]
        check(report.get("errno") == "ENOSPC", "A's disk is full: %s" % report)
        return report
    siblings(run, attack, a_ends)


def case_crash(run):
    def attack(a):
        a.send({"type": "step", "data": {"message": "x", "move": "kill_self"}})
        r = a.recv()
        check(r.get("type") == "error" and r["data"]["code"] == "EPISODE_ENDED",
              "A's session hears its env server died: %s" % r)
        return r

    def expect_a(d, a, ea):
        v = d.ok("GET", "/verdict?wait=1&episode_id=" + ea)
        check(v["verdict"] == "agent_misbehavior" and v["blame"]["subtree"] == "zones/agent/env",
              "A's crash is A's: %s" % v)
        return v
    siblings(run, attack, expect_a)


CASES = [
    ("a fork bomb in one episode: its sibling still forks", case_fork_bomb),
    ("a memory balloon in one episode: its sibling holds its own memory", case_memory_balloon),
    ("a full disk in one episode: its sibling writes its own", case_disk_fill),
    ("a crashed env server in one episode: its sibling steps on, graded clean", case_crash),
]

if __name__ == "__main__":
    sys.exit(A.main(CASES))
