#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A grader for OpenEnv's connect4_env that does not trust the env.

The env server shares the agent zone with the code the agent runs, so the
reward and the board it answers are the agent zone's claim. This judge
replays the game from what openenvd itself recorded of the actions sent on
the unit's port (`reads: [actions]`: /actions/actions.jsonl, one JSON object
per message, docs/DAEMON.md "The record of actions") under connect4's rules,
and scores that. It reads nothing else: no workspace, no env state.

connect4_env's client plays both sides: player 1 on odd steps, player -1 on
even ones; a move into a full or missing column ends the game with -1 for
the mover; four in a row ends it with 1; a full board with 0.
Writes /out/verdict.json: {"episode", "moves", "done", "winner", "reward",
"invalid_move", "unreadable", "after_end"}.
"""
import json
import os
import sys

ROWS, COLUMNS = 6, 7
RECORD = "/actions/actions.jsonl"


def column_of(record):
    """The column one recorded message asked for, or None (not a step)."""
    msg = record.get("message")
    if record.get("via") == "step" and isinstance(msg, dict):
        action = msg.get("action")           # POST /step {"action": {...}}
    elif record.get("via") == "ws" and isinstance(msg, dict) and msg.get("type") == "step":
        action = msg.get("data")             # /ws {"type": "step", "data": {...}}
    else:
        return None
    col = action.get("column") if isinstance(action, dict) else None
    # bool is an int to Python; to pydantic's int field it is not a column.
    return col if isinstance(col, int) and not isinstance(col, bool) else "invalid"


def four_from(board, row, col):
    player = board[row][col]
    for dr, dc in ((1, 0), (0, 1), (1, 1), (1, -1)):
        run = 1
        for sign in (1, -1):
            r, c = row + sign * dr, col + sign * dc
            while 0 <= r < ROWS and 0 <= c < COLUMNS and board[r][c] == player:
                run += 1
                r, c = r + sign * dr, c + sign * dc
        if run >= 4:
            return True
    return False


def replay(records):
    board = [[0] * COLUMNS for _ in range(ROWS)]
    out = {"moves": 0, "done": False, "winner": 0, "reward": 0.0, "invalid_move": False,
           "unreadable": 0, "after_end": 0}
    player = 1
    for rec in records:
        if "dropped" in rec:
            raise SystemExit("judge: the record of actions is incomplete (%s dropped)"
                             % rec["dropped"])
        if rec.get("message") is None:
            out["unreadable"] += 1           # bytes openenvd could not read: no move
            continue
        col = column_of(rec)
        if col is None:
            continue
        if out["done"]:
            out["after_end"] += 1            # the env refuses these; they score nothing
            continue
        out["moves"] += 1
        if col == "invalid" or not 0 <= col < COLUMNS or board[0][col] != 0:
            out.update(done=True, invalid_move=True, winner=-player, reward=-1.0)
            continue
        row = max(r for r in range(ROWS) if board[r][col] == 0)
        board[row][col] = player
        if four_from(board, row, col):
            out.update(done=True, winner=player, reward=1.0)
        elif all(board[0][c] != 0 for c in range(COLUMNS)):
            out.update(done=True)
        player = -player
    return out


def main():
    with open(RECORD, encoding="utf-8") as f:
        records = [json.loads(line) for line in f if line.strip()]
    out = replay(records)
    out["episode"] = os.environ.get("OPENENVD_EPISODE")
    # The daemon's count and its record agree, or the record is not whole.
    sent = sum(r.get("actions", 0) for r in records)
    if str(sent) != os.environ.get("OPENENVD_ACTIONS", str(sent)):
        raise SystemExit("judge: %s actions recorded, OPENENVD_ACTIONS says %s"
                         % (sent, os.environ.get("OPENENVD_ACTIONS")))
    with open("/out/verdict.json", "w") as f:
        json.dump(out, f)
    print("judge: %d moves, winner %d, reward %.1f" % (out["moves"], out["winner"],
                                                        out["reward"]))


if __name__ == "__main__":
    sys.exit(main())
