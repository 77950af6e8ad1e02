#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Lint as TAP: clang-format (house style, .clang-format) and clang-tidy
# (.clang-tidy, with the build's compile_commands.json) over every C file.
# Usage: scripts/lint.sh BUILDDIR
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: lint.sh BUILDDIR}

mapfile -t files < <(git ls-files 'src/*.c' 'src/*.h' 'tests/*.c' 'tests/*.h' 'bench/*.c' 2>/dev/null || find src tests bench -name '*.[ch]')
mapfile -t tidy < <(printf '%s\n' "${files[@]}" | grep '^src/.*\.c$')

echo "TAP version 13"
echo "1..$(( ${#files[@]} + ${#tidy[@]} ))"
n=0
for f in "${files[@]}"; do
        n=$((n + 1))
        if out=$(clang-format --dry-run -Werror "$f" 2>&1); then
                echo "ok $n - clang-format $f"
        else
                echo "not ok $n - clang-format $f"
                echo "$out" | head -5 | sed 's/^/# /'
        fi
done
# clang-tidy is slow: run two at a time, report in file order.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%s\n' "${tidy[@]}" | xargs -P 2 -I{} sh -c \
        'clang-tidy -p "$1" --quiet "$2" > "$3/$(echo "$2" | tr / _).log" 2>&1; echo $? > "$3/$(echo "$2" | tr / _).rc"' \
        _ "$build" {} "$tmp"
for f in "${tidy[@]}"; do
        n=$((n + 1))
        key=$(echo "$f" | tr / _)
        if [ "$(cat "$tmp/$key.rc")" = 0 ]; then
                echo "ok $n - clang-tidy $f"
        else
                echo "not ok $n - clang-tidy $f"
                grep -E 'error:' "$tmp/$key.log" | head -5 | sed 's/^/# /'
        fi
done
exit 0
