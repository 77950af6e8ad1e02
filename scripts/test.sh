#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The one command that runs every test on a fresh Debian bookworm machine as
# root: installs what is missing, builds a normal and an ASan/UBSan flavour,
# runs every suite (unit, kernel, fuzz-regression, integration, docker, lint)
# and ends with `N passed, N failed, N skipped`.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

setup() {
        local dir=$1
        shift
        if [ -f "$dir/build.ninja" ]; then
                meson setup --reconfigure "$dir" "$@" >/dev/null
        else
                meson setup "$dir" "$@" >/dev/null
        fi
        # Quiet, but a failed build says why (ninja prints errors on stdout).
        if ! ninja -C "$dir" >"$dir/ninja.log" 2>&1; then
                cat "$dir/ninja.log" >&2
                echo "0 passed, 1 failed, 0 skipped"
                exit 1
        fi
}

setup build
# ASan, UBSan and LSan over the same suites (Docker lanes, lint, and the
# suite 'once' -- the first run from a fresh clone, the release package --
# run once).
setup build-asan -Db_sanitize=address,undefined -Db_lundef=false

export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Slow unwinding: Criterion's own leaks are then attributed to libcriterion.so
# (tests/lsan.supp) instead of to an unknown frame.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:fast_unwind_on_malloc=0
export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp:print_suppressions=0
exec scripts/run-tests.py build build-asan:-docker,-lint,-bench,-once "$@"
