#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Attack: flood stdout and stderr (1 GiB each) from every zone at once.

A 1 GiB write to stdout used to grow the daemon's log by 1 GiB. Here the env
floods stdout and stderr from two threads while it serves, the harness
floods stdout and a hidden service stderr, each asking for 1 GiB; meanwhile
the test keeps calling /healthz (no token) and /info (token), then ends the
episode and reads the captured output back through GET /logs.

Must not happen: the daemon's own log growing by more than a few lines; its
memory growing with the flood; a /healthz or /info not answered while the
flood runs; a container's captured output beyond its cap or without the
marker saying so; anything left behind. (The flooders are slowed by their
own full pipes, not the daemon: how far each got is printed, not asserted,
beyond proving that it wrote well past the cap.)
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attacklib as A  # noqa: E402
from attacklib import check  # noqa: E402

GIB = 1 << 30
CAP = 256 * 1024  # MEMBER_LOG_MAX_BYTES (src/base/limits.h)
# What a container's output may add to the daemon's log per episode: its
# first MEMBER_LOG_FORWARD_BYTES (4 KiB), each byte escaped to at most 4, at
# most 4096 / MEMBER_LOG_FORWARD_LINE_COST (64) lines of ~100 bytes of prefix
# and fields each, and the line saying the rest is capped.
FORWARD_BOUND = 4 * 4096 + (4096 // 64) * 100 + 200
MARKER = "[openenvd: output capped at"
FLOOD_SECONDS = 5


def manifest(run):
    return run.manifest(A.manifest_head("log-flood") + A.zones(
        A.argv("env", "8000"), A.argv("harness", "flood", {"fd": 1, "total": GIB, "wait": True}),
        A.argv("service", "8080", "flood", {"fd": 2, "total": GIB}), expose=False))


def written(pid):
    """Bytes a process wrote so far (its /proc/PID/io), 0 once gone."""
    for line in (A.read("/proc/%d/io" % pid) or "").splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    return 0


def case_flood_everything(run):
    # Under ASan, freed memory sits in its quarantine (256 MB by default) and
    # every answered probe would look like growth: keep it small here.
    asan = os.environ.get("ASAN_OPTIONS", "")
    d = A.Daemon(run, manifest(run), env={"ASAN_OPTIONS": (asan + ":" if asan else "") +
                                                          "quarantine_size_mb=1"})
    try:
        log0, rss0 = os.path.getsize(d.log), d.rss_kb()
        r = d.attack("flood", fd=1, total=GIB)
        check("written" in r, "env flood started: %s" % r)
        d.attack("flood", fd=2, total=GIB)
        pids = {c: d.container_pids(c) for c in ("env", "harness", "svc")}
        answered = failed = 0
        rss_max = rss0
        end = time.monotonic() + FLOOD_SECONDS
        while time.monotonic() < end:
            for ok in (d.healthz(), d.request("GET", "/info")[0] == 200):
                if ok:
                    answered += 1
                else:
                    failed += 1
            rss_max = max(rss_max, d.rss_kb())
        out = {c: sum(written(p) for p in ps) for c, ps in pids.items()}
        env = (d.attack("flood_progress", fd=1)["written"],
               d.attack("flood_progress", fd=2)["written"])
        A.note("flood for %ds: env wrote %d + %d bytes, containers %s; %d answers; "
               "daemon RSS %d -> max %d KiB" % (FLOOD_SECONDS, env[0], env[1], out, answered,
                                                rss0, rss_max))
        check(failed == 0, "%d /healthz or /info calls went unanswered during the flood"
              % failed)
        check(answered >= 10, "only %d answers during the flood" % answered)
        check(min(env) > 4 * CAP, "the env flooded past its cap: %s" % (env,))
        check(min(out.values()) > 4 * CAP, "every container flooded past its cap: %s" % out)
        grown = os.path.getsize(d.log) - log0
        # Bounded by what the flooding containers' first lines may add
        # (--container-output log), not by what they wrote.
        check(grown < 3 * FORWARD_BOUND + 16 * 1024, "the daemon's log grew by %d bytes" % grown)
        check(rss_max - rss0 < 32 * 1024, "the daemon's memory grew by %d KiB" % (rss_max - rss0))
        eid = d.info()["episode_id"]
        v = d.ok("POST", "/end_episode")
        check(v["verdict"] in ("graded", "agent_misbehavior"), "an end: %s" % v)
        for c in ("env", "harness", "svc"):
            text = d.logs(c, eid)
            check(MARKER in text, "%s's output says it was capped: %r" % (c, text[-200:]))
            check(len(text.encode()) <= CAP + 256, "%s's output is %d bytes" % (c, len(text)))
        check(d.ok("POST", "/reset_unit")["phase"] == "ready", "the next episode")
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        d.kill()


CASES = [
    ("1 GiB floods on stdout and stderr of env, harness and service: daemon log and memory "
     "flat, loop answers, output capped with a marker", case_flood_everything),
]

if __name__ == "__main__":
    sys.exit(A.main(CASES))
