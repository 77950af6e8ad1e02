#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Lays the coding unit out as its image would:
#
#   examples/coding/install.sh DEST OPENENV_DIR
#
# DEST gets this directory, the grading library (python/openenvd_grading.py)
# in DEST/grading/ and OpenEnv's Python libraries in DEST/pylib/ (from
# OPENENV_DIR/pylib.tar.xz: a snapshot of OpenEnv with the libraries its
# server needs; an image would `pip install openenv-core` instead). The
# manifest's image paths say /opt/openenv-coding: for another DEST they are
# rewritten to it. Start openenvd in DEST (the image's WORKDIR).
set -euo pipefail
if [ $# -ne 2 ]; then
        echo "usage: install.sh DEST OPENENV_DIR" >&2
        exit 2
fi
src=$(cd "$(dirname "$0")" && pwd)
dest=$1
openenv=$2
if [ ! -f "$openenv/pylib.tar.xz" ]; then
        echo "install.sh: $openenv/pylib.tar.xz: not found (a snapshot of OpenEnv with its libraries)" >&2
        exit 1
fi
mkdir -p "$dest/grading"
cp -a "$src/." "$dest/"
cp "$src/../../python/openenvd_grading.py" "$dest/grading/"
[ -d "$dest/pylib" ] || tar -xJf "$openenv/pylib.tar.xz" -C "$dest"
dest=$(cd "$dest" && pwd)
if [ "$dest" != /opt/openenv-coding ]; then
        /usr/bin/python3 -c 'import sys; p = sys.argv[1] + "/openenv.yaml"; s = open(p).read()
open(p, "w").write(s.replace("/opt/openenv-coding", sys.argv[1]))' "$dest"
fi
