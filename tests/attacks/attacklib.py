# SPDX-License-Identifier: LGPL-2.1-or-later
"""Shared by the attack suite (tests/attacks/test_*.py): a real openenvd on a
real image, driven from outside, and the census of what it must not leave.

Every test file is one seam, written from the attacker's side:

    test_X.py OPENENVD SHIM OPENENVCTL

It builds its cases with attacklib.Run (a private work dir and a copy of the
attack image: scripts/ci-rootfs.py's Debian root plus tests/attacks/bin at
/opt/attack), starts daemons with attacklib.Daemon, and hands its cases to
attacklib.main(), which prints TAP. After every case each daemon it started
(stopped, SIGKILLed or failed at start) must have left nothing behind: no cgroup of its subtree, no process in its
host uid range, no mount of its state dir in any mount namespace, nothing in
its state dir (Daemon.stop() asserts it).

No sleep synchronises anything: every wait polls a condition with a deadline.
"""
import base64
import ctypes
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.request

OPENENVD, SHIM, OPENENVCTL = (os.path.abspath(p) for p in sys.argv[1:4])
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
# The generic pieces of every live test: tests/integration/livelib.py.
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))
from livelib import Failure, check, descendants, free_port, poll, read  # noqa: E402,F401
TOKEN = "attack-orchestrator-token"
AGENT_TOKEN = "attack-agent-token"
ATTACKER = ["/usr/bin/python3", "/opt/attack/attacker.py"]
# The whole host's / as the containers' root (a host's default is the host
# view, docs/SANDBOX.md): the harshest root, for seams that must hold even there.
UNFILTERED = ["--host-root-unfiltered", "attack test: the harshest root"]


class Background:
    """A call running in a thread (a control request left pending, say);
    result() waits for it and returns its value or raises its exception."""

    def __init__(self, fn, *args, **kwargs):
        import threading
        self.value, self.error = None, None

        def body():
            try:
                self.value = fn(*args, **kwargs)
            except BaseException as e:  # noqa: BLE001 - handed to result()
                self.error = e
        self.thread = threading.Thread(target=body, daemon=True)
        self.thread.start()

    def alive(self):
        return self.thread.is_alive()

    def result(self, timeout=120):
        self.thread.join(timeout)
        if self.thread.is_alive():
            raise Failure("a background call did not return within %gs" % timeout)
        if self.error:
            raise self.error
        return self.value


def argv(*parts, host_root=None):
    """A YAML flow sequence of an attacker's argv: role, then MOVE ARGS pairs.
    With host_root (a Run), the containers' root is the host's (the default
    host view, or the whole / under --host-root-unfiltered) and the program is
    reached at its host path inside the run's image (the view binds the
    directory argv names)."""
    out = list(ATTACKER)
    if host_root:
        out[1] = host_root.rootfs + out[1]
    for p in parts:
        out.append(p if isinstance(p, str) else json.dumps(p))
    return "[" + ", ".join(json.dumps(a) for a in out) + "]"


def manifest_head(name, kill_deadline_s=5, assets=()):
    """The lines every attack unit's manifest opens with, down to `zones:`
    (a unit on port 8000; kill_deadline_s None: the daemon's default;
    assets: (name, path) pairs, its privileged_assets). The zones follow,
    indented four spaces (zones())."""
    deadline = "  kill_deadline_s: %s\n" % kill_deadline_s if kill_deadline_s else ""
    if assets:
        deadline += "  privileged_assets:\n" + "".join("    %s: %s\n" % a for a in assets)
    return "spec_version: 1\nname: %s\nport: 8000\nopenenvd:\n%s  zones:\n" % (name, deadline)


def zones(env, harness=None, service=None, observers=(), env_extra="", expose=True):
    """The zones of an attack unit, below manifest_head(): the agent zone's
    env (argv: a YAML flow sequence, e.g. argv()'s) with env_extra (YAML
    lines of its own, at its keys' indentation) and an optional harness;
    an optional hidden service `svc` on 8080 (exposed as svc.local:80
    unless expose is false); observers, each (name, {key: YAML text}) in
    order, e.g. ("grader", {"argv": ..., "phases": "[grading]"})."""
    y = "    agent:\n      containers:\n        env:\n          argv: %s\n%s" % (env, env_extra)
    if harness:
        y += "        harness:\n          argv: %s\n" % harness
    if service:
        y += ("    services:\n      containers:\n        svc:\n          argv: %s\n"
              "          port: 8080\n" % service)
        if expose:
            y += "          expose: {host: svc.local, port: 80}\n"
    if observers:
        y += "    observers:\n      containers:\n"
        for name, fields in observers:
            y += "        %s:\n" % name
            y += "".join("          %s: %s\n" % kv for kv in fields.items())
    return y


def agent_manifest(run, name, harness=False):
    """A unit of an attacker env on port 8000 (and an idle harness): the
    smallest one an attack from the env needs."""
    return run.manifest(manifest_head(name) +
                        zones(argv("env", "8000"), argv("harness") if harness else None))


# --- the image -------------------------------------------------------------------

class Run:
    """One test file's private dir (0711) and attack image."""

    def __init__(self):
        # Not /tmp: every container has a /tmp of its own, and on the host
        # root case the image below this dir must be reachable.
        self.dir = tempfile.mkdtemp(prefix="openenvd-attack.", dir="/var/tmp")
        os.chmod(self.dir, 0o711)
        self.rootfs = os.path.join(self.dir, "rootfs")
        cached = subprocess.run([os.path.join(REPO, "scripts/ci-rootfs.py")], check=True,
                                capture_output=True, text=True).stdout.strip()
        # Hard links: the cached image is never written (every zone's root
        # is read-only, and the host side only adds files below /opt).
        subprocess.run(["cp", "-al", cached, self.rootfs], check=True)
        self.install("tests/attacks/bin", "/opt/attack")
        self.n = 0
        self.daemons = []

    def install(self, src, image_path):
        """Copies a directory of the repository into the image."""
        dst = self.rootfs + image_path
        shutil.copytree(os.path.join(REPO, src), dst,
                        ignore=shutil.ignore_patterns("__pycache__"))
        for root, dirs, files in os.walk(dst):
            os.chmod(root, 0o755)
            for f in files:
                os.chmod(os.path.join(root, f), 0o644)
        return dst

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def manifest(self, text, name=None, assets=None):
        """Writes a manifest (and its assets: {relpath: content}) into a fresh dir."""
        self.n += 1
        d = self.path("unit-%d" % self.n)
        os.makedirs(d)
        os.chmod(d, 0o755)
        for rel, content in (assets or {}).items():
            p = os.path.join(d, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write(content)
        path = os.path.join(d, name or "openenv.yaml")
        with open(path, "w") as f:
            f.write(text)
        return path

    def reap_daemons(self):
        """Daemons a case did not stop (it failed midway): killed, and named."""
        left = [d for d in self.daemons if d.proc.poll() is None]
        for d in left:
            d.kill()
        self.daemons = []
        return left

    def close(self):
        self.reap_daemons()
        shutil.rmtree(self.dir, ignore_errors=True)


# --- the census ------------------------------------------------------------------

def pids_with_uid_in(lo, hi):
    """Live processes whose real, effective, saved or fs uid is in [lo, hi].
    Zombies are dead: a SIGKILLed daemon's are reaped by whoever adopted
    them (this machine's PID 1 does so lazily)."""
    found = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        status = (read("/proc/%s/status" % p) or "").splitlines()
        if any(line.startswith("State:") and "Z" in line.split()[1] for line in status):
            continue
        for line in status:
            if line.startswith("Uid:"):
                if any(lo <= int(u) <= hi for u in line.split()[1:]):
                    found.append(int(p))
    return found


def mounts_below(prefix):
    """Mount points below prefix in any mount namespace on the host."""
    found = set()
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        for line in (read("/proc/%s/mountinfo" % p) or "").splitlines():
            fields = line.split()
            if len(fields) > 4 and (fields[4] == prefix or fields[4].startswith(prefix + "/")):
                found.add((int(p), fields[4]))
    return found


_libc = ctypes.CDLL(None, use_errno=True)
SYS_KCMP, KCMP_FILE = 312, 0  # x86_64


def same_open_file(pid1, fd1, pid2, fd2):
    """kcmp(2): do the two fds refer to one open file description?"""
    return _libc.syscall(SYS_KCMP, pid1, pid2, KCMP_FILE, fd1, fd2) == 0


def connect_through(dir, name):
    """Connects (as root, here) to dir/name, a path too long for sun_path."""
    fd = os.open(dir, os.O_PATH | os.O_DIRECTORY)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(2)
        s.connect("/proc/self/fd/%d/%s" % (fd, name))
        return True
    except OSError:
        return False
    finally:
        s.close()
        os.close(fd)


def fds_of(pid):
    try:
        return [int(f) for f in os.listdir("/proc/%d/fd" % pid)]
    except OSError:
        return []


# --- the daemon ---------------------------------------------------------------------

class Daemon:
    """One openenvd; stop() shuts it down and asserts that nothing is left."""

    def __init__(self, run, manifest, args=(), rootfs=True, state=None, port=None,
                 wait=True, nofile=None, agent_token=False, first_episode=True, env=None,
                 nofile_hard=False, cwd=None):
        self.run = run
        self.dir = tempfile.mkdtemp(prefix="d.", dir=run.dir)
        os.chmod(self.dir, 0o711)
        self.state = state or os.path.join(self.dir, "state")
        self.port = port or free_port()
        self.out = os.path.join(self.dir, "daemon.out")
        self.log = os.path.join(self.dir, "daemon.log")
        self.manifest = manifest
        with open(os.path.join(self.dir, "token"), "w") as f:
            f.write(TOKEN + "\n")
        cmd = [OPENENVD, "--manifest", manifest, "--state", self.state, "--port",
               str(self.port), "--listen", "127.0.0.1", "--shim", SHIM, "--token-file",
               os.path.join(self.dir, "token"), "--start-timeout", "30"]
        if agent_token:
            with open(os.path.join(self.dir, "agent-token"), "w") as f:
                f.write(AGENT_TOKEN + "\n")
            cmd += ["--agent-token-file", os.path.join(self.dir, "agent-token")]
        if rootfs:
            cmd += ["--rootfs", run.rootfs if rootfs is True else rootfs]
        cmd += list(args)
        self.cmd = cmd

        def limits():
            if nofile:
                import resource
                # The soft limit only (containers still get their own),
                # or with nofile_hard both: what the daemon may never raise.
                hard = nofile if nofile_hard else resource.getrlimit(resource.RLIMIT_NOFILE)[1]
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, hard))
        with open(self.out, "w") as o, open(self.log, "w") as e:
            # In the unit's own directory, as an image's WORKDIR: on a host
            # root the env starts where openenvd started, and the test's own
            # directory may be below a /tmp the containers do not see.
            self.proc = subprocess.Popen(cmd, stdout=o, stderr=e, stdin=subprocess.DEVNULL,
                                         preexec_fn=limits, cwd=cwd or os.path.dirname(manifest),
                                         env={**os.environ, **(env or {})})
        self.pid = self.proc.pid
        run.daemons.append(self)
        self.cg = {}
        self.uids = None
        if wait:
            self.wait_ready(first_episode)

    def wait_ready(self, first_episode=True):
        """Until it listens (and, with first_episode, its first episode is
        out of provisioning)."""
        try:
            poll(lambda: "openenvd listening" in (read(self.out) or "") or
                 self.proc.poll() is not None, "openenvd listening", 60)
            check(self.proc.poll() is None, "openenvd exited: " + self.tail())
        except Exception:
            self.kill()
            raise
        self.cg = self.cgroup_roots()
        if first_episode and "--no-initial-episode" not in self.cmd:
            # "ready" means listening; the first episode provisions meanwhile.
            poll(lambda: self.phase() != "provisioning", "the first episode", 60)
        m = re.search(r"host uids (\d+)-(\d+)", read(self.log) or "")
        check(m, "the daemon logs its host uid range")
        self.uids = (int(m.group(1)), int(m.group(2)))

    def cgroup_roots(self):
        """Its subtree's root per hierarchy: {"unified": path, "pids": path, ...}."""
        roots = {}
        for line in (read("/proc/%d/cgroup" % self.pid) or "").splitlines():
            _, ctrls, path = line.split(":", 2)
            if not path.endswith("/control"):
                continue
            base = path[: -len("/control")]
            if ctrls == "":
                roots["unified"] = "/sys/fs/cgroup/unified" + base
            for c in ("pids", "memory", "freezer", "cpu"):
                if c in ctrls.split(","):
                    roots[c] = "/sys/fs/cgroup/%s%s" % (ctrls, base)
        return roots

    def tail(self, n=40):
        return "\n".join((read(self.log) or "").splitlines()[-n:])

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def request(self, method, path, body=None, token=TOKEN, timeout=60, raw_body=None):
        data = raw_body if raw_body is not None else (
            json.dumps(body).encode() if body is not None else (b"" if method == "POST" else None))
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = "Bearer " + token
        req = urllib.request.Request(self.url(path), data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                raw, status = r.read(), r.status
        except urllib.error.HTTPError as e:
            raw, status = e.read(), e.code
        try:
            return status, json.loads(raw or b"null")
        except ValueError:
            return status, raw.decode("utf-8", "replace")

    def ok(self, method, path, body=None, timeout=60):
        status, j = self.request(method, path, body, timeout=timeout)
        check(status == 200, "%s %s -> %s %s\n%s" % (method, path, status, j, self.tail()))
        return j

    def info(self):
        return self.ok("GET", "/info")

    def phase(self):
        return self.info()["phase"]

    def wait_phase(self, phase, timeout=60):
        return poll(lambda: self.phase() == phase, "phase " + phase, timeout)

    def wait_verdict(self, timeout=120):
        """The live episode's verdict, once it is final."""
        return poll(lambda: (lambda v: v if v["verdict"] else None)(self.ok("GET", "/verdict?wait=1")),
                    "a verdict", timeout)

    def healthz(self, timeout=5):
        """True when GET /healthz (no token) is answered 200."""
        try:
            return self.request("GET", "/healthz", token=None, timeout=timeout)[0] == 200
        except OSError:
            return False

    def attack(self, move, timeout=60, **args):
        """Runs a move in the live env container (attacker.py env), over the relay."""
        status, j = self.request("POST", "/attack", {"move": move, "args": args},
                                 timeout=timeout)
        check(status == 200, "attack %s -> %s %s\n%s" % (move, status, j, self.tail()))
        return j

    def logs(self, container, episode=None):
        q = "/logs?container=%s" % container + ("&episode_id=%s" % episode if episode else "")
        status, text = self.request("GET", q)
        check(status == 200, "GET %s -> %s" % (q, status))
        return text if isinstance(text, str) else json.dumps(text)

    def inside(self, rel):
        """A path of the daemon's private state (its own mount namespace)."""
        return "/proc/%d/root%s/%s" % (self.pid, self.state, rel)

    def workspace(self, name, episode=None):
        eid = episode or self.info()["episode_id"]
        return self.inside("episodes/%s/workspace/merged/%s" % (eid, name))

    def wait_workspace_json(self, name, timeout=60, episode=None):
        """A harness's report (attacker.py writes them atomically)."""
        path = self.workspace(name, episode)
        text = poll(lambda: read(path), "/workspace/" + name, timeout)
        return json.loads(text)

    def zone_reports(self, moves, eid):
        """What the env (its answer to each move), the harness (the report it
        wrote for each in the workspace) and the hidden service (its
        /results, read by the env at svc.local) made of moves (MOVE, ARGS
        pairs, each zone's argv holding the same): {"env", "harness", "svc"}."""
        out = {"env": [], "harness": []}
        for i in range(0, len(moves), 2):
            out["env"].append(self.attack(moves[i], **moves[i + 1]))
            out["harness"].append(self.wait_workspace_json(
                "harness.%d.%s.json" % (i // 2, moves[i]), episode=eid))
        r = self.attack("http", url="http://svc.local:80/results")
        check(r.get("status") == 200, "the env reads its service's results: %s" % r)
        out["svc"] = json.loads(r["body"])
        return out

    def member_pids(self):
        """Host pids of every process in the unit's zones."""
        pids = []
        root = self.cg.get("unified")
        for d, _, files in os.walk(os.path.join(root, "zones")):
            if "cgroup.procs" in files:
                pids += [int(x) for x in (read(os.path.join(d, "cgroup.procs")) or "").split()]
        return pids

    def container_pids(self, name):
        """Host pids in one container's leaf cgroup (the live episode's)."""
        leaf = self.info()["members"][name]["cgroup"]
        return [int(x) for x in
                (read(os.path.join(self.cg["unified"], leaf, "cgroup.procs")) or "").split()]

    def principal(self, name):
        """Host pid of a container's principal: the shim's child."""
        pids = self.container_pids(name)

        def ppid(p):
            return int((read("/proc/%d/stat" % p) or ") x 0").rsplit(")", 1)[1].split()[1])
        kids = [p for p in pids if ppid(p) in pids]
        check(kids, "%s has a principal (pids %s)" % (name, pids))
        return min(kids)

    def rss_kb(self):
        for line in (read("/proc/%d/status" % self.pid) or "").splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    def cpu_ticks(self):
        f = (read("/proc/%d/stat" % self.pid) or "").rsplit(")", 1)[1].split()
        return int(f[11]) + int(f[12])

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self, sig=signal.SIGTERM, deadline=30.0):
        """Signals the daemon and returns (exit status, seconds to exit); then
        asserts that nothing of it is left."""
        t0 = time.monotonic()
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(deadline)
            except subprocess.TimeoutExpired:
                self.kill()
                raise Failure("openenvd did not exit within %gs of signal %d\n%s"
                              % (deadline, sig, self.tail()))
        elapsed = time.monotonic() - t0
        self.assert_nothing_left()
        return self.proc.returncode, elapsed

    def leftovers(self):
        """What a stopped daemon left: [] when nothing."""
        left = []
        for h, path in self.cg.items():
            if os.path.exists(path):
                left.append("cgroup %s" % path)
        if self.uids:
            for p in pids_with_uid_in(*self.uids):
                left.append("process %d (%s) in uid range %s" % (
                    p, (read("/proc/%d/cmdline" % p) or "").replace("\0", " ")[:80], self.uids))
        for p in descendants(self.pid) if self.proc.poll() is None else []:
            left.append("process %d still below the daemon" % p)
        for pid, m in mounts_below(self.state):
            left.append("mount %s (in the namespace of pid %d)" % (m, pid))
        try:
            entries = os.listdir(self.state)
        except FileNotFoundError:
            entries = []
        if entries:
            left.append("state dir %s holds %s" % (self.state, entries))
        return left

    def assert_nothing_left(self, timeout=5.0):
        # The kernel finishes a killed process's exit asynchronously.
        try:
            poll(lambda: not self.leftovers(), "nothing left", timeout)
        except Failure:
            raise Failure("left behind: %s" % self.leftovers())


# --- TAP -------------------------------------------------------------------------------

def main(cases, need_run=True, install=()):
    """Runs cases [(name, fn(run))] and prints TAP. Each case cleans up after
    itself (its daemons' stop() asserts nothing is left). install: more
    (repository dir, image path) pairs for the image."""
    print("1..%d" % len(cases))
    only = os.environ.get("OPENENVD_ATTACK_ONLY")
    if os.geteuid() != 0:
        for i, (name, _) in enumerate(cases, 1):
            print("ok %d - %s # SKIP needs root" % (i, name))
        return 0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    run = Run() if need_run else None
    for src, image_path in install:
        run.install(src, image_path)
    failed = 0
    try:
        for i, (name, fn) in enumerate(cases, 1):
            if only and only not in fn.__name__:
                print("ok %d - %s # SKIP not selected (OPENENVD_ATTACK_ONLY)" % (i, name))
                continue
            t0 = time.monotonic()
            try:
                fn(run)
                started = list(run.daemons) if run else []
                left = run.reap_daemons() if run else []
                check(not left, "the case left %d daemon(s) running" % len(left))
                # Every daemon of the case, also one that was SIGKILLed or
                # failed to start and was never stop()ped: nothing of it left.
                for d in started:
                    d.assert_nothing_left()
                print("ok %d - %s" % (i, name))
            except Exception as e:  # noqa: BLE001 - one case's failure is reported, not fatal
                failed += 1
                if run:
                    run.reap_daemons()
                print("not ok %d - %s" % (i, name))
                detail = str(e) if isinstance(e, Failure) else traceback.format_exc()
                for line in detail.splitlines():
                    print("# " + line)
            print("# %.1f s" % (time.monotonic() - t0))
            sys.stdout.flush()
    finally:
        if run:
            run.close()
    return 1 if failed else 0


class WsSession:
    """The orchestrator's OpenEnv WebSocket session on a daemon's /ws, as a
    stock client opens it: its lane from the 101 (X-Openenvd-Lane, None
    without one), then call() sends one message and returns the answer."""

    def __init__(self, d, timeout=60):
        self.sock = socket.create_connection(("127.0.0.1", d.port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(("GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                           "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                           "Sec-WebSocket-Key: %s\r\nAuthorization: Bearer %s\r\n\r\n"
                           % (key, TOKEN)).encode())
        self.f = self.sock.makefile("rb")
        status = self.f.readline()
        headers = {}
        while True:
            line = self.f.readline().decode("latin-1").strip()
            if not line:
                break
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        check(b" 101 " in status, "the WebSocket handshake: %r" % status)
        lane = headers.get("x-openenvd-lane")
        self.lane = int(lane) if lane is not None else None

    def send(self, obj):
        data, mask = json.dumps(obj).encode(), os.urandom(4)
        n = len(data)
        size = (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n)
                if n < 65536 else bytes([0x80 | 127]) + struct.pack(">Q", n))
        self.sock.sendall(bytes([0x81]) + size + mask +
                          bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def recv(self):
        """The next message (JSON), or {"close": code} at the session's end."""
        while True:
            head = self.f.read(2)
            if len(head) < 2:
                return {"close": None}
            n = head[1] & 0x7F
            if n == 126:
                n = struct.unpack(">H", self.f.read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self.f.read(8))[0]
            data = self.f.read(n)
            if head[0] & 0x0F == 8:
                return {"close": struct.unpack(">H", data[:2])[0] if len(data) >= 2 else None}
            if head[0] & 0x0F == 1:
                return json.loads(data)

    def call(self, obj):
        self.send(obj)
        return self.recv()

    def close(self):
        # The file keeps the socket open until it is closed too.
        self.f.close()
        self.sock.close()


def note(text):
    """A TAP comment (a measurement shown with the case, never asserted)."""
    print("# " + text)
    sys.stdout.flush()


class UnixCanary:
    """A unix socket on the host that counts whoever connects to it: a
    root-only one (0600 in a 0700 dir) or a world-connectable one (0777)."""

    def __init__(self, path, mode=0o600, dir_mode=0o700):
        import threading
        os.makedirs(os.path.dirname(path), exist_ok=True)
        os.chmod(os.path.dirname(path), dir_mode)
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        os.chmod(path, mode)
        self.sock.listen(64)
        self.hits = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.hits += 1
            try:
                c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 6\r\n\r\ncanary")
            except OSError:
                pass
            c.close()

    def close(self):
        self.sock.close()
        try:
            os.unlink(self.path)
        except OSError:
            pass
