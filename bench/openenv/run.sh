#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# OpenEnv's real connect4_env (issue 12): POST /reset_unit -> ready with a
# standby episode vs cold (--no-standby) vs the env server started directly,
# the relay's added latency on POST /step, and episodes/s of the
# back-to-back loop; one run, interleaved (bench/README.md, bench/openenv).
#
#   sudo bench/openenv/run.sh [BUILD_DIR] [REPS]       (default build 20)
#
# Needs ../shared/openenv-real/ next to the repository (or OPENENV_REAL=DIR)
# and python3-numpy. Its pylib.tar.xz is unpacked once into a cache dir
# (cache.sh: OPENENVD_BENCH_CACHE, default /var/cache/openenvd-bench), keyed
# by the tarball's hash; nothing of it enters the repository.
set -euo pipefail

BUILD=$(realpath "${1:-build}")
REPS=${2:-20}
SRC=$(cd "$(dirname "$0")" && pwd)
REAL=${OPENENV_REAL:-$SRC/../../../shared/openenv-real}
PY=/usr/bin/python3
OPENENVD="$BUILD/src/daemon/openenvd"

if [ "$(id -u)" != 0 ]; then
        echo "run.sh: needs root" >&2
        exit 1
fi
if [ ! -f "$REAL/pylib.tar.xz" ] || [ ! -d "$REAL/envs/connect4_env" ]; then
        echo "bench/openenv: unavailable: no OpenEnv snapshot at $REAL (set OPENENV_REAL)"
        exit 0
fi
if ! "$PY" -c 'import numpy' 2>/dev/null; then
        echo "bench/openenv: connect4_env needs numpy: apt-get install python3-numpy" >&2
        exit 1
fi
[ -x "$OPENENVD" ] || { echo "run.sh: $OPENENVD not built" >&2; exit 1; }

DIR=$("$SRC/cache.sh" "$REAL")
ENV_DIR="$DIR/connect4_env"
PYLIB="$DIR/pylib"

WORK=$(mktemp -d /tmp/openenvd-bench-openenv.XXXXXX)
chmod 0711 "$WORK"
pids=()
cleanup() {
        for p in "${pids[@]}"; do
                kill -TERM "$p" 2>/dev/null && wait "$p" 2>/dev/null || true
        done
        rm -rf "$WORK"
}
trap cleanup EXIT

sed -e "s|@ENV_DIR@|$ENV_DIR|g" -e "s|@PYLIB@|$PYLIB|g" "$SRC/openenv.yaml" > "$WORK/openenv.yaml"
token=bench-$RANDOM$RANDOM
printf '%s\n' "$token" > "$WORK/token"
free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

start_daemon() { # NAME PORT [OPTIONS]
        local name=$1 port=$2
        shift 2
        "$OPENENVD" --manifest "$WORK/openenv.yaml" --state "$WORK/state-$name" --port "$port" \
                --listen 127.0.0.1 --token-file "$WORK/token" --require-isolation \
                --no-initial-episode "$@" > "$WORK/$name.out" 2> "$WORK/$name.log" &
        pids+=($!)
        for _ in $(seq 400); do
                grep -q "openenvd ready" "$WORK/$name.out" 2>/dev/null && return 0
                if ! kill -0 "${pids[-1]}" 2>/dev/null; then
                        echo "openenvd ($name) exited:" >&2
                        cat "$WORK/$name.log" >&2
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

if ! "$PY" "$SRC/bench-openenv.py" "$REPS" "$token" standby="$PORT_SB" cold="$PORT_COLD" \
        "$ENV_DIR" "$PYLIB"; then
        for n in standby cold; do
                echo "== openenvd ($n) log, last 20 lines" >&2
                tail -20 "$WORK/$n.log" >&2
        done
        exit 1
fi
