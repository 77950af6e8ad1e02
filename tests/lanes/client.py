# SPDX-License-Identifier: LGPL-2.1-or-later
"""HTTP/WebSocket client of the Docker lanes, run by run-lanes.sh with the
host's /usr/bin/python3 inside a container's network namespace (nsenter -n),
so every request goes to 127.0.0.1 of a namespace the test created.

  client.py episode PORT TOKEN   isolated unit: /info, /reset_unit, an
                                 episode over /ws, GET /verdict; prints one
                                 JSON summary and exits 0 only if graded
  client.py surface PORT         env traffic as an orchestrator would send
                                 it without openenvd; prints the exchanges
                                 (status, headers but Date, body) as JSON
  client.py wait PORT PATH [any] waits (bounded) until PATH answers 200
                                 (with "any": answers at all)
"""
import asyncio
import http.client
import json
import sys
import time


def request(port, method, path, body=None, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        return r.status, [(k.lower(), v) for k, v in r.getheaders()], r.read()
    finally:
        conn.close()


def wait(port, path, any_status=False, deadline=90.0):
    end = time.monotonic() + deadline
    last = None
    while time.monotonic() < end:
        try:
            status, _, _ = request(port, "GET", path)
            if status == 200 or any_status:
                return 0
            last = status
        except OSError as e:
            last = str(e)
        time.sleep(0.2)
    print("no 200 from %s: %s" % (path, last), file=sys.stderr)
    return 1


def surface(port):
    js = {"Content-Type": "application/json"}
    calls = [
        ("GET", "/health", None),
        ("POST", "/reset", b""),
        ("POST", "/step", json.dumps({"action": {"message": "hello"}}).encode()),
        ("GET", "/state", None),
        ("POST", "/mcp", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()),
        ("POST", "/mcp", json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                     "params": {"name": "echo_message",
                                                "arguments": {"message": "hi"}}}).encode()),
        ("POST", "/mcp", b"not json"),
        ("GET", "/nope", None),
    ]
    out = []
    for method, path, body in calls:
        status, headers, data = request(port, method, path, body, js if body is not None else None)
        out.append({"request": "%s %s" % (method, path), "status": status,
                    "headers": [h for h in headers if h[0] != "date"],
                    "body": data.decode("utf-8", "replace")})
    print(json.dumps(out, indent=1, sort_keys=True))
    return 0


def episode(port, token):
    import websockets  # Debian's python3-websockets on the host

    auth = {"Authorization": "Bearer " + token}
    summary = {}

    def call(method, path, headers=auth):
        status, _, data = request(port, method, path, b"" if method == "POST" else None, headers)
        return status, json.loads(data or b"null")

    summary["healthz"] = call("GET", "/healthz", {})[0]
    summary["info_without_token"] = call("GET", "/info", {})[0]
    status, info = call("GET", "/info")
    summary["isolation"] = info.get("isolation") if status == 200 else status
    status, info = call("POST", "/reset_unit")
    summary["reset_unit"] = [status, info.get("phase") if isinstance(info, dict) else info]
    if status != 200 or info.get("phase") != "ready":
        print(json.dumps(summary))
        return 1
    summary["episode_id"] = info["episode_id"]

    async def play():
        frames = []
        async with websockets.connect("ws://127.0.0.1:%d/ws" % port, extra_headers=auth,
                                      open_timeout=30) as ws:
            await ws.send(json.dumps({"type": "reset"}))
            frames.append(json.loads(await ws.recv()))
            for msg in ["hello", "world", "done"]:
                await ws.send(json.dumps({"type": "step", "action": {"message": msg}}))
                frames.append(json.loads(await ws.recv()))
        return frames

    frames = asyncio.run(play())
    summary["frames"] = len(frames)
    summary["done"] = frames[-1].get("data", {}).get("done")
    end = time.monotonic() + 120
    verdict = {}
    while time.monotonic() < end:
        status, verdict = call("GET", "/verdict")
        if status == 200 and verdict.get("verdict"):
            break
        time.sleep(0.2)
    summary["verdict"] = verdict.get("verdict")
    summary["verdict_episode"] = verdict.get("episode_id")
    summary["observers"] = verdict.get("observers")
    summary["phases"] = [h["to"] for h in call("GET", "/info")[1].get("history", [])]
    print(json.dumps(summary))
    ok = (summary["healthz"] == 200 and summary["info_without_token"] == 401
          and summary["isolation"] == "on" and summary["verdict"] == "graded"
          and summary["verdict_episode"] == summary["episode_id"])
    return 0 if ok else 1


def main(argv):
    if len(argv) == 4 and argv[1] == "episode":
        return episode(int(argv[2]), argv[3])
    if len(argv) == 3 and argv[1] == "surface":
        return surface(int(argv[2]))
    if len(argv) in (4, 5) and argv[1] == "wait":
        return wait(int(argv[2]), argv[3], argv[4:] == ["any"])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
