# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the live tests share: checks, polling, one openenvd per case, the
TAP runner. Standard library only (Debian's /usr/bin/python3).

No sleep synchronises anything: every wait polls a condition with a deadline.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.request

# One openenvd's helpers, shared with tools/fleet.py (tools/daemon_unit.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import daemon_unit  # noqa: E402
from daemon_unit import free_port, read, subtree_roots  # noqa: E402,F401 - re-exported

TOKEN = "live-test-token"


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


def poll(cond, what, timeout=30.0, interval=0.01):
    """Polls cond() until it returns a true value (returned) or the deadline passes."""
    try:
        return daemon_unit.poll(cond, what, timeout, interval, max_interval=0.1)
    except TimeoutError as e:
        raise Failure(str(e)) from None


def descendants(pid):
    """Every process below pid, from /proc's parent links."""
    children = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            stat = read("/proc/%s/stat" % p)
            if stat:
                ppid = int(stat.rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(p))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def make_workdir(base=None):
    d = tempfile.mkdtemp(prefix="openenvd-live.", dir=base)
    os.chmod(d, 0o711)  # containers resolve mount sources below it as other uids
    return d


def http(method, url, body=None, headers=None, timeout=120):
    """(status, parsed JSON or text) of one request, errors included."""
    data = json.dumps(body).encode() if body is not None else (b"" if method == "POST" else None)
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json", **(headers or {})})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(req, timeout=timeout) as r:
            raw, status = r.read(), r.status
    except urllib.error.HTTPError as e:
        raw, status = e.read(), e.code
    try:
        return status, json.loads(raw or b"null")
    except ValueError:
        return status, raw.decode("utf-8", "replace")


class Daemon:
    """One openenvd (own state dir, own port); stop() ends it and removes its state.

    manifest: --manifest (None: none given); command: the env server's
    command after `--`; env/cwd: the daemon's environment and working
    directory (an image's ENV and WORKDIR; by default the manifest's
    directory, as in an OpenEnv image, else /: never the test's own, which
    may be below a /tmp the containers do not see); token_env: pass the token as
    OPENENVD_TOKEN instead of --token-file; start_timeout: --start-timeout
    (a liveness bound: how long an env server may take to listen).
    """

    def __init__(self, openenvd, shim, manifest=None, args=(), key=None, model_port=None,
                 command=None, env=None, cwd=None, token_env=False, ready_timeout=30,
                 start_timeout=60):
        self.dir = make_workdir()
        self.state = os.path.join(self.dir, "state")
        self.port = free_port()
        self.out = os.path.join(self.dir, "daemon.out")
        self.log = os.path.join(self.dir, "daemon.log")
        self.token = TOKEN
        cmd = [openenvd, "--state", self.state, "--port", str(self.port), "--listen", "127.0.0.1",
               "--shim", shim, "--start-timeout", str(start_timeout)]
        if manifest:
            cmd += ["--manifest", manifest]
        env = dict(os.environ if env is None else env)
        if token_env:
            env["OPENENVD_TOKEN"] = TOKEN
        else:
            with open(os.path.join(self.dir, "token"), "w") as f:
                f.write(TOKEN + "\n")
            cmd += ["--token-file", os.path.join(self.dir, "token")]
        if key:
            self.key_file = os.path.join(self.dir, "model-key")
            with open(self.key_file, "w") as f:
                f.write(key + "\n")
            cmd += ["--model-url", "127.0.0.1:%d" % model_port, "--model-key-file", self.key_file]
        cmd += list(args)
        if command:
            cmd += ["--"] + list(command)
        if cwd is None:
            cwd = os.path.dirname(os.path.abspath(manifest)) if manifest else "/"
        with open(self.out, "w") as o, open(self.log, "w") as e:
            self.proc = subprocess.Popen(cmd, stdout=o, stderr=e, stdin=subprocess.DEVNULL,
                                         env=env, cwd=cwd)
        self.pid = self.proc.pid
        try:
            poll(lambda: "openenvd listening" in (read(self.out) or "") or
                 self.proc.poll() is not None, "openenvd listening", ready_timeout)
            check(self.proc.poll() is None, "openenvd exited: " + self.tail())
        except Exception:
            self.stop()
            raise
        self.cg = subtree_roots(self.pid)  # subtree root per hierarchy

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def tail(self, n=30):
        return "\n".join((read(self.log) or "").splitlines()[-n:])

    def request(self, method, path, body=None, token=True, timeout=120):
        headers = {"Authorization": "Bearer " + self.token} if token else {}
        return http(method, self.url + path, body, headers, timeout)

    def ok(self, method, path, body=None):
        status, j = self.request(method, path, body)
        check(status == 200, "%s %s -> %s %s\n%s" % (method, path, status, j, self.tail()))
        return j

    def phase(self):
        return self.ok("GET", "/info")["phase"]

    def wait_verdict(self, timeout=120):
        return poll(lambda: (lambda v: v if v["verdict"] else None)(self.ok("GET", "/verdict?wait=1")),
                    "a verdict", timeout)

    def ws_file(self, eid, name):
        # The workspace lives in the daemon's private mount namespace.
        return "/proc/%d/root%s/episodes/%s/workspace/merged/%s" % (self.pid, self.state, eid, name)

    def wait_ws_file(self, eid, name, timeout=60):
        # A tuple: an empty file is there, too.
        return poll(lambda: (lambda c: (c,) if c is not None else None)(
            read(self.ws_file(eid, name))), "/workspace/" + name, timeout)[0]

    def cg_file(self, hierarchy, rel, name):
        return "%s/%s/%s" % (self.cg[hierarchy], rel, name)

    def member_cgroup(self, container):
        """The live episode's leaf of a container (zones/<zone>/s<slot>/<name>)."""
        return self.ok("GET", "/info")["members"][container]["cgroup"]

    def zone_cgroup(self, container):
        """The live episode's part of the container's zone (zones/<zone>/s<slot>)."""
        return os.path.dirname(self.member_cgroup(container))

    def member_pids(self, container):
        """Every pid in the live episode's leaf of a container."""
        text = read(self.cg_file("unified", self.member_cgroup(container), "cgroup.procs")) or ""
        return [int(p) for p in text.split()]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)
        return self.proc.returncode


def run_cases(cases, setup=None, teardown=None):
    """TAP over cases [(name, fn)], OPENENVD_LIVE_ONLY=<substring of fn's name>
    picks some. skip_reason: a string (all skipped; a failure under CI=true)."""
    only = os.environ.get("OPENENVD_LIVE_ONLY")
    cases = [c for c in cases if not only or only in c[1].__name__]
    print("1..%d" % len(cases))
    failed = 0
    t_all = time.monotonic()
    try:
        if setup:
            setup()
        for i, (name, fn) in enumerate(cases, 1):
            t0 = time.monotonic()
            try:
                fn()
                print("ok %d - %s" % (i, name))
            except Exception as e:  # noqa: BLE001 - one case's failure is reported, not fatal
                failed += 1
                print("not ok %d - %s" % (i, name))
                detail = str(e) if isinstance(e, Failure) else traceback.format_exc()
                for line in detail.splitlines():
                    print("# " + line)
            print("# %.1f s" % (time.monotonic() - t0))
            sys.stdout.flush()
    finally:
        if teardown:
            teardown()
    print("# total %.1f s" % (time.monotonic() - t_all))
    return 1 if failed else 0


def skip_all(cases, reason):
    """Every case skipped (outside CI) or failed (CI=true: a skip is a failure)."""
    ci = os.environ.get("CI") == "true"
    print("1..%d" % len(cases))
    for i, (name, _) in enumerate(cases, 1):
        if ci:
            print("not ok %d - %s # %s" % (i, name, reason))
        else:
            print("ok %d - %s # SKIP %s" % (i, name, reason))
    return 1 if ci else 0
