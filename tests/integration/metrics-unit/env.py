# SPDX-License-Identifier: LGPL-2.1-or-later
"""Env server of the metrics test unit (stdlib only).

    env.py PORT FAIL_FLAG

GET /health answers 200; POST /step {"action": {"message": M}} answers an
observation, done when M is "done". When FAIL_FLAG exists it writes every
byte from 0x01 to 0xff (and some UTF-8) to its output and exits 7 at once:
provisioning fails, and the daemon quotes that output in its log.
"""
import http.server
import json
import os
import sys

PORT = int(sys.argv[1])
if os.path.exists(sys.argv[2]):
    sys.stdout.buffer.write(b"bytes:" + bytes(range(1, 256)) + " é€😀:end\n".encode())
    sys.stdout.flush()
    sys.exit(7)


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
        self.send(200 if self.path == "/health" else 404, {"server": "metrics-env"})

    def do_POST(self):
        n = min(int(self.headers.get("Content-Length", "0")), 1 << 16)
        try:
            body = json.loads(self.rfile.read(n) or b"{}")
        except ValueError:
            body = {}
        msg = str((body.get("action") or {}).get("message", ""))
        self.send(200, {"observation": {"echo": msg}, "reward": 0.0, "done": msg == "done"})

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("0.0.0.0", PORT), Handler).serve_forever()
