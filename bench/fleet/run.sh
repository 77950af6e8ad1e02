#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The fleet benchmark (bench/README.md, "bench/fleet"): tools/fleet.py with N
# units of OpenEnv's connect4_env for each N given, one after the other, then
# one table. As root; needs ../shared/openenv-real and python3-numpy.
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
openenv_real=$(cd .. && pwd)/shared/openenv-real
out=${BENCH_FLEET_OUT:-$(mktemp -d /var/tmp/openenvd-bench-fleet.XXXXXX)}
mkdir -p "$out"

[ -f "$BUILD/build.ninja" ] || meson setup "$BUILD" >/dev/null
ninja -C "$BUILD" src/daemon/openenvd src/sandbox/shim/openenvd-shim >/dev/null

# One library tree for every run, compiled once (an image ships its
# bytecode), readable by the containers' uids, outside /tmp.
lib=$(mktemp -d /var/tmp/openenvd-bench-fleet-lib.XXXXXX)
trap 'rm -rf "$lib"' EXIT
tar -xJf "$openenv_real/pylib.tar.xz" -C "$lib"
/usr/bin/python3 -m compileall -q -j 0 "$lib/pylib" >/dev/null || true
chmod -R a+rX "$lib"
chmod 755 "$lib"

for n in "${units[@]}"; do
        echo "== $n units x $episodes episodes"
        tools/fleet.py --build "$BUILD" --units "$n" --episodes "$episodes" \
                --pylib "$lib/pylib" --json "$out/fleet-$n.json" || true
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
