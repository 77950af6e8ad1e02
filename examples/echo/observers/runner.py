# SPDX-License-Identifier: LGPL-2.1-or-later
"""Runner: sees the agent's workspace (read-only), never the assets.
Summarises it into /out/report.json for the verdict observer."""
import json
import os

ws = os.environ.get("OPENENVD_WORKSPACE", "/workspace")
out = os.environ.get("OPENENVD_OUT", "/out")
try:
    with open(os.path.join(ws, "transcript.txt")) as f:
        transcript = f.read().splitlines()
except OSError:
    transcript = []
report = {"steps": len(transcript), "transcript": transcript[:100],
          "assets_visible": os.path.exists("/assets") and bool(os.listdir("/assets"))}
with open(os.path.join(out, "report.json"), "w") as f:
    json.dump(report, f)
with open(os.path.join(out, "verdict.json"), "w") as f:
    json.dump({"ran": True, "steps": report["steps"]}, f)
