#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Start-to-exit of a confined /bin/true, side by side in ONE hyperfine run:
# the native launcher (bench-launch), runc, crun, bubblewrap, unshare and
# docker run (only if a daemon answers). Prints medians and ratios.
#
#   sudo bench/launch/run.sh [BUILD_DIR] [MIN_RUNS]
#
# What each row starts (all run /bin/true from a read-only view of /):
#   native     bench-launch: user+mount+pid+net+ipc+uts+cgroup namespaces,
#              private ro recursive bind of /, /proc with masks, /dev, /sys,
#              /tmp, /run, socket dir, no capabilities, no_new_privs,
#              seccomp allowlist, shim as PID 1. Three rows:
#              "(daemon)": hyperfine runs bench-launch-client, which asks a
#                long-lived `bench-launch --serve` (filter compiled once, as
#                in the daemon) to start one container and waits for its
#                status -- the daemon's path as a CLI sees it, like docker;
#              "(one-shot)": a new bench-launch process per run, which also
#                compiles the seccomp filter (~2 ms, once per daemon);
#              "(in-process)": bench-launch -n N, the daemon's own cost per
#                spawn, measured in the same run after hyperfine.
#   runc/crun  OCI bundle from `crun spec`, rootfs = ro bind of /, namespaces
#              pid, network, ipc, uts, mount, cgroup (no user namespace, no
#              seccomp: less work than native), cgroupfs v1.
#   bwrap      --ro-bind / / --unshare-all --proc /proc --dev /dev
#   unshare    --fork --pid --mount --net --ipc --uts --cgroup --user --map-root-user
#   docker     docker run --rm --network none IMAGE true (a local image only;
#              nothing is pulled).
#
# crun 1.8 refuses hybrid cgroup hosts whose cgroup2 has controllers; as in
# reference/anchors.md the whole run happens in a private mount namespace in
# which an empty file is bind-mounted over /sys/fs/cgroup/unified/cgroup.controllers
# (no global change). crun is reported "unavailable" if it still fails.
set -euo pipefail

BUILD=${1:-build}
MIN_RUNS=${2:-100}
BENCH_LAUNCH=$(realpath "$BUILD/bench/launch/bench-launch")
BENCH_CLIENT=$(realpath "$BUILD/bench/launch/bench-launch-client")
PY=/usr/bin/python3

if [ "$(id -u)" != 0 ]; then
        echo "run.sh: needs root" >&2
        exit 1
fi
[ -x "$BENCH_LAUNCH" ] || { echo "run.sh: $BENCH_LAUNCH not built" >&2; exit 1; }

if [ -z "${BENCH_LAUNCH_INNER:-}" ]; then
        WORK=$(mktemp -d /tmp/bench-launch-run.XXXXXX)
        # The container's root (host uid 100000) opens its socket dir here.
        chmod 0755 "$WORK"
        cleanup() {
                umount "$WORK/bundle/rootfs" 2>/dev/null || true
                runc delete -f bl-runc >/dev/null 2>&1 || true
                crun delete -f bl-crun >/dev/null 2>&1 || true
                rm -rf "$WORK"
        }
        trap cleanup EXIT

        mkdir -p "$WORK/bundle/rootfs"
        mount --bind / "$WORK/bundle/rootfs"
        mount -o remount,bind,ro "$WORK/bundle/rootfs"
        (cd "$WORK/bundle" && crun spec)
        "$PY" - "$WORK/bundle/config.json" <<'EOF'
import json, sys
p = sys.argv[1]
c = json.load(open(p))
c["process"]["terminal"] = False
c["process"]["args"] = ["/bin/true"]
c["root"] = {"path": "rootfs", "readonly": True}
c["linux"]["namespaces"] = [{"type": t} for t in ("pid", "network", "ipc", "uts", "mount", "cgroup")]
json.dump(c, open(p, "w"), indent=1)
EOF
        : > "$WORK/empty_controllers"
        # Everything below runs in a private mount namespace (for crun); not
        # exec'd, so that the cleanup trap runs afterwards.
        BENCH_LAUNCH_INNER=1 WORK="$WORK" unshare -m --propagation private "$0" "$@"
        exit $?
fi

# --- inner: private mount namespace ---------------------------------------
mount --bind "$WORK/empty_controllers" /sys/fs/cgroup/unified/cgroup.controllers
B="$WORK/bundle"

cmds=()
names=()
add() { names+=("$1"); cmds+=("$2"); }

TMPDIR="$WORK" "$BENCH_LAUNCH" --serve "$WORK/serve.sock" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -S "$WORK/serve.sock" ] && break; sleep 0.05; done
add "native (daemon)" "$BENCH_CLIENT $WORK/serve.sock"
add "native (one-shot)" "$BENCH_LAUNCH"
add "fork/exec /bin/true" "/bin/true"
add "unshare" "unshare --fork --pid --mount --net --ipc --uts --cgroup --user --map-root-user /bin/true"
add "bwrap" "bwrap --ro-bind / / --unshare-all --proc /proc --dev /dev /bin/true"
if crun run --bundle "$B" bl-crun >/dev/null 2>&1; then
        add "crun" "crun run --bundle $B bl-crun"
else
        echo "crun: unavailable ($(crun run --bundle "$B" bl-crun 2>&1 | tail -1))"
        crun delete -f bl-crun >/dev/null 2>&1 || true
fi
if runc run --bundle "$B" bl-runc >/dev/null 2>&1; then
        add "runc" "runc run --bundle $B bl-runc"
else
        echo "runc: unavailable ($(runc run --bundle "$B" bl-runc 2>&1 | tail -1))"
fi
if docker info >/dev/null 2>&1; then
        img=$(docker images --format '{{.Repository}}:{{.Tag}}' | grep -m1 -E 'busybox|alpine|debian' || true)
        if [ -n "$img" ]; then
                add "docker run" "docker run --rm --network none $img true"
        else
                echo "docker: unavailable (no local busybox/alpine/debian image; nothing is pulled)"
        fi
else
        echo "docker: unavailable (no daemon answers)"
fi

args=()
for i in "${!cmds[@]}"; do
        args+=(-n "${names[$i]}" "${cmds[$i]}")
done
hyperfine -N --warmup 5 --min-runs "$MIN_RUNS" --export-json "$WORK/h.json" \
        --style basic "${args[@]}" >/dev/null

# The daemon's per-spawn cost, measured in the same run.
inproc=$("$BENCH_LAUNCH" -n "$MIN_RUNS" | sed -n 's/.*median \([0-9]*\) us.*/\1/p')

"$PY" - "$WORK/h.json" "$inproc" <<'EOF'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
inproc_ms = int(sys.argv[2]) / 1000.0
rows = [(r["command"], r["median"] * 1000, r["min"] * 1000) for r in res]
rows.insert(2, ("native (in-process)", inproc_ms, None))
print(f"{'launcher':<22} {'median ms':>10} {'min ms':>8} {'x native daemon':>16} {'x native in-proc':>17}")
daemon = rows[0][1]
for name, med, mn in rows:
    mns = f"{mn:8.2f}" if mn is not None else f"{'-':>8}"
    print(f"{name:<22} {med:10.2f} {mns} {med / daemon:16.2f} {med / inproc_ms:17.2f}")
EOF
