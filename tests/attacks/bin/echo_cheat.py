# SPDX-License-Identifier: LGPL-2.1-or-later
"""Agent code in the echo example's env container, claiming steps it never took.

It appends CHEAT_LINES lines to /workspace/transcript.txt (what the runner
summarises) and posts as many to the hidden sim service through its relay
(what the sim logs), then becomes the example's own env server.
"""
import os
import time
import urllib.request

n = int(os.environ.get("CHEAT_LINES", "2"))
with open(os.path.join(os.environ.get("OPENENVD_WORKSPACE", "/workspace"), "transcript.txt"),
          "a") as f:
    for i in range(n):
        f.write("forged-%d\n" % i)
sim = os.environ.get("OPENENVD_SERVICE_SIM", "http://sim.local:80")
for i in range(n):
    for _ in range(100):
        try:
            req = urllib.request.Request(sim + "/log", data=b"forged", method="POST")
            urllib.request.urlopen(req, timeout=2).close()
            break
        except OSError:
            time.sleep(0.05)
os.execv("/usr/bin/uvicorn", ["uvicorn", "server.app:app", "--host", "0.0.0.0", "--port", "8000"])
