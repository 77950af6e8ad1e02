#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Byte-exact HTTP/1.1 + WebSocket upstream for the relay tests (stdlib only).

usage: upstream.py unix | upstream.py tcp REALKEY
The listening socket is inherited as fd 3 (created by the test, so it accepts
connections before this script even starts: no readiness race). Responses are written by hand so
the tests see exactly what an env server (or model provider) sent.
"""
import asyncio, base64, hashlib, json, os, struct, sys

seen = []          # (method, target) of every request but /log and /release
heads = []         # model mode: every request head but /log's and /raw's, as received
trailers = []      # trailer lines of chunked request bodies, as received
release = None     # set by GET /release: lets /sse finish
sessions_made = 0  # openenv/session/create answered

async def read_head(r):
    head = await r.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = lines[0].split(" ", 2)
    hdrs = []
    for l in lines[1:]:
        if l:
            k, v = l.split(":", 1)
            hdrs.append((k.strip().lower(), v.strip()))
    return head, method, target, hdrs

def get(hdrs, k):
    for a, b in hdrs:
        if a == k:
            return b
    return None

async def read_body(r, hdrs):
    if get(hdrs, "transfer-encoding") == "chunked":
        body = b""
        while True:
            line = await r.readuntil(b"\r\n")
            n = int(line.split(b";")[0], 16)
            if n == 0:
                while True:
                    line = await r.readuntil(b"\r\n")
                    if line == b"\r\n":
                        return body
                    trailers.append(line.decode("latin-1"))
            body += await r.readexactly(n)
            await r.readexactly(2)
    n = int(get(hdrs, "content-length") or 0)
    return await r.readexactly(n) if n else b""

def resp(status, body, ctype="application/json", extra=""):
    return (f"HTTP/1.1 {status} X\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\n"
            f"{extra}\r\n").encode() + body

async def ws_frame(r):
    b0, b1 = await r.readexactly(2)
    n = b1 & 0x7f
    if n == 126:
        n = struct.unpack(">H", await r.readexactly(2))[0]
    elif n == 127:
        n = struct.unpack(">Q", await r.readexactly(8))[0]
    mask = await r.readexactly(4) if b1 & 0x80 else b"\0\0\0\0"
    data = await r.readexactly(n)
    if n:  # unmask in one big-integer XOR (frames may be many MiB)
        m = (mask * (n // 4 + 1))[:n]
        data = (int.from_bytes(data, "big") ^ int.from_bytes(m, "big")).to_bytes(n, "big")
    return b0 & 0x0f, data

def ws_send(w, op, data):
    n = len(data)
    hdr = bytes([0x80 | op])
    if n < 126:
        hdr += bytes([n])
    elif n < 65536:
        hdr += bytes([126]) + struct.pack(">H", n)
    else:
        hdr += bytes([127]) + struct.pack(">Q", n)
    w.write(hdr + data)

async def websocket(r, w, hdrs, head):
    # A client must not send frames before the 101 (RFC 6455 4.1); uvicorn
    # silently drops what came with the handshake request. Refuse loudly.
    if r._buffer:
        w.write(resp(400, b'{"error":"frame before the handshake answer"}'))
        await w.drain()
        return
    key = get(hdrs, "sec-websocket-key")
    if r._buffer:
        # A frame sent with the handshake, before its answer: RFC 6455 4.1
        # forbids it, and real servers lose it (uvicorn's websockets does).
        # Refused loudly here, so a relay that does it fails its test.
        w.write(b"HTTP/1.1 400 X\r\nContent-Length: 0\r\n\r\n")
        await w.drain()
        return
    acc = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest())
    w.write(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Accept: " + acc + b"\r\n\r\n")
    while True:
        op, data = await ws_frame(r)
        if op == 8:
            ws_send(w, 8, data)
            await w.drain()
            return
        if op == 9:  # a ping is answered, as every server does (RFC 6455 5.5.2)
            ws_send(w, 10, data)
            await w.drain()
            continue
        if data == b"done":
            ws_send(w, 1, json.dumps({"type": "observation", "data": {"done": True}}).encode())
        elif data == b"close":
            ws_send(w, 8, struct.pack(">H", 4001) + b"bye")
            await w.drain()
            return
        elif data == b"bad":
            w.write(b"\x81\x7e\x00\x01x")  # non-minimal length: protocol error
        elif data == b"headers":
            ws_send(w, 1, head)  # the handshake as the env server saw it
        elif data.startswith(b"big "):
            ws_send(w, 2, b"y" * int(data[4:]))  # frames of any size stream through
        elif data.startswith(b'{"jsonrpc"'):
            ws_send(w, 1, json.dumps(mcp_answer(json.loads(data))).encode())
        elif data == b"vanish":
            # Killed mid-request: gone without a reply or a close frame.
            w.close()
            return
        elif data == b"done-exit":
            # The env's last word, then it is gone (the unit kills it on
            # done): no close frame, just the end of the stream.
            ws_send(w, 1, json.dumps({"type": "observation", "done": True}).encode())
            await w.drain()
            w.close()
            return
        else:
            ws_send(w, op, data)
        await w.drain()

def mcp_answer(req):
    """JSON-RPC: tools/call of "finish" ends the episode (done in the
    structured content, as an MCP env reports it); batches answered in kind."""
    if isinstance(req, list):
        return [mcp_answer(x) for x in req]
    p = req.get("params") or {}
    if req.get("method") == "openenv/session/create":
        # OpenEnv's HTTP MCP sessions; the id says which server made it.
        global sessions_made
        sessions_made += 1
        result = {"session_id": p.get("id_as") or "%d-%d" % (os.getpid(), sessions_made)}
        return {"jsonrpc": "2.0", "id": req.get("id"), "result": result}
    if req.get("method") == "tools/call" and p.get("name") == "finish":
        result = {"content": [], "structuredContent": {"done": True, "reward": 1.0}}
    else:
        result = {"content": [{"type": "text", "text": "ok"}]}
    if "session_id" in p:
        result["server"] = os.getpid()  # which lane's env server answered
    return {"jsonrpc": "2.0", "id": req.get("id"), "result": result}

async def handle(r, w):
    global release
    try:
        while True:
            try:
                head, method, target, hdrs = await read_head(r)
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            path = target.split("?")[0]
            if path not in ("/log", "/release", "/raw"):
                seen.append([method, target])
                heads.append(head.decode("latin-1"))
            if path == "/ws" or get(hdrs, "upgrade"):
                try:
                    await websocket(r, w, hdrs, head)
                except (asyncio.IncompleteReadError, ConnectionError):
                    pass  # the client (or the relay) went away
                return
            if path == "/drop":
                # A server that leaves after the head, the body unread.
                w.transport.abort()
                return
            body = await read_body(r, hdrs)
            if MODEL and path == "/log":
                w.write(resp(200, json.dumps(seen).encode()))
            elif MODEL and path == "/raw":
                w.write(resp(200, json.dumps({"heads": heads, "trailers": trailers}).encode()))
            elif MODEL:
                ok = get(hdrs, "x-api-key") == REALKEY or get(hdrs, "authorization") == "Bearer " + REALKEY
                if b'"stream":true' in body:
                    w.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
                    for ev in (b"data: one\n\n", b"data: two\n\n"):
                        w.write(b"%x\r\n%s\r\n" % (len(ev), ev))
                    w.write(b"0\r\n\r\n")
                else:
                    w.write(resp(200, json.dumps({"key_ok": ok, "body": body.decode()}).encode()))
            elif path == "/log":
                w.write(resp(200, json.dumps(seen).encode()))
                if "clear=1" in target:
                    seen.clear()
            elif path == "/release":
                release.set()
                w.write(resp(200, b"{}"))
            elif path == "/echo-head":
                w.write(resp(200, head, "text/plain"))
            elif path == "/echo":
                w.write(resp(200, body, "application/octet-stream"))
            elif path == "/mcp":
                w.write(resp(200, json.dumps(mcp_answer(json.loads(body or b"{}"))).encode()))
            elif path == "/reset":
                w.write(resp(200, json.dumps({"observation": {}, "done": False}).encode()))
            elif path == "/cookies":
                w.write(resp(200, b"cookies", "text/plain", "Set-Cookie: a=1\r\nSet-Cookie: b=2\r\nX-Odd:  spaced \r\n"))
            elif path in ("/step", "/step/"):
                done = json.loads(body or b"{}").get("done", False)
                w.write(resp(200, json.dumps({"observation": {}, "done": done}).encode()))
            elif path == "/chunked":
                w.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
            elif path == "/sse":
                w.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
                ev = b"data: first\n\n"
                w.write(b"%x\r\n%s\r\n" % (len(ev), ev))
                await w.drain()
                release = asyncio.Event()
                await release.wait()
                ev = b"data: second\n\n"
                w.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(ev), ev))
            elif path == "/big":
                n = int(target.split("=")[1])
                w.write(resp(200, b"x" * n, "application/octet-stream"))
            elif path == "/cut":
                # A response whose server dies halfway through its body.
                n = int(target.split("=")[1])
                w.write(f"HTTP/1.1 200 OK\r\nContent-Length: {n}\r\n\r\n".encode() + b"c" * (n // 2))
                await w.drain()
                w.close()
                return
            elif path == "/unasked-101":
                # An env server that switches protocols on a plain request
                # and then talks in its new protocol.
                w.write(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                        b"Connection: Upgrade\r\n\r\n\x81\x05hello")
            elif path == "/close":
                w.write(b"HTTP/1.1 200 OK\r\n\r\nuntil-eof")
                await w.drain()
                w.close()
                return
            else:
                w.write(resp(404, b'{"detail":"Not Found"}'))
            await w.drain()
    finally:
        w.close()

async def main():
    import socket
    sock = socket.socket(fileno=3)
    if sys.argv[1] == "unix":
        srv = await asyncio.start_unix_server(handle, sock=sock)
    else:
        srv = await asyncio.start_server(handle, sock=sock)
    async with srv:
        await srv.serve_forever()

MODEL = sys.argv[1] == "tcp"
REALKEY = sys.argv[2] if MODEL else None
asyncio.run(main())
