# SPDX-License-Identifier: LGPL-2.1-or-later
"""Client side of bench/coding/run.sh: the coding example (examples/coding)
driven by OpenEnv's stock client (CodingEnv, one WebSocket per daemon for
all its episodes), and its three grading observers run directly on the
host, in one run (bench/README.md, bench/coding).

    bench-coding.py REPS TOKEN standby=PORT cold=PORT --install DIR --host DIR
                    [--idle S] [--block N] [--log NAME=FILE ...]

--install DIR: the unit as install.sh laid it out (the daemons' manifest is
DIR/openenv.yaml); the host runs DIR/grading/openenvd_grading.py on
DIR/tests/{inputs,answers} with the arguments of the manifest.
--host DIR: an empty directory for the host runs.

1. Grading, REPS iterations, each: the three observer commands on the host,
   then one episode on each daemon (standby, cold). Before each episode the
   client waits until the daemon is at rest (its standby built, if it has
   one) and --idle S more (0.5). An episode: env.reset(), env.step(
   CodingAction(code=HONEST, submit=True)) (its answer carries done=true),
   then GET /verdict?wait=1 (orchestrator token), which the daemon answers
   once the verdict is final. Client side, time.perf_counter():
     done -> verdict   the step's answer received -> the verdict's received
     observers (host)  stage + run + score, each a fresh process, timed by
                       this process around posix_spawn and waitpid (their
                       own start, imports, work and exit; no container, no
                       daemon)
   and, for where Python's start goes, `python3 -c pass`, `python3 -I -S -c
   pass` (no site: what start-up costs without it) and `python3
   openenvd_grading.py --help` (start and the module's imports).
2. Episode loop: blocks of --block N back-to-back episodes (5), standby and
   cold alternating, REPS episodes per daemon, each block started at rest:
   reset -> step(submit) -> verdict per episode, and episodes/s = episodes
   / the blocks' wall time.

Prints one JSON object with every sample (run.sh reports on it). With
--log NAME=FILE (the daemon's --log-format json --log-level debug stderr),
the grading's steps of each graded episode of phase 1 are read from the log.
"""
import argparse
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from datetime import datetime

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from benchlib import pct  # noqa: E402

HONEST = "import sys\nprint(sum(int(x) for x in sys.stdin.read().split()))\n"
PY = "/usr/bin/python3"


class Daemon:
    def __init__(self, name, port, token, env_cls):
        self.name, self.port, self.token = name, port, token
        self.ctl = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        self.env = env_cls(base_url="http://openenv:%s@127.0.0.1:%d" % (token, port),
                           connect_timeout_s=60, message_timeout_s=300).sync()
        self.env.__enter__()
        self.last_episode = None

    def call(self, method, path, retry=True):
        try:
            self.ctl.request(method, path, headers={"Authorization": "Bearer " + self.token})
            r = self.ctl.getresponse()
            data = r.read()
        except (ConnectionError, http.client.HTTPException):
            if not retry:
                raise
            self.ctl.close()  # an idle keep-alive closed by the daemon: once more
            return self.call(method, path, retry=False)
        if r.status != 200:
            raise SystemExit("%s: %s %s -> %d %s" % (self.name, method, path, r.status, data[:300]))
        return json.loads(data)

    def settle(self, idle):
        """Until the daemon is at rest (its standby built, if any), then idle s."""
        t0 = time.perf_counter()
        while self.call("GET", "/info").get("standby", {}).get("state") not in (
                "ready", "disabled"):
            if time.perf_counter() - t0 > 300:
                raise SystemExit("%s: no standby after 300 s" % self.name)
            time.sleep(0.05)
        time.sleep(idle)

    def episode(self, action):
        """reset -> step(submit) -> verdict: the times (s) and the verdict."""
        t0 = time.perf_counter()
        r = self.env.reset()
        t1 = time.perf_counter()
        if r.done:
            raise SystemExit("%s: reset answered done" % self.name)
        r = self.env.step(action)
        t2 = time.perf_counter()
        if r.done is not True:
            raise SystemExit("%s: the submitting step did not say done" % self.name)
        polls = 0
        while True:
            polls += 1
            v = self.call("GET", "/verdict?wait=1")
            if v.get("verdict") and v.get("episode_id") != self.last_episode:
                break
            if time.perf_counter() - t2 > 120:
                raise SystemExit("%s: no verdict after 120 s" % self.name)
        t3 = time.perf_counter()
        score = ((v.get("observers") or {}).get("verdict") or {}).get("score")
        if v["verdict"] != "graded" or score != 1.0:
            raise SystemExit("%s: verdict %s, score %r: %s" % (self.name, v["verdict"], score,
                                                              json.dumps(v)[:2000]))
        self.last_episode = v["episode_id"]
        return {"episode_id": v["episode_id"], "reset": t1 - t0, "step": t2 - t1,
                "done_to_verdict": t3 - t2, "episode": t3 - t0, "polls": polls}

    def close(self):
        try:
            self.env.__exit__(None, None, None)
        except Exception:  # noqa: BLE001 - the daemons are stopped next anyway
            pass
        self.ctl.close()


class Host:
    """The manifest's three observer commands, run directly on the host."""

    def __init__(self, install, work):
        self.grading = os.path.join(install, "grading", "openenvd_grading.py")
        self.inputs = os.path.join(install, "tests", "inputs")
        self.answers = os.path.join(install, "tests", "answers")
        self.work = work
        os.makedirs(os.path.join(work, "workspace"), exist_ok=True)
        self.solution = os.path.join(work, "workspace", "solution.py")
        with open(self.solution, "w") as f:
            f.write(HONEST)
        self.n = 0

    def _timed(self, argv, env, check=True):
        """argv's wall time, started with posix_spawn (a vfork in glibc, as the
        daemon's launcher and shim start a program) and waited for."""
        null = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
        t0 = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, env, file_actions=null)
        _, status = os.waitpid(pid, 0)
        t = time.perf_counter() - t0
        if check and os.waitstatus_to_exitcode(status) != 0:
            p = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT)
            raise SystemExit("host: %s -> %d (again: %d): %s" % (
                argv, os.waitstatus_to_exitcode(status), p.returncode, p.stdout[-2000:]))
        return t

    def run(self):
        """One grading on the host: {stage, run, score: s}, plus the start floors."""
        self.n += 1
        d = os.path.join(self.work, str(self.n))
        out = {k: os.path.join(d, k, "out") for k in ("stage", "runner", "verdict")}
        for k in out:
            os.makedirs(out[k])
            os.makedirs(os.path.join(d, k, "tmp"))

        def env(k):  # what the daemon sets (src/unit/unit-plan.c), with host paths
            return {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                    "HOME": os.path.join(d, k, "tmp"), "TMPDIR": os.path.join(d, k, "tmp"),
                    "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1",
                    "OPENENVD_OUT": out[k]}
        cases = os.path.join(out["stage"], "cases")
        results = os.path.join(out["runner"], "results.json")
        verdict = os.path.join(out["verdict"], "verdict.json")
        t = {
            "stage": self._timed([PY, self.grading, "stage", "--from", self.inputs,
                                  "--out", cases], env("stage")),
            "run": self._timed([PY, self.grading, "run", "--inputs", cases, "--out", results,
                                "--timeout", "5", "--output-limit", "65536", "--memory-mb", "256",
                                "--", PY, self.solution], env("runner")),
            "score": self._timed([PY, self.grading, "score", "--answers", self.answers,
                                  "--results", results, "--out", verdict], env("verdict")),
        }
        with open(verdict) as f:
            if json.load(f).get("score") != 1.0:
                raise SystemExit("host: the honest program did not score 1.0")
        t["observers"] = t["stage"] + t["run"] + t["score"]
        t["python_start"] = self._timed([PY, "-c", "pass"], env("stage"))
        t["python_start_nosite"] = self._timed([PY, "-I", "-S", "-c", "pass"], env("stage"))
        t["grading_import"] = self._timed([PY, self.grading, "--help"], env("stage"))
        shutil.rmtree(d)
        return t


# --- the daemon's log: the grading's steps of one episode ---------------------------

STEPS = [  # (name, the entry that ends the step), each from the previous one's end
    ("agent zone empty", "sealing -> sealed"),
    ("stage released", "container stage released"),
    ("runner released", "container runner released"),
    ("verdict released", "container verdict released"),
    ("graded (closed)", "grading -> closed"),
]


def _log_entries(path):
    """(time, entry) of every JSON entry of a log."""
    with open(path, errors="replace") as f:
        for line in f:
            if not line.startswith("{"):
                continue
            try:
                e = json.loads(line)
            except ValueError:
                continue
            yield datetime.fromisoformat(e["ts"].replace("Z", "+00:00")).timestamp(), e


def log_steps(path, episode_ids):
    """{episode id: {step: seconds since the previous}} from a JSON log: the
    grading's steps (STEPS), and for an episode that was a standby, its
    reset: exposed -> the next standby's containers started (the daemon's
    loop) -> the env server accepted the client's /ws."""
    want = set(episode_ids)
    marks = {}
    last_start = None  # the last container start of any episode
    for t, e in _log_entries(path):
        eid = e.get("episode_id")
        msg = e.get("msg", "")
        if "started as pid" in msg or "made ahead of its turn" in msg:
            last_start = (t, eid)
        if eid not in want:
            continue
        m = marks.setdefault(eid, {})
        if "standby -> ready (standby)" in msg:
            m.setdefault("exposed", t)
        if "/ws\" [accepted]" in msg and "exposed" in m and "ws accepted" not in m:
            m["ws accepted"] = t
            if last_start and last_start[1] != eid and last_start[0] >= m["exposed"]:
                m["next standby started"] = last_start[0]
        if "running -> sealing" in msg:
            m.setdefault("done", t)
        for name, needle in STEPS:
            if needle in msg:
                m.setdefault(name, t)
    out = {}
    for eid, m in marks.items():
        if "done" not in m or any(name not in m for name, _ in STEPS):
            continue
        prev, row = m["done"], {}
        for name, _ in STEPS:
            row[name] = m[name] - prev
            prev = m[name]
        if "next standby started" in m:
            row["reset"] = {"next standby started": m["next standby started"] - m["exposed"],
                            "ws accepted": m["ws accepted"] - m["next standby started"]}
        out[eid] = row
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("reps", type=int)
    ap.add_argument("token")
    ap.add_argument("daemons", nargs=2, help="standby=PORT cold=PORT")
    ap.add_argument("--install", required=True)
    ap.add_argument("--host", required=True)
    ap.add_argument("--idle", type=float, default=0.5)
    ap.add_argument("--block", type=int, default=5)
    ap.add_argument("--log", action="append", default=[])
    a = ap.parse_args()

    from coding_env import CodingAction, CodingEnv  # the stock client (PYTHONPATH)
    action = CodingAction(code=HONEST, submit=True)
    daemons = {}
    for arg in a.daemons:
        name, port = arg.split("=")
        daemons[name] = Daemon(name, int(port), a.token, CodingEnv)
    sb, cold = daemons["standby"], daemons["cold"]
    host = Host(a.install, a.host)

    # Warm-up: each daemon's first episode (it joins the initial one), the
    # host's first run (page cache).
    host.run()
    for d in (sb, cold):
        d.settle(0.0)
        d.episode(action)

    grading = {"host": [], "standby": [], "cold": []}
    for _ in range(a.reps):
        grading["host"].append(host.run())
        for d in (sb, cold):
            d.settle(a.idle)
            grading[d.name].append(d.episode(action))

    loop = {"standby": {"episodes": [], "wall": 0.0}, "cold": {"episodes": [], "wall": 0.0}}
    left = {"standby": a.reps, "cold": a.reps}
    while any(left.values()):
        for d in (sb, cold):
            n = min(a.block, left[d.name])
            if not n:
                continue
            d.settle(0.0)
            t0 = time.perf_counter()
            eps = [d.episode(action) for _ in range(n)]
            loop[d.name]["wall"] += time.perf_counter() - t0
            loop[d.name]["episodes"] += eps
            left[d.name] -= n

    for d in daemons.values():
        d.close()
    logs = {}
    for arg in a.log:
        name, path = arg.split("=", 1)
        logs[name] = log_steps(path, [e["episode_id"] for e in grading[name]])
    json.dump({"reps": a.reps, "idle": a.idle, "block": a.block, "grading": grading,
               "loop": loop, "log_steps": logs, "load": os.getloadavg()}, sys.stdout)
    print()


# --- the report ----------------------------------------------------------------------

def report(path):
    r = json.load(open(path))
    g, loop = r["grading"], r["loop"]
    host = g["host"]
    med = statistics.median
    ms = lambda v: [x * 1e3 for x in v]

    def row(label, v, extra=""):
        print("%-58s %9.1f %9.1f  %s" % (label, med(v), pct(v, 0.9), extra))
    print("bench/coding: examples/coding, OpenEnv's stock client (CodingEnv over /ws); "
          "%d graded episodes per daemon, alternating, %.1f s idle at rest before each; "
          "load after %.2f %.2f %.2f" % (r["reps"], r["idle"], *r["load"]))
    print("%-58s %9s %9s" % ("ms", "median", "p90"))
    obs = ms([h["observers"] for h in host])
    for name in ("standby", "cold"):
        d2v = ms([e["done_to_verdict"] for e in g[name]])
        what = "standby on (the next standby building)" if name == "standby" else "--no-standby"
        row("done -> verdict, %s" % what, d2v,
            "(reset median %.1f, step median %.1f)" % (med(ms([e["reset"] for e in g[name]])),
                                                     med(ms([e["step"] for e in g[name]]))))
    row("observers' own run time, host (stage + run + score)", obs)
    for k in ("stage", "run", "score"):
        row("  %s" % k, ms([h[k] for h in host]))
    row("  python3 -c pass (a grading starts 7: 3 observers, 4 cases)",
        ms([h["python_start"] for h in host]))
    row("  python3 -I -S -c pass (no site)", ms([h["python_start_nosite"] for h in host]))
    row("  python3 openenvd_grading.py --help (start + imports)",
        ms([h["grading_import"] for h in host]))
    for name in ("standby", "cold"):
        d2v = ms([e["done_to_verdict"] for e in g[name]])
        diff = [a - b for a, b in zip(d2v, obs)]
        row("the daemon's share, %s (per-episode differences)" % name, diff,
            "difference of medians %.1f" % (med(d2v) - med(obs)))
    for name in ("standby", "cold"):
        steps = r["log_steps"].get(name)
        if not steps:
            continue
        print("where done -> verdict goes, %s (the daemon's JSON debug log, %d episodes; "
              "median, p90; minus the host's own median where an observer ran)" % (name, len(steps)))
        own = {"runner released": ("stage", med(ms([h["stage"] for h in host]))),
               "verdict released": ("run", med(ms([h["run"] for h in host]))),
               "graded (closed)": ("score", med(ms([h["score"] for h in host])))}
        total = []
        for step, _ in STEPS:
            v = ms([s[step] for s in steps.values()])
            extra = ""
            if step in own:
                k, o = own[step]
                extra = "%s's own %.1f: the daemon's %.1f" % (k, o, med(v) - o)
            row("  -> %s" % step, v, extra)
        total = ms([sum(s[k] for k, _ in STEPS) for s in steps.values()])
        row("  done seen -> graded, in the log", total)
        resets = [s["reset"] for s in steps.values() if "reset" in s]
        if resets:
            print("  the client's reset of a ready standby, in the log (%d episodes):" % len(resets))
            row("    exposed -> the next standby's containers started",
                ms([x["next standby started"] for x in resets]))
            row("    -> the env server accepted the client's /ws",
                ms([x["ws accepted"] for x in resets]))
    print("episode loop: back-to-back blocks of %d, standby and cold alternating" % r["block"])
    eps = {}
    for name in ("standby", "cold"):
        e = loop[name]["episodes"]
        eps[name] = len(e) / loop[name]["wall"]
        row("reset -> verdict per episode, %s" % name, ms([x["episode"] for x in e]),
            "reset median %.1f, done -> verdict median %.1f, %.2f episodes/s" % (
                med(ms([x["reset"] for x in e])), med(ms([x["done_to_verdict"] for x in e])),
                eps[name]))
    print("episodes/s, standby / cold: %.2fx" % (eps["standby"] / eps["cold"]))
    polls = max(e["polls"] for n in ("standby", "cold") for e in g[n] + loop[n]["episodes"])
    print("(max GET /verdict?wait=1 per episode: %d)" % polls)


if __name__ == "__main__":
    if sys.argv[1:2] == ["report"]:
        report(sys.argv[2])
    else:
        main()
