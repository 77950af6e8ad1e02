# SPDX-License-Identifier: LGPL-2.1-or-later
"""The coding env's client: OpenEnv's stock EnvClient (a WebSocket session),
told how to write an action and read an observation.

    from coding_env import CodingAction, CodingEnv
    with CodingEnv(base_url="http://openenv:TOKEN@127.0.0.1:8000").sync() as env:
        print(env.reset().observation.task)
        r = env.step(CodingAction(code=program, submit=True))
"""
from __future__ import annotations

from typing import Any, Dict

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient

from .models import CodingAction, CodingObservation, CodingState


class CodingEnv(EnvClient[CodingAction, CodingObservation, CodingState]):
    def _step_payload(self, action: CodingAction) -> Dict[str, Any]:
        return {"code": action.code, "submit": action.submit}

    def _parse_result(self, payload: Dict[str, Any]) -> StepResult[CodingObservation]:
        obs = dict(payload.get("observation", {}))
        obs.update(done=payload.get("done", False), reward=payload.get("reward"))
        return StepResult(observation=CodingObservation(**obs), reward=payload.get("reward"),
                          done=payload.get("done", False))

    def _parse_state(self, payload: Dict[str, Any]) -> CodingState:
        return CodingState(**payload)
