# SPDX-License-Identifier: LGPL-2.1-or-later
"""Agent harness of the live-test units. argv[1] is the behaviour:

  probe     attack from the harness (probelib), use MCP and the model proxy,
            write /workspace/harness.json
  forkbomb  fork without end (stopped only by pids.max)
  detach    double-fork a detached sleeper (reparented to the container's
            PID 1), then keep running like a harness waiting for its agent
  oom       allocate past memory_mb
  fill      write /workspace until ENOSPC
Progress markers go to /workspace so the test can wait for them.
"""
import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import probelib  # noqa: E402

WS = os.environ.get("OPENENVD_WORKSPACE", "/workspace")
mode = sys.argv[1] if len(sys.argv) > 1 else "probe"


def mark(name, data=""):
    with open(os.path.join(WS, name), "w") as f:
        f.write(data)


def idle():
    while True:
        signal.pause()


if mode == "probe":
    cfg = probelib.load_cfg()
    report = probelib.probe_all(cfg)
    report["mcp"] = probelib.http("POST", os.environ["MCP_URL"],
                                  {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    model = os.environ["MODEL_BASE_URL"] + "/v1/messages"
    report["model"] = probelib.http(
        "POST", model, {"model": "stub", "max_tokens": 8, "messages": []},
        {"x-api-key": os.environ.get("ANTHROPIC_API_KEY", ""),
         "anthropic-version": "2023-06-01"})
    report["model_guessed_key"] = probelib.http("POST", model, {}, {"x-api-key": "sk-guess"})
    tmp = os.path.join(WS, ".harness.tmp")
    with open(tmp, "w") as f:
        json.dump(report, f)
    os.replace(tmp, os.path.join(WS, "harness.json"))
elif mode == "forkbomb":
    mark("forkbomb.started")
    while True:
        try:
            if os.fork() == 0:
                idle()
        except OSError:
            time.sleep(0.01)  # refused by pids.max: keep trying, without end
elif mode == "detach":
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() != 0:
            os._exit(0)
        mark("detached.pid", str(os.getpid()))
        idle()
    os.waitpid(pid, 0)
    while not os.path.exists(os.path.join(WS, "detached.pid")):
        time.sleep(0.01)
    mark("detach.done")
    idle()
elif mode == "oom":
    mark("oom.started")
    hog = []
    while True:
        hog.append(bytearray(8 << 20))  # zero-filled: every page is touched
elif mode == "fill":
    try:
        with open(os.path.join(WS, "fill.bin"), "wb") as f:
            chunk = b"x" * (1 << 20)
            while True:
                f.write(chunk)
                f.flush()
    except OSError as e:
        # The errno is in the name: a full disk has no block for contents.
        mark("fill.errno-%d" % e.errno)
    # Kept full: the env's ticker frees a block each time it replaces its
    # file, which would leave the disk one block short of full at sealing.
    with open(os.path.join(WS, "fill.more"), "wb", buffering=0) as f:
        while True:
            try:
                f.write(b"x" * 4096)
            except OSError:
                time.sleep(0.005)
idle()
