#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Starts or stops a private dockerd for tests, entirely under one directory:
#
#   scripts/dockerd.sh start DIR   # prints DOCKER_HOST=unix://DIR/docker.sock
#   scripts/dockerd.sh stop DIR    # kills it, unmounts and removes DIR
#   scripts/dockerd.sh env DIR     # prints the DOCKER_HOST line only
#
# The daemon gets its own --data-root, --exec-root, pidfile, socket and
# containerd namespaces, so it never touches /var/lib/docker or a system
# containerd's "moby" namespace, and two test runs can coexist. Networking is
# off (--bridge=none, no iptables): tests only use --network none, and must
# not alter the host's network or firewall.
#
# DOCKERD_NETNS=1 starts the daemon instead in a network namespace of its
# own (unshare --net, lo up) with Docker's ordinary bridge networking: its
# bridge, veths, published ports (docker-proxy) and Swarm's networks all live
# and die in that namespace, never on the host. Reach it with
# `nsenter -t "$(cat DIR/dockerd.pid)" -n ...`. iptables stays off there too.
#
# DOCKERD_RUNTIME=PATH makes the OCI runtime at PATH (a runc wrapper, e.g.
# tests/validate/fault-runtime.py) the daemon's default, named openenv-fault.
#
# Environment: DOCKERD (default dockerd), DOCKER (default docker),
# DOCKERD_START_TIMEOUT seconds (default 60), DOCKERD_NETNS, DOCKERD_RUNTIME.
set -euo pipefail

die() {
        echo "dockerd.sh: $*" >&2
        exit 1
}

[ $# -eq 2 ] || die "usage: $0 start|stop|env DIR"
cmd=$1
dir=$2
case "$dir" in
/*) ;;
*) dir="$(pwd)/$dir" ;;
esac
[ "$dir" != "/" ] || die "refusing DIR=/"

DOCKERD=${DOCKERD:-dockerd}
DOCKER=${DOCKER:-docker}
sock="$dir/docker.sock"
pidfile="$dir/dockerd.pid"
host="unix://$sock"
# Namespaces unique per directory, so a shared containerd cannot mix states.
tag=$(printf '%s' "$dir" | sha256sum | cut -c1-12)

alive() {
        [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null
}

ready() {
        "$DOCKER" -H "$host" info >/dev/null 2>&1
}

start() {
        mkdir -p "$dir/data" "$dir/exec"
        # containerd's "opt" plugin creates /opt/containerd/{bin,lib} on the
        # host; remember whether it was there so that stop leaves /opt as found.
        [ -e /opt/containerd ] || [ -e "$dir/opt-containerd-ours" ] || touch "$dir/opt-containerd-ours"
        if alive && ready; then
                echo "DOCKER_HOST=$host"
                return 0
        fi
        command -v "$DOCKERD" >/dev/null || die "$DOCKERD not found (apt-get install docker.io)"
        local net=(--bridge=none --iptables=false --ip6tables=false --ip-forward=false
                --ip-masq=false --userland-proxy=false) wrap=()
        if [ -n "${DOCKERD_NETNS:-}" ]; then
                net=(--iptables=false --ip6tables=false --ip-forward=false --ip-masq=false)
                # No --fork: dockerd keeps the pid setsid started.
                wrap=(unshare --net sh -c 'ip link set lo up && exec "$0" "$@"')
        fi
        if [ -n "${DOCKERD_RUNTIME:-}" ]; then
                net+=(--add-runtime "openenv-fault=$DOCKERD_RUNTIME" --default-runtime openenv-fault)
        fi
        # setsid: the daemon must not receive the test runner's Ctrl-C before
        # `stop` has removed its containers.
        setsid "${wrap[@]}" "$DOCKERD" \
                --data-root "$dir/data" \
                --exec-root "$dir/exec" \
                --pidfile "$pidfile" \
                -H "$host" \
                --containerd-namespace "openenv-$tag" \
                --containerd-plugins-namespace "openenv-$tag-plugins" \
                "${net[@]}" \
                --storage-driver overlay2 \
                --exec-opt native.cgroupdriver=cgroupfs \
                --log-level warn \
                </dev/null >"$dir/dockerd.log" 2>&1 &
        local deadline=$((SECONDS + ${DOCKERD_START_TIMEOUT:-60}))
        until ready; do
                if ! kill -0 $! 2>/dev/null; then
                        tail -n 20 "$dir/dockerd.log" >&2 || true
                        die "dockerd exited during startup"
                fi
                if [ $SECONDS -ge $deadline ]; then
                        tail -n 20 "$dir/dockerd.log" >&2 || true
                        stop_daemon
                        die "dockerd not ready after ${DOCKERD_START_TIMEOUT:-60}s"
                fi
                sleep 0.2
        done
        echo "DOCKER_HOST=$host"
}

stop_daemon() {
        local pid
        if ready; then
                # Remove every container first so no shim outlives the daemon.
                local ids
                ids=$("$DOCKER" -H "$host" ps -aq 2>/dev/null || true)
                if [ -n "$ids" ]; then
                        # shellcheck disable=SC2086
                        "$DOCKER" -H "$host" rm -f -v $ids >/dev/null 2>&1 || true
                fi
        fi
        if [ -s "$pidfile" ]; then
                pid=$(cat "$pidfile")
                if kill -0 "$pid" 2>/dev/null; then
                        kill -TERM "$pid" 2>/dev/null || true
                        for _ in $(seq 1 150); do
                                kill -0 "$pid" 2>/dev/null || break
                                sleep 0.1
                        done
                        kill -KILL "$pid" 2>/dev/null || true
                fi
        fi
        # The managed containerd writes its own pidfile under the exec root.
        local cpid="$dir/exec/containerd/containerd.pid"
        if [ -s "$cpid" ] && kill -0 "$(cat "$cpid")" 2>/dev/null; then
                kill -TERM "$(cat "$cpid")" 2>/dev/null || true
        fi
}

unmount_below() {
        # Deepest first; mountinfo escapes spaces as \040, which never occurs
        # in our own paths because $dir is ours.
        local m
        awk -v d="$dir/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo |
                sort -r | while read -r m; do
                umount -l "$m" 2>/dev/null || true
        done
}

stop() {
        [ -d "$dir" ] || return 0
        stop_daemon
        unmount_below
        if [ -e "$dir/opt-containerd-ours" ]; then
                rmdir /opt/containerd/bin /opt/containerd/lib /opt/containerd 2>/dev/null || true
        fi
        rm -rf --one-file-system "$dir"
        [ ! -e "$dir" ] || die "could not remove $dir"
}

case "$cmd" in
start) start ;;
stop) stop ;;
env) echo "DOCKER_HOST=$host" ;;
*) die "unknown command $cmd" ;;
esac
