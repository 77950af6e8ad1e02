#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Installs the Debian packages that the build, the tests, the demo and the
# benchmarks need. Idempotent and quiet when everything is present; runs
# `apt-get update` only when something is missing. Needs root.
set -euo pipefail

packages=(
        # build
        meson ninja-build pkg-config gcc clang libclang-rt-14-dev clang-format clang-tidy
        musl-tools # openenvd-shim links musl: no cpuid-heavy libc start-up per container
        libyaml-dev libjansson-dev libseccomp-dev libcap-dev libhttp-parser-dev
        libsystemd-dev libcurl4-openssl-dev libssl-dev
        # tests
        libcriterion-dev iproute2 python3 python3-fastapi python3-uvicorn uvicorn
        python3-websockets python3-httpx busybox-static
        python3-requests # OpenEnv's container providers import it (tests/lanes)
        python3-numpy # OpenEnv's connect4_env (tests/integration/test_openenv_real.py, tools/fleet.py)
        python3-kubernetes python3-yaml # the API schema deploy/kubernetes is checked against
        # runtimes the OCI launcher, the lanes and the benchmarks drive
        runc crun bubblewrap docker.io debootstrap
        # benchmarks
        hyperfine wrk haproxy # haproxy: the relay's competitor in bench/relay
)

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
