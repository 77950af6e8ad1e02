#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Issue 28 item 5 (bench/README.md, "Issue 28: 16 sessions on one unit vs 16
# units"): B trainers' clients, each a stock OpenEnv client (Connect4Env, one
# WebSocket) driving K episodes back to back, against
#
#   units:    B units of connect4_env, one client each (tools/fleet.py --units B;
#             each unit the manifest's default standby: 1), and
#   sessions: ONE unit whose manifest says `episodes: {concurrent: B}` and
#             `standby: S`, B sessions at once (tools/fleet.py --units 1
#             --sessions B --standby S),
#
# same machine, same run, one after the other, then one table with ratios. As
# root; needs ../shared/openenv-real (or OPENENV_REAL=DIR) and python3-numpy.
#
#   sudo bench/fleet/sessions.sh [BUILD_DIR] [B]         (default: build, 16)
#
# BENCH_FLEET_EPISODES: K, episodes per client (default 10).
# BENCH_FLEET_STANDBY: S, the sessions unit's pool (default 2; a list, such as
#   "2 8", runs one sessions configuration per value).
# BENCH_FLEET_ROUNDS: how many times the whole comparison runs, the order
#   mirrored every other round (units first, then sessions first; default 1).
# BENCH_FLEET_PAUSE: seconds to wait between two configurations, so the one
#   before (its units' teardown) does not run into the next (default 30).
# Every configuration also holds one live episode per client after its drive
# (tools/fleet.py --hold) to measure that memory. The reports are kept in
# BENCH_FLEET_OUT (default: a new /var/tmp/openenvd-bench-sessions.* dir).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
B=${2:-16}
episodes=${BENCH_FLEET_EPISODES:-10}
read -r -a standbys <<< "${BENCH_FLEET_STANDBY:-2}"
rounds=${BENCH_FLEET_ROUNDS:-1}
pause=${BENCH_FLEET_PAUSE:-30}
source bench/fleet/prepare.sh sessions

configs=("units")
for s in "${standbys[@]}"; do configs+=("sessions-s$s"); done
failed=()
runs=()
first=1
for r in $(seq 1 "$rounds"); do
        order=("${configs[@]}")
        if [ $((r % 2)) = 0 ]; then
                # Mirrored: whatever ran last runs first.
                order=()
                for ((i = ${#configs[@]} - 1; i >= 0; i--)); do order+=("${configs[$i]}"); done
        fi
        for c in "${order[@]}"; do
                [ "$first" = 1 ] || sleep "$pause"
                first=0
                case "$c" in
                units) args=(--units "$B") ;;
                sessions-s*) args=(--units 1 --sessions "$B" --standby "${c#sessions-s}") ;;
                esac
                name="$c-r$r"
                echo "== $name: ${args[*]} x $episodes episodes ($(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg))"
                tools/fleet.py --build "$BUILD" "${args[@]}" --episodes "$episodes" --hold \
                        --sample-interval 0.25 --openenv-real "$REAL" --pylib "$lib/pylib" \
                        --json "$out/$name.json" || failed+=("$name")
                runs+=("$name")
        done
done
echo "== done ($(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg))"

/usr/bin/python3 - "$out" "$B" "${runs[@]}" <<'PY'
import json, os, statistics, sys
out, B, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
nan = float("nan")


def load(name):
    try:
        return json.load(open(os.path.join(out, name + ".json")))
    except (OSError, ValueError):
        return None


def total(rest, key):
    return sum(x[key] or 0 for x in (rest or {}).values())


def row(r):
    """The figures of one run (None where the run did not get there)."""
    pu = list((r.get("per_unit") or {}).values())
    eps = r.get("episodes") or 0
    src = {}
    for u in pu:
        for k, v in (u.get("resets") or {}).items():
            s = src.setdefault(k, 0)
            src[k] = s + v["n"]
    waited = src.get("standby_provisioning", 0)
    n_src = sum(src.values())
    unit_cpu = sum(u["cpu_per_episode_s"] * u["episodes"] for u in pu)
    daemon_cpu = sum(u["daemon_cpu_per_episode_s"] * u["episodes"] for u in pu)
    rs = r.get("reset_s") or {}
    held = r.get("held")
    pm = r.get("held_private_mb") or {}
    cpe = unit_cpu / eps if eps else nan
    dpe = (r.get("driver_cpu_s") or 0) / eps if eps else nan
    return {
        "episodes": eps,
        "eps": r.get("episodes_per_s") or nan,
        "eps_c": r.get("episodes_per_s_with_connect") or nan,
        "cores": r.get("cores_used") or nan,
        "cpu_ep": cpe,
        "daemon_ms": 1e3 * daemon_cpu / eps if eps else nan,
        "driver_ms": 1e3 * dpe,
        # What the CPUs allow: every episode costs its units' CPU and the
        # driver's (both on this machine).
        "ceiling": (r.get("cpus") or 2) / (cpe + dpe) if eps else nan,
        "p50": 1e3 * (rs.get("p50") or nan),
        "p99": 1e3 * (rs.get("p99") or nan),
        "waited": 100.0 * waited / n_src if n_src else nan,
        "starts": sum((u.get("env_starts") or {}).get("template", 0) for u in pu),
        "cold": sum((u.get("env_starts") or {}).get("cold", 0) for u in pu),
        "rest_rss": total(r.get("rest"), "rss_kb") / 1024,
        "rest_sub": total(r.get("rest"), "subtree_bytes") / 2**20,
        "rest_drop": r.get("mem_available_drop_mb", nan),
        "held_rss": total(held, "rss_kb") / 1024 if held else nan,
        "held_sub": total(held, "subtree_bytes") / 2**20 if held else nan,
        "held_drop": r.get("mem_available_drop_held_mb", nan),
        "peak_sub": (r.get("drive_peak") or {}).get("subtree_mb", nan),
        "uss_ep": statistics.mean(pm["episodes"]) if pm.get("episodes") else nan,
        "pss_tmpl": statistics.mean(pm["templates"]) if pm.get("templates") else nan,
        "pss": pm.get("pss", nan),
        "n_eps": len(pm.get("episodes") or []),
        "per_client": (total(held, "rss_kb") / 1024 + total(held, "subtree_bytes") / 2**20) / B
        if held else nan,
        "load": r.get("loadavg_before", nan),
        "checks": "%d/%d" % (sum(c["ok"] for c in r["checks"]), len(r["checks"])),
    }


rows = []
for n in names:
    r = load(n)
    rows.append((n, row(r) if r else None))

# The figures a ratio (sessions ÷ units, same round) is printed for.
RATIO = {"eps", "eps_c", "cores", "cpu_ep", "daemon_ms", "driver_ms", "ceiling", "p50", "p99",
         "rest_rss", "rest_sub", "rest_drop", "held_rss", "held_sub", "held_drop", "peak_sub",
         "per_client", "pss", "uss_ep", "pss_tmpl"}
T1 = [("episodes", "%8d", "episodes"), ("eps", "%10.2f", "episodes/s"),
      ("eps_c", "%9.2f", "w/ connect"), ("cores", "%6.2f", "cores"),
      ("cpu_ep", "%9.3f", "CPU s/ep"), ("daemon_ms", "%9.1f", "daemon ms"),
      ("driver_ms", "%9.1f", "driver ms"), ("ceiling", "%8.1f", "ceiling"),
      ("p50", "%9.1f", "reset p50"), ("p99", "%9.1f", "reset p99"),
      ("waited", "%6.0f%%", "waited"), ("starts", "%7d", "starts"),
      ("load", "%6.1f", "load"), ("checks", "%7s", "checks")]
T2 = [("rest_rss", "%8.1f", "rest RSS"), ("rest_sub", "%10.1f", "rest unit"),
      ("rest_drop", "%9.0f", "rest drop"),
      ("held_rss", "%8.1f", "held RSS"), ("held_sub", "%10.1f", "held unit"),
      ("held_drop", "%9.0f", "held drop"), ("per_client", "%8.1f", "held/client"),
      ("peak_sub", "%10.1f", "drive peak"), ("pss", "%8.1f", "held PSS"),
      ("uss_ep", "%8.1f", "USS/ep"), ("n_eps", "%6d", "eps"), ("pss_tmpl", "%8.1f", "PSS/tmpl")]


def table(cols, title):
    w = max(len(n) for n, _ in rows) + 2
    print("\n" + title)
    print("%-*s" % (w, "run") + " ".join("%*s" % (max(len(h), 8), h) for _, f, h in cols))
    def cells(v):
        out = []
        for k, f, h in cols:
            x = v.get(k) if v else None
            width = max(len(h), 8)
            if x is None:
                out.append("%*s" % (width, "-"))
            else:
                out.append("%*s" % (width, (f % x).strip()))
        return " ".join(out)
    for n, v in rows:
        print("%-*s" % (w, n) + cells(v))
    # Ratios: every sessions run over the units run of the same round.
    for n, v in rows:
        if not v or not n.startswith("sessions"):
            continue
        base = dict(rows).get("units-" + n.rsplit("-", 1)[1])
        if not base:
            continue
        rat = {}
        for k, f, h in cols:
            a, b = v.get(k), base.get(k)
            if k in RATIO and isinstance(a, (int, float)) and isinstance(b, (int, float)) and b:
                rat[k] = a / b
        print("%-*s" % (w, "  %s ÷ units" % n[len("sessions-"):]) + " ".join(
            "%*s" % (max(len(h), 8), ("%.2fx" % rat[k]) if k in rat else "")
            for k, f, h in cols))


table(T1, "throughput and resets (%d clients)" % B)
table(T2, "memory, MB (all units together)")
print("""
units: %d units, one client each, standby 1 each; sessions-sS: one unit with
episodes.concurrent %d and standby S, %d sessions at once; -rN: the round;
"sS-rN ÷ units": that sessions run's figure over the units run's of its round.
episodes/s: all episodes / the drive's wall time (w/ connect: with the clients'
connecting, outside the drive). cores: the units' CPU (daemons and containers)
/ the time between the two scrapes around the drive. CPU s/ep: the units' CPU
per episode (daemon ms: the daemons' own); driver ms: this driver's CPU (all
clients, the sampler) per episode; ceiling: episodes/s the CPUs allow at CPU
s/ep + driver ms. reset p50/p99: the stock client's reset(), every episode of
every client. waited: new episodes whose reset waited for one still
provisioning; starts: env servers forked from a template during the window.
rest: every unit at rest before the drive (units: a live episode and a standby
each; sessions: one live episode and the pool); held: after the drive, every
client holding a fresh live episode, the pools full again; RSS: the daemons',
unit: the cgroup subtrees' memory (daemons and containers), drop: MemAvailable
below the start's; drive peak: the subtrees' most during the drive (sampled
every 0.25 s); held/client: held RSS + unit over the %d clients. held PSS: the
proportional memory (Pss) of every process of every unit while holding
(daemons, templates, episodes: the processes' own, without the page cache and
the kernel's that "unit" also counts). The floor per episode: USS/ep, the
private memory of one episode's processes (env server and shim) while holding,
the mean over eps episodes (live and standby); PSS/tmpl: a template's share.""" % (B, B, B, B))
print("\nreports: %s" % out)
PY
if [ ${#failed[@]} -gt 0 ]; then
        echo "bench/fleet: checks failed in ${failed[*]}"
        exit 1
fi
