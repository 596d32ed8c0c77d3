"""Server-side cost of the human evaluation, per participant request: ``python -m eval.human.bench``.

Prints milliseconds for starting a conversation (env + assistant + first response; the
first one in a process also loads the scene and modules), one
participant turn (validate, step, next assistant response), rendering the page state (two
PNGs), and rebuilding a conversation from its replay log (what a restart or an evicted
session costs), with the heuristic assistant on one Supermarket task.
"""

from __future__ import annotations

import argparse
import time

from agents.heuristic import HeuristicAssistant
from eval.human.conversation import Conversation

__all__ = ["main"]

_TURNS = [
    ("Hi, I'm looking for some milk.", {"name": "turn", "arguments": {"direction": "left", "angle": 30}}),
    ("Organic, please.", {"name": "move_forward", "arguments": {"distance": "medium"}}),
    ("At most four dollars.", {"name": "turn", "arguments": {"direction": "right", "angle": 45}}),
    ("Where is it?", {"name": "idle", "arguments": {}}),
]


def _ms(start: float) -> float:
    return 1000.0 * (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.human.bench", description=__doc__.split("\n")[0])
    parser.add_argument("--task", default="sm_u01_t1", help="task id")
    parser.add_argument("--turns", type=int, default=12, help="participant turns to play (cycling a script)")
    args = parser.parse_args(argv)

    starts = []
    for _ in range(2):  # the first pays the process's one-time loading of scene and modules
        t0 = time.perf_counter()
        conv = Conversation(env_id="SituRec-Supermarket-v0", task_id=args.task, seed=42,
                            assistant=HeuristicAssistant(), max_turns=args.turns + 1)
        starts.append(_ms(t0))
    turn_ms, state_ms = [], []
    for k in range(args.turns):
        utterance, call = _TURNS[k % len(_TURNS)]
        t0 = time.perf_counter()
        error = conv.submit(utterance, call)
        turn_ms.append(_ms(t0))
        if error is not None or conv.done:
            break
        t0 = time.perf_counter()
        conv.view_state()
        state_ms.append(_ms(t0))
    t0 = time.perf_counter()
    Conversation(env_id="SituRec-Supermarket-v0", task_id=args.task, seed=42,
                 assistant=HeuristicAssistant(), log=[dict(e) for e in conv.log], max_turns=args.turns + 1)
    replay_ms = _ms(t0)
    n = len(conv.turns)
    print(f"first conversation:        {starts[0]:8.1f} ms (one-time loading included)")
    print(f"start a conversation:      {starts[1]:8.1f} ms")
    print(f"one participant turn:      {sum(turn_ms) / len(turn_ms):8.1f} ms (mean of {len(turn_ms)})")
    print(f"page state (2 PNGs):       {sum(state_ms) / max(1, len(state_ms)):8.1f} ms (mean of {len(state_ms)})")
    print(f"replay a {n:2d}-turn log:       {replay_ms:8.1f} ms ({replay_ms / max(1, n):.1f} ms per turn)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
