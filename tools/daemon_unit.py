#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""One openenvd as the fleet driver and the live tests drive it: its own port,
state dir, token and uid block, the JSON log, the control API, GET /metrics
parsed strictly (promtext), its cgroup subtree's processes and memory.

    u = Unit(openenvd, shim, manifest, workdir, "unit000")
    u.start(); u.wait_ready(); u.call("GET", "/info"); u.metrics(); u.stop()

Used by tools/fleet.py and the live tests (tests/integration/livelib.py takes
its helpers from here).
"""
import http.client
import json
import os
import random
import secrets
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import promtext  # noqa: E402


_TAKEN = set()


def free_port():
    """A free port of 127.0.0.1 below the ephemeral range, never the same twice in
    this process: a port the kernel hands out for bind(0) is also one it may give
    any outgoing connection (the driver's own polls of the other daemons) before
    the daemon it was picked for listens on it (a 64-unit fleet lost a unit to
    EADDRINUSE that way)."""
    try:
        lo = int(read("/proc/sys/net/ipv4/ip_local_port_range", "32768").split()[0])
    except ValueError:
        lo = 32768
    rng = random.SystemRandom()
    for _ in range(200):
        port = rng.randrange(min(10000, lo - 1), lo)
        if port in _TAKEN:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _TAKEN.add(port)
        return port
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read(path, default=None):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError:
        return default


def poll(cond, what, timeout, interval=0.01, max_interval=0.2):
    """cond() until it returns a true value (returned); TimeoutError past timeout."""
    end = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > end:
            raise TimeoutError("timed out waiting for " + what)
        time.sleep(interval)
        interval = min(interval * 2, max_interval)


def cgroup2_mount():
    """Where the cgroup2 hierarchy is mounted (hybrid: /sys/fs/cgroup/unified)."""
    for line in (read("/proc/self/mountinfo") or "").splitlines():
        left, _, right = line.partition(" - ")
        if right.startswith("cgroup2 "):
            return left.split()[4]
    return "/sys/fs/cgroup"


def subtree_roots(pid):
    """A daemon's cgroup subtree in each hierarchy: {"unified": dir, "memory": dir,
    "pids": dir, "freezer": dir, "cpu": dir, "devices": dir} as far as they exist (the daemon
    itself sits in <subtree>/control of each)."""
    roots = {}
    for line in (read("/proc/%d/cgroup" % pid) or "").splitlines():
        _, ctrls, path = line.split(":", 2)
        if not path.endswith("/control"):
            continue
        base = path[: -len("/control")]
        if ctrls == "":
            roots["unified"] = cgroup2_mount() + base
        for c in ("pids", "memory", "freezer", "cpu", "devices"):
            if c in ctrls.split(","):
                roots[c] = "/sys/fs/cgroup/%s%s" % (ctrls, base)
    return roots


class Unit:
    """One openenvd on one manifest: own port, state dir, token; JSON log."""

    def __init__(self, openenvd, shim, manifest, workdir, name, args=(), env=None,
                 nofile=None, start_timeout=60):
        self.name = name
        self.manifest = manifest
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
        self.cg = {}  # its cgroup subtree per hierarchy (subtree_roots())

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
            # In the unit's own directory (an image's WORKDIR), never the
            # caller's: it may be below a /tmp the containers do not see.
            self.proc = subprocess.Popen(self.cmd, stdout=o, stderr=e, stdin=subprocess.DEVNULL,
                                         env=self.env, preexec_fn=limits,
                                         cwd=os.path.dirname(os.path.abspath(self.manifest)))
        self.pid = self.proc.pid

    def wait_ready(self, timeout=60):
        """Until the daemon printed "openenvd listening" (its listener is up;
        "openenvd ready" follows once an episode can serve)."""
        poll(lambda: "openenvd listening" in (read(self.out_path) or "") or
             self.proc.poll() is not None, "%s: openenvd listening" % self.name, timeout)
        if self.proc.poll() is not None:
            raise RuntimeError("%s: openenvd exited %s:\n%s" % (self.name, self.proc.returncode,
                                                              self.tail()))
        self.cg = subtree_roots(self.pid)

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
        for d, _, files in os.walk(self.cg["unified"]):
            if "cgroup.procs" in files:
                pids += [int(p) for p in (read(os.path.join(d, "cgroup.procs")) or "").split()]
        return pids

    def subtree_memory(self):
        """Bytes charged to the subtree: v1 memory hierarchy on a hybrid host, else v2."""
        if "memory" in self.cg:
            v = read(self.cg["memory"] + "/memory.usage_in_bytes")
        else:
            v = read(self.cg["unified"] + "/memory.current")
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
