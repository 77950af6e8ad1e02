# SPDX-License-Identifier: LGPL-2.1-or-later
"""A tiny local stand-in for a model provider (Anthropic-style /v1/messages).
Answers 403 unless x-api-key is the real key given on the command line, so a
demo or test can prove the proxy swapped the placeholder for the real key."""
import http.server
import json
import sys

PORT = int(sys.argv[1])
REAL_KEY = open(sys.argv[2]).read().strip()


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        n = min(int(self.headers.get("Content-Length", "0")), 1 << 20)
        self.rfile.read(n)
        ok = self.headers.get("x-api-key") == REAL_KEY
        body = json.dumps({"type": "message", "content": [{"type": "text", "text": "hello"}]}
                          if ok else {"error": "forbidden"}).encode()
        self.send_response(200 if ok else 403)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
# Bound: said on stdout, for whoever waits for it (scripts/demo.sh).
print("listening", flush=True)
server.serve_forever()
