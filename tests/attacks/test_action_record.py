#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Attack: make the record of actions lie to a grader.

A grader that replays the game (examples/connect4/judge.py) must see what
the client sent, whatever agent code does: the env shares the agent zone
with it, so its board and reward are claims. Here the client sends a step,
a step whose JSON holds a key twice (the env reads one value, a naive
grader another), an oversized step and a body that is not JSON; agent code
looks for the record from the env's container.

Must not happen: the agent zone sees /actions; a message in the record the
client did not send, or one missing; a doubled key read as either value; a
record whose count disagrees with OPENENVD_ACTIONS; a record over its bound.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attacklib as A  # noqa: E402
from attacklib import check  # noqa: E402

JUDGE = ("import json, os; "
         "lines = [json.loads(l) for l in open('/actions/actions.jsonl')]; "
         "json.dump({'lines': lines, 'count': os.environ['OPENENVD_ACTIONS']}, "
         "open('/out/verdict.json', 'w'))")


def manifest(run):
    return run.manifest(A.manifest_head("action-record") + """\
    agent:
      containers:
        env:
          argv: %s
    observers:
      containers:
        judge:
          argv: [python3, -c, %s]
          reads: [actions]
          phases: [grading]
""" % (A.argv("env", "8000"), json.dumps(JUDGE)))


def case_record_is_what_was_sent(run):
    d = A.Daemon(run, manifest(run))
    try:
        d.ok("POST", "/step", {"action": {"message": "one"}})
        d.request("POST", "/step", raw_body=b'{"action":{"message":"a"},"action":{"message":"b"}}')
        d.request("POST", "/step", raw_body=json.dumps(
            {"action": {"message": "x" * (70 << 10)}}).encode())
        d.request("POST", "/step", raw_body=b"\xff not json")
        for path in ("/actions", "/actions/actions.jsonl"):
            check(d.attack("exists", path=path)["exists"] is False,
                  "agent code sees %s" % path)
        v = d.ok("POST", "/end_episode")
        check(v["verdict"] == "graded", "graded: %s" % v)
        j = v["observers"]["judge"]
        lines = j["lines"]
        check(int(j["count"]) == v["actions"] == 4 == sum(x["actions"] for x in lines),
              "one count: %s, %s" % (v["actions"], j))
        check([x["n"] for x in lines] == [1, 2, 3, 4] and
              {x["via"] for x in lines} == {"step"}, "numbered steps: %s" % lines)
        check(lines[0]["message"] == {"action": {"message": "one"}}, "the step: %s" % lines[0])
        check([x.get("unread") for x in lines] == [None, "not_json", "too_large", "not_json"],
              "what it could not read it says, never half of: %s"
              % [(x.get("unread"), str(x.get("message"))[:40]) for x in lines])
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        d.kill()


CASES = [
    ("the record holds what the client sent (doubled keys, oversized and non-JSON bodies "
     "named, not guessed), agrees with OPENENVD_ACTIONS, and agent code never sees it",
     case_record_is_what_was_sent),
]

if __name__ == "__main__":
    sys.exit(A.main(CASES))
