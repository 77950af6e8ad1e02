# SPDX-License-Identifier: LGPL-2.1-or-later
#
# What every bench/fleet script does first, sourced with BUILD set and the
# report dir's name as its argument (run.sh: fleet, sessions.sh: sessions):
# root, the OpenEnv snapshot (REAL; none: says so and exits 0), the report
# dir (out: BENCH_FLEET_OUT, or a new /var/tmp/openenvd-bench-NAME.* dir), the
# daemon and shim built, and the one byte-compiled library tree (lib) shared
# with bench/openenv.
REAL=${OPENENV_REAL:-$(cd .. && pwd)/shared/openenv-real}

if [ "$(id -u)" != 0 ]; then
        echo "bench/fleet: needs root" >&2
        exit 1
fi
if [ ! -f "$REAL/pylib.tar.xz" ] || [ ! -d "$REAL/envs/connect4_env" ]; then
        echo "bench/fleet: unavailable: no OpenEnv snapshot at $REAL (set OPENENV_REAL)"
        exit 0
fi
out=${BENCH_FLEET_OUT:-$(mktemp -d "/var/tmp/openenvd-bench-$1.XXXXXX")}
mkdir -p "$out"

[ -f "$BUILD/build.ninja" ] || meson setup "$BUILD" >/dev/null
ninja -C "$BUILD" src/daemon/openenvd src/sandbox/shim/openenvd-shim >/dev/null

# An image ships its bytecode: one tree for every run.
lib=$(bench/openenv/cache.sh "$REAL")
