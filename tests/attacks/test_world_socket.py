#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Attack: connect from the agent zone to a world-connectable socket of the host.

With the host's / as the containers' root, any unix socket the host leaves
world-connectable (a 0777 socket in a searchable dir) is reachable from the
agent zone: user namespaces and uid ranges do not help against "others"
permissions. The fix is an image root (--rootfs). Here the host listens on
such a socket (and on an abstract one, which only network namespaces
separate); the env and the harness try both.

Must not happen, on the attack image (--rootfs): a connection to either;
a WARNING about the root. On this host's own / (the control: the attack is
real): the path socket is reached, and the daemon's log and `openenvctl
check preflight` say so loudly; the abstract one stays out of reach.
"""
import os
import secrets
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attacklib as A  # noqa: E402
from attacklib import check  # noqa: E402

WARNING = "WARNING: the containers' root is this host's /"


def manifest(run, path, abstract, host_root):
    h = run if host_root else None
    return run.manifest("""
spec_version: 1
name: world-socket
port: 8000
openenvd:
  kill_deadline_s: 5
  zones:
    agent:
      containers:
        env:
          argv: %s
        harness:
          argv: %s
""" % (A.argv("env", "8000", host_root=h),
       A.argv("harness", "connect_unix", {"path": path}, "connect_abstract", {"name": abstract},
              host_root=h)))


def abstract_listener(name):
    import socket
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind("\0" + name)
    s.listen(8)
    return s


def attempt(run, host_root):
    world = A.UnixCanary(run.path("world-%d" % host_root, "world.sock"), mode=0o777,
                         dir_mode=0o755)
    name = "openenvd-attack-world-" + secrets.token_hex(4)
    abstract = abstract_listener(name)
    d = A.Daemon(run, manifest(run, world.path, name, host_root), rootfs=not host_root)
    try:
        eid = d.info()["episode_id"]
        env = d.attack("connect_unix", path=world.path)
        env_abstract = d.attack("connect_abstract", name=name)
        harness = d.wait_workspace_json("harness.0.connect_unix.json", episode=eid)
        harness_abstract = d.wait_workspace_json("harness.1.connect_abstract.json", episode=eid)
        log = A.read(d.log)
        check(not env_abstract["ok"] and not harness_abstract["ok"],
              "the host's abstract socket was reached: %s %s" % (env_abstract, harness_abstract))
        if host_root:
            # The control: this is the seam the warning is about.
            check(env["ok"] and harness["ok"], "the attack reaches the host socket when the "
                  "root is the host's: %s %s" % (env, harness))
            check(WARNING in log, "the daemon warns about the root:\n%s" % log)
        else:
            check(not env["ok"] and not harness["ok"],
                  "the host's world-connectable socket was reached: %s %s" % (env, harness))
            check(env["errno"] == "ENOENT", "it does not exist in the image: %s" % env)
            check("WARNING" not in log, "no warning on an image root:\n%s" % log)
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        d.kill()
        world.close()
        abstract.close()
    return world.hits


def case_image_root(run):
    hits = attempt(run, host_root=False)
    check(hits == 0, "the world-connectable socket was connected to %d times" % hits)


def case_host_root_control(run):
    hits = attempt(run, host_root=True)
    check(hits == 2, "env and harness each reached it once (%d)" % hits)


def case_preflight_says_so(run):
    import json
    import subprocess
    for rootfs, ok in ((None, False), (run.rootfs, True)):
        cmd = [A.OPENENVCTL, "check", "preflight", "--json"] + (["--rootfs", rootfs] if rootfs
                                                                 else [])
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, "preflight: %s %s" % (r.returncode, r.stderr))
        checks = {c["name"]: c for c in json.loads(r.stdout)["checks"]}
        c = checks["containers_root"]
        check(c["ok"] is ok and c["required"] is False, "containers_root with --rootfs %s: %s"
              % (rootfs, c))
        if not ok:
            check("world-connectable unix sockets" in c["detail"] and "--rootfs" in c["detail"],
                  "the detail says what is exposed and the fix: %s" % c["detail"])


CASES = [
    ("image root (--rootfs): a world-connectable host socket and an abstract one are "
     "unreachable from env and harness", case_image_root),
    ("control, host's / as the root: the socket is reached and the daemon logs a WARNING",
     case_host_root_control),
    ("check preflight flags the host's / and accepts an image root", case_preflight_says_so),
]

if __name__ == "__main__":
    sys.exit(A.main(CASES))
