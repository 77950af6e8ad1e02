#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The main job: build openenvd and run the example unit (examples/echo)
# isolated, end to end — start the daemon, reset, play an episode over /ws,
# let the environment end it, print the phases and the verdict, clean up.
# Without root (or without the kernel features) the daemon steps aside and
# the script says why.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

if [ "$(id -u)" -eq 0 ]; then
        scripts/install-deps.sh build demo
fi
echo "== build (the three binaries the demo runs; scripts/test.sh builds the rest)"
if [ -f build/build.ninja ]; then meson setup --reconfigure build >/dev/null; else meson setup build >/dev/null; fi
ninja -C build src/daemon/openenvd src/cli/openenvctl src/sandbox/shim/openenvd-shim

work=$(mktemp -d /tmp/openenvd-demo.XXXXXX)
chmod 0711 "$work" # containers resolve mount sources below it from their user namespaces
port=${OPENENVD_DEMO_PORT:-18000}
model_port=$((port + 1))
token=demo-$RANDOM$RANDOM
daemon_pid=
stub_pid=
installed=
cleanup() {
        # Every step runs, whatever the previous one returned (wait on a
        # killed process is non-zero, and set -e applies inside traps).
        # A process already gone makes kill fail: that must not turn a run
        # that succeeded into exit 1.
        if [ -n "$daemon_pid" ]; then kill -TERM "$daemon_pid" 2>/dev/null || true; wait "$daemon_pid" 2>/dev/null || true; fi
        if [ -n "$stub_pid" ]; then kill "$stub_pid" 2>/dev/null || true; wait "$stub_pid" 2>/dev/null || true; fi
        if [ -n "$installed" ]; then rm -rf /opt/openenv-echo; fi
        rm -rf "$work"
        return 0
}
trap cleanup EXIT

echo "== preflight"
build/src/cli/openenvctl check preflight || true
echo

if [ "$(id -u)" -ne 0 ]; then
        # Not root: openenvd cannot isolate, so it steps aside and execs the
        # env server as an image would run it: in the unit's directory (its
        # WORKDIR), with the image's CMD after --, on the port asked for.
        echo "== not root: openenvd --port $port -- python3 -m uvicorn server.app:app (steps aside)"
        (cd examples/echo && exec "$repo/build/src/daemon/openenvd" --manifest openenv.yaml \
                --port "$port" --listen 127.0.0.1 -- \
                /usr/bin/python3 -m uvicorn server.app:app --host 127.0.0.1 --port "$port") \
                > "$work/daemon.out" 2> "$work/daemon.log" &
        daemon_pid=$!
        /usr/bin/python3 - "$port" <<'PY' || { tail -20 "$work/daemon.log"; exit 1; }
import json, sys, time, urllib.request
url = "http://127.0.0.1:%s/health" % sys.argv[1]
for _ in range(300):
    try:
        with urllib.request.urlopen(url, timeout=1) as r:
            print("GET /health ->", r.status, json.loads(r.read()), "(answered by the env server itself)")
            break
    except OSError:
        time.sleep(0.1)
else:
    raise SystemExit("the env server did not come up on %s" % url)
PY
        grep -m1 "isolation disabled" "$work/daemon.log"
        exit 0
fi

# The example's argv paths are image paths: the containers' root is the host
# view (read-only /usr, the loader paths, a filtered /etc and the unit's own
# directories: those its argv, working directory and PYTHONPATH name), so
# the example is installed where its manifest says, and openenvd starts in
# it, as in an image's WORKDIR (the env's working directory is part of the
# view: never start it in a directory holding what agents must not read).
if [ ! -e /opt/openenv-echo ]; then
        cp -a examples/echo /opt/openenv-echo
        installed=1
fi

# A local stand-in for the model provider, holding the real key.
printf 'sk-demo-real-%s\n' "$RANDOM$RANDOM" > "$work/real-key"
cp "$work/real-key" "$work/stub-key"
/usr/bin/python3 examples/echo/model_stub.py "$model_port" "$work/stub-key" > "$work/stub.out" &
stub_pid=$!
# Bound before the daemon starts: the first episode's harness asks it at
# once. A stub still importing, or one whose port was taken, answers nothing.
for _ in $(seq 100); do
        grep -q listening "$work/stub.out" 2>/dev/null && break
        kill -0 "$stub_pid" 2>/dev/null || break
        sleep 0.1
done
if ! grep -q listening "$work/stub.out"; then
        echo "the model stub could not listen on 127.0.0.1:$model_port (OPENENVD_DEMO_PORT + 1)"
        exit 1
fi

echo "== openenvd --manifest /opt/openenv-echo/openenv.yaml --port $port"
printf '%s\n' "$token" > "$work/token"
repo=$(pwd)
(cd /opt/openenv-echo && exec "$repo/build/src/daemon/openenvd" \
        --manifest /opt/openenv-echo/openenv.yaml --state "$work/state" \
        --port "$port" --listen 127.0.0.1 --token-file "$work/token" \
        --model-url "127.0.0.1:$model_port" --model-key-file "$work/real-key") \
        > "$work/daemon.out" 2> "$work/daemon.log" &
daemon_pid=$!
# "openenvd ready": the first episode serves (GET /readyz says the same).
echo "== waiting for the first episode (openenvd ready)"
for _ in $(seq 1200); do
        grep -q "openenvd ready" "$work/daemon.out" 2>/dev/null && break
        if ! kill -0 "$daemon_pid" 2>/dev/null; then
                cat "$work/daemon.log"
                exit 1
        fi
        sleep 0.1
done
if grep -q "isolation disabled" "$work/daemon.log"; then
        echo "openenvd stepped aside: $(grep 'isolation disabled' "$work/daemon.log")"
fi
if ! grep -q "openenvd ready" "$work/daemon.out"; then
        echo "no episode could start within 120 s; GET /readyz says:"
        /usr/bin/python3 -c 'import sys, urllib.request, urllib.error
try: print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())
except urllib.error.HTTPError as e: print(e.code, e.read().decode())' "http://127.0.0.1:$port/readyz"
        tail -20 "$work/daemon.log"
        exit 1
fi

status=0
/usr/bin/python3 - "$port" "$token" "$work/daemon.log" <<'PY' || status=$?
import asyncio, json, sys, time, urllib.request
import websockets

port, token, daemon_log = int(sys.argv[1]), sys.argv[2], sys.argv[3]
base = "http://127.0.0.1:%d" % port
auth = {"Authorization": "Bearer " + token}

def call(method, path):
    req = urllib.request.Request(base + path, method=method, headers=auth, data=b"" if method == "POST" else None)
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read())

def wait_verdict(deadline=60):
    end = time.time() + deadline
    while time.time() < end:
        v = call("GET", "/verdict")
        if v["verdict"]:
            return v
        time.sleep(0.1)
    return v

print("== POST /reset_unit")
info = call("POST", "/reset_unit")
print("phase:", info["phase"], " episode:", info["episode_id"])

def harness_report(deadline=20):
    """The harness (agent code) prints what it could and could not do: its
    output is captured per container (GET /logs), never in the daemon's log."""
    end = time.time() + deadline
    while time.time() < end:
        req = urllib.request.Request(base + "/logs?container=harness", headers=auth)
        with urllib.request.urlopen(req, timeout=10) as r:
            for line in r.read().decode("utf-8", "replace").splitlines():
                if line.startswith('{"mcp_status"'):
                    return json.loads(line)
        time.sleep(0.1)
    return None

print("== the harness's own report (agent code, inside the agent zone)")
print(json.dumps(harness_report(), indent=2))

async def episode():
    async with websockets.connect("ws://127.0.0.1:%d/ws" % port, extra_headers=auth) as ws:
        await ws.send(json.dumps({"type": "reset"}))
        print("ws <-", await ws.recv())
        for msg in ["hello", "world", "done"]:
            await ws.send(json.dumps({"type": "step", "action": {"message": msg}}))
            print("ws <-", await ws.recv())

print("== episode over /ws")
asyncio.run(episode())
verdict = wait_verdict()
print("== phases")
for h in call("GET", "/info")["history"]:
    print("  %-12s -> %-12s %-12s %s" % (h["from"], h["to"], h["actor"], h["reason"]))
print("== GET /verdict")
print(json.dumps(verdict, indent=2))
sys.exit(0 if verdict["verdict"] == "graded" else 1)
PY
if [ "$status" -ne 0 ]; then
        echo "== daemon log (last 40 lines)"
        tail -40 "$work/daemon.log"
fi
exit "$status"
