#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The unit's own cost (issues 5 and 12): POST /reset_unit -> ready, and
# done -> verdict, for the four-container bench unit (bench/unit/openenv.yaml)
# under the native launcher with a standby episode, without one, and, in the
# same run, under runc without one (the OCI path).
#
#   sudo bench/unit/run.sh [BUILD_DIR] [REPS]
#
# Three openenvd daemons run side by side on 127.0.0.1 (each with its own
# 0711 state dir, its own cgroup subtree): "native" (the manifest as is,
# runtime.oci: native everywhere, standby on), "cold" (the same with
# --no-standby) and "runc" (a copy in which every zone says
# `runtime: {oci: runc}`, --no-standby). bench-unit.py alternates between
# them every iteration and waits BENCH_UNIT_IDLE seconds (default 0.5)
# before each reset. The observers' own run time (bench-observer on the host, no
# container) is measured with hyperfine in the same run and subtracted from
# done -> verdict to give the daemon's overhead.
set -euo pipefail

BUILD=$(realpath "${1:-build}")
REPS=${2:-50}
SRC=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
INSTALL=/opt/openenvd-bench-unit
OPENENVD="$BUILD/src/daemon/openenvd"
UPSTREAM="$BUILD/bench/relay/bench-upstream"
OBSERVER="$BUILD/bench/unit/bench-observer"

if [ "$(id -u)" != 0 ]; then
        echo "run.sh: needs root" >&2
        exit 1
fi
for f in "$OPENENVD" "$UPSTREAM" "$OBSERVER"; do
        [ -x "$f" ] || { echo "run.sh: $f not built" >&2; exit 1; }
done
if [ -e "$INSTALL" ]; then
        echo "run.sh: $INSTALL exists (another run?); remove it first" >&2
        exit 1
fi

WORK=$(mktemp -d /tmp/openenvd-bench-unit.XXXXXX)
chmod 0711 "$WORK" # containers resolve mount sources below it from their user namespaces
pids=()
cleanup() {
        for p in "${pids[@]}"; do
                kill -TERM "$p" 2>/dev/null && wait "$p" 2>/dev/null || true
        done
        if [ -n "${BENCH_UNIT_KEEP_LOGS:-}" ]; then
                cp "$WORK"/*.log "$BENCH_UNIT_KEEP_LOGS"/ 2>/dev/null || true
        fi
        rm -rf "$INSTALL" "$WORK"
}
trap cleanup EXIT

# The containers' image: static binaries and the mount points the launchers
# need (runc cannot create them in a read-only root).
R="$INSTALL/rootfs"
mkdir -p "$R/bin" "$R/etc" "$R/proc" "$R/dev" "$R/sys" "$R/tmp" "$R/run/openenvd" \
        "$R/workspace" "$R/out" "$R/inputs/runner" "$R/assets" "$R/services" "$R/var/tmp"
: > "$R/etc/hosts"
cp "$UPSTREAM" "$OBSERVER" "$R/bin/"
cp "$SRC/openenv.yaml" "$WORK/native.yaml"
sed 's/oci: native/oci: runc/' "$SRC/openenv.yaml" > "$WORK/runc.yaml"
grep -q 'oci: runc' "$WORK/runc.yaml"
token=bench-$RANDOM$RANDOM
printf '%s\n' "$token" > "$WORK/token"

start_daemon() { # NAME MANIFEST PORT [OPTIONS]
        local name=$1 manifest=$2 port=$3
        shift 3
        "$OPENENVD" --manifest "$WORK/$manifest.yaml" --state "$WORK/state-$name" --port "$port" \
                --listen 127.0.0.1 --token-file "$WORK/token" --require-isolation \
                --log-level debug "$@" > "$WORK/$name.out" 2> "$WORK/$name.log" &
        pids+=($!)
        for _ in $(seq 200); do
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
free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
PORT_NATIVE=${BENCH_UNIT_PORT:-$(free_port)}
PORT_COLD=$(free_port)
PORT_RUNC=$(free_port)
start_daemon native native "$PORT_NATIVE"
start_daemon cold native "$PORT_COLD" --no-standby
start_daemon runc runc "$PORT_RUNC" --no-standby

# The observers' own run time, outside any container.
mkdir -p "$WORK/obs-out"
hyperfine -N --warmup 20 --runs 300 --style none --export-json "$WORK/observer.json" \
        "$OBSERVER $WORK/obs-out" > /dev/null

if ! "$PY" "$SRC/bench-unit.py" --idle "${BENCH_UNIT_IDLE:-0.5}" "$REPS" "$token" \
        native="$PORT_NATIVE" cold="$PORT_COLD" runc="$PORT_RUNC" > "$WORK/results.jsonl"; then
        for n in native cold runc; do
                echo "== openenvd ($n) log, last 15 lines" >&2
                tail -15 "$WORK/$n.log" >&2
        done
        exit 1
fi

"$PY" - "$WORK/results.jsonl" "$WORK/observer.json" "$REPS" <<'EOF'
import json, sys
rows = {r["name"]: r for r in map(json.loads, open(sys.argv[1]))}
obs = json.load(open(sys.argv[2]))["results"][0]
obs_ms = obs["median"] * 1e3
n_obs = 2  # runner, then verdict
reps = int(sys.argv[3])
nat, cold, oci = rows["native"], rows["cold"], rows["runc"]
print(f"bench unit: env + 1 service + 2 observers, {reps} iterations each, alternating; "
      f"native = standby on, cold = --no-standby, runc = runc and --no-standby")
print(f"observer own run time (host, hyperfine median of {len(obs['times'])}): {obs_ms:.2f} ms each, x{n_obs} = {n_obs * obs_ms:.2f} ms")
print(f"{'metric':<40} {'native':>10} {'cold':>10} {'runc':>10} {'runc/native':>12}  target")
def line(label, key, stat, sub=0.0, target=None):
    a, c, b = nat[key][stat] - sub, cold[key][stat] - sub, oci[key][stat] - sub
    t = target(a, c, b) if target else ""
    print(f"{label:<40} {a:10.2f} {c:10.2f} {b:10.2f} {b / a:12.2f}  {t}")
ok = lambda c: "met" if c else "MISSED"
line("reset -> ready, median (ms)", "reset_ms", "median",
     target=lambda a, c, b: f"<= 5 ms: {ok(a <= 5)}; >= 10x runc: {ok(b / a >= 10)}; "
                            f"cold <= 15 ms: {ok(c <= 15)}")
line("reset -> ready, p90 (ms)", "reset_ms", "p90")
line("reset -> ready, min (ms)", "reset_ms", "min")
line("done -> verdict, median (ms)", "done_to_verdict_ms", "median")
line("done -> verdict, p90 (ms)", "done_to_verdict_ms", "p90")
line("  minus observers' run time, median", "done_to_verdict_ms", "median", n_obs * obs_ms,
     target=lambda a, c, b: f"<= 5 ms with and without a standby building: {ok(a <= 5 and c <= 5)}; "
                            f">= 5x faster than OCI: {ok(b / a >= 5)}")
line("  minus observers' run time, p90", "done_to_verdict_ms", "p90", n_obs * obs_ms)
print(f"(max GET /verdict polls per iteration: native {nat['max_verdict_polls']}, "
      f"cold {cold['max_verdict_polls']}, runc {oci['max_verdict_polls']})")
EOF
