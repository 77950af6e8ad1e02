#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The fleet benchmark (bench/README.md, "bench/fleet"): tools/fleet.py with N
# units of OpenEnv's connect4_env for each N given, one after the other, then
# one table. As root; needs ../shared/openenv-real (or OPENENV_REAL=DIR) and
# python3-numpy.
#
#   sudo bench/fleet/run.sh [BUILD_DIR] [N...]        (default: build, 1 2 4 8)
#
# BENCH_FLEET_EPISODES: episodes per unit (default 5). The reports are kept in
# BENCH_FLEET_OUT (default: a new /var/tmp/openenvd-bench-fleet.* dir, printed).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
shift || true
units=("$@")
[ ${#units[@]} -gt 0 ] || units=(1 2 4 8)
episodes=${BENCH_FLEET_EPISODES:-5}
REAL=${OPENENV_REAL:-$(cd .. && pwd)/shared/openenv-real}

if [ "$(id -u)" != 0 ]; then
        echo "bench/fleet: needs root" >&2
        exit 1
fi
if [ ! -f "$REAL/pylib.tar.xz" ] || [ ! -d "$REAL/envs/connect4_env" ]; then
        echo "bench/fleet: unavailable: no OpenEnv snapshot at $REAL (set OPENENV_REAL)"
        exit 0
fi
out=${BENCH_FLEET_OUT:-$(mktemp -d /var/tmp/openenvd-bench-fleet.XXXXXX)}
mkdir -p "$out"

[ -f "$BUILD/build.ninja" ] || meson setup "$BUILD" >/dev/null
ninja -C "$BUILD" src/daemon/openenvd src/sandbox/shim/openenvd-shim >/dev/null

# One byte-compiled library tree for every run (an image ships its bytecode),
# shared with bench/openenv.
lib=$(bench/openenv/cache.sh "$REAL")

# Every N runs, whatever the one before did; a check that failed (or a
# driver that could not run) makes the whole run fail at the end.
failed=()
for n in "${units[@]}"; do
        echo "== $n units x $episodes episodes"
        tools/fleet.py --build "$BUILD" --units "$n" --episodes "$episodes" \
                --openenv-real "$REAL" --pylib "$lib/pylib" --json "$out/fleet-$n.json" ||
                failed+=("$n")
done
/usr/bin/python3 - "$out" "${units[@]}" <<'PY'
import json, os, statistics, sys
out, ns = sys.argv[1], sys.argv[2:]
print("\n%6s %8s %10s %11s %9s %9s %8s %9s %8s %6s" % (
    "units", "start s", "episodes", "episodes/s", "RSS MB", "unit MB", "fds",
    "CPU s/ep", "reset s", "checks"))
for n in ns:
    try:
        r = json.load(open(os.path.join(out, "fleet-%s.json" % n)))
    except OSError:
        print("%6s  (no report)" % n)
        continue
    pu = list((r.get("per_unit") or {}).values())
    rest = list((r.get("rest") or {}).values())
    mean = lambda xs: statistics.mean(xs) if xs else float("nan")
    ok = sum(c["ok"] for c in r["checks"])
    print("%6s %8.1f %10s %11.3f %9.1f %9.1f %8.0f %9.2f %8.3f %3d/%d" % (
        n, r.get("start_s", float("nan")), r.get("episodes", "-"),
        r.get("episodes_per_s") or float("nan"),
        mean([x["rss_kb"] / 1024 for x in rest]),
        mean([x["subtree_bytes"] / 2**20 for x in rest if x["subtree_bytes"]]),
        mean([x["fds_max"] for x in pu]),
        mean([x["cpu_per_episode_s"] for x in pu]),
        mean([x["reset_s_p50"] for x in pu if x["reset_s_p50"] is not None]),
        ok, len(r["checks"])))
print("\nreports: %s" % out)
PY
if [ ${#failed[@]} -gt 0 ]; then
        echo "bench/fleet: checks failed at N = ${failed[*]}"
        exit 1
fi
