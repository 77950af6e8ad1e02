# SPDX-License-Identifier: LGPL-2.1-or-later
"""Env server of the live-test units (stdlib only).

  GET  /health   200 {"server": "envd"}
  POST /step     {"action": {"message": M}}: done when M == "done"
  GET  /probe    runs probelib.probe_all() inside the env container
  GET  /ticks    a counter a background thread advances (and writes to
                 /workspace/ticks), so a test can see a frozen cgroup stop

A step's message "log:TEXT" writes TEXT and a newline to stderr, "logpart:TEXT"
TEXT alone (a line not ended yet): output the live tests read back through /logs.
"run:oom" runs a child program that allocates until the OOM killer takes it,
"run:ok" one that succeeds: the observation's exit_code is the child's (-9:
killed), as a coding env runs the agent's program and survives its failure.

argv: PORT [--fail-if PATH]: exits at once if PATH exists (provisioning
failure on demand).
"""
import http.server
import json
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import probelib  # noqa: E402

PORT = int(sys.argv[1])
if len(sys.argv) > 3 and sys.argv[2] == "--fail-if" and os.path.exists(sys.argv[3]):
    sys.exit(5)
state = {"steps": 0, "ticks": 0}


def ticker():
    ws = os.environ.get("OPENENVD_WORKSPACE", "/workspace")
    while True:
        state["ticks"] += 1
        try:
            tmp = os.path.join(ws, ".ticks.tmp")
            with open(tmp, "w") as f:
                f.write(str(state["ticks"]))
            os.replace(tmp, os.path.join(ws, "ticks"))
        except OSError:
            pass
        time.sleep(0.02)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def send(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/health":
            self.send(200, {"server": "envd"})
        elif self.path == "/probe":
            self.send(200, probelib.probe_all(probelib.load_cfg()))
        elif self.path == "/ticks":
            self.send(200, {"ticks": state["ticks"]})
        else:
            self.send(404, {"error": "not found"})

    def do_POST(self):
        n = min(int(self.headers.get("Content-Length", "0")), 1 << 16)
        try:
            body = json.loads(self.rfile.read(n) or b"{}")
        except ValueError:
            body = {}
        if self.path == "/step":
            msg = str((body.get("action") or {}).get("message", ""))
            state["steps"] += 1
            done = msg == "done"
            for prefix, end in (("log:", "\n"), ("logpart:", "")):
                if msg.startswith(prefix):
                    sys.stderr.write(msg[len(prefix):] + end)
                    sys.stderr.flush()
            obs = {"echo": msg, "steps": state["steps"]}
            programs = {"run:oom": "h = []\nwhile True:\n    h.append(bytearray(8 << 20))",
                        "run:ok": "print('ok')"}
            if msg in programs:
                obs["exit_code"] = subprocess.run([sys.executable, "-c", programs[msg]],
                                                  capture_output=True).returncode
            self.send(200, {"observation": obs, "reward": 1.0, "done": done})
        elif self.path == "/mcp":
            self.send(200, {"jsonrpc": "2.0", "id": body.get("id"),
                            "result": {"tools": [{"name": "echo"}]}})
        else:
            self.send(404, {"error": "not found"})

    def log_message(self, *args):
        pass


threading.Thread(target=ticker, daemon=True).start()
server = http.server.ThreadingHTTPServer(("0.0.0.0", PORT), Handler)
# One line of its own (the live tests read it back through /logs).
print("envd: serving on port %d" % PORT, file=sys.stderr, flush=True)
server.serve_forever()
