#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Attack: the unit's port and the daemon's own voice (issue 24, point 6).

An env whose last output line carried one byte that is not UTF-8 made the
verdict lose its `reason` and `output_tail` altogether (jansson refuses such
a string and the field was silently left out): the agent erased the
explanation of its own failure.

`/verdict?episode_id=<200 chars>` answered with the live verdict: a value
longer than the daemon's buffer read as no value at all.

`--log-format json` did not cover the errors about options that came
before it on the command line, nor getopt's own messages.

Under a hard RLIMIT_NOFILE of 1024 every provisioning failed with
`rlimit: Operation not permitted` (each container was given 4096).

Must not happen: a verdict without its reason or output tail, whatever
bytes the agent wrote; a malformed query value answered other than 400
with a message; a line on stderr that is not a JSON log entry under
--log-format json; an episode that cannot start because of the daemon's
own fd limit; anything left behind.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attacklib as A  # noqa: E402
from attacklib import check  # noqa: E402


def manifest(run, env_moves=()):
    return run.manifest(A.manifest_head("relay-seams") + """\
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
        check(isinstance(reason, str) and "boom \\xff\\x80 end" in reason,
              "the reason quotes the line, escaped: %r" % (v,))
        ev = [e for e in v["events"] if e.get("what") == "exited" and e.get("container") == "env"]
        check(ev and "boom \\xff\\x80 end" in (ev[0].get("output_tail") or ""),
              "the output tail is in the event, escaped: %r" % (v["events"],))
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        d.kill()


def case_query_values(run):
    d = A.Daemon(run, manifest(run))
    try:
        eid = d.info()["episode_id"]
        live = d.ok("GET", "/verdict")
        for target in ("/verdict?episode_id=" + "a" * 200, "/verdict?episode_id=",
                       "/verdict?episode_id", "/verdict?episode_id=%s&episode_id=%s" % (eid, eid),
                       "/verdict?episode_id=" + eid + "%00", "/verdict?episode_id=../" + eid,
                       "/verdict?episode=" + eid, "/verdict?episode_id=%s&" % eid,
                       "/logs?container=" + "e" * 300, "/logs?container=env&episode_id=" + "1" * 80,
                       "/logs?container=env&x=1", "/info?episode_id=" + "a" * 200,
                       "/metrics?format=json"):
            status, j = d.request("GET", target)
            check(status == 400, "GET %s -> %s %s, not 400" % (target[:80], status, j))
            err = j.get("error") if isinstance(j, dict) else None
            check(err and err.get("code") == "bad_request" and err.get("message"),
                  "GET %s: a 400 with a message: %r" % (target[:80], j))
        # What is well-formed still works.
        check(d.ok("GET", "/verdict?episode_id=" + eid) == live, "the episode's own verdict")
        check(d.request("GET", "/verdict?episode_id=0123456789ab")[0] == 404, "an unknown id")
        check(d.request("GET", "/logs?container=env&episode_id=" + eid)[0] == 200, "the logs")
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        d.kill()


def case_json_log_from_the_first_byte(run):
    import json
    import subprocess
    bad = (["--port", "99999"], ["--bogus"], ["--state", "relative"], ["--log-level", "loud"],
           ["--rootfs", "/nonexistent"], ["--model-url", "http://127.0.0.1:1"],
           ["--model-provider", "other"], ["--start-timeout", "soon"], ["--test-weaken", "x"])
    for args in bad:
        for flag in (["--log-format", "json"], ["--log-format=json"]):
            p = subprocess.run([A.OPENENVD] + args + flag, capture_output=True, timeout=30,
                               stdin=subprocess.DEVNULL)
            check(p.returncode == 2, "%s: exit %d" % (args, p.returncode))
            lines = p.stderr.decode("utf-8", "replace").splitlines()
            check(lines and not p.stdout, "%s: an error on stderr only: %r" % (args, p.stdout))
            for line in lines:
                try:
                    entry = json.loads(line)
                except ValueError:
                    entry = None
                check(isinstance(entry, dict) and entry.get("level") == "err" and entry.get("msg"),
                      "%s %s: a line that is no JSON log entry: %r" % (args, flag, line))


def case_hard_fd_limit(run):
    d = A.Daemon(run, manifest(run), nofile=1024, nofile_hard=True)
    try:
        check(d.phase() == "ready", "the first episode is ready at a hard limit of 1024 fds: %s\n%s"
              % (d.phase(), d.tail()))
        check(d.ok("POST", "/step", {"action": {"message": "x"}})["observation"]["steps"] == 1,
              "a step")
        limits = d.attack("read", path="/proc/self/limits").get("data") or ""
        line = [x for x in limits.splitlines() if x.startswith("Max open files")]
        check(line and line[0].split()[3] == "1024" and line[0].split()[4] == "1024",
              "the env lives within the daemon's hard limit: %r" % limits)
        check(re.search(r"file descriptors: .*1024", A.read(d.log) or ""),
              "the daemon says at start what it lives within:\n%s" % d.tail())
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        d.kill()


CASES = [
    ("bytes that are not UTF-8 in an env's last output line are escaped in the verdict's "
     "reason and output tail, never the reason the fields are dropped",
     case_output_that_is_not_utf8),
    ("control-route query values are validated: too long, empty, doubled, escaped or unknown "
     "get 400 with a message, never the live verdict", case_query_values),
    ("--log-format json covers what is printed while the options are parsed, whatever comes "
     "first on the command line", case_json_log_from_the_first_byte),
    ("under a hard RLIMIT_NOFILE of 1024 episodes still provision: containers get what the "
     "daemon was given, and the daemon says so at start", case_hard_fd_limit),
]

if __name__ == "__main__":
    sys.exit(A.main(CASES))
