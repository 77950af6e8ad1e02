#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Installs the Debian packages of the sets asked for (default: all). Each
# set says what needs it, so a first run installs only what it runs:
#   build   the compiler and the libraries the two binaries link
#   demo    what scripts/demo.sh runs (the example unit's Python env server)
#   tests   scripts/test.sh: sanitizers, lint, the test frameworks and the
#           runtimes the suites drive
#   bench   the benchmarks' competitors and load tools (a test suite too)
# Idempotent and quiet when everything is present; runs `apt-get update`
# only when something is missing. Needs root.
#
#   install-deps.sh [build] [demo] [tests] [bench] [all]
set -euo pipefail

build=(
        meson ninja-build pkg-config gcc
        musl-tools # openenvd-shim links musl: no cpuid-heavy libc start-up per container
        libyaml-dev libjansson-dev libseccomp-dev libcap-dev libhttp-parser-dev libssl-dev
)
demo=(
        python3 python3-fastapi python3-uvicorn uvicorn python3-websockets
)
tests=(
        clang libclang-rt-14-dev clang-format clang-tidy libcriterion-dev iproute2
        python3-httpx busybox-static
        python3-requests # OpenEnv's container providers import it (tests/lanes)
        python3-numpy # OpenEnv's connect4_env and maze_env (test_openenv_real.py, tools/fleet.py)
        python3-dateutil # OpenEnv's calendar_env (test_openenv_real.py, the newer fixture)
        python3-kubernetes python3-yaml # the API schema deploy/kubernetes is checked against
        # runtimes the OCI launcher, the lanes and the benchmarks drive
        runc crun bubblewrap docker.io debootstrap
)
bench=(
        hyperfine wrk haproxy # haproxy: the relay's competitor in bench/relay
)

[ $# -eq 0 ] && set -- all
packages=()
for set in "$@"; do
        case "$set" in
        build) packages+=("${build[@]}") ;;
        demo) packages+=("${demo[@]}") ;;
        tests) packages+=("${tests[@]}") ;;
        bench) packages+=("${bench[@]}") ;;
        all) packages+=("${build[@]}" "${demo[@]}" "${tests[@]}" "${bench[@]}") ;;
        *)
                echo "install-deps: unknown set '$set' (build, demo, tests, bench, all)" >&2
                exit 2
                ;;
        esac
done

missing=()
for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
        exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
        echo "install-deps: missing packages (${missing[*]}) and not root" >&2
        exit 1
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# docker.io's postinst would start a system dockerd; the tests start their
# own private one, so keep the system one from starting (policy-rc.d).
printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
chmod +x /usr/sbin/policy-rc.d
trap 'rm -f /usr/sbin/policy-rc.d' EXIT
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
