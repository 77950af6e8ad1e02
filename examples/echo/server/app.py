# SPDX-License-Identifier: LGPL-2.1-or-later
"""Echo environment: an OpenEnv-style FastAPI server.

Endpoints: /health, /reset, /step, /state (HTTP), /ws (WebSocket with
reset/step/state messages) and /mcp (JSON-RPC tool surface for the agent).
Every step is also reported to the hidden `sim` service, which the env reaches
only through openenvd's service relay (OPENENVD_SERVICE_SIM, or sim.local:80).
The episode is done after MAX_STEPS steps or when the action says "done".
"""
import json
import os
import urllib.request

from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse

MAX_STEPS = int(os.environ.get("ECHO_MAX_STEPS", "3"))
SIM_URL = os.environ.get("OPENENVD_SERVICE_SIM", "http://sim.local:80")
WORKSPACE = os.environ.get("OPENENVD_WORKSPACE", "/workspace")

app = FastAPI()
state = {"episode": 0, "steps": 0, "messages": [], "done": False}


def tell_sim(message):
    """Best effort: the env works without its service (e.g. outside a unit)."""
    try:
        req = urllib.request.Request(SIM_URL + "/log", data=message.encode(), method="POST")
        with urllib.request.urlopen(req, timeout=2) as r:
            return r.status
    except Exception:
        return None


def observation(reward=0.0):
    return {"echo": state["messages"][-1] if state["messages"] else "",
            "steps": state["steps"], "reward": reward, "done": state["done"]}


def do_reset():
    state.update(episode=state["episode"] + 1, steps=0, messages=[], done=False)
    return observation()


def do_step(action):
    message = str((action or {}).get("message", ""))
    state["steps"] += 1
    state["messages"].append(message)
    sim = tell_sim(message)
    # Agent-visible effect: the workspace records what the agent did.
    try:
        with open(os.path.join(WORKSPACE, "transcript.txt"), "a") as f:
            f.write(message + "\n")
    except OSError:
        pass
    state["done"] = state["steps"] >= MAX_STEPS or message == "done"
    obs = observation(reward=1.0 if message else 0.0)
    obs["sim_status"] = sim
    return obs


@app.get("/health")
def health():
    return {"status": "ok"}


@app.post("/reset")
def reset():
    return {"observation": do_reset(), "done": False}


@app.post("/step")
async def step(request: Request):
    body = await request.json()
    obs = do_step(body.get("action", body))
    return {"observation": obs, "reward": obs["reward"], "done": obs["done"]}


@app.get("/state")
def get_state():
    return {"episode": state["episode"], "steps": state["steps"], "done": state["done"]}


@app.websocket("/ws")
async def ws(sock: WebSocket):
    await sock.accept()
    try:
        while True:
            msg = json.loads(await sock.receive_text())
            kind = msg.get("type")
            if kind == "reset":
                data = do_reset()
            elif kind == "step":
                data = do_step(msg.get("action") or msg.get("data"))
            elif kind == "state":
                data = {"episode": state["episode"], "steps": state["steps"]}
            else:
                await sock.send_text(json.dumps({"type": "error", "data": {"message": "unknown type"}}))
                continue
            await sock.send_text(json.dumps({"type": "observation", "data": data}))
    except WebSocketDisconnect:
        pass


TOOLS = [{"name": "echo_message", "description": "Echo a message back",
          "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}},
                          "required": ["message"]}}]


@app.post("/mcp")
async def mcp(request: Request):
    try:
        call = await request.json()
    except ValueError:
        return JSONResponse({"jsonrpc": "2.0", "id": None,
                             "error": {"code": -32700, "message": "parse error"}})
    rid = call.get("id")
    method = call.get("method")
    if method == "tools/list":
        return {"jsonrpc": "2.0", "id": rid, "result": {"tools": TOOLS}}
    if method == "tools/call" and call.get("params", {}).get("name") == "echo_message":
        text = str(call["params"].get("arguments", {}).get("message", ""))
        return {"jsonrpc": "2.0", "id": rid,
                "result": {"content": [{"type": "text", "text": text}]}}
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "method not found"}}
