# SPDX-License-Identifier: LGPL-2.1-or-later
"""A bare ASGI app (stdlib only) for the default env command,
`uvicorn asgi_app:app --host H --port P`:

  GET /health   {"server": "asgi"}
  GET /env      {"names": [the environment's variable names], "cwd": ...}
"""
import json
import os


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            msg = await receive()
            if msg["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif msg["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] != "http":
        return
    if scope["path"] == "/health":
        body = {"server": "asgi"}
    elif scope["path"] == "/env":
        body = {"names": sorted(os.environ), "cwd": os.getcwd()}
    else:
        body = {"error": "not found"}
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": 404 if "error" in body else 200,
                "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": data})
