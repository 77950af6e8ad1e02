# SPDX-License-Identifier: LGPL-2.1-or-later
"""The env server of tests/integration/test_env_template.py: a tiny ASGI app
that reports, from inside its container, what it is and what it can reach.
Under OPENENVD_TEST_REFUSE_TEMPLATE=1 it refuses to import in a template (an
app that reads its episode at import time), under =hang its import never ends
there, under =slow it takes 1.5 s there; it starts cold as usual."""
import errno
import json
import os
import random

if os.environ.get("OPENENVD_EPISODE") == "template":
    if os.environ.get("OPENENVD_TEST_REFUSE_TEMPLATE") == "1":
        raise RuntimeError("this app reads its episode at import time")
    if os.environ.get("OPENENVD_TEST_REFUSE_TEMPLATE") in ("hang", "slow"):
        import time        # an import that never ends, or takes 1.5 s, in a template only
        time.sleep(3600 if os.environ["OPENENVD_TEST_REFUSE_TEMPLATE"] == "hang" else 1.5)

STARTED_IN = os.environ.get("OPENENVD_EPISODE")
RNG = random.Random()      # built at import: the template's, unless reseeded


def whoami():
    try:
        os.kill(-1, 0)
        kill_all = "sent"
    except OSError as e:
        kill_all = errno.errorcode.get(e.errno, str(e.errno))
    try:
        with open("/proc/sys/net/ipv4/tcp_ehash_entries") as f:
            tcp_ehash = f.read().strip()
    except OSError as e:
        tcp_ehash = errno.errorcode.get(e.errno, str(e.errno))
    return {"pid": os.getpid(), "uid": os.getuid(), "gid": os.getgid(),
            "tcp_ehash": tcp_ehash,
            "episode": os.environ.get("OPENENVD_EPISODE"), "imported_in": STARTED_IN,
            "random": random.random(), "rng": RNG.random(),
            "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
            "kill_all": kill_all}


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    if scope["type"] != "http":
        return
    path = scope["path"]
    if path == "/whoami":
        body = whoami()
    elif path in ("/health", "/reset", "/step", "/state"):
        body = {"observation": {}, "reward": 0.0, "done": False, "status": "healthy"}
    else:
        body = {"detail": "not found"}
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": 200 if "detail" not in body else 404,
                "headers": [[b"content-type", b"application/json"]]})
    await send({"type": "http.response.body", "body": data})
