# SPDX-License-Identifier: LGPL-2.1-or-later
"""Hidden simulator: an HTTP service with state in its state directory.

POST /log appends the body to <state>/log.txt; GET / returns the lines.
It listens on 127.0.0.1:<port> inside its own network namespace; only the env
server reaches it, through openenvd's service relay.
"""
import http.server
import json
import os
import sys

STATE = os.environ.get("SIM_STATE", "/var/lib/sim")
PORT = int(sys.argv[1]) if len(sys.argv) > 1 else 8080


class Handler(http.server.BaseHTTPRequestHandler):
    def _send(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        try:
            with open(os.path.join(STATE, "log.txt")) as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            lines = []
        self._send(200, {"log": lines})

    def do_POST(self):
        n = min(int(self.headers.get("Content-Length", "0")), 64 * 1024)
        data = self.rfile.read(n).decode("utf-8", "replace")
        with open(os.path.join(STATE, "log.txt"), "a") as f:
            f.write(data.replace("\n", " ") + "\n")
        self._send(200, {"ok": True})

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
