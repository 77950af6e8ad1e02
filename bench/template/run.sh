#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The mechanism floor for fork-speed episodes (issue 27): OpenEnv's real
# connect4_env started cold per episode vs forked from a warm template
# (zygote.py) vs started once and reset in-session; CRIU's restore if this
# machine can checkpoint; one run, interleaved (bench/README.md,
# "bench/template"). No openenvd involved: the floor before the engine.
#
#   sudo bench/template/run.sh [REPS] [FORKS_PER_REP]     (default 10 5)
#
# Needs ../shared/openenv-real/ next to the repository (or OPENENV_REAL=DIR)
# and python3-numpy; unpacked by bench/openenv/cache.sh. Root only for the
# namespace part (skipped otherwise) and CRIU.
set -euo pipefail
REPS=${1:-10}
FORKS=${2:-5}
SRC=$(cd "$(dirname "$0")" && pwd)
REAL=${OPENENV_REAL:-$SRC/../../../shared/openenv-real}
PY=/usr/bin/python3

if [ ! -f "$REAL/pylib.tar.xz" ] || [ ! -d "$REAL/envs/connect4_env" ]; then
        echo "bench/template: unavailable: no OpenEnv snapshot at $REAL (set OPENENV_REAL)"
        exit 0
fi
if ! "$PY" -c 'import numpy' 2>/dev/null; then
        echo "bench/template: connect4_env needs numpy: apt-get install python3-numpy" >&2
        exit 1
fi
DIR=$("$SRC/../openenv/cache.sh" "$REAL")

# CRIU: restore the warm template per episode, if criu can run here at all.
# `criu check` initialises what dump and restore need (kerndat); when it
# fails, neither can work, and the reason is its first error line.
if ! command -v criu > /dev/null; then
        criu_status="unavailable: criu not installed (apt-get install criu)"
elif [ "$(id -u)" != 0 ]; then
        criu_status="not tried: needs root"
elif out=$(criu check 2>&1); then
        criu_status="criu check passed ($(criu --version | head -1)); restore per episode: not implemented in this bench yet"
else
        criu_status="unusable here: $(criu --version | head -1), kernel $(uname -r): criu check: $(echo "$out" | grep -m1 Error | sed 's/^.*Error ([^)]*): //')"
fi
export BENCH_CRIU_STATUS=$criu_status
exec "$PY" "$SRC/bench-template.py" "$DIR/connect4_env" "$DIR/pylib" "$REPS" "$FORKS"
