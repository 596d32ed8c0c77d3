"""Benchmark evaluation: rollout runner, trajectory files, App. C.1 metrics, judge, reports.

    python -m eval.rollout --env SituRec-Supermarket-v0 --agent heuristic --out runs/x
    python -m eval.metrics runs/x/trajectories.jsonl

Submodules import lazily (``eval.rollout`` pulls in the env; ``eval.metrics`` only records).
"""

__all__: list[str] = []
