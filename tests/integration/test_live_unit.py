#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Live tests of the isolated unit: openenvd as the environment's daemon.

    test_live_unit.py OPENENVD SHIM OPENENV

Each case starts its own openenvd (own state dir, own port) on a test unit
from tests/units (installed at /opt/openenvd-test, where its manifests' argv
point: the containers' root is the host view, which binds /opt/openenvd-test,
the prefix of the bin/ directory the argv names), drives it over its
control API and checks what the kernel and the zones report. Output is TAP.
As root every case runs (nothing is skipped); otherwise they are skipped.

No sleep synchronises anything: every wait polls a condition with a deadline.
"""
import calendar
import fcntl
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from livelib import Failure, check, descendants, poll, free_port, read, make_workdir, run_cases  # noqa: E402
import livelib  # noqa: E402
from daemon_unit import cgroup2_mount  # noqa: E402

OPENENVD, SHIM, OPENENV = (os.path.abspath(p) for p in sys.argv[1:4])
UNITS_SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "units")
INSTALL = "/opt/openenvd-test"
RUN = INSTALL + "/run"  # test-written config the containers read (world-readable)
TOKEN = livelib.TOKEN
LEAK_EPISODES = int(os.environ.get("OPENENVD_LEAK_EPISODES", "1000"))


def Daemon(manifest, args=(), key=None, model_port=None):
    """One openenvd on one installed test unit."""
    return livelib.Daemon(OPENENVD, SHIM, os.path.join(INSTALL, manifest), args=args, key=key,
                          model_port=model_port, ready_timeout=30)


class Canary:
    """A TCP listener on the host that counts whoever reaches it."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("0.0.0.0", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.hits = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.hits += 1
            c.close()

    def close(self):
        self.sock.close()


def host_ip():
    out = subprocess.run(["hostname", "-I"], capture_output=True, text=True).stdout.split()
    v4 = [a for a in out if "." in a and not a.startswith("127.")]
    return v4[0] if v4 else "127.0.0.1"


# --- the cases ---------------------------------------------------------------

FULL = {}  # results of the full episode, checked by several cases


def full_episode():
    """Runs one graded episode on the full unit and keeps every probe result."""
    canary = Canary()
    key = "sk-live-real-" + os.urandom(12).hex()
    key_dir = make_workdir()
    with open(os.path.join(key_dir, "stub-key"), "w") as f:
        f.write(key)
    model_port = free_port()
    # The example's own stub: it runs on the host, outside every zone.
    stub = subprocess.Popen(["/usr/bin/python3", os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "../../examples/echo/model_stub.py"),
                             str(model_port), os.path.join(key_dir, "stub-key")])
    d = None
    try:
        poll(lambda: socket.socket().connect_ex(("127.0.0.1", model_port)) == 0, "model stub")
        d = Daemon("full.yaml", key=key, model_port=model_port)
        assets = [os.path.join(INSTALL, "assets/oracle.json")]
        cfg = {"assets": assets, "asset_dirs": [os.path.join(INSTALL, "assets"),
                                                 d.state + "/assets"],
               "state_dir": d.state, "canary_port": canary.port, "host_ip": host_ip(),
               "service_socket": d.state + "/run/sock/svc/svc.sock",
               "secret_name": "openenvd-live-secret",
               "key_paths": [d.key_file, d.state + "/run/model-key"]}
        with open(RUN + "/probe.json", "w") as f:
            json.dump(cfg, f)
        os.chmod(RUN + "/probe.json", 0o644)
        # The test's own view: every probe target exists and works from the host.
        check(read(assets[0]), "asset readable from the host")
        check(canary.hits == 0, "canary untouched before the episode")
        info = d.ok("POST", "/reset_unit")
        check(info["phase"] == "ready", "reset -> ready, got %s" % info["phase"])
        eid = info["episode_id"]
        check(not os.path.exists(d.key_file), "the model key file was deleted after reading")
        FULL["harness_file"] = json.loads(poll(lambda: read(d.ws_file(eid, "harness.json")),
                                                "/workspace/harness.json", 60))
        status, FULL["env"] = d.request("GET", "/probe")
        check(status == 200, "env probe over the relay: %s" % status)
        check(d.request("POST", "/step", {"action": {"message": "x"}}, token=False)[0] == 401,
              "/step without the token is refused")
        check(d.ok("POST", "/step", {"action": {"message": "hello"}})["done"] is False, "step")
        check(d.phase() == "running", "first step -> running")
        d.ok("POST", "/step", {"action": {"message": "done"}})
        # One request: /verdict?wait=1 answers once the verdict is final.
        v = d.ok("GET", "/verdict?wait=1")
        check(v["verdict"] == "graded", "GET /verdict?wait=1 right after done: %s" % v)
        check(d.request("GET", "/verdict?wait=2")[0] == 400, "wait: 0 or 1")
        FULL["verdict"] = v
        FULL["info"] = d.ok("GET", "/info")
        FULL["key"] = key
        FULL["canary_hits"] = canary.hits
        FULL["runner"] = (v["observers"].get("runner") or {}).get("runner")
        FULL["harness"] = (v["observers"].get("runner") or {}).get("harness")
        FULL["log"] = read(d.log) or ""
        FULL["daemon"] = d
    finally:
        stub.terminate()
        stub.wait()
        canary.close()
        shutil.rmtree(key_dir, ignore_errors=True)
        if d:
            FULL["daemon_rc"] = d.stop()


def need_full(*keys):
    for k in keys:
        check(FULL.get(k) is not None, "the full episode did not produce %s" % k)


def zones():
    need_full("env", "harness", "runner")
    return {"env": FULL["env"], "harness": FULL["harness"], "runner": FULL["runner"]}


def case_full_episode_graded():
    if "verdict" not in FULL:
        full_episode()
    v = FULL["verdict"]
    check(v["verdict"] == "graded", "verdict graded: %s" % v)
    check(v["observers"]["grader"]["score"] == 1.0, "grader saw the oracle: %s" % v["observers"])
    check(v["observers"]["grader"]["runner_copy"], "grader read the runner's custody copy")
    hist = [(h["from"], h["to"], h["actor"]) for h in FULL["info"]["history"]]
    check(("running", "sealed", "environment") in hist, "done sealed the episode: %s" % hist)
    check(FULL["info"]["phase"] == "closed", "closed after grading")
    check(FULL["daemon_rc"] == 0, "clean shutdown (exit %s)" % FULL["daemon_rc"])


def case_secrets_unreadable():
    for zone, p in zones().items():
        for path, r in p["assets"].items():
            check(not r["ok"], "%s read asset %s" % (zone, path))
        for path, r in p["asset_dirs"].items():
            check(not r["ok"] or not r["entries"], "%s listed %s: %s" % (zone, path, r))
        check(not p["state_dir"]["ok"] or not p["state_dir"]["entries"],
              "%s listed the state dir: %s" % (zone, p["state_dir"]))
        check(not p["secrets"]["ok"] or not p["secrets"]["entries"],
              "%s listed /run/secrets: %s" % (zone, p["secrets"]))
        check(not p["secret_file"]["ok"], "%s read a secret" % zone)
    # The runner reads only the workspace: it has no /assets at all.
    am = FULL["verdict"]["observers"]["runner"]["assets_mount"]
    check(not am["ok"] or not am["entries"], "the runner sees /assets: %s" % am)


def case_service_only_via_relay():
    z = zones()
    env = z["env"]
    check(env["svc_http"]["status"] == 200 and "hidden-service-ok" in env["svc_http"]["body"],
          "env reaches the service through its relay: %s" % env["svc_http"])
    check(env["environ"].get("OPENENVD_SERVICE_SVC") == "http://svc.local:80",
          "env is told the service URL")
    for zone, p in z.items():
        check(not p["service_socket"]["ok"], "%s connected to the service's own socket" % zone)
        if zone != "env":
            check(p["svc_http"]["status"] is None, "%s reached the service: %s" % (zone, p["svc_http"]))


def case_egress_impossible():
    z = zones()
    for zone, p in z.items():
        check(not p["canary_host"]["ok"], "%s reached the host's %s" % (zone, "canary"))
    check(FULL["canary_hits"] == 0, "the canary was reached %d times" % FULL["canary_hits"])


def case_model_key_absent():
    z = zones()
    key = FULL["key"]
    for zone, p in z.items():
        check(key not in json.dumps(p), "the real key is visible in %s" % zone)
    h = z["harness"]
    check(h["environ"].get("ANTHROPIC_API_KEY") == "openenvd-placeholder", "harness has the placeholder")
    check(h["model"]["status"] == 200 and "hello" in h["model"]["body"],
          "harness's model call went through the proxy: %s" % h["model"])
    check(h["model_guessed_key"]["status"] != 200, "a guessed key is refused: %s" % h["model_guessed_key"])
    check(h["mcp"]["status"] == 200, "harness reaches the env's MCP surface: %s" % h["mcp"])
    check(key not in FULL["log"], "the real key is not in the daemon's log")
    check(key not in json.dumps(FULL["verdict"]), "the real key is not in the verdict")


def case_inspect_resume():
    d = Daemon("full.yaml")
    try:
        eid = d.ok("POST", "/reset_unit")["episode_id"]
        d.wait_ws_file(eid, "ticks")
        d.ok("POST", "/step", {"action": {"message": "hello"}})
        check(d.phase() == "running", "running")
        j = d.ok("POST", "/inspect")
        check(j["phase"] == "frozen", "inspect -> frozen: %s" % j)
        check("ticks" in (j.get("observers") or {}).get("snapshot", {}),
              "the frozen-phase observer ran: %s" % j.get("observers"))
        agent = d.zone_cgroup("env")
        events = read(d.cg_file("unified", agent, "cgroup.events")) or ""
        check("frozen 1" in events, "the kernel reports the agent zone frozen: %r" % events)
        check(d.request("POST", "/step", {"action": {"message": "x"}})[0] == 503,
              "no env traffic while frozen")
        # The env's ticker (20 ms period) does not advance while frozen.
        before = read(d.ws_file(eid, "ticks"))
        end = time.monotonic() + 0.5
        while time.monotonic() < end:
            check(read(d.ws_file(eid, "ticks")) == before, "the env kept running while frozen")
            time.sleep(0.05)
        j = d.ok("POST", "/resume")
        check(j["phase"] == "running", "resume -> running: %s" % j)
        poll(lambda: read(d.ws_file(eid, "ticks")) != before, "the env to run again")
        check("frozen 0" in (read(d.cg_file("unified", agent, "cgroup.events")) or ""),
              "thawed")
        check(d.ok("POST", "/step", {"action": {"message": "x"}})["done"] is False, "steps again")
    finally:
        d.stop()


def case_reset_from_every_phase():
    fail_flag = RUN + "/FAIL"
    # No standby: a reset provisions while the fail flag is set.
    d = Daemon("failable.yaml", args=["--no-initial-episode", "--no-standby"])
    try:
        check(d.phase() == "closed", "starts closed (--no-initial-episode)")
        # Nothing to start: ready at once (the orchestrator's reset provisions).
        check(d.request("GET", "/readyz", token=False)[0] == 200, "ready with nothing to start")
        for frm in ("closed", "ready"):
            check(d.phase() == frm, "in %s" % frm)
            check(d.ok("POST", "/reset_unit")["phase"] == "ready", "reset from %s" % frm)
        d.ok("POST", "/step", {"action": {"message": "a"}})
        check(d.phase() == "running", "running")
        check(d.ok("POST", "/reset_unit")["phase"] == "ready", "reset from running")
        d.ok("POST", "/step", {"action": {"message": "a"}})
        check(d.ok("POST", "/inspect")["phase"] == "frozen", "frozen")
        check(d.ok("POST", "/reset_unit")["phase"] == "ready", "reset from frozen")
        with open(fail_flag, "w"):
            pass
        status, j = d.request("POST", "/reset_unit")
        check(status == 500, "a failed provisioning is a 500: %s %s" % (status, j))
        check(d.phase() == "failed", "failed")
        v = d.ok("GET", "/verdict")
        check(v["verdict"] == "infrastructure_error", "failed provisioning verdict: %s" % v)
        # No episode can serve: health fails with the verdict's reason;
        # liveness holds.
        for route, key in (("/health", "status"), ("/readyz", "ready")):
            status, j = d.request("GET", route, token=False)
            check(status == 503 and j[key] in ("unhealthy", False) and j["phase"] == "failed" and
                  j["reason"] == "the last episode failed to start: " + v["reason"],
                  "%s while failed: %s %s" % (route, status, j))
        check(d.request("GET", "/healthz", token=False)[0] == 200, "live while failed")
        os.unlink(fail_flag)
        check(d.ok("POST", "/reset_unit")["phase"] == "ready", "reset from failed")
        check(d.request("GET", "/health", token=False)[0] == 200, "healthy again")
        check(d.ok("POST", "/end_episode")["verdict"] == "graded", "end")
        check(d.phase() == "closed", "closed")
        check(d.request("POST", "/resume")[0] == 409, "resume from closed is refused (409)")
        check(d.ok("POST", "/reset_unit")["phase"] == "ready", "reset after an end")
        check(d.request("POST", "/resume")[0] == 409, "resume from ready is refused (409)")
        # The episodes, newest first: the live one, then what each ended with.
        eps = d.ok("GET", "/episodes")
        check(eps["live"]["episode_id"] == d.ok("GET", "/info")["episode_id"] and
              eps["live"]["phase"] == "ready" and eps["kept"] == 16, "live: %s" % eps)
        kinds = [e["verdict"] for e in eps["recent"]]
        check(kinds[0] == "graded" and "infrastructure_error" in kinds and
              all(e["ended_at"] > 0 for e in eps["recent"]) and
              [e["ended_at"] for e in eps["recent"]] ==
              sorted((e["ended_at"] for e in eps["recent"]), reverse=True),
              "recent, newest first, with how each ended: %s" % eps["recent"])
        check(d.request("GET", "/episodes", token=False)[0] == 401, "the orchestrator's only")
    finally:
        if os.path.exists(fail_flag):
            os.unlink(fail_flag)
        d.stop()


def case_verdict_history():
    for bad in ("0", "4097", "x"):
        r = subprocess.run([OPENENVD, "--verdict-history", bad], capture_output=True, text=True,
                           timeout=30)
        check(r.returncode == 2 and "--verdict-history: '%s' is not a count of episodes (1-4096)"
              % bad in r.stderr, "--verdict-history %s: exit 2, said: %s" % (bad, r))
    d = Daemon("minimal.yaml", args=["--verdict-history", "2", "--no-standby",
                                      "--no-initial-episode"])
    try:
        ids = []
        for _ in range(4):
            ids.append(d.ok("POST", "/reset_unit")["episode_id"])
            check(d.ok("POST", "/end_episode")["verdict"] == "graded", "graded")
        eps = d.ok("GET", "/episodes")
        # The live one (closed, graded) is served, and the 2 before it.
        check(eps["kept"] == 2 and eps["live"]["episode_id"] == ids[3] and
              [e["episode_id"] for e in eps["recent"]] == [ids[2], ids[1]],
              "the last 2 kept, newest first: %s" % eps)
        for eid in ids[1:]:
            check(d.ok("GET", "/verdict?episode_id=" + eid)["episode_id"] == eid,
                  "kept: %s" % eid)
        status, j = d.request("GET", "/verdict?episode_id=" + ids[0])
        check(status == 404 and j["error"]["code"] == "not_found" and
              "no episode %s among the live one and the last 2 that ended" % ids[0]
              in j["error"]["message"], "the oldest is gone, said: %s %s" % (status, j))
    finally:
        d.stop()


def with_policy(unit, policy):
    """An installed copy of unit with openenvd.verdict_policy: policy."""
    with open(os.path.join(INSTALL, unit)) as f:
        text = f.read()
    name = unit.replace(".yaml", "-policy.yaml")
    with open(os.path.join(INSTALL, name), "w") as f:
        f.write(text.replace("openenvd:\n", "openenvd:\n  verdict_policy: %s\n" % policy, 1))
    os.chmod(os.path.join(INSTALL, name), 0o644)
    return name


def event(v, what, container):
    return next((e for e in v["events"] if e.get("what") == what and
                 e.get("container") == container), None)


def harness_event(unit, evidence, what, policy, words=(), container="harness"):
    """An agent-zone event under a verdict policy: listed either way, with
    its time and container; void: agent_misbehavior on the container, no
    grader; record: graded."""
    d = Daemon(unit if policy is None else with_policy(unit, policy))
    try:
        eid = d.ok("POST", "/reset_unit")["episode_id"]
        evidence(d, eid)
        v = d.ok("POST", "/end_episode")
        e = event(v, what, container)
        check(e and e["at"] > 0 and e["subtree"] == "zones/agent/" + container,
              "the %s event listed with its time and container: %s" % (what, v["events"]))
        if policy is None:
            check(v["verdict"] == "graded" and e["policy"] == "record",
                  "recorded, graded (the default): %s" % v)
        else:
            check(v["verdict"] == "agent_misbehavior" and e["policy"] == "void",
                  "void: %s" % v)
            check((v["blame"] or {}).get("subtree") == "zones/agent/" + container,
                  "blame: %s" % v)
        for w in words:
            check(w in (e.get("reason") or ""), "the event says %r: %s" % (w, e))
        check(d.phase() == "closed", "closed after the verdict")
        # The next episode starts clean.
        check(d.ok("POST", "/reset_unit")["phase"] == "ready", "next reset")
    finally:
        d.stop()


def forkbomb_evidence(d, eid):
    def refused():
        ev = read(d.cg_file("pids", d.member_cgroup("harness"), "pids.events")) or "max 0"
        return int(ev.split()[1]) > 0
    poll(refused, "pids.max to refuse a fork")


def case_forkbomb():
    harness_event("harness-forkbomb.yaml", forkbomb_evidence, "pids_limit", None, ("pids",))


def case_forkbomb_void():
    harness_event("harness-forkbomb.yaml", forkbomb_evidence, "pids_limit", "{pids_limit: void}",
                  ("pids",))


def detach_evidence(d, eid):
    d.wait_ws_file(eid, "detach.done")


def case_detached():
    harness_event("harness-detach.yaml", detach_evidence, "detached", None, ("detached",))


def case_detached_void():
    harness_event("harness-detach.yaml", detach_evidence, "detached", "{detached: void}",
                  ("detached",))


def case_oom():
    # The harness's principal itself is OOM-killed: its exit (void by
    # default, its end memory_limit), and the OOM kill listed.
    d = Daemon("harness-oom.yaml")
    try:
        d.ok("POST", "/reset_unit")
        poll(lambda: event(d.ok("GET", "/verdict"), "exited", "harness"), "the harness's exit", 60)
        v = d.ok("POST", "/end_episode")
        check(v["verdict"] == "agent_misbehavior" and
              v["blame"] == {"subtree": "zones/agent/harness", "cause": "memory_limit"} and
              "memory" in v["reason"], "verdict: %s" % v)
        e = event(v, "exited", "harness")
        check(e["policy"] == "void" and e["end"] == "memory_limit", "its exit: %s" % e)
        o = event(v, "oom_kill", "harness")
        check(o and o["policy"] == "record" and o["count"] >= 1, "the OOM kill: %s" % v["events"])
        check(d.ok("POST", "/reset_unit")["phase"] == "ready", "next reset")
    finally:
        d.stop()


def fill_evidence(d, eid):
    d.wait_ws_file(eid, "fill.errno-28")  # ENOSPC: the workspace is bounded


def case_fill_disk():
    # The zone's bytes: owned by the harness's uid range, so it is blamed.
    harness_event("harness-fill.yaml", fill_evidence, "disk_full", None, ("disk",))


def case_fill_disk_void():
    harness_event("harness-fill.yaml", fill_evidence, "disk_full", "{disk_full: void}", ("disk",))


def case_oom_then_fix():
    """Issue 26: the env server's child program is OOM-killed (the server
    survives and returns its result), the agent's fixed program succeeds:
    graded, the OOM kill listed."""
    d = Daemon("env-oom-child.yaml")
    try:
        d.ok("POST", "/reset_unit")
        obs = d.ok("POST", "/step", {"action": {"message": "run:oom"}})["observation"]
        check(obs.get("exit_code") == -9, "the child was OOM-killed, the env answered: %s" % obs)
        obs = d.ok("POST", "/step", {"action": {"message": "run:ok"}})["observation"]
        check(obs.get("exit_code") == 0, "the fixed program succeeds: %s" % obs)
        d.ok("POST", "/step", {"action": {"message": "done"}})
        v = d.wait_verdict()
        check(v["verdict"] == "graded" and v["graders_ran"] and
              v["observers"].get("judge", {}).get("phase") == "grading", "graded: %s" % v)
        e = event(v, "oom_kill", "env")
        check(e and e["policy"] == "record" and e["cause"] == "memory_limit" and
              e["count"] >= 1 and e["at"] > 0, "the OOM kill listed: %s" % v["events"])
        check(not event(v, "exited", "env"), "the env server survived: %s" % v["events"])
    finally:
        d.stop()


def observer_failure(unit, args, blame, words, kind="infrastructure_error"):
    d = Daemon(unit, args=args)
    try:
        d.ok("POST", "/reset_unit")
        v = d.ok("POST", "/end_episode")
        check(v["verdict"] == kind, "verdict: %s" % v)
        check((v["blame"] or {}).get("subtree") == blame, "blame: %s" % v)
        for w in words:
            check(w in (v["reason"] or ""), "reason mentions %r: %s" % (w, v["reason"]))
        check(d.phase() == "closed", "closed")
        check(d.ok("POST", "/reset_unit")["phase"] == "ready", "next reset")
        return v
    finally:
        d.stop()


def case_observer_crash():
    v = observer_failure("observer-crash.yaml", [], "zones/observers/judge", ("status 3",))
    ev = [e for e in v["events"] if e.get("what") == "observer_failed"]
    check(len(ev) == 1 and ev[0]["container"] == "judge" and "status 3" in ev[0]["reason"] and
          "judge| judge: the expected answer is missing" in ev[0].get("output_tail", ""),
          "the failed observer's own last lines in the verdict: %s" % v["events"])


def case_observer_hang():
    observer_failure("observer-hang.yaml", ["--observer-timeout", "1"], "zones/observers/judge",
                     ("timed out",))


def case_early_observers():
    d = Daemon("early-observers.yaml")
    try:
        for episode in range(2):
            check(d.ok("POST", "/reset_unit")["phase"] == "ready", "ready")
            # Started in the background once ready, beside the agent zone.
            leaf = d.member_cgroup("watch")
            poll(lambda: "populated 1" in (read(d.cg_file(
                "unified", leaf, "cgroup.events")) or ""), "watch running")
            check(d.phase() == "ready", "observers do not hold up ready")
            eid = d.ok("GET", "/info")["episode_id"]
            for name in ("watch", "twice"):
                poll(lambda n=name: read("/proc/%d/root%s/episodes/%s/observers/%s/out/verdict.json"
                                         % (d.pid, d.state, eid, n)), "%s wrote its result" % name)
            v = d.ok("POST", "/end_episode")
            check(v["verdict"] == "graded", "stopping a running early observer is no failure: %s"
                  % v)
            obs = v["observers"]
            check(obs.get("watch") == {"phase": "ready"}, "watch recorded: %s" % obs)
            check(obs.get("twice") == {"phase": "ready", "starts": 1},
                  "twice started once, at ready, collected at grading: %s" % obs)
            check(d.phase() == "closed", "closed")
    finally:
        d.stop()


def case_custody_symlink():
    observer_failure("custody-symlink.yaml", [], "zones/observers/runner", ("evil-link",),
                     "agent_misbehavior")


def case_custody_fifo():
    observer_failure("custody-fifo.yaml", [], "zones/observers/runner", ("evil-fifo",),
                     "agent_misbehavior")


def runner_role(role, memory_mb=None):
    """custody-symlink.yaml's unit with the runner in another role."""
    with open(os.path.join(INSTALL, "custody-symlink.yaml")) as f:
        text = f.read().replace("observer.py, symlink]", "observer.py, %s]" % role)
    if memory_mb:
        text = text.replace("          reads: [workspace]\n", "          reads: [workspace]\n"
                            "          resources: {memory_mb: %d}\n" % memory_mb)
    name = "runner-%s.yaml" % role
    with open(os.path.join(INSTALL, name), "w") as f:
        f.write(text)
    os.chmod(os.path.join(INSTALL, name), 0o644)
    return name


def case_runner_verdict_symlink():
    v = observer_failure(runner_role("verdict-symlink"), [], "zones/observers/runner",
                         ("invalid verdict.json",), "agent_misbehavior")
    check(v["blame"].get("cause") == "invalid_result", "cause: %s" % v["blame"])


def case_runner_balloon():
    v = observer_failure(runner_role("balloon", memory_mb=64), [], "zones/observers/runner",
                         ("out of memory", "its own limit"), "agent_misbehavior")
    check(v["blame"].get("cause") == "memory_limit", "cause: %s" % v["blame"])


NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all"]


def fallback_manifest(port):
    d = tempfile.mkdtemp(prefix="openenvd-live-fb.")
    os.chmod(d, 0o755)
    with open(os.path.join(INSTALL, "fallback.yaml.in")) as f:
        text = f.read().replace("@PORT@", str(port))
    path = os.path.join(d, "openenv.yaml")
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o644)
    return d, path


def case_fallback_unprivileged():
    port = free_port()
    d, manifest = fallback_manifest(port)
    log = os.path.join(d, "log")
    proc = None
    try:
        with open(log, "w") as e:
            proc = subprocess.Popen(NOBODY + [OPENENVD, "--manifest", manifest], stdout=e, stderr=e,
                                    stdin=subprocess.DEVNULL)

        def health():
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/health" % port, timeout=2) as r:
                    return json.loads(r.read())
            except (OSError, ValueError):
                check(proc.poll() is None, "openenvd exited: %s" % read(log))
                return None
        check(poll(health, "the env server on the manifest's port") == {"server": "envd"},
              "the env server itself answers")
        text = read(log)
        check("isolation disabled: " in text, "logs the reasons: %s" % text)
        check("exec /usr/bin/python3 /opt/openenvd-test/bin/envd.py" in text, "logs the exec")
        # It is the env server, not the daemon: no control API.
        with urllib.request.urlopen("http://127.0.0.1:%d/ticks" % port, timeout=5) as r:
            check(r.status == 200, "env route")
        try:
            urllib.request.urlopen("http://127.0.0.1:%d/info" % port, timeout=5)
            check(False, "/info answered")
        except urllib.error.HTTPError as e:
            check(e.code == 404, "/info is the env's 404")
        check(os.stat("/proc/%d" % proc.pid).st_uid == 65534, "runs as nobody")
    finally:
        if proc:
            proc.kill()
            proc.wait()
        shutil.rmtree(d, ignore_errors=True)


def listening_on(port):
    """Local addresses listening on TCP port (from /proc/net/tcp{,6})."""
    out = []
    for f in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in (read(f) or "").splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            addr, p = local.rsplit(":", 1)
            if int(p, 16) == port and state == "0A":
                out.append(addr)
    return out


def case_fallback_port_and_listen():
    # Stepping aside with the manifest's app: --port and --listen go into
    # the uvicorn command openenvd writes. It starts where openenvd started,
    # with openenvd's environment minus openenvd's own variables.
    port = free_port()
    d = tempfile.mkdtemp(prefix="openenvd-live-fb.")
    os.chmod(d, 0o755)
    log = os.path.join(d, "log")
    proc = None
    try:
        with open(log, "w") as e:
            proc = subprocess.Popen(
                NOBODY + [OPENENVD, "--manifest", os.path.join(INSTALL, "fallback-app.yaml"),
                          "--port", str(port), "--listen", "127.0.0.1"],
                stdout=e, stderr=e, stdin=subprocess.DEVNULL, cwd=d,
                env={"PATH": os.environ["PATH"], "OPENENVD_TOKEN": "fallback-secret",
                     "IMAGE_SETTING": "kept"})

        def health():
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/health" % port, timeout=2) as r:
                    return json.loads(r.read())
            except (OSError, ValueError):
                check(proc.poll() is None, "openenvd exited: %s" % read(log))
                return None
        check(poll(health, "the env server on --port", 60) == {"server": "asgi"}, "asgi")
        check("exec uvicorn asgi_app:app --host 127.0.0.1 --port %d" % port in read(log),
              "the command carries --listen and --port: %s" % read(log))
        check(listening_on(port) == ["0100007F"], "bound to 127.0.0.1 only: %s"
              % listening_on(port))
        with urllib.request.urlopen("http://127.0.0.1:%d/env" % port, timeout=5) as r:
            env = json.loads(r.read())
        check(env["cwd"] == d, "started where openenvd started: %s" % env["cwd"])
        check("IMAGE_SETTING" in env["names"], "the environment is kept: %s" % env["names"])
        check(not [n for n in env["names"] if n.startswith("OPENENVD_")],
              "openenvd's own variables are not the env's: %s" % env["names"])
    finally:
        if proc:
            proc.kill()
            proc.wait()
        shutil.rmtree(d, ignore_errors=True)

    # Any other command says where it listens itself: openenvd says so.
    port = free_port()
    other = free_port()
    d, manifest = fallback_manifest(port)
    log = os.path.join(d, "log")
    proc = None
    try:
        with open(log, "w") as e:
            proc = subprocess.Popen(NOBODY + [OPENENVD, "--manifest", manifest, "--port",
                                              str(other)],
                                    stdout=e, stderr=e, stdin=subprocess.DEVNULL)
        poll(lambda: listening_on(port) or proc.poll() is not None, "the env server", 60)
        check(proc.poll() is None, "openenvd exited: %s" % read(log))
        check("--port/--listen not applied" in read(log) and "port is %d" % port in read(log),
              "says why: %s" % read(log))
        check(not listening_on(other), "nothing pretends to serve on --port")
    finally:
        if proc:
            proc.kill()
            proc.wait()
        shutil.rmtree(d, ignore_errors=True)


def ctl(*args, env=None):
    """openenvctl with args: (exit code, stdout, stderr)."""
    r = subprocess.run([OPENENV, *args], capture_output=True, text=True, timeout=60,
                       env={**os.environ, **(env or {})})
    return r.returncode, r.stdout, r.stderr


def case_openenvctl_reads_a_running_unit():
    d = Daemon("failable.yaml", args=["--no-standby"])
    url = "http://openenv:%s@127.0.0.1:%d" % (TOKEN, d.port)
    bare = "http://127.0.0.1:%d" % d.port
    try:
        poll(lambda: d.phase() == "ready", "the first episode")
        eid = d.ok("GET", "/info")["episode_id"]
        rc, out, err = ctl("status", "--url", url)
        check(rc == 0 and "ready      yes" in out and "phase      ready" in out and
              eid in out, "status, a table: %d %s %s" % (rc, out, err))
        rc, out, _ = ctl("status", "--url", bare, "--json", env={"OPENENVD_TOKEN": TOKEN})
        j = json.loads(out)
        check(rc == 0 and j["episode_id"] == eid and j["readiness"]["ready"] is True and
              j["version"], "status --json, the token from the environment: %s" % out)
        token_file = os.path.join(d.dir, "token")
        check(d.ok("POST", "/end_episode")["verdict"] == "graded", "ended")
        check(d.ok("POST", "/reset_unit")["phase"] == "ready", "the next episode")
        rc, out, err = ctl("episodes", "--url", bare, "--token-file", token_file)
        rows = [line.split() for line in out.splitlines()]
        check(rc == 0 and rows[0][0] == "EPISODE" and rows[1][1] == "ready" and
              [eid, "graded"] == rows[2][:2], "episodes, the token from a file: "
              "%d %s %s" % (rc, out, err))
        rc, out, _ = ctl("verdict", "--url", url, "--episode", eid, "--json")
        check(rc == 0 and json.loads(out)["verdict"] == "graded", "verdict --episode: %s" % out)
        # The ended episode's env output, kept after its teardown; its last line.
        rc, out, err = ctl("logs", "--url", url, "--container", "env", "--episode", eid)
        check(rc == 0 and "envd: serving on port 8000" in out, "logs of the ended episode's "
              "env: %d %r %s" % (rc, out, err))
        rc, last, _ = ctl("logs", "--url", url, "--container", "env", "--tail", "1")
        check(rc == 0 and last.count("\n") <= 1 and last.strip() == 
              d.request("GET", "/logs?container=env")[1].strip().splitlines()[-1],
              "--tail 1: %r" % last)
        rc, out, _ = ctl("metrics", "--url", url)
        check(rc == 0 and "openenvd_build_info{" in out, "metrics: %s" % out[:200])
        # The unit's own words when it refuses; exit 1.
        rc, out, err = ctl("status", "--url", "http://openenv:wrong@127.0.0.1:%d" % d.port)
        check(rc == 1 and "the unit answered 401: credentials missing or wrong" in err,
              "a wrong token: %d %s" % (rc, err))
        rc, _, err = ctl("verdict", "--url", url, "--episode", "no-such-episode")
        check(rc == 1 and "404" in err, "an unknown episode: %d %s" % (rc, err))
    finally:
        d.stop()
    # Nothing listens any more: exit 3, and bad usage is exit 2.
    rc, _, err = ctl("status", "--url", url)
    check(rc == 3 and "Connection refused" in err, "unreachable: %d %s" % (rc, err))
    for args in (("logs", "--url", url), ("status", "--url", "https://x"),
                 ("verdict", "--url", url, "--episode", "a/b"), ("metrics", "--json")):
        rc, _, err = ctl(*args)
        check(rc == 2 and err, "%s: exit %d %s" % (" ".join(args), rc, err))


def case_token_shared_by_two_principals():
    """One secret, two principals: the wider would win, so it is refused,
    before the preflight, with the option that named it."""
    d, manifest = fallback_manifest(free_port())
    try:
        for name, other in (("token", "the orchestrator"), ("agent-token", "the agent")):
            same = os.path.join(d, "same")
            with open(same, "w") as f:
                f.write("one-secret\n")
            args = ["--token-file", same] if name == "token" else [
                "--token-file", os.path.join(d, "orch"), "--agent-token-file", same]
            with open(os.path.join(d, "orch"), "w") as f:
                f.write("orchestrator-secret\n")
            r = subprocess.run([OPENENVD, "--manifest", manifest, "--metrics-token-file", same] +
                               args, capture_output=True, text=True, timeout=60,
                               stdin=subprocess.DEVNULL)
            check(r.returncode == 2 and "the metrics token is another principal's" in r.stderr,
                  "metrics token = %s's: %d %s" % (other, r.returncode, r.stderr))
    finally:
        shutil.rmtree(d, ignore_errors=True)


# "2026-12-06T19:19:12.123456Z LINE": /logs?timestamps=1 and openenvctl logs -t.
STAMPED = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.(\d{6})Z (.*)$")


def stamped(line):
    """(seconds since the epoch, text) of a timestamped line; a Failure if it is not one."""
    m = STAMPED.match(line)
    check(m, "not a timestamped line: %r" % line)
    return calendar.timegm(time.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S")) + \
        int(m.group(2)) / 1e6, m.group(3)


def case_logs_timestamps_since_and_follow():
    t0 = time.time()
    d = Daemon("failable.yaml", args=["--no-standby"])
    url = "http://openenv:%s@127.0.0.1:%d" % (TOKEN, d.port)
    env = "/logs?container=env"
    follower = None

    def step_log(msg):
        d.ok("POST", "/step", {"action": {"message": msg}})

    def poll_lines(since):
        return poll(lambda: (lambda j: j if j["lines"] else None)(
            d.ok("GET", env + "&format=json&since=%d" % since)), "new lines from %d" % since)

    try:
        poll(lambda: d.phase() == "ready", "the first episode")
        eid = d.ok("GET", "/info")["episode_id"]
        follower = subprocess.Popen([OPENENV, "logs", "--url", url, "--container", "env",
                                     "--follow", "--timestamps"], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
        # timestamps=1: every line is "TIME LINE", the time the daemon read it.
        status, text = d.request("GET", env + "&timestamps=1")
        check(status == 200 and isinstance(text, str), "timestamps=1: %s %r" % (status, text))
        first = [stamped(line) for line in text.splitlines()]
        t, _ = [x for x in first if x[1] == "envd: serving on port 8000"][0]
        check(t0 - 1 <= t <= time.time() + 1, "the env's line read at %f, the test started at "
              "%f" % (t, t0))
        # format=json: whole lines, from 0 to next, the same bytes as the text form.
        raw = d.request("GET", env)[1]
        j = d.ok("GET", env + "&format=json")
        check(j["episode_id"] == eid and j["container"] == "env" and j["offset"] == 0 and
              j["complete"] is False and j["dropped"] == 0 and
              j["next"] == len(raw.encode()) and
              "".join(x["text"] + "\n" for x in j["lines"]) == raw, "format=json: %s" % j)
        nxt = j["next"]
        # A new line arrives once, at next.
        step_log("log:a line from a step")
        j = poll_lines(nxt)
        check(j["offset"] == nxt and [x["text"] for x in j["lines"]] == ["a line from a step"],
              "since=next: %s" % j)
        nxt = j["next"]
        # A line not ended yet waits (the text form has it already), then comes whole.
        step_log("logpart:half ")
        poll(lambda: d.request("GET", env)[1].endswith("half "), "the unfinished line read")
        j = d.ok("GET", env + "&format=json&since=%d" % nxt)
        check(j["lines"] == [] and j["next"] == nxt, "an unfinished line is held back: %s" % j)
        step_log("log:and its end")
        j = poll_lines(nxt)
        check([x["text"] for x in j["lines"]] == ["half and its end"] and
              j["next"] == nxt + len("half and its end\n"), "the line, whole: %s" % j)
        # Bad values: 400, saying which rule.
        for q in ("since=abc", "since=-1", "since=262145", "format=xml", "timestamps=yes",
                  "since=1&since=2"):
            status, err = d.request("GET", env + "&" + q)
            word = q.split("=")[0]
            check(status == 400 and err["error"]["code"] == "bad_request" and
                  (word in err["error"]["message"] or "twice" in err["error"]["message"]),
                  "%s: %s %s" % (q, status, err))
        # An episode id has one rule, refused in the same words by /logs and /verdict.
        refusals = [d.request("GET", path) for path in (env + "&episode_id=" + "x" * 64,
                                                         "/verdict?episode_id=e/1")]
        check(all(st == 400 and err["error"]["message"] == "episode_id: 1 to 63 of [A-Za-z0-9._-]"
                  for st, err in refusals), "a bad episode id: %s" % refusals)
        # The follower waits for more until the episode ends, then exits 0.
        check(follower.poll() is None, "the follower is still following")
        d.ok("POST", "/end_episode")
        out, err = follower.communicate(timeout=30)
        final = d.request("GET", env + "&episode_id=" + eid)[1]
        check(follower.returncode == 0 and [stamped(line)[1] for line in out.splitlines()] ==
              final.splitlines() and "half and its end" in final,
              "--follow: exit %s\n%s\n%s\nthe episode's output:\n%s" %
              (follower.returncode, out, err, final))
        j = d.ok("GET", env + "&format=json&episode_id=%s&since=%d" % (eid, len(final.encode())))
        check(j["complete"] is True and j["lines"] == [], "ended: complete %s" % j)
        # Following an ended episode: its last line, and exit 0 at once.
        rc, out, err = ctl("logs", "--url", url, "--container", "env", "--episode", eid,
                           "--follow", "--tail", "1")
        check(rc == 0 and out == final.splitlines()[-1] + "\n",
              "--follow --tail 1: %d %r %s" % (rc, out, err))
        rc, out, err = ctl("logs", "--url", url, "--container", "env", "--episode", eid, "--json")
        check(rc == 0 and json.loads(out)["complete"] is True, "--json: %d %s %s" % (rc, out, err))
        # SIGINT stops a follower at once, between two lines: 130, nothing said.
        check(d.ok("POST", "/reset_unit")["phase"] == "ready", "the next episode")
        poll(lambda: "envd: serving" in d.request("GET", env)[1], "the next env's first line")
        follower = subprocess.Popen([OPENENV, "logs", "--url", url, "--container", "env", "-f"],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = follower.stdout.readline()
        follower.send_signal(signal.SIGINT)
        out, err = follower.communicate(timeout=10)
        check(line.startswith("envd: serving") and follower.returncode == 130 and not err,
              "SIGINT: exit %s, %r %r %r" % (follower.returncode, line, out, err))
        log = d.tail(50)
        check(d.stop() == 0, "a clean exit (nothing leaked under ASan):\n%s" % log)
    finally:
        if follower and follower.poll() is None:
            follower.kill()
            follower.wait()
        d.stop()


def case_require_isolation_refusal():
    port = free_port()
    d, manifest = fallback_manifest(port)
    try:
        for extra, env in (([" --require-isolation"], {}), ([], {"OPENENVD_REQUIRE_ISOLATION": "1"})):
            args = [a.strip() for a in extra]
            r = subprocess.run(NOBODY + [OPENENVD, "--manifest", manifest] + args,
                               capture_output=True, text=True, timeout=60,
                               env={**os.environ, **env}, stdin=subprocess.DEVNULL)
            check(r.returncode == 3, "exit 3 (%s%s): %d %s" % (args, env, r.returncode, r.stderr))
            check("isolation disabled: " in r.stderr and "--require-isolation" in r.stderr,
                  "logs the reasons: %s" % r.stderr)
            check(socket.socket().connect_ex(("127.0.0.1", port)) != 0, "nothing listens")
    finally:
        shutil.rmtree(d, ignore_errors=True)


def cgroup_dirs():
    """Every cgroup directory of every hierarchy mounted below /sys/fs/cgroup."""
    found = set()
    tops = [e.path for e in os.scandir("/sys/fs/cgroup") if e.is_dir(follow_symlinks=False)]
    for top in tops:
        for root, dirs, _ in os.walk(top):
            found.update(os.path.join(root, x) for x in dirs)
    return found


def case_runc_contained():
    """A zone under runc: its containers sit in their own leaves of every
    hierarchy the daemon manages, the freeze of the zone stops them, and runc
    makes no cgroup outside the daemon's subtree. runc 1.1 strips the ".." of
    a relative cgroupsPath and puts the cgroup2 half of a hybrid host's at the
    root of the tree: given the daemon's relative path it placed the agent
    below the daemon's own control/ and at the cgroup2 root, where the env kept
    running through the freeze, and left zones/... at six hierarchies' roots."""
    with open(os.path.join(INSTALL, "full.yaml")) as f:
        text = f.read()
    check("    agent:\n" in text, "the full unit has an agent zone")
    with open(os.path.join(INSTALL, "full-runc.yaml"), "w") as f:
        f.write(text.replace("    agent:\n", "    agent:\n      runtime: {oci: runc}\n", 1))
    before = cgroup_dirs()
    d = None
    try:
        d = Daemon("full-runc.yaml", args=["--require-isolation"])
        eid = d.ok("POST", "/reset_unit")["episode_id"]
        d.wait_ws_file(eid, "ticks")
        mounts = {"unified": cgroup2_mount()}
        for member in ("env", "harness"):
            leaf = d.member_cgroup(member)
            pids = d.member_pids(member)
            check(pids, "%s's container in its leaf %s" % (member, leaf))
            for pid in pids:
                for line in (read("/proc/%d/cgroup" % pid) or "").splitlines():
                    _, ctrls, path = line.split(":", 2)
                    name = "unified" if ctrls == "" else ctrls
                    if name not in d.cg:
                        continue  # a hierarchy the daemon leaves alone
                    where = mounts.get(name, "/sys/fs/cgroup/" + ctrls) + path
                    check(where == d.cg[name] + "/" + leaf,
                          "%s pid %d in %s: %s" % (member, pid, name, where))
        check(not os.path.isdir("/sys/fs/cgroup/unified") or
              {"unified", "memory", "pids", "freezer", "devices"} <= set(d.cg),
              "a hybrid host's hierarchies all checked: %s" % sorted(d.cg))
        d.ok("POST", "/step", {"action": {"message": "hello"}})
        check(d.ok("POST", "/inspect")["phase"] == "frozen", "inspect -> frozen")
        # The env's ticker (20 ms period) does not advance while frozen.
        ticks = read(d.ws_file(eid, "ticks"))
        end = time.monotonic() + 0.5
        while time.monotonic() < end:
            check(read(d.ws_file(eid, "ticks")) == ticks, "the runc env ran on while frozen")
            time.sleep(0.05)
        check(d.ok("POST", "/resume")["phase"] == "running", "resume -> running")
        poll(lambda: read(d.ws_file(eid, "ticks")) != ticks, "the env to run again")
    finally:
        roots = dict(d.cg) if d else {}
        if d:
            check(d.stop() == 0, "clean shutdown")
    # What runc made outside any daemon's subtree (other tests' daemons may
    # come and go meanwhile, each below an openenvd-* of its own).
    stray = sorted(p for p in cgroup_dirs() - before
                   if {"zones", "env"} & set(p.split("/"))
                   and not any(x.startswith("openenvd-") for x in p.split("/")))
    check(not stray, "runc made cgroups outside the daemon's subtree: %s" % stray)
    left = [r for r in roots.values() if os.path.exists(r)]
    check(not left, "the daemon's subtree left behind: %s" % left)


def census(d):
    cgroups = 0
    for root in d.cg.values():
        for _, dirs, _ in os.walk(root):
            cgroups += len(dirs)
    # The daemon's own mounts (under its state dir): its namespace also
    # follows the host's mounts, which other work on this machine changes.
    mounts = [l for l in (read("/proc/%d/mountinfo" % d.pid) or "").splitlines()
              if l.split()[4].startswith(d.state)]
    return {"fds": len(os.listdir("/proc/%d/fd" % d.pid)),
            "mounts": len(mounts),
            "cgroups": cgroups,
            "processes": len(descendants(d.pid))}


LEAK = {}


def daemon_tcp_into(d, pid):
    """The daemon's TCP sockets that live in pid's network namespace (their
    inodes in its /proc/PID/net/tcp) and are connected to port 8000 there."""
    mine = set()
    for fd in os.listdir("/proc/%d/fd" % d.pid):
        try:
            link = os.readlink("/proc/%d/fd/%s" % (d.pid, fd))
        except OSError:
            continue
        if link.startswith("socket:["):
            mine.add(link[8:-1])
    found = 0
    for line in (read("/proc/%d/net/tcp" % pid) or "").splitlines()[1:]:
        f = line.split()
        if f[2].endswith(":1F40") and f[9] in mine:
            found += 1
    return found


def case_env_direct_keepalive():
    # One keep-alive client connection across three episodes: each episode's
    # first step must reach that episode's own, fresh env server (steps == 1),
    # through a socket the daemon made in the env's network namespace (no hop
    # through the shim). Each episode's namespace is its own
    # (tests/attacks/test_netns_reuse.py).
    d = Daemon("failable.yaml", args=["--log-level", "debug"])
    conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=60)
    hdr = {"Authorization": "Bearer " + TOKEN, "Content-Type": "application/json"}

    def step(msg):
        conn.request("POST", "/step", json.dumps({"action": {"message": msg}}), hdr)
        r = conn.getresponse()
        return r.status, json.loads(r.read())
    try:
        for ep in range(3):
            check(d.ok("POST", "/reset_unit")["phase"] == "ready", "reset %d" % ep)
            status, body = step("hello")
            check(status == 200 and body["observation"]["steps"] == 1,
                  "episode %d: the kept-alive connection reached a fresh env server: %s %s"
                  % (ep, status, body))
            env_pid = d.member_pids("env")[-1]
            check(daemon_tcp_into(d, env_pid) == 1,
                  "episode %d: the daemon holds one TCP connection to port 8000 inside the "
                  "env's network namespace" % ep)
            status, body = step("done")
            check(status == 200 and body["done"] is True, "done: %s %s" % (status, body))
            check(d.wait_verdict()["verdict"] == "graded", "graded")
    finally:
        conn.close()
        d.stop()


def case_leak_1000_episodes():
    d = Daemon("minimal.yaml")
    try:
        def episode():
            check(d.ok("POST", "/reset_unit")["phase"] == "ready", "reset")
            check(d.ok("POST", "/end_episode")["verdict"] == "graded", "end")
        episode()  # warm: the asset copy and state dirs exist from now on
        # The next standby is built in the background, and the connection of
        # the request that asked whether it is ready closes asynchronously:
        # count once it is ready, with no request of ours in flight, when
        # three counts in a row agree.
        def quiet_census():
            if d.ok("GET", "/info")["standby"]["state"] != "ready":
                return None
            seen = []
            for _ in range(100):
                seen.append(census(d))
                if len(seen) >= 3 and seen[-1] == seen[-2] == seen[-3]:
                    return seen[-1]
                time.sleep(0.05)
            return None
        before = poll(quiet_census, "a settled census")
        t0 = time.monotonic()
        for _ in range(LEAK_EPISODES):
            episode()
        elapsed = time.monotonic() - t0
        last = [None]

        def back_to_before():
            last[0] = quiet_census()
            return last[0] == before
        try:
            poll(back_to_before, "the census to return to its first value", 10)
        except Failure:
            pass
        after = last[0]
        LEAK.update(before=before, after=after, episodes=LEAK_EPISODES,
                    per_episode_ms=1000 * elapsed / LEAK_EPISODES)
        print("# leak census before %s after %s; %d episodes, %.1f ms each"
              % (before, after, LEAK_EPISODES, LEAK["per_episode_ms"]))
        # Mounts, cgroups and processes must come back exactly. The fd
        # count may differ by a unit of in-flight work (one pidfd seen in
        # CI once per ~1000 episodes, not reproduced by hand over 1000);
        # a per-episode leak shows as hundreds.
        check(after is not None and before is not None
              and {k: v for k, v in after.items() if k != "fds"}
              == {k: v for k, v in before.items() if k != "fds"}
              and abs(after["fds"] - before["fds"]) <= 1,
              "resources grew over %d episodes: %s -> %s" % (LEAK_EPISODES, before, after))
    finally:
        d.stop()


CASES = [
    ("a metrics token that is the orchestrator's or the agent's: exit 2, said",
     case_token_shared_by_two_principals),
    ("full episode graded (reset, /step over the relay, done, observers in order)",
     case_full_episode_graded),
    ("assets, state dir and secrets unreadable from env, harness and runner",
     case_secrets_unreadable),
    ("hidden service reachable only from env and only through its relay",
     case_service_only_via_relay),
    ("egress impossible from env, harness and runner", case_egress_impossible),
    ("real model key absent from every zone; harness's model call works via the proxy",
     case_model_key_absent),
    ("inspect freezes the agent zone, resume thaws it", case_inspect_resume),
    ("reset works from closed, ready, running, frozen and failed", case_reset_from_every_phase),
    ("--verdict-history N: the last N verdicts by id, an older id 404 in words, 0 refused",
     case_verdict_history),
    ("openenvctl status, episodes, verdict, logs, metrics read a running unit; errors in words",
     case_openenvctl_reads_a_running_unit),
    ("/logs timestamps=1, format=json from since to next (an unfinished line held back), "
     "openenvctl logs --follow ending with its episode and on SIGINT",
     case_logs_timestamps_since_and_follow),
    ("fork bomb => pids_limit listed, graded (the default policy)", case_forkbomb),
    ("fork bomb under pids_limit: void => agent_misbehavior blamed on zones/agent/harness",
     case_forkbomb_void),
    ("detached process left behind => listed, graded (the default policy)", case_detached),
    ("detached process under detached: void => agent_misbehavior on zones/agent/harness",
     case_detached_void),
    ("the harness's principal OOM-killed => its exit (void by default) and the OOM kill listed, "
     "agent_misbehavior on zones/agent/harness", case_oom),
    ("disk filled => disk_full listed, graded (the default policy)", case_fill_disk),
    ("disk filled under disk_full: void => agent_misbehavior on zones/agent/harness",
     case_fill_disk_void),
    ("the OOM-then-fix episode: the env's child OOM-killed, the env survives, the fixed "
     "program succeeds => graded with the OOM kill listed", case_oom_then_fix),
    ("crashing observer => infrastructure_error blamed on zones/observers/judge",
     case_observer_crash),
    ("hanging observer => infrastructure_error blamed on zones/observers/judge",
     case_observer_hang),
    ("observers listing ready/running start at ready, stop at sealing, start once",
     case_early_observers),
    ("runner output holding a symlink is refused by custody", case_custody_symlink),
    ("runner output holding a FIFO is refused by custody", case_custody_fifo),
    ("a runner's /out/verdict.json a symlink => agent_misbehavior on the runner, invalid_result",
     case_runner_verdict_symlink),
    ("a runner OOM-killed at its own limit => agent_misbehavior on the runner, memory_limit",
     case_runner_balloon),
    ("unprivileged: isolation disabled, the env server runs on the same port",
     case_fallback_unprivileged),
    ("unprivileged with --require-isolation / OPENENVD_REQUIRE_ISOLATION=1: exit 3",
     case_require_isolation_refusal),
    ("a zone under runc: its containers in their own leaves of every hierarchy, frozen "
     "by inspect, no cgroup outside the daemon's subtree", case_runc_contained),
    ("unprivileged: --port and --listen go into the app's command, or the log says why not",
     case_fallback_port_and_listen),
    ("a keep-alive client reaches each episode's env server directly, in the env's own "
     "namespace", case_env_direct_keepalive),
    ("%d consecutive episodes leak no fd, mount, cgroup or process" % LEAK_EPISODES,
     case_leak_1000_episodes),
]


def install():
    shutil.rmtree(INSTALL, ignore_errors=True)
    shutil.copytree(UNITS_SRC, INSTALL, symlinks=True)
    os.makedirs(RUN)
    for root, dirs, files in os.walk(INSTALL):
        os.chmod(root, 0o755)
        for f in files:
            os.chmod(os.path.join(root, f), 0o644)
    # The asset stays private to root, as an author's answers would be.
    os.chmod(os.path.join(INSTALL, "assets"), 0o700)
    os.chmod(os.path.join(INSTALL, "assets/oracle.json"), 0o600)


SECRETS = {}


def setup():
    # One run at a time on this machine: the units are installed at a fixed
    # image path. SIGTERM (a test-runner timeout) still runs the cleanup.
    SECRETS["lock"] = open("/run/lock/openenvd-live-unit.lock", "w")
    fcntl.flock(SECRETS["lock"], fcntl.LOCK_EX)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    install()
    if not os.path.exists("/run/secrets"):
        os.makedirs("/run/secrets", 0o700)
        SECRETS["made"] = True
    SECRETS["file"] = "/run/secrets/openenvd-live-secret"
    with open(SECRETS["file"], "w") as f:
        f.write("do not read\n")


def teardown():
    if SECRETS.get("file"):
        os.unlink(SECRETS["file"])
    if SECRETS.get("made"):
        shutil.rmtree("/run/secrets", ignore_errors=True)
    shutil.rmtree(INSTALL, ignore_errors=True)


def main():
    if os.geteuid() != 0:
        cases = [c for c in CASES
                 if not os.environ.get("OPENENVD_LIVE_ONLY")
                 or os.environ["OPENENVD_LIVE_ONLY"] in c[1].__name__]
        print("1..%d" % len(cases))
        for i, (name, _) in enumerate(cases, 1):
            print("ok %d - %s # SKIP needs root" % (i, name))
        return 0
    return run_cases(CASES, setup, teardown)


if __name__ == "__main__":
    sys.exit(main())
