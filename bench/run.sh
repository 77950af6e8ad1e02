#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# One command for the benchmark suites (bench/README.md):
#
#   sudo bench/run.sh [relay|unit|attacks|all] [BUILD_DIR]      (default: all build)
#
# relay: bench-relay (no root needed); unit: bench/unit/run.sh (root);
# attacks: bench/attacks/liveness.py (root).
# bench/launch/ has its own runner (bench/launch/run.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
BUILD=${2:-build}
case "$what" in relay | unit | attacks | all) ;; *)
        echo "usage: bench/run.sh [relay|unit|attacks|all] [BUILD_DIR]" >&2
        exit 2
        ;;
esac
[ -f "$BUILD/build.ninja" ] || meson setup "$BUILD" >/dev/null
ninja -C "$BUILD" bench/relay/bench-relay bench/relay/bench-upstream bench/unit/bench-observer \
        src/daemon/openenvd src/sandbox/shim/openenvd-shim src/cli/openenvctl >/dev/null
if [ "$what" = relay ] || [ "$what" = all ]; then
        echo "== bench/relay: $BUILD/bench/relay/bench-relay ${BENCH_RELAY_ARGS:-}"
        # shellcheck disable=SC2086 # word splitting of the extra arguments is wanted
        "$BUILD/bench/relay/bench-relay" ${BENCH_RELAY_ARGS:-}
fi
if [ "$what" = unit ] || [ "$what" = all ]; then
        echo "== bench/unit: bench/unit/run.sh $BUILD ${BENCH_UNIT_REPS:-50}"
        bench/unit/run.sh "$BUILD" "${BENCH_UNIT_REPS:-50}"
fi
if [ "$what" = attacks ] || [ "$what" = all ]; then
        echo "== bench/attacks: bench/attacks/liveness.py $BUILD ${BENCH_ATTACK_SECONDS:-15}"
        /usr/bin/python3 bench/attacks/liveness.py "$BUILD" "${BENCH_ATTACK_SECONDS:-15}"
fi
