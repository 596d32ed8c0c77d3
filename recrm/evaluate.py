"""Evaluate rule or learned scorers on held-out RecRM data with the paper's metrics.

    python -m recrm.evaluate --scorer rule --data data/recrm
    python -m recrm.evaluate --scorer relevance=model:runs/rm/relevance --scorer rule --data data/recrm

Judges (instruction, consistency, relevance): ACC, macro-F1 and weighted Cohen's kappa
against the labels. Ranking: pointwise ACC and AUC over all candidates, and the mean of
HR@1/3/5 of the positive. Behaviour: ACC and AUC of the list-level prediction. Rule
scorers read the task's ground truth through the record's source (store, task id).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from recrm.components import (
    BehaviorPrediction,
    FactualConsistency,
    InstructionFollowing,
    ItemRanking,
    QueryItemRelevance,
)
from recrm.context import TurnContext
from recrm.data.io import DataError, data_file, load_split
from recrm.data.prompts import judge_fields, list_text, pair_text
from recrm.data.schema import KINDS
from situ_gym.records import TurnRecord

__all__ = ["judge_metrics", "ranking_metrics", "behavior_metrics", "rule_predictions",
           "model_predictions", "evaluate", "main"]


def judge_metrics(labels: Sequence[int], preds: Sequence[int | None], n_classes: int) -> dict[str, float]:
    """ACC, macro-F1 and weighted kappa (linear weights; unparseable answers count as wrong).

    >>> judge_metrics([0, 1, 2, 2], [0, 1, 2, 1], 3)["acc"]
    0.75
    """
    from sklearn.metrics import accuracy_score, cohen_kappa_score, f1_score

    # an unreadable verdict is a miss: map it to a class that is never the label
    filled = [p if p is not None else -1 for p in preds]
    classes = list(range(n_classes))
    kappa_preds = [p if p is not None else (0 if y != 0 else n_classes - 1) for p, y in zip(preds, labels, strict=True)]
    return {
        "n": len(labels),
        "acc": float(accuracy_score(labels, filled)),
        "macro_f1": float(f1_score(labels, filled, labels=classes, average="macro", zero_division=0)),
        "kappa_w": float(cohen_kappa_score(labels, kappa_preds, labels=classes, weights="linear")),
        "unparsed": sum(p is None for p in preds),
    }


def _auc(labels: Sequence[int], scores: Sequence[float]) -> float | None:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(labels, scores)) if len(set(labels)) == 2 else None


def ranking_metrics(lists: Sequence[tuple[Sequence[int], Sequence[float]]]) -> dict[str, float | None]:
    """Pointwise ACC (p > 0.5) and AUC over all candidates; mean of HR@1, HR@3, HR@5.

    Ties are broken by candidate order (the records shuffle it), so a constant scorer
    gets the positive's random rank, not the first place.

    >>> ranking_metrics([([0, 1, 0], [0.1, 0.9, 0.2])])["hr_mean"]
    1.0
    """
    labels = [y for ys, _ in lists for y in ys]
    scores = [s for _, ss in lists for s in ss]
    ranks = []
    for ys, ss in lists:
        pos = ys.index(1)
        ranks.append(1 + sum(1 for j, s in enumerate(ss) if s > ss[pos] or (s == ss[pos] and j < pos)))
    hr = {k: sum(r <= k for r in ranks) / len(ranks) for k in (1, 3, 5)}
    return {
        "n": len(lists),
        "acc": sum((s > 0.5) == bool(y) for y, s in zip(labels, scores, strict=True)) / len(labels),
        "auc": _auc(labels, scores),
        "hr@1": hr[1], "hr@3": hr[3], "hr@5": hr[5],
        "hr_mean": (hr[1] + hr[3] + hr[5]) / 3,
    }


def behavior_metrics(labels: Sequence[int], probs: Sequence[float]) -> dict[str, float | None]:
    """List-level ACC (p > 0.5) and AUC."""
    return {
        "n": len(labels),
        "acc": sum((p > 0.5) == bool(y) for y, p in zip(labels, probs, strict=True)) / len(labels),
        "auc": _auc(labels, probs),
    }


# ------------------------------------------------------------------ predictions
class _Worlds:
    def __init__(self, worlds: Mapping[str, Any] | None = None):
        self._worlds = dict(worlds or {})

    def __call__(self, store: str):
        if store not in self._worlds:
            from recrm.data.synth import World

            self._worlds[store] = World.load(store)
        return self._worlds[store]


def _turn_ctx(rec, world) -> TurnContext:
    task = world.tasks[rec.source.task_id]
    history = [TurnRecord.model_validate(h) for h in rec.history]
    return TurnContext.from_record(TurnRecord.model_validate(rec.turn), None, task, world.index, history)


def rule_predictions(kind: str, records: Sequence[Any], worlds: Mapping[str, Any] | None = None) -> list:
    """The rule component's verdict on each record (labels' scale: 0/1, 0/1/2, scores, probs)."""
    world_of = _Worlds(worlds)
    out: list = []
    for rec in records:
        world = world_of(rec.source.store)
        task = world.tasks.get(rec.source.task_id)
        if task is None:
            raise DataError(f"record {rec.id}: unknown task {rec.source.task_id!r} in store {rec.source.store!r}")
        if kind == "instruction":
            out.append(int(InstructionFollowing().score(_turn_ctx(rec, world)).value))
        elif kind == "consistency":
            out.append(int(FactualConsistency().score(_turn_ctx(rec, world)).value))
        elif kind == "relevance":
            # the judge reads what a turn says: a Recommend that names the record's item
            product = world.index.products.get(rec.product_id)
            if product is None:
                raise DataError(f"record {rec.id}: unknown product {rec.product_id!r} in store {rec.source.store!r}")
            name = product.name
            ctx = TurnContext(task=task, index=world.index, action_type="Recommend",
                              recommended_id=rec.product_id, revealed=dict(rec.revealed),
                              response=f"I recommend the {name}.", action={"type": "Recommend", "display_name": name})
            value = QueryItemRelevance().score(ctx).value
            out.append(None if value is None else round(value * 2))
        elif kind == "ranking":
            scorer = ItemRanking()
            out.append([scorer.score(TurnContext(task=task, index=world.index, ranking=(c,))).value or 0.0
                        for c in rec.candidate_ids])
        elif kind == "behavior":
            ctx = TurnContext(task=task, index=world.index, ranking=tuple(rec.item_ids))
            out.append(BehaviorPrediction().score(ctx).value or 0.0)
    return out


def model_predictions(kind: str, records: Sequence[Any], scorer) -> list:
    """A learned scorer's verdict on each record, on the labels' scale."""
    from recrm.data.prompts import parse_score

    if kind in ("instruction", "consistency", "relevance"):
        return [parse_score(kind, a) for a in scorer.generate([judge_fields(kind, r) for r in records])]
    if kind == "ranking":
        firsts, seconds = [], []
        for r in records:
            firsts += [pair_text(r.profile, r.query)] * len(r.candidates)
            seconds += r.candidates
        logits = iter(scorer.pair_logits(firsts, seconds))
        import math

        return [[1.0 / (1.0 + math.exp(-next(logits))) for _ in r.candidates] for r in records]
    if kind == "behavior":
        return scorer.list_probs([list_text(r.profile, r.query, r.items) for r in records])
    raise ValueError(f"unknown record kind {kind!r}")


def metrics_for(kind: str, records: Sequence[Any], preds: Sequence[Any]) -> dict[str, Any]:
    """The paper's metrics of ``preds`` against the records' labels."""
    if kind == "instruction" or kind == "consistency":
        return judge_metrics([r.label for r in records], preds, 2)
    if kind == "relevance":
        return judge_metrics([r.score for r in records], preds, 3)
    if kind == "ranking":
        return ranking_metrics([(r.labels, p) for r, p in zip(records, preds, strict=True)])
    return behavior_metrics([r.label for r in records], preds)


def evaluate(data_dir: str, scorers: Mapping[str, str], *, split: str = "test", limit: int | None = None,
             worlds: Mapping[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """Metrics per dimension; ``scorers`` maps a dimension to "rule" or "model:PATH"."""
    from recrm.scorers import load_model_scorer

    results: dict[str, dict[str, Any]] = {}
    for kind in KINDS:
        spec = scorers.get(kind)
        if spec is None or not data_file(data_dir, kind).is_file():
            continue
        records = load_split(data_dir, kind, split)[:limit]
        if not records:
            continue
        if spec == "rule":
            preds = rule_predictions(kind, records, worlds)
        elif spec.startswith("model:"):
            preds = model_predictions(kind, records, load_model_scorer(spec[6:], kind))
        else:
            raise ValueError(f"scorer for {kind!r} must be 'rule' or 'model:PATH', got {spec!r}")
        results[kind] = {"scorer": spec, **metrics_for(kind, records, preds)}
    return results


def format_table(results: Mapping[str, Mapping[str, Any]]) -> str:
    """A Markdown table, one row per dimension and scorer."""
    cols = ["n", "acc", "macro_f1", "kappa_w", "auc", "hr_mean"]
    lines = ["| dimension | scorer | " + " | ".join(cols) + " |", "|" + "---|" * (len(cols) + 2)]
    for kind, m in results.items():
        cells = []
        for c in cols:
            v = m.get(c)
            cells.append("-" if v is None else (str(v) if c == "n" else f"{100 * v:.1f}"))
        lines.append(f"| {kind} | {m['scorer']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _parse_scorers(values: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for v in values:
        name, sep, spec = v.partition("=")
        if sep and name in KINDS:
            out[name] = spec
        elif not sep:
            for k in KINDS:
                out.setdefault(k, v)
        else:
            raise ValueError(f"--scorer {v!r}: use 'rule', 'model:PATH' or DIMENSION=SPEC with DIMENSION in {list(KINDS)}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m recrm.evaluate", description=__doc__.splitlines()[0])
    parser.add_argument("--scorer", action="append", default=[], help="rule | model:PATH | DIMENSION=SPEC (repeatable)")
    parser.add_argument("--data", required=True, help="directory of <kind>.jsonl files")
    parser.add_argument("--split", default="test", choices=("train", "test"))
    parser.add_argument("--limit", type=int, default=None, help="at most this many records per dimension")
    parser.add_argument("--json", action="store_true", help="print the metrics as JSON")
    args = parser.parse_args(argv)
    try:
        specs = {}
        for v in args.scorer or ["rule"]:
            specs.update({k: s for k, s in _parse_scorers([v]).items() if "=" in v or k not in specs})
        results = evaluate(args.data, specs, split=args.split, limit=args.limit)
    except (DataError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not results:
        print(f"error: no {args.split} records in {args.data} for {sorted(specs)}", file=sys.stderr)
        return 2
    print(json.dumps(results, indent=2) if args.json else format_table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
