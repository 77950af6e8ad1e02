# SPDX-License-Identifier: LGPL-2.1-or-later
"""Observers of the live-test units. argv[1] is the role:

  runner    attack from the runner (probelib), copy the harness's report
            from the workspace; both go into /out/verdict.json
  grader    read the oracle asset and the runner's custody copy
  snapshot  (frozen phase) report the env's tick counter from the workspace
  symlink   leave a symlink in /out (custody must refuse it)
  fifo      leave a FIFO in /out (custody must refuse it)
  verdict-symlink  make /out/verdict.json a symlink (an invalid result)
  balloon   allocate until the OOM killer takes it
  watch     (early phases) record the phase it started in, then run until stopped
  phase     record the phase it started in and the start count, exit
  crash     exit 3
  hang      never exit
"""
import json
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import probelib  # noqa: E402

OUT = os.environ.get("OPENENVD_OUT", "/out")
WS = os.environ.get("OPENENVD_WORKSPACE", "/workspace")
role = sys.argv[1]


def result(obj):
    with open(os.path.join(OUT, "verdict.json"), "w") as f:
        json.dump(obj, f)


if role == "runner":
    try:
        with open(os.path.join(WS, "harness.json")) as f:
            harness = json.load(f)
    except (OSError, ValueError) as e:
        harness = {"error": str(e)}
    result({"ran": True, "harness": harness, "runner": probelib.probe_all(probelib.load_cfg()),
            "assets_mount": probelib.list_dir("/assets")})
elif role == "grader":
    oracle = probelib.read_file("/assets/oracle/oracle.json")
    runner = probelib.read_file("/inputs/runner/verdict.json")
    answer = json.loads(oracle["data"]).get("answer") if oracle["ok"] else None
    result({"score": 1.0 if answer == 42 and runner["ok"] else 0.0, "oracle": oracle["ok"],
            "runner_copy": runner["ok"]})
elif role == "snapshot":
    result({"ticks": probelib.read_file(os.path.join(WS, "ticks")).get("data")})
elif role == "symlink":
    os.symlink("/etc/passwd", os.path.join(OUT, "evil-link"))
    result({"ran": True})
elif role == "verdict-symlink":
    os.symlink("/etc/passwd", os.path.join(OUT, "verdict.json"))
elif role == "balloon":
    hog = []
    while True:
        hog.append(bytearray(8 << 20))  # zero-filled: every page is touched
elif role == "fifo":
    os.mkfifo(os.path.join(OUT, "evil-fifo"))
    result({"ran": True})
elif role == "watch":
    result({"phase": os.environ.get("OPENENVD_PHASE")})
    while True:
        signal.pause()
elif role == "phase":
    # /out lives for the whole episode: a second start would count 2.
    try:
        with open(os.path.join(OUT, "verdict.json")) as f:
            starts = json.load(f).get("starts", 0)
    except (OSError, ValueError):
        starts = 0
    result({"phase": os.environ.get("OPENENVD_PHASE"), "starts": starts + 1})
elif role == "crash":
    # Its last words must reach the verdict (an observer_failed event).
    print("judge: the expected answer is missing", file=sys.stderr)
    sys.exit(3)
elif role == "hang":
    while True:
        signal.pause()
