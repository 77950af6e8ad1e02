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
#                long-lived `bench-launch --serve` (filter compiled once, a
#                network namespace made for each container after the last
#                one's answer, as the daemon makes one while it provisions a
#                standby) to start one container and waits for its
#                status -- the daemon's path as a CLI sees it, like docker;
#              "(daemon, fresh netns)": the same server with --fresh-netns
#                (the clone makes the container's network namespace: the
#                daemon's path without one of its own);
#              "(one-shot)": a new bench-launch process per run, which also
#                compiles the seccomp filter (~2 ms, once per daemon);
#              "(in-process)": bench-launch -n N --steps, the daemon's own
#                cost per spawn (premade and fresh netns), in the same run
#                after hyperfine, with the median of every step
#                (struct container_timing) and the CPU time per spawn of all
#                processes involved (getrusage: stable under load).
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
TMPDIR="$WORK" "$BENCH_LAUNCH" --fresh-netns --serve "$WORK/serve-fresh.sock" &
SERVER_FRESH=$!
trap 'kill $SERVER $SERVER_FRESH 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -S "$WORK/serve.sock" ] && [ -S "$WORK/serve-fresh.sock" ] && break; sleep 0.05; done
add "native (daemon)" "$BENCH_CLIENT $WORK/serve.sock"
add "native (daemon, fresh netns)" "$BENCH_CLIENT $WORK/serve-fresh.sock"
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

# The daemon's per-spawn cost and its steps, measured in the same run.
"$BENCH_LAUNCH" -n "$MIN_RUNS" --steps > "$WORK/inproc.txt"
"$BENCH_LAUNCH" -n "$MIN_RUNS" --steps --fresh-netns > "$WORK/inproc-fresh.txt"

"$PY" - "$WORK/h.json" "$WORK/inproc.txt" "$WORK/inproc-fresh.txt" <<'EOF'
import json, os, re, sys
res = json.load(open(sys.argv[1]))["results"]
def inproc(path):
    text = open(path).read()
    med = int(re.search(r"median (\d+) us", text).group(1)) / 1000.0
    cpu = int(re.search(r"CPU (\d+) us", text).group(1)) / 1000.0
    steps = re.search(r"step medians \(us\):(.*)", text).group(1).split()
    return med, cpu, list(zip(steps[::2], steps[1::2]))
kept, fresh = inproc(sys.argv[2]), inproc(sys.argv[3])
rows = [(r["command"], r["median"] * 1000, r["min"] * 1000) for r in res]
rows.insert(2, ("native (in-process)", kept[0], None))
rows.insert(3, ("native (in-proc, fresh)", fresh[0], None))
print(f"bench/launch: /bin/true start to exit, hyperfine -N, load {os.getloadavg()[0]:.1f}")
print(f"{'launcher':<28} {'median ms':>10} {'min ms':>8} {'x native daemon':>16} {'x native in-proc':>17}")
med = {name: m for name, m, _ in rows}
daemon, inp = med["native (daemon)"], kept[0]
for name, m, mn in rows:
    mns = f"{mn:8.2f}" if mn is not None else f"{'-':>8}"
    print(f"{name:<28} {m:10.2f} {mns} {m / daemon:16.2f} {m / inp:17.2f}")
print(f"CPU per spawn, all processes (getrusage): premade netns {kept[1]:.2f} ms, fresh netns {fresh[1]:.2f} ms")
print("step medians, premade netns (us): " + " ".join(f"{k} {v}" for k, v in kept[2]))
print("step medians, fresh netns (us): " + " ".join(f"{k} {v}" for k, v in fresh[2]))
ok = lambda c: "met" if c else "MISSED"
print(f"target: native (daemon) <= 1.5 ms median: {daemon:.2f} ms: {ok(daemon <= 1.5)}")
for other, want in (("bwrap", 3), ("crun", 6)):
    if other in med:
        x = med[other] / daemon
        print(f"target: >= {want}x {other} (daemon path): {x:.2f}x: {ok(x >= want)}")
    else:
        print(f"target: >= {want}x {other}: {other} unavailable")
EOF
