#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The main job: builds openenvd and runs the example unit (examples/echo).
# Until the daemon lands (issue: the unit as PID 1), this validates the
# example manifest and prints its effective, fully defaulted contract.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
if [ -f build/build.ninja ]; then meson setup --reconfigure build >/dev/null; else meson setup build >/dev/null; fi
ninja -C build >/dev/null

echo "== openenv manifest validate examples/echo/openenv.yaml"
build/src/cli/openenv manifest validate examples/echo/openenv.yaml
echo
echo "== openenv check preflight"
build/src/cli/openenv check preflight || true
