# SPDX-License-Identifier: LGPL-2.1-or-later
"""The unmodified OpenEnv client against a unit, one scenario per call:

    openenv_client.py SCENARIO BASE_URL [ARGS...]   prints one JSON object

Runs with the real OpenEnv on PYTHONPATH (its envs/, src/ and library tree,
see ../shared/openenv-real/README.md). BASE_URL is all the client is given:
credentials go in it (http://openenv:TOKEN@127.0.0.1:PORT); the only other
constructor argument is message_timeout_s (TIMEOUT below). Nothing of
OpenEnv is patched or subclassed here; what is not OpenEnv's (the control
API, raw WebSocket frames) uses the libraries OpenEnv itself uses.

echo_env and connect4_env are in both fixtures. The newer one
(../shared/openenv-real-next/README.md) adds maze_env, chess_env,
carla_env and calendar_env: their scenarios import their env's package
when they run, so this file runs against the older fixture too. Each is
driven by its env's own client (MazeEnv, ChessEnv, CarlaEnv; calendar_env's
CalendarEnv, plain HTTP with its own request headers).
"""
import asyncio
import json
import os
import random
import sys
import time

from connect4_env import Connect4Env
from connect4_env.models import Connect4Action
from echo_env import EchoEnv
from openenv.core.env_server.mcp_types import CallToolAction
from openenv.cli._validation import validate_running_environment
from openenv.core.containers.runtime.providers import LocalDockerProvider
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

from control_api import control


# The client's own answer timeout (its default is 60 s): a reset() that
# starts an episode waits for an env server to start, which a loaded
# machine can take longer than that over. A parameter of the stock client.
TIMEOUT = 600


def ws_url(base, path):
    return base.replace("http://", "ws://", 1).rstrip("/") + path


def _tool_data(result):
    """What call_tool() returns from a CallToolObservation's result."""
    return result.get("data") if isinstance(result, dict) else getattr(result, "data", result)


def echo_episodes(base, n):
    """n MCP episodes on ONE client: reset, tools, calls, state; the
    orchestrator ends each (an MCP env never reports done itself)."""
    out = []
    with EchoEnv(base_url=base, message_timeout_s=TIMEOUT).sync() as env:
        for i in range(n):
            t0 = time.monotonic()
            r = env.reset()
            reset_s = time.monotonic() - t0
            info = control(base, "GET", "/info")
            tools = sorted(t.name for t in env.list_tools())
            stepped = env.step(CallToolAction(tool_name="echo_message",
                                              arguments={"message": "step %d" % i}))
            said = env.call_tool("echo_message", message="episode %d" % i)
            measured = env.call_tool("echo_with_length", message="abc")
            state = env.state()
            phase = control(base, "GET", "/info")["phase"]
            verdict = control(base, "POST", "/end_episode")
            out.append({"episode_id": info["episode_id"], "reset_done": r.done,
                        "reset_s": reset_s, "phase_after_calls": phase, "tools": tools,
                        "said": said, "measured": measured, "step_count": state.step_count,
                        "stepped": {"tool_name": stepped.observation.tool_name,
                                    "data": _tool_data(stepped.observation.result),
                                    "done": stepped.done},
                        "verdict": verdict})
    return {"episodes": out}


def echo_session(base):
    """One session of the stock client, OpenEnv's calls only (an env server
    with or without openenvd in front of it)."""
    with EchoEnv(base_url=base, message_timeout_s=TIMEOUT).sync() as env:
        r = env.reset()
        tools = sorted(t.name for t in env.list_tools())
        said = env.call_tool("echo_message", message="hello")
        state = env.state()
    return {"reset_done": r.done, "tools": tools, "said": said, "step_count": state.step_count}


def echo_http_mcp(base):
    """OpenEnv's production mode: tools over HTTP POST /mcp (httpx)."""
    env = EchoEnv(base_url=base, message_timeout_s=TIMEOUT)
    env.use_production_mode = True
    with env.sync() as s:
        tools = sorted(t.name for t in s.list_tools())
        said = s.call_tool("echo_message", message="over http")
    return {"tools": tools, "said": said, "info": control(base, "GET", "/info")}


async def _mcp_ws(base):
    async with ws_connect(ws_url(base, "/mcp"), max_size=None) as ws:
        await ws.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                                  "params": {}}))
        tools = json.loads(await ws.recv())
        await ws.send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                  "params": {"name": "echo_message",
                                             "arguments": {"message": "over ws"}}}))
        called = json.loads(await ws.recv())
    return {"tools": sorted(t["name"] for t in tools["result"]["tools"]), "called": called}


def mcp_ws(base):
    """MCP JSON-RPC over WebSocket /mcp (the websockets library OpenEnv uses)."""
    r = asyncio.run(_mcp_ws(base))
    r["info"] = control(base, "GET", "/info")
    return r


async def _mcp_sessions(base, n_http, ws_calls):
    """Sessions at once on a unit of lanes: n_http stock clients in
    OpenEnv's production mode (HTTP /mcp: openenv/session/create, then the
    session's id in every call; no /ws), session k making k + 2 tool calls,
    and one WebSocket /mcp session making ws_calls; then one more client,
    which finds every lane held. The live episodes are read while all are
    open; then each closes (its episode ends) and its verdict is read."""
    envs = []
    for k in range(n_http):
        env = EchoEnv(base_url=base, message_timeout_s=TIMEOUT)
        env.use_production_mode = True
        envs.append(env)

    async def http_session(k):
        tools = sorted(t.name for t in await envs[k].list_tools())
        said = [await envs[k].call_tool("echo_message", message="session %d call %d" % (k, i))
                for i in range(k + 2)]
        return {"tools": tools, "said": said}

    async with ws_connect(ws_url(base, "/mcp"), max_size=None) as ws:
        ws_lane = int(ws.response.headers["X-Openenvd-Lane"])
        for i in range(ws_calls):
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                                      "params": {"name": "echo_message",
                                                 "arguments": {"message": "ws %d" % i}}}))
            ws_said = json.loads(await ws.recv())
        sessions = await asyncio.gather(*(http_session(k) for k in range(n_http)))
        extra = EchoEnv(base_url=base, message_timeout_s=TIMEOUT)
        extra.use_production_mode = True
        try:
            await extra.call_tool("echo_message", message="one too many")
            full = "answered"
        except Exception as e:  # noqa: BLE001 - the refusal is the result
            full = "%s: %s" % (type(e).__name__, e)
        await extra.close()
        live = control(base, "GET", "/episodes")["live_episodes"]
    for env in envs:
        await env.close()
    return {"sessions": sessions, "ws_lane": ws_lane, "ws_said": ws_said, "full": full,
            "live": live}


def mcp_sessions(base, n_http, ws_calls):
    r = asyncio.run(_mcp_sessions(base, n_http, ws_calls))
    verdicts = {}
    for e in r["live"]:
        verdicts[e["episode_id"]] = _until(lambda: (lambda v: v if v.get("verdict") else None)(
            control(base, "GET", "/verdict?episode_id=" + e["episode_id"])))
    r["verdicts"] = verdicts
    return r


async def _raw_big(base, n):
    async with ws_connect(ws_url(base, "/ws"), max_size=None) as ws:
        await ws.send(json.dumps({"type": "reset", "data": {}}))
        await ws.recv()
        msg = json.dumps({"type": "step", "data": {"type": "call_tool",
                                                    "tool_name": "echo_message",
                                                    "arguments": {"message": "y" * n}}})
        await ws.send(msg)
        answer = await ws.recv()
        return len(msg), len(answer)


def echo_big(base, mib_down, mib_up):
    """Messages over 16 MiB: with the stock client (an observation three times
    the message), then raw frames both ways."""
    n = int(float(mib_down) * 2**20)
    with EchoEnv(base_url=base, message_timeout_s=TIMEOUT).sync() as env:
        env.reset()
        # A small action first: messages past the inspection limit (1 MiB)
        # stream through unread, so they are not counted.
        env.call_tool("echo_message", message="small")
        said = env.call_tool("echo_message", message="x" * n)
    sent, received = asyncio.run(_raw_big(base, int(float(mib_up) * 2**20)))
    return {"stock_len": len(said), "stock_ok": said == "x" * n, "raw_sent": sent,
            "raw_received": received}


def c4_loop(base, n):
    """The auto-episode loop on ONE client: for episode: reset(); while not done: step()."""
    out = []
    t_all = time.monotonic()
    with Connect4Env(base_url=base, message_timeout_s=TIMEOUT).sync() as env:
        for i in range(n):
            t0 = time.monotonic()
            r = env.reset()
            reset_s = time.monotonic() - t0
            eid = control(base, "GET", "/info")["episode_id"]
            first = env.state()
            steps = 0
            while not r.done:
                # Columns 0 and 1 in turn: player 1 wins on column 0 at step 7.
                r = env.step(Connect4Action(column=steps % 2))
                steps += 1
            # state() after done: the env is frozen for custody (docs/OPENENV.md,
            # "Reads after done"); the next reset() still works on this client.
            try:
                after = "answered: %s" % env.state()
            except Exception as e:  # noqa: BLE001 - what the stock client raises is the result
                after = "%s: %s" % (type(e).__name__, e)
            out.append({"episode_id": eid, "reset_s": reset_s, "steps": steps, "reward": r.reward,
                        "first_step_count": first.step_count, "state_after_done": after})
    return {"episodes": out, "seconds": time.monotonic() - t_all}


def c4_session(base, n, fillers, flag):
    """One of several sessions at once on a unit with episodes.concurrent: n
    games on ONE client, each to done. Its lane is in the handshake's answer
    (X-Openenvd-Lane, read from the stock client's own WebSocket), its
    episode's id in GET /episodes' live_episodes, its verdict by that id.
    Each session plays its own game (`fillers` pairs of moves in columns 3
    and 4 first: 2 * fillers + 7 moves to player 1's win), and holds its
    first episode until the file flag exists (every session is open)."""
    out = []
    lane = None
    with Connect4Env(base_url=base, message_timeout_s=TIMEOUT).sync() as env:
        for i in range(n):
            r = env.reset()
            lane = int(env._async._ws.response.headers["X-Openenvd-Lane"])
            live = control(base, "GET", "/episodes")["live_episodes"]
            eid = [e["episode_id"] for e in live if e["lane"] == lane][0]
            if i == 0:
                _until(lambda: os.path.exists(flag))
            moves = [3, 4] * fillers + [0, 1] * 3 + [0]
            done_early = False
            for k, column in enumerate(moves):
                done_early = done_early or r.done
                r = env.step(Connect4Action(column=column))
            verdict = control(base, "GET", "/verdict?wait=1&episode_id=" + eid)
            out.append({"episode_id": eid, "steps": len(moves), "done": r.done,
                        "done_early": done_early, "reward": r.reward, "verdict": verdict})
    return {"lane": lane, "episodes": out}


def c4_capacity(base):
    """A session while every lane is held: OpenEnv's capacity error, as its
    stock client words it."""
    with Connect4Env(base_url=base, message_timeout_s=TIMEOUT).sync() as env:
        try:
            env.reset()
            return {"answer": "answered"}
        except Exception as e:  # noqa: BLE001 - the refusal is the result
            return {"answer": "%s: %s" % (type(e).__name__, e)}


def _until(cond, timeout_s=TIMEOUT):
    """Polls cond() until it returns a true value (returned); the deadline
    is a liveness bound."""
    deadline = time.monotonic() + timeout_s
    while not (v := cond()):
        if time.monotonic() > deadline:
            raise TimeoutError("gave up waiting after %s s" % timeout_s)
        time.sleep(0.05)
    return v


async def _refused_frames(base):
    """A raw /ws session opened while the env server is full: what it
    pushes unasked, and how it closes (websockets, as OpenEnv's client)."""
    async with ws_connect(ws_url(base, "/ws")) as ws:
        frame = json.loads(await ws.recv())
        try:
            await asyncio.wait_for(ws.recv(), TIMEOUT)
            then = "not closed"
        except ConnectionClosed as e:
            then = e.rcvd.code if e.rcvd else None
    return {"frame": frame, "close": then}


def maze_capacity(base, max_steps):
    """maze_env: an episode to done on one client; then, while that client
    holds a session in the next episode, a second stock client. maze_env's
    app allows one session (max_concurrent_envs=1): the env server refuses
    the second with CAPACITY_REACHED, pushed right after it accepts, then
    close 1000.

    The stock client surfaces that code only when its reset reaches the env
    server before the close reaches the client: opened while the env server
    is full, that races (ConnectionClosedOK about half the time, with or
    without openenvd). So the second client connects between episodes,
    where openenvd holds its session and relays its reset as the env
    server's first message: the refusal always answers the reset. A raw
    session opened while the env server is full shows the race's other
    side: the frame as OpenEnv sends it, then its close."""
    from maze_env import MazeAction, MazeEnv
    rng = random.Random(1)  # the maze is fixed: a seeded walk is one path every run
    with MazeEnv(base_url=base, message_timeout_s=TIMEOUT).sync() as env:
        r = env.reset()
        first = control(base, "GET", "/info")["episode_id"]
        steps = 0
        while not r.done and steps < max_steps:
            r = env.step(MazeAction(action=rng.choice(r.observation.legal_actions)))
            steps += 1
        episode = {"episode_id": first, "steps": steps, "done": r.done, "reward": r.reward,
                   "position": r.observation.current_position}
        # done ends the episode once it reached the client: wait for its verdict.
        _until(lambda: control(base, "GET", "/verdict?episode_id=" + first)["verdict"])
        with MazeEnv(base_url=base, message_timeout_s=TIMEOUT).sync() as other:
            # The next episode, started by the first client's reset: its
            # session holds the new env server's one slot.
            r = env.reset()
            held = control(base, "GET", "/info")["episode_id"]
            try:
                other.reset()
                second = "answered"
            except Exception as e:  # noqa: BLE001 - the refusal is the result
                second = "%s: %s" % (type(e).__name__, e)
        raw = asyncio.run(_refused_frames(base))
        # The refusals cost the first session nothing.
        after = env.step(MazeAction(action=r.observation.legal_actions[0]))
        step_count = env.state().step_count
    return {"episode": episode, "held_episode_id": held, "second": second, "raw": raw,
            "first_after": {"position": after.observation.current_position,
                            "step_count": step_count},
            "info": control(base, "GET", "/info")}


def chess_moves(base, n):
    """chess_env: n moves against its engine, and one illegal move. The
    stock client's done and reward stay False and 0.0 (it reads them from
    inside observation, where the server does not put them): the board is
    what shows play."""
    from chess_env import ChessAction, ChessEnv
    # Knight moves first: no mate is possible within a few of them, so the
    # game is still on whichever colour the env deals the agent.
    prefer = ["g1f3", "b1c3", "g8f6", "b8c6", "f3g1", "c3b1", "f6g8", "c6b8"]
    with ChessEnv(base_url=base, message_timeout_s=TIMEOUT).sync() as env:
        r = env.reset()
        start = {"fen": r.observation.fen, "legal": len(r.observation.legal_moves)}
        moves = []
        for _ in range(n):
            legal = r.observation.legal_moves
            mv = next((m for m in prefer if m in legal), legal[0])
            r = env.step(ChessAction(move=mv))
            moves.append({"move": mv, "fen": r.observation.fen,
                          "legal": len(r.observation.legal_moves),
                          "result": r.observation.result, "done": r.done})
        illegal = env.step(ChessAction(move="a1a8"))
        state = env.state()
    return {"start": start, "moves": moves,
            "illegal_fen": illegal.observation.fen,
            "move_history": state.move_history, "step_count": state.step_count,
            "info": control(base, "GET", "/info")}


def carla_episode(base, max_steps):
    """carla_env in mock mode: observe until the scenario ends the episode."""
    from carla_env import CarlaAction, CarlaEnv
    with CarlaEnv(base_url=base, message_timeout_s=TIMEOUT).sync() as env:
        r = env.reset()
        eid = control(base, "GET", "/info")["episode_id"]
        scenario = r.observation.scenario_name
        steps = 0
        while not r.done and steps < max_steps:
            r = env.step(CarlaAction(action_type="observe"))
            steps += 1
    return {"episode_id": eid, "scenario": scenario, "steps": steps, "done": r.done,
            "done_reason": r.observation.done_reason, "step_number": r.observation.step_number}


def calendar_headers(base, database_id):
    """calendar_env over HTTP with its own client, which sends its context as
    request headers (x-database-id, x-access-token, ...): once with its
    scenario's context (a sample token), once without the token."""
    import calendar_env
    from calendar_env.client import CalendarEnv
    with open(os.path.join(os.path.dirname(calendar_env.__file__),
                           "scenario_config.json")) as f:
        context = json.load(f)["context"]
    out = {}
    for name, ctx in (("token", context),
                      ("no_token", {k: v for k, v in context.items() if k != "x-access-token"})):
        with CalendarEnv(base_url=base, database_id=database_id, context=ctx,
                         timeout_s=TIMEOUT) as env:
            r = env.reset()
            tools = [t["name"] for t in env.list_tools()]
            o = env.call_tool("get_calendar_list", {})
            state = env.state()
        text = (o.tool_result or {}).get("text", "")
        try:
            items = [c.get("id") for c in json.loads(text).get("items", [])]
        except ValueError:
            items = None
        out[name] = {"reset_done": r.done, "tools": len(tools), "success": o.success,
                     "error_message": o.error_message, "is_error": (o.tool_result or {}).get(
                         "isError"), "items": items, "state": state}
    out["info"] = control(base, "GET", "/info")
    return out


def validate(base):
    """OpenEnv's own runtime validator (openenv validate --url)."""
    return validate_running_environment(base, timeout_s=30)


def ready_then_validate(base, timeout_s):
    """What OpenEnv's provider and validator do against a server just
    started: LocalDockerProvider.wait_for_ready (the first 200 of /health;
    the method needs no Docker, so no instance of the provider is made),
    then the runtime validator at once."""
    t0 = time.monotonic()
    LocalDockerProvider.wait_for_ready(None, base, timeout_s=float(timeout_s))
    ready_s = time.monotonic() - t0
    report = validate_running_environment(base, timeout_s=30)
    return {"ready_s": ready_s, "report": report}


def refused(base):
    """What the stock client gets without credentials."""
    out = {}
    try:
        with EchoEnv(base_url=base, message_timeout_s=TIMEOUT).sync() as env:
            env.reset()
        out["ws"] = "connected"
    except Exception as e:  # noqa: BLE001 - the refusal is the result
        out["ws"] = "%s: %s" % (type(e).__name__, e)
    env = EchoEnv(base_url=base, message_timeout_s=TIMEOUT)
    env.use_production_mode = True
    try:
        with env.sync() as s:
            s.call_tool("echo_message", message="x")
        out["http_mcp"] = "answered"
    except Exception as e:  # noqa: BLE001
        out["http_mcp"] = "%s: %s" % (type(e).__name__, e)
    return out


def headers_sent(base):
    """Against a capture server: which credential each of OpenEnv's HTTP
    libraries sends for a base_url with user:password."""
    import httpx
    import requests
    out = {}
    try:
        with EchoEnv(base_url=base, message_timeout_s=TIMEOUT).sync() as env:
            env.reset()
    except Exception as e:  # noqa: BLE001 - the capture server refuses
        out["websockets"] = type(e).__name__
    for name, call in (("httpx", lambda: httpx.post(base + "/mcp", json={})),
                       ("requests", lambda: requests.get(base + "/health", timeout=10))):
        try:
            call()
        except Exception as e:  # noqa: BLE001
            out[name] = type(e).__name__
    return out


SCENARIOS = {
    "echo-episodes": echo_episodes,
    "echo-session": echo_session,
    "echo-http-mcp": echo_http_mcp,
    "mcp-ws": mcp_ws,
    "mcp-sessions": mcp_sessions,
    "echo-big": echo_big,
    "c4-loop": c4_loop,
    "c4-session": c4_session,
    "c4-capacity": c4_capacity,
    "validate": validate,
    "ready-then-validate": ready_then_validate,
    "refused": refused,
    "headers-sent": headers_sent,
    "maze-capacity": maze_capacity,
    "chess-moves": chess_moves,
    "carla-episode": carla_episode,
    "calendar-headers": calendar_headers,
}


def main():
    scenario, base, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    fn = SCENARIOS[scenario]
    args = [int(a) if a.isdigit() else a for a in args]
    print(json.dumps(fn(base, *args), default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
