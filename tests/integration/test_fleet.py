#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The fleet driver (tools/fleet.py) with 4 units of OpenEnv's connect4_env,
driven by the real OpenEnv client: liveness and correctness only (no timing;
the numbers are bench/fleet's).

    test_fleet.py OPENENVD SHIM

Each of the driver's checks is one TAP case. Without root, or without
../shared/openenv-real or python3-numpy (the driver exits 3 and names what is
missing), the cases are skipped, and fail under CI=true.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FLEET = os.path.join(HERE, "..", "..", "tools", "fleet.py")
UNITS, EPISODES = 4, 3
# What the driver checks, in its order (its report must list each).
CHECKS = [
    "every unit started isolated, a standby ready",
    "uid blocks are disjoint",
    "every unit completed its episodes",
    "every observation is the one this unit's own moves produce",
    "every verdict is graded and names this unit's episode",
    "each unit's /metrics counts exactly its own episodes and actions",
    "every container ran inside its own unit's uid block; no socket or network namespace "
    "shared between units",
    "every unit exits 0 on SIGTERM and leaves no cgroup",
    "every line of every daemon's log is a JSON object",
]


def in_ci():
    return os.environ.get("CI") in ("true", "1")


def main():
    openenvd, shim = (os.path.abspath(p) for p in sys.argv[1:3])
    print("1..%d" % len(CHECKS))
    if os.geteuid() != 0:
        missing = "needs root"
        r = None
    else:
        with tempfile.NamedTemporaryFile(prefix="openenvd-fleet-test.", suffix=".json") as out:
            r = subprocess.run(["/usr/bin/python3", FLEET, "--openenvd", openenvd, "--shim", shim,
                                "--units", str(UNITS), "--episodes", str(EPISODES),
                                "--json", out.name], capture_output=True, text=True)
            for line in r.stdout.splitlines() + r.stderr.splitlines()[-20:]:
                print("# " + line)
            report = json.load(open(out.name)) if r.returncode in (0, 1) else None
        missing = r.stderr.strip().splitlines()[-1] if r.returncode == 3 else None
    if missing:
        for i, name in enumerate(CHECKS, 1):
            if in_ci():
                print("not ok %d - %s # %s" % (i, name, missing))
            else:
                print("ok %d - %s # SKIP %s" % (i, name, missing))
        return 1 if in_ci() else 0
    got = {c["check"]: c for c in (report or {}).get("checks", [])}
    failed = 0
    for i, name in enumerate(CHECKS, 1):
        c = got.get(name)
        if c and c["ok"]:
            print("ok %d - %s" % (i, name))
            continue
        failed += 1
        print("not ok %d - %s" % (i, name))
        detail = c["detail"] if c else "not reported (driver exit %s)" % (r and r.returncode)
        for line in (detail or "").splitlines():
            print("# " + line)
        for extra in (report or {}).get("checks", []):
            if extra["check"] not in CHECKS and not extra["ok"]:
                print("# %s: %s" % (extra["check"], extra["detail"]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
