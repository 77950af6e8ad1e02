#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""GET /metrics and --log-format json on live daemons.

    test_metrics_log.py OPENENVD SHIM

One daemon runs the metrics test unit (metrics-unit/: an env server and a
harness whose behaviour the test switches between episodes) through episodes
that end every way the metrics distinguish: done, ended by the orchestrator, a
harness killed by the OOM killer, a fork bomb stopped by its pids limit and
superseded by a reset, standby provisioning failures, a cold provisioning
failure and a cold recovery. Every scrape is parsed strictly
(tools/promtext.py) and compared with what the test did and what /info's
phase history says. A second daemon, started with 64 fds, is flooded with idle
connections: fd-limit refusals, evictions and open connections. Every line
each daemon logged must be one JSON object with the stable keys, and the
bytes a failing env server wrote (0x01-0xff) must reach the log escaped.
Output is TAP; as root every case runs, otherwise they are skipped.
"""
import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
import daemon_unit  # noqa: E402 - Unit: one openenvd, its control API, metrics and log
import livelib  # noqa: E402
from livelib import Failure, check  # noqa: E402
import promtext  # noqa: E402

OPENENVD, SHIM = (os.path.abspath(p) for p in sys.argv[1:3])
TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")
LEVELS = {"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"}
KEYS = {"ts", "level", "program", "pid", "msg"}


def poll(cond, what, timeout=60):
    return livelib.poll(cond, what, timeout)


class Counted(daemon_unit.Unit):
    """A Unit that counts the requests the test sends it: openenvd's
    relay_requests_total must equal that count."""

    sent = 0

    def request(self, *a, **kw):
        self.sent += 1
        return super().request(*a, **kw)


def install():
    d = tempfile.mkdtemp(prefix="openenvd-metrics.", dir="/var/tmp")
    for f in ("env.py", "harness.py", "invalid.yaml"):
        shutil.copy(os.path.join(HERE, "metrics-unit", f), d)
    with open(os.path.join(HERE, "metrics-unit", "unit.yaml.in")) as f:
        text = f.read().replace("@DIR@", d)
    with open(os.path.join(d, "unit.yaml"), "w") as f:
        f.write(text)
    os.makedirs(os.path.join(d, "run"))
    for root, _, files in os.walk(d):
        os.chmod(root, 0o755)
        for f in files:
            os.chmod(os.path.join(root, f), 0o644)
    return d


# --- the scenario: run once, its record checked by the cases ---------------------------

S = {}  # what the scenario saw: scrapes, infos, daemons, errors


def scenario(inst):
    run = os.path.join(inst, "run")
    agent_token = os.path.join(inst, "agent-token")
    with open(agent_token, "w") as f:
        f.write("metrics-agent-token\n")
    scraper_token = os.path.join(inst, "scraper-token")
    with open(scraper_token, "w") as f:
        f.write("metrics-scraper-token\n")
    mode = lambda m: open(os.path.join(run, "mode"), "w").write(m)  # noqa: E731
    fail = os.path.join(run, "fail")
    scrapes = S["scrapes"] = []

    mode("idle")
    d = S["main"] = Counted(OPENENVD, SHIM, os.path.join(inst, "unit.yaml"), inst, "main",
                            args=["--agent-token-file", agent_token,
                                  "--metrics-token-file", scraper_token], start_timeout=60)
    d.start()
    d.wait_ready()

    def scrape():
        m = d.metrics()
        scrapes.append((d.sent, m))
        return m

    def info():
        return d.call("GET", "/info")

    def standby_ready():
        poll(lambda: info()["standby"]["state"] == "ready", "a ready standby")

    def phase(p):
        poll(lambda: info()["phase"] == p, "phase " + p)

    def verdict(kind):
        v = poll(lambda: (lambda v: v if v["verdict"] else None)(d.call("GET", "/verdict")),
                 "a verdict")
        check(v["verdict"] == kind, "verdict %s, expected %s" % (v["verdict"], kind))

    def step(msg):
        status, _, raw = d.request("POST", "/step", {"action": {"message": msg}})
        check(status == 200, "/step -> %d %r" % (status, raw[:200]))

    phase("ready")
    standby_ready()
    S["first"] = scrape()
    # E1: the environment reports done.
    step("hello")
    step("done")
    phase("closed")
    verdict("graded")
    scrape()
    # E2: from the standby; the orchestrator ends it.
    standby_ready()
    d.call("POST", "/reset_unit")
    check(d.call("POST", "/end_episode")["verdict"] == "graded", "E2 graded")
    # E3: the harness exhausts its memory; then done.
    mode("oom")
    standby_ready()
    d.call("POST", "/reset_unit")
    poll(lambda: not info()["members"].get("harness", {"running": True})["running"],
         "the harness killed by the OOM killer")
    live = scrape()
    S["oom_live"] = live["openenvd_container_oom_kills_total"].value(zone="agent",
                                                                     container="harness")
    step("done")
    phase("closed")
    verdict("agent_misbehavior")
    # E4: a fork bomb held by its pids limit, superseded by a reset.
    mode("forkbomb")
    standby_ready()
    d.call("POST", "/reset_unit")
    S["pids_live"] = poll(lambda: scrape()["openenvd_container_pids_limit_events_total"].value(
        zone="agent", container="harness"), "forks refused by pids.max, live")
    # E5: from the standby (provisioned before the flag), superseding E4;
    # every standby after it fails (3 in a row: the unit stops trying).
    mode("idle")
    standby_ready()
    open(fail, "w").close()
    d.call("POST", "/reset_unit")
    poll(lambda: scrape()["openenvd_standby_failures_total"].value() >= 3,
         "three standby failures")
    # E6: cold, fails; E5 superseded. The reset restarts the standby's
    # count: three more standbys fail (the flag is still there) before the
    # unit stops trying.
    status, _, _ = d.request("POST", "/reset_unit")
    check(status == 500, "a reset whose provisioning fails answers 500, got %d" % status)
    check(info()["phase"] == "failed", "phase failed")
    poll(lambda: scrape()["openenvd_standby_failures_total"].value() >= 6 and
         info()["standby"]["state"] == "off", "three more standby failures")
    # Given up, said once per run of failures, with why (no retry loop).
    sb = info()["standby"]
    check(sb["failures"] == 3 and sb["last_failure"], "/info standby off: %s" % sb)
    with open(d.log_path, encoding="utf-8", errors="replace") as f:
        said = f.read().count("standby episodes off after 3 failures in a row")
    check(said == 2,
          "said once per run of three failures:\n%s" % d.tail())
    # E7: cold again (no standby), healthy.
    os.unlink(fail)
    d.call("POST", "/reset_unit")
    phase("ready")
    S["info"] = info()
    S["last"] = scrape()
    S["agent_metrics"] = d.request("GET", "/metrics", headers={
        "Authorization": "Bearer metrics-agent-token"}, token=False)[0]
    S["anon_metrics"] = d.request("GET", "/metrics", token=False)[0]
    # The scraper's own token: /metrics, and nothing that acts.
    scraper = {"Authorization": "Bearer metrics-scraper-token"}
    S["scraper"] = {(m, p): d.request(m, p, headers=scraper, token=False)[0]
                    for m, p in (("GET", "/metrics"), ("GET", "/info"), ("GET", "/verdict"),
                                 ("POST", "/reset_unit"), ("POST", "/end_episode"),
                                 ("POST", "/step"))}

    # Port pressure: a daemon with 64 fds, flooded with idle connections.
    p = S["pressure"] = Counted(OPENENVD, SHIM, os.path.join(inst, "unit.yaml"), inst,
                                "pressure", args=["--no-standby"], nofile=64)
    p.start()
    p.wait_ready()
    poll(lambda: p.call("GET", "/info")["phase"] == "ready", "pressure: ready")
    idle = []
    for _ in range(120):
        s = socket.socket()
        s.connect(("127.0.0.1", p.port))
        idle.append(s)

    def pressure_scrape():
        try:
            return p.metrics()
        except (OSError, RuntimeError, http_errors()):
            return None  # accepted and closed at the fd limit: try again
    m = poll(pressure_scrape, "a scrape under fd pressure")
    S["pressure_flooded"] = m
    for s in idle:
        s.close()
    # At the fd limit the oldest unauthenticated connection yields first;
    # only with none left is a newcomer accepted and closed at once. Held
    # orchestrator connections fill every fd until one is refused.
    held, refused, errors = [], 0, []
    for _ in range(100):
        c = http.client.HTTPConnection("127.0.0.1", p.port, timeout=10)
        try:
            c.request("GET", "/info", headers={"Authorization": "Bearer " + p.token})
            c.getresponse().read()
            held.append(c)
        except (OSError, http.client.HTTPException) as e:
            c.close()
            errors.append(repr(e))
            refused += 1
            if refused == 3:
                break
    S["pressure_held"] = (len(held), refused, errors)
    for c in held[:4]:  # room for the scrape
        c.close()
    S["pressure_refused"] = poll(pressure_scrape, "a scrape after the refusals")
    for c in held[4:]:
        c.close()
    S["pressure_after"] = poll(
        lambda: (lambda m: m if m and m["openenvd_connections"].value() <= 2 else None)(
            pressure_scrape()), "connections closed")
    S["pressure_code"] = p.stop()
    S["main_code"] = d.stop()


def http_errors():
    return http.client.HTTPException


# --- cases ------------------------------------------------------------------------------

def episodes(m):
    return {(l["verdict"], l["reason"]): v for _, l, v in m["openenvd_episodes_total"].samples}


def case_exposition_strict():
    promtext.self_test()
    for _, m in S["scrapes"]:
        for name in ("openenvd_episodes_total", "openenvd_phase_duration_seconds",
                     "openenvd_reset_duration_seconds", "openenvd_container_oom_kills_total",
                     "openenvd_container_pids_limit_events_total", "openenvd_relay_requests_total",
                     "openenvd_relay_bytes_total", "openenvd_connections",
                     "openenvd_unauthenticated_evictions_total",
                     "openenvd_fd_limit_refusals_total", "process_resident_memory_bytes",
                     "process_open_fds", "openenvd_subtree_cpu_seconds_total"):
            check(name in m and m[name].help and m[name].type, "%s missing HELP/TYPE" % name)
    check(S["anon_metrics"] == 401, "/metrics without a token: %s" % S["anon_metrics"])
    check(S["agent_metrics"] == 403, "/metrics with the agent's token: %s" % S["agent_metrics"])
    sc = S["scraper"]
    check(sc[("GET", "/metrics")] == 200 and
          all(v == 403 for k, v in sc.items() if k != ("GET", "/metrics")),
          "--metrics-token-file: /metrics only: %s" % sc)


def case_episodes_by_verdict_and_reason():
    got = {k: v for k, v in episodes(S["last"]).items() if v}
    want = {("graded", "done"): 1, ("graded", "ended_by_orchestrator"): 1,
            ("agent_misbehavior", "done"): 1, ("none", "superseded"): 2,
            ("infrastructure_error", "provisioning_failed"): 1}
    check(got == want, "episodes_total %s, expected %s" % (got, want))
    check(len(episodes(S["last"])) == 4 * 5, "every verdict x reason is a series")
    check(all(v == 0 for v in episodes(S["first"]).values()), "no episode before the first")
    m = S["last"]
    check(m["openenvd_episode_actions_total"].value() == 3, "3 actions (two steps, one step)")
    check(m["openenvd_standby_failures_total"].value() == 6, "6 standby failures")
    check(m["openenvd_phase"].value(phase="ready") == 1 and
          sum(v for _, _, v in m["openenvd_phase"].samples) == 1, "one current phase: ready")


def case_phase_durations_and_resets():
    m, hist = S["last"], S["info"]["history"]
    f = m["openenvd_phase_duration_seconds"]
    for p in ("provisioning", "ready", "running", "frozen", "sealed", "grading", "closed",
              "failed"):
        left = sum(1 for h in hist if h["from"] == p)
        got = f.value("openenvd_phase_duration_seconds_count", phase=p)
        check(got == left, "phase %s left %d times in /info's history, counted %s" % (
            p, left, got))
    r = m["openenvd_reset_duration_seconds"]
    counts = {s: r.value("openenvd_reset_duration_seconds_count", source=s)
              for s in ("standby", "standby_provisioning", "cold")}
    check(counts == {"standby": 4, "standby_provisioning": 0, "cold": 2},
          "resets by source %s (E2-E5 from a ready standby; E1, E7 cold)" % counts)
    check(r.value("openenvd_reset_duration_seconds_sum", source="cold") > 0, "cold sum > 0")


def case_limit_events():
    m = S["last"]
    oom = m["openenvd_container_oom_kills_total"]
    pids = m["openenvd_container_pids_limit_events_total"]
    check(S["oom_live"] >= 1, "OOM kill seen while its episode ran: %s" % S["oom_live"])
    check(S["pids_live"] >= 1, "refused forks seen while its episode ran")
    check(oom.value(zone="agent", container="harness") >= S["oom_live"],
          "OOM kills kept after teardown")
    check(pids.value(zone="agent", container="harness") >= S["pids_live"],
          "refused forks kept after teardown")
    check(oom.value(zone="agent", container="env") == 0 and
          pids.value(zone="agent", container="env") == 0, "nothing blamed on env")


def case_counters_monotonic():
    prev = None
    for sent, m in S["scrapes"]:
        check(m["openenvd_relay_requests_total"].value() == sent,
              "relay_requests_total %s after %d requests" % (
                  m["openenvd_relay_requests_total"].value(), sent))
        if prev:
            for name, f in m.items():
                if f.type not in ("counter", "histogram"):
                    continue
                for key, v in f.series().items():
                    before = prev[name].series().get(key, 0)
                    check(v >= before, "%s%s went from %s to %s" % (name, dict(key), before, v))
        prev = m
    b = S["last"]["openenvd_relay_bytes_total"]
    check(b.value(direction="request") > 0 and b.value(direction="response") > 0,
          "env traffic bytes counted")


def case_port_pressure():
    m, after = S["pressure_flooded"], S["pressure_after"]
    held, refused, errors = S["pressure_held"]
    check(m["openenvd_unauthenticated_evictions_total"].value() >= 1, "no eviction counted")
    check(m["openenvd_fd_limit_refusals_total"].value() == 0,
          "a refusal while there was someone to evict")
    check(refused == 3 and 0 < held < 64, "held %d connections, %d refused: %s" % (
        held, refused, errors))
    check(S["pressure_refused"]["openenvd_fd_limit_refusals_total"].value() >= refused,
          "refusals counted: %s of %d (held %d: %s)" % (
              S["pressure_refused"]["openenvd_fd_limit_refusals_total"].value(), refused, held,
              errors))
    check(2 <= m["openenvd_connections"].value() <= 64,
          "open connections %s while flooded" % m["openenvd_connections"].value())
    check(after["openenvd_connections"].value() <= 2, "connections closed")
    check(m["process_max_fds"].value() == 64, "process_max_fds %s" % m["process_max_fds"].value())
    # Read at the fd limit through fds kept from the start.
    check("process_open_fds" in m and 0 < m["process_open_fds"].value() <= 64,
          "process_open_fds at the fd limit")
    check("process_resident_memory_bytes" in m
          and m["process_resident_memory_bytes"].value() > 0, "RSS at the fd limit")
    check(S["pressure_code"] == 0 and S["main_code"] == 0, "clean exits: %s %s" % (
        S["pressure_code"], S["main_code"]))


def check_entry(e, pid, where):
    check(KEYS <= set(e), "%s: keys %s" % (where, sorted(e)))
    check(TS.fullmatch(e["ts"]), "%s: ts %r" % (where, e["ts"]))
    check(e["level"] in LEVELS, "%s: level %r" % (where, e["level"]))
    check(e["program"] == "openenvd" and e["pid"] == pid, "%s: program/pid" % where)
    check(isinstance(e["msg"], str), "%s: msg" % where)
    for k, v in e.items():
        if k not in KEYS and k != "code_line":
            check(isinstance(v, str), "%s: field %s is not a string" % (where, k))


def case_json_log_every_line():
    for d in (S["main"], S["pressure"]):
        entries = d.log_entries()
        check(len(entries) >= 5, "%s: %d entries" % (d.name, len(entries)))
        for i, e in enumerate(entries):
            check_entry(e, d.pid, "%s line %d" % (d.name, i + 1))
    entries = S["main"].log_entries()
    phases = [e for e in entries if e["msg"].startswith("phase ")]
    check(len(phases) == len(S["info"]["history"]), "one phase entry per move")
    for e in phases:
        check(e["msg"] == "phase %s -> %s (%s: %s)" % (e["from"], e["to"], e["actor"],
                                                       e["reason"]), "phase fields: %s" % e)
    check(any("uid_first" in e for e in entries), "host uids as fields")
    graded = [e for e in entries if e.get("verdict")]
    check({e["verdict"] for e in graded} == {"graded", "agent_misbehavior"}, "verdict fields")
    check(all(e.get("episode_id") for e in graded), "verdict entries name their episode")


def case_json_log_escapes_any_byte():
    # The member's tail: "env| " before each line, control bytes as \xNN
    # (member.c); the JSON log escapes the rest and replaces each byte that
    # is not UTF-8 with U+FFFD.
    def shown(b):
        if b < 0x20 or b == 0x7f:
            return "\\x%02x" % b
        return chr(b) if b < 0x80 else "\ufffd"
    want = ("env| bytes:" + "".join(shown(b) for b in range(1, 10)) + "\nenv| " +
            "".join(shown(b) for b in range(11, 256)) + " é€😀:end\n")
    tails = [e for e in S["main"].log_entries() if "last output of env" in e["msg"]]
    check(len(tails) == 7, "7 provisioning failures quoted the env's output: %d" % len(tails))
    for e in tails:
        check(e["container"] == "env" and re.fullmatch(r"[0-9a-f]{12}", e["episode_id"]),
              "fields %s" % {k: e.get(k) for k in ("container", "episode_id")})
        check(e["msg"] == "episode %s: last output of env:\n%s" % (e["episode_id"], want),
              "the quoted output: %r" % e["msg"][-120:])


def case_json_errors_before_and_at_setup(inst):
    bad = os.path.join(inst, "invalid.yaml")
    runs = [([OPENENVD, "--log-format", "json", "--manifest", bad], None),
            ([OPENENVD, "--manifest", bad], {"OPENENVD_LOG_FORMAT": "json"})]
    for argv, env in runs:
        r = subprocess.run(argv, capture_output=True, env=dict(os.environ, **(env or {})))
        check(r.returncode == 2, "invalid manifest: exit %d" % r.returncode)
        lines = r.stderr.decode().splitlines()
        check(len(lines) == 2, "one line per error: %r" % lines)
        for n, line in enumerate(lines):
            e = json.loads(line)
            check_entry(e, e["pid"], "invalid manifest line %d" % (n + 1))
            check(e["level"] == "err" and e["manifest"] == bad, "fields %s" % e)
        # Errors name the file as it was given (tests/attacks/test_startup_hygiene.py).
        check(json.loads(lines[0])["msg"].startswith(bad + ":7:20: kill_deadline_s: "),
              "the error text: %s" % lines[0])
    r = subprocess.run([OPENENVD, "--manifest", bad], capture_output=True,
                       env=dict(os.environ, OPENENVD_LOG_FORMAT="yaml"))
    check(r.returncode == 2 and b"OPENENVD_LOG_FORMAT: unknown format 'yaml'" in r.stderr,
          "OPENENVD_LOG_FORMAT=yaml: %d %r" % (r.returncode, r.stderr))
    state = tempfile.mkdtemp(prefix="openenvd-metrics-state.", dir="/var/tmp")
    os.chmod(state, 0o711)

    def start(*extra):
        return subprocess.run([OPENENVD, "--log-format", "json", "--manifest",
                               os.path.join(inst, "unit.yaml"), "--state", state + "/s",
                               "--port", str(daemon_unit.free_port()), "--listen", "127.0.0.1",
                               *extra], capture_output=True, timeout=120)
    try:
        # A token file that cannot serve is bad usage, said before the
        # preflight, with the option and the path.
        token = inst + "/no-such-token"
        r = start("--shim", SHIM, "--token-file", token)
        check(r.returncode == 2, "missing token file: exit %d" % r.returncode)
        entries = [json.loads(line) for line in r.stderr.decode().splitlines()]
        errs = [e for e in entries if e.get("errno")]
        check(errs and errs[-1]["errno"] == "ENOENT" and
              errs[-1]["msg"] == "--token-file %s: No such file or directory" % token,
              "the failure with its errno: %s" % errs)
        check(not any("isolation" in e["msg"] or "preflight" in e["msg"] for e in entries),
              "the token is read before the preflight: %s" % entries)
        # A failure at setup, after the preflight: its errno as a field.
        r = start("--shim", inst + "/no-such-shim")
        check(r.returncode == 1, "missing shim: exit %d" % r.returncode)
        entries = [json.loads(line) for line in r.stderr.decode().splitlines()]
        errs = [e for e in entries if e.get("errno")]
        check(errs and errs[-1]["errno"] == "ENOENT" and errs[-1]["msg"].startswith("shim "),
              "the failure with its errno: %s" % errs)
    finally:
        shutil.rmtree(state, ignore_errors=True)


def case_version_everywhere():
    # One build, one string: --version of the daemon and the shim, the
    # first log line, /info and the build_info metric say the same.
    out = subprocess.run([OPENENVD, "--version"], capture_output=True, text=True, timeout=30)
    check(out.returncode == 0 and out.stdout.startswith("openenvd ") and not out.stderr,
          "openenvd --version: %r" % (out,))
    version = out.stdout[len("openenvd "):].rstrip("\n")
    check(version, "an empty version")
    shim = subprocess.run([SHIM, "--version"], capture_output=True, text=True, timeout=30)
    check(shim.returncode == 0 and shim.stdout == "openenvd-shim %s\n" % version,
          "openenvd-shim --version: %r" % (shim,))
    first = S["main"].log_entries()[0]
    check(first["msg"] == "version " + version, "first log line: %s" % first)
    check(S["info"].get("version") == version, "/info version: %s" % S["info"].get("version"))
    check(S["last"]["openenvd_build_info"].value(version=version) == 1,
          "build_info{version=%r}" % version)


CASES = [
    ("GET /metrics: a strict Prometheus exposition, the orchestrator's and the scraper's only",
     case_exposition_strict),
    ("episodes by verdict and reason, actions, standby failures, the current phase",
     case_episodes_by_verdict_and_reason),
    ("phase durations match /info's history; reset latency by source",
     case_phase_durations_and_resets),
    ("OOM kills and refused forks per container, live and after teardown", case_limit_events),
    ("relay requests equal the requests sent; no counter ever decreases",
     case_counters_monotonic),
    ("fd-limit refusals, evictions and open connections under a flood", case_port_pressure),
    ("--log-format json: every line of every daemon's log is one object with the stable keys",
     case_json_log_every_line),
    ("a container's bytes 0x01-0xff reach the JSON log escaped, with episode and container",
     case_json_log_escapes_any_byte),
    ("invalid manifest, unknown format, setup failure: JSON errors with their fields",
     None),
    ("--version, the first log line, /info and build_info name one version",
     case_version_everywhere),
]


def main():
    if os.geteuid() != 0:
        return livelib.skip_all(CASES, "needs root")
    print("1..%d" % len(CASES))
    inst = install()
    failed = 0
    t0 = time.monotonic()
    try:
        try:
            scenario(inst)
            setup_error = None
        except Exception:  # noqa: BLE001 - every case reports it
            setup_error = traceback.format_exc()
            for k in ("main", "pressure"):
                if k in S:
                    S[k].stop()
                    print("# %s log tail:\n# %s" % (k, S[k].tail().replace("\n", "\n# ")))
        print("# scenario %.1f s" % (time.monotonic() - t0))
        for i, (name, fn) in enumerate(CASES, 1):
            try:
                if fn is None:
                    case_json_errors_before_and_at_setup(inst)
                elif setup_error:
                    raise Failure("the scenario failed:\n" + setup_error)
                else:
                    fn()
                print("ok %d - %s" % (i, name))
            except Exception as e:  # noqa: BLE001 - one case's failure is reported
                failed += 1
                print("not ok %d - %s" % (i, name))
                detail = str(e) if isinstance(e, Failure) else traceback.format_exc()
                for line in detail.splitlines():
                    print("# " + line)
            sys.stdout.flush()
    finally:
        for k in ("main", "pressure"):
            if k in S:
                S[k].stop()
        shutil.rmtree(inst, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
