#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Builds a Debian package of openenvd with Debian's own tools: meson installs
# into a staging root (--prefix=/usr, no tests), dpkg-shlibdeps works out the
# library dependencies from the binaries, dpkg-deb builds the .deb.
#
#   scripts/build-deb.sh [OUTDIR]     (default: ./dist; prints the .deb's path)
#
# What it holds: /usr/bin/openenvd and openenvctl, /usr/libexec/openenvd/
# (the shim, statically linked, and the probe), OpenEnv's provider for
# openenvd images (python3's openenvd_provider), the systemd template unit
# /lib/systemd/system/openenvd@.service (docs/DAEMON.md, "Under systemd")
# and the docs under /usr/share/doc/openenvd.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
out=$(mkdir -p "${1:-dist}" && cd "${1:-dist}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

version=$(sed -n "s/^ *version : '\(.*\)',$/\1/p" meson.build | head -n 1)
if commit=$(git -C "$repo" rev-parse --short=12 HEAD 2>/dev/null); then
        version="$version+git$commit"
fi
arch=$(dpkg --print-architecture)
root="$work/root"

meson setup "$work/build" --prefix=/usr --buildtype=release -Dtests=false >/dev/null
ninja -C "$work/build" >/dev/null
DESTDIR="$root" meson install -C "$work/build" --quiet
install -D -m 0644 deploy/systemd/openenvd@.service "$root/lib/systemd/system/openenvd@.service"
# OpenEnv's provider for openenvd images, importable by Debian's python3.
install -D -m 0644 python/openenvd_provider.py \
        "$root/usr/lib/python3/dist-packages/openenvd_provider.py"
# ... and the docker run options and seccomp profile it starts images with.
install -D -m 0644 deploy/docker/least-privilege.options deploy/docker/openenvd-seccomp.json \
        -t "$root/usr/share/openenvd"
install -d "$root/usr/share/doc/openenvd"
install -m 0644 README.md docs/*.md "$root/usr/share/doc/openenvd/"

# dpkg-shlibdeps reads the package name from a debian/control beside it.
mkdir -p "$work/src/debian"
printf 'Source: openenvd\n\nPackage: openenvd\nArchitecture: any\n' > "$work/src/debian/control"
binaries=()
while IFS= read -r f; do
        file -b "$f" | grep -q 'dynamically linked' && binaries+=("-e$f")
done < <(find "$root/usr/bin" "$root/usr/libexec" -type f)
depends=$(cd "$work/src" && dpkg-shlibdeps -O "${binaries[@]}" 2>/dev/null |
        sed -n 's/^shlibs:Depends=//p')

mkdir -p "$root/DEBIAN"
cat > "$root/DEBIAN/control" <<EOF
Package: openenvd
Version: $version
Architecture: $arch
Maintainer: openenvd maintainers <maintainers@openenvd.invalid>
Depends: $depends
Section: admin
Priority: optional
Description: isolation daemon for reinforcement-learning environments
 openenvd runs an OpenEnv environment's code, an agent's code and the
 graders of each episode in containers of their own (namespaces, cgroups,
 seccomp, read-only roots), relays their traffic and grades episodes; or
 steps aside and runs the environment as it is where it cannot isolate.
EOF
deb="$out/openenvd_${version}_${arch}.deb"
dpkg-deb --root-owner-group --build "$root" "$deb" >/dev/null
echo "$deb"
