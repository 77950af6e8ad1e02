# SPDX-License-Identifier: LGPL-2.1-or-later
"""Client side of bench/openenv/run.sh: OpenEnv's real connect4_env under two
openenvd daemons (standby on, standby off) and started directly, side by
side in one run. Prints one table row per metric with its target and
met/MISSED (bench/README.md, "bench/openenv").

    bench-openenv.py REPS TOKEN standby=PORT cold=PORT ENV_DIR PYLIB

All times client side, time.perf_counter(); phases interleave the daemons
(and the direct env) so that load from other processes hits all alike.
"""
import http.client
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from benchlib import pct, free_port  # noqa: E402

STEP_OK = b'{"action": {"column": 3}}'
STEP_DONE = b'{"action": {"column": 7}}'  # off the board: done, reward -1


class Http:
    """One keep-alive connection; reconnects once when the peer closed it."""

    def __init__(self, port, token=None):
        self.port, self.conn = port, None
        self.headers = {"Authorization": "Bearer " + token} if token else {}

    def call(self, method, path, body=None, retry=True):
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        headers = dict(self.headers)
        if body is not None:
            headers["Content-Type"] = "application/json"
        try:
            self.conn.request(method, path, body=body, headers=headers)
            r = self.conn.getresponse()
            data = r.read()
        except (ConnectionError, http.client.HTTPException, socket.timeout):
            self.conn.close()
            self.conn = None
            if not retry:
                raise
            return self.call(method, path, body, retry=False)
        if r.status != 200:
            raise SystemExit("port %d: %s %s -> %d %s" % (self.port, method, path, r.status,
                                                          data[:300]))
        return json.loads(data) if data else {}

    def close(self):
        if self.conn:
            self.conn.close()
        self.conn = None


class Daemon:
    def __init__(self, name, port, token):
        self.name, self.port = name, port
        self.ctl = Http(port, token)
        self.token = token

    def settle(self, idle=1.0):
        """Until the standby episode (if any) is built, then idle seconds:
        a loaded machine can take longer than the idle second to build it."""
        t0 = time.perf_counter()
        while self.ctl.call("GET", "/info").get("standby", {}).get("state") not in (
                "ready", "disabled"):
            if time.perf_counter() - t0 > 300:
                raise SystemExit("%s: no standby after 300 s" % self.name)
            time.sleep(0.05)
        time.sleep(idle)

    def reset(self):
        t0 = time.perf_counter()
        info = self.ctl.call("POST", "/reset_unit", body=b"")
        t1 = time.perf_counter()
        if info.get("phase") != "ready":
            raise SystemExit("%s: reset ended in phase %s" % (self.name, info.get("phase")))
        return (t1 - t0) * 1e3

    def episode(self, steps, think=0.0):
        """Reset, steps valid moves (think seconds before each: the agent's
        own time), one move that ends it, then the verdict."""
        ms = self.reset()
        env = Http(self.port, self.token)  # the new episode's env server
        for _ in range(steps):
            time.sleep(think)
            if env.call("POST", "/step", body=STEP_OK).get("done"):
                raise SystemExit("%s: a valid move said done" % self.name)
        if env.call("POST", "/step", body=STEP_DONE).get("done") is not True:
            raise SystemExit("%s: the last move did not say done" % self.name)
        env.close()
        t0 = time.perf_counter()
        while not self.ctl.call("GET", "/verdict").get("verdict"):
            if time.perf_counter() - t0 > 60:
                raise SystemExit("%s: no verdict after 60 s" % self.name)
        return ms


class DirectEnv:
    """The same env server on the host, unisolated: the baseline."""

    def __init__(self, env_dir, pylib):
        self.env_dir, self.pylib, self.proc = env_dir, pylib, None

    def start(self):
        self.port = free_port()
        env = dict(os.environ, PYTHONPATH=self.env_dir + ":" + self.pylib,
                   ENABLE_WEB_INTERFACE="false", PYTHONDONTWRITEBYTECODE="1")
        t0 = time.perf_counter()
        self.proc = subprocess.Popen(
            ["/usr/bin/python3", "-m", "uvicorn", "server.app:app", "--host", "127.0.0.1",
             "--port", str(self.port)], cwd=self.env_dir, env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while True:
            try:
                c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                c.request("GET", "/health")
                if c.getresponse().status == 200:
                    c.close()
                    break
            except OSError:
                pass
            if self.proc.poll() is not None or time.perf_counter() - t0 > 60:
                raise SystemExit("direct env server did not start")
            time.sleep(0.002)
        return (time.perf_counter() - t0) * 1e3

    def stop(self):
        if self.proc:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait()
        self.proc = None


class HaproxyHop:
    """HAProxy (if installed) in front of the direct env server: what one
    established proxy hop costs a step here, beside the relay's."""

    def __init__(self, upstream_port):
        self.dir = tempfile.mkdtemp(prefix="bench-openenv-haproxy.")
        self.port, self.proc = free_port(), None
        cfg = os.path.join(self.dir, "haproxy.cfg")
        with open(cfg, "w") as f:
            f.write("global\n  nbthread 1\n"
                    "defaults\n  mode http\n  timeout connect 5s\n  timeout client 60s\n"
                    "  timeout server 60s\n  http-reuse always\n"
                    f"frontend fe\n  bind 127.0.0.1:{self.port}\n  default_backend be\n"
                    f"backend be\n  server env 127.0.0.1:{upstream_port}\n")
        self.proc = subprocess.Popen(["haproxy", "-db", "-f", cfg], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        for _ in range(500):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if self.proc.poll() is not None:
                    break
                time.sleep(0.01)
        self.stop()
        raise OSError("haproxy did not start")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def timed_steps(conn, n):
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        conn.call("POST", "/step", body=STEP_OK)
        out.append((time.perf_counter() - t0) * 1e6)
    return out


def row(label, value, unit, target="", method=""):
    print(f"{label:<52} {value:>12} {unit:<6} {target}")


def main():
    reps, token = int(sys.argv[1]), sys.argv[2]
    daemons = {}
    for arg in sys.argv[3:5]:
        name, port = arg.split("=")
        daemons[name] = Daemon(name, int(port), token)
    env_dir, pylib = sys.argv[5], sys.argv[6]
    sb, cold = daemons["standby"], daemons["cold"]
    direct = DirectEnv(env_dir, pylib)
    ok = lambda c: "met" if c else "MISSED"

    for d in (sb, cold):  # warm-up: the page cache, the first episode
        d.episode(0)

    # 1. POST /reset_unit -> ready after a second of idle, standby vs cold,
    # and the env server started directly (its own cold start).
    resets = {"standby": [], "cold": []}
    starts = []
    for i in range(reps):
        for d in (sb, cold):
            d.settle()
            resets[d.name].append(d.episode(0))
        if i < min(reps, 10):
            starts.append(direct.start())
            direct.stop()
    direct.start()
    d_conn = Http(direct.port)
    in_session = []
    for _ in range(200):
        t0 = time.perf_counter()
        d_conn.call("POST", "/reset", body=b"{}")
        in_session.append((time.perf_counter() - t0) * 1e3)

    # 2. Relay: POST /step through openenvd (relay, shim, container) vs the
    # env server reached directly; blocks of 100, interleaved. The cold
    # daemon's episode is live (no standby starting beside it).
    cold.settle(0.0)
    cold.reset()
    r_conn = Http(cold.port, token)
    hop = None
    if shutil.which("haproxy"):
        try:
            hop = HaproxyHop(direct.port)
        except OSError as e:
            print(f"# haproxy: unavailable ({e})")
    else:
        print("# haproxy: unavailable (not installed)")
    h_conn = Http(hop.port) if hop else None
    relayed, straight, hopped = [], [], []
    for _ in range(max(5, reps // 2)):
        straight += timed_steps(d_conn, 100)
        relayed += timed_steps(r_conn, 100)
        if h_conn:
            hopped += timed_steps(h_conn, 100)
    r_conn.close()
    d_conn.close()
    if hop:
        h_conn.close()
        hop.stop()
    direct.stop()

    # 3. Back-to-back episodes: reset -> 6 valid moves -> the move that ends
    # it -> verdict -> reset; as fast as the client can, and with 200 ms of
    # agent time before each valid move (an episode of ~1.2 s, like a model
    # choosing moves), standby vs cold.
    loops, loop_resets = {}, {}
    n_ep = max(5, reps // 2)
    for think in (0.0, 0.2):
        for d in (cold, sb):
            d.settle(0.0)
            t0 = time.perf_counter()
            rs = [d.episode(6, think) for _ in range(n_ep)]
            loops[d.name, think] = n_ep / (time.perf_counter() - t0)
            loop_resets[d.name, think] = statistics.median(rs)

    m = lambda v: statistics.median(v)
    print(f"bench/openenv: connect4_env (OpenEnv, real), {reps} resets per daemon, "
          f"load {os.getloadavg()[0]:.1f}")
    print(f"{'metric':<52} {'value':>12} {'unit':<6} target")
    row("reset -> ready p50, standby, after 1 s idle", f"{m(resets['standby']):.2f}", "ms",
        f"<= 10 ms: {ok(m(resets['standby']) <= 10)}")
    row("reset -> ready p90, standby", f"{pct(resets['standby'], 0.9):.2f}", "ms")
    row("reset -> ready p50, cold (--no-standby)", f"{m(resets['cold']):.1f}", "ms")
    row("env server started directly -> /health p50", f"{m(starts):.1f}", "ms")
    row("direct in-session POST /reset p50 (unisolated)", f"{m(in_session):.2f}", "ms")
    row("  cold / standby", f"{m(resets['cold']) / m(resets['standby']):.0f}", "x")
    add = m(relayed) - m(straight)
    row("POST /step p50, direct", f"{m(straight):.0f}", "us")
    row("POST /step p50, through openenvd", f"{m(relayed):.0f}", "us")
    row("  added p50 / direct step p50", f"{100 * add / m(straight):.1f}", "%",
        f"<= 5 %: {ok(add <= 0.05 * m(straight))}")
    if hopped:
        h_add = m(hopped) - m(straight)
        row("POST /step p50, haproxy in front of the direct env", f"{m(hopped):.0f}", "us")
        row("  haproxy's added p50 / direct step p50", f"{100 * h_add / m(straight):.1f}", "%",
            "(the competitor: one proxy hop, no container)")
    for think, what in ((0.0, "no agent time"), (0.2, "200 ms agent time a move")):
        c, s_ = loops["cold", think], loops["standby", think]
        row(f"episodes/s back-to-back, {what}, cold", f"{c:.2f}", "1/s")
        row(f"episodes/s back-to-back, {what}, standby", f"{s_:.2f}", "1/s")
        row("  standby / cold", f"{s_ / c:.1f}", "x",
            f">= 10x: {ok(s_ >= 10 * c)}" if think == 0.0 else "")
        row("  reset p50 inside the loop, cold / standby",
            f"{loop_resets['cold', think]:.0f} / {loop_resets['standby', think]:.1f}", "ms")


if __name__ == "__main__":
    main()
