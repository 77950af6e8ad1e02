#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The release as a user gets it: scripts/build-deb.sh builds the .deb from
# this checkout; its control data and contents are what docs/DAEMON.md
# ("Releases") says; unpacked, its binaries say their version (the shim
# found where openenvd looks for it); the systemd unit it ships passes
# systemd-analyze verify. Nothing is installed on this machine. TAP.
set -uo pipefail
shopt -s extglob
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
diag() { sed 's/^/# /'; }
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }

echo "1..7"
if ! deb=$("$repo/scripts/build-deb.sh" "$work/dist" 2>"$work/err" | tail -n 1) || [ ! -f "$deb" ]; then
        not_ok "scripts/build-deb.sh builds a .deb"
        diag <"$work/err"
        for i in 2 3 4; do not_ok "(no package)"; done
        exit 0
fi
ok "scripts/build-deb.sh builds $(basename "$deb")"

info=$(dpkg-deb --field "$deb" Package Architecture Depends)
contents=$(dpkg-deb --contents "$deb" | awk '{print $6}')
missing=
for f in ./usr/bin/openenvd ./usr/bin/openenvctl ./usr/libexec/openenvd/openenvd-shim \
        ./usr/libexec/openenvd/openenvd-probe ./lib/systemd/system/openenvd@.service \
        ./usr/lib/python3/dist-packages/openenvd_provider.py \
        ./usr/share/doc/openenvd/DAEMON.md; do
        grep -qxF "$f" <<<"$contents" || missing="$missing $f"
done
dpkg-deb -x "$deb" "$work/root"
# The provider imports from where Debian's python3 finds packages and finds
# the packaged options (OpenEnv's ContainerProvider, which it subclasses,
# stands in: OpenEnv is the user's, not the package's).
mkdir -p "$work/openenv/openenv/core/containers/runtime"
for d in openenv openenv/core openenv/core/containers openenv/core/containers/runtime; do
        : >"$work/openenv/$d/__init__.py"
done
echo 'class ContainerProvider: pass' >"$work/openenv/openenv/core/containers/runtime/providers.py"
if ! out=$(cd / && OPENENVD_DOCKER_DIR="$work/root/usr/share/openenvd" \
        PYTHONPATH="$work/root/usr/lib/python3/dist-packages:$work/openenv" /usr/bin/python3 -c \
        'import openenvd_provider as p; print(" ".join(p.least_privilege_options()))' 2>&1) ||
        ! grep -q -- "--security-opt=seccomp=$work/root/usr/share/openenvd/openenvd-seccomp.json" <<<"$out"; then
        missing="$missing (openenvd_provider: $(head -c 300 <<<"$out"))"
fi
if [ -z "$missing" ] && grep -q '^Package: openenvd$' <<<"$info" &&
        grep -q '^Depends: .*libseccomp2.*' <<<"$info" && grep -q 'libjansson4' <<<"$info"; then
        ok "the package's fields and files (binaries, shim, probe, systemd unit, the provider, docs)"
else
        not_ok "the package's fields and files (missing:$missing)"
        diag <<<"$info"
fi

want=$(dpkg-deb --field "$deb" Version)
v1=$("$work/root/usr/bin/openenvd" --version 2>&1)
v2=$("$work/root/usr/bin/openenvctl" --version 2>&1)
v3=$("$work/root/usr/libexec/openenvd/openenvd-shim" --version 2>&1)
# "-dirty" when built from a tree with uncommitted changes (never in CI).
if [[ "$v1" == "openenvd 0."*"(git ${want##*+git}"?(-dirty)")" ]] && [ "${v2#openenvctl }" = "${v1#openenvd }" ] &&
        [ "${v3#openenvd-shim }" = "${v1#openenvd }" ] && file -b "$work/root/usr/libexec/openenvd/openenvd-shim" | grep -q 'statically linked'; then
        ok "unpacked, every binary says the package's version ($want); the shim is static"
else
        not_ok "unpacked, every binary says the package's version ($want)"
        printf '%s\n' "$v1" "$v2" "$v3" | diag
fi

unit="$work/openenvd@test.service"
sed "s|/usr/bin/openenvd|$work/root/usr/bin/openenvd|" "$work/root/lib/systemd/system/openenvd@.service" >"$unit"
if out=$(systemd-analyze verify "$unit" 2>&1) && [ -z "$out" ] && grep -q '^Type=notify$' "$unit"; then
        ok "openenvd@.service: systemd-analyze verify is silent; Type=notify"
else
        not_ok "openenvd@.service: systemd-analyze verify"
        diag <<<"$out"
fi

# The static build: every binary static, running with no library at all
# (a chroot holding nothing else), and isolating for real.
if ! static=$("$repo/scripts/build-static.sh" "$work/static" 2>"$work/err" | tail -n 1) ||
        [ ! -x "$static/bin/openenvd" ]; then
        not_ok "scripts/build-static.sh builds the static tree"
        diag <"$work/err"
        not_ok "(no static tree)"
        exit 0
fi
mkdir -p "$work/chroot/usr" && cp -a "$static" "$work/chroot/usr/local"
v4=$(chroot "$work/chroot" /usr/local/bin/openenvd --version 2>&1)
v5=$(chroot "$work/chroot" /usr/local/bin/openenvctl --version 2>&1)
if [ "${v4#openenvd }" = "${v1#openenvd }" ] && [ "${v5#openenvctl }" = "${v1#openenvd }" ] &&
        [ -f "$static/share/openenvd/openenvd-seccomp.json" ]; then
        ok "scripts/build-static.sh: static binaries that run in an empty root"
else
        not_ok "scripts/build-static.sh: static binaries that run in an empty root"
        printf '%s\n' "$v4" "$v5" | diag
fi
# Episodes through the static daemon and shim: members that die, graded.
if [ "$(id -u)" -ne 0 ]; then
        if [ "${CI:-}" = true ]; then not_ok "the static daemon isolates (needs root)"; else
                echo "ok $((n + 1)) # SKIP the static daemon isolates (needs root)"; fi
elif out=$(cd "$work" && /usr/bin/python3 "$repo/tests/attacks/test_member_death.py" \
        "$static/bin/openenvd" "$static/libexec/openenvd/openenvd-shim" \
        "$static/bin/openenvctl" 2>&1) && ! grep -q '^not ok' <<<"$out"; then
        ok "the static daemon and shim isolate and grade (test_member_death.py)"
else
        not_ok "the static daemon and shim isolate and grade (test_member_death.py)"
        tail -n 20 <<<"$out" | diag
fi

# The image stage (deploy/docker/Dockerfile.static): an image that takes the
# static tree with COPY --from, FROM scratch (nothing else in it), runs
# openenvd. A private dockerd of the test's own, removed afterwards.
dk=$(mktemp -d /tmp/openenvd-release-docker.XXXXXX)
tag="openenvd-release-test-$$"
if [ "$(id -u)" -ne 0 ] || ! command -v dockerd >/dev/null; then
        rmdir "$dk"
        if [ "${CI:-}" = true ]; then not_ok "Dockerfile.static (needs root and docker.io)"; else
                echo "ok $((n + 1)) # SKIP Dockerfile.static (needs root and docker.io)"; fi
        exit 0
fi
if dh=$("$repo/scripts/dockerd.sh" start "$dk" 2>"$work/err" | tail -n 1) && export "${dh?}" &&
        docker build -q -f "$repo/deploy/docker/Dockerfile.static" -t "$tag-static" "$static" \
                >/dev/null 2>>"$work/err" &&
        printf 'FROM %s AS openenvd\nFROM scratch\nCOPY --from=openenvd /usr/local/ /usr/local/\n' \
                "$tag-static" >"$work/Dockerfile.child" &&
        docker build -q -f "$work/Dockerfile.child" -t "$tag-child" "$work" >/dev/null \
                2>>"$work/err" &&
        v6=$(docker run --rm --network none --entrypoint /usr/local/bin/openenvd "$tag-child" \
                --version 2>>"$work/err") && [ "${v6#openenvd }" = "${v1#openenvd }" ]; then
        ok "Dockerfile.static: an image FROM scratch with COPY --from runs openenvd"
else
        not_ok "Dockerfile.static: an image FROM scratch with COPY --from runs openenvd"
        diag <"$work/err"
fi
docker rmi -f "$tag-child" "$tag-static" >/dev/null 2>&1
"$repo/scripts/dockerd.sh" stop "$dk" >/dev/null 2>&1
