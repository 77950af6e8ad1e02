#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The Docker deployment lanes (docs/DESIGN.md §12, modes 2 and 3), as TAP:
#
#   tests/lanes/run-lanes.sh BUILD_DIR
#
# Builds (or reuses) the lanes image with scripts/build-image.sh, then runs
# openenvd as that image's entrypoint under `docker run --privileged
# --cgroupns=private` (isolation on: a full episode graded), under a plain
# `docker run` (isolation off: the env serves unchanged; with
# OPENENVD_REQUIRE_ISOLATION=1 the container exits 3), and under the
# least-privilege options of deploy/docker/least-privilege.options (isolation
# on, as privileged; without each critical option it steps aside and names
# that option). With the real OpenEnv (../shared/openenv-real, or
# $OPENENVD_OPENENV_REAL): an image of its echo_env with ENTRYPOINT
# ["openenvd", "--"] and the env's own CMD, isolated (privileged) and
# stepping aside (plain), driven by OpenEnv's unmodified client, and the
# OpenEnv provider (python/openenvd_provider.py) through from_docker_image.
#
# Docker: the daemon $DOCKER_HOST names when it answers, else a private
# dockerd (scripts/dockerd.sh, own data root, --bridge=none, no iptables) in
# a temporary directory, stopped and removed at the end. Every container runs
# with --network none; the test reaches it from the host with
# `nsenter --net` into that container's network namespace, so traffic
# only ever goes to 127.0.0.1 of a namespace the test created. Nothing is
# left running: containers (and, on a shared daemon, the image if this run
# built it) are removed on every exit path. The base root tarball stays
# cached (see scripts/build-image.sh, docs/LANES.md).
set -uo pipefail

build=${1:?usage: $0 BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
PY=/usr/bin/python3 # Debian's python3 with websockets, not a pyenv one
client="$here/client.py"
run_id=lanes-$$-$RANDOM
token=lanes-$RANDOM$RANDOM$RANDOM
planned=29

skip_all() {
        echo "1..0 # SKIP $*"
        exit 0
}

[ "$(id -u)" -eq 0 ] || skip_all "needs root"
for tool in docker dockerd nsenter "$PY"; do
        command -v "$tool" >/dev/null || skip_all "$tool not installed"
done
"$PY" -c 'import websockets' 2>/dev/null || skip_all "python3-websockets not installed"

n=0
failed=0
ok() {
        n=$((n + 1))
        echo "ok $n - $*"
}
not_ok() {
        n=$((n + 1))
        failed=$((failed + 1))
        echo "not ok $n - $*"
}
skip() {
        n=$((n + 1))
        echo "ok $n - $1 # SKIP $2"
}
diag() {
        sed 's/^/# /'
}

work=$(mktemp -d /tmp/openenvd-lanes.XXXXXX)
private_dockerd=
image=
image_built=
oimage=
obuilt=

# Every container this run starts carries this label.
remove_containers() {
        local ids
        ids=$(docker ps -aq --filter "label=openenvd-lanes=$run_id" 2>/dev/null)
        # shellcheck disable=SC2086
        [ -z "$ids" ] || docker rm -f -v $ids >/dev/null 2>&1
}

cleanup() {
        [ -n "${DOCKER_HOST:-}" ] && remove_containers
        if [ -n "$private_dockerd" ]; then
                # Removes every container, the data root and the image.
                "$repo/scripts/dockerd.sh" stop "$work/docker" >/dev/null 2>&1 ||
                        echo "# dockerd.sh stop failed" >&2
        else
                [ -z "$image_built" ] || docker rmi "$image" >/dev/null 2>&1
                [ -z "$obuilt" ] || docker rmi "$oimage" >/dev/null 2>&1
        fi
        rm -rf --one-file-system "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "1..$planned"
start=$SECONDS

# --- Docker daemon --------------------------------------------------------
if [ -n "${DOCKER_HOST:-}" ] && docker info >/dev/null 2>&1; then
        echo "# using the Docker daemon at $DOCKER_HOST"
else
        # --privileged asks for every capability the kernel knows; Debian's
        # docker.io 20.10 does not clamp that to the bounding set, so on a
        # host whose bounding set is incomplete runc fails "unable to apply
        # caps". runc-bounded clamps it (and does nothing else).
        bnd=$(awk '/^CapBnd:/ { print $2 }' /proc/self/status)
        last=$(cat /proc/sys/kernel/cap_last_cap)
        full=$(printf '%016x' $(((1 << (last + 1)) - 1)))
        if [ "$((16#$bnd))" -ne "$((16#$full))" ]; then
                echo "# bounding set $bnd lacks capabilities: dockerd runs runc through tests/lanes/runc-bounded"
                cat >"$work/dockerd" <<EOF
#!/bin/sh
exec dockerd --add-runtime lanes-runc="$here/runc-bounded" --default-runtime lanes-runc "\$@"
EOF
                chmod 0755 "$work/dockerd"
                export DOCKERD="$work/dockerd"
        fi
        private_dockerd=1
        # In a network namespace of its own, with Docker's bridge: the
        # provider cases publish a port, on that namespace's 127.0.0.1.
        export DOCKERD_NETNS=1
        if ! out=$("$repo/scripts/dockerd.sh" start "$work/docker" 2>&1); then
                echo "$out" | diag
                echo "Bail out! cannot start a private dockerd"
                exit 1
        fi
        export "${out##*$'\n'}" # DOCKER_HOST=unix://...
        echo "# private dockerd: $DOCKER_HOST"
fi

# --- image ------------------------------------------------------------------
t=$SECONDS
if image=$("$repo/scripts/build-image.sh" "$build" 2>"$work/build-image.log"); then
        grep -q "built $image" "$work/build-image.log" && [ -z "$private_dockerd" ] && image_built=1
        ok "image $image ($(grep -o 'built\|reusing' "$work/build-image.log" | tail -n1), $((SECONDS - t))s)"
else
        diag <"$work/build-image.log"
        echo "Bail out! cannot build the lanes image"
        exit 1
fi

# Starts a container (detached, --network none, labelled) and prints its id.
run() {
        local c
        c=$(docker run -d --network none --label "openenvd-lanes=$run_id" "$@" 2>"$work/run.err") || {
                diag <"$work/run.err"
                return 1
        }
        echo "$c"
}
pid_of() {
        docker inspect -f '{{.State.Pid}}' "$1"
}
# The nsenter arguments for a container's network namespace: Docker's file of
# it (SandboxKey), not /proc/PID/ns/net of the container's PID 1. openenvd's
# main thread is in a kept network namespace of a slot for a moment when it
# makes one or spawns a container into one, and /proc/PID/ns/net shows the
# thread's namespace of that moment: a client entered then talks to a slot's
# namespace, where nothing listens on the unit's port.
netns_of() {
        local ns pid
        ns=$(docker inspect -f '{{.NetworkSettings.SandboxKey}}' "$1" 2>/dev/null) || ns=
        if [ -n "$ns" ] && [ -e "$ns" ]; then
                echo "--net=$ns"
                return
        fi
        pid=$(pid_of "$1") && [ "$pid" -gt 0 ] || return 1
        echo "--net=/proc/$pid/ns/net"
}
# Runs client.py inside the container's network namespace.
in_netns() {
        local c=$1 net
        shift
        net=$(netns_of "$c") || return 1
        timeout 300 nsenter "$net" "$PY" "$client" "$@"
}
logs() {
        docker logs "$1" 2>&1
}

# --- plain lane: isolation off, the env serves unchanged --------------------
plain=$(run "$image") || plain=
if [ -n "$plain" ] && in_netns "$plain" wait 8000 /health 2>"$work/wait.err"; then
        line=$(logs "$plain" | grep -m1 'isolation disabled: ')
        if [ -n "$line" ] && echo "$line" | grep -q 'CAP_SYS_ADMIN'; then
                ok "plain: log says why isolation is disabled"
        else
                not_ok "plain: log says why isolation is disabled"
                logs "$plain" | head -n 20 | diag
        fi
        echo "# $line"
else
        not_ok "plain: env server up"
        { cat "$work/wait.err"; [ -n "$plain" ] && logs "$plain"; } 2>/dev/null | tail -n 20 | diag
fi

# The same image, the same requests, with uvicorn as the entrypoint.
ref=$(run -w /opt/openenv-echo -e PYTHONPATH=/opt/openenv-echo --entrypoint uvicorn "$image" \
        server.app:app --host 0.0.0.0 --port 8000) || ref=
if [ -n "$plain" ] && [ -n "$ref" ] &&
        in_netns "$ref" wait 8000 /health 2>>"$work/wait.err" &&
        in_netns "$plain" surface 8000 >"$work/plain.json" 2>&1 &&
        in_netns "$ref" surface 8000 >"$work/ref.json" 2>&1; then
        # Identical and substantive: the tools list and a graded step came back.
        if cmp -s "$work/plain.json" "$work/ref.json" &&
                grep -q 'echo_message' "$work/plain.json" &&
                grep -q '\\"done\\": *false' "$work/plain.json"; then
                ok "plain: /health /reset /step /state /mcp answer exactly as uvicorn run directly"
        else
                not_ok "plain: /health /reset /step /state /mcp answer exactly as uvicorn run directly"
                diff "$work/ref.json" "$work/plain.json" | head -n 40 | diag
        fi
else
        not_ok "plain: /health /reset /step /state /mcp answer exactly as uvicorn run directly"
        cat "$work/wait.err" "$work/plain.json" "$work/ref.json" 2>/dev/null | tail -n 20 | diag
fi

# Stepping aside is an exec: the env server is the container's PID 1.
if [ -n "$plain" ] && tr '\0' ' ' <"/proc/$(pid_of "$plain")/cmdline" 2>/dev/null |
        grep -q 'uvicorn server.app:app --host 0.0.0.0 --port 8000'; then
        ok "plain: openenvd exec'd the env server (it is PID 1)"
else
        not_ok "plain: openenvd exec'd the env server (it is PID 1)"
fi

strict=$(run -e OPENENVD_REQUIRE_ISOLATION=1 "$image") || strict=
code=
[ -n "$strict" ] && code=$(timeout 120 docker wait "$strict" 2>/dev/null)
if [ "$code" = 3 ] && logs "$strict" | grep -q 'isolation disabled: .*CAP_SYS_ADMIN.*refusing to start'; then
        ok "plain: OPENENVD_REQUIRE_ISOLATION=1 exits 3 with the reasons"
else
        not_ok "plain: OPENENVD_REQUIRE_ISOLATION=1 exits 3 with the reasons (exit '$code')"
        [ -n "$strict" ] && logs "$strict" | tail -n 10 | diag
fi

# --- privileged lane ---------------------------------------------------------
# Runs an episode (twice: a unit is reset between episodes) against a daemon
# container; $1 names the variant in the test descriptions.
episodes() {
        local c=$1 what=$2 i
        if ! in_netns "$c" wait 8000 /healthz 2>"$work/wait.err"; then
                not_ok "$what: daemon up"
                { cat "$work/wait.err"; logs "$c"; } | tail -n 20 | diag
                return 1
        fi
        for i in 1 2; do
                if in_netns "$c" episode 8000 "$token" >"$work/episode.json" 2>&1; then
                        ok "$what: isolation on, episode $i graded ($(cut -c1-160 "$work/episode.json"))"
                else
                        not_ok "$what: isolation on, episode $i graded"
                        { cat "$work/episode.json"; logs "$c" | tail -n 20; } | diag
                        return 1
                fi
        done
}

# `openenvctl check preflight --json` inside container $1 (may be empty).
preflight_says_on() {
        local c=$1 what=$2
        if [ -n "$c" ] && docker exec "$c" openenvctl check preflight --json >"$work/preflight.json" 2>&1 &&
                grep -q '"isolation": *"on"' "$work/preflight.json"; then
                ok "$what: openenvctl check preflight says isolation on"
        else
                not_ok "$what: openenvctl check preflight says isolation on"
                head -c 3000 "$work/preflight.json" 2>/dev/null | diag
                [ -n "$c" ] && logs "$c" | tail -n 20 | diag
        fi
}

# `openenvctl check enforcement` inside container $1 (may be empty): every
# guarantee holds in every zone.
enforcement_holds() {
        local c=$1 what=$2 code=none
        if [ -n "$c" ]; then
                docker exec "$c" openenvctl check enforcement \
                        --manifest /opt/openenv-echo/openenv.yaml --json >"$work/enforcement.out" 2>&1
                code=$?
        fi
        if [ "$code" = 0 ]; then
                ok "$what: openenvctl check enforcement holds in every zone"
        else
                not_ok "$what: openenvctl check enforcement holds in every zone (exit $code)"
                tail -n 30 "$work/enforcement.out" 2>/dev/null | diag
        fi
}

# docker stop sends SIGTERM to PID 1 (openenvd): a clean shutdown is exit 0.
stops_cleanly() {
        local c=$1 what=$2 code=none
        if [ -n "$c" ]; then
                docker stop -t 30 "$c" >/dev/null 2>&1
                code=$(docker inspect -f '{{.State.ExitCode}}' "$c" 2>/dev/null)
        fi
        if [ "$code" = 0 ]; then
                ok "$what: openenvd exits 0 on docker stop"
        else
                not_ok "$what: openenvd exits 0 on docker stop (exit $code)"
                [ -n "$c" ] && logs "$c" | tail -n 10 | diag
        fi
}

# Exactly the documented command line: the image's own entrypoint, nothing
# added. openenvd mounts the cgroup2 tree itself when it is PID 1 of a
# privileged container on a hybrid host (runc mounts only v1 there), and
# keeps every episode's writable layers on tmpfs (overlayfs refuses upper
# layers on Docker's overlayfs root).
priv=$(run --privileged --cgroupns=private -e "OPENENVD_TOKEN=$token" "$image") || priv=
if [ -n "$priv" ] && in_netns "$priv" wait 8000 /healthz any 2>"$work/wait.err" &&
        in_netns "$priv" episode 8000 "$token" >"$work/episode.json" 2>&1; then
        ok "privileged (image defaults): isolation on, episode graded"
else
        not_ok "privileged (image defaults): isolation on, episode graded"
        { logs "$priv" | tail -n 20; cat "$work/wait.err" "$work/episode.json"; } 2>/dev/null | diag
fi
preflight_says_on "$priv" "privileged"
if [ -n "$priv" ]; then
        episodes "$priv" "privileged" || true
else
        not_ok "privileged: container started"
fi
# Episodes that did not run are failures, not passes: pad the plan.
while [ "$n" -lt 9 ]; do not_ok "privileged: episode not reached"; done

enforcement_holds "$priv" "privileged"
stops_cleanly "$priv" "privileged"

# --- least-privilege lane ----------------------------------------------------
# deploy/docker/least-privilege.options, exactly: the options the docs list
# and the OpenEnv provider uses (docs/LANES.md has the reason for each).
least=()
while read -r opt; do
        case "$opt" in
        '' | '#'*) continue ;;
        esac
        least+=("${opt/SECCOMP_PROFILE/$repo/deploy/docker/openenvd-seccomp.json}")
done <"$repo/deploy/docker/least-privilege.options"
echo "# least privilege: ${least[*]}"
lp=$(run "${least[@]}" -e "OPENENVD_TOKEN=$token" "$image") || lp=
if [ -n "$lp" ] && ! in_netns "$lp" wait 8000 /healthz any 2>"$work/wait.err"; then
        { cat "$work/wait.err"; logs "$lp" | tail -n 20; } | diag
fi
preflight_says_on "$lp" "least privilege"
before=$n
[ -n "$lp" ] && { episodes "$lp" "least privilege" || true; }
while [ "$n" -lt $((before + 2)) ]; do not_ok "least privilege: episode not reached"; done

enforcement_holds "$lp" "least privilege"
stops_cleanly "$lp" "least privilege"

# The same options minus one critical option (or with it reversed):
# openenvd refuses (exit 3, OPENENVD_REQUIRE_ISOLATION=1) and its reason
# names the missing option in Docker's words.
without() { # PATTERN REPLACEMENT... -> prints the options, one per line
        local pat=$1 o
        shift
        for o in "${least[@]}"; do
                [[ "$o" == $pat ]] || printf '%s\n' "$o"
        done
        [ $# -eq 0 ] || printf '%s\n' "$@"
}
refuses() { # WHAT EXPECTED-REASON-REGEX OPTIONS...
        local what=$1 want=$2 c code
        shift 2
        c=$(run "$@" -e OPENENVD_REQUIRE_ISOLATION=1 "$image") || c=
        code=
        [ -n "$c" ] && code=$(timeout 120 docker wait "$c" 2>/dev/null)
        if [ "$code" = 3 ] && logs "$c" | grep -Eq "isolation disabled: .*$want"; then
                ok "least privilege $what: exits 3, reason names it"
        else
                not_ok "least privilege $what: exits 3, reason names it (exit '$code')"
                [ -n "$c" ] && logs "$c" | tail -n 5 | diag
        fi
        [ -n "$c" ] && logs "$c" | grep -o 'isolation disabled: .*' | cut -c1-400 | diag
}
mapfile -t opts < <(without '--security-opt=seccomp=*')
refuses "without the seccomp profile" \
        'pivot_root: pivot_root: Operation not permitted: add --security-opt seccomp=openenvd-seccomp.json' \
        "${opts[@]}"
mapfile -t opts < <(without '--cap-add=SYS_ADMIN')
refuses "without SYS_ADMIN" \
        'privileges: missing from the effective set: CAP_SYS_ADMIN: add --cap-add SYS_ADMIN' \
        "${opts[@]}"
mapfile -t opts < <(without '--security-opt=systempaths=unconfined')
refuses "without systempaths=unconfined" \
        'procfs: fsmount: Operation not permitted: add --security-opt systempaths=unconfined' \
        "${opts[@]}"
mapfile -t opts < <(without '--cgroupns=private' --cgroupns=host)
refuses "with --cgroupns=host" 'cgroups: .*: add --cgroupns=private' "${opts[@]}"

# --- the real OpenEnv: its echo_env's image, its unmodified client ------------
openenv_real=${OPENENVD_OPENENV_REAL:-$(cd "$repo/.." && pwd)/shared/openenv-real}
openenv_cases=("openenv image: echo_env with ENTRYPOINT [openenvd, --] and its own CMD built"
        "openenv image, privileged: its CMD isolated; two episodes of the stock client, graded"
        "openenv image, plain: steps aside into its CMD (PID 1, no OPENENVD_*); the stock client's session"
        "provider: a ContainerProvider; docker run with exactly the least-privilege options"
        "provider: base_url http://openenv:TOKEN@127.0.0.1:PORT, ready"
        "provider: /info with the token says isolation on (401 without)"
        "provider: EchoEnv.from_docker_image: a full episode through the stock client"
        "provider: close() stops and removes the container")
openenv_missing() { # REASON
        for d in "${openenv_cases[@]}"; do
                if [ "${CI:-}" = true ]; then
                        not_ok "$d: $1"
                else
                        skip "$d" "$1"
                fi
        done
}
# The stock client, with OpenEnv on its path (no __pycache__ in the fixture),
# in a container's network namespace.
oclient() { # CONTAINER SCENARIO ARGS...
        local c=$1 net
        shift
        net=$(netns_of "$c") || return 1
        timeout 600 nsenter "$net" env PYTHONDONTWRITEBYTECODE=1 \
                PYTHONPATH="$openenv_real/envs:$openenv_real/src:$work/pylib" \
                "$PY" "$repo/tests/integration/openenv_client.py" "$@"
}
js() { # FILE PYTHON-EXPRESSION over the JSON `s` -> exit status
        "$PY" -c "import json, sys; s = json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" \
                "$1" 2>/dev/null
}
oimage=
if [ ! -f "$openenv_real/pylib.tar.xz" ]; then
        openenv_missing "the real OpenEnv is not at $openenv_real (set OPENENVD_OPENENV_REAL)"
elif ! tar -xJf "$openenv_real/pylib.tar.xz" -C "$work"; then
        openenv_missing "cannot unpack pylib.tar.xz"
elif ! oimage=$("$repo/scripts/build-image.sh" --openenv "$openenv_real" "$build" \
        2>"$work/build-openenv.log"); then
        diag <"$work/build-openenv.log"
        oimage=
        openenv_missing "cannot build the openenv image"
else
        grep -q "built $oimage" "$work/build-openenv.log" && [ -z "$private_dockerd" ] && obuilt=1
        ok "${openenv_cases[0]} ($oimage)"

        # Privileged: isolation on, the image's own CMD is the env server.
        oc=$(run --privileged --cgroupns=private -e "OPENENVD_TOKEN=$token" "$oimage") || oc=
        if [ -n "$oc" ] && in_netns "$oc" wait 8000 /healthz 2>"$work/wait.err" &&
                oclient "$oc" echo-episodes "http://openenv:$token@127.0.0.1:8000" 2 \
                        >"$work/oepisodes.json" 2>"$work/oclient.err" &&
                js "$work/oepisodes.json" 'len(s["episodes"]) == 2 and all(e["verdict"]["verdict"] == "graded" and e["phase_after_calls"] == "running" and e["said"] == "episode %d" % i for i, e in enumerate(s["episodes"]))' &&
                logs "$oc" | grep -q 'no openenv.yaml: all defaults' &&
                ! logs "$oc" | grep -q 'isolation disabled'; then
                ok "${openenv_cases[1]}"
        else
                not_ok "${openenv_cases[1]}"
                { cat "$work/wait.err" "$work/oepisodes.json" "$work/oclient.err"; [ -n "$oc" ] && logs "$oc"; } 2>/dev/null | tail -n 30 | diag
        fi
        [ -n "$oc" ] && docker rm -f -v "$oc" >/dev/null 2>&1

        # Plain: openenvd steps aside; the env server is PID 1, as it would
        # be without openenvd, and does not see openenvd's variables.
        oc=$(run -e "OPENENVD_TOKEN=$token" "$oimage") || oc=
        pid1=
        [ -n "$oc" ] && pid1=$(pid_of "$oc")
        if [ -n "$oc" ] && in_netns "$oc" wait 8000 /health 2>"$work/wait.err" &&
                oclient "$oc" echo-session "http://openenv:$token@127.0.0.1:8000" \
                        >"$work/osession.json" 2>"$work/oclient.err" &&
                js "$work/osession.json" 's["tools"] == ["echo_message", "echo_with_length"] and s["said"] == "hello"' &&
                logs "$oc" | grep -q 'isolation disabled: ' &&
                logs "$oc" | grep -q 'exec sh -c cd /app/env && uvicorn server.app:app --host 0.0.0.0 --port 8000' &&
                tr '\0' ' ' <"/proc/$pid1/cmdline" | grep -q '^sh -c cd /app/env' &&
                ! tr '\0' '\n' <"/proc/$pid1/environ" | grep -q '^OPENENVD_'; then
                ok "${openenv_cases[2]}"
        else
                not_ok "${openenv_cases[2]}"
                { cat "$work/wait.err" "$work/osession.json" "$work/oclient.err"; [ -n "$oc" ] && logs "$oc"; } 2>/dev/null | tail -n 30 | diag
        fi
        [ -n "$oc" ] && docker rm -f -v "$oc" >/dev/null 2>&1

        # The OpenEnv provider (python/openenvd_provider.py). Its port is
        # published on 127.0.0.1 of the daemon's network namespace (the
        # private daemon's own, see scripts/dockerd.sh): the check runs there.
        netns=()
        [ -n "$private_dockerd" ] && netns=(nsenter -t "$(cat "$work/docker/dockerd.pid")" -n)
        PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$openenv_real/envs:$openenv_real/src:$work/pylib" \
                timeout 600 "${netns[@]}" "$PY" \
                "$here/provider_check.py" "$oimage" >"$work/provider.json" 2>"$work/provider.err"
        checks=('s["subclass"] and s["options_exact"] and s["token_not_in_argv"] and s["seccomp_profile_sent"] and s["host_config"]["CapDrop"] == ["ALL"] and s["host_config"]["CgroupnsMode"] == "private" and s["host_config"]["MaskedPaths"] == [] and not s["host_config"]["Privileged"]'
                's["base_url_ok"] and s["ready"]'
                's["info"]["isolation"] == "on" and s["info_without_token"] == 401'
                's["episode"]["tools"] == ["echo_message", "echo_with_length"] and s["episode"]["said"] == "through the provider" and s["episode"]["phase"] == "running" and s["episode"]["actions"] >= 1'
                's["removed"]')
        for i in 0 1 2 3 4; do
                if js "$work/provider.json" "${checks[i]}"; then
                        ok "${openenv_cases[i + 3]}"
                else
                        not_ok "${openenv_cases[i + 3]}"
                        cat "$work/provider.json" "$work/provider.err" 2>/dev/null | tail -n 20 | diag
                fi
        done
        cut -c1-600 "$work/provider.json" | diag
fi

# --- nothing left behind -----------------------------------------------------
remove_containers
left=$(docker ps -aq --filter "label=openenvd-lanes=$run_id")
if [ -z "$left" ]; then
        ok "all lane containers removed"
else
        not_ok "all lane containers removed: $left"
fi

# The one plan line must match: a case that never ran is a failure.
while [ "$n" -lt "$planned" ]; do not_ok "case not reached"; done
echo "# lanes took $((SECONDS - start))s"
[ "$failed" -eq 0 ]
