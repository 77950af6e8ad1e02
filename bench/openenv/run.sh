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

# Two manifests: as is (fork-speed episodes from the unit's warm template,
# the default since issue 27) and with `template: false` under openenvd
# (today's standby and cold paths).
sed -e "s|@ENV_DIR@|$ENV_DIR|g" -e "s|@PYLIB@|$PYLIB|g" "$SRC/openenv.yaml" > "$WORK/openenv.yaml"
sed -e 's|^openenvd:$|openenvd:\n  template: false|' "$WORK/openenv.yaml" > "$WORK/openenv-notemplate.yaml"
# The template with a standby pool of two (issue 28's standby: K): the tight
# loop's reset takes a ready copy while the next one is made.
sed -e 's|^openenvd:$|openenvd:\n  standby: 2|' "$WORK/openenv.yaml" > "$WORK/openenv-pool.yaml"
grep -q '^  standby: 2$' "$WORK/openenv-pool.yaml" || {
        echo "run.sh: could not write standby: 2 into the manifest" >&2
        exit 1
}
grep -q '^  template: false$' "$WORK/openenv-notemplate.yaml" || {
        echo "run.sh: could not write template: false into the manifest" >&2
        exit 1
}
token=bench-$RANDOM$RANDOM
printf '%s\n' "$token" > "$WORK/token"
free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

start_daemon() { # NAME PORT MANIFEST [OPTIONS]
        local name=$1 port=$2 manifest=$3
        shift 3
        "$OPENENVD" --manifest "$manifest" --state "$WORK/state-$name" --port "$port" \
                --listen 127.0.0.1 --token-file "$WORK/token" --require-isolation \
                --log-format json --no-initial-episode "$@" > "$WORK/$name.out" 2> "$WORK/$name.log" &
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
PORT_TPL=$(free_port)
start_daemon template "$PORT_TPL" "$WORK/openenv.yaml"
PID_TPL=${pids[-1]}
PORT_POOL=$(free_port)
start_daemon pool "$PORT_POOL" "$WORK/openenv-pool.yaml"
PID_POOL=${pids[-1]}
PORT_SB=$(free_port)
start_daemon standby "$PORT_SB" "$WORK/openenv-notemplate.yaml"
PID_SB=${pids[-1]}
PORT_COLD=$(free_port)
start_daemon cold "$PORT_COLD" "$WORK/openenv-notemplate.yaml" --no-standby
PID_COLD=${pids[-1]}

status=0
"$PY" "$SRC/bench-openenv.py" "$REPS" "$token" template="$PORT_TPL:$PID_TPL" \
        pool="$PORT_POOL:$PID_POOL" standby="$PORT_SB:$PID_SB" cold="$PORT_COLD:$PID_COLD" \
        "$ENV_DIR" "$PYLIB" || status=1
# What the daemons logged at warning level or above (template discards,
# fork failures, cold fallbacks), whatever the outcome; and every line about
# the template. BENCH_OPENENV_LOGS=DIR keeps the logs there.
bad='"level":"(warning|err|crit|alert|emerg)"'
for n in template pool standby cold; do
        c=$(grep -Ec "$bad" "$WORK/$n.log" || true)
        t=$(grep -ci 'template' "$WORK/$n.log" || true)
        echo "openenvd ($n): $c log lines at warning or above, $t about the template"
        grep -E "$bad" "$WORK/$n.log" | cut -c1-300 | tail -5 || true
done
if [ -n "${BENCH_OPENENV_LOGS:-}" ]; then
        mkdir -p "$BENCH_OPENENV_LOGS"
        cp "$WORK"/*.log "$BENCH_OPENENV_LOGS"/
fi
if [ "$status" != 0 ]; then
        for n in template pool standby cold; do
                echo "== openenvd ($n) log, last 20 lines" >&2
                tail -20 "$WORK/$n.log" >&2
        done
        exit 1
fi
