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
# Each N runs twice, templates off (`template: false` in every unit's manifest:
# each episode's env server a new interpreter, the standby path before issue 27)
# then on (the default: forked from the unit's warm template), so the table
# holds before and after from one run; BENCH_FLEET_TEMPLATE="off on" (default)
# picks which.
# BENCH_FLEET_EPISODES: episodes per unit (default 5). The reports are kept in
# BENCH_FLEET_OUT (default: a new /var/tmp/openenvd-bench-fleet.* dir, printed).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
shift || true
units=("$@")
[ ${#units[@]} -gt 0 ] || units=(1 2 4 8)
episodes=${BENCH_FLEET_EPISODES:-5}
read -r -a modes <<< "${BENCH_FLEET_TEMPLATE:-off on}"
source bench/fleet/prepare.sh fleet

# Every N runs, whatever the one before did; a check that failed (or a
# driver that could not run) makes the whole run fail at the end.
failed=()
runs=()
for n in "${units[@]}"; do
        for mode in "${modes[@]}"; do
                flag=()
                [ "$mode" = off ] && flag=(--no-template)
                echo "== $n units x $episodes episodes, templates $mode ($(date -u +%T), load $(cut -d' ' -f1 /proc/loadavg))"
                tools/fleet.py --build "$BUILD" --units "$n" --episodes "$episodes" "${flag[@]}" \
                        --openenv-real "$REAL" --pylib "$lib/pylib" \
                        --json "$out/fleet-$n-$mode.json" || failed+=("$n/$mode")
                runs+=("$n-$mode")
        done
done
/usr/bin/python3 - "$out" "${runs[@]}" <<'PY'
import json, os, statistics, sys
out, ns = sys.argv[1], sys.argv[2:]
nan = float("nan")
mean = lambda xs: statistics.mean(xs) if xs else nan
print("\n%9s %7s %8s %10s %6s %7s %7s %4s %8s %9s %6s %7s %8s %6s %6s" % (
    "units", "start s", "episodes", "episodes/s", "cores", "RSS MB", "unit MB", "fds",
    "CPU s/ep", "daemon ms", "waited", "wait s", "standby", "load", "checks") + "  starts t/c")
for n in ns:
    try:
        r = json.load(open(os.path.join(out, "fleet-%s.json" % n)))
    except OSError:
        print("%9s  (no report)" % n)
        continue
    pu = list((r.get("per_unit") or {}).values())
    rest = list((r.get("rest") or {}).values())
    # New episodes by source over all units: how many resets waited for a
    # standby still provisioning, and how long on average.
    src = {}
    for u in pu:
        for k, v in (u.get("resets") or {}).items():
            s = src.setdefault(k, [0, 0.0])
            s[0] += v["n"]
            s[1] += v["n"] * (v["mean_s"] or 0)
    total = sum(v[0] for v in src.values())
    waited = src.get("standby_provisioning", [0, 0.0])
    ready = src.get("standby", [0, 0.0])
    starts = [sum((u.get("env_starts") or {}).get(p, 0) for u in pu) for p in ("template", "cold")]
    print("%9s %7.1f %8s %10.3f %6.2f %7.1f %7.1f %4.0f %8.2f %9.1f %5.0f%% %7.2f %6.0fus %6.1f %3d/%d" % (
        n, r.get("start_s", nan), r.get("episodes", "-"), r.get("episodes_per_s") or nan,
        r.get("cores_used") or nan,
        mean([x["rss_kb"] / 1024 for x in rest]),
        mean([x["subtree_bytes"] / 2**20 for x in rest if x["subtree_bytes"]]),
        mean([x["fds_max"] for x in pu]),
        mean([x["cpu_per_episode_s"] for x in pu]),
        1000 * mean([x["daemon_cpu_per_episode_s"] for x in pu]),
        100.0 * waited[0] / total if total else nan,
        waited[1] / waited[0] if waited[0] else nan,
        1e6 * ready[1] / ready[0] if ready[0] else nan,
        r.get("loadavg_before", nan),
        sum(c["ok"] for c in r["checks"]), len(r["checks"])) + "  %d/%d" % tuple(starts))
print("""
units: N-off (template: false in every manifest) or N-on (the default, templates).
start: all daemons launched -> every unit at rest (live episode and standby ready).
cores: the units' CPU (daemons and containers) / the time between the two scrapes.
RSS, unit MB: the daemon's RSS and the unit's subtree memory at rest, mean per unit.
CPU s/ep: the unit's subtree CPU per episode (daemon and containers); daemon ms: the
daemon's own. waited: new episodes whose reset waited for a standby still
provisioning, and that wait's mean (daemon side); standby: the mean reset -> ready
from a ready standby. load: the load average before the drive. starts t/c: env
servers started during the drive, forked from a template / cold (all units).""")
print("\nreports: %s" % out)
PY
if [ ${#failed[@]} -gt 0 ]; then
        echo "bench/fleet: checks failed at N/templates = ${failed[*]}"
        exit 1
fi
