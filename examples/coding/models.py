# SPDX-License-Identifier: LGPL-2.1-or-later
"""The coding env's messages, as OpenEnv types (pydantic models).

The agent's one action is a program: CodingAction.code, written to
/workspace/solution.py and run on the task's visible examples; `submit`
ends the episode, after which openenvd's observers run it on the hidden
tests (the env never sees those).
"""
from __future__ import annotations

from typing import List

from openenv.core.env_server import Action, Observation, State
from pydantic import BaseModel, Field


class CodingAction(Action):
    """A Python program reading stdin and writing stdout; submit ends the episode."""

    code: str = Field(max_length=256 * 1024)
    submit: bool = False


class ExampleResult(BaseModel):
    """One visible example: what the program did on it."""

    id: str
    passed: bool
    exit_code: int | None = None
    signal: int | None = None
    timed_out: bool = False
    output_truncated: bool = False
    stdout: str = ""
    stderr_tail: str = ""


class CodingObservation(Observation):
    """The task, and the last program's results on the visible examples."""

    task: str = ""
    results: List[ExampleResult] = Field(default_factory=list)
    passed: int = 0
    total: int = 0


class CodingState(State):
    """OpenEnv's state plus how many programs this episode has seen."""

    programs: int = 0
    submitted: bool = False
