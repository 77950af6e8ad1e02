# SPDX-License-Identifier: LGPL-2.1-or-later
"""OpenEnv's stock client against the coding unit (examples/coding), many
episodes in one process (its imports take seconds):

    coding_client.py BASE_URL EPISODES.json     prints one JSON object

EPISODES.json is [{"name": ..., "steps": [{"code": ..., "submit": bool}, ...]}, ...].
Each episode is reset(), then its steps as CodingAction(code=, submit=) on
one CodingEnv(base_url=...).sync(); once a step reports done, the verdict
is fetched with GET /verdict?wait=1 (openenvd's control API, not OpenEnv's:
the token in BASE_URL as Bearer). Prints
{"episodes": [{"name", "episode_id", "observations": [...], "verdict", "error"}]}:
every observation as the stock client parsed it. An episode that breaks the
session (an exception) is recorded with its error and what it had got so far,
and the next one gets a new client.

Runs with the real OpenEnv and the unit's package on PYTHONPATH (the
install's parent directory, the fixture's src/, the install's pylib/).
Nothing of OpenEnv is patched or subclassed here.
"""
import json
import sys
import time
import traceback

from coding_env import CodingAction, CodingEnv
from control_api import control

# The stock client's answer timeout (its default is 60 s): a reset() that
# starts an episode waits for an env server to start.
TIMEOUT = 600


def observation(r):
    o = r.observation.model_dump()
    o.update(done=r.done, reward=r.reward)
    return o


def play(env, base, episode, out):
    t0 = time.monotonic()
    r = env.reset()
    out["episode_id"] = control(base, "GET", "/info", TIMEOUT)["episode_id"]
    out["task"] = r.observation.task
    for step in episode["steps"]:
        r = env.step(CodingAction(code=step["code"], submit=bool(step.get("submit"))))
        out["observations"].append(observation(r))
        if r.done:
            break
    if r.done:
        out["verdict"] = control(base, "GET", "/verdict?wait=1", TIMEOUT)
    out["seconds"] = round(time.monotonic() - t0, 3)


def main():
    base, path = sys.argv[1], sys.argv[2]
    with open(path) as f:
        episodes = json.load(f)
    results = []
    left = list(episodes)
    while left:
        try:
            with CodingEnv(base_url=base, message_timeout_s=TIMEOUT).sync() as env:
                while left:
                    episode = left.pop(0)
                    out = {"name": episode["name"], "episode_id": None, "observations": [],
                           "verdict": None, "error": None}
                    results.append(out)
                    try:
                        play(env, base, episode, out)
                    except Exception:  # noqa: BLE001 - recorded; a new client for the next
                        out["error"] = traceback.format_exc()
                        break
        except Exception:  # noqa: BLE001 - closing a broken session
            pass
    print(json.dumps({"episodes": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
