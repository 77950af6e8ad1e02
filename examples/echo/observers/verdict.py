# SPDX-License-Identifier: LGPL-2.1-or-later
"""Verdict: reads the oracle (read-only, nosymfollow), the runner's report
(custody copy) and the hidden service's state, then scores the episode."""
import json
import os

assets = os.environ.get("OPENENVD_ASSETS", "/assets")
inputs = os.environ.get("OPENENVD_INPUTS", "/inputs")
services = os.environ.get("OPENENVD_SERVICES", "/services")
out = os.environ.get("OPENENVD_OUT", "/out")


def load(path, default=None):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return default


oracle = load(os.path.join(assets, "oracle", "oracle.json"), {})
report = load(os.path.join(inputs, "runner", "report.json"), {})
try:
    with open(os.path.join(services, "sim", "log.txt")) as f:
        sim_lines = f.read().splitlines()
except OSError:
    sim_lines = []
expected = oracle.get("expected_steps", 3)
score = 1.0 if report.get("steps", 0) >= expected else 0.0
with open(os.path.join(out, "verdict.json"), "w") as f:
    json.dump({"score": score, "steps_seen": report.get("steps", 0), "expected": expected,
               "sim_lines": len(sim_lines), "runner_saw_assets": report.get("assets_visible")}, f)
