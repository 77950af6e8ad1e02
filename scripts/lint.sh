#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Lint as TAP: the module order of every #include "module/..." in src/
# (against docs/ARCHITECTURE.md's dependency table), clang-format (house
# style, .clang-format) and clang-tidy (.clang-tidy, with the build's
# compile_commands.json) over every C file.
# Usage: scripts/lint.sh BUILDDIR [includes|format|tidy]...  (default: all)
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: lint.sh BUILDDIR [includes|format|tidy]...}
shift
checks=" ${*:-includes format tidy} "
wants() { [[ $checks == *" $1 "* ]]; }

files=()
tidy=()
if wants format || wants tidy; then
        mapfile -t files < <(git ls-files 'src/*.c' 'src/*.h' 'tests/*.c' 'tests/*.h' 'bench/*.c' 2>/dev/null || find src tests bench -name '*.[ch]')
        mapfile -t tidy < <(printf '%s\n' "${files[@]}" | grep '^src/.*\.c$')
        wants format || files=()
        wants tidy || tidy=()
fi

# The dependency table of docs/ARCHITECTURE.md ("| module | depends on |"),
# read from the document itself so that the map and this check cannot drift:
# one line per row, in the document's order, "module word word ...". Notes in
# parentheses are dropped; libraries stay as words, and only words that name
# a module (a row) count below.
module_table() {
        awk '
        /^\| module \| depends on \|/ { intable = 1; next }
        intable && /^\|---/ { next }
        intable && !/^\|/ { exit }
        intable {
                split($0, col, "|")
                m = col[2]; sub(/^[ \t]+/, "", m); sub(/[ \t(].*/, "", m)
                d = col[3]; gsub(/\([^)]*\)/, "", d); gsub(/,/, " ", d)
                print m " " d
        }' docs/ARCHITECTURE.md
}
rows=()
modules=()
declare -A deps=()
if wants includes; then
        mapfile -t rows < <(module_table)
        for row in "${rows[@]}"; do
                read -r m _ <<<"$row"
                modules+=("$m")
        done
fi
is_module() { [[ " ${modules[*]} " == *" $1 "* ]]; }

echo "TAP version 13"
if wants includes; then
        echo "1..$((1 + ${#rows[@]} + ${#files[@]} + ${#tidy[@]}))"
else
        echo "1..$((${#files[@]} + ${#tidy[@]}))"
fi
n=0

if wants includes; then
        # The table itself: every src/ directory has a row, every row is a
        # directory, and a module depends only on rows above it (the order
        # goes one way, so no circle can hide in the includes either).
        problems=()
        seen=" "
        for d in src/*/; do
                d=${d#src/}
                d=${d%/}
                is_module "$d" || problems+=("src/$d has no row in the table")
        done
        for row in "${rows[@]}"; do
                read -r m words <<<"$row"
                [ -d "src/$m" ] || problems+=("row '$m' is no directory of src/")
                deps[$m]=" $m "
                for w in $words; do
                        is_module "$w" || continue
                        [[ $seen == *" $w "* ]] || problems+=("$m depends on $w, which is not above it")
                        deps[$m]+="$w "
                done
                seen+="$m "
        done
        [ ${#rows[@]} -gt 0 ] || problems+=("no '| module | depends on |' table")
        n=$((n + 1))
        if [ ${#problems[@]} -eq 0 ]; then
                echo "ok $n - module table of docs/ARCHITECTURE.md: ${#rows[@]} modules, one way"
        else
                echo "not ok $n - module table of docs/ARCHITECTURE.md"
                printf '# %s\n' "${problems[@]}"
        fi
        # Each module's quoted includes with a directory: that directory must
        # be the module itself or one its row names. Whole src/<m> is read
        # (headers, sources, version.c.in; tracked or not).
        for m in "${modules[@]}"; do
                n=$((n + 1))
                bad=$(grep -rnE --include='*.c' --include='*.h' --include='*.in' \
                              '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*/' "src/$m" 2>/dev/null |
                      while IFS= read -r hit; do
                              file=${hit%%:*}
                              line=${hit#*:}
                              line=${line%%:*}
                              inc=${hit#*\"}
                              inc=${inc%%\"*}
                              dir=${inc%%/*}
                              [[ ${deps[$m]} == *" $dir "* ]] ||
                                      echo "$file:$line: \"$inc\": $m does not depend on $dir"
                      done)
                allowed=${deps[$m]# }
                allowed=${allowed% }
                allowed=${allowed// /, }
                if [ -z "$bad" ]; then
                        echo "ok $n - src/$m includes only $allowed"
                else
                        echo "not ok $n - src/$m includes only $allowed"
                        echo "$bad" | head -10 | sed 's/^/# /'
                fi
        done
fi

for f in "${files[@]}"; do
        n=$((n + 1))
        if out=$(clang-format --dry-run -Werror "$f" 2>&1); then
                echo "ok $n - clang-format $f"
        else
                echo "not ok $n - clang-format $f"
                echo "$out" | head -5 | sed 's/^/# /'
        fi
done
[ ${#tidy[@]} -gt 0 ] || exit 0
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
