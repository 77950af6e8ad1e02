#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Attack: the unit's port and the daemon's own voice (issue 24, point 6).

An env whose last output line carried one byte that is not UTF-8 made the
verdict lose its `reason` and `output_tail` altogether (jansson refuses such
a string and the field was silently left out): the agent erased the
explanation of its own failure.

Must not happen: a verdict without its reason or output tail, whatever
bytes the agent wrote; anything left behind.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attacklib as A  # noqa: E402
from attacklib import check  # noqa: E402


def manifest(run, env_moves=()):
    return run.manifest("""
spec_version: 1
name: relay-seams
port: 8000
openenvd:
  kill_deadline_s: 5
  zones:
    agent:
      containers:
        env:
          argv: %s
""" % A.argv("env", "8000", *env_moves))


def case_output_that_is_not_utf8(run):
    # The env prints a line with 0xff and a lone continuation byte, then
    # exits while starting: the verdict quotes that line.
    moves = ("emit_latin1", {"text": "boom \xff\x80 end\n"}, "exit_now", {"status": 3})
    d = A.Daemon(run, manifest(run, moves))
    try:
        v = d.ok("GET", "/verdict")
        check(v["verdict"] is not None, "a verdict: %s" % v)
        reason = v.get("reason")
        check(isinstance(reason, str) and "boom \ufffd\ufffd end" in reason,
              "the reason quotes the line, escaped: %r" % (v,))
        ev = [e for e in v["events"] if e.get("what") == "exited" and e.get("container") == "env"]
        check(ev and "boom \ufffd\ufffd end" in (ev[0].get("output_tail") or ""),
              "the output tail is in the event, escaped: %r" % (v["events"],))
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        d.kill()


CASES = [
    ("bytes that are not UTF-8 in an env's last output line are escaped in the verdict's "
     "reason and output tail, never the reason the fields are dropped",
     case_output_that_is_not_utf8),
]

if __name__ == "__main__":
    sys.exit(A.main(CASES))
