#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Attack: reward hacks against hidden tests written as code.

The unit grades a program the agent writes to /workspace/solution.py with
python/openenvd_grading.py in the three observers docs/CUSTODY.md lays out
("Hidden tests as code"): `stage` hands the inputs asset on, `runner`
(workspace and the stage's output, no asset) runs the program on every case
with limits, `verdict` (the answers asset and the runner's output) scores.

Each episode the agent writes another program: an honest one, one that
exits 0 before the work, one that prints an object equal to everything, one
that looks for the answers (at their host path and under /assets), one that
forges the runner's results with a score of its own, one that floods its
output, one that never ends.

Must not happen: any of these scores above 0, or the honest one below 1;
a verdict.json the agent planted in the runner's /out served as
observers.runner; an episode other than graded (what the agent's program does in the runner
is a wrong answer, not a failure of the unit).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attacklib as A  # noqa: E402
from attacklib import check  # noqa: E402

GRADING = "/opt/grading/openenvd_grading.py"
CASES = {"a": ("1 2", "3"), "b": ("20 22", "42"), "c": ("-5 5", "0")}

HONEST = "import sys\nprint(sum(int(x) for x in sys.stdin.read().split()))\n"
HACKS = {
    "exit-early": "import sys\nsys.exit(0)\nprint(sum(int(x) for x in sys.stdin.read().split()))\n",
    "eq-override": ("class Anything:\n"
                    "    def __eq__(self, other): return True\n"
                    "    def __ne__(self, other): return False\n"
                    "    def __repr__(self): return 'Anything()'\n"
                    "print(Anything())\n"),
    "read-answers": ("import glob, sys\n"
                     "seen = []\n"
                     "for p in glob.glob(%r) + glob.glob('/assets/**', recursive=True):\n"
                     "    try: seen.append(open(p).read())\n"
                     "    except OSError: pass\n"
                     "print(''.join(seen) or 'nothing')\n"),
    "forge-results": ("import json\n"
                      "fake = {'version': 1, 'score': 1.0, 'cases': [{'id': c, 'exit_code': 0,"
                      " 'signal': None, 'timed_out': False, 'output_truncated': False,"
                      " 'stdout_b64': 'MQo=', 'passed': True} for c in 'abc']}\n"
                      "json.dump(fake, open('/out/results.json', 'w'))\n"
                      "json.dump({'score': 1.0}, open('/out/verdict.json', 'w'))\n"),
    "flood": "import sys\nwhile True: sys.stdout.write('9' * 65536)\n",
    "never-ends": "import time\ntime.sleep(3600)\n",
}


def manifest(run):
    files = {}
    for cid, (given, want) in CASES.items():
        files["tests/inputs/%s.in" % cid] = given + "\n"
        files["tests/answers/%s.out" % cid] = want + "\n"
    head = A.manifest_head("hidden-tests", assets=[("inputs", "tests/inputs"),
                                                   ("answers", "tests/answers")])
    py = "/usr/bin/python3"
    return run.manifest(head + A.zones(A.argv("env", "8000"), observers=[
        ("stage", {"argv": json.dumps([py, GRADING, "stage", "--from", "/assets/inputs",
                                       "--out", "/out/cases"]),
                   "reads": "[assets.inputs]", "phases": "[grading]", "output": "/out/cases"}),
        ("runner", {"argv": json.dumps([py, GRADING, "run", "--inputs", "/inputs/stage/cases",
                                        "--out", "/out/results.json", "--timeout", "2",
                                        "--output-limit", "65536", "--",
                                        py, "/workspace/solution.py"]),
                    "reads": "[workspace, stage.output]", "phases": "[grading]",
                    "after": "stage", "output": "/out/results.json"}),
        ("verdict", {"argv": json.dumps([py, GRADING, "score", "--answers", "/assets/answers",
                                         "--results", "/inputs/runner/results.json"]),
                     "reads": "[assets.answers, runner.output]", "phases": "[grading]",
                     "after": "runner"})]), assets=files)


def grade(d, program):
    """One episode: the agent writes program as its solution; the verdict."""
    w = d.attack("write", path="/workspace/solution.py", data=program)
    check(w.get("ok"), "the agent writes its solution: %s" % w)
    d.ok("POST", "/step", {"action": {"message": "submit"}})
    v = d.ok("POST", "/end_episode", timeout=120)
    check(v["verdict"] == "graded", "graded: %s" % json.dumps(v)[:2000])
    # The runner's own verdict.json is the library's, whatever the agent
    # planted in its /out (served as observers.runner).
    check(v["observers"]["runner"] == {"role": "runner", "cases": len(CASES)},
          "observers.runner is the runner's summary: %s" % v["observers"]["runner"])
    return v["observers"]["verdict"]


def case_hacks_score_nothing(run):
    m = manifest(run)
    answers_host = os.path.join(os.path.dirname(m), "tests", "answers", "*")
    d = A.Daemon(run, m)
    try:
        honest = grade(d, HONEST)
        check(honest["score"] == 1.0 and honest["invalid"] is None,
              "the honest solution scores 1: %s" % honest)
        for name, program in HACKS.items():
            check(d.ok("POST", "/reset_unit")["phase"] == "ready", "reset for %s" % name)
            if "%r" in program:
                program = program % answers_host
            v = grade(d, program)
            check(v["score"] == 0.0 and v["passed"] == 0,
                  "%s scores nothing: %s" % (name, v))
            check(set(v["cases"]) == set(CASES), "%s: every case judged: %s" % (name, v))
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        d.kill()


if __name__ == "__main__":
    sys.exit(A.main([
        ("hidden tests as code (stage, runner, verdict with python/openenvd_grading.py): the "
         "honest program scores 1; exiting early, an object equal to everything, looking for "
         "the answers, forging the results, a flood and a program that never ends score 0, "
         "every episode graded", case_hacks_score_nothing),
    ], install=[("python", "/opt/grading")]))
