#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# One command for the benchmark suites (bench/README.md):
#
#   sudo bench/run.sh [relay|unit|launch|openenv|coding|template|fleet|attacks|all] [BUILD_DIR]   (default: all build)
#
# relay: bench-relay (no root needed); unit: bench/unit/run.sh; launch:
# bench/launch/run.sh; openenv: bench/openenv/run.sh; coding:
# bench/coding/run.sh (grading time of examples/coding, issue 26); template:
# bench/template/run.sh (cold vs forked-from-template episodes, issue 27); fleet:
# bench/fleet/run.sh (these four need ../shared/openenv-real, all but coding
# python3-numpy too;
# they say "unavailable" without the snapshot); attacks:
# bench/attacks/liveness.py (answers while attacked).
# Every suite prints its rows with the target and met/MISSED. The machine's
# load is printed before and after each suite: wall-clock numbers from a
# loaded machine are not comparable (bench/README.md, "Method").
# Extra arguments: BENCH_RELAY_ARGS, BENCH_UNIT_REPS (50), BENCH_LAUNCH_RUNS
# (100), BENCH_OPENENV_REPS (20), BENCH_CODING_REPS (20),
# BENCH_TEMPLATE_REPS (10), BENCH_FLEET_UNITS ("1 2 4 8"),
# BENCH_FLEET_EPISODES (5), BENCH_ATTACK_SECONDS (15).
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
BUILD=${2:-build}
case "$what" in relay | unit | launch | openenv | coding | template | fleet | attacks | all) ;; *)
        echo "usage: bench/run.sh [relay|unit|launch|openenv|coding|template|fleet|attacks|all] [BUILD_DIR]" >&2
        exit 2
        ;;
esac
[ -f "$BUILD/build.ninja" ] || meson setup "$BUILD" >/dev/null
ninja -C "$BUILD" bench/relay/bench-relay bench/relay/bench-upstream bench/unit/bench-observer \
        bench/launch/bench-launch bench/launch/bench-launch-client \
        src/daemon/openenvd src/sandbox/shim/openenvd-shim src/cli/openenvctl >/dev/null
load() { echo "# $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"; }
want() { [ "$what" = "$1" ] || [ "$what" = all ]; }
failed=()
# One suite; a failing one is reported and the others still run.
suite() { # NAME COMMAND...
        local name=$1
        shift
        load
        echo "== bench/$name: $*"
        "$@" || { echo "== bench/$name: FAILED (exit $?)"; failed+=("$name"); }
}
# shellcheck disable=SC2086 # word splitting of the extra arguments is wanted
want relay && suite relay "$BUILD/bench/relay/bench-relay" ${BENCH_RELAY_ARGS:-}
want unit && suite unit bench/unit/run.sh "$BUILD" "${BENCH_UNIT_REPS:-50}"
want launch && suite launch bench/launch/run.sh "$BUILD" "${BENCH_LAUNCH_RUNS:-100}"
want openenv && suite openenv bench/openenv/run.sh "$BUILD" "${BENCH_OPENENV_REPS:-20}"
want coding && suite coding bench/coding/run.sh "$BUILD" "${BENCH_CODING_REPS:-20}"
want template && suite template bench/template/run.sh "${BENCH_TEMPLATE_REPS:-10}"
# shellcheck disable=SC2086 # the list of unit counts is split on purpose
want fleet && suite fleet bench/fleet/run.sh "$BUILD" ${BENCH_FLEET_UNITS:-1 2 4 8}
want attacks && suite attacks /usr/bin/python3 bench/attacks/liveness.py "$BUILD" \
        "${BENCH_ATTACK_SECONDS:-15}"
load
if [ ${#failed[@]} -gt 0 ]; then
        echo "failed: ${failed[*]}"
        exit 1
fi
