# SPDX-License-Identifier: LGPL-2.1-or-later
"""The attack suite's hostile container program (runs inside a zone).

    attacker.py env PORT [MOVE ARGS_JSON]...      an env server that attacks on request
    attacker.py harness [MOVE ARGS_JSON]...       agent harness: moves, then idles
    attacker.py service PORT [MOVE ARGS_JSON]...  hidden service: moves, then serves
    attacker.py observer [MOVE ARGS_JSON]...      grader: moves, results in /out/verdict.json

Moves given on the command line run first, in order (an env server's before
it listens: `sleep` there holds provisioning). The env server also answers:

    GET  /health             200 (openenvd's readiness probe)
    POST /step               {"action": {"message": M}}: done when M == "done"
    POST /attack             {"move": NAME, "args": {...}}: runs a move here, returns its report
    GET  /seen               every request line this server received, and the step count
    GET  /ws                 OpenEnv's WebSocket protocol (reset, step, state, close): a
                             step's {"message": M, "move": NAME, "args": {...}} runs the
                             move here and answers an observation with its report (done
                             when M == "done")
    anything else            200 {"path": ...}

A harness writes each report to /workspace/<container>.<i>.<move>.json; a
service to its $ATTACK_STATE/results.json (and serves it on GET /results).
"""
import base64
import hashlib
import http.server
import json
import os
import signal
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import moves  # noqa: E402

NAME = os.environ.get("OPENENVD_CONTAINER", "x")
WS = os.environ.get("OPENENVD_WORKSPACE", "/workspace")


def parse(args):
    if len(args) % 2:
        sys.exit("attacker.py: moves come as MOVE ARGS_JSON pairs")
    return [(args[i], json.loads(args[i + 1])) for i in range(0, len(args), 2)]


def run(move, args):
    try:
        return moves.MOVES[move](**args)
    except Exception as e:  # noqa: BLE001 - an attack that raises is reported, not fatal
        return {"exception": "%s: %s" % (type(e).__name__, e)}


def atomic_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f)
    os.replace(tmp, path)


WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def ws_read(rfile):
    """One frame from the client: (opcode, payload), None at its end."""
    head = rfile.read(2)
    if len(head) < 2:
        return None
    n = head[1] & 0x7F
    if n == 126:
        n = struct.unpack(">H", rfile.read(2))[0]
    elif n == 127:
        n = struct.unpack(">Q", rfile.read(8))[0]
    mask = rfile.read(4) if head[1] & 0x80 else b"\0\0\0\0"
    data = bytearray(rfile.read(n))
    for i in range(len(data)):
        data[i] ^= mask[i % 4]
    return head[0] & 0x0F, bytes(data)


def ws_write(wfile, obj, opcode=1):
    data = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
    n = len(data)
    size = (bytes([n]) if n < 126 else bytes([126]) + struct.pack(">H", n) if n < 65536
            else bytes([127]) + struct.pack(">Q", n))
    wfile.write(bytes([0x80 | opcode]) + size + data)
    wfile.flush()


def ws_answer(msg):
    """OpenEnv's reply to one client message (None: close)."""
    kind, data = msg.get("type"), msg.get("data") or {}
    if kind == "reset":
        Handler.steps = 0
        return {"type": "observation", "data": {"observation": {"pid": os.getpid()},
                                                "reward": 0.0, "done": False}}
    if kind == "step":
        Handler.steps += 1
        text = str(data.get("message", ""))
        report = run(data["move"], data.get("args") or {}) if data.get("move") else None
        return {"type": "observation", "data": {"observation": {
            "echo": text, "steps": Handler.steps, "pid": os.getpid(), "report": report},
            "reward": 1.0, "done": text == "done"}}
    if kind == "state":
        return {"type": "state", "data": {"steps": Handler.steps, "pid": os.getpid()}}
    if kind == "close":
        return None
    return {"type": "error", "data": {"message": "unknown type %r" % kind, "code": "UNKNOWN"}}


def idle():
    while True:
        signal.pause()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen = []
    steps = 0
    results = None

    def send(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def body(self):
        n = min(int(self.headers.get("Content-Length") or "0"), 1 << 20)
        try:
            return json.loads(self.rfile.read(n) or b"{}")
        except ValueError:
            return {}

    def ws_session(self):
        key = self.headers.get("Sec-WebSocket-Key", "")
        accept = base64.b64encode(hashlib.sha1((key + WS_GUID).encode()).digest()).decode()
        self.send_response(101)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept)
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True
        while True:
            frame = ws_read(self.rfile)
            if not frame or frame[0] == 8:
                return
            if frame[0] == 9:
                ws_write(self.wfile, frame[1], opcode=10)
                continue
            try:
                answer = ws_answer(json.loads(frame[1]))
            except ValueError:
                answer = {"type": "error", "data": {"message": "not JSON", "code": "BAD"}}
            if answer is None:
                ws_write(self.wfile, b"\x03\xe8", opcode=8)
                return
            ws_write(self.wfile, answer)

    def do_GET(self):
        Handler.seen.append(self.requestline)
        if self.path == "/ws" and self.headers.get("Upgrade", "").lower() == "websocket":
            self.ws_session()
        elif self.path == "/health":
            self.send(200, {"server": "attacker", "container": NAME})
        elif self.path == "/seen":
            self.send(200, {"requests": Handler.seen, "steps": Handler.steps})
        elif self.path == "/results":
            self.send(200, Handler.results)
        else:
            self.send(200, {"path": self.path})

    def do_POST(self):
        Handler.seen.append(self.requestline)
        body = self.body()
        if self.path.split("?")[0].rstrip("/") == "/step":
            Handler.steps += 1
            msg = str((body.get("action") or {}).get("message", ""))
            self.send(200, {"observation": {"echo": msg, "steps": Handler.steps},
                            "reward": 1.0, "done": msg == "done"})
        elif self.path == "/attack":
            self.send(200, run(body.get("move", ""), body.get("args") or {}))
        else:
            self.send(200, {"path": self.path})

    def log_message(self, *args):
        pass


def serve(port, host="0.0.0.0"):
    http.server.ThreadingHTTPServer((host, port), Handler).serve_forever()


def main():
    role = sys.argv[1]
    if role == "env":
        for move, args in parse(sys.argv[3:]):
            run(move, args)
        serve(int(sys.argv[2]))
    elif role == "harness":
        for i, (move, args) in enumerate(parse(sys.argv[2:])):
            atomic_json(os.path.join(WS, "%s.%d.%s.json" % (NAME, i, move)), run(move, args))
        idle()
    elif role == "service":
        Handler.results = [run(m, a) for m, a in parse(sys.argv[3:])]
        state = os.environ.get("ATTACK_STATE")
        if state:
            atomic_json(os.path.join(state, "results.json"), Handler.results)
        serve(int(sys.argv[2]), "127.0.0.1")
    elif role == "observer":
        out = os.environ.get("OPENENVD_OUT", "/out")
        results = [run(m, a) for m, a in parse(sys.argv[2:])]
        atomic_json(os.path.join(out, "verdict.json"), {"results": results})
    else:
        sys.exit("attacker.py: unknown role " + role)


if __name__ == "__main__":
    main()
