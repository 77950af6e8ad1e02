#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Measures one unit's footprint: the numbers docs/SCALE.md sizes the pods from.

Runs the example unit (examples/echo, installed at /opt/openenv-echo as in
scripts/demo.sh) isolated on this host, as root, and reads:

- the daemon's own RSS (VmRSS, VmHWM of /proc/<pid>/status);
- the memory of its whole cgroup subtree (openenvd-<pid>: the daemon's
  control/ and every zone): what a pod's memory cgroup would be charged,
  v2 memory.current / memory.stat, or on a v1/hybrid host the memory
  hierarchy's usage_in_bytes and memory.stat (total_rss, total_shmem: the
  part that cannot be reclaimed; tmpfs layers are shmem);
- the size of the files its processes map (what a fresh node's page cache
  charges to the pod);
- the CPU time of the daemon and everything it reaped (wait4 on exit), for
  a unit that only starts and rests, and for one that plays N episodes;
- how long SIGTERM takes to exit 0, at rest, in an episode and in grading.

Phases, maxima over N episodes played back to back (POST /reset_unit, the
env's reset and two steps over /ws, then `done` and GET /verdict until
graded): ready, in an episode, during grading (sampled every 10 ms from the
`done` step until the verdict). At rest: ready, standby episode provisioned.
Prints one JSON document.

  /usr/bin/python3 deploy/kubernetes/measure-footprint.py BUILD_DIR [--episodes N]
"""
import argparse
import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import websockets

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
UNIT_DIR = "/opt/openenv-echo"


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def status_kb(pid, key):
    text = read("/proc/%d/status" % pid) or ""
    for line in text.splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


class Subtree:
    """The daemon's cgroup subtree in the memory hierarchy (v2 or v1)."""

    def __init__(self, pid):
        self.v1 = None
        for line in (read("/proc/%d/cgroup" % pid) or "").splitlines():
            num, ctrls, path = line.split(":", 2)
            if "memory" in ctrls.split(","):
                self.v1 = True
                self.path = "/sys/fs/cgroup/memory" + path
            elif num == "0" and self.v1 is None:
                self.path = "/sys/fs/cgroup" + path
        # The daemon moved itself into <subtree>/control.
        if self.path.endswith("/control"):
            self.path = os.path.dirname(self.path)

    def stat(self, sub=""):
        d = os.path.join(self.path, sub)
        text = read(os.path.join(d, "memory.stat"))
        if text is None:
            return None
        st = dict((k, int(v)) for k, v in (l.split() for l in text.splitlines()))
        if self.v1:
            return {"usage": int(read(os.path.join(d, "memory.usage_in_bytes"))),
                    "anon": st.get("total_rss", 0), "shmem": st.get("total_shmem", 0),
                    "file": st.get("total_cache", 0) - st.get("total_shmem", 0),
                    "peak": int(read(os.path.join(d, "memory.max_usage_in_bytes")))}
        peak = read(os.path.join(d, "memory.peak"))
        return {"usage": int(read(os.path.join(d, "memory.current"))),
                "anon": st.get("anon", 0), "shmem": st.get("shmem", 0),
                "file": st.get("file", 0) - st.get("shmem", 0),
                "peak": int(peak) if peak else None}

    def pids(self):
        out = []
        for root, _dirs, files in os.walk(self.path):
            if "cgroup.procs" in files:
                out += [int(p) for p in (read(os.path.join(root, "cgroup.procs")) or "").split()]
        return out


def mapped_files(pids):
    """Bytes of the distinct files the processes map (python, its modules'
    shared objects, libc...): what a fresh node's page cache would charge to
    the pod on first touch. This host's page cache already holds them, charged
    to whoever read them first, so the cgroup's own file count stays small."""
    seen = {}
    for pid in pids:
        for line in (read("/proc/%d/maps" % pid) or "").splitlines():
            parts = line.split(None, 5)
            if len(parts) == 6 and parts[5].startswith("/"):
                path = "/proc/%d/root%s" % (pid, parts[5])
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                seen[(st.st_dev, st.st_ino)] = st.st_size
    return sum(seen.values())


class Unit:
    def __init__(self, build, work, port, model_port):
        self.port, self.token, self.work = port, "measure-%d" % os.getpid(), work
        self.base = "http://127.0.0.1:%d" % port
        with open(os.path.join(work, "token"), "w") as f:
            f.write(self.token + "\n")
        with open(os.path.join(work, "key"), "w") as f:
            f.write("sk-measure-real\n")
        self.log = open(os.path.join(work, "daemon.log"), "w")
        self.proc = subprocess.Popen(
            [os.path.join(build, "src/daemon/openenvd"), "--manifest", UNIT_DIR + "/openenv.yaml",
             "--state", os.path.join(work, "state"), "--port", str(port), "--listen", "127.0.0.1",
             "--token-file", os.path.join(work, "token"), "--require-isolation",
             "--model-url", "127.0.0.1:%d" % model_port,
             "--model-key-file", os.path.join(work, "key")],
            stdout=subprocess.PIPE, stderr=self.log, text=True)
        self.ready = threading.Event()
        threading.Thread(target=self._watch, daemon=True).start()
        if not self.ready.wait(60):
            raise SystemExit("openenvd did not become ready: see %s/daemon.log" % work)
        self.cg = Subtree(self.proc.pid)

    def _watch(self):
        for line in self.proc.stdout:
            if "openenvd ready" in line:
                self.ready.set()

    def call(self, method, path):
        req = urllib.request.Request(self.base + path, method=method,
                                     headers={"Authorization": "Bearer " + self.token},
                                     data=b"" if method == "POST" else None)
        with urllib.request.urlopen(req, timeout=120) as r:
            return json.loads(r.read())

    def sample(self):
        s = {"daemon_rss_kb": status_kb(self.proc.pid, "VmRSS"),
             "daemon_hwm_kb": status_kb(self.proc.pid, "VmHWM"),
             "subtree": self.cg.stat(), "processes": len(self.cg.pids()),
             "mapped_files": mapped_files(self.cg.pids())}
        for z in ("control", "zones/agent", "zones/services", "zones/observers"):
            st = self.cg.stat(z)
            if st:
                s[z] = st["usage"]
        return s

    def stop(self):
        """SIGTERM, then wait4(): (seconds to exit 0, CPU seconds of the daemon
        and of every process it reaped: the shims reap their principals)."""
        t0 = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        _pid, status, ru = os.wait4(self.proc.pid, 0)
        took = time.monotonic() - t0
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        self.log.close()
        if self.proc.returncode != 0:
            raise SystemExit("openenvd exited %d on SIGTERM" % self.proc.returncode)
        return took, ru.ru_utime + ru.ru_stime


def peak(samples, key):
    return max(s["subtree"][key] for s in samples)


async def play(unit, steps, done):
    """One episode over /ws: the env's reset, `steps` steps, then `done`."""
    uri = "ws://127.0.0.1:%d/ws" % unit.port
    hdr = {"Authorization": "Bearer " + unit.token}
    async with websockets.connect(uri, extra_headers=hdr) as ws:
        await ws.send(json.dumps({"type": "reset"}))
        await ws.recv()
        for i in range(steps):
            await ws.send(json.dumps({"type": "step", "action": {"message": "step %d" % i}}))
            await ws.recv()
        if done:
            await ws.send(json.dumps({"type": "step", "action": {"message": "done"}}))
            await ws.recv()


def episodes(u, count, out):
    """count episodes back to back: /reset_unit, 2 steps, done, verdict."""
    ready, running, grading = [], [], []
    for _ in range(count):
        u.call("POST", "/reset_unit")
        ready.append(u.sample())
        # The echo env ends an episode at its third step (ECHO_MAX_STEPS).
        asyncio.run(play(u, 2, False))
        running.append(u.sample())
        stop = threading.Event()

        def sampler():
            while not stop.is_set():
                grading.append(u.sample())
                time.sleep(0.01)
        th = threading.Thread(target=sampler)
        th.start()
        asyncio.run(play(u, 0, True))
        t0 = time.monotonic()
        while u.call("GET", "/verdict")["verdict"] is None and time.monotonic() - t0 < 60:
            time.sleep(0.01)
        stop.set()
        th.join()
        verdict = u.call("GET", "/verdict")["verdict"]
        if verdict != "graded":
            raise SystemExit("episode not graded: %s" % verdict)
    for name, ss in (("ready", ready), ("episode", running), ("grading", grading)):
        out[name] = {"samples": len(ss), "max_usage": peak(ss, "usage"),
                     "max_anon": peak(ss, "anon"), "max_shmem": peak(ss, "shmem"),
                     "max_file": peak(ss, "file"),
                     "max_daemon_rss_kb": max(s["daemon_rss_kb"] for s in ss),
                     "max_processes": max(s["processes"] for s in ss),
                     "max_mapped_files": max(s["mapped_files"] for s in ss),
                     "last": ss[-1]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--episodes", type=int, default=20)
    ap.add_argument("--port", type=int, default=18300)
    args = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("needs root (the unit runs isolated)")

    work = tempfile.mkdtemp(prefix="openenvd-measure.")
    os.chmod(work, 0o711)
    installed = False
    stub = None
    units = []
    try:
        if not os.path.exists(UNIT_DIR):
            shutil.copytree(os.path.join(REPO, "examples/echo"), UNIT_DIR, symlinks=True)
            installed = True
        model_port = args.port + 1
        with open(os.path.join(work, "stub-key"), "w") as f:
            f.write("sk-measure-real\n")
        stub = subprocess.Popen([sys.executable, os.path.join(REPO, "examples/echo/model_stub.py"),
                                 str(model_port), os.path.join(work, "stub-key")],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out = {"host": {"kernel": os.uname().release}, "stop_s": {}}

        # A: start, rest, SIGTERM: the baseline CPU of a unit that serves nothing.
        u = Unit(args.build, work, args.port, model_port)
        units.append(u)
        out["host"]["cgroup"] = "v1 memory hierarchy" if u.cg.v1 else "v2"
        time.sleep(3)  # the standby episode provisions in the background
        out["rest"] = u.sample()
        out["stop_s"]["rest"], base_cpu = u.stop()
        out["rest"]["cpu_s_start_to_exit"] = round(base_cpu, 3)
        units.pop()

        # B: the same plus N episodes back to back.
        u = Unit(args.build, work, args.port, model_port)
        units.append(u)
        time.sleep(3)
        t0 = time.monotonic()
        episodes(u, args.episodes, out)
        wall = time.monotonic() - t0
        out["after"] = u.sample()
        stop_s, cpu = u.stop()
        units.pop()
        out["per_episode"] = {"episodes": args.episodes, "wall_s": round(wall / args.episodes, 3),
                              "cpu_s": round((cpu - base_cpu) / args.episodes, 3)}

        # C, D: SIGTERM in an episode and in grading.
        for when in ("episode", "grading"):
            u = Unit(args.build, work, args.port, model_port)
            units.append(u)
            u.call("POST", "/reset_unit")
            asyncio.run(play(u, 2 if when == "episode" else 0, when == "grading"))
            out["stop_s"][when], _ = u.stop()
            units.pop()
        out["stop_s"] = {k: round(v, 3) for k, v in out["stop_s"].items()}
        print(json.dumps(out, indent=1))
    finally:
        for u in units:
            if u.proc.poll() is None:
                u.proc.kill()
                u.proc.wait()
        if stub:
            stub.kill()
            stub.wait()
        if installed:
            shutil.rmtree(UNIT_DIR, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
