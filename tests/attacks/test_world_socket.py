#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Attack: from every zone, reach what the host leaves open to "others".

On a host, the host's / as the containers' root leaves every world-readable
file (another checkout's answers, the graders' code) and every
world-connectable unix socket (a 0777 socket in a searchable dir) in reach
of every zone: user namespaces and uid ranges do not help against "others"
permissions. Here the host plants both elsewhere on the host (a fresh dir
under /srv and one under /var/tmp beside the unit's own image, each with a
world-readable oracle.json, and a 0777 socket), plus an abstract socket
(which only network namespaces separate); env, harness, a hidden service,
an observer beside the agent and a grader each try every one.

Must not happen, under the default (the host view: /usr, the loader paths,
a filtered /etc and the unit's own directories) and on an image root
(--rootfs): a connection, an answer read, shadow or the host's accounts
seen; a WARNING about the root. The control, the whole host's / under
--host-root-unfiltered REASON: the socket is reached and the answers read
(the attack is real), and the daemon's log and `openenvctl check preflight`
say so loudly, with the reason; the abstract socket stays out of reach.
"""
import json
import os
import secrets
import shutil
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attacklib as A  # noqa: E402
from attacklib import check  # noqa: E402

WARNING = "WARNING: the containers' root is this host's /"
REASON = "control of the world-socket attack test"
ZONES = ("env", "harness", "svc", "beside", "grader")


def moves(t):
    """What every zone tries, in this order (the reports are matched by index)."""
    out = ["connect_unix", {"path": t["socket"]}, "connect_abstract", {"name": t["abstract"]}]
    for a in t["answers"]:
        out += ["read", {"path": a}]
    for p in ("/etc/shadow", "/etc/machine-id", "/etc/ssh", "/root", "/home", "/srv",
              "/var/lib"):
        out += ["exists", {"path": p}]
    # The control inside: the zone reads its own program and the view's passwd.
    out += ["read", {"path": t["program"], "n": 64}, "read", {"path": "/etc/passwd"}]
    return out


def manifest(run, t, mode):
    h = run if mode != "image" else None
    m = moves(t)
    observer = A.argv("observer", *m, host_root=h)
    return run.manifest(A.manifest_head("world-socket") + A.zones(
        A.argv("env", "8000", host_root=h), A.argv("harness", *m, host_root=h),
        A.argv("service", "8080", *m, host_root=h),
        [("beside", {"argv": observer, "reads": "[workspace]", "phases": "[ready]"}),
         ("grader", {"argv": observer, "phases": "[grading]"})]))


def abstract_listener(name):
    import socket
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind("\0" + name)
    s.listen(8)
    return s


def plant(run, mode):
    """The host's open secrets: answers in a fresh dir under /srv and one
    under /var/tmp (beside the unit's image), a world-connectable socket."""
    srv = tempfile.mkdtemp(prefix="openenvd-answer.", dir="/srv" if os.path.isdir("/srv")
                           else "/opt")
    near = run.path("answer-%s" % mode)
    os.makedirs(near)
    answers = []
    for d in (srv, near):
        os.chmod(d, 0o755)
        p = os.path.join(d, "oracle.json")
        with open(p, "w") as f:
            f.write('{"answer": "ANSWER-%s"}' % secrets.token_hex(6))
        os.chmod(p, 0o644)
        answers.append(p)
    world = A.UnixCanary(run.path("world-%s" % mode, "world.sock"), mode=0o777, dir_mode=0o755)
    program = A.ATTACKER[1]
    if mode != "image":
        program = run.rootfs + program
    return {"srv": srv, "answers": answers, "world": world, "socket": world.path,
            "abstract": "openenvd-attack-world-" + secrets.token_hex(4), "program": program}


def reports(d, eid):
    """Every zone's reports, in moves() order."""
    out = d.zone_reports(moves(d.t), eid)
    beside = A.poll(lambda: A.read(d.inside("episodes/%s/observers/beside/out/verdict.json"
                                            % eid)), "the observer beside the agent")
    out["beside"] = json.loads(beside)["results"]
    d.ok("POST", "/step", {"action": {"message": "x"}})
    status = {}

    def end():
        status["v"] = d.ok("POST", "/end_episode")
    t = threading.Thread(target=end)
    t.start()
    t.join(120)
    v = status.get("v")
    check(v and v["verdict"] == "graded", "graded: %s" % v)
    out["grader"] = v["observers"]["grader"]["results"]
    return out


def attempt(run, mode):
    t = plant(run, mode)
    abstract = abstract_listener(t["abstract"])
    args = ["--host-root-unfiltered", REASON] if mode == "unfiltered" else []
    d = A.Daemon(run, manifest(run, t, mode), args=args, rootfs=(mode == "image"))
    d.t = t
    n_answers = len(t["answers"])
    try:
        eid = d.info()["episode_id"]
        got = reports(d, eid)
        log = A.read(d.log)
        for zone in ZONES:
            rep = got[zone]
            check(rep and len(rep) == len(moves(t)) // 2, "%s reported: %s" % (zone, rep))
            sock, abst, answers = rep[0], rep[1], rep[2:2 + n_answers]
            seen = rep[2 + n_answers:-2]
            own, passwd = rep[-2], rep[-1]
            check(own["ok"] and passwd["ok"], "control: %s reads its own program and "
                  "/etc/passwd: %s %s" % (zone, own, passwd))
            check(not abst["ok"], "%s reached the host's abstract socket: %s" % (zone, abst))
            if mode == "unfiltered":
                # The control: this is the seam the warning is about.
                check(sock["ok"], "%s reaches the host socket on the whole /: %s" % (zone, sock))
                check(all(a["ok"] and "ANSWER-" in a["data"] for a in answers),
                      "%s reads the planted answers on the whole /: %s" % (zone, answers))
                continue
            check(not sock["ok"] and sock["errno"] == "ENOENT",
                  "%s reached the world-connectable socket: %s" % (zone, sock))
            check(all(not a["ok"] and a["errno"] == "ENOENT" for a in answers),
                  "%s read a planted answer: %s" % (zone, answers))
            if mode == "view":
                check(not any(x["exists"] for x in seen),
                      "%s sees shadow, machine-id, ssh, /root, /home, /srv or /var/lib: %s"
                      % (zone, seen))
                check("openenv:x:1000" in passwd["data"] and "sshd" not in passwd["data"],
                      "%s: the view's own passwd, not the host's: %r" % (zone, passwd["data"]))
        if mode == "unfiltered":
            check(WARNING in log and REASON in log, "the daemon warns, with the reason:\n%s"
                  % log)
        else:
            check("WARNING" not in log, "no warning without the flag:\n%s" % log)
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        d.kill()
        t["world"].close()
        abstract.close()
        shutil.rmtree(t["srv"], ignore_errors=True)
    return t["world"].hits


def case_host_view(run):
    hits = attempt(run, "view")
    check(hits == 0, "the world-connectable socket was connected to %d times" % hits)


def case_image_root(run):
    hits = attempt(run, "image")
    check(hits == 0, "the world-connectable socket was connected to %d times" % hits)


def case_unfiltered_control(run):
    hits = attempt(run, "unfiltered")
    # Each zone's report says it connected; a standby episode's observer
    # beside the agent may connect once more.
    check(hits >= len(ZONES), "every zone reached it (%d)" % hits)


def case_no_reason_no_whole_root(run):
    import subprocess
    r = subprocess.run([A.OPENENVD, "--host-root-unfiltered", "", "--manifest", "x"],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 2 and "give the reason" in r.stderr,
          "an empty reason is refused: %d %s" % (r.returncode, r.stderr))


def case_preflight_says_so(run):
    import subprocess
    for extra, ok in (([], True), (["--host-root-unfiltered"], False),
                      (["--rootfs", run.rootfs], True)):
        cmd = [A.OPENENVCTL, "check", "preflight", "--json"] + extra
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, "preflight: %s %s" % (r.returncode, r.stderr))
        checks = {c["name"]: c for c in json.loads(r.stdout)["checks"]}
        c = checks["containers_root"]
        check(c["ok"] is ok and c["required"] is False, "containers_root with %s: %s"
              % (extra, c))
        if not extra:
            check("host view" in c["detail"], "the default is the host view: %s" % c["detail"])
        if not ok:
            check("world-connectable unix sockets" in c["detail"] and "--rootfs" in c["detail"],
                  "the detail says what is exposed and the fix: %s" % c["detail"])


CASES = [
    ("default on a host (the host view): planted answers, a world-connectable socket and an "
     "abstract one are out of reach of every zone", case_host_view),
    ("image root (--rootfs): the same, out of reach of every zone", case_image_root),
    ("control, --host-root-unfiltered REASON: every zone reaches the socket and reads the "
     "answers, and the daemon logs a WARNING with the reason", case_unfiltered_control),
    ("--host-root-unfiltered needs a reason", case_no_reason_no_whole_root),
    ("check preflight accepts the host view and an image root, flags the whole /",
     case_preflight_says_so),
]

if __name__ == "__main__":
    sys.exit(A.main(CASES))
