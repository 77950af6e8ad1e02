# SPDX-License-Identifier: LGPL-2.1-or-later
"""Hidden tests as code, split in two: a runner that runs agent code and a
verdict that scores it (docs/CUSTODY.md, "Hidden tests as code: the
runner/verdict split").

An observer may not read both assets and the workspace (docs/MANIFEST.md):
agent-written files must never be interpreted by a process that can see the
answers. So a unit's tests are two assets and three observers, each reading
only its part:

    privileged_assets:
      inputs: tests/inputs          # <case>.in: what each case feeds the program
      answers: tests/answers        # <case>.out: what it must print
    zones:
      observers:
        containers:
          stage:                      # hands the inputs on; runs no agent code
            argv: [python3, /opt/grading/openenvd_grading.py, stage,
                   --from, /assets/inputs, --out, /out/cases]
            reads: [assets.inputs]
            phases: [grading]
            output: /out/cases
          runner:                     # runs agent code; sees no answer, no asset
            argv: [python3, /opt/grading/openenvd_grading.py, run,
                   --inputs, /inputs/stage/cases, --out, /out/results.json,
                   --timeout, "2", --, python3, /workspace/solution.py]
            reads: [workspace, stage.output]
            phases: [grading]
            after: stage
            output: /out/results.json
          verdict:                    # scores; runs no agent code
            argv: [python3, /opt/grading/openenvd_grading.py, score,
                   --answers, /assets/answers, --results, /inputs/runner/results.json]
            reads: [assets.answers, runner.output]
            phases: [grading]
            after: runner

The runner may not list an asset beside the workspace, so the inputs reach it
as the stage's output (a custody copy: the daemon's); the answers reach only
the verdict. Agent code running in the runner can read the inputs (it must:
they are its stdin) but never the answers.

The two halves:

  run_cases()   (runner) runs a command once per case with the case's input
                on stdin, a timeout, an output bound and a fresh working
                directory; kills the case's whole process group after it; records
                only what it measured: exit status, signal, time, whether it timed
                out or overflowed, and stdout as bytes (base64 in JSON). It never
                opens, imports or parses anything the agent wrote.
  score()       (verdict) reads the runner's results as untrusted bytes
                (bounded, no symlink, no FIFO, strict UTF-8 and JSON, no
                duplicate keys, exact types), compares each case's stdout with
                the answer, and writes /out/verdict.json. It never runs agent
                code, and nothing of the agent's bytes is copied into the verdict.

Why the JSON boundary defeats `__eq__` overrides: a reward hack that returns an
object whose `__eq__` always answers True needs that object in the process
that compares. Here the agent's code runs in another process (the runner),
in another container, and all that crosses to the verdict is a file of
bytes. json.loads() builds only dict, list, str, int, float, bool and None,
whose comparison the agent cannot define; score() further checks exact types
(`type(x) is str`), decodes stdout to `bytes` itself and compares bytes with
the answer's bytes. No pickle, no eval, no import of anything the runner
wrote: there is no way for agent code to put a method into the verdict.

Only the standard library; Python 3.9 or later. Runs as a program too:

    openenvd_grading.py stage --from DIR --out DIR
    openenvd_grading.py run --inputs DIR --out FILE [--timeout S] [--output-limit N]
                            [--memory-mb N] -- CMD...
    openenvd_grading.py score --answers DIR --results FILE [--out FILE]
"""
from __future__ import annotations

import base64
import binascii
import json
import math
import os
import re
import selectors
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from typing import Callable, Dict, List, Mapping, Optional, Sequence

__all__ = ["stage", "run_cases", "write_results", "score", "parse_results", "load_cases",
           "exact", "tokens", "InvalidResults", "RESULTS_MAX_BYTES", "CASE_ID"]

# What one case may print before it is stopped (the runner's bound).
OUTPUT_LIMIT = 1 << 20
# What the verdict reads of the runner's results at most: a case's stdout is
# bounded by OUTPUT_LIMIT, base64 grows it by a third.
RESULTS_MAX_BYTES = 64 << 20
# The last bytes of stderr kept per case, for the author's eyes.
STDERR_TAIL = 4096
# Case ids: file names without a path or a leading dot, so a listing's names
# are ids as they are.
CASE_ID = re.compile(r"\A[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}\Z")
MAX_CASES = 10000
RESULTS_VERSION = 1

# A minimal environment for agent code: nothing of the observer's.
CASE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"}


# --- cases ------------------------------------------------------------------------

def load_cases(directory: str, suffix: str = ".in",
               limit: int = OUTPUT_LIMIT) -> Dict[str, bytes]:
    """{case id: bytes} of every regular file <id><suffix> in directory (an
    asset: the author's). Sorted by id; a file over limit bytes, an id that
    is not CASE_ID or more than MAX_CASES files raise ValueError."""
    out = {}
    for name in sorted(os.listdir(directory)):
        if not name.endswith(suffix):
            continue
        cid = name[: -len(suffix)]
        if not CASE_ID.match(cid):
            raise ValueError("case file %r: the id must match %s" % (name, CASE_ID.pattern))
        path = os.path.join(directory, name)
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            continue
        if st.st_size > limit:
            raise ValueError("case file %r is over %d bytes" % (name, limit))
        with open(path, "rb") as f:
            out[cid] = f.read(limit + 1)
        if len(out) > MAX_CASES:
            raise ValueError("more than %d cases" % MAX_CASES)
    return out


def stage(src: str, dst: str, suffix: str = ".in") -> int:
    """The stage observer: copies the cases of src (the inputs asset) into
    dst (a new directory under its /out), for the runner to read as this
    observer's output. Returns how many."""
    cases = load_cases(src, suffix)
    os.makedirs(dst, mode=0o755)
    for cid, data in cases.items():
        with open(os.path.join(dst, cid + suffix), "xb") as f:
            f.write(data)
    return len(cases)


# --- the runner --------------------------------------------------------------------

def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
SWEEP_DEADLINE_S = 10.0


def _prctl(option: int, value: int) -> None:
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, value, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, "prctl(%d): %s" % (option, os.strerror(err)))


def _own_children() -> List[int]:
    """The pids whose parent is this process (from /proc: a comm may hold
    spaces and parentheses, so ppid is read after the last ')')."""
    me, kids = os.getpid(), []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                st = f.read()
        except OSError:
            continue
        fields = st[st.rfind(b")") + 2:].split()
        if len(fields) > 1 and int(fields[1]) == me:
            kids.append(int(name))
    return kids


def sweep(deadline_s: float = SWEEP_DEADLINE_S) -> None:
    """Kills and reaps every process this one has left, wherever it went:
    as a child subreaper (run_cases(sweep=True) makes it one) it inherits
    the processes that left a case's process group and session (setsid(),
    a double fork) when their parents die, so killing its children until
    it has none kills them all, generation by generation. Raises
    RuntimeError when some outlive deadline_s (a runner must not write
    results while agent code still runs beside it)."""
    end = time.monotonic() + deadline_s
    while True:
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            return
        for pid in _own_children():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if time.monotonic() > end:
            raise RuntimeError("processes of the cases outlived %gs after SIGKILL" % deadline_s)
        time.sleep(0.001)


def _run_one(argv: Sequence[str], data: bytes, timeout: float, output_limit: int,
             env: Mapping[str, str], memory_bytes: Optional[int]) -> dict:
    def limits():
        if memory_bytes:
            import resource
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))

    workdir = tempfile.mkdtemp(prefix="case-")
    out, err = bytearray(), bytearray()
    truncated = timed_out = False
    start = time.monotonic()
    deadline = start + timeout
    try:
        proc = subprocess.Popen(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, cwd=workdir, env=dict(env),
                                close_fds=True, start_new_session=True, preexec_fn=limits)
    except OSError as e:
        shutil.rmtree(workdir, ignore_errors=True)
        return {"exit_code": None, "signal": None, "timed_out": False,
                "output_truncated": False, "time_s": 0.0, "stdout_b64": "",
                "stderr_tail": "", "error": "cannot start: %s" % e.strerror}
    sel = selectors.DefaultSelector()
    try:
        pending = memoryview(data)
        for f in (proc.stdin, proc.stdout, proc.stderr):
            os.set_blocking(f.fileno(), False)
        if pending:
            sel.register(proc.stdin, selectors.EVENT_WRITE)
        else:
            proc.stdin.close()
        sel.register(proc.stdout, selectors.EVENT_READ)
        sel.register(proc.stderr, selectors.EVENT_READ)
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                break
            for key, _ in sel.select(left):
                f = key.fileobj
                if f is proc.stdin:
                    try:
                        n = os.write(f.fileno(), pending[:65536])
                        pending = pending[n:]
                    except BlockingIOError:
                        continue
                    except BrokenPipeError:
                        pending = pending[:0]
                    if not pending:
                        sel.unregister(f)
                        f.close()
                    continue
                try:
                    chunk = os.read(f.fileno(), 65536)
                except BlockingIOError:
                    continue
                if not chunk:
                    sel.unregister(f)
                    continue
                if f is proc.stdout:
                    out += chunk
                    if len(out) > output_limit:
                        del out[output_limit:]
                        truncated = True
                        _kill_group(proc.pid)
                        sel.unregister(f)
                else:
                    err += chunk
                    del err[:-STDERR_TAIL]
        # Output is closed (or the case overflowed, or time is up): the
        # program itself gets what is left of its time.
        try:
            proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
    finally:
        # Whatever the case left in its group (a background child holding
        # the pipes, say) goes with it; one that left the group with
        # setsid() goes in sweep() (sweep_all).
        _kill_group(proc.pid)
        proc.wait()
        sel.close()
        for f in (proc.stdin, proc.stdout, proc.stderr):
            if not f.closed:
                f.close()
        shutil.rmtree(workdir, ignore_errors=True)
    elapsed = time.monotonic() - start
    rc = proc.returncode
    killed_by_us = timed_out or truncated
    return {"exit_code": rc if rc >= 0 else None,
            "signal": -rc if rc < 0 and not killed_by_us else None,
            "timed_out": timed_out, "output_truncated": truncated,
            "time_s": round(elapsed, 4),
            "stdout_b64": base64.b64encode(bytes(out)).decode("ascii"),
            "stderr_tail": err.decode("utf-8", "replace")}


def run_cases(argv: Sequence[str], cases: Mapping[str, bytes], *, timeout: float = 2.0,
              output_limit: int = OUTPUT_LIMIT, env: Optional[Mapping[str, str]] = None,
              memory_bytes: Optional[int] = None, sweep_all: bool = False) -> List[dict]:
    """Runs argv once per case, in id order: the case's bytes on stdin, a
    fresh empty working directory under $TMPDIR, the minimal CASE_ENV (or
    env), its own session and process group, an address-space limit when
    memory_bytes is given. A case is stopped (its whole group SIGKILLed) at
    `timeout` seconds or when stdout passes output_limit bytes.

    Returns one dict per case: id, exit_code (None when killed by a signal),
    signal, timed_out, output_truncated, time_s, stdout_b64 (the bytes it
    printed, base64: any bytes, exactly), stderr_tail (the last STDERR_TAIL
    bytes, decoded with replacement: for people, never scored).

    sweep_all: after each case, also every process it left outside its
    group (sweep()): none of a case's processes meets the next case or
    outlives the results, where one that left with setsid() could rewrite
    them after they are written (the daemon copies /out only when the
    observer's cgroup is empty, but the results are written before that).
    The caller becomes a child subreaper for good: for a runner that is its
    container's only program (the `run` command), not for an env server
    whose other children must live on.
    """
    if not argv:
        raise ValueError("run_cases: an empty command")
    if sweep_all:
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
    results = []
    for cid in sorted(cases):
        if not CASE_ID.match(cid):
            raise ValueError("case id %r must match %s" % (cid, CASE_ID.pattern))
        r = _run_one(argv, bytes(cases[cid]), timeout, output_limit,
                     CASE_ENV if env is None else env, memory_bytes)
        if sweep_all:
            sweep()
        results.append({"id": cid, **r})
    return results


def _write_json_atomic(path: str, obj) -> None:
    """obj as JSON at path: written to a fresh file beside it, then renamed
    over whatever is there (a symlink planted at path is replaced, never
    followed)."""
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=d)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(obj, f, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _default_summary_path() -> Optional[str]:
    out = os.environ.get("OPENENVD_OUT")
    return os.path.join(out, "verdict.json") if out else None


def write_results(path: str, results: List[dict],
                  summary_path: Optional[str] = "") -> None:
    """The runner's output: {"version": 1, "cases": results}. Agent code ran
    in this container and could have written this path too: the verdict
    reads it as a claim (score()).

    Then the runner's own verdict.json (summary_path; by default
    $OPENENVD_OUT/verdict.json, which the daemon sets to /out in observers;
    None: none): {"role": "runner", "cases": N}, written last over whatever
    is there. Agent code can plant a verdict.json in the runner's /out, and
    GET /verdict serves each observer's as observers.<name>: a forged
    {"score": 1.0} there must not survive. Score from observers.<verdict>."""
    _write_json_atomic(path, {"version": RESULTS_VERSION, "cases": results})
    if summary_path == "":
        summary_path = _default_summary_path()
    if summary_path:
        _write_json_atomic(summary_path, {"role": "runner", "cases": len(results)})


# --- the verdict -------------------------------------------------------------------

class InvalidResults(ValueError):
    """The runner's results are not what run_cases() writes: the agent's doing
    (its code ran where they were written)."""


def _no_duplicates(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise InvalidResults("a key appears twice in an object")
        d[k] = v
    return d


def _no_constants(name):
    raise InvalidResults("%s is not JSON" % name)


def _read_bounded(path: str, limit: int) -> bytes:
    """At most limit bytes of a regular file, never through a symlink, never
    blocking on a FIFO or a device."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
                     | getattr(os, "O_NOCTTY", 0))
    except OSError as e:
        raise InvalidResults("cannot open the results: %s" % (e.strerror or e)) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InvalidResults("the results are not a regular file")
        chunks, n = [], 0
        while n <= limit:
            b = os.read(fd, min(1 << 20, limit + 1 - n))
            if not b:
                break
            chunks.append(b)
            n += len(b)
        if n > limit:
            raise InvalidResults("the results are over %d bytes" % limit)
        return b"".join(chunks)
    finally:
        os.close(fd)


def parse_results(raw: bytes, known: Sequence[str], output_limit: int = OUTPUT_LIMIT) -> dict:
    """{case id: result} for the known ids found in raw, each checked as
    run_cases() writes it: exact types, stdout a bounded base64 string
    decoded to bytes. Raises InvalidResults for anything else. Ids not
    known are ignored; a known id twice is invalid."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidResults("the results are not UTF-8") from None
    try:
        doc = json.loads(text, object_pairs_hook=_no_duplicates,
                         parse_constant=_no_constants)
    except InvalidResults:
        raise
    except (ValueError, RecursionError) as e:
        raise InvalidResults("the results are not JSON (%s)" % type(e).__name__) from None
    if type(doc) is not dict or doc.get("version") != RESULTS_VERSION or \
            type(doc.get("version")) is not int or type(doc.get("cases")) is not list:
        raise InvalidResults("the results are not {\"version\": 1, \"cases\": [...]}")
    known_set, found = set(known), {}
    b64_limit = 4 * ((output_limit + 2) // 3)
    for c in doc["cases"]:
        if type(c) is not dict or type(c.get("id")) is not str:
            raise InvalidResults("a case is not an object with a string id")
        cid = c["id"]
        if cid not in known_set:
            continue
        if cid in found:
            raise InvalidResults("a case id appears twice")
        ec, sig, s = c.get("exit_code"), c.get("signal"), c.get("stdout_b64")
        if not (ec is None or type(ec) is int) or not (sig is None or type(sig) is int) or \
                type(c.get("timed_out")) is not bool or \
                type(c.get("output_truncated")) is not bool or type(s) is not str:
            raise InvalidResults("a case's fields have the wrong types")
        if len(s) > b64_limit:
            raise InvalidResults("a case's output is over %d bytes" % output_limit)
        try:
            out = base64.b64decode(s.encode("ascii"), validate=True)
        except (UnicodeEncodeError, binascii.Error):
            raise InvalidResults("a case's output is not base64") from None
        found[cid] = {"exit_code": ec, "signal": sig, "timed_out": c["timed_out"],
                      "output_truncated": c["output_truncated"], "stdout": out}
    return found


def exact(expected: bytes, actual: bytes) -> bool:
    """The same bytes, but for trailing whitespace at the end of each line and
    of the whole output (what judges usually forgive)."""
    def norm(b):
        return b"\n".join(line.rstrip() for line in b.rstrip().split(b"\n"))
    return norm(expected) == norm(actual)


def tokens(expected: bytes, actual: bytes) -> bool:
    """The same whitespace-separated tokens."""
    return expected.split() == actual.split()


def score(results_path: str, answers: Mapping[str, bytes], *,
          compare: Callable[[bytes, bytes], bool] = exact,
          out_path: Optional[str] = "/out/verdict.json",
          max_bytes: int = RESULTS_MAX_BYTES, output_limit: int = OUTPUT_LIMIT) -> dict:
    """Scores the runner's results against answers ({case id: expected
    bytes}, the verdict's asset): a case passes when it exited 0, did not
    time out or overflow, and compare(expected, stdout) is true. A case
    missing from the results fails; results that are not what run_cases()
    writes (oversize, a symlink, a FIFO, not UTF-8, not JSON, a key twice, a
    case twice, wrong types) fail every case, with `invalid` saying why.

    Writes (unless out_path is None) and returns
    {"score": passed/total, "passed", "total", "invalid": reason or None,
     "cases": {id: {"passed": bool, "why": fixed words}}}: only the author's
    ids, numbers, booleans and this module's words; no agent byte.
    """
    ids = sorted(answers)
    invalid, found = None, {}
    try:
        found = parse_results(_read_bounded(results_path, max_bytes), ids, output_limit)
    except InvalidResults as e:
        invalid = str(e)
    cases = {}
    for cid in ids:
        r = found.get(cid)
        if invalid:
            why = "invalid results"
        elif r is None:
            why = "no result"
        elif r["timed_out"]:
            why = "timed out"
        elif r["output_truncated"]:
            why = "output over the limit"
        elif r["exit_code"] != 0:
            why = "killed by a signal" if r["exit_code"] is None else "exit status not 0"
        elif not compare(bytes(answers[cid]), r["stdout"]):
            why = "wrong answer"
        else:
            why = "passed"
        cases[cid] = {"passed": why == "passed", "why": why}
    passed = sum(1 for c in cases.values() if c["passed"])
    total = len(ids)
    s = passed / total if total else 0.0
    assert 0.0 <= s <= 1.0 and not math.isnan(s)
    verdict = {"score": s, "passed": passed, "total": total, "invalid": invalid,
               "cases": cases}
    if out_path:
        _write_json_atomic(out_path, verdict)
    return verdict


# --- as a program ------------------------------------------------------------------

def main(argv: Sequence[str]) -> int:
    import argparse
    p = argparse.ArgumentParser(prog="openenvd_grading.py", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="half", required=True)
    r = sub.add_parser("run", help="the runner: run CMD on every case of --inputs")
    r.add_argument("--inputs", required=True, help="a directory of <case>.in files")
    r.add_argument("--out", required=True, help="where the results go (under /out)")
    r.add_argument("--timeout", type=float, default=2.0)
    r.add_argument("--output-limit", type=int, default=OUTPUT_LIMIT)
    r.add_argument("--memory-mb", type=int, default=None)
    r.add_argument("cmd", nargs=argparse.REMAINDER)
    g = sub.add_parser("stage", help="hand the inputs asset on to the runner")
    g.add_argument("--from", dest="src", required=True, help="the inputs asset")
    g.add_argument("--out", required=True, help="a new directory under /out")
    s = sub.add_parser("score", help="the verdict: score --results against --answers")
    s.add_argument("--answers", required=True, help="a directory of <case>.out files")
    s.add_argument("--results", required=True, help="the runner's results (/inputs/<runner>/...)")
    s.add_argument("--out", default="/out/verdict.json")
    s.add_argument("--compare", choices=("exact", "tokens"), default="exact")
    a = p.parse_args(argv)
    if a.half == "stage":
        print("staged %d cases" % stage(a.src, a.out))
        return 0
    if a.half == "run":
        cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
        if not cmd:
            p.error("run: the command to test comes after --")
        # Agent code runs as this process's uid: non-dumpable, this process's
        # memory, fds and /proc files are closed to it (ptrace is refused by
        # openenvd's seccomp filter; /proc/<pid>/mem is not a syscall).
        _prctl(PR_SET_DUMPABLE, 0)
        res = run_cases(cmd, load_cases(a.inputs), timeout=a.timeout,
                        output_limit=a.output_limit,
                        memory_bytes=a.memory_mb * 1024 * 1024 if a.memory_mb else None,
                        sweep_all=True)
        write_results(a.out, res)
        return 0
    v = score(a.results, load_cases(a.answers, ".out"),
              compare=tokens if a.compare == "tokens" else exact, out_path=a.out)
    print("score %s (%d/%d)%s" % (v["score"], v["passed"], v["total"],
                                  ": invalid results: " + v["invalid"] if v["invalid"] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
