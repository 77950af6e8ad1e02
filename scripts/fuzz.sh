#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Runs one libFuzzer target (or all) under ASan/UBSan for SECONDS each,
# starting from its committed corpus; new inputs go to a scratch corpus and
# crashes to build-fuzz/crashes/. Usage: scripts/fuzz.sh [TARGET|all] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-all}
seconds=${2:-60}

if [ ! -f build-fuzz/build.ninja ]; then
        CC=clang meson setup build-fuzz -Dfuzzing=true -Db_sanitize=address,undefined \
                -Db_lundef=false -Dtests=true >/dev/null
fi
ninja -C build-fuzz >/dev/null
mkdir -p build-fuzz/crashes build-fuzz/scratch
if [ "$target" = all ]; then
        mapfile -t targets < <(ls tests/fuzz/corpus)
else
        targets=("$target")
fi
for t in "${targets[@]}"; do
        bin=$(find build-fuzz/tests -type f -name "fuzz-$t" -perm -u+x | head -1)
        if [ -z "$bin" ]; then
                echo "fuzz.sh: no fuzzer for $t" >&2
                exit 1
        fi
        mkdir -p "build-fuzz/scratch/$t"
        echo "== $t: $seconds s"
        "$bin" -max_total_time="$seconds" -print_final_stats=1 \
                -artifact_prefix="build-fuzz/crashes/$t-" \
                "build-fuzz/scratch/$t" "tests/fuzz/corpus/$t" 2>&1 |
                grep -E '^(stat::number_of_executed_units|stat::peak_rss|==.*ERROR|SUMMARY)|Done [0-9]+ runs' || true
done
