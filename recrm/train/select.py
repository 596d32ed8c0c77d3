"""Ranking / behaviour head chosen by held-out metrics: train the classifier head and the generative model, keep the better.

``OUT/classifier`` and ``OUT/generative`` hold the two scorers; the better on the held-out
``test`` split (ranking: mean of HR@1/3/5, then AUC; behaviour: AUC, then ACC) is copied to
``OUT`` itself, and ``OUT/selection.json`` records both metrics and the choice.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import shutil
from collections.abc import Callable
from pathlib import Path

from recrm.train.config import RMTrainConfig

__all__ = ["SELECT_METRICS", "train_and_select"]

logger = logging.getLogger(__name__)

SELECT_METRICS = {"ranking": ("hr_mean", "auc"), "behavior": ("auc", "acc")}


def _key(task: str, metrics: dict) -> tuple:
    return tuple(-1.0 if metrics.get(m) is None else float(metrics[m]) for m in SELECT_METRICS[task])


def train_and_select(cfg: RMTrainConfig, training_overrides: dict | None, train: Callable[..., Path]) -> Path:
    """Train both heads of ``cfg.task`` with ``train`` (``recrm.train.train``, handed in so this
    module does not import its package) and return ``cfg.out`` holding the better one."""
    from recrm.evaluate import evaluate

    if cfg.task not in SELECT_METRICS:
        raise ValueError(f"head 'select' is for {list(SELECT_METRICS)}, not {cfg.task!r}")
    out = Path(cfg.out)
    scores = {}
    for head in ("classifier", "generative"):
        folder = train(dataclasses.replace(cfg, head=head, out=str(out / head)), training_overrides)
        scores[head] = evaluate(cfg.data, {cfg.task: f"model:{folder}"}, split="test")[cfg.task]
        logger.info("%s %s head: %s", cfg.task, head, {m: scores[head].get(m) for m in SELECT_METRICS[cfg.task]})
    best = max(scores, key=lambda h: _key(cfg.task, scores[h]))
    for f in (out / best).iterdir():
        if f.is_file():
            shutil.copy2(f, out / f.name)
    (out / "selection.json").write_text(json.dumps({"chosen": best, "by": list(SELECT_METRICS[cfg.task]),
                                                    "split": "test", "metrics": scores}, indent=2) + "\n",
                                        encoding="utf-8")
    return out
