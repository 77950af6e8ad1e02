#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A fleet of openenvd units on this machine, as a simulation of a cluster.

    sudo tools/fleet.py [--build DIR] --units N --episodes K [--json FILE]

Starts N isolated units of OpenEnv's connect4_env (the real OpenEnv from
../shared/openenv-real, unpacked into a private work dir under /var/tmp: never
copied into the repository), each its own openenvd with its own port, token,
state dir and uid block (the daemon takes one under its lock dir), and drives
them all at once, one stock OpenEnv client per unit (Connect4Env over one
WebSocket for all its episodes, the token as the password of its base_url
http://openenv:TOKEN@127.0.0.1:PORT): reset, seven moves that end the game
(done), then the unit's verdict for that episode, K times per unit.

It reports aggregate episodes/s, each unit's footprint (daemon RSS, its cgroup
subtree's memory, open fds, CPU per episode from the unit's GET /metrics) and
checks that the units did not interfere: every observation is the one this
unit's own moves produce, every verdict is graded and names this unit's
episode, each unit's metrics count exactly its own episodes and actions, uid
blocks are disjoint and every container process runs inside its own unit's
block (the daemon's own forks, running its code as root before any exec,
are told apart by their binary), no socket and no network namespace is
shared between units, every unit exits 0 on SIGTERM leaving no cgroup
behind, and every line of every daemon's log is a JSON object
(--log-format json).

Exit codes: 0 every check held; 1 a check failed (each is listed); 2 bad
usage; 3 a prerequisite is missing (root, ../shared/openenv-real,
python3-numpy): the message names it.

The Unit class (one openenvd, its control API, its metrics and log) is also
what tests/integration/test_metrics_log.py drives its daemons with.
"""
import argparse
import asyncio
import contextlib
import http.client
import json
import os
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import promtext  # noqa: E402

OPENENV_REAL = os.path.normpath(os.path.join(REPO, "..", "shared", "openenv-real"))
PY = "/usr/bin/python3"  # Debian's: its python3-numpy, and the containers' root is ours


class Missing(Exception):
    """A prerequisite is missing (exit 3)."""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read(path, default=None):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError:
        return default


def poll(cond, what, timeout, interval=0.01):
    end = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > end:
            raise TimeoutError("timed out waiting for " + what)
        time.sleep(interval)
        interval = min(interval * 2, 0.2)


def cgroup2_mount():
    """Where the cgroup2 hierarchy is mounted (hybrid: /sys/fs/cgroup/unified)."""
    for line in (read("/proc/self/mountinfo") or "").splitlines():
        left, _, right = line.partition(" - ")
        if right.startswith("cgroup2 "):
            return left.split()[4]
    return "/sys/fs/cgroup"


class Unit:
    """One openenvd on one manifest: own port, state dir, token; JSON log."""

    def __init__(self, openenvd, shim, manifest, workdir, name, args=(), env=None,
                 nofile=None, start_timeout=60):
        self.name = name
        self.dir = os.path.join(workdir, name)
        os.makedirs(self.dir)
        os.chmod(self.dir, 0o711)  # containers resolve their mounts below it as other uids
        self.state = os.path.join(self.dir, "state")
        self.token = secrets.token_urlsafe(24)
        token_file = os.path.join(self.dir, "token")
        with open(os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as f:
            f.write(self.token + "\n")
        self.port = free_port()
        self.out_path = os.path.join(self.dir, "daemon.out")
        self.log_path = os.path.join(self.dir, "daemon.log")
        self.cmd = [openenvd, "--manifest", manifest, "--state", self.state,
                    "--port", str(self.port), "--listen", "127.0.0.1", "--shim", shim,
                    "--token-file", token_file, "--require-isolation", "--log-format", "json",
                    "--start-timeout", str(start_timeout)] + list(args)
        self.env = env
        self.nofile = nofile
        self.proc = None
        self.pid = None
        self.cgroup = None  # the subtree's path in the cgroup2 hierarchy
        self.memcg = None   # ... in the v1 memory hierarchy (hybrid hosts)

    @property
    def base_url(self):
        """What a stock OpenEnv client is given: the token as Basic password."""
        return "http://openenv:%s@127.0.0.1:%d" % (self.token, self.port)

    def start(self):
        def limits():
            if self.nofile:
                import resource
                # The soft limit only: containers set their own, up to the hard one.
                hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
                resource.setrlimit(resource.RLIMIT_NOFILE, (self.nofile, hard))
        with open(self.out_path, "w") as o, open(self.log_path, "w") as e:
            self.proc = subprocess.Popen(self.cmd, stdout=o, stderr=e, stdin=subprocess.DEVNULL,
                                         env=self.env, preexec_fn=limits)
        self.pid = self.proc.pid

    def wait_ready(self, timeout=60):
        """Until the daemon printed "openenvd ready" (its listener is up)."""
        poll(lambda: "openenvd ready" in (read(self.out_path) or "") or self.proc.poll() is not None,
             "%s: openenvd ready" % self.name, timeout)
        if self.proc.poll() is not None:
            raise RuntimeError("%s: openenvd exited %s:\n%s" % (self.name, self.proc.returncode,
                                                              self.tail()))
        # The daemon sits in <subtree>/control of each hierarchy.
        for line in (read("/proc/%d/cgroup" % self.pid) or "").splitlines():
            _, ctrls, path = line.split(":", 2)
            if not path.endswith("/control"):
                continue
            if ctrls == "":
                self.cgroup = path[: -len("/control")]
            elif "memory" in ctrls.split(","):
                self.memcg = "/sys/fs/cgroup/%s%s" % (ctrls, path[: -len("/control")])

    def tail(self, n=20):
        return "\n".join((read(self.log_path) or "").splitlines()[-n:])

    def request(self, method, path, body=None, token=True, timeout=120, headers=None):
        """(status, {header: value}, body bytes), straight to 127.0.0.1 (no proxy)."""
        h = dict(headers or {})
        if token:
            h["Authorization"] = "Bearer " + self.token
        if body is not None and not isinstance(body, bytes):
            body = json.dumps(body).encode()
            h["Content-Type"] = "application/json"
        if method == "POST" and body is None:
            body = b""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request(method, path, body=body, headers=h)
            r = conn.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
        finally:
            conn.close()

    def call(self, method, path, body=None, token=True):
        """A control call that must succeed: its JSON answer."""
        status, _, raw = self.request(method, path, body, token)
        if status != 200:
            raise RuntimeError("%s: %s %s -> %d %s\n%s" % (self.name, method, path, status,
                                                          raw[:300], self.tail()))
        return json.loads(raw)

    def metrics(self):
        """GET /metrics, parsed strictly (tools/promtext.py)."""
        status, headers, raw = self.request("GET", "/metrics")
        if status != 200:
            raise RuntimeError("%s: GET /metrics -> %d" % (self.name, status))
        if headers.get("content-type") != "text/plain; version=0.0.4; charset=utf-8":
            raise RuntimeError("%s: /metrics content type %r" % (self.name,
                                                                 headers.get("content-type")))
        return promtext.parse(raw)

    def log_entries(self):
        """Every line of the daemon's log as JSON (ValueError names a line that is not)."""
        entries = []
        with open(self.log_path, "rb") as f:
            data = f.read()
        if data and not data.endswith(b"\n"):
            raise ValueError("%s: the log does not end with a newline" % self.name)
        for n, line in enumerate(data.split(b"\n")[:-1], 1):
            try:
                e = json.loads(line.decode("utf-8"))
            except ValueError as err:
                raise ValueError("%s: log line %d is not JSON (%s): %r" % (self.name, n, err,
                                                                           line[:200]))
            if not isinstance(e, dict):
                raise ValueError("%s: log line %d is not an object" % (self.name, n))
            entries.append(e)
        return entries

    def host_uids(self):
        """The uid block the daemon took: (first, last), from its log."""
        for e in self.log_entries():
            if "uid_first" in e:
                return int(e["uid_first"]), int(e["uid_last"])
        raise RuntimeError("%s: no host uids in the log" % self.name)

    def subtree_pids(self):
        """Every process in the unit's cgroup subtree (the daemon and its containers)."""
        pids = []
        root = cgroup2_mount() + self.cgroup
        for d, _, files in os.walk(root):
            if "cgroup.procs" in files:
                pids += [int(p) for p in (read(os.path.join(d, "cgroup.procs")) or "").split()]
        return pids

    def subtree_memory(self):
        """Bytes charged to the subtree: v1 memory hierarchy on a hybrid host, else v2."""
        if self.memcg:
            v = read(self.memcg + "/memory.usage_in_bytes")
        else:
            v = read(cgroup2_mount() + self.cgroup + "/memory.current")
        return int(v) if v else None

    def stop(self, timeout=60):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode if self.proc else None


# --- the connect4 fixture -------------------------------------------------------------

MANIFEST = """\
# Generated by tools/fleet.py: OpenEnv's connect4_env, unmodified, as one unit.
spec_version: 1
name: fleet_connect4
type: space
runtime: fastapi
app: server.app:app
port: 8000
openenvd:
  kill_deadline_s: 5
  zones:
    agent:
      resources: {{memory_mb: 512, pids: 128, disk_mb: 16}}
      containers:
        env:
          argv: [{py}, -m, uvicorn, server.app:app, --app-dir, {env}, --host, 0.0.0.0,
                 --port, "8000", --log-level, warning]
          env: {{PYTHONPATH: "{env}:{pylib}", ENABLE_WEB_INTERFACE: "false"}}
"""


class Fixture:
    """connect4_env and OpenEnv's library tree where the manifest's argv expects them.

    The containers' root is this machine's /, so the files must be readable by
    any uid and not under /tmp (each container has its own /tmp)."""

    def __init__(self, openenv_real, workdir, pylib=None):
        if os.geteuid() != 0:
            raise Missing("openenvd isolates as root: run as root")
        tarball = os.path.join(openenv_real, "pylib.tar.xz")
        envsrc = os.path.join(openenv_real, "envs", "connect4_env")
        if not os.path.isfile(tarball) or not os.path.isdir(envsrc):
            raise Missing("%s not found (the real OpenEnv: pylib.tar.xz and envs/connect4_env)"
                          % openenv_real)
        if subprocess.run([PY, "-c", "import numpy"], capture_output=True).returncode != 0:
            raise Missing("connect4_env needs numpy: apt-get install python3-numpy")
        self.openenv_real = openenv_real
        self.workdir = workdir
        self.env = os.path.join(workdir, "connect4_env")
        shutil.copytree(envsrc, self.env)
        if pylib:
            self.pylib = os.path.abspath(pylib)
        else:
            subprocess.run(["tar", "-xJf", tarball, "-C", workdir], check=True)
            self.pylib = os.path.join(workdir, "pylib")
            # Bytecode, as an image would ship it: every episode's env server
            # imports fastapi, pydantic and OpenEnv afresh.
            subprocess.run([PY, "-m", "compileall", "-q", "-j", "0", self.pylib],
                           stdout=subprocess.DEVNULL, check=False)
        subprocess.run([PY, "-m", "compileall", "-q", self.env], stdout=subprocess.DEVNULL,
                       check=False)
        for root, dirs, files in os.walk(workdir):
            os.chmod(root, 0o755)
            for f in files:
                p = os.path.join(root, f)
                if not os.path.islink(p):
                    os.chmod(p, 0o644)
        self.manifest = os.path.join(workdir, "openenv.yaml")
        with open(self.manifest, "w") as f:
            f.write(MANIFEST.format(py=PY, env=self.env, pylib=self.pylib))
        os.chmod(self.manifest, 0o644)

    def client_path(self):
        """sys.path entries for OpenEnv's client: its envs/ and the library tree."""
        return [os.path.join(self.openenv_real, "envs"), self.pylib]


# --- one unit's episodes ---------------------------------------------------------------

def moves(unit_index, episode):
    """Seven columns that end the game: player 1 stacks four in column a while
    player -1 stacks three in b. Different per unit and episode, so a board
    that crossed from another unit would not match."""
    a = (unit_index + episode) % 7
    b = (a + 1 + episode % 6) % 7
    return [a, b, a, b, a, b, a]


def simulate(cols):
    """The boards connect4_env must answer after each move (6 x 7, row 0 on top)."""
    board = [[0] * 7 for _ in range(6)]
    player, out = 1, []
    for c in cols:
        row = max(r for r in range(6) if board[r][c] == 0)
        board[row][c] = player
        player = -player
        out.append([r[:] for r in board])
    return out


class Drive:
    """What one unit's client saw."""

    def __init__(self, unit, index):
        self.unit = unit
        self.index = index
        self.episodes = []  # {"id", "verdict", "reset_s", "wall_s", "boards_ok"}
        self.error = None
        self.http = None  # its control API client, and its OpenEnv client (drive_all)
        self.env = None


async def connect_unit(d, stack, client_cls, httpx):
    """The unit's HTTP client (control API) and its OpenEnv client, connected."""
    unit = d.unit
    d.http = await stack.enter_async_context(httpx.AsyncClient(
        base_url="http://127.0.0.1:%d" % unit.port, trust_env=False,
        headers={"Authorization": "Bearer " + unit.token}, timeout=300))
    d.env = await stack.enter_async_context(client_cls(
        base_url=unit.base_url, message_timeout_s=300, connect_timeout_s=60))


async def drive_unit(d, n_episodes, action_cls):
    unit, env = d.unit, d.env

    async def get(path):
        r = await d.http.get(path)
        if r.status_code != 200:
            raise RuntimeError("%s: GET %s -> %d" % (unit.name, path, r.status_code))
        return r.json()

    for k in range(n_episodes):
        t0 = time.monotonic()
        r = await env.reset()
        t_reset = time.monotonic() - t0
        empty = r.observation.board == [[0] * 7 for _ in range(6)] and not r.done
        eid = (await get("/info"))["episode_id"]
        cols = moves(d.index, k)
        want = simulate(cols)
        ok = empty
        for i, c in enumerate(cols):
            r = await env.step(action_cls(column=c))
            ok = ok and r.observation.board == want[i] and r.done == (i == len(cols) - 1)
        delay = 0.002
        while True:
            v = await get("/verdict?episode_id=" + eid)
            if v.get("verdict"):
                break
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.05)
        d.episodes.append({"id": eid, "verdict": v["verdict"],
                           "verdict_episode": v.get("episode_id"), "boards_ok": ok,
                           "reset_s": t_reset, "wall_s": time.monotonic() - t0})


async def drive_all(drives, n_episodes, fixture):
    """Every unit's episodes at once; the drive's wall time (s).

    The clients connect first, one after the other and outside the clock: a
    unit closes a connection whose request head has not arrived within 5 s
    (HTTP_UNAUTH_TIMEOUT), and N clients set up at once in one busy process
    (httpx builds an SSL context per client) can leave the first ones'
    handshakes unsent that long."""
    sys.path[:0] = fixture.client_path()
    import httpx
    from connect4_env import Connect4Action, Connect4Env

    async def one(d):
        try:
            await drive_unit(d, n_episodes, Connect4Action)
        except Exception as e:  # noqa: BLE001 - reported per unit, the others go on
            d.error = "%s: %r" % (d.unit.name, e)

    async with contextlib.AsyncExitStack() as stack:
        for d in drives:
            try:
                await connect_unit(d, stack, Connect4Env, httpx)
            except Exception as e:  # noqa: BLE001 - reported per unit, the others go on
                d.error = "%s: connecting: %r" % (d.unit.name, e)
        t0 = time.monotonic()
        await asyncio.gather(*(one(d) for d in drives if not d.error))
        return time.monotonic() - t0


# --- footprint and interference, sampled while the fleet runs ---------------------------

def status_field(pid, key):
    for line in (read("/proc/%d/status" % pid) or "").splitlines():
        if line.startswith(key + ":"):
            return line.split()[1:]
    return None


def fd_targets(pid):
    out = []
    try:
        names = os.listdir("/proc/%d/fd" % pid)
    except OSError:
        return out
    for fd in names:
        try:
            out.append(os.readlink("/proc/%d/fd/%s" % (pid, fd)))
        except OSError:
            pass
    return out


class Sampler(threading.Thread):
    """Every second: each daemon's RSS and fds, each subtree's memory and
    processes; every fifth round also who owns which uid, socket and network
    namespace (the interference probe)."""

    def __init__(self, units, uid_blocks):
        super().__init__(daemon=True)
        self.units = units
        self.blocks = uid_blocks
        self.samples = {u.name: [] for u in units}
        self.violations = []
        self.probes = 0
        self.containers_seen = 0
        self.daemon_forks = 0  # the daemons' own forks seen (not container processes)
        self.halt = threading.Event()

    def footprint(self, u):
        rss = status_field(u.pid, "VmRSS")
        pids = u.subtree_pids()
        return {"rss_kb": int(rss[0]) if rss else None, "fds": len(fd_targets(u.pid)),
                "subtree_bytes": u.subtree_memory(), "processes": len(pids)}

    @staticmethod
    def daemon_code(u, pid, uid):
        """The daemon, or a fork of it that has not exec'd yet: its jobs (the
        custody copy) and a container between its clone and its shim's exec,
        before the uid map is written. They run the daemon's own code as
        root, in the host's namespaces or in ones not yet set up."""
        if pid == u.pid:
            return True
        if any(x != "0" for x in uid):
            return False
        try:
            a, b = os.stat("/proc/%d/exe" % pid), os.stat("/proc/%d/exe" % u.pid)
        except OSError:
            return False
        return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)

    def probe(self):
        owners = {}  # socket inode / netns -> unit
        for u in self.units:
            lo, hi = self.blocks[u.name]
            for pid in u.subtree_pids():
                uid = status_field(pid, "Uid")
                if uid is None:
                    continue  # gone meanwhile
                if self.daemon_code(u, pid, uid):
                    self.daemon_forks += pid != u.pid
                else:
                    self.containers_seen += 1
                    if not all(lo <= int(x) <= hi for x in uid):
                        self.violations.append("%s: pid %d runs as uid %s, outside %d-%d"
                                               % (u.name, pid, uid, lo, hi))
                    try:
                        ns = os.readlink("/proc/%d/ns/net" % pid)
                    except OSError:
                        ns = None
                    if ns:
                        prev = owners.setdefault(ns, u.name)
                        if prev != u.name:
                            self.violations.append("%s and %s share %s" % (prev, u.name, ns))
                for t in fd_targets(pid):
                    if t.startswith("socket:"):
                        prev = owners.setdefault(t, u.name)
                        if prev != u.name:
                            self.violations.append("%s and %s share %s" % (prev, u.name, t))
        self.probes += 1

    def run(self):
        n = 0
        while not self.halt.wait(1.0):
            for u in self.units:
                self.samples[u.name].append(self.footprint(u))
            if n % 5 == 0:
                self.probe()
            n += 1


# --- the run -----------------------------------------------------------------------------

def pct(values, q):
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v) - 1, int(round(q * (len(v) - 1))))]


def metric(fams, name, sample=None, **labels):
    return fams[name].value(sample, **labels)


def reset_sources(after, before):
    """{source: {"n", "mean_s"}} of openenvd_reset_duration_seconds between two scrapes."""
    h, out = "openenvd_reset_duration_seconds", {}
    for source in ("standby", "standby_provisioning", "cold"):
        n = (metric(after, h, h + "_count", source=source)
             - metric(before, h, h + "_count", source=source))
        total = (metric(after, h, h + "_sum", source=source)
                 - metric(before, h, h + "_sum", source=source))
        out[source] = {"n": int(n), "mean_s": total / n if n else None}
    return out


def run(args):
    build = os.path.abspath(args.build)
    openenvd = os.path.abspath(args.openenvd or os.path.join(build, "src/daemon/openenvd"))
    shim = os.path.abspath(args.shim or os.path.join(build, "src/sandbox/shim/openenvd-shim"))
    workdir = tempfile.mkdtemp(prefix="openenvd-fleet.", dir="/var/tmp")
    os.chmod(workdir, 0o755)
    units, checks, report = [], [], {"units": args.units, "episodes_per_unit": args.episodes}

    def check(name, ok, detail=""):
        checks.append({"check": name, "ok": bool(ok), "detail": detail})

    try:
        fixture = Fixture(args.openenv_real, workdir, args.pylib)
        start_timeout = max(120, 6 * args.units)
        mem_before = meminfo_available()
        report["cpus"] = os.cpu_count()
        report["loadavg_before"] = os.getloadavg()[0]
        t0 = time.monotonic()
        for i in range(args.units):
            units.append(Unit(openenvd, shim, fixture.manifest, workdir, "unit%03d" % i,
                              start_timeout=start_timeout))
        for u in units:
            u.start()
        for u in units:
            u.wait_ready(60)
        # Live episode ready and a standby provisioned: the unit at rest.
        def at_rest(u):
            i = u.call("GET", "/info")
            return i["phase"] == "ready" and i["standby"]["state"] == "ready" and i
        infos = [poll(lambda u=u: at_rest(u), "%s at rest" % u.name, start_timeout * 2, 0.2)
                 for u in units]
        report["start_s"] = time.monotonic() - t0
        check("every unit started isolated, a standby ready",
              all(i["isolation"] == "on" for i in infos))
        blocks = {u.name: u.host_uids() for u in units}
        spans = sorted(blocks.values())
        check("uid blocks are disjoint", all(a[1] < b[0] for a, b in zip(spans, spans[1:])),
              " ".join("%d-%d" % s for s in spans))
        rest = Sampler(units, blocks)
        report["rest"] = {u.name: rest.footprint(u) for u in units}
        report["mem_available_drop_mb"] = (mem_before - meminfo_available()) / 1024

        drives = [Drive(u, i) for i, u in enumerate(units)]
        before = {u.name: u.metrics() for u in units}
        t_before = time.monotonic()
        sampler = Sampler(units, blocks)
        sampler.start()
        wall = asyncio.run(drive_all(drives, args.episodes, fixture))
        sampler.halt.set()
        sampler.join()
        sampler.probe()
        # At rest again (the last episode closed, its successor's standby
        # ready): the window holds exactly one standby start per episode.
        for u in units:
            poll(lambda u=u: u.call("GET", "/info")["standby"]["state"] == "ready",
                 "%s at rest" % u.name, start_timeout * 2, 0.2)
        t_after = time.monotonic()
        after = {u.name: u.metrics() for u in units}

        errors = [d.error for d in drives if d.error]
        done = sum(len(d.episodes) for d in drives)
        check("every unit completed its episodes", not errors and done == args.units * args.episodes,
              "; ".join(errors[:5]))
        report["drive_s"] = wall
        report["episodes"] = done
        report["episodes_per_s"] = done / wall if wall > 0 else None
        check("every observation is the one this unit's own moves produce",
              all(e["boards_ok"] for d in drives for e in d.episodes))
        ids = [e["id"] for d in drives for e in d.episodes]
        check("every verdict is graded and names this unit's episode",
              all(e["verdict"] == "graded" and e["verdict_episode"] == e["id"]
                  for d in drives for e in d.episodes) and len(set(ids)) == len(ids))
        bad = []
        for d in drives:
            a, b = after[d.unit.name], before[d.unit.name]
            got = {}
            for s in a["openenvd_episodes_total"].samples:
                labels = s[1]
                prev = b["openenvd_episodes_total"].value(**labels)
                if s[2] - prev:
                    got["%s/%s" % (labels["verdict"], labels["reason"])] = s[2] - prev
            actions = (metric(a, "openenvd_episode_actions_total")
                       - metric(b, "openenvd_episode_actions_total"))
            if got != {"graded/done": len(d.episodes)} or actions != 7 * len(d.episodes):
                bad.append("%s: %s, %d actions" % (d.unit.name, got, actions))
        check("each unit's /metrics counts exactly its own episodes and actions", not bad,
              "; ".join(bad[:5]))
        report["interference_probe"] = {"probes": sampler.probes,
                                        "container_processes": sampler.containers_seen,
                                        "daemon_forks": sampler.daemon_forks}
        check("every container ran inside its own unit's uid block; no socket or network "
              "namespace shared between units",
              not sampler.violations and sampler.probes >= 2 and sampler.containers_seen > 0,
              "%d probes, %d container processes and %d daemon forks seen; %s" % (
                  sampler.probes, sampler.containers_seen, sampler.daemon_forks,
                  "; ".join(sampler.violations[:5])))

        per_unit = {}
        for d in drives:
            n = max(1, len(d.episodes))
            a, b = after[d.unit.name], before[d.unit.name]
            s = sampler.samples[d.unit.name]
            per_unit[d.unit.name] = {
                "episodes": len(d.episodes),
                "rss_kb_max": max((x["rss_kb"] or 0) for x in s) if s else None,
                "fds_max": max(x["fds"] for x in s) if s else None,
                "subtree_mb_mean": statistics.mean(x["subtree_bytes"] or 0 for x in s) / 2**20
                if s else None,
                "subtree_mb_max": max(x["subtree_bytes"] or 0 for x in s) / 2**20 if s else None,
                "processes_max": max(x["processes"] for x in s) if s else None,
                "cpu_per_episode_s": (metric(a, "openenvd_subtree_cpu_seconds_total")
                                      - metric(b, "openenvd_subtree_cpu_seconds_total")) / n,
                "daemon_cpu_per_episode_s": (metric(a, "process_cpu_seconds_total")
                                             - metric(b, "process_cpu_seconds_total")) / n,
                "reset_s_p50": pct([e["reset_s"] for e in d.episodes], 0.5),
                "episode_s_p50": pct([e["wall_s"] for e in d.episodes], 0.5),
                # The daemon's side: new episodes by where they came from,
                # and their mean reset → ready (the first reset of a fresh
                # session goes to the live episode's env server instead).
                "resets": reset_sources(a, b),
            }
        report["per_unit"] = per_unit
        # The units' own CPU (daemons and containers, from their subtrees)
        # between the two scrapes, which also hold the wait for the last
        # standbys: how many of the machine's CPUs the fleet used.
        report["fleet_cpu_s"] = sum(r["cpu_per_episode_s"] * r["episodes"]
                                    for r in per_unit.values())
        window = t_after - t_before
        report["cores_used"] = report["fleet_cpu_s"] / window if window > 0 else None
        report["loadavg_after"] = os.getloadavg()[0]
    except Missing:
        raise
    except Exception as e:  # noqa: BLE001 - the report says what broke, units are stopped
        check("the fleet ran to the end", False, "%r" % e)
    finally:
        codes = {}
        for u in units:
            codes[u.name] = u.stop()
        if units:
            left = [u.name for u in units if u.cgroup and os.path.exists(cgroup2_mount() + u.cgroup)]
            check("every unit exits 0 on SIGTERM and leaves no cgroup",
                  all(c == 0 for c in codes.values()) and not left,
                  "exit codes %s; left %s" % (sorted(set(codes.values()), key=str), left))
            try:
                for u in units:
                    u.log_entries()
                check("every line of every daemon's log is a JSON object", True)
            except ValueError as e:
                check("every line of every daemon's log is a JSON object", False, str(e))
            report["logs_tail"] = {u.name: u.tail(5) for u in units
                                   if codes.get(u.name) != 0}
        if args.keep:
            print("work dir kept: %s" % workdir, file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    report["checks"] = checks
    return report


def meminfo_available():
    for line in (read("/proc/meminfo") or "").splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1])
    return 0


def print_report(r, out):
    print("fleet: %d units x %d episodes" % (r["units"], r["episodes_per_unit"]), file=out)
    if "start_s" in r:
        print("  start (all ready, standby ready): %.1f s; MemAvailable dropped %.0f MB"
              % (r["start_s"], r.get("mem_available_drop_mb", 0)), file=out)
    if r.get("episodes_per_s") is not None:
        print("  %d episodes in %.1f s: %.3f episodes/s aggregate; the units used %.2f of %d "
              "CPUs (load average %.1f before, %.1f after)"
              % (r["episodes"], r["drive_s"], r["episodes_per_s"], r.get("cores_used") or 0,
                 r.get("cpus") or 0, r.get("loadavg_before", 0), r.get("loadavg_after", 0)),
              file=out)
    rest = list((r.get("rest") or {}).values())
    if rest:
        print("  at rest, per unit (mean): daemon RSS %.1f MB, subtree %.1f MB, %d fds, "
              "%d processes" % (statistics.mean(x["rss_kb"] or 0 for x in rest) / 1024,
                                statistics.mean(x["subtree_bytes"] or 0 for x in rest) / 2**20,
                                statistics.mean(x["fds"] for x in rest),
                                statistics.mean(x["processes"] for x in rest)), file=out)
    pu = r.get("per_unit") or {}
    if pu:
        cols = ("episodes", "rss_kb_max", "fds_max", "subtree_mb_mean", "subtree_mb_max",
                "processes_max", "cpu_per_episode_s", "daemon_cpu_per_episode_s",
                "reset_s_p50", "episode_s_p50")
        print("  %-8s %s" % ("unit", " ".join("%12s" % c[:12] for c in cols)), file=out)
        for name, row in sorted(pu.items()):
            cells = []
            for c in cols:
                v = row.get(c)
                cells.append("%12s" % ("-" if v is None else
                                       ("%.3f" % v if isinstance(v, float) else v)))
            print("  %-8s %s" % (name, " ".join(cells)), file=out)
    for c in r["checks"]:
        print("  %s %s%s" % ("ok  " if c["ok"] else "FAIL", c["check"],
                             (": " + c["detail"]) if c["detail"] and not c["ok"] else ""),
              file=out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build"), help="meson build dir")
    ap.add_argument("--openenvd", help="the daemon (default: BUILD/src/daemon/openenvd)")
    ap.add_argument("--shim", help="the shim (default: BUILD/src/sandbox/shim/openenvd-shim)")
    ap.add_argument("--units", type=int, default=4)
    ap.add_argument("--episodes", type=int, default=5, help="per unit")
    ap.add_argument("--openenv-real", default=OPENENV_REAL)
    ap.add_argument("--pylib", help="an unpacked pylib/ to use instead of unpacking one")
    ap.add_argument("--json", help="write the report here")
    ap.add_argument("--keep", action="store_true", help="keep the work dir")
    args = ap.parse_args()
    if args.units < 1 or args.episodes < 1:
        ap.error("--units and --episodes must be at least 1")
    # A test runner's timeout: the units are still stopped (run()'s finally).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    try:
        report = run(args)
    except Missing as e:
        print("fleet: %s" % e, file=sys.stderr)
        return 3
    print_report(report, sys.stdout)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1, sort_keys=True)
    return 0 if all(c["ok"] for c in report["checks"]) else 1


if __name__ == "__main__":
    sys.exit(main())
