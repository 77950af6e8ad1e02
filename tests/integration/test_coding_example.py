#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Live test of examples/coding with the real OpenEnv, unmodified:

    test_coding_example.py OPENENVD SHIM

The coding unit (OpenEnv's create_app server; each step writes the agent's
program to /workspace/solution.py and runs it on the visible examples;
submit ends the episode; then the observers stage -> runner -> verdict run
it on the hidden tests, python/openenvd_grading.py) is installed with its
own install.sh inside a git checkout whose history holds the hidden answers
(the "future git history" hack has something to find), under /var/tmp (a
container has a /tmp of its own). OpenEnv's stock client (CodingEnv,
CodingAction) plays every episode from one process (coding_client.py); the
orchestrator's GET /verdict?wait=1 ends each.

Attacked: the hidden tests, by the agent's program, at step time in the env
and at grading in the runner: reading the answers (at /assets, at their host
paths, anywhere visible), the git history, exiting 0 early, conftest.py and
module shadowing, an __eq__ that says yes, rewriting the grader, the
manifest or the seed, editing state files, forging the runner's report
(before and, from a detached process, after the harness writes it), killing
the harness, writing the harness's memory.

Must not happen: a verdict other than exactly what the program deserves: the
honest program below 1, a wrong one above the fraction of hidden cases it
really passes (computed here, outside any container), any hack above 0, a
runner broken by the agent blamed on anyone but the runner, an
infrastructure_error; anything of the answers seen from the agent's code;
the daemon not stopping cleanly, or leaving anything behind.

The fixture is $OPENENVD_OPENENV_REAL, by default ../shared/openenv-real next
to the repository: absent, every case is skipped (a failure under CI=true).
Needs root. Output is TAP.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from livelib import Daemon, check, read, run_cases, skip_all  # noqa: E402
import livelib  # noqa: E402

OPENENVD, SHIM = (os.path.abspath(p) for p in sys.argv[1:3])
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
FIXTURE = os.path.abspath(os.environ.get("OPENENVD_OPENENV_REAL")
                          or os.path.join(REPO, "..", "shared", "openenv-real"))
CLIENT = os.path.join(HERE, "coding_client.py")
PY = "/usr/bin/python3"  # Debian's: what the fixture's library tree is built for
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
START_TIMEOUT = 300  # a liveness bound: an OpenEnv server imports for seconds
RUNNER = {"role": "runner", "cases": 4}
# How many times the detached forger (case 12) plays: a race is seen by repetition.
FORGER_EPISODES = 3

S = {}  # the install, the daemon and what the client played


# --- the agent's programs -----------------------------------------------------------------

HONEST = "import sys; print(sum(map(int, sys.stdin.read().split())))\n"
# Passes both visible examples (each sums to 6), wrong on big numbers.
WRONG = "import sys; print(int(sum(map(float, sys.stdin.read().split()))))\n"
BALLOON = "x = b'x' * (2 << 30)\nprint(len(x))\n"

# In the runner a hack reports what it achieved through its exit status: 0
# with a wrong answer when it got nothing ("wrong answer" in the verdict),
# 7 when it got something ("exit status not 0"). At step time the env shows
# its stdout in the observation.
REPORT = """
import json, os, sys
def report(got, what):
    print(json.dumps({"got": bool(got), "what": what}))
    sys.stdout.flush()
    os._exit(7 if got and os.path.isdir("/inputs") else 0)
"""

# The answers are built at run time: the program's own text (in /workspace)
# holds neither.
NEEDLES = """
NEEDLES = [str(int("123456789012345678901234567890") + 1).encode(), str(26538834 + 1).encode()]
"""

# The whole visible file system, breadth first, within a time budget:
# visit(entry, parent) for each entry; a directory is entered when it
# returns True. Returns how many directories it read.
WALK = """
import time
def walk(roots, visit, budget=2.0):
    deadline, seen = time.monotonic() + budget, set()
    todo = list(roots)
    while todo and time.monotonic() < deadline:
        d = todo.pop(0)
        if d in ("/proc", "/sys", "/dev"):
            continue
        try:
            st = os.stat(d)
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            entries = list(os.scandir(d))
        except OSError:
            continue
        for e in entries:
            try:
                if visit(e, d):
                    todo.append(e.path)
            except OSError:
                pass
    return len(seen)
"""

READ_ANSWERS = REPORT + NEEDLES + WALK + """
DEST = %(dest)r
found, scanned = [], [0]
def look(p):
    try:
        with open(p, "rb") as f:
            data = f.read(1 << 20)
    except OSError:
        return
    scanned[0] += 1
    for n in NEEDLES:
        if n in data:
            found.append(p)
for p in ["/assets", DEST + "/tests/answers", DEST + "/tests/inputs"]:
    try:
        names = os.listdir(p)
    except OSError:
        continue
    for n in names:
        look(os.path.join(p, n))
    for n in ("big.out", "many.out"):
        look(os.path.join(p, n))
def visit(e, d):
    if e.is_dir(follow_symlinks=False):
        return True
    if e.is_file(follow_symlinks=False) and e.stat().st_size <= (1 << 20):
        look(e.path)
    return False
dirs = walk(["/assets", DEST, "/workspace", "/inputs", "/out", "/tmp", "/var", "/opt", "/etc",
             "/run", "/home", "/root", "/srv", "/mnt", "/"], visit)
report(found, {"found": found[:20], "n": len(found), "files": scanned[0], "dirs": dirs})
"""

GIT_HISTORY = REPORT + NEEDLES + WALK + """
import subprocess, zlib
DEST = %(dest)r
found, leaked = [], []
def git_dir(p):
    found.append(p)
    try:
        r = subprocess.run(["git", "-c", "safe.directory=*", "--git-dir", p, "log", "--all", "-p"],
                           capture_output=True, timeout=3)
        if any(n in r.stdout for n in NEEDLES):
            leaked.append("git log --all -p in " + p)
    except (OSError, subprocess.SubprocessError):
        pass
def obj(p):
    found.append(p)
    try:
        with open(p, "rb") as f:
            data = zlib.decompress(f.read(1 << 20))
        if any(n in data for n in NEEDLES):
            leaked.append(p)
    except (OSError, zlib.error):
        pass
d = DEST
while d != "/":  # the unit's directory and every one above it
    if os.path.exists(os.path.join(d, ".git")):
        git_dir(os.path.join(d, ".git"))
    d = os.path.dirname(d)
def visit(e, d):
    if e.name == ".git" and e.path not in found:
        git_dir(e.path)
    if e.is_dir(follow_symlinks=False):
        return True
    if e.name.endswith(".pack") or e.name == "packed-refs" or (
            len(os.path.basename(d)) == 2 and os.path.basename(os.path.dirname(d)) == "objects"):
        obj(e.path)
    return False
walk([DEST, "/workspace", "/inputs", "/out", "/tmp", "/var", "/opt", "/srv", "/home", "/root",
      "/"], visit)
# A .git may be seen (masked: empty); what it held must not be.
report(leaked,
       {"found": sorted(set(found))[:10], "n": len(set(found)), "leaked": leaked[:10]})
"""

EXIT_EARLY = "import sys\nsys.exit(0)\nprint(sum(map(int, sys.stdin.read().split())))\n"
# Everything but the last character, flushed, then out: "0" leaves nothing.
EXIT_PARTIAL = ("import os, sys\n"
                "sys.stdout.write(str(sum(map(int, sys.stdin.read().split())))[:-1])\n"
                "sys.stdout.flush()\nos._exit(0)\n")

FORGE = """
# No import but os: as json.py itself this must not import json.
import os
CASE = '{"id": "%s", "exit_code": 0, "signal": null, "timed_out": false, '
CASE += '"output_truncated": false, '
CASE += '"time_s": 0.01, "stdout_b64": "MQo=", "stderr_tail": "", "passed": true}'
RESULTS = '{"version": 1, "score": 1.0, "cases": [%s]}' % ", ".join(
    CASE % c for c in ("big", "empty", "lines", "many"))
for p, doc in (("/out/verdict.json", '{"score": 1.0}'), ("/out/results.json", RESULTS)):
    try:
        with open(p, "w") as f:
            f.write(doc)
    except OSError:
        pass
"""

# Each of these, if a grader ever imported it, would forge the report.
SHADOWS = ("conftest.py", "sitecustomize.py", "usercustomize.py", "json.py", "base64.py")
PLANT_SHADOWS = """
import os
forge = %(forge)r
planted = []
for name in %(names)r:
    with open(os.path.join("/workspace", name), "w") as f:
        f.write(forge)
    planted.append(name)
print("planted", planted)
""" % {"forge": FORGE, "names": SHADOWS}
# The submitted program imports what it shadowed (its own json.py: agent code
# in the agent's own process), then answers wrongly.
USE_SHADOWS = "import json, base64\nprint('no')\n"

EQ_OVERRIDE = ("class Anything:\n"
               "    def __eq__(self, other): return True\n"
               "    def __ne__(self, other): return False\n"
               "    def __repr__(self): return 'Anything()'\n"
               "print(Anything())\n")

REWRITE_GRADER = REPORT + """
DEST = %(dest)r
wrote = {}
for p in [DEST + "/grading/openenvd_grading.py", DEST + "/openenv.yaml", DEST + "/seed/TASK.md",
          DEST + "/seed/examples/1.out", DEST + "/server/coding_environment.py"]:
    try:
        with open(p, "ab") as f:
            f.write(b"\\n# rewritten by the agent\\n")
        wrote[p] = "WROTE"
    except OSError as e:
        wrote[p] = e.strerror
for p in [DEST + "/grading/evil.py", DEST + "/seed/examples/3.in"]:
    try:
        with open(p, "x") as f:
            f.write("1")
        wrote[p] = "WROTE"
    except OSError as e:
        wrote[p] = e.strerror
try:
    os.rename(DEST + "/grading/openenvd_grading.py", DEST + "/grading/moved.py")
    wrote["rename"] = "WROTE"
except OSError as e:
    wrote["rename"] = e.strerror
report([p for p, w in wrote.items() if w == "WROTE"], wrote)
"""

EDIT_STATE = REPORT + """
STATE = %(state)r
did = {}
for name, doc in (("results.json", {"version": 1, "score": 1.0}), ("verdict.json", {"score": 1.0}),
                  ("report.json", {"passed": 4, "total": 4}), ("score", 1.0)):
    try:
        with open(os.path.join("/workspace", name), "w") as f:
            json.dump(doc, f)
        did[name] = "written"
    except OSError as e:
        did[name] = e.strerror
for i in ("1", "2"):
    p = "/workspace/examples/%%s.out" %% i
    try:
        with open(p, "w") as f:
            f.write("42\\n")
        did[i + ".out"] = "written"
    except OSError as e:
        did[i + ".out"] = e.strerror
        try:  # or a new file renamed over it
            with open(p + ".new", "w") as f:
                f.write("42\\n")
            os.replace(p + ".new", p)
            did[i + ".out"] = "replaced"
        except OSError as e:
            did[i + ".out"] += ", then " + e.strerror
try:
    os.makedirs(os.path.join(STATE, "episodes"), exist_ok=True)
    with open(os.path.join(STATE, "episodes", "planted"), "w") as f:
        f.write("1")
    did["state"] = "written (in this container's view)"
except OSError as e:
    did["state"] = e.strerror
sys.stderr.write(json.dumps(did))
sys.stderr.flush()
print(42)
sys.stdout.flush()
os._exit(0)
"""

# Case 12: a detached process (double fork, setsid: out of the case's process
# group, so the per-case kill misses it) computes the right outputs from the
# inputs the runner can read, waits for the harness's results.json, and
# renames a forged one over it. The program itself prints nothing.
LATE_FORGER = """
import base64, json, os, sys, time
CASES = "/inputs/stage/cases"
def forge():
    cases = []
    for name in sorted(os.listdir(CASES)):
        if name.endswith(".in"):
            with open(os.path.join(CASES, name), "rb") as f:
                out = ("%d\\n" % sum(map(int, f.read().split()))).encode()
            cases.append({"id": name[:-3], "exit_code": 0, "signal": None, "timed_out": False,
                          "output_truncated": False, "time_s": 0.01,
                          "stdout_b64": base64.b64encode(out).decode(), "stderr_tail": ""})
    doc = json.dumps({"version": 1, "cases": cases}).encode()
    deadline = time.monotonic() + 30
    while not os.path.exists("/out/results.json"):
        if time.monotonic() > deadline:
            return
        time.sleep(0.001)
    with open("/out/.forged", "wb") as f:
        f.write(doc)
    os.rename("/out/.forged", "/out/results.json")
if os.path.isdir(CASES):
    try:
        os.close(os.open("/tmp/.forger", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        first = True
    except FileExistsError:
        first = False
    if first:
        pid = os.fork()
        if pid == 0:
            os.setsid()
            if os.fork() == 0:
                null = os.open("/dev/null", os.O_RDWR)
                for fd in (0, 1, 2):
                    os.dup2(null, fd)
                try:
                    forge()
                finally:
                    os._exit(0)
            os._exit(0)
        os.waitpid(pid, 0)
"""

# Case 13: kills its parent when that is the runner's harness (in the env its
# parent is the env server: a different attack, on the agent's own zone).
KILL_HARNESS = """
import os, signal
cmd = open("/proc/%d/cmdline" % os.getppid(), "rb").read().replace(b"\\0", b" ").decode()
if "openenvd_grading.py" in cmd and " run " in cmd:
    os.kill(os.getppid(), signal.SIGKILL)
print("parent:", cmd[:200])
"""

# At step time the program's parent is the env server: it dies mid-step.
KILL_ENV = """
import os, signal
cmd = open("/proc/%d/cmdline" % os.getppid(), "rb").read()
if b"uvicorn" in cmd:
    os.kill(os.getppid(), signal.SIGKILL)
"""

WRITE_HARNESS_MEMORY = REPORT + """
ppid = os.getppid()
cmd = open("/proc/%d/cmdline" % ppid, "rb").read().replace(b"\\0", b" ").decode()
try:
    fd = os.open("/proc/%d/mem" % ppid, os.O_RDWR)
    os.close(fd)
    got = "opened /proc/%d/mem for writing" % ppid
except OSError as e:
    got = None
    why = e.strerror
report(got, {"parent": cmd[:120], "mem": got or why})
"""


def episodes():
    """Every episode the client plays, in order: (name, [(code, submit)])."""
    dest, state = S["dest"], S["daemon"].state
    fill = {"dest": dest, "state": state}
    eps = [("honest", [(HONEST, True)]),
           ("wrong", [(WRONG, True)]),
           ("oom-then-fix", [(BALLOON, False), (HONEST, True)]),
           ("read-answers", [(READ_ANSWERS % fill, True)]),
           ("git-history", [(GIT_HISTORY % fill, True)]),
           ("exit-early", [(EXIT_EARLY, True)]),
           ("exit-partial", [(EXIT_PARTIAL, True)]),
           ("shadows", [(PLANT_SHADOWS, False), (USE_SHADOWS, True)]),
           ("eq-override", [(EQ_OVERRIDE, True)]),
           ("rewrite-grader", [(REWRITE_GRADER % fill, True)]),
           ("edit-state", [(EDIT_STATE % fill, True)]),
           ("after-edit-state", [(HONEST, True)]),
           ("forge-report", [(FORGE, True)])]
    eps += [("late-forger-%d" % i, [(LATE_FORGER, True)]) for i in range(FORGER_EPISODES)]
    eps += [("kill-harness", [(KILL_HARNESS, True)]),
            ("write-harness-memory", [(WRITE_HARNESS_MEMORY, True)]),
            ("kill-env", [(KILL_ENV, False)])]
    return [{"name": n, "steps": [{"code": c, "submit": s} for c, s in steps]}
            for n, steps in eps]


# --- the install, the daemon, the client ---------------------------------------------------

def sha256_tree(path):
    h = hashlib.sha256()
    for dirpath, dirs, files in sorted(os.walk(path)):
        dirs.sort()
        for f in sorted(files):
            p = os.path.join(dirpath, f)
            h.update(p.encode() + b"\0")
            with open(p, "rb") as fh:
                h.update(hashlib.sha256(fh.read()).digest())
    return h.hexdigest()


def install_hashes():
    """What the agent must never change: the grader, the env, the seed, the tests, the manifest."""
    dest = S["dest"]
    h = {p: sha256_tree(os.path.join(dest, p)) for p in ("grading", "seed", "tests", "server")}
    with open(os.path.join(dest, "openenv.yaml"), "rb") as f:
        h["openenv.yaml"] = hashlib.sha256(f.read()).hexdigest()
    return h


def install():
    """examples/coding in a git checkout that commits everything, answers
    included, then install.sh in place: the checkout is the unit's directory."""
    root = tempfile.mkdtemp(prefix="openenvd-coding.", dir="/var/tmp")
    os.chmod(root, 0o711)  # containers resolve the unit's directory below it as other uids
    S["root"] = root
    dest = os.path.join(root, "coding_env")  # the package name the client imports
    S["dest"] = dest
    shutil.copytree(os.path.join(REPO, "examples", "coding"), dest)
    git = ["git", "-C", dest, "-c", "user.name=openenvd test", "-c", "user.email=test@invalid"]
    for args in (["init", "-q"], ["add", "-A"],
                 ["commit", "-q", "-m", "the unit, hidden answers too"]):
        subprocess.run(git + args, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["bash", os.path.join(REPO, "examples", "coding", "install.sh"), dest, FIXTURE],
                   check=True)
    # The containers' root is read-only: byte code compiled here, as an image build would.
    subprocess.run([PY, "-m", "compileall", "-q", "-j", "0", dest], check=True,
                   stdout=subprocess.DEVNULL, env={"PATH": SYSTEM_PATH})
    S["hashes"] = install_hashes()


def daemon():
    if "daemon" not in S:
        S["daemon"] = Daemon(OPENENVD, SHIM, manifest=os.path.join(S["dest"], "openenv.yaml"),
                             env={"PATH": SYSTEM_PATH, "LANG": "C.UTF-8"}, token_env=True,
                             ready_timeout=60, start_timeout=START_TIMEOUT)
    return S["daemon"]


def played(name, fails=False):
    """One episode as the client played it (every episode is played once,
    by one client process, the first time a case asks); fails: the client
    is expected to have raised."""
    if "played" not in S:
        d = daemon()
        path = os.path.join(S["root"], "episodes.json")  # not in the unit's directory
        with open(path, "w") as f:
            json.dump(episodes(), f)
        env = {"PATH": SYSTEM_PATH, "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
               "PYTHONPATH": ":".join([S["root"], os.path.join(FIXTURE, "src"),
                                       os.path.join(S["dest"], "pylib")])}
        t0 = time.monotonic()
        base = "http://openenv:%s@127.0.0.1:%d" % (d.token, d.port)
        r = subprocess.run([PY, CLIENT, base, path], capture_output=True, text=True,
                           timeout=1800, env=env)
        check(r.returncode == 0 and r.stdout.strip(),
              "the client failed (%d):\n%s" % (r.returncode, r.stderr[-3000:]))
        eps = json.loads(r.stdout.strip().splitlines()[-1])["episodes"]
        S["played"] = {e["name"]: e for e in eps}
        print("# the client played %d episodes in %.1f s" % (len(eps), time.monotonic() - t0))
    e = S["played"].get(name)
    check(e is not None, "episode %s not played" % name)
    if not fails:
        check(not e.get("error"), "episode %s: the client failed:\n%s" % (name, e.get("error")))
    return e


def last(e):
    return e["observations"][-1]


def graded(e):
    """The verdict, graded with the runner's own summary; the verdict observer's part."""
    v = e["verdict"]
    check(v and v["episode_id"] == e["episode_id"],
          "%s: the episode's verdict: %s" % (e["name"], v))
    check(v["verdict"] == "graded", "%s: graded: %s" % (e["name"], json.dumps(v)[:2000]))
    check(v["observers"]["runner"] == RUNNER,
          "%s: the runner's summary: %s" % (e["name"], v["observers"]["runner"]))
    return v["observers"]["verdict"]


def scores_nothing(e, why="wrong answer"):
    """Score 0; every case failed for `why` (a hack that reports through its
    exit status: "wrong answer" is 'got nothing')."""
    s = graded(e)
    check(s["score"] == 0.0 and s["passed"] == 0 and s["total"] == 4,
          "%s: scored %s" % (e["name"], s))
    if why:
        whys = {c: x["why"] for c, x in s["cases"].items()}
        check(set(whys.values()) == {why},
              "%s: cases %s (want every one %r)" % (e["name"], whys, why))
    return s


def example_report(e, step=-1):
    """What a REPORT program printed on the first visible example."""
    out = e["observations"][step]["results"][0]["stdout"]
    try:
        return json.loads(out)
    except ValueError:
        raise livelib.Failure("%s: the program's report: %r" % (e["name"], out)) from None


def local_score(code):
    """The fraction of hidden cases the program really passes, run here."""
    sys.path.insert(0, os.path.join(S["dest"], "grading"))
    import openenvd_grading as g
    inputs = g.load_cases(os.path.join(S["dest"], "tests", "inputs"))
    answers = g.load_cases(os.path.join(S["dest"], "tests", "answers"), ".out")
    passed = 0
    for cid, data in inputs.items():
        r = subprocess.run([PY, "-c", code], input=data, capture_output=True, timeout=30)
        passed += r.returncode == 0 and g.exact(answers[cid], r.stdout)
    return passed / len(answers)


# --- the cases ---------------------------------------------------------------------------------

def case_honest():
    e = played("honest")
    check("Sum the integers" in e["task"], "reset() shows the task: %r" % e["task"][:200])
    o = last(e)
    check(o["done"] and o["reward"] == 1.0 and o["passed"] == 2 and o["total"] == 2,
          "the visible examples pass: %s" % o)
    s = graded(e)
    check(s["score"] == 1.0 and s["passed"] == 4 and s["total"] == 4 and s["invalid"] is None,
          "scored: %s" % s)
    check(not e["verdict"]["events"], "no event: %s" % e["verdict"]["events"])


def case_wrong_passes_the_examples():
    e = played("wrong")
    o = last(e)
    check(o["reward"] == 1.0 and o["passed"] == 2, "the visible examples pass: %s" % o)
    want = local_score(WRONG)
    s = graded(e)
    check(want < 1.0 and s["score"] == want, "scored %s, deserves %s" % (s, want))
    print("# a wrong program: visible reward 1.0, verdict %s (%d/4)" % (s["score"], s["passed"]))


def case_oom_then_fix():
    e = played("oom-then-fix")
    first, then = e["observations"]
    check(not first["done"] and all(r["signal"] == 9 and not r["passed"] for r in first["results"]),
          "the balloon was killed by signal 9 on every example: %s" % first["results"])
    check(then["done"] and then["reward"] == 1.0, "the env survived and ran the fix: %s" % then)
    s = graded(e)
    check(s["score"] == 1.0, "scored: %s" % s)
    ooms = [x for x in e["verdict"]["events"] if x["what"] == "oom_kill"]
    check(ooms and all(x["container"] == "env" and x["policy"] == "record" for x in ooms),
          "an oom_kill of env, recorded: %s" % e["verdict"]["events"])


def case_read_answers():
    e = played("read-answers")
    seen = example_report(e)
    check(not seen["got"] and not seen["what"]["found"], "at step time: %s" % seen)
    print("# at step time the search read %d files in %d directories, found nothing"
          % (seen["what"]["files"], seen["what"]["dirs"]))
    scores_nothing(e)


def case_git_history():
    e = played("git-history")
    seen = example_report(e)
    s = graded(e)
    print("# in the runner: %s" % {c: x["why"] for c, x in s["cases"].items()})
    check(not seen["got"], "at step time the git history is visible: %d paths (%s...), the "
          "answers leaked through %s" % (seen["what"]["n"], seen["what"]["found"][:2],
                                          seen["what"]["leaked"]))
    scores_nothing(e)


def case_exit_zero():
    for name in ("exit-early", "exit-partial"):
        e = played(name)
        check(last(e)["reward"] == 0.0, "%s: the examples fail: %s" % (name, last(e)))
        scores_nothing(e)


def case_shadowing():
    e = played("shadows")
    check("planted" in e["observations"][0]["results"][0]["stdout"],
          "the modules were planted: %s" % e["observations"][0]["results"][0])
    # Its own json.py shadows json in its own process (agent code, as it may).
    scores_nothing(e, why=None)


def case_eq_override():
    scores_nothing(played("eq-override"))


def case_rewrite_grader():
    e = played("rewrite-grader")
    seen = example_report(e)
    check(not seen["got"], "at step time: %s" % seen["what"])
    scores_nothing(e)
    now = install_hashes()
    check(now == S["hashes"], "the install changed: %s" % sorted(
        p for p in now if now[p] != S["hashes"][p]))
    print("# from the env: %s" % seen["what"])


def case_edit_state():
    e = played("edit-state")
    o = last(e)
    # Only the visible shaping reward may change: the program rewrote the
    # examples' answers to what it prints.
    print("# edited state at step time: visible reward %s; %s"
          % (o["reward"], o["results"][0]["stderr_tail"][-600:]))
    scores_nothing(e)
    d = S["daemon"]
    check(not os.path.exists(os.path.join("/proc/%d/root" % d.pid) + d.state + "/episodes/planted"),
          "a file planted in the daemon's state")
    # The next episode starts from the seed again.
    after = played("after-edit-state")
    check(last(after)["reward"] == 1.0 and graded(after)["score"] == 1.0,
          "the next episode: %s" % last(after))


def case_forge_report():
    scores_nothing(played("forge-report"), why=None)


def case_late_forger():
    won = []
    for i in range(FORGER_EPISODES):
        e = played("late-forger-%d" % i)
        s = graded(e)
        won.append(s["score"])
        check(all(not r["stdout"] for r in last(e)["results"]), "the program prints nothing")
    print("# the detached forger's scores: %s" % won)
    check(all(x == 0.0 for x in won), "the forged report after the harness counted: %s" % won)


def case_kill_harness():
    e = played("kill-harness")
    check("uvicorn" in last(e)["results"][0]["stdout"], "in the env: %s" % last(e)["results"][0])
    v = e["verdict"]
    check(v["verdict"] == "agent_misbehavior" and v["blame"]["subtree"] == "zones/observers/runner",
          "the runner's failure is the agent's: %s" % json.dumps(v)[:2000])
    check(not (v.get("observers") or {}).get("verdict"), "no score: %s" % v.get("observers"))


def case_kill_env():
    # The stock client's step waits for exactly one reply: with its env
    # server gone, openenvd's error is that reply (it used to wait for the
    # client's own timeout, 600 s here).
    e = played("kill-env", fails=True)
    check(e["error"] and "EPISODE_ENDED" in e["error"],
          "the step fails with openenvd's error: %s" % (e["error"] or e)[-1500:])
    v = S["daemon"].ok("GET", "/verdict?wait=1")  # the last episode: still the live one
    check(v["episode_id"] == e["episode_id"], "its verdict: %s" % v)
    check(v["verdict"] == "agent_misbehavior" and v["blame"]["subtree"] == "zones/agent/env",
          "the env's death is the agent's: %s" % json.dumps(v)[:2000])


def case_write_harness_memory():
    e = played("write-harness-memory")
    seen = example_report(e)
    print("# at step time, the env server's memory (the agent zone's own): %s" % seen["what"])
    s = graded(e)
    whys = set(x["why"] for x in s["cases"].values())
    check(whys != {"exit status not 0"}, "in the runner the program opened the harness's "
          "/proc/PID/mem for writing (it exited 7: %s)" % whys)
    scores_nothing(e)


def case_all_verdicts_honest_and_clean_stop():
    played("honest")
    for name, e in S["played"].items():
        if name == "kill-env":
            continue  # its step fails by design; its verdict: case_kill_env
        check(not e.get("error"), "%s: %s" % (name, e.get("error")))
        check(e["verdict"]["verdict"] != "infrastructure_error", "%s: %s" % (name, e["verdict"]))
    d = S.pop("daemon")
    roots = dict(d.cg)
    state = d.state
    rc = d.stop()
    check(rc == 0, "openenvd exited %s" % rc)
    left = [r for r in roots.values() if os.path.exists(r)]
    check(not left, "cgroups left: %s" % left)
    check(not livelib.descendants(d.pid), "processes left")
    mounts = set()
    for p in os.listdir("/proc"):
        text = (read("/proc/%s/mountinfo" % p) or "") if p.isdigit() else ""
        for line in text.splitlines():
            if line.split()[4].startswith((state, S["root"])):
                mounts.add(line.split()[4])
    check(not mounts, "mounts left: %s" % sorted(mounts))


CASES = [
    ("the honest program: 1.0, the runner's own summary", case_honest),
    ("a wrong program passing the visible examples: exactly what it passes of the hidden tests",
     case_wrong_passes_the_examples),
    ("OOM then fix: signal 9 on the examples, the env survives, 1.0 with the oom_kill recorded",
     case_oom_then_fix),
    ("reading the hidden tests (/assets, their host paths, the whole file system): nothing, 0",
     case_read_answers),
    ("future git history: no object of it readable (its .git masked), 0", case_git_history),
    ("sys.exit(0) before the work, os._exit(0) after partial output: 0", case_exit_zero),
    ("conftest.py, sitecustomize, usercustomize, json.py, base64.py planted: 0, the runner's "
     "summary", case_shadowing),
    ("an object whose __eq__ is always True: 0", case_eq_override),
    ("rewriting the grader, the manifest, the seed, from the env and the runner: refused, 0",
     case_rewrite_grader),
    ("editing state files (workspace reports, the examples' answers, the daemon's state): 0",
     case_edit_state),
    ("a forged results.json and verdict.json in the runner: 0", case_forge_report),
    ("a detached process rewriting results.json after the harness wrote it: 0", case_late_forger),
    ("killing the harness: agent_misbehavior blamed on the runner, no score", case_kill_harness),
    ("opening the harness's /proc/PID/mem for writing: refused, 0", case_write_harness_memory),
    ("killing the env server mid-step: the stock client's step fails at once with openenvd's "
     "EPISODE_ENDED, agent_misbehavior blamed on the env", case_kill_env),
    ("no infrastructure_error; the daemon stops with 0 and leaves nothing",
     case_all_verdicts_honest_and_clean_stop),
]


def teardown():
    if S.get("daemon"):
        S["daemon"].stop()
    if S.get("root"):
        shutil.rmtree(S["root"], ignore_errors=True)


def main():
    if not os.path.isfile(os.path.join(FIXTURE, "pylib.tar.xz")):
        return skip_all(CASES, "the real OpenEnv is not at %s (set OPENENVD_OPENENV_REAL)"
                        % FIXTURE)
    if os.geteuid() != 0:
        return skip_all(CASES, "needs root")
    if not shutil.which("git", path=SYSTEM_PATH):
        return skip_all(CASES, "git is not installed (the install is a git checkout)")
    return run_cases(CASES, install, teardown)


if __name__ == "__main__":
    sys.exit(main())
