#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Live tests of fork-speed episodes (issue 27; docs/DAEMON.md, "Templates"):

    test_env_template.py OPENENVD SHIM

The env of template-unit/ (a tiny ASGI app run by `python3 -m uvicorn`)
reports from inside its container who it is, what it sees and what it can
signal. The daemon warms it once as a template and forks each episode's env
from it; the cases check, from the copy's side and from the host's, that
each copy is its episode's own (uid, cgroup, environment, randomness, pid
namespace), that the template counts against the agent zone, and what
happens when the template dies, its code changes on disk, the manifest says
`template: false`, or the app cannot be warmed: the episodes start cold and
say so (/info, /metrics, the log), and a template is rebuilt where it can
be. Needs root and Debian's python3-uvicorn. Output is TAP.
"""
import importlib.util
import os
import re
import shutil
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from livelib import Daemon, check, poll, read, run_cases, skip_all  # noqa: E402

OPENENVD, SHIM = (os.path.abspath(p) for p in sys.argv[1:3])
HERE = os.path.dirname(os.path.abspath(__file__))
S = {}


def install(template="true", refuse="0", standby="true"):
    d = tempfile.mkdtemp(prefix="openenvd-template.", dir="/var/tmp")
    shutil.copy(os.path.join(HERE, "template-unit", "app.py"), d)
    with open(os.path.join(HERE, "template-unit", "unit.yaml.in")) as f:
        text = f.read()
    for k, v in (("@DIR@", d), ("@TEMPLATE@", template), ("@REFUSE@", refuse),
                 ("@STANDBY@", standby)):
        text = text.replace(k, v)
    with open(os.path.join(d, "unit.yaml"), "w") as f:
        f.write(text)
    os.chmod(d, 0o755)
    os.chmod(os.path.join(d, "app.py"), 0o644)
    S.setdefault("dirs", []).append(d)
    return d


def daemon(template="true", refuse="0", start_timeout=60, standby="true"):
    d = install(template, refuse, standby)
    return Daemon(OPENENVD, SHIM, os.path.join(d, "unit.yaml"), args=["--no-initial-episode"],
                  start_timeout=start_timeout)


def info(d):
    return d.ok("GET", "/info")


def wait_template(d, state="ready", generation=None):
    return poll(lambda: (lambda t: t if t["state"] == state and
                         (generation is None or t["generation"] == generation) else None)(
        info(d)["template"]), "template %s (generation %s)" % (state, generation), 120, 0.05)


def next_episode(d):
    """A reset: the next episode live (and ready); its env's start and its
    own report from inside."""
    d.ok("POST", "/reset_unit")
    i = poll(lambda: (lambda i: i if i["phase"] == "ready" and "env" in i["members"] else None)(
        info(d)), "an episode ready", 120)
    return i["episode_id"], i["members"]["env"]["start"], d.ok("GET", "/whoami")


def metric(d, name, labels=""):
    status, text = d.request("GET", "/metrics")
    check(status == 200, "/metrics: %s" % status)
    m = re.search(r"^%s%s (\d+)$" % (re.escape(name), re.escape(labels)), text, re.M)
    check(m, "%s%s in /metrics" % (name, labels))
    return int(m.group(1))


def cgroup_of(pid):
    """pid's cgroup in the unified hierarchy."""
    for line in (read("/proc/%d/cgroup" % pid) or "").splitlines():
        if line.startswith("0::"):
            return line[3:]
    return None


def host_uid(pid):
    for line in (read("/proc/%d/status" % pid) or "").splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])
    return None


def template_pids(d, generation):
    rel = "zones/agent/template-%d" % generation
    return [int(p) for p in (read(d.cg_file("unified", rel, "cgroup.procs")) or "").split()]


def template_program(d, generation):
    """The template program's pid (its shim's child)."""
    for pid in template_pids(d, generation):
        cmd = read("/proc/%d/cmdline" % pid) or ""
        if "openenvd_template" in cmd and not cmd.startswith("openenvd-shim"):
            return pid
    return None


def until_from_template(d, generation, most=20):
    """Resets until an episode's env is a copy of that generation; the
    starts seen on the way."""
    seen = []
    for _ in range(most):
        _, start, me = next_episode(d)
        seen.append(start)
        if start == "template" and info(d)["template"]["generation"] == generation:
            return seen, me
    raise AssertionError("no episode from template %d in %d resets: %s\n%s"
                         % (generation, most, seen, d.tail()))


# --- the cases --------------------------------------------------------------------------

def case_episodes_are_copies_of_their_own():
    d = S["d"] = daemon()
    wait_template(d)
    # The first standby waited for the template: not one env started cold.
    eid, start, me = next_episode(d)
    check(start == "template", "the first episode's env is a copy: %s" % start)
    check(metric(d, "openenvd_env_starts_total", '{path="cold"}') == 0, "no cold start")
    mine = [me]
    for _ in range(3):
        eid, start, me = next_episode(d)
        check(start == "template", "from the template: %s" % start)
        mine.append(me)
        # Its episode's environment, though the app was imported in the template.
        check(me["episode"] == eid and me["imported_in"] == "template",
              "the copy's environment is its episode's: %s (%s)" % (me, eid))
        check(me["uid"] == 1000 and me["gid"] == 1000, "the principal: %s" % me)
        # Its network namespace (made in the landing's clone) has its own TCP
        # hash table, not the host's (a negative count).
        want = "1024" if os.path.exists("/proc/sys/net/ipv4/tcp_child_ehash_entries") \
            else "ENOENT"
        check(me["tcp_ehash"] == want, "its own TCP table: %s" % me["tcp_ehash"])
        # Its own pid namespace: its shim and itself; nobody to signal.
        check(len(me["pids"]) == 2 and me["kill_all"] == "ESRCH",
              "a copy sees and signals nobody else: %s" % me)
        # From the host: the episode's leaf and the slot's own uid range.
        pid = [p for p in d.member_pids("env") if "openenvd_template" in
               (read("/proc/%d/cmdline" % p) or "")]
        check(len(pid) == 1, "the copy in the episode's leaf: %s" % d.member_pids("env"))
        check(cgroup_of(pid[0]).endswith("/" + d.member_cgroup("env")),
              "its cgroup: %s" % cgroup_of(pid[0]))
        mine[-1]["host_uid"] = host_uid(pid[0])
    for k in ("random", "rng"):
        vals = [m[k] for m in mine]
        check(len(set(vals)) == len(vals), "each copy's %s is its own: %s" % (k, vals))
    order = [m["host_uid"] for m in mine[1:]]
    uids = set(order)
    # The live one, the standby, one retiring: three slots, and an episode
    # never takes the slot of the one before it.
    check(all(a != b for a, b in zip(order, order[1:])) and len(uids) <= 3,
          "each episode in a slot of its own: %s" % order)
    # The template: in the agent zone, under its limits.
    tp = template_pids(d, 1)
    check(tp and all(cgroup_of(p).endswith("/zones/agent/template-1") for p in tp),
          "the template in zones/agent/template-1: %s" % tp)
    check(all(host_uid(p) not in uids for p in tp), "the template's uids are not a slot's")
    check(metric(d, "openenvd_env_starts_total", '{path="template"}') >= 4, "metric")


def case_a_dead_template_is_rebuilt_and_its_copies_live_on():
    d = S["d"]
    gen = info(d)["template"]["generation"]
    prog = template_program(d, gen)
    check(prog, "the template program runs")
    live = d.ok("GET", "/whoami")
    # The standby made ready first: a copy (forked before the kill).
    poll(lambda: info(d)["standby"].get("state") == "ready" or None, "the standby ready", 60)
    os.kill(prog, signal.SIGKILL)
    poll(lambda: "env template %d discarded" % gen in d.tail(200), "the discard logged", 30)
    # The live copy does not die with its template's program.
    check(d.ok("GET", "/whoami")["pid"] == live["pid"], "the live copy still serves")
    time.sleep(1.2)     # past ENV_TEMPLATE_REBUILD_DELAY
    # The standby made before the discard (a copy) goes live; the next one
    # starts cold and asks for a new template, and once that one is warm
    # the cold standby gives way to a copy of it.
    _, start, _ = next_episode(d)
    check(start == "template", "the standby made before: a copy: %s" % start)
    poll(lambda: metric(d, "openenvd_standby_replaced_total") == 1 or None,
         "the cold standby replaced by a copy", 60)
    check("a template's copy replaces it" in d.tail(400), "logged:\n%s" % d.tail(40))
    check(metric(d, "openenvd_env_starts_total", '{path="cold"}') == 1, "one cold start")
    _, start, _ = next_episode(d)
    check(start == "template" and info(d)["template"]["generation"] == gen + 1,
          "from template %d: %s" % (gen + 1, start))
    check(metric(d, "openenvd_env_template_discards_total") == 1, "one discard")


def case_a_code_change_discards_the_template():
    d = S["d"]
    gen = info(d)["template"]["generation"]
    app = os.path.join(S["dirs"][0], "app.py")
    st = os.stat(app)
    cold = metric(d, "openenvd_env_starts_total", '{path="cold"}')
    os.utime(app, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    until_from_template(d, gen + 1)
    check(metric(d, "openenvd_env_starts_total", '{path="cold"}') > cold,
          "cold until the next template is warm")
    check(re.search(r"env template %d discarded: .*stale.*app\.py" % gen, d.tail(400)),
          "the log names the changed file:\n%s" % d.tail(40))
    rc = d.stop()
    check(rc == 0, "clean exit: %s" % rc)
    S.pop("d")


def case_template_false_starts_every_env_cold():
    d = daemon(template="false")
    try:
        t = info(d)["template"]
        check(t["state"] == "off" and "template: false" in t["reason"], "off: %s" % t)
        for _ in range(2):
            _, start, me = next_episode(d)
            check(start == "cold" and me["imported_in"] == me["episode"], "cold: %s" % me)
        check(metric(d, "openenvd_env_template_builds_total") == 0, "no template built")
    finally:
        check(d.stop() == 0, "clean exit")


def case_an_app_that_cannot_warm_starts_cold():
    d = daemon(refuse="1")
    try:
        t = wait_template(d, "off")
        check("reads its episode at import time" in (t["reason"] or ""), "why: %s" % t)
        for _ in range(2):
            _, start, me = next_episode(d)
            check(start == "cold" and me["episode"] == me["imported_in"], "cold: %s" % me)
        check(metric(d, "openenvd_env_template_warm_failures_total") == 1, "counted")
        check("could not warm" in d.tail(200), "logged")
    finally:
        check(d.stop() == 0, "clean exit")


def case_a_template_that_never_warms_is_given_up():
    """The standby waits for a warming template, but not for ever: one not
    warm within the start timeout turns templates off, and the standby
    starts cold."""
    d = daemon(refuse="hang", start_timeout=3)
    try:
        t = wait_template(d, "off")
        check("not warm within 3s" in (t["reason"] or ""), "why: %s" % t)
        check(not template_pids(d, 1), "its container is gone: %s" % template_pids(d, 1))
        _, start, me = next_episode(d)
        check(start == "cold" and me["episode"] == me["imported_in"], "cold: %s" % me)
        check(metric(d, "openenvd_env_template_warm_failures_total") == 1, "counted")
        # The standby's start timeout counts from its start, not from the
        # wait: it did not fail as late.
        check(metric(d, "openenvd_standby_failures_total") == 0, "no standby failed")
    finally:
        check(d.stop() == 0, "clean exit")


def copies_by_slot(d):
    """{slot leaf: host uid} of every template copy in the agent zone's
    slots (the live episode's and the standbys')."""
    out = {}
    base = d.cg_file("unified", "zones/agent", "")
    for slot in sorted(os.listdir(base)):
        if not re.match(r"s\d+$", slot):
            continue
        for p in (read(os.path.join(base, slot, "env", "cgroup.procs")) or "").split():
            if "openenvd_template" in (read("/proc/%s/cmdline" % p) or ""):
                out[slot] = host_uid(int(p))
    return out


def case_a_pool_of_two_standbys_serves_resets_back_to_back():
    """standby: 2: two copies kept ready, each in a slot and uid range of its
    own; two resets back to back both take a ready one, and the pool fills
    up again."""
    d = daemon(standby="2")
    try:
        wait_template(d)
        d.ok("POST", "/reset_unit")
        poll(lambda: info(d)["standby"].get("ready") == 2 or None, "two standbys ready", 60)
        check(info(d)["standby"]["target"] == 2, "the target: %s" % info(d)["standby"])
        pool = d.ok("GET", "/episodes")["standby_pool"]
        check(len(pool) == 2 and all(p["state"] == "ready" for p in pool), "the pool: %s" % pool)
        copies = copies_by_slot(d)
        check(len(copies) == 3 and len(set(copies.values())) == 3,
              "the live copy and two standbys, three slots and uid ranges: %s" % copies)
        tp = template_pids(d, 1)
        check(all(host_uid(p) not in copies.values() for p in tp), "not the template's uids")
        took = metric(d, "openenvd_reset_duration_seconds_count", '{source="standby"}')
        waited = metric(d, "openenvd_reset_duration_seconds_count",
                        '{source="standby_provisioning"}')
        for _ in range(2):
            _, start, me = next_episode(d)
            check(start == "template" and me["imported_in"] == "template", "a copy: %s" % me)
        check(metric(d, "openenvd_reset_duration_seconds_count", '{source="standby"}') ==
              took + 2, "both resets took a ready standby")
        check(metric(d, "openenvd_reset_duration_seconds_count",
                     '{source="standby_provisioning"}') == waited, "neither waited for one")
        poll(lambda: metric(d, "openenvd_standby_ready") == 2 or None, "the pool refilled", 60)
        check(metric(d, "openenvd_standby_target") == 2, "the target metric")
    finally:
        check(d.stop() == 0, "clean exit")


def case_episodes_wait_for_a_warming_template():
    """A reset while the template warms (its import takes 1.5 s here) waits
    for it: its env is a copy, and no interpreter started cold beside the
    template."""
    d = daemon(refuse="slow")
    try:
        check(info(d)["template"]["state"] == "warming", "warming: %s" % info(d)["template"])
        _, start, me = next_episode(d)
        check(start == "template" and me["imported_in"] == "template", "a copy: %s" % me)
        check(metric(d, "openenvd_env_starts_total", '{path="cold"}') == 0, "no cold start")
    finally:
        check(d.stop() == 0, "clean exit")


CASES = [
    ("episodes' envs are copies of the warm template, each its episode's own: environment, "
     "uid range, cgroup, randomness, pid namespace; the template in the agent zone",
     case_episodes_are_copies_of_their_own),
    ("a template whose program dies is discarded and rebuilt, episodes start cold meanwhile, "
     "the live copy serves on", case_a_dead_template_is_rebuilt_and_its_copies_live_on),
    ("a template whose code changes on disk is discarded and rebuilt",
     case_a_code_change_discards_the_template),
    ("template: false: every env starts cold, no template is built",
     case_template_false_starts_every_env_cold),
    ("an app that cannot be warmed: templates off with the reason, every env cold",
     case_an_app_that_cannot_warm_starts_cold),
    ("a template not warm within the start timeout: templates off, its container gone, the "
     "standby that waited for it cold", case_a_template_that_never_warms_is_given_up),
    ("a reset while the template warms waits for it: a copy, no cold start",
     case_episodes_wait_for_a_warming_template),
    ("standby: 2 keeps two copies ready in slots of their own; back-to-back resets both take "
     "one; the pool refills", case_a_pool_of_two_standbys_serves_resets_back_to_back),
]


def teardown():
    if "d" in S:
        S.pop("d").stop()
    for d in S.get("dirs", []):
        shutil.rmtree(d, ignore_errors=True)


def main():
    if os.geteuid() != 0:
        return skip_all(CASES, "needs root")
    if importlib.util.find_spec("uvicorn") is None:
        return skip_all(CASES, "python3-uvicorn is not installed (scripts/install-deps.sh)")
    return run_cases(CASES, None, teardown)


if __name__ == "__main__":
    sys.exit(main())
