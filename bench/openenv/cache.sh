#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The OpenEnv snapshot as the benchmarks run it (bench/openenv, bench/fleet):
# its pylib.tar.xz unpacked, with connect4_env beside it, byte-compiled once
# into a cache dir keyed by the tarball's hash. Prints that dir
# (DIR/pylib, DIR/connect4_env); nothing of OpenEnv enters the repository.
#
#   bench/openenv/cache.sh REAL          (REAL: ../shared/openenv-real)
#
# OPENENVD_BENCH_CACHE: the cache's parent (default /var/cache/openenvd-bench).
set -euo pipefail
REAL=${1:?usage: cache.sh OPENENV_REAL_DIR}
PY=/usr/bin/python3

# World-readable (the containers' uids read it through the host's "/"),
# complete or absent (unpacked aside, then renamed).
CACHE=${OPENENVD_BENCH_CACHE:-/var/cache/openenvd-bench}
KEY=$(sha256sum "$REAL/pylib.tar.xz" | cut -c1-16)
DIR="$CACHE/openenv-real-$KEY-pyc"
if [ ! -d "$DIR/pylib" ]; then
        mkdir -p "$CACHE"
        chmod 0755 "$CACHE"
        tmp=$(mktemp -d "$CACHE/.unpack.XXXXXX")
        tar -xJf "$REAL/pylib.tar.xz" -C "$tmp"
        cp -r "$REAL/envs/connect4_env" "$tmp/connect4_env"
        # Bytecode once, here: the containers' root is read-only, and a
        # server compiling 37 MB of Python at every start would be measured.
        "$PY" -m compileall -q -j 0 "$tmp" > /dev/null || true
        chmod -R a+rX "$tmp"
        chmod 0755 "$tmp"
        mv "$tmp" "$DIR"
fi
echo "$DIR"
