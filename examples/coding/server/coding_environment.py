# SPDX-License-Identifier: LGPL-2.1-or-later
"""The coding env: the agent writes a program, the env runs it on the visible
examples and reports what it did. Grading against the hidden tests is not
the env's job: openenvd's observers do it after the episode ends, in
containers the agent's code never shares with the answers (README.md).

The env runs agent code in its own container (the agent zone): that is what
the zone is for. Each run uses openenvd_grading.run_cases(): stdin from the
example, a fresh working directory, a timeout, an output bound, the case's
whole process group killed after it. No memory limit of its own: a program
that balloons is OOM-killed inside the zone's cgroup, the env survives and
reports signal 9, and openenvd records the event while the episode goes on
(docs/GRADING.md, the verdict policy).
"""
from __future__ import annotations

import base64
import os
import sys
import uuid

from openenv.core.env_server import Environment

try:  # as a package (in-repo) or standalone (uvicorn server.app:app)
    from ..models import CodingAction, CodingObservation, CodingState, ExampleResult
except ImportError as e:
    if "relative import" not in str(e) and "no known parent package" not in str(e):
        raise
    from models import CodingAction, CodingObservation, CodingState, ExampleResult

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(HERE, "grading"))  # install.sh puts the library there
import openenvd_grading as grading  # noqa: E402

WORKSPACE = os.environ.get("OPENENVD_WORKSPACE", "/workspace")
MAX_PROGRAMS = int(os.environ.get("CODING_MAX_PROGRAMS", "8"))
TIMEOUT_S = float(os.environ.get("CODING_TIMEOUT_S", "5"))
OUTPUT_LIMIT = 64 * 1024
SHOWN = 4096  # bytes of each example's stdout the observation carries


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


class CodingEnvironment(Environment):
    def __init__(self):
        super().__init__()
        self.reset()

    def reset(self, seed=None, episode_id=None, **kwargs):
        self._state = CodingState(episode_id=episode_id or str(uuid.uuid4()), step_count=0)
        return CodingObservation(task=_read(os.path.join(WORKSPACE, "TASK.md")))

    def step(self, action: CodingAction, timeout_s=None, **kwargs):
        path = os.path.join(WORKSPACE, "solution.py")
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(action.code)
        os.replace(tmp, path)
        examples = os.path.join(WORKSPACE, "examples")
        cases = grading.load_cases(examples)
        runs = grading.run_cases([sys.executable, path], cases, timeout=TIMEOUT_S,
                                 output_limit=OUTPUT_LIMIT)
        results = []
        for r in runs:
            out = base64.b64decode(r["stdout_b64"])
            want = _read(os.path.join(examples, r["id"] + ".out")).encode()
            ok = (r["exit_code"] == 0 and not r["timed_out"] and not r["output_truncated"]
                  and grading.exact(want, out))
            results.append(ExampleResult(
                id=r["id"], passed=ok, exit_code=r["exit_code"], signal=r["signal"],
                timed_out=r["timed_out"], output_truncated=r["output_truncated"],
                stdout=out[:SHOWN].decode("utf-8", "replace"),
                stderr_tail=r["stderr_tail"][-SHOWN:]))
        programs = self._state.programs + 1
        done = action.submit or programs >= MAX_PROGRAMS
        self._state = CodingState(episode_id=self._state.episode_id,
                                  step_count=self._state.step_count + 1,
                                  programs=programs, submitted=action.submit)
        passed = sum(r.passed for r in results)
        # A shaping signal on what the agent can see; the reward that counts
        # is the verdict's score on the hidden tests (GET /verdict).
        return CodingObservation(results=results, passed=passed, total=len(results),
                                 reward=passed / len(results) if results else 0.0, done=done)

    @property
    def state(self):
        return self._state
