#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""TAP: python/openenvd_grading.py, the runner/verdict split for hidden tests
written as code (docs/CUSTODY.md, "Hidden tests as code").

    test-grading.py [OPENENVCTL]

The runner's half runs real programs (python3, sh) with limits; the
verdict's half is fed what agent code could leave as the runner's results:
oversize, a symlink, a FIFO, not UTF-8, JSON with a key or a case twice,
wrong types, forged scores. With OPENENVCTL, the module's documented
manifest is validated as a unit would be.
"""
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, os.path.join(REPO, "tests"))
import openenvd_grading as G  # noqa: E402
import unittest_tap  # noqa: E402

OPENENVCTL = sys.argv[1] if len(sys.argv) > 1 else None
PY = sys.executable or "/usr/bin/python3"


def prog(code):
    return [PY, "-c", code]


ECHO_SUM = prog("import sys; print(sum(int(x) for x in sys.stdin.read().split()))")


class Tmp(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="grading-test.")
        self.results = os.path.join(self.dir, "results.json")
        self.out = os.path.join(self.dir, "verdict.json")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def write(self, name, data):
        p = os.path.join(self.dir, name)
        with open(p, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())
        return p

    def results_doc(self, cases):
        return {"version": 1, "cases": cases}

    def case(self, cid, out=b"", **kw):
        c = {"id": cid, "exit_code": 0, "signal": None, "timed_out": False,
             "output_truncated": False, "time_s": 0.01,
             "stdout_b64": base64.b64encode(out).decode(), "stderr_tail": ""}
        c.update(kw)
        return c


class Runner(Tmp):
    def test_runs_each_case_with_its_input_and_records_what_it_measured(self):
        r = G.run_cases(ECHO_SUM, {"b": b"2 3", "a": b"1 2"})
        self.assertEqual([c["id"] for c in r], ["a", "b"])
        self.assertEqual(base64.b64decode(r[0]["stdout_b64"]), b"3\n")
        self.assertEqual(base64.b64decode(r[1]["stdout_b64"]), b"5\n")
        for c in r:
            self.assertEqual((c["exit_code"], c["signal"], c["timed_out"],
                              c["output_truncated"]), (0, None, False, False))
            self.assertGreater(c["time_s"], 0)

    def test_exit_status_and_signal(self):
        r = G.run_cases(prog("import sys; sys.stderr.write('boom'); sys.exit(3)"), {"x": b""})
        self.assertEqual((r[0]["exit_code"], r[0]["signal"]), (3, None))
        self.assertEqual(r[0]["stderr_tail"], "boom")
        r = G.run_cases(prog("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"),
                        {"x": b""})
        self.assertEqual((r[0]["exit_code"], r[0]["signal"]), (None, 11))

    def test_a_case_that_never_ends_is_stopped_at_its_timeout(self):
        t = time.monotonic()
        r = G.run_cases(prog("import time; time.sleep(60)"), {"x": b""}, timeout=0.5)
        self.assertLess(time.monotonic() - t, 10)
        self.assertTrue(r[0]["timed_out"])
        self.assertIsNone(r[0]["exit_code"])

    def test_a_background_child_holding_the_pipes_goes_with_its_case(self):
        # The program exits at once, its child keeps stdout open: the case
        # ends at its timeout and the child is killed with its group.
        r = G.run_cases(["/bin/sh", "-c", "sleep 60 & echo $!"], {"x": b""}, timeout=1)
        pid = int(base64.b64decode(r[0]["stdout_b64"]))
        self.assertEqual(r[0]["exit_code"], 0)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                with open("/proc/%d/stat" % pid) as f:
                    if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                        break
            except OSError:
                break
            time.sleep(0.05)
        else:
            self.fail("the background child %d outlived its case" % pid)

    def test_an_output_flood_is_cut_at_the_limit(self):
        t = time.monotonic()
        r = G.run_cases(prog("import sys\nwhile True: sys.stdout.buffer.write(b'y' * 65536)"),
                        {"x": b""}, output_limit=100000, timeout=30)
        self.assertLess(time.monotonic() - t, 10, "stopped at the limit, not the timeout")
        self.assertTrue(r[0]["output_truncated"])
        self.assertFalse(r[0]["timed_out"])
        self.assertEqual(len(base64.b64decode(r[0]["stdout_b64"])), 100000)

    def test_any_bytes_round_trip_exactly(self):
        raw = bytes(range(256)) * 3
        r = G.run_cases(prog("import sys; sys.stdout.buffer.write(sys.stdin.buffer.read())"),
                        {"x": raw})
        self.assertEqual(base64.b64decode(r[0]["stdout_b64"]), raw)
        json.dumps(r)  # all of it is JSON as it is

    def test_a_large_input_is_fed_while_output_is_read(self):
        big = b"1\n" * (4 << 20)
        r = G.run_cases(prog("import sys; d = sys.stdin.buffer.read(); print(len(d))"),
                        {"x": big}, timeout=30)
        self.assertEqual(base64.b64decode(r[0]["stdout_b64"]), b"%d\n" % len(big))

    def test_each_case_starts_in_a_fresh_directory_with_a_minimal_environment(self):
        code = ("import os, json; print(json.dumps([os.getcwd(), os.listdir('.'), "
                "sorted(os.environ)])); open('left-behind', 'w').write('x')")
        os.environ["OPENENVD_SECRET_TEST"] = "1"
        try:
            r = G.run_cases(prog(code), {"a": b"", "b": b""})
        finally:
            del os.environ["OPENENVD_SECRET_TEST"]
        a, b = (json.loads(base64.b64decode(c["stdout_b64"])) for c in r)
        self.assertNotEqual(a[0], b[0])
        self.assertEqual(b[1], [], "nothing of the case before")
        self.assertFalse(os.path.exists(a[0]), "removed after its case")
        self.assertNotIn("OPENENVD_SECRET_TEST", a[2])

    def test_a_program_that_cannot_start_is_a_failed_case(self):
        r = G.run_cases(["/nonexistent/solution"], {"x": b""})
        self.assertIsNone(r[0]["exit_code"])
        self.assertIn("cannot start", r[0]["error"])

    def test_case_ids_are_names(self):
        with self.assertRaises(ValueError):
            G.run_cases(ECHO_SUM, {"../x": b""})
        with self.assertRaises(ValueError):
            G.run_cases(ECHO_SUM, {".hidden": b""})

    def test_the_runners_own_verdict_is_rewritten_last(self):
        # Agent code in the runner plants {"score": 1.0} as its verdict.json;
        # the daemon would serve it as observers.runner.
        planted = self.write("verdict.json", json.dumps({"score": 1.0}))
        G.write_results(self.results, G.run_cases(ECHO_SUM, {"a": b"1"}),
                        summary_path=planted)
        with open(planted) as f:
            self.assertEqual(json.load(f), {"role": "runner", "cases": 1})
        os.environ["OPENENVD_OUT"] = self.dir
        try:
            self.write("verdict.json", json.dumps({"score": 1.0}))
            G.write_results(self.results, [])
        finally:
            del os.environ["OPENENVD_OUT"]
        with open(planted) as f:
            self.assertEqual(json.load(f), {"role": "runner", "cases": 0})

    def test_results_replace_a_planted_symlink_never_follow_it(self):
        target = self.write("target", "untouched")
        os.symlink(target, self.results)
        G.write_results(self.results, G.run_cases(ECHO_SUM, {"a": b"1"}))
        self.assertFalse(os.path.islink(self.results))
        with open(target) as f:
            self.assertEqual(f.read(), "untouched")

    # Each runs the runner in a process of its own: sweeping makes the
    # caller a child subreaper, and the non-dumpable flag is the process's.
    DETACH = ("import os, sys, time\n"
              "if os.fork() == 0:\n"
              "    os.setsid()\n"
              "    if os.fork() == 0:\n"
              "        open(sys.argv[1], 'w').write(str(os.getpid()))\n"
              "        time.sleep(60)\n"
              "    os._exit(0)\n"
              "os.wait()\n"
              "while not os.path.exists(sys.argv[1]): time.sleep(0.001)\n")

    def detached_pid_after(self, sweep_all):
        """The pid of what a case left behind in a new session, once the
        runner has returned: its process, or None when it is gone."""
        marker = os.path.join(self.dir, "detached.pid")
        code = ("import sys; sys.path.insert(0, %r); import openenvd_grading as G\n"
                "G.run_cases([%r, '-c', %r, %r], {'a': b''}, sweep_all=%r)\n"
                % (os.path.join(REPO, "python"), PY, self.DETACH, marker, sweep_all))
        subprocess.run([PY, "-c", code], check=True, timeout=60)
        with open(marker) as f:
            pid = int(f.read())
        try:
            with open("/proc/%d/stat" % pid) as f:
                alive = f.read().rsplit(")", 1)[1].split()[0] != "Z"
        except OSError:
            alive = False
        return pid if alive else None

    def test_a_process_that_left_its_session_is_killed_before_the_results(self):
        # Left alone, it could rewrite the results after they are written
        # (claiming a slow program ran in time, say): the daemon copies /out
        # only when the cgroup is empty, which is after.
        self.assertIsNone(self.detached_pid_after(sweep_all=True))

    def test_without_the_sweep_it_outlives_the_runner(self):
        # The attack is real: the group kill alone does not reach it.
        pid = self.detached_pid_after(sweep_all=False)
        self.assertIsNotNone(pid)
        os.kill(pid, 9)

    def test_agent_code_cannot_open_the_runners_memory(self):
        # Agent code runs as the runner's uid; /proc/<pid>/mem is checked
        # like ptrace, which a non-dumpable process refuses to its own uid.
        # As root both would run as nobody (root may open anything).
        os.chmod(self.dir, 0o777)
        probe = self.write("probe.py", "import os\ntry:\n"
                           "    open('/proc/%d/mem' % os.getppid(), 'r+b').close()\n"
                           "    print('opened')\n"
                           "except OSError as e:\n    print('refused', e.errno)\n")
        inputs = os.path.join(self.dir, "in")
        os.mkdir(inputs)
        self.write("in/a.in", "")
        # Nobody may not reach the repository or this Python (a clone under
        # /root, a pyenv): Debian's, and a copy of the module.
        user, py = (65534, "/usr/bin/python3") if os.geteuid() == 0 else (None, PY)
        main = shutil.copy(os.path.join(REPO, "python", "openenvd_grading.py"), self.dir)
        subprocess.run([py, main, "run", "--inputs", inputs, "--out", self.results, "--",
                        py, probe], check=True, user=user, timeout=60)
        with open(self.results) as f:
            out = base64.b64decode(json.load(f)["cases"][0]["stdout_b64"])
        self.assertTrue(out.startswith(b"refused"), out)
        # The same probe under a dumpable runner opens it: the check can fail.
        code = ("import sys; sys.path.insert(0, %r); import base64, openenvd_grading as G\n"
                "print(base64.b64decode(G.run_cases([%r, %r], {'a': b''})[0]['stdout_b64'])"
                ".decode())" % (self.dir, py, probe))
        r = subprocess.run([py, "-c", code], check=True, user=user, timeout=60,
                           capture_output=True, text=True)
        self.assertEqual(r.stdout.strip(), "opened")


class Verdict(Tmp):
    ANSWERS = {"a": b"3\n", "b": b"5\n"}

    def score(self, doc=None, raw=None, **kw):
        if raw is None:
            raw = json.dumps(doc).encode()
        self.write("results.json", raw)
        v = G.score(self.results, self.ANSWERS, out_path=self.out, **kw)
        with open(self.out) as f:
            self.assertEqual(json.load(f), v, "verdict.json is what score() returned")
        return v

    def test_honest_and_wrong_answers(self):
        v = self.score(self.results_doc([self.case("a", b"3\n"), self.case("b", b"5  \n\n")]))
        self.assertEqual((v["score"], v["passed"], v["total"], v["invalid"]), (1.0, 2, 2, None))
        v = self.score(self.results_doc([self.case("a", b"3\n"), self.case("b", b"6\n")]))
        self.assertEqual(v["score"], 0.5)
        self.assertEqual(v["cases"]["b"], {"passed": False, "why": "wrong answer"})

    def test_a_right_output_does_not_pass_a_failed_run(self):
        for kw, why in (({"exit_code": 1}, "exit status not 0"),
                        ({"exit_code": None, "signal": 9}, "killed by a signal"),
                        ({"timed_out": True}, "timed out"),
                        ({"output_truncated": True}, "output over the limit")):
            v = self.score(self.results_doc([self.case("a", b"3\n", **kw),
                                             self.case("b", b"5\n")]))
            self.assertEqual(v["cases"]["a"]["why"], why)
            self.assertEqual(v["score"], 0.5)

    def test_missing_cases_fail_and_unknown_ones_are_ignored(self):
        v = self.score(self.results_doc([self.case("a", b"3\n"), self.case("zzz", b"!")]))
        self.assertEqual(v["cases"]["b"]["why"], "no result")
        self.assertNotIn("zzz", v["cases"])
        self.assertEqual(v["score"], 0.5)

    def test_forged_scores_and_extra_fields_count_for_nothing(self):
        doc = self.results_doc([self.case("a", b"wrong", passed=True, score=1.0)])
        doc.update({"score": 1.0, "passed": 2, "verdict": {"score": 1.0}})
        v = self.score(doc)
        self.assertEqual(v["score"], 0.0)

    def assertInvalid(self, v, words):
        self.assertEqual(v["score"], 0.0)
        self.assertEqual(v["passed"], 0)
        self.assertIn(words, v["invalid"])
        self.assertTrue(all(c["why"] == "invalid results" for c in v["cases"].values()))

    def test_a_key_twice_is_invalid(self):
        good = json.dumps(self.case("a", b"wrong"))[:-1]
        raw = ('{"version": 1, "cases": [%s, "stdout_b64": "%s"}]}'
               % (good, base64.b64encode(b"3\n").decode())).encode()
        self.assertInvalid(self.score(raw=raw), "twice")

    def test_a_case_twice_is_invalid(self):
        doc = self.results_doc([self.case("a", b"wrong"), self.case("a", b"3\n")])
        self.assertInvalid(self.score(doc), "twice")

    def test_not_utf8_not_json_nan_and_deep_nesting_are_invalid(self):
        self.assertInvalid(self.score(raw=b'{"version": 1, "cases": []}\xff'), "UTF-8")
        self.assertInvalid(self.score(raw=b"not json"), "not JSON")
        self.assertInvalid(self.score(raw=b'{"version": 1, "cases": [NaN]}'), "NaN")
        self.assertInvalid(self.score(raw=b"[" * 100000 + b"]" * 100000), "not JSON")
        self.assertInvalid(self.score(raw=b'{"version": 1, "cases": [1e999999]}'), "")

    def test_wrong_types_are_invalid(self):
        for kw in ({"exit_code": "0"}, {"exit_code": True}, {"exit_code": 0.0},
                   {"timed_out": "false"}, {"timed_out": 0}, {"stdout_b64": ["Mwo="]},
                   {"stdout_b64": "not base64!"}, {"stdout_b64": "Mwo=\u00e9"}):
            v = self.score(self.results_doc([self.case("a", b"3\n", **kw),
                                             self.case("b", b"5\n")]))
            self.assertIsNotNone(v["invalid"], kw)
            self.assertEqual(v["score"], 0.0, kw)
        for doc in ([], {"version": 2, "cases": []}, {"version": True, "cases": []},
                    {"version": 1, "cases": {}}, {"version": 1, "cases": [{"id": 1}]}):
            self.assertIsNotNone(self.score(doc)["invalid"], doc)

    def test_oversize_results_are_refused_without_reading_them_whole(self):
        raw = json.dumps(self.results_doc([self.case("a", b"3\n")])).encode()
        v = self.score(raw=raw + b" " * 2000, max_bytes=1000)
        self.assertInvalid(v, "over 1000 bytes")
        v = self.score(self.results_doc([self.case("a", b"3" * 5000)]), output_limit=1000)
        self.assertInvalid(v, "output is over")

    def test_a_symlink_or_a_fifo_is_refused_and_never_blocks(self):
        real = self.write("real.json", json.dumps(self.results_doc([self.case("a", b"3\n")])))
        os.symlink(real, self.results)
        self.assertInvalid(G.score(self.results, self.ANSWERS, out_path=None), "cannot open")
        os.unlink(self.results)
        os.mkfifo(self.results)
        t = time.monotonic()
        self.assertInvalid(G.score(self.results, self.ANSWERS, out_path=None), "regular file")
        self.assertLess(time.monotonic() - t, 5)
        os.unlink(self.results)
        self.assertInvalid(G.score(self.results, self.ANSWERS, out_path=None), "cannot open")

    def test_compared_values_are_bytes_the_verdict_made(self):
        # Whatever the runner's file holds, what reaches compare() is bytes
        # decoded here: no object of the agent's, so no __eq__ of its own.
        seen = []

        def spy(expected, actual):
            seen.append((type(expected), type(actual)))
            return expected == actual
        self.score(self.results_doc([self.case("a", b"3\n"), self.case("b", b"x")]),
                   compare=spy)
        self.assertEqual(seen, [(bytes, bytes)] * 2)

    def test_the_verdict_holds_no_agent_byte(self):
        marker = "AGENT-TEXT-\u2028<script>"
        doc = self.results_doc([self.case("a", marker.encode(), stderr_tail=marker),
                                self.case(marker, b"")])
        self.score(doc)
        with open(self.out, "rb") as f:
            text = f.read()
        self.assertNotIn(b"AGENT-TEXT", text)

    def test_tokens_compare(self):
        self.assertTrue(G.tokens(b"1 2\n3", b" 1\n2 3 "))
        self.assertFalse(G.tokens(b"1 2", b"12"))
        self.assertFalse(G.exact(b"1 2", b"1  2"))


class Split(Tmp):
    """The three observers' commands as a unit runs them."""

    def tree(self, name, files):
        d = os.path.join(self.dir, name)
        os.makedirs(d)
        for k, v in files.items():
            with open(os.path.join(d, k), "wb") as f:
                f.write(v)
        return d

    def run_split(self, solution):
        inputs = self.tree("inputs", {"a.in": b"1 2", "b.in": b"2 3", "notes.txt": b"x"})
        answers = self.tree("answers", {"a.out": b"3\n", "b.out": b"5\n"})
        sol = self.write("solution.py", solution)
        main = os.path.join(REPO, "python", "openenvd_grading.py")
        staged = os.path.join(self.dir, "stage-out", "cases")
        os.makedirs(os.path.dirname(staged))
        for argv in (["stage", "--from", inputs, "--out", staged],
                     ["run", "--inputs", staged, "--out", self.results, "--timeout", "5",
                      "--", PY, sol],
                     ["score", "--answers", answers, "--results", self.results,
                      "--out", self.out]):
            subprocess.run([PY, main] + argv, check=True, capture_output=True)
        with open(self.out) as f:
            return json.load(f)

    def test_honest_solution_scores_one(self):
        v = self.run_split("import sys; print(sum(map(int, sys.stdin.read().split())))")
        self.assertEqual((v["score"], v["passed"], v["total"]), (1.0, 2, 2))

    def test_reward_hacks_score_nothing(self):
        hacks = {
            "exit before the work": "import sys; sys.exit(0)",
            "an object that equals everything": (
                "class A:\n def __eq__(s, o): return True\n def __str__(s): return ''\n"
                "print(A())"),
            "forge the results": (
                "import json, base64, sys\n"
                "r = sys.argv[0].rsplit('/', 1)[0] + '/results.json'\n"
                "json.dump({'version': 1, 'cases': [], 'score': 1.0}, open(r, 'w'))"),
        }
        for name, code in hacks.items():
            v = self.run_split(code)
            self.assertEqual(v["score"], 0.0, name)
            shutil.rmtree(self.dir)
            os.makedirs(self.dir)

    @unittest.skipUnless(OPENENVCTL, "needs openenvctl")
    def test_the_documented_manifest_is_a_valid_unit(self):
        doc = G.__doc__
        block = doc[doc.index("    privileged_assets:"):doc.index("The runner may not")]
        yaml = "app: server.app:app\nopenenvd:\n" + re.sub(r"(?m)^    ", "  ", block)
        for d in ("tests/inputs", "tests/answers"):
            os.makedirs(os.path.join(self.dir, d))
        path = self.write("openenv.yaml", yaml)
        p = subprocess.run([OPENENVCTL, "manifest", "validate", path],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr + "\n" + yaml)


if __name__ == "__main__":
    sys.exit(unittest_tap.main(sys.modules[__name__]))
