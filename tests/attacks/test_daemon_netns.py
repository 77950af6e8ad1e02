#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Attack: join the daemon's namespaces from the host and land in an agent's.

`nsenter -t <openenvd pid> -n`, `docker exec` and a Docker HEALTHCHECK join
the namespaces /proc/<pid>/ns of openenvd (PID 1 in an image) shows. The
daemon's thread used to step into a container's network namespace for
every spawn and every socket it made there (how the frontend reaches the
env over TCP): 264 of 343,000 joins landed in an env's namespace and talked
to a listener the agent had planted there.

Here a watcher on the host reads the daemon's /proc/<pid>/ns/net (what
setns(2) through it would join) as fast as it can, while the orchestrator
resets episodes and sends requests over new connections that the daemon
relays to the env.

Must not happen: /proc/<pid>/ns/net naming any namespace but the daemon's
own, once.
"""
import http.client
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attacklib as A  # noqa: E402
from attacklib import check  # noqa: E402

WATCH = r"""
import os, sys, time
path = "/proc/%s/ns/net" % sys.argv[1]
home = os.readlink(path)
deadline = time.monotonic() + float(sys.argv[2])
looks = away = 0
seen = set()
while time.monotonic() < deadline:
    try:
        now = os.readlink(path)
    except OSError:
        break
    looks += 1
    if now != home:
        away += 1
        seen.add(now)
print(looks, away, home, " ".join(sorted(seen)))
"""


def fresh_request(d, path):
    """One request on a connection of its own: a new upstream socket too."""
    c = http.client.HTTPConnection("127.0.0.1", d.port, timeout=30)
    try:
        c.request("GET", path, headers={"Authorization": "Bearer " + A.TOKEN,
                                        "Connection": "close"})
        return c.getresponse().status
    finally:
        c.close()


def case_never_in_an_agent_namespace(run):
    d = A.Daemon(run, A.agent_manifest(run, "daemon-netns", harness=True))
    try:
        watcher = subprocess.Popen([sys.executable, "-c", WATCH, str(d.pid), "20"],
                                   stdout=subprocess.PIPE, text=True)
        resets = requests = 0
        while watcher.poll() is None and resets < 40:
            check(d.ok("POST", "/reset_unit")["phase"] == "ready", "reset %d" % resets)
            resets += 1
            for _ in range(25):
                check(fresh_request(d, "/anything") == 200, "a relayed request")
                requests += 1
        out, _ = watcher.communicate(timeout=60)
        looks, away, home, *seen = out.split()
        A.note("%s looks at /proc/%d/ns/net during %d resets and %d relayed requests"
               % (looks, d.pid, resets, requests))
        check(int(looks) > 1000, "the watcher looked: %s" % out)
        check(int(away) == 0, "the daemon's /proc/pid/ns/net named %s (not its own %s) in %s "
              "of %s looks" % (" ".join(seen), home, away, looks))
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        d.kill()


if __name__ == "__main__":
    sys.exit(A.main([
        ("joining the daemon's network namespace never lands in a container's, while "
         "episodes reset and requests are relayed", case_never_in_an_agent_namespace),
    ]))
