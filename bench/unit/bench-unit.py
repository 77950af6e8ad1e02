# SPDX-License-Identifier: LGPL-2.1-or-later
"""Client side of bench/unit/run.sh: drives one or more openenvd daemons
through reset -> step(done) -> verdict, REPS times, alternating between the
daemons every iteration (so load from other processes on a shared machine
hits every runtime alike), and prints medians/p90 as JSON lines.

    bench-unit.py [--idle S] REPS TOKEN NAME=PORT [NAME=PORT...]

--idle S: the client waits S seconds before each reset (a unit with a
standby episode has built it by then; without, the wait changes nothing).

Per iteration and daemon, client-side, CLOCK_MONOTONIC (time.perf_counter):
  reset   POST /reset_unit sent -> its 200 received (the unit is ready)
  verdict the POST /step response that carried "done": true received ->
          the answer to GET /verdict?wait=1 received, which the daemon
          gives once the verdict is final (a client polling /verdict
          instead would take the daemon's loop and a core from the
          grading it waits for). It asks again only if that answer has
          no verdict (max_verdict_polls says how often: 1 when none).
"""
import http.client
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from benchlib import pct  # noqa: E402


class Daemon:
    def __init__(self, name, port, token):
        self.name, self.port = name, port
        self.auth = {"Authorization": "Bearer " + token}
        self.ctl = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.reset, self.verdict, self.polls = [], [], []

    def call(self, conn, method, path, body=None, retry=True):
        headers = dict(self.auth)
        if body is not None:
            headers["Content-Type"] = "application/json"
        try:
            conn.request(method, path, body=body, headers=headers)
            r = conn.getresponse()
            data = r.read()
        except (ConnectionError, http.client.HTTPException):
            if not retry:
                raise
            conn.close()  # the daemon closed an idle keep-alive: reconnect once
            return self.call(conn, method, path, body, retry=False)
        if r.status != 200:
            raise SystemExit("%s: %s %s -> %d %s" % (self.name, method, path, r.status, data[:200]))
        return json.loads(data)

    def iteration(self, idle=0.0):
        time.sleep(idle)
        t0 = time.perf_counter()
        info = self.call(self.ctl, "POST", "/reset_unit", body=b"")
        t1 = time.perf_counter()
        if info.get("phase") != "ready":
            raise SystemExit("%s: reset ended in phase %s" % (self.name, info.get("phase")))
        # A fresh connection for env traffic: the relay's upstream is the
        # episode's env server, which the reset replaced.
        env = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        step = self.call(env, "POST", "/step", body=b'{"action":{"message":"hello"}}')
        t2 = time.perf_counter()
        env.close()
        if step.get("done") is not True:
            raise SystemExit("%s: /step did not say done" % self.name)
        polls = 0
        while True:
            polls += 1
            v = self.call(self.ctl, "GET", "/verdict?wait=1")
            if v.get("verdict"):
                break
            if time.perf_counter() - t2 > 60:
                raise SystemExit("%s: no verdict after 60 s" % self.name)
        t3 = time.perf_counter()
        if v["verdict"] != "graded":
            raise SystemExit("%s: verdict %s: %s" % (self.name, v["verdict"], json.dumps(v)))
        self.reset.append((t1 - t0) * 1e3)
        self.verdict.append((t3 - t2) * 1e3)
        self.polls.append(polls)


def main():
    args = sys.argv[1:]
    idle = 0.0
    if args[0] == "--idle":
        idle = float(args[1])
        args = args[2:]
    reps, token = int(args[0]), args[1]
    daemons = []
    for arg in args[2:]:
        name, port = arg.split("=")
        daemons.append(Daemon(name, int(port), token))
    for d in daemons:  # warm-up: first reset copies assets, pages in binaries
        d.iteration()
        d.reset.clear(), d.verdict.clear(), d.polls.clear()
    for _ in range(reps):
        for d in daemons:
            d.iteration(idle)
    for d in daemons:
        print(json.dumps({
            "name": d.name, "n": len(d.reset),
            "reset_ms": {"median": statistics.median(d.reset), "p90": pct(d.reset, 0.9),
                         "min": min(d.reset)},
            "done_to_verdict_ms": {"median": statistics.median(d.verdict),
                                   "p90": pct(d.verdict, 0.9), "min": min(d.verdict)},
            "max_verdict_polls": max(d.polls),
        }))


if __name__ == "__main__":
    main()
