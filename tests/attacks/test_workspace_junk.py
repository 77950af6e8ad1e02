#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Attack: leave in /workspace what stalls, floods or escapes a grader.

A FIFO planted in /workspace used to stall /end_episode for the whole
observer timeout (with /healthz and /info unanswered) and be blamed on the
observers; a 10 GiB sparse file ran the runner out of memory
(infrastructure_error). Agent code here leaves, one episode each: a FIFO, a
10 GiB sparse file, a 20,000-deep directory, 12,000 files, a unix socket, a
symlink to a root-only host file, and whatever device nodes it can make; the
grading runner reads the workspace. In the agent's socket dir and /tmp it
leaves a 20,000-deep tree and fills them, then the orchestrator resets.

Must not happen: a verdict other than agent_misbehavior blamed on the
container that planted it, with the entry and the reason; an end that does
not return, or a /healthz unanswered while it runs; a unit that cannot
reset afterwards; anything left behind.
"""
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attacklib as A  # noqa: E402
from attacklib import check  # noqa: E402


def manifest(run, harness_moves=()):
    return run.manifest(A.manifest_head("workspace-junk") + """\
    agent:
      resources: {disk_mb: 128}
      containers:
        env:
          argv: %s
        harness:
          argv: %s
    observers:
      containers:
        runner:
          argv: %s
          reads: [workspace]
          phases: [grading]
""" % (A.argv("env", "8000"), A.argv("harness", *harness_moves),
       A.argv("observer", "listdir", {"path": "/workspace"})))


def end_while_probing(d):
    """POST /end_episode; /healthz and /info must answer while it runs."""
    result, probes = {}, {"ok": 0, "failed": 0}

    def end():
        result["v"] = d.request("POST", "/end_episode", timeout=120)
    t = threading.Thread(target=end)
    t.start()
    while t.is_alive():
        ok = d.healthz() and d.request("GET", "/info")[0] == 200
        probes["ok" if ok else "failed"] += 1
        t.join(0.05)
    check(probes["failed"] == 0, "%d probes unanswered while grading" % probes["failed"])
    status, v = result["v"]
    check(status == 200, "/end_episode -> %s %s" % (status, v))
    return v


def expect_refusal(d, plant, words, blame="zones/agent/env"):
    check(d.ok("POST", "/reset_unit")["phase"] == "ready", "reset")
    r = plant()
    check(r.get("ok", True) and "exception" not in r, "planted: %s" % r)
    A.note("planted: %s" % r)
    v = end_while_probing(d)
    check(v["verdict"] == "agent_misbehavior", "verdict: %s" % v)
    check((v["blame"] or {}).get("subtree") == blame, "blamed on %s: %s" % (blame, v))
    for w in words:
        check(w in (v["reason"] or ""), "the reason names %r: %s" % (w, v["reason"]))
    return v


def case_workspace(run):
    d = A.Daemon(run, manifest(run), args=["--no-initial-episode", "--observer-timeout", "60"])
    try:
        expect_refusal(d, lambda: d.attack("mkfifo", path="/workspace/evil-fifo"),
                       ("evil-fifo", "FIFO"))
        # 10 GiB is past the copy's byte bound (the workspace's disk_mb);
        # 32 MiB of holes is within it, and refused as sparse.
        expect_refusal(d, lambda: d.attack("sparse", path="/workspace/holes", size=10 << 30),
                       ("holes", "exceeds"))
        expect_refusal(d, lambda: d.attack("sparse", path="/workspace/holes", size=32 << 20),
                       ("holes", "sparse"))
        expect_refusal(d, lambda: d.attack("deep_tree", dir="/workspace", depth=20000,
                                           timeout=120), ("nested deeper than",))
        expect_refusal(d, lambda: d.attack("many_files", dir="/workspace/many", n=12000,
                                           timeout=120), ("more than", "entries"))
        expect_refusal(d, lambda: d.attack("unix_socket", path="/workspace/evil.sock"),
                       ("evil.sock", "socket"))
        expect_refusal(d, lambda: d.attack("symlink", target=run.path("secret"),
                                           path="/workspace/evil-link"),
                       ("evil-link", "symlink"))
        # Out of inodes (32,768 at 128 MB) with empty entries: the owner's
        # fault. Listed as disk_full (recorded: the default verdict policy,
        # docs/GRADING.md), then the runner's custody copy refuses that many.
        v = expect_refusal(d, lambda: d.attack("many_files", dir="/workspace/inodes", n=40000,
                                               timeout=120), ("more than", "entries"))
        full = [e for e in v["events"] if e.get("what") == "disk_full"]
        check(full and "out of inodes" in full[0]["reason"] and full[0]["policy"] == "record" and
              full[0]["subtree"] == "zones/agent/env", "the full disk listed: %s" % v["events"])
        # Devices: the kernel refuses most (no CAP_MKNOD); whatever appears
        # in the workspace is refused by custody all the same.
        check(d.ok("POST", "/reset_unit")["phase"] == "ready", "reset")
        made = d.attack("mknod", dir="/workspace")
        visible = [k for k, r in made.items() if r.get("ok") and r.get("visible")]
        A.note("device nodes: %s" % made)
        check(not any(made[k].get("ok") for k in ("chr-null", "chr-mem", "blk-vda")),
              "a real device node was made: %s" % made)
        v = end_while_probing(d)
        if visible:
            check(v["verdict"] == "agent_misbehavior" and "device" in (v["reason"] or ""),
                  "a visible device node is refused: %s" % v)
        else:
            check(v["verdict"] == "graded", "nothing planted, graded: %s" % v)
        # Not bricked: a clean episode afterwards is graded.
        check(d.ok("POST", "/reset_unit")["phase"] == "ready", "reset after the junk")
        v = end_while_probing(d)
        check(v["verdict"] == "graded", "a clean episode is graded: %s" % v)
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        d.kill()


def case_blame_follows_the_owner(run):
    moves = ("mkfifo", {"path": "/workspace/harness-fifo"}, "write",
             {"path": "/workspace/harness.done", "data": "1"})
    d = A.Daemon(run, manifest(run, moves), args=["--no-initial-episode"])
    try:
        check(d.ok("POST", "/reset_unit")["phase"] == "ready", "reset")
        A.poll(lambda: A.read(d.workspace("harness.done")), "the harness's FIFO")
        v = end_while_probing(d)
        check(v["verdict"] == "agent_misbehavior", "verdict: %s" % v)
        check((v["blame"] or {}).get("subtree") == "zones/agent/harness",
              "blamed on the harness: %s" % v)
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        d.kill()


def case_socket_dir_and_tmp(run):
    d = A.Daemon(run, manifest(run), args=["--no-initial-episode"])
    try:
        for i in range(3):
            check(d.ok("POST", "/reset_unit")["phase"] == "ready", "reset %d" % i)
            for where in ("/run/openenvd", "/tmp"):
                r = d.attack("deep_tree", dir=where, depth=20000, timeout=120)
                check(r["made"] > 0, "a tree in %s: %s" % (where, r))
                r = d.attack("fill", dir=where, timeout=120)
                check(r.get("errno") == "ENOSPC", "%s is bounded: %s" % (where, r))
                check(r["written"] < (600 << 20), "%s took %d bytes" % (where, r["written"]))
            d.ok("POST", "/step", {"action": {"message": "x"}})
        v = end_while_probing(d)
        check(v["verdict"] in ("graded", "agent_misbehavior"), "an end: %s" % v)
        check(d.ok("POST", "/reset_unit")["phase"] == "ready", "not bricked")
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        d.kill()


CASES = [
    ("FIFO, 10 GiB sparse file, 20,000-deep tree, 12,000 files, socket, symlink, devices in "
     "/workspace: agent_misbehavior with the reason, no stall, unit not bricked",
     case_workspace),
    ("the blame names the container that owns the refused entry", case_blame_follows_the_owner),
    ("20,000-deep trees and fills in /run/openenvd and /tmp: bounded, every reset works",
     case_socket_dir_and_tmp),
]

if __name__ == "__main__":
    sys.exit(A.main(CASES))
