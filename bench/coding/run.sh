#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Grading time of the coding example (issue 26 item 6): examples/coding,
# driven by OpenEnv's stock client, back-to-back episodes of reset -> one
# step with an honest program (submit=True, done) -> GET /verdict?wait=1.
# done -> verdict against the three observers' own run time (the manifest's
# stage, run and score commands run directly on the host, same inputs, same
# program), the daemon's share, and the episode loop, standby on vs
# --no-standby; one run, interleaved (bench/README.md, bench/coding).
#
#   sudo bench/coding/run.sh [BUILD_DIR] [REPS]       (default build 20)
#
# Needs the OpenEnv snapshot at ../shared/openenv-real/ next to the
# repository (or OPENENV_REAL=DIR): without it the bench says so and fails.
# Its pylib.tar.xz is unpacked and byte-compiled once by
# bench/openenv/cache.sh (OPENENVD_BENCH_CACHE, default
# /var/cache/openenvd-bench) and used as the unit's pylib/; the unit itself
# is laid out by examples/coding/install.sh in a fresh directory under
# /var/tmp (the daemon starts there: the env's WORKDIR may not be below /tmp),
# removed at exit. BENCH_CODING_IDLE (0.5 s), BENCH_CODING_BLOCK (5),
# BENCH_CODING_KEEP=DIR keeps the daemons' logs and the raw results there.
set -euo pipefail

BUILD=$(realpath "${1:-build}")
REPS=${2:-20}
SRC=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$SRC/../.." && pwd)
REAL=${OPENENV_REAL:-$REPO/../shared/openenv-real}
PY=/usr/bin/python3
OPENENVD="$BUILD/src/daemon/openenvd"

if [ "$(id -u)" != 0 ]; then
        echo "run.sh: needs root" >&2
        exit 1
fi
if [ ! -f "$REAL/pylib.tar.xz" ] || [ ! -d "$REAL/src/openenv" ] || [ ! -d "$REAL/envs/connect4_env" ]; then
        echo "bench/coding: unavailable: no OpenEnv snapshot at $REAL (pylib.tar.xz, src/openenv; set OPENENV_REAL)" >&2
        exit 1
fi
[ -x "$OPENENVD" ] || { echo "run.sh: $OPENENVD not built" >&2; exit 1; }
REAL=$(cd "$REAL" && pwd)

CACHE=$("$REPO/bench/openenv/cache.sh" "$REAL")

WORK=$(mktemp -d /var/tmp/openenvd-bench-coding.XXXXXX)
chmod 0711 "$WORK" # containers resolve mount sources below it from their user namespaces
pids=()
cleanup() {
        for p in "${pids[@]}"; do
                { kill -TERM "$p" 2>/dev/null && wait "$p" 2>/dev/null; } || true
        done
        if [ -n "${BENCH_CODING_KEEP:-}" ]; then
                mkdir -p "$BENCH_CODING_KEEP"
                cp "$WORK"/*.log "$WORK"/results.json "$BENCH_CODING_KEEP"/ 2>/dev/null || true
        fi
        rm -rf "$WORK"
}
trap cleanup EXIT

# The unit as its image would have it; pylib/ is the cached, byte-compiled
# snapshot (install.sh unpacks only when there is none; hard links where the
# cache is on the same file system: the containers see the unit's directory,
# not the cache), and the unit's own modules are byte-compiled too: the
# containers' root is read-only, and an image would carry its bytecode.
UNIT="$WORK/coding_env"
mkdir -p "$UNIT"
cp -al "$CACHE/pylib" "$UNIT/pylib" 2>/dev/null || cp -a "$CACHE/pylib" "$UNIT/pylib"
"$REPO/examples/coding/install.sh" "$UNIT" "$REAL"
"$PY" -m compileall -q -l "$UNIT" "$UNIT/server" "$UNIT/grading" > /dev/null
chmod -R a+rX "$UNIT"

token=bench-$RANDOM$RANDOM
printf '%s\n' "$token" > "$WORK/token"
free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

start_daemon() { # NAME PORT [OPTIONS]
        local name=$1 port=$2
        shift 2
        (cd "$UNIT" && exec "$OPENENVD" --manifest openenv.yaml --state "$WORK/state-$name" \
                --port "$port" --listen 127.0.0.1 --token-file "$WORK/token" --require-isolation \
                --log-level debug --log-format json "$@") > "$WORK/$name.out" 2> "$WORK/$name.log" &
        pids+=($!)
        for _ in $(seq 600); do
                grep -q "openenvd ready" "$WORK/$name.out" 2>/dev/null && return 0
                if ! kill -0 "${pids[-1]}" 2>/dev/null; then
                        echo "openenvd ($name) exited:" >&2
                        tail -20 "$WORK/$name.log" >&2
                        exit 1
                fi
                sleep 0.05
        done
        echo "openenvd ($name) not ready" >&2
        exit 1
}
PORT_SB=$(free_port)
start_daemon standby "$PORT_SB"
PORT_COLD=$(free_port)
start_daemon cold "$PORT_COLD" --no-standby

mkdir -m 0700 "$WORK/host"
if ! PYTHONPATH="$WORK:$REAL/src:$UNIT/pylib" "$PY" "$SRC/bench-coding.py" "$REPS" "$token" \
        standby="$PORT_SB" cold="$PORT_COLD" --install "$UNIT" --host "$WORK/host" \
        --idle "${BENCH_CODING_IDLE:-0.5}" --block "${BENCH_CODING_BLOCK:-5}" \
        --log standby="$WORK/standby.log" --log cold="$WORK/cold.log" > "$WORK/results.json"; then
        for n in standby cold; do
                echo "== openenvd ($n) log, last 20 lines" >&2
                tail -20 "$WORK/$n.log" >&2
        done
        exit 1
fi
"$PY" "$SRC/bench-coding.py" report "$WORK/results.json"
