# SPDX-License-Identifier: LGPL-2.1-or-later
"""Client side of bench/openenv/run.sh: OpenEnv's real connect4_env under three
openenvd daemons (template: the default manifest, each episode's env server
forked from the unit's warm template; standby: `template: false`, a standby
episode started ahead; cold: `template: false` and --no-standby) and started
directly, side by side in one run. Prints one table row per metric with its
target and met/MISSED (bench/README.md, "bench/openenv").

    bench-openenv.py REPS TOKEN template=PORT:PID standby=PORT:PID cold=PORT:PID \
        ENV_DIR PYLIB

PID is the daemon's: its cgroup subtree (openenvd-PID) is where the memory
of each episode's env leaf is read.

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

    def text(self, path, retry=True):
        """GET path, the body as text (no JSON)."""
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            self.conn.request("GET", path, headers=self.headers)
            r = self.conn.getresponse()
            data = r.read()
        except (ConnectionError, http.client.HTTPException, socket.timeout):
            self.close()
            if not retry:
                raise
            return self.text(path, retry=False)
        if r.status != 200:
            raise SystemExit("port %d: GET %s -> %d" % (self.port, path, r.status))
        return data.decode()

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
    def __init__(self, name, port, token, pid=None):
        self.name, self.port, self.pid = name, port, pid
        self.ctl = Http(port, token)
        self.token = token

    def settle(self, idle=1.0):
        """Until the standby pool (if any) is built and the template (if
        any) warm, then idle seconds: a loaded machine can take longer than
        the idle second to build them."""
        t0 = time.perf_counter()
        while True:
            info = self.ctl.call("GET", "/info")
            sb = info.get("standby", {})
            if ((sb.get("state") == "disabled" or
                 (sb.get("state") == "ready" and sb.get("ready", 1) >= sb.get("target", 1)))
                    and info.get("template", {}).get("state", "off") in ("ready", "off")):
                break
            if time.perf_counter() - t0 > 300:
                raise SystemExit("%s: not at rest after 300 s: %s" % (self.name, info))
            time.sleep(0.05)
        time.sleep(idle)

    def metrics(self):
        """{"name{labels}": value} of GET /metrics."""
        out = {}
        for line in self.ctl.text("/metrics").splitlines():
            if line and not line.startswith("#"):
                k, v = line.rsplit(" ", 1)
                out[k] = float(v)
        return out

    def cpu_s(self):
        """CPU seconds of the daemon's whole cgroup subtree (the daemon, its
        template and every container): the cgroup2 core cpu.stat usage_usec
        of openenvd-PID, as /metrics reports it."""
        return self.metrics()["openenvd_subtree_cpu_seconds_total"]

    def memory_root(self):
        """The daemon's subtree in the v1 memory hierarchy."""
        with open("/proc/%d/cgroup" % self.pid) as f:
            for line in f:
                _, ctrl, path = line.rstrip("\n").split(":", 2)
                if "memory" in ctrl.split(","):
                    cut = path.find("/openenvd-%d" % self.pid)
                    return "/sys/fs/cgroup/memory" + path[:cut] + "/openenvd-%d" % self.pid
        raise SystemExit("%s: no memory cgroup" % self.name)

    def leaves(self):
        """{"live": leaf, "standby": leaf, "template": leaf} (relative to
        the subtree; a role without a leaf is left out)."""
        info = self.ctl.call("GET", "/info")
        live = ((info.get("members") or {}).get("env") or {}).get("cgroup")
        agent = os.path.join(self.memory_root(), "zones/agent")
        out = {"live": live} if live else {}
        for d in sorted(os.listdir(agent)):
            rel = "zones/agent/" + d
            if d.startswith("template-"):
                if os.path.exists(os.path.join(agent, d, "cgroup.procs")):
                    out.setdefault("template", rel)
            elif d.startswith("s") and rel + "/env" != live and \
                    leaf_pids(os.path.join(agent, d, "env")):
                out.setdefault("standby", rel + "/env")
        return out

    def leaf_memory(self, rel):
        """Sum over the leaf's processes of smaps_rollup (kB)."""
        tot = {"Rss": 0, "Pss": 0, "Private": 0, "procs": 0}
        for pid in leaf_pids(os.path.join(self.memory_root(), rel)):
            try:
                with open("/proc/%d/smaps_rollup" % pid) as f:
                    for line in f:
                        k, v = line.split()[:2]
                        if k in ("Rss:", "Pss:"):
                            tot[k[:-1]] += int(v)
                        elif k in ("Private_Clean:", "Private_Dirty:"):
                            tot["Private"] += int(v)
                tot["procs"] += 1
            except (OSError, ValueError):
                pass
        return tot

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


def leaf_pids(path):
    try:
        with open(os.path.join(path, "cgroup.procs")) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


class Loop:
    """Blocks of back-to-back episodes, each from rest to rest: episodes/s
    (episodes / the blocks' wall), reset p50, subtree CPU per episode and
    env starts by path. The CPU window of a block runs until the daemon is
    at rest again (its next standby built), so that each episode carries
    exactly one env start."""

    def __init__(self):
        self.wall, self.cpu, self.resets = 0.0, 0.0, []
        self.starts = {"template": 0, "cold": 0}

    def block(self, d, n, think):
        d.settle(0.0)
        m0 = d.metrics()
        t0 = time.perf_counter()
        self.resets += [d.episode(6, think) for _ in range(n)]
        self.wall += time.perf_counter() - t0
        d.settle(0.0)
        m1 = d.metrics()
        self.cpu += (m1["openenvd_subtree_cpu_seconds_total"]
                     - m0["openenvd_subtree_cpu_seconds_total"])
        for p in self.starts:
            k = 'openenvd_env_starts_total{path="%s"}' % p
            self.starts[p] += int(m1.get(k, 0) - m0.get(k, 0))

    def result(self):
        n = len(self.resets)
        return n / self.wall, statistics.median(self.resets), self.cpu / n, self.starts, \
            self.resets


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

    def floor_fork(self, moves):
        """floor-fork.py's {"standby", "live"} USS in KiB."""
        env = dict(os.environ, PYTHONPATH=self.env_dir + ":" + self.pylib,
                   ENABLE_WEB_INTERFACE="false", PYTHONDONTWRITEBYTECODE="1")
        out = subprocess.run(
            ["/usr/bin/python3", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                              "floor-fork.py"),
             str(free_port()), str(moves), STEP_OK.decode()],
            cwd=self.env_dir, env=env, check=True, capture_output=True, text=True, timeout=120)
        return json.loads(out.stdout)


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


def main():
    reps, token = int(sys.argv[1]), sys.argv[2]
    daemons = {}
    for arg in sys.argv[3:7]:
        name, where = arg.split("=")
        port, _, pid = where.partition(":")
        daemons[name] = Daemon(name, int(port), token, int(pid) if pid else None)
    env_dir, pylib = sys.argv[7], sys.argv[8]
    tpl, pool, sb, cold = (daemons[n] for n in ("template", "pool", "standby", "cold"))
    direct = DirectEnv(env_dir, pylib)
    ok = lambda c: "met" if c else "MISSED"
    # Let what ran before (another suite, a fleet) settle: up to 3 min for
    # the 1-min load average to fall under 1.5 (other tenants may keep it up).
    t0 = time.monotonic()
    while os.getloadavg()[0] >= 1.5 and time.monotonic() - t0 < 180:
        time.sleep(5)
    load0 = os.getloadavg()[0]

    for d in (tpl, pool, sb, cold):  # warm-up: the page cache, the first episode
        d.settle(0.0)
        d.episode(0)

    # 1. POST /reset_unit -> ready after a second of idle, template vs
    # standby vs cold, and the env server started directly (its own cold start).
    resets = {"template": [], "standby": [], "cold": []}
    starts = []
    for i in range(reps):
        for d in (tpl, sb, cold):
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
    # choosing moves): cold, standby, template, the template with a pool of
    # two standbys, two blocks each, interleaved. The template's tight loops
    # run 4x the episodes (they are that much shorter); CPU per episode is the daemon's cgroup subtree from rest to rest.
    # Two blocks per daemon, interleaved (cold, standby, template, cold, ...).
    loops = {}
    n_ep = max(3, reps // 4)
    for think in (0.0, 0.2):
        acc = {d.name: Loop() for d in (cold, sb, tpl, pool)}
        for _ in range(2):
            for d in (cold, sb, tpl, pool):
                n = 4 * n_ep if d in (tpl, pool) and think == 0.0 else n_ep
                acc[d.name].block(d, n, think)
        for name, lp in acc.items():
            loops[name, think] = lp.result()

    # 4. Memory of an episode's env leaf (its shim and its server), live
    # after 6 moves and the standby beside it, vs the template's leaf;
    # 3 episodes per daemon, template and standby alternating.
    mem = {(n, r): [] for n in ("template", "standby") for r in ("live", "standby", "template")}
    for _ in range(3):
        for d in (tpl, sb):
            d.settle(0.0)
            d.reset()
            d.settle(0.0)  # the next standby built: its leaf at rest too
            env = Http(d.port, d.token)
            for _ in range(6):
                env.call("POST", "/step", body=STEP_OK)
            for role, rel in d.leaves().items():
                mem[d.name, role].append(d.leaf_memory(rel))
            env.call("POST", "/step", body=STEP_DONE)
            env.close()
            while not d.ctl.call("GET", "/verdict").get("verdict"):
                time.sleep(0.01)

    # 5. The floor of that memory: the same env server warmed the same way
    # and forked once, plainly, on the host (floor-fork.py), 3 times.
    floor = {"standby": [], "live": []}
    for _ in range(3):
        f = direct.floor_fork(6)
        for k in floor:
            floor[k].append(f[k] / 1024)

    m = lambda v: statistics.median(v)
    print(f"bench/openenv: connect4_env (OpenEnv, real), {reps} resets per daemon, "
          f"load {load0:.1f} before, {os.getloadavg()[0]:.1f} after")
    print(f"{'metric':<58} {'value':>14} {'unit':<6} target")

    def row(label, value, unit, target=""):
        print(f"{label:<58} {value:>14} {unit:<6} {target}")

    row("reset -> ready p50, template, after 1 s idle", f"{m(resets['template']):.2f}", "ms",
        f"<= 2 ms (issue 27): {ok(m(resets['template']) <= 2)}")
    row("reset -> ready p90, template", f"{pct(resets['template'], 0.9):.2f}", "ms")
    row("reset -> ready p50, standby (template: false), after 1 s idle",
        f"{m(resets['standby']):.2f}", "ms", f"<= 10 ms (issue 12): {ok(m(resets['standby']) <= 10)}")
    row("reset -> ready p90, standby", f"{pct(resets['standby'], 0.9):.2f}", "ms")
    row("reset -> ready p50, cold (--no-standby, template: false)", f"{m(resets['cold']):.1f}", "ms")
    row("env server started directly -> /health p50", f"{m(starts):.1f}", "ms")
    row("direct in-session POST /reset p50 (unisolated)", f"{m(in_session):.2f}", "ms")
    row("  cold / standby", f"{m(resets['cold']) / m(resets['standby']):.0f}", "x")
    add = m(relayed) - m(straight)
    row("POST /step p50, direct", f"{m(straight):.0f}", "us")
    row("POST /step p50, through openenvd", f"{m(relayed):.0f}", "us")
    row("  added p50 / direct step p50", f"{100 * add / m(straight):.1f}", "%",
        f"<= 5 % (issue 12): {ok(add <= 0.05 * m(straight))}")
    if hopped:
        h_add = m(hopped) - m(straight)
        row("POST /step p50, haproxy in front of the direct env", f"{m(hopped):.0f}", "us")
        row("  haproxy's added p50 / direct step p50", f"{100 * h_add / m(straight):.1f}", "%",
            "(the competitor: one proxy hop, no container)")
    for think, what in ((0.0, "no agent time"), (0.2, "200 ms agent time a move")):
        c, s_, t, p = (loops[n, think] for n in ("cold", "standby", "template", "pool"))
        for name, lp in (("cold", c), ("standby", s_), ("template", t), ("pool", p)):
            row(f"episodes/s back-to-back, {what}, {name} ({len(lp[4])} ep.)", f"{lp[0]:.2f}",
                "1/s")
        row("  standby / cold", f"{s_[0] / c[0]:.1f}", "x",
            f">= 10x (issue 12): {ok(s_[0] >= 10 * c[0])}" if think == 0.0 else "")
        row("  template / standby", f"{t[0] / s_[0]:.1f}", "x",
            f">= 10x (issue 27): {ok(t[0] >= 10 * s_[0])}" if think == 0.0 else "")
        row("  pool / standby", f"{p[0] / s_[0]:.1f}", "x",
            f">= 10x (issue 27): {ok(p[0] >= 10 * s_[0])}" if think == 0.0 else "")
        row("  reset p50 inside the loop, cold / standby / template",
            f"{c[1]:.0f} / {s_[1]:.1f} / {t[1]:.2f}", "ms",
            f"template <= 2 ms: {ok(t[1] <= 2)}" if think == 0.0 else "")
        row("  reset p50 / p99 inside the loop, pool (standby: 2)",
            f"{p[1]:.2f} / {pct(p[4], 0.99):.1f}", "ms",
            f"<= 2 ms (issue 27): {ok(p[1] <= 2)}" if think == 0.0 else "")
        for name, lp in (("cold", c), ("standby", s_), ("template", t), ("pool", p)):
            row(f"CPU per episode, {what}, {name}", f"{1e3 * lp[2]:.0f}", "ms",
                "(daemon subtree, rest to rest)")
        row("  template / standby CPU per episode", f"{100 * t[2] / s_[2]:.1f}", "%",
            f"<= 5 % (issue 27): {ok(t[2] <= 0.05 * s_[2])}" if think == 0.0 else "")
        for name, lp in (("cold", c), ("standby", s_), ("template", t), ("pool", p)):
            row(f"  env starts in the loop, {name}: template / cold",
                "%d / %d" % (lp[3]["template"], lp[3]["cold"]), "",
                "" if name != "template" or lp[3]["cold"] == 0 else "COLD FALLBACKS")
    mib = lambda k, name, role: m([x[k] for x in mem[name, role]]) / 1024 \
        if mem[name, role] else float("nan")
    for role in ("live", "standby"):
        v = mib("Private", "template", role)
        row(f"private (USS) of a {role} episode's env leaf, template", f"{v:.1f}", "MiB",
            f"<= 10 MiB (issue 27): {ok(v <= 10)}")
        row(f"  floor: the warmed server forked once on the host, {role}",
            f"{m(floor[role]):.1f}", "MiB", f"template / floor {v / m(floor[role]):.2f}x")
        row(f"  its PSS (template's pages shared with {role} and others)",
            f"{mib('Pss', 'template', role):.1f}", "MiB")
    row("template's leaf: PSS / RSS", "%.1f / %.1f" % (mib("Pss", "template", "template"),
                                                      mib("Rss", "template", "template")), "MiB")
    for role in ("live", "standby"):
        row(f"private (USS) / PSS of a {role} episode's env leaf, standby",
            "%.1f / %.1f" % (mib("Private", "standby", role), mib("Pss", "standby", role)), "MiB",
            "(template: false)")
    print("""methods: reset: POST /reset_unit -> its 200, client side, after 1 s idle at rest
  (standby built, template warm); episodes/s: reset, 6 valid moves, the move that ends
  it, the first GET /verdict showing it, in a loop; CPU per episode: the loop's delta of
  the daemon's cgroup subtree CPU (cgroup2 cpu.stat usage_usec of openenvd-PID: the
  daemon, its template, every container; /metrics openenvd_subtree_cpu_seconds_total)
  from rest to rest (the next standby built after the last episode) / episodes;
  memory: /proc/PID/smaps_rollup summed over the cgroup.procs of the leaf (shim and env
  server) in the memory hierarchy, after 6 moves with the next standby built; USS =
  Private_Clean + Private_Dirty, what the episode holds beyond the template's shared
  pages; median of 3 episodes. floor: floor-fork.py, the env server warmed as the
  template warms it, then one plain fork() running it on the host (no container, shim or
  landing), its USS once it serves /health and after the same 6 moves; median of 3.""")
    for d in (tpl, pool, sb, cold):
        x = d.metrics()
        info = d.ctl.call("GET", "/info").get("template", {})
        row(f"{d.name}: template state / builds / discards / fork, warm failures",
            "%s / %d / %d / %d, %d" % (info.get("state"), x.get("openenvd_env_template_builds_total", 0),
                                      x.get("openenvd_env_template_discards_total", 0),
                                      x.get("openenvd_env_template_fork_failures_total", 0),
                                      x.get("openenvd_env_template_warm_failures_total", 0)), "",
            "starts template/cold over the run: %d / %d" % (
                x.get('openenvd_env_starts_total{path="template"}', 0),
                x.get('openenvd_env_starts_total{path="cold"}', 0)))


if __name__ == "__main__":
    main()
