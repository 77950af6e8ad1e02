#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The first run, as a new user makes it (issue 29): a clean clone of this
# repository under /tmp in a directory whose path has a space, then the
# README's main job, scripts/demo.sh, as root (isolated, graded end to end)
# and as a user who is not root (the daemon steps aside and the env server
# answers itself). TAP on stdout.
#
#   first-run.sh          (root; a non-root run is skipped, and fails in CI)
#
# The clone is of this checkout's HEAD (what CI tests is committed), and
# everything it makes is removed at the end.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)

echo "1..2"
if [ "$(id -u)" -ne 0 ]; then
        for n in 1 2; do
                if [ "${CI:-}" = true ]; then echo "not ok $n - needs root"; else echo "ok $n # SKIP needs root"; fi
        done
        exit 0
fi

base=$(mktemp -d /tmp/openenvd-first-run.XXXXXX)
chmod 0755 "$base" # the non-root user reaches its clone through it
dest="$base/x y/openenvd"
cleanup() { rm -rf "$base"; }
trap cleanup EXIT
# The demo listens on PORT and its model stub on PORT + 1: both free.
port=$(/usr/bin/python3 -c '
import socket
while True:
    a, b = socket.socket(), socket.socket()
    a.bind(("127.0.0.1", 0))
    try:
        b.bind(("127.0.0.1", a.getsockname()[1] + 1))
    except OSError:
        continue
    print(a.getsockname()[1])
    break')

diag() { sed 's/^/# /'; }

mkdir -p "$base/x y"
if ! git clone --quiet "$repo" "$dest" 2>&1 | diag; then
        echo "not ok 1 - a clone under '$base/x y'"
        echo "not ok 2 - (no clone)"
        exit 0
fi

# One demo run: "ok N - WHAT" when it exits 0 and its output holds every
# pattern, else "not ok" with the output's tail. Args: N WHAT CMD... :: PATTERN...
demo() {
        local n=$1 what=$2 cmd=() out code p
        shift 2
        while [ "$1" != :: ]; do cmd+=("$1"); shift; done
        shift
        out=$(cd "$dest" && "${cmd[@]}" 2>&1)
        code=$?
        for p in "$@"; do
                grep -qF -- "$p" <<<"$out" || code="missing '$p'"
        done
        if [ "$code" = 0 ]; then
                echo "ok $n - $what"
        else
                echo "not ok $n - $what ($code)"
                tail -n 150 <<<"$out" | diag
        fi
}

# As root: isolated, the example unit graded end to end, the harness's report shown.
demo 1 "root: scripts/demo.sh from '$dest' isolates and grades the example" \
        env OPENENVD_DEMO_PORT="$port" scripts/demo.sh :: '"verdict": "graded"' '"mcp_status": 200' \
        '"model_status": 200'

# As a user who is not root, in a clone of their own: steps aside, says why,
# and the env server answers on the demo's port.
chown -R nobody "$dest"
mkdir "$base/home" && chown nobody "$base/home"
demo 2 "not root: scripts/demo.sh steps aside, says why, the env answers on the demo's port" \
        runuser -u nobody -- env HOME="$base/home" OPENENVD_DEMO_PORT="$port" scripts/demo.sh \
        :: 'isolation disabled' 'GET /health -> 200'
