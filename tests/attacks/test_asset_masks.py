#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Attack: read the answers that sit beside the env's own code.

An image keeps openenv.yaml, the env's own package and the graders' files
in one directory, and the env server starts there. The answers are a file
asset in that directory, the test inputs a directory asset beside it. Every
container sees each asset's source masked (docs/MANIFEST.md): a file alone,
a directory whole, never a file's parent (issue 26: the parent was masked,
so the env could not import its own module and every episode failed).

Every zone tries, from the host's root (the default host view, and the
whole / under --host-root-unfiltered): the env, the harness, a hidden
service, the runner (which lists assets.inputs, not the answers) and the
verdict (which lists assets.answers and the runner's output, not the
inputs). Each reads the answers and the inputs at their host paths, and at
/assets/<name>.

Must not happen: the env fails to start or to import its module beside the
answers; a daemon started inside an asset's directory (where the env would
start) runs instead of refusing; any zone reads the answers or the inputs at their host paths; an
observer sees an asset it does not list. The controls: the env imports and
reads its own code; the runner reads the inputs and the verdict the answers
at /assets.
"""
import json
import os
import secrets
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attacklib as A  # noqa: E402
from attacklib import check  # noqa: E402

START = """\
import os, runpy, sys
import envcode  # the env's own module, beside openenv.yaml and the answers
assert envcode.MARK == "ENV-CODE-OK"
attacker = sys.argv[1]
sys.path.insert(0, os.path.dirname(attacker))
sys.argv = [attacker] + sys.argv[2:]
runpy.run_path(attacker, run_name="__main__")
"""
ZONES = ("env", "harness", "svc", "runner", "verdict")


def moves(t):
    """What every zone tries, in this order (reports are matched by index)."""
    return ["read", {"path": t["answers"]}, "listdir", {"path": t["cases"]},
            "read", {"path": os.path.join(t["cases"], "in1.json")},
            "read", {"path": "/assets/answers/answers.json"},
            "read", {"path": "/assets/inputs/in1.json"},
            "read", {"path": t["code"]}]


def unit(run):
    """The unit's directory as an image lays it out, and its secrets."""
    answer, given = "ANSWER-" + secrets.token_hex(6), "INPUT-" + secrets.token_hex(6)
    files = {"envcode.py": 'MARK = "ENV-CODE-OK"\n', "start_env.py": START,
             "answers.json": json.dumps({"expected": answer}),
             "cases/in1.json": json.dumps({"input": given})}
    d = run.path("unit-%d" % (run.n + 1))  # the dir run.manifest() makes next
    t = {"answer": answer, "input": given, "answers": os.path.join(d, "answers.json"),
         "cases": os.path.join(d, "cases"), "code": os.path.join(d, "envcode.py")}
    m = moves(t)
    program = run.rootfs + A.ATTACKER[1]
    head = A.manifest_head("asset-masks", assets=[("answers", "answers.json"),
                                                  ("inputs", "cases")])
    observer = A.argv("observer", *m, host_root=run)
    t["manifest"] = run.manifest(head + A.zones(
        json.dumps(["python3", "start_env.py", program, "env", "8000"]),
        A.argv("harness", *m, host_root=run), A.argv("service", "8080", *m, host_root=run),
        [("runner", {"argv": observer, "reads": "[assets.inputs]", "phases": "[grading]",
                     "output": "/out/verdict.json"}),
         ("verdict", {"argv": observer, "reads": "[assets.answers, runner.output]",
                      "after": "runner", "phases": "[grading]"})]), assets=files)
    check(os.path.dirname(t["manifest"]) == d, "the unit's dir: %s" % t["manifest"])
    return t


def reports(d, t, eid):
    out = d.zone_reports(moves(t), eid)
    d.ok("POST", "/step", {"action": {"message": "x"}})
    v = d.ok("POST", "/end_episode", timeout=120)
    check(v["verdict"] == "graded", "graded: %s" % v)
    out["runner"] = v["observers"]["runner"]["results"]
    out["verdict"] = v["observers"]["verdict"]["results"]
    return out


def attempt(run, unfiltered):
    t = unit(run)
    args = A.UNFILTERED if unfiltered else []
    d = A.Daemon(run, t["manifest"], args=args, rootfs=False)
    try:
        eid = d.info()["episode_id"]
        got = reports(d, t, eid)
        for zone in ZONES:
            rep = got[zone]
            check(rep and len(rep) == len(moves(t)) // 2, "%s reported: %s" % (zone, rep))
            answers, listing, given, in_answers, in_inputs, code = rep
            check(t["answer"] not in json.dumps(answers),
                  "%s read the answers beside the env's code: %s" % (zone, answers))
            check(not listing.get("ok") or listing["entries"] == [],
                  "%s lists the inputs' directory: %s" % (zone, listing))
            check(not given.get("ok") and t["input"] not in json.dumps(given),
                  "%s read an input at its host path: %s" % (zone, given))
            if zone == "verdict":
                check(in_answers.get("ok") and t["answer"] in in_answers["data"],
                      "control: the verdict reads the answers it lists: %s" % in_answers)
            else:
                check(not in_answers.get("ok"), "%s reads /assets/answers: %s"
                      % (zone, in_answers))
            if zone == "runner":
                check(in_inputs.get("ok") and t["input"] in in_inputs["data"],
                      "control: the runner reads the inputs it lists: %s" % in_inputs)
            else:
                check(not in_inputs.get("ok"), "%s reads /assets/inputs: %s" % (zone, in_inputs))
            if zone == "env" or unfiltered:
                # The answers' neighbour: the env's own code stays in view.
                check(code.get("ok") and "ENV-CODE-OK" in code["data"],
                      "control: %s reads the env's code beside the answers: %s" % (zone, code))
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        d.kill()


def case_host_view(run):
    attempt(run, False)


def case_whole_root(run):
    attempt(run, True)


def case_started_inside_an_asset(run):
    # The manifest cannot know where openenvd starts (an image's WORKDIR):
    # started in an asset's directory, the env's would be masked in every
    # episode. Refused at once, with what to do, and nothing left.
    t = unit(run)
    d = A.Daemon(run, t["manifest"], rootfs=False, wait=False, cwd=t["cases"])
    try:
        d.proc.wait(60)
        check(d.proc.returncode == 2, "refused as invalid: %s\n%s"
              % (d.proc.returncode, d.tail()))
        log = A.read(d.log) or ""
        check("which asset 'inputs' (%s) is" % t["cases"] in log and
              "start openenvd in the unit's own directory" in log, "says why:\n%s" % log)
        d.assert_nothing_left()
    finally:
        d.kill()


CASES = [
    ("host view: the env imports its module beside a file asset; no zone reads the answers "
     "or the inputs at their host paths, each observer only the asset it lists",
     case_host_view),
    ("the whole / as root: the same masks, file by file", case_whole_root),
    ("openenvd started inside an asset's directory refuses at once: the env's directory "
     "would be masked", case_started_inside_an_asset),
]

if __name__ == "__main__":
    sys.exit(A.main(CASES))
