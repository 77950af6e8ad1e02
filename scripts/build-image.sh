#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Builds the Docker lanes' images locally, without any registry:
#
#   scripts/build-image.sh BUILD_DIR     # prints the image reference on stdout
#   scripts/build-image.sh --openenv OPENENV_REAL BUILD_DIR
#
# 1. A Debian bookworm root (debootstrap --variant=minbase, from the Debian
#    mirror this machine's apt uses) with the example's Python stack and
#    openenvd's runtime libraries. It is cached as a tarball in
#    $OPENENVD_CI_CACHE (default /var/cache/openenvd-ci), keyed by the
#    package list, so it is downloaded once per machine.
# 2. The image: that tarball plus openenvd, openenvd-shim, openenvctl and
#    openenvd-probe from BUILD_DIR (in /usr/local as `meson install` lays them
#    out, plus the shim next to openenvd, where the daemon looks for it),
#    deploy/docker/openenvd-seccomp.json in /usr/local/share/openenvd and
#    examples/echo at /opt/openenv-echo,
#    `docker import`ed with openenvd as the entrypoint. Its tag is a hash of
#    everything that goes in, so an unchanged tree reuses the image.
# 3. With --openenv: instead of the example, OpenEnv's own echo_env from
#    OPENENV_REAL (../shared/openenv-real: its README) laid out as its
#    Dockerfile lays it out (/app/env, a virtualenv's bin on PATH, WORKDIR
#    /app), its library tree at /app/pylib (where the image's virtualenv
#    would have it), byte-compiled, and the Docker convention for openenvd:
#    ENTRYPOINT ["openenvd", "--"] with the image's own CMD. No openenv.yaml
#    in the WORKDIR: openenvd runs it with all defaults. Repository
#    openenvd-ci-openenv.
#
# Uses whatever daemon `docker` talks to ($DOCKER_HOST). Environment:
# DOCKER (default docker), OPENENVD_CI_CACHE, OPENENVD_CI_MIRROR (default:
# the first deb.debian.org-style URI in /etc/apt/sources.list*),
# OPENENVD_CI_IMAGE (repository name, default openenvd-ci).
set -euo pipefail

die() {
        echo "build-image.sh: $*" >&2
        exit 1
}

openenv=
if [ "${1:-}" = --openenv ]; then
        [ $# -eq 3 ] || die "usage: $0 --openenv OPENENV_REAL BUILD_DIR"
        openenv=$(cd "$2" && pwd) || die "no OpenEnv at $2"
        if [ ! -f "$openenv/pylib.tar.xz" ] || [ ! -d "$openenv/envs/echo_env" ]; then
                die "$openenv is not the real OpenEnv fixture (pylib.tar.xz, envs/echo_env)"
        fi
        shift 2
fi
[ $# -eq 1 ] || die "usage: $0 [--openenv OPENENV_REAL] BUILD_DIR"
build=$(cd "$1" && pwd) || die "no build dir $1"
repo=$(cd "$(dirname "$0")/.." && pwd)
DOCKER=${DOCKER:-docker}
cache=${OPENENVD_CI_CACHE:-/var/cache/openenvd-ci}
name=${OPENENVD_CI_IMAGE:-openenvd-ci}
[ -z "$openenv" ] || name+=-openenv
suite=bookworm

# The example's Python stack (Debian's, as on the host), the shared
# libraries openenvd and openenvctl link against (`ldd` of both), and the
# CA store the model proxy verifies https providers against.
packages=python3-fastapi,python3-uvicorn,uvicorn,python3-websockets
packages+=,libyaml-0-2,libjansson4,libseccomp2,libhttp-parser2.9,libssl3,ca-certificates

bins=(
        "src/daemon/openenvd:usr/local/bin/openenvd"
        "src/sandbox/shim/openenvd-shim:usr/local/bin/openenvd-shim"
        "src/sandbox/shim/openenvd-shim:usr/local/libexec/openenvd/openenvd-shim"
        "src/cli/openenvctl:usr/local/bin/openenvctl"
        "src/probe/openenvd-probe:usr/local/libexec/openenvd/openenvd-probe"
)

mirror() {
        if [ -n "${OPENENVD_CI_MIRROR:-}" ]; then
                echo "$OPENENVD_CI_MIRROR"
                return
        fi
        # deb822 "URIs:" or one-line "deb URI suite": the first main Debian
        # archive (not -security, not third-party).
        local u
        u=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
                /etc/apt/sources.list.d/*.sources 2>/dev/null |
                awk '/^URIs:/ { print $2 } /^deb / { print ($2 ~ /^\[/ ? $3 : $2) }' |
                grep -E '/debian/?$' | head -n1 || true)
        echo "${u:-http://deb.debian.org/debian}"
}

base_tarball() {
        local key tar tmp start
        key=$(printf '%s %s minbase\n' "$suite" "$packages" | sha256sum | cut -c1-16)
        tar="$cache/base-$suite-$key.tar"
        if [ -s "$tar" ]; then
                echo "$tar"
                return
        fi
        command -v debootstrap >/dev/null || die "debootstrap not found (apt-get install debootstrap)"
        mkdir -p "$cache"
        tmp=$(mktemp -d "$cache/.rootfs.XXXXXX")
        # shellcheck disable=SC2064
        trap "rm -rf --one-file-system '$tmp'" EXIT
        start=$SECONDS
        echo "build-image.sh: debootstrap $suite from $(mirror) (once per machine)" >&2
        debootstrap --variant=minbase --include="$packages" "$suite" "$tmp/root" "$(mirror)" \
                >"$tmp/debootstrap.log" 2>&1 || {
                tail -n 20 "$tmp/debootstrap.log" >&2
                die "debootstrap failed"
        }
        # Nothing in the image needs apt's lists or downloaded packages.
        rm -rf "$tmp/root/var/cache/apt/archives/"*.deb "$tmp/root/var/lib/apt/lists/"* \
                "$tmp/root/usr/share/doc" "$tmp/root/usr/share/man" "$tmp/root/usr/share/locale"
        tar --numeric-owner --xattrs -C "$tmp/root" -cf "$tmp/base.tar" .
        mv "$tmp/base.tar" "$tar"
        rm -rf --one-file-system "$tmp"
        trap - EXIT
        echo "build-image.sh: base root ready in $((SECONDS - start))s: $tar" >&2
        echo "$tar"
}

# OpenEnv's echo_env as its Dockerfile lays it out. The byte code is
# compiled here (the containers' root is read-only), by the same Python 3.11
# as the image's, with the sources' timestamps kept by tar.
stage_openenv() {
        local dir=$1
        mkdir -p "$dir/app/.venv/bin"
        cp -r --preserve=timestamps "$openenv/envs/echo_env" "$dir/app/env"
        tar -xJf "$openenv/pylib.tar.xz" -C "$dir/app"
        find "$dir/app" -name __pycache__ -prune -exec rm -rf {} +
        printf '#!/usr/bin/python3\nimport sys\nfrom uvicorn.main import main\nsys.exit(main())\n' \
                >"$dir/app/.venv/bin/uvicorn"
        chmod 0755 "$dir/app/.venv/bin/uvicorn"
        # -s/-p: the image paths go into the byte code (and its tracebacks).
        /usr/bin/python3 -m compileall -q -j 0 -s "$dir" -p / "$dir/app" >/dev/null
}

# The payload: binaries and the example, staged with fixed owners and modes.
stage() {
        local dir=$1 b src dst
        for b in "${bins[@]}"; do
                src="$build/${b%%:*}"
                dst="$dir/${b#*:}"
                [ -x "$src" ] || die "$src not built (ninja -C $build)"
                install -D -m 0755 "$src" "$dst"
        done
        # The least-privilege lane's seccomp profile, so that an image user
        # can get it with `docker cp` or `docker run --entrypoint cat`.
        install -D -m 0644 "$repo/deploy/docker/openenvd-seccomp.json" \
                "$dir/usr/local/share/openenvd/openenvd-seccomp.json"
        if [ -n "$openenv" ]; then
                stage_openenv "$dir"
        else
                mkdir -p "$dir/opt"
                cp -r "$repo/examples/echo" "$dir/opt/openenv-echo"
                find "$dir/opt/openenv-echo" -name __pycache__ -prune -exec rm -rf {} +
        fi
        # Mount points the daemon's containers need below the image's root:
        # the root is read-only inside, so they must exist in the image.
        mkdir -p "$dir/var/lib/openenvd" "$dir/var/lib/sim" "$dir/workspace" "$dir/out" \
                "$dir/assets" "$dir/inputs" "$dir/services" "$dir/run/openenvd"
        chmod -R u=rwX,go=rX "$dir"
}

main() {
        local base stage_dir hash ref tmp changes
        base=$(base_tarball)
        tmp=$(mktemp -d /tmp/openenvd-image.XXXXXX)
        # shellcheck disable=SC2064
        trap "rm -rf --one-file-system '$tmp'" EXIT
        stage_dir="$tmp/stage"
        stage "$stage_dir"
        hash=$( {
                basename "$base"
                sha256sum "$0"
                (cd "$stage_dir" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
                (cd "$stage_dir" && find . -print0 | sort -z | xargs -0 stat -c '%n %a')
        } | sha256sum | cut -c1-16)
        ref="$name:$hash"
        if "$DOCKER" image inspect "$ref" >/dev/null 2>&1; then
                echo "build-image.sh: reusing $ref" >&2
                echo "$ref"
                return
        fi
        # One tarball: the cached root, then the payload appended (tar -A),
        # so `docker import` sees a single filesystem. It refuses duplicate
        # paths, so the payload holds only entries the root lacks.
        tar -tf "$base" | sed 's:/$::' | sort -u >"$tmp/base.list"
        (cd "$stage_dir" && find . | sort) | comm -23 - "$tmp/base.list" >"$tmp/payload.list"
        cp "$base" "$tmp/image.tar"
        tar --numeric-owner --owner=0 --group=0 --no-recursion -C "$stage_dir" \
                -cf "$tmp/payload.tar" -T "$tmp/payload.list"
        tar -Af "$tmp/image.tar" "$tmp/payload.tar"
        if [ -n "$openenv" ]; then
                # The real Dockerfile's lines, openenvd in front of its CMD.
                # ENABLE_WEB_INTERFACE: gradio is not in the library tree.
                changes=(--change 'ENTRYPOINT ["/usr/local/bin/openenvd", "--"]'
                        --change 'CMD ["sh", "-c", "cd /app/env && uvicorn server.app:app --host 0.0.0.0 --port 8000"]'
                        --change 'WORKDIR /app'
                        --change 'ENV PATH=/app/.venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
                        --change 'ENV PYTHONPATH=/app/env:/app/pylib'
                        --change 'ENV ENABLE_WEB_INTERFACE=false')
        else
                changes=(--change 'ENTRYPOINT ["/usr/local/bin/openenvd", "--manifest", "/opt/openenv-echo/openenv.yaml", "--state", "/var/lib/openenvd", "--port", "8000"]'
                        --change 'WORKDIR /opt/openenv-echo'
                        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin')
        fi
        "$DOCKER" import "${changes[@]}" --change 'EXPOSE 8000' \
                --message "openenvd lanes image ($hash)" \
                "$tmp/image.tar" "$ref" >/dev/null
        echo "build-image.sh: built $ref" >&2
        echo "$ref"
}

main
