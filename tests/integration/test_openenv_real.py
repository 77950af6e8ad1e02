#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Live tests with the real OpenEnv, unmodified (issue 11):

    test_openenv_real.py OPENENVD SHIM

OpenEnv's own echo_env (an MCP environment) and connect4_env (a game that
ends with done) run isolated under openenvd, installed the way their images
lay them out (the env's code in <root>/<env>/app/env, its libraries beside
it), started the way their images start them: openenvd in the image's
WORKDIR with the image's ENV, the env's own openenv.yaml or none, the
image's CMD after `--`. OpenEnv's unmodified client drives them
(openenv_client.py); the only thing it is given is a base URL carrying the
credentials, http://openenv:TOKEN@127.0.0.1:PORT.

The newer fixture (../shared/openenv-real-next) adds four envs, each with
its own case, listed only when the fixture has the env (the older one has
none of them: a case for a missing env is not listed, never skipped):
maze_env from its own openenv.yaml (an episode to done, and its one-session
cap: the second client gets OpenEnv's CAPACITY_REACHED through openenvd);
chess_env and carla_env (mock mode), which import only by package path
(`-- uvicorn <env>.server.app:app` from a directory of envs); calendar_env,
HTTP only, whose own client's request headers (x-database-id,
x-access-token) must reach it unchanged while openenvd's Authorization
never does.

The fixture is $OPENENVD_OPENENV_REAL, by default ../shared/openenv-real
next to the repository (see its README.md): absent, every case is skipped,
and fails under CI=true. Needs root (skipped otherwise) and Debian's
python3-numpy (connect4_env, maze_env) and python3-dateutil (calendar_env:
its case fails without it). Output is TAP.
"""
import base64
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from livelib import Daemon, check, poll, read, http, run_cases, skip_all  # noqa: E402
import livelib  # noqa: E402

OPENENVD, SHIM = (os.path.abspath(p) for p in sys.argv[1:3])
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
FIXTURE = os.path.abspath(os.environ.get("OPENENVD_OPENENV_REAL")
                          or os.path.join(REPO, "..", "shared", "openenv-real"))
CLIENT = os.path.join(HERE, "openenv_client.py")
PY = "/usr/bin/python3"  # Debian's: what the fixture's library tree is built for
TOKEN = livelib.TOKEN
AGENT_TOKEN = "live-agent-token"
CANARY = "canary-" + os.urandom(8).hex()
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# A liveness bound, not a timing: an OpenEnv server imports ~2500 modules
# before it listens (about 15 s here), far longer on a loaded machine.
START_TIMEOUT = 300

S = {}  # the install root and the daemons cases share


def base_url(d, token=TOKEN):
    """The one line that points the stock client at a unit."""
    return "http://openenv:%s@127.0.0.1:%d" % (token, d.port) if token else d.url


def client(scenario, base, *args, timeout=900):
    env = {"PATH": SYSTEM_PATH, "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONPATH": ":".join([os.path.join(FIXTURE, "envs"), os.path.join(FIXTURE, "src"),
                                   os.path.join(S["root"], "pylib")])}
    r = subprocess.run([PY, CLIENT, scenario, base] + [str(a) for a in args],
                       capture_output=True, text=True, timeout=timeout, env=env)
    check(r.returncode == 0 and r.stdout.strip(),
          "client %s failed (%d):\n%s" % (scenario, r.returncode, r.stderr[-3000:]))
    return json.loads(r.stdout.strip().splitlines()[-1])


# --- the install: each env as its image lays it out ----------------------------------

C4_MANIFEST = """\
# connect4_env ships no openenv.yaml: an older-style one without app, as
# browsergym's or coding's; the image's CMD (after --) starts the server.
spec_version: 1
name: connect4_env
type: space
runtime: fastapi
port: 8000
openenvd:
  zones:
    agent:
      containers:
        env: {workdir: @ENV@}
    observers:
      containers:
        judge:
          # examples/connect4/judge.py: replays the game from openenvd's record.
          argv: [/usr/bin/python3, @JUDGE@]
          reads: [actions]
          phases: [grading]
"""


def has_env(name):
    """Whether the fixture has an env (the newer one has four more)."""
    return os.path.isdir(os.path.join(FIXTURE, "envs", name))


# Each env as (key, fixture name, its code's place below <root>/<key>/app).
# chess_env and carla_env import only as <env>.server.app:app from a
# directory of envs (their openenv.yaml's server.app:app fails on a relative
# import): that directory, app/envs, is their image's WORKDIR.
ENVS = [("echo", "echo_env", "env"), ("c4", "connect4_env", "env"),
        ("maze", "maze_env", "env"), ("chess", "chess_env", "envs/chess_env"),
        ("carla", "carla_env", "envs/carla_env"), ("cal", "calendar_env", "env")]


def install():
    # Not /tmp: every container has a /tmp of its own.
    root = tempfile.mkdtemp(prefix="openenvd-openenv.", dir="/var/tmp")
    S["root"] = root
    subprocess.run(["tar", "-xJf", os.path.join(FIXTURE, "pylib.tar.xz"), "-C", root], check=True)
    for env, name, where in ENVS:
        if has_env(name):
            shutil.copytree(os.path.join(FIXTURE, "envs", name),
                            os.path.join(root, env, "app", where))
    # What `ENV PATH="/app/.venv/bin:$PATH"` gives an image: a console script.
    os.makedirs(os.path.join(root, "venv", "bin"))
    with open(os.path.join(root, "venv", "bin", "uvicorn"), "w") as f:
        f.write("#!%s\nimport sys\nfrom uvicorn.main import main\nsys.exit(main())\n" % PY)
    with open(os.path.join(root, "c4", "app", "openenv.yaml"), "w") as f:
        # Not the repository's path: a clone under /tmp is hidden from containers.
        shutil.copy(os.path.join(REPO, "examples", "connect4", "judge.py"),
                    os.path.join(root, "judge.py"))
        f.write(C4_MANIFEST.replace("@ENV@", os.path.join(root, "c4", "app", "env"))
                .replace("@JUDGE@", os.path.join(root, "judge.py")))
    # The containers' root is read-only: byte code is compiled here, as an
    # image build would (otherwise every start compiles ~2500 modules).
    subprocess.run([PY, "-m", "compileall", "-q", "-j", "0", root], check=True,
                   stdout=subprocess.DEVNULL, env={"PATH": SYSTEM_PATH})
    for dirpath, dirs, files in os.walk(root):
        os.chmod(dirpath, 0o755)
        for f in files:
            p = os.path.join(dirpath, f)
            os.chmod(p, 0o755 if os.access(p, os.X_OK) or "/bin/" in p else 0o644)


def image_env(env, extra=None, code="env"):
    """An image's ENV: PATH to its virtualenv, PYTHONPATH to its code
    (app/env, or app/envs for an env imported by package path)."""
    root = S["root"]
    e = {"PATH": os.path.join(root, "venv", "bin") + ":" + SYSTEM_PATH,
         "PYTHONPATH": os.path.join(root, env, "app", code) + ":" + os.path.join(root, "pylib"),
         "ENABLE_WEB_INTERFACE": "false",  # gradio is not in the library tree
         "LANG": "C.UTF-8"}
    e.update(extra or {})
    return e


def echo_daemon():
    """echo_env from its own openenv.yaml (app: server.app:app), started in
    its directory with its image's ENV plus secrets it must not see."""
    if "echo" not in S:
        S["echo"] = Daemon(
            OPENENVD, SHIM, cwd=os.path.join(S["root"], "echo", "app", "env"), token_env=True,
            env=image_env("echo", {"OPENENVD_AGENT_TOKEN": AGENT_TOKEN, "HF_TOKEN": CANARY,
                                   "ANTHROPIC_API_KEY": CANARY, "MAX_CONCURRENT_ENVS": "4"}),
            ready_timeout=60, start_timeout=START_TIMEOUT)
    return S["echo"]


def wait_ready(d, standby=True, live=True):
    """The live episode ready (live) and the next one provisioned (standby)."""
    def ok():
        i = d.ok("GET", "/info")
        if i["phase"] == "failed":
            raise livelib.Failure("unit failed: %s\n%s" % (i, d.tail()))
        return ((not live or i["phase"] == "ready") and
                (not standby or i["standby"]["state"] == "ready"))
    poll(ok, "the unit ready", START_TIMEOUT + 60, 0.1)


def env_process(d):
    """pid of the env server (the shim's child running uvicorn)."""
    def find():
        for pid in d.member_pids("env"):
            cmd = (read("/proc/%d/cmdline" % pid) or "").replace("\0", " ")
            if "uvicorn" in cmd and "openenvd-shim" not in cmd and not cmd.startswith("sh "):
                return pid
        return None
    return poll(find, "the env server's process", 60)


def package_daemon(env, extra=None):
    """chess_env or carla_env as its README runs it: the image's CMD after
    --, `uvicorn <name>.server.app:app` in the directory of envs, which is on
    PYTHONPATH. One episode per case: no standby."""
    name = dict((k, n) for k, n, _ in ENVS)[env]
    cmd = ["uvicorn", "%s.server.app:app" % name, "--host", "0.0.0.0", "--port", "8000"]
    return Daemon(OPENENVD, SHIM, command=cmd, cwd=os.path.join(S["root"], env, "app", "envs"),
                  env=image_env(env, extra, "envs"), token_env=True, args=["--no-standby"],
                  ready_timeout=60, start_timeout=START_TIMEOUT)


def check_first_episode_done(d, episode_id):
    """The env's own done ended the unit's first episode: sealed by it, graded."""
    v = poll(lambda: (lambda v: v if v["verdict"] else None)(
        d.ok("GET", "/verdict?episode_id=" + episode_id)), "a verdict", 60)
    check(v["verdict"] == "graded", "graded: %s" % v)
    first = episodes_in(d.ok("GET", "/info")["history"])[0]
    check(("running", "sealed", "environment", "done") in first, "done sealed it: %s" % first)


def episodes_in(history):
    """The history cut into episodes: each starts with a move to provisioning."""
    out = []
    for h in history:
        if h["to"] == "provisioning":
            out.append([])
        if out:
            out[-1].append((h["from"], h["to"], h["actor"], h["reason"]))
    return out


# --- the cases --------------------------------------------------------------------------

def case_failure_names_status_and_stderr():
    # The first wall: echo_env's own openenv.yaml started without
    # its image's environment dies on an import. openenvd says so.
    d = Daemon(OPENENVD, SHIM, cwd=os.path.join(S["root"], "echo", "app", "env"),
               env={"PATH": SYSTEM_PATH, "LANG": "C.UTF-8"}, args=["--no-standby"])
    try:
        poll(lambda: d.ok("GET", "/info")["phase"] == "failed", "the first episode to fail", 120)
        v = d.ok("GET", "/verdict")
        check(v["verdict"] == "infrastructure_error", "verdict: %s" % v)
        check("env exited with status 1 while starting" in v["reason"], "status: %s" % v["reason"])
        check("ModuleNotFoundError" in v["reason"], "the last line says why: %s" % v["reason"])
        tail = [e for e in v["events"] if e.get("what") == "exited"][0]["output_tail"]
        check("env|   File " in tail and "ModuleNotFoundError" in tail,
              "the verdict carries the stderr tail: %s" % tail)
        check("No child processes" not in (read(d.log) or ""), "no errno text stands in for it")
        # Not ready, and why: OpenEnv's providers never take it for up.
        status, h = d.request("GET", "/health", token=False)
        check(status == 503 and h["status"] == "unhealthy" and h["phase"] == "failed" and
              "ModuleNotFoundError" in h["reason"], "/health says not ready and why: %s" % h)
    finally:
        d.stop()


def case_runs_as_its_image_would():
    d = echo_daemon()
    wait_ready(d, standby=False)
    pid = env_process(d)
    cwd = os.readlink("/proc/%d/cwd" % pid)
    environ = dict(kv.split("=", 1) for kv in
                   (read("/proc/%d/environ" % pid) or "").split("\0") if "=" in kv)
    check(cwd == os.path.join(S["root"], "echo", "app", "env"),
          "the env starts in openenvd's directory: %s" % cwd)
    check(environ.get("PYTHONPATH", "").startswith(os.path.join(S["root"], "echo")),
          "the image's PYTHONPATH: %s" % environ.get("PYTHONPATH"))
    check(environ.get("PATH", "").startswith(os.path.join(S["root"], "venv", "bin")),
          "the image's PATH: %s" % environ.get("PATH"))
    check(environ.get("ENABLE_WEB_INTERFACE") == "false" and
          environ.get("MAX_CONCURRENT_ENVS") == "4", "the image's other ENV")
    for name in ("OPENENVD_TOKEN", "OPENENVD_AGENT_TOKEN", "HF_TOKEN", "ANTHROPIC_API_KEY"):
        check(name not in environ, "%s reached the env server" % name)
    blob = read("/proc/%d/environ" % pid) or ""
    check(TOKEN not in blob and AGENT_TOKEN not in blob and CANARY not in blob,
          "a secret's value reached the env server")
    check("does not inherit" in (read(d.log) or "") and "HF_TOKEN" in read(d.log),
          "the log names what was withheld")


def case_validator_passes():
    d = echo_daemon()
    r = client("validate", base_url(d))
    check(r["passed"], "OpenEnv's validator: %s" % json.dumps(r["criteria"], indent=1))
    check(r["mode"] == "simulation", "mode: %s" % r["mode"])
    # The same without credentials: only its health check passes.
    r = client("validate", base_url(d, None))
    failed = {c["id"] for c in r["criteria"] if not c["passed"]}
    check(not r["passed"] and "health_endpoint" not in failed, "without credentials: %s" % failed)
    check({"openapi_version_available", "metadata_endpoint", "schema_endpoint",
           "mcp_endpoint"} <= failed, "refused without credentials: %s" % failed)


def case_validator_from_the_first_second():
    # A daemon just started: OpenEnv's provider waits for the first 200 of
    # /health, then its validator runs at once. /health said 200 while the
    # first episode still provisioned and the validator failed on
    # metadata, schema and mcp for ~10 s; now 200 means an episode serves.
    d = Daemon(OPENENVD, SHIM, cwd=os.path.join(S["root"], "echo", "app", "env"),
               token_env=True, env=image_env("echo"), ready_timeout=60,
               start_timeout=START_TIMEOUT)
    try:
        r = client("ready-then-validate", base_url(d), START_TIMEOUT)
        check(r["report"]["passed"], "OpenEnv's validator right after wait_for_ready: %s"
              % json.dumps(r["report"]["criteria"], indent=1))
        check(d.ok("GET", "/info")["phase"] in ("ready", "running"), "an episode serves")
    finally:
        d.stop()


def case_credentials():
    d = echo_daemon()
    wait_ready(d, standby=False)
    routes = [("GET", "/openapi.json"), ("GET", "/docs"), ("GET", "/metadata"),
              ("GET", "/schema"), ("GET", "/state"), ("POST", "/reset"), ("POST", "/step"),
              ("POST", "/mcp"), ("GET", "/info"), ("GET", "/verdict"), ("POST", "/reset_unit"),
              ("POST", "/end_episode"), ("GET", "/web"), ("GET", "/nonexistent")]
    for method, path in routes:
        for hdrs in ({}, {"Authorization": "Bearer wrong"},
                     {"Authorization": "Basic " + base64.b64encode(b"openenv:wrong").decode()}):
            status, _ = http(method, d.url + path, {} if method == "POST" else None, hdrs)
            check(status == 401, "%s %s %s -> %d" % (method, path, hdrs, status))
    for path in ("/health", "/healthz"):
        status, j = http("GET", d.url + path)
        check(status == 200, "%s without credentials: %d" % (path, status))
    r = client("refused", base_url(d, None))
    check("401" in r["ws"], "the stock client's WebSocket is refused: %s" % r["ws"])
    check("401" in r["http_mcp"], "its HTTP /mcp is refused: %s" % r["http_mcp"])
    # The agent's token: /mcp only.
    agent = {"Authorization": "Bearer " + AGENT_TOKEN}
    status, j = http("POST", d.url + "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                                             "params": {}}, agent)
    check(status == 200 and "echo_message" in json.dumps(j), "agent on /mcp: %d %s" % (status, j))
    for method, path in (("POST", "/reset"), ("POST", "/step"), ("GET", "/state"),
                         ("GET", "/ws"), ("GET", "/info"), ("POST", "/reset_unit")):
        status, _ = http(method, d.url + path, {} if method == "POST" else None, agent)
        check(status == 403, "agent on %s %s: %d" % (method, path, status))


def case_mcp_episodes_one_client():
    d = echo_daemon()
    wait_ready(d)
    r = client("echo-episodes", base_url(d), 3)
    eps = r["episodes"]
    check(len(eps) == 3 and len({e["episode_id"] for e in eps}) == 3, "three episodes: %s" % eps)
    for i, e in enumerate(eps):
        check(e["tools"] == ["echo_message", "echo_with_length"], "tools: %s" % e["tools"])
        check(e["said"] == "episode %d" % i, "call_tool: %s" % e["said"])
        check(e["measured"] == {"message": "abc", "length": 3}, "call_tool: %s" % e["measured"])
        check(e["stepped"] == {"tool_name": "echo_message", "data": "step %d" % i, "done": False},
              "step(CallToolAction): %s" % e["stepped"])
        # step() and two call_tool()s; list_tools() is a step too, the first
        # time only (the client caches the tools).
        check(e["step_count"] == (4 if i == 0 else 3), "state() after the calls: %s"
              % e["step_count"])
        check(e["phase_after_calls"] == "running", "tool calls are actions: %s" % e)
        check(e["verdict"]["verdict"] == "graded" and
              e["verdict"]["episode_id"] == e["episode_id"], "graded: %s" % e["verdict"])
        v = d.ok("GET", "/verdict?episode_id=" + e["episode_id"])
        check(v["verdict"] == "graded", "the verdict stays: %s" % v)
    hist = episodes_in(d.ok("GET", "/info")["history"])[-3:]
    ends = [("ready", "running", "system", "first action"),
            ("running", "sealed", "orchestrator", "ended_by_orchestrator"),
            ("sealed", "grading", "system", "agent zone empty"),
            ("grading", "closed", "system", "graded")]
    for k, h in enumerate(hist):
        check(h[-4:] == ends, "episode %d's history: %s" % (k, h))
        if k > 0:  # the client's reset started it
            check(h[0] == ("closed", "provisioning", "orchestrator", "client reset"),
                  "episode %d started by the client's reset: %s" % (k, h))
    print("# echo_env: client reset() took %s s" % [round(e["reset_s"], 3) for e in eps])


def case_mcp_over_http_and_ws():
    d = echo_daemon()
    for scenario in ("echo-http-mcp", "mcp-ws"):
        wait_ready(d, live=False)
        info = d.ok("POST", "/reset_unit")
        check(info["phase"] == "ready", "reset: %s" % info["phase"])
        r = client(scenario, base_url(d))
        check(r["tools"] == ["echo_message", "echo_with_length"], "%s tools" % scenario)
        check(r["info"]["phase"] == "running" and r["info"]["actions"] >= 1,
              "%s: a tool call is an action: %s" % (scenario, r["info"]))
        if scenario == "echo-http-mcp":
            check(r["said"] == "over http", "HTTP /mcp result: %s" % r["said"])
        else:
            check("over ws" in json.dumps(r["called"]), "WebSocket /mcp result: %s" % r["called"])


def case_large_messages_and_command_line():
    root = S["root"]
    envdir = os.path.join(root, "echo", "app", "env")
    # The image's CMD, as its Dockerfile spells it, after `--`; a larger
    # WebSocket limit than uvicorn's 16 MiB default is the env's own choice.
    cmd = ["sh", "-c", "cd %s && uvicorn server.app:app --host 0.0.0.0 --port 8000 "
           "--ws-max-size 134217728" % envdir]
    d = Daemon(OPENENVD, SHIM, manifest=os.path.join(envdir, "openenv.yaml"), command=cmd,
               cwd=os.path.join(root, "echo", "app"), env=image_env("echo"), token_env=True,
               args=["--no-standby"], ready_timeout=60, start_timeout=START_TIMEOUT)
    try:
        wait_ready(d, standby=False)
        pid = env_process(d)
        check("--ws-max-size" in (read("/proc/%d/cmdline" % pid) or ""),
              "the command line's command runs, not the manifest's app")
        r = client("echo-big", base_url(d), 6, 17)
        check(r["stock_ok"], "the stock client got its 6 MiB message back")
        check(r["raw_sent"] > 16 * 2**20 and r["raw_received"] > 48 * 2**20,
              "frames over 16 MiB both ways: %s" % r)
        check(d.phase() == "running", "still running")
    finally:
        d.stop()


def case_game_loop_one_client():
    root = S["root"]
    cmd = ["uvicorn", "server.app:app", "--host", "0.0.0.0", "--port", "8000"]
    d = Daemon(OPENENVD, SHIM, command=cmd, cwd=os.path.join(root, "c4", "app"),
               env=image_env("c4"), token_env=True, ready_timeout=60,
               start_timeout=START_TIMEOUT)
    S["c4"] = d
    wait_ready(d)
    r = client("validate", base_url(d))
    check(r["passed"], "validator on connect4_env: %s" % json.dumps(r["criteria"], indent=1))
    t0 = time.monotonic()
    r = client("c4-loop", base_url(d), 4)
    wall = time.monotonic() - t0
    eps = r["episodes"]
    check(len(eps) == 4, "four episodes: %s" % eps)
    for e in eps:
        check(e["steps"] == 7 and e["reward"] == 1.0, "played to the win: %s" % e)
        check(e["first_step_count"] == 0, "state() after reset: %s" % e)
        # Reads after done: refused in OpenEnv's words until the next reset.
        check("EPISODE_ENDED" in e["state_after_done"], "state() after done: %s" % e)
    info = d.ok("GET", "/info")
    hist = episodes_in(info["history"])
    check(len(hist) == 4, "four episodes in the history: %s" % hist)
    for k, h in enumerate(hist):
        check(("running", "sealed", "environment", "done") in h, "done sealed it: %s" % h)
        check(h[-1][:3] == ("grading", "closed", "system"), "closed: %s" % h)
        check(h[0][2] == "orchestrator", "started by the orchestrator: %s" % h)
    # Every episode graded, by the judge of that episode.
    check(len({e["episode_id"] for e in eps}) == 4, "four episode ids: %s" % eps)
    for e in eps:
        v = poll(lambda: (lambda v: v if v["verdict"] else None)(
            d.ok("GET", "/verdict?episode_id=" + e["episode_id"])), "a verdict", 60)
        check(v["verdict"] == "graded", "graded: %s" % v)
        j = v["observers"]["judge"]
        check(j["episode"] == e["episode_id"], "the judge ran: %s" % v)
        # Its own replay of what was sent, not the env's word: the same game.
        check((j["moves"], j["winner"], j["reward"], j["done"]) == (7, 1, 1.0, True),
              "the judge replayed the win: %s" % j)
    print("# connect4_env: 4 episodes of 7 steps in %.1f s on one client (%.2f episodes/s); "
          "reset() %s s" % (r["seconds"], 4 / r["seconds"],
                             [round(e["reset_s"], 2) for e in eps]))
    print("# (client process wall time %.1f s)" % wall)


def case_four_sessions_at_once():
    """episodes: {concurrent: 4}: four stock clients at once on one unit,
    each its own lane and episodes, each episode graded by its own judge
    from its own moves; a fifth client gets OpenEnv's CAPACITY_REACHED;
    plain HTTP env requests are refused; the lanes are free again after."""
    root = S["root"]
    app = os.path.join(root, "c4", "app")
    path = os.path.join(app, "concurrent.yaml")
    with open(os.path.join(app, "openenv.yaml")) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(text.replace("openenvd:\n", "openenvd:\n  episodes: {concurrent: 4}\n"
                             "  standby: 2\n", 1))
    os.chmod(path, 0o644)
    flag = os.path.join(root, "sessions-open")
    cmd = ["uvicorn", "server.app:app", "--host", "0.0.0.0", "--port", "8000"]
    d = Daemon(OPENENVD, SHIM, manifest=path, command=cmd, cwd=app, env=image_env("c4"),
               token_env=True, ready_timeout=60, start_timeout=START_TIMEOUT)
    results, threads = {}, []

    def session(k):
        try:
            results[k] = client("c4-session", base_url(d), 2, k, flag)
        except Exception as e:  # noqa: BLE001 - reported by the checks below
            results[k] = {"error": str(e)}
    try:
        wait_ready(d)
        status, j = d.request("POST", "/reset", {})
        check(status == 409 and j["error"]["code"] == "concurrent_episodes",
              "plain HTTP reset on a unit of lanes: %d %s" % (status, j))
        for k in range(4):
            threads.append(threading.Thread(target=session, args=(k,)))
            threads[-1].start()
        def held():
            eps = d.ok("GET", "/episodes")["live_episodes"]
            return results or (sorted(e["lane"] for e in eps if e["session"]) == [0, 1, 2, 3]
                               and eps)
        # Each session opened (its lane taken) and reset (its lane's episode made).
        eps = poll(held, "four sessions open, each with its episode", START_TIMEOUT)
        check(not results, "a session ended early: %s" % results)
        check(d.ok("GET", "/info")["episodes"]["sessions"] == 4 and
              len({e["episode_id"] for e in eps}) == len(eps), "four lanes live: %s" % eps)
        r = client("c4-capacity", base_url(d))
        check(r["answer"] == "RuntimeError: Server error: Server at capacity: 4/4 sessions "
              "active. Cannot accept new connections. (code: CAPACITY_REACHED)",
              "the fifth client got OpenEnv's capacity error: %s" % r)
        with open(flag, "w"):
            pass
        for t in threads:
            t.join(600)
        ids = set()
        check(sorted(results[k]["lane"] for k in range(4)) == [0, 1, 2, 3],
              "each session its own lane: %s" % results)
        for k in range(4):
            check("error" not in results[k], "session %d: %s" % (k, results[k]))
            for e in results[k]["episodes"]:
                ids.add(e["episode_id"])
                check(e["done"] and not e["done_early"] and e["reward"] == 1.0 and
                      e["steps"] == 2 * k + 7, "session %d played its own game: %s" % (k, e))
                v = e["verdict"]
                check(v["verdict"] == "graded" and v["episode_id"] == e["episode_id"] and
                      v["actions"] == e["steps"], "session %d's verdict: %s" % (k, v))
                j = v["observers"]["judge"]
                check((j["episode"], j["moves"], j["winner"]) == (e["episode_id"], e["steps"], 1),
                      "its judge replayed its own game: %s" % j)
        check(len(ids) == 8, "eight episodes, eight ids: %s" % ids)
        poll(lambda: d.ok("GET", "/info")["episodes"]["sessions"] == 0, "the lanes free", 60)
        print("# four sessions at once: 8 episodes graded; %s" % d.ok("GET", "/info")["episodes"])
    finally:
        # Sessions waiting for the flag end (a failed check must not leave them).
        with open(flag, "w"):
            pass
        for t in threads:
            t.join(120)
        d.stop()


def case_mcp_sessions_at_once():
    """episodes: {concurrent: 3} on echo_env: two stock clients in OpenEnv's
    production mode (HTTP MCP sessions) and a WebSocket /mcp session at
    once, each in its own lane and episode; a fourth is refused in
    OpenEnv's words; each session's calls are its own episode's actions,
    graded when it closes; the lanes are free after."""
    root = S["root"]
    envdir = os.path.join(root, "echo", "app", "env")
    path = os.path.join(root, "echo", "app", "concurrent.yaml")
    with open(os.path.join(envdir, "openenv.yaml")) as f:
        text = f.read()
    check("openenvd:" not in text, "echo_env's own openenv.yaml has no openenvd block")
    with open(path, "w") as f:
        f.write(text + "openenvd:\n  episodes: {concurrent: 3}\n  standby: 1\n")
    os.chmod(path, 0o644)
    d = Daemon(OPENENVD, SHIM, manifest=path, cwd=envdir, env=image_env("echo"),
               token_env=True, ready_timeout=60, start_timeout=START_TIMEOUT)
    try:
        wait_ready(d)
        r = client("mcp-sessions", base_url(d), 2, 5)
        for k, sess in enumerate(r["sessions"]):
            check(sess["tools"] == ["echo_message", "echo_with_length"] and
                  sess["said"] == ["session %d call %d" % (k, i) for i in range(k + 2)],
                  "HTTP MCP session %d: %s" % (k, sess))
        check("ws 4" in json.dumps(r["ws_said"]), "WebSocket /mcp: %s" % r["ws_said"])
        check(r["full"] == "RuntimeError: Failed to create MCP session: Server at capacity: "
              "3/3 sessions active. Cannot accept new connections.",
              "the fourth session got OpenEnv's capacity error: %s" % r["full"])
        live = r["live"]
        check(sorted(e["lane"] for e in live) == [0, 1, 2] and
              len({e["episode_id"] for e in live}) == 3 and
              all(e["phase"] == "running" and e["session"] for e in live),
              "three sessions, three lanes, three running episodes: %s" % live)
        by_lane = {e["lane"]: r["verdicts"][e["episode_id"]] for e in live}
        for lane, v in by_lane.items():
            check(v["verdict"] == "graded", "lane %d's verdict: %s" % (lane, v))
        check(by_lane[r["ws_lane"]]["actions"] == 5, "the WebSocket session's episode had "
              "its 5 calls: %s" % by_lane[r["ws_lane"]])
        check(sorted(v["actions"] for lane, v in by_lane.items() if lane != r["ws_lane"]) ==
              [2, 3], "each HTTP session's calls in its own episode: %s" % by_lane)
        poll(lambda: d.ok("GET", "/info")["episodes"]["sessions"] == 0, "the lanes free", 60)
        print("# MCP sessions at once: %s" % {k: v["actions"] for k, v in by_lane.items()})
    finally:
        d.stop()


def case_client_libraries_send_basic():
    heads = []
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    port = srv.getsockname()[1]

    def serve():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            with c:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = c.recv(4096)
                    if not chunk:
                        break
                    data += chunk
                heads.append(data.decode("latin-1"))
                c.sendall(b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n"
                          b"Connection: close\r\n\r\n")
    threading.Thread(target=serve, daemon=True).start()
    try:
        r = client("headers-sent", "http://openenv:%s@127.0.0.1:%d" % (TOKEN, port))
    finally:
        srv.close()
    want = "Basic " + base64.b64encode(("openenv:" + TOKEN).encode()).decode()
    sent = {}
    for h in heads:
        fields = dict((k.strip().lower(), v.strip()) for k, v in
                      (l.split(":", 1) for l in h.split("\r\n")[1:] if ":" in l))
        sent[fields.get("user-agent", "?")] = fields.get("authorization") == want
    print("# credentials in base_url sent as Basic: %s (%s)" % (sent, r))
    for lib in ("websockets/", "python-httpx/", "python-requests/"):
        check(any(lib in ua and ok for ua, ok in sent.items()),
              "%s sent the credentials as Basic: %s" % (lib, heads))


def case_maze_episode_and_capacity():
    # maze_env from its own openenv.yaml, as echo_env: openenvd in its directory.
    d = Daemon(OPENENVD, SHIM, cwd=os.path.join(S["root"], "maze", "app", "env"),
               env=image_env("maze"), token_env=True, ready_timeout=60,
               start_timeout=START_TIMEOUT)
    try:
        wait_ready(d)
        r = client("maze-capacity", base_url(d), 2000)
        e = r["episode"]
        check(e["done"] and e["steps"] < 2000, "the walk ended the episode: %s" % e)
        check_first_episode_done(d, e["episode_id"])
        check(r["held_episode_id"] != e["episode_id"], "the next reset, a new episode: %s" % r)
        # OpenEnv's error frame, as its stock client words it: message and code unchanged.
        check(r["second"] == "RuntimeError: Server error: Server at capacity: 1/1 sessions "
              "active. Cannot accept new connections. (code: CAPACITY_REACHED)",
              "the second client got OpenEnv's capacity error: %s" % r["second"])
        # Opened while the env server is full: OpenEnv's frame and close, relayed as sent.
        check(r["raw"] == {"frame": {"type": "error", "data": {
            "message": "Server at capacity: 1/1 sessions active. Cannot accept new connections.",
            "code": "CAPACITY_REACHED", "active_sessions": 1, "max_sessions": 1}}, "close": 1000},
            "a raw session while full: %s" % r["raw"])
        check(r["first_after"]["step_count"] == 1, "the first client plays on: %s" % r)
        check(r["info"]["episode_id"] == r["held_episode_id"] and
              r["info"]["phase"] == "running", "the held episode runs: %s" % r["info"])
        print("# maze_env: %d steps to %s (reward %s)" % (e["steps"], e["position"], e["reward"]))
    finally:
        d.stop()


def case_chess_by_package_path():
    d = package_daemon("chess")
    try:
        wait_ready(d, standby=False)
        n = 3
        r = client("chess-moves", base_url(d), n)
        moves = r["moves"]
        fens = [r["start"]["fen"]] + [m["fen"] for m in moves]
        # Whichever colour the env dealt the agent, it has 20 first moves.
        check(r["start"]["legal"] == 20, "the opening position: %s" % r["start"])
        check(len(set(fens)) == n + 1, "every move changed the board: %s" % fens)
        for m in moves:
            # The stock client's done stays False (README): the game is on
            # because there is no result and there are legal moves.
            check(m["result"] is None and m["legal"] > 0 and m["done"] is False,
                  "the game goes on: %s" % m)
        check(r["illegal_fen"] == fens[-1], "an illegal move leaves the board: %s" % r)
        # The engine replied to each move (and opened, if the agent has black).
        hist = r["move_history"]
        check(len(hist) in (2 * n, 2 * n + 1) and r["step_count"] == len(hist) and
              hist[len(hist) - 2 * n::2] == [m["move"] for m in moves],
              "the agent's moves and the engine's replies: %s" % r)
        # Three moves and the illegal one: four actions, all seen by openenvd.
        check(r["info"]["actions"] == n + 1 and r["info"]["phase"] == "running",
              "openenvd saw the actions: %s" % r["info"])
    finally:
        d.stop()


def case_carla_mock_episode():
    d = package_daemon("carla", {"CARLA_MODE": "mock"})
    try:
        wait_ready(d, standby=False)
        r = client("carla-episode", base_url(d), 10)
        check(r["done"] and 1 <= r["steps"] <= 4, "the mock scenario ended in 1-4 steps: %s" % r)
        check_first_episode_done(d, r["episode_id"])
        print("# carla_env (mock, %s): done after %d steps: %s"
              % (r["scenario"], r["steps"], r["done_reason"]))
    finally:
        d.stop()


def case_calendar_headers_reach_the_env():
    r = subprocess.run([PY, "-c", "import dateutil"], capture_output=True)
    check(r.returncode == 0, "calendar_env needs Debian's python3-dateutil "
          "(apt-get install python3-dateutil)")
    envdir = os.path.join(S["root"], "cal", "app", "env")
    with open(os.path.join(envdir, "openenv.yaml")) as f:
        port = int(re.search(r"^port:\s*(\d+)", f.read(), re.M).group(1))
    # openenvd in its directory reads its openenv.yaml (port 8004: the env's
    # port in its netns). calendar_env writes ./mcp_databases and the
    # container's root is read-only: the CMD runs it from a copy in /tmp,
    # timestamps kept so the byte code compiled at install stays valid. Its
    # tools call its own REST API at localhost:$API_PORT.
    cmd = ["sh", "-c", "cp -R --preserve=timestamps %s /tmp/cal && cd /tmp/cal && exec "
           "uvicorn server.app:app --host 0.0.0.0 --port %d" % (envdir, port)]
    d = Daemon(OPENENVD, SHIM, command=cmd, cwd=envdir, token_env=True,
               env=image_env("cal", {"API_PORT": str(port)}), args=["--no-standby"],
               ready_timeout=60, start_timeout=START_TIMEOUT)
    try:
        wait_ready(d, standby=False)
        r = client("calendar-headers", base_url(d), "openenvd_db")
        tok, bare = r["token"], r["no_token"]
        # Its sample token found its user: x-access-token reached it unchanged.
        check(tok["success"] and tok["is_error"] is False and tok["items"],
              "a tool call with the scenario's token: %s" % tok)
        # x-database-id too: /state answers with the header's database.
        for run in (tok, bare):
            check(run["state"]["database_id"] == "openenvd_db" and run["tools"] > 0 and
                  run["reset_done"] is False, "x-database-id reached the env: %s" % run)
        check(bare["success"] is False and "Access token is required" in bare["error_message"],
              "without the token the tool call is refused: %s" % bare)
        check(r["info"]["actions"] == 4, "list_tools and call_tool, twice: %s" % r["info"])
        # Without the token calendar_env logs the request's header names.
        _, log = d.request("GET", "/logs?container=env")
        names = re.findall(r"Available headers: \[(.*)\]", log)
        sent = ("x-database-id", "x-actinguserid", "x-actinguseremail", "x-defaulttimezone")
        check(names and all("'%s'" % h in names[0] for h in sent),
              "the client's other headers reached the env: %s" % log[-3000:])
        check("authorization" not in names[0].lower(),
              "openenvd's Authorization reached the env: %s" % names[0])
        check(TOKEN not in log and "database_id: openenvd_db, has_access_token: True" in log,
              "the env's log: %s" % log[-3000:])
    finally:
        d.stop()


CASES = [
    ("echo_env's own openenv.yaml without its image's environment: the failure names the exit "
     "status and the missing module", case_failure_names_status_and_stderr),
    ("echo_env's own openenv.yaml isolated as its image runs it: WORKDIR, ENV, no secrets",
     case_runs_as_its_image_would),
    ("OpenEnv's runtime validator passes with credentials in the URL only",
     case_validator_passes),
    ("from the first second: OpenEnv's wait_for_ready, then its validator at once, passes",
     case_validator_from_the_first_second),
    ("without credentials 401 everywhere but /health(z); the agent token reaches /mcp only",
     case_credentials),
    ("three MCP episodes on one EchoEnv().sync(): reset, list_tools, step, call_tool, state; history, "
     "graded verdicts", case_mcp_episodes_one_client),
    ("MCP tool calls over HTTP /mcp and WebSocket /mcp are actions", case_mcp_over_http_and_ws),
    ("episodes.concurrent 3: two HTTP MCP sessions (the stock client's production mode) and a "
     "WebSocket /mcp session at once, each its own lane and graded episode; a fourth refused",
     case_mcp_sessions_at_once),
    ("the image's CMD after --; messages over 16 MiB both ways", case_large_messages_and_command_line),
    ("connect4_env, no openenv.yaml of its own: the auto-episode loop on one client, done seals, "
     "graded", case_game_loop_one_client),
    ("OpenEnv's client libraries carry base_url credentials as HTTP Basic",
     case_client_libraries_send_basic),
    ("episodes: {concurrent: 4}: four stock clients at once, each its own lane, episodes and "
     "judged verdicts; a fifth gets CAPACITY_REACHED; plain HTTP is refused",
     case_four_sessions_at_once),
] + [(title, fn) for env, title, fn in (
    # The newer fixture's envs: listed only where the fixture has them.
    ("maze_env", "maze_env's own openenv.yaml: an episode to done; its one-session cap refuses "
     "a second client with OpenEnv's CAPACITY_REACHED", case_maze_episode_and_capacity),
    ("chess_env", "chess_env by package path after --: moves against its engine, seen as "
     "actions", case_chess_by_package_path),
    ("carla_env", "carla_env in mock mode by package path: an episode until its done",
     case_carla_mock_episode),
    ("calendar_env", "calendar_env over HTTP: its client's own headers reach it unchanged, "
     "openenvd's Authorization never", case_calendar_headers_reach_the_env),
) if has_env(env)]


def setup():
    install()


def teardown():
    for key in ("echo", "c4"):
        if S.get(key):
            S[key].stop()
    if S.get("root"):
        shutil.rmtree(S["root"], ignore_errors=True)


def main():
    if not os.path.isfile(os.path.join(FIXTURE, "pylib.tar.xz")):
        return skip_all(CASES, "the real OpenEnv is not at %s (set OPENENVD_OPENENV_REAL)"
                        % FIXTURE)
    if os.geteuid() != 0:
        return skip_all(CASES, "needs root")
    r = subprocess.run([PY, "-c", "import numpy"], capture_output=True)
    if r.returncode != 0:
        return skip_all(CASES, "python3-numpy is not installed (scripts/install-deps.sh)")
    return run_cases(CASES, setup, teardown)


if __name__ == "__main__":
    sys.exit(main())
