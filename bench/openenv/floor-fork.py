# SPDX-License-Identifier: LGPL-2.1-or-later
"""The floor of a fork-speed episode's private memory (bench/openenv, issue
27): the env server warmed as the template warms it (uvicorn.Config(...)
.load() with the env's own options, gc.collect(), gc.freeze()), then one
plain fork() that runs the server, on the host, with no container, no shim
and no landing. Prints {"standby": KiB, "live": KiB}: the child's USS
(Private_Clean + Private_Dirty of /proc/PID/smaps_rollup) once it serves
/health, and after N valid moves, as bench-openenv.py measures an episode's
env leaf. Run with the env's PYTHONPATH and in its directory:

    floor-fork.py PORT N STEP_BODY
"""
import gc
import http.client
import json
import os
import sys
import time

import uvicorn


def uss(pid):
    kib = 0
    with open("/proc/%d/smaps_rollup" % pid) as f:
        for line in f:
            k, v = line.split()[:2]
            if k in ("Private_Clean:", "Private_Dirty:"):
                kib += int(v)
    return kib


def call(port, method, path, body=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request(method, path, body=body, headers={"Content-Type": "application/json"})
    r = c.getresponse()
    r.read()
    c.close()
    return r.status


def main():
    port, moves, step = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].encode()
    config = uvicorn.Config("server.app:app", host="127.0.0.1", port=port)
    config.load()
    gc.collect()
    gc.freeze()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        uvicorn.Server(config).run()
        os._exit(0)
    try:
        t0 = time.monotonic()
        while True:
            try:
                if call(port, "GET", "/health") == 200:
                    break
            except OSError:
                pass
            if time.monotonic() - t0 > 30:
                raise SystemExit("floor-fork: the forked server did not start")
            time.sleep(0.005)
        time.sleep(0.2)
        standby = uss(pid)
        for _ in range(moves):
            call(port, "POST", "/step", step)
        time.sleep(0.2)
        print(json.dumps({"standby": standby, "live": uss(pid)}))
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
