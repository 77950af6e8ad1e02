#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Builds openenvd's binaries statically linked (glibc and Debian's static
# libseccomp, jansson, libyaml, OpenSSL, http-parser), laid out as they are
# installed under a prefix, for images that carry none of those libraries:
#
#   scripts/build-static.sh [OUTDIR]    (default: ./dist/static; prints it)
#
#   OUTDIR/bin/openenvd, OUTDIR/bin/openenvctl
#   OUTDIR/libexec/openenvd/openenvd-shim, openenvd-probe
#   OUTDIR/share/openenvd/openenvd-seccomp.json, least-privilege.options
#
# Copy OUTDIR into an image's /usr/local (deploy/docker/Dockerfile.static
# makes a stage of it to COPY --from; docs/DAEMON.md, "Releases"). One
# limit of a static glibc: --model-url must then name an address, not a host
# name (name resolution would need the build's own glibc NSS modules).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mkdir -p "${1:-dist/static}" && cd "${1:-dist/static}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

meson setup "$work/build" --prefix=/usr/local --buildtype=release -Dtests=false \
        -Dprefer_static=true -Dc_link_args=-static >/dev/null
# The linker warns that a static glibc needs its NSS modules for
# getaddrinfo(): known, and documented above. Its output is shown on failure.
if ! ninja -C "$work/build" >"$work/ninja.log" 2>&1; then
        cat "$work/ninja.log" >&2
        exit 1
fi
DESTDIR="$work/root" meson install -C "$work/build" --quiet >/dev/null
rm -rf "$out"/bin "$out"/libexec "$out"/share
cp -a "$work/root/usr/local/." "$out/"
install -D -m 0644 deploy/docker/openenvd-seccomp.json "$out/share/openenvd/openenvd-seccomp.json"
install -D -m 0644 deploy/docker/least-privilege.options \
        "$out/share/openenvd/least-privilege.options"
for f in "$out"/bin/* "$out"/libexec/openenvd/*; do
        file -b "$f" | grep -q 'statically linked' || { echo "build-static.sh: $f is not static" >&2; exit 1; }
done
echo "$out"
