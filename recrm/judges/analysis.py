"""The paper's analyses of judges: label agreement, score discriminability, failures by type.

* :func:`agreement`: the records' own (rule, synthesised) labels against their teacher's, per
  dimension and sub-dimension: raw agreement, linear-weighted Cohen's kappa, Spearman's rho
  (the paper's "human-machine agreement", with the teacher in the human's place).
* :func:`discriminability`: an evaluator's mean score on intact records and on each
  synthesised violation type (instruction: overall 1-5; consistency: P(consistent)).
* :func:`failure_breakdown`: an evaluator's errors by type: consistency as the paper's four
  (over-sensitivity and false negatives on item and on content hallucination), relevance as
  category misjudgement vs condition misjudgement (multi-condition when the shopper stated
  two or more), instruction as over-sensitivity vs the missed violation's dimension.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from recrm.components.instruction import DIMENSIONS
from recrm.dimensions import JUDGES

__all__ = ["DISCRIMINABILITY_SCALES", "agreement", "agreement_stats", "discriminability", "failure_breakdown"]

# the dimensions whose databases hold synthesised violations, and the score their groups are compared on
DISCRIMINABILITY_SCALES = {"instruction": "overall 1-5", "consistency": "P(consistent)"}


def _finite(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def agreement_stats(a: Sequence[int], b: Sequence[int]) -> dict[str, Any]:
    """n, raw agreement, linear-weighted kappa and Spearman's rho of two label lists.

    >>> agreement_stats([0, 1, 2, 2], [0, 1, 2, 1])["raw"]
    0.75
    """
    import warnings

    from scipy.stats import spearmanr
    from sklearn.metrics import cohen_kappa_score

    n = len(a)
    if n == 0:
        return {"n": 0, "raw": None, "kappa_w": None, "spearman": None}
    raw = sum(x == y for x, y in zip(a, b, strict=True)) / n
    with warnings.catch_warnings():  # constant lists: kappa / rho undefined, reported as None
        warnings.simplefilter("ignore")
        kappa = cohen_kappa_score(a, b, weights="linear") if len(set(a) | set(b)) > 1 else float("nan")
        rho = spearmanr(a, b).statistic if len(set(a)) > 1 and len(set(b)) > 1 else float("nan")
    return {"n": n, "raw": raw, "kappa_w": _finite(kappa), "spearman": _finite(rho)}


def _pairs(pairs: list[tuple[Any, Any]]) -> dict[str, Any]:
    kept = [(x, y) for x, y in pairs if x is not None and y is not None and x != "N/A" and y != "N/A"]
    return agreement_stats([int(x) for x, _ in kept], [int(y) for _, y in kept])


def agreement(kind: str, records: Sequence[Any]) -> dict[str, dict[str, Any]]:
    """Per sub-dimension, the records' labels against their teacher's ({} without teacher labels)."""
    recs = [r for r in records if r.teacher is not None]
    if not recs:
        return {}
    out: dict[str, dict[str, Any]] = {}
    if kind == "instruction":
        out["overall (label)"] = _pairs([(r.label, r.teacher.label) for r in recs])
        out["overall (1-5)"] = _pairs([(min(r.dimensions.values()), r.teacher.details.get("overall")) for r in recs])
        for d in DIMENSIONS:
            out[d] = _pairs([(r.dimensions[d], (r.teacher.details.get("dimensions") or {}).get(d)) for r in recs])
    elif kind == "consistency":
        out["overall (label)"] = _pairs([(r.label, r.teacher.label) for r in recs])
        for sub in ("item", "content"):
            out[f"{sub} hallucination"] = _pairs([
                (int(r.hallucination == sub), None if r.teacher.label is None
                 else int(r.teacher.details.get("type") == sub)) for r in recs])
    elif kind == "relevance":
        out["score (0/1/2)"] = _pairs([(r.score, r.teacher.label) for r in recs])
    elif kind == "ranking":
        out["candidate (bought / yes)"] = _pairs([(y, t) for r in recs if r.teacher.labels is not None
                                                  for y, t in zip(r.labels, r.teacher.labels, strict=True)])
    elif kind == "behavior":
        out["list (acted on / 1)"] = _pairs([(r.label, r.teacher.label) for r in recs])
    return out


def _instruction_score(pred: Any, extra: dict[str, Any]) -> tuple[float | None, str]:
    overall = extra.get("overall")
    if overall is not None:
        return float(overall), ""
    return (None, "") if pred is None else (1.0 + 4.0 * pred, "from label")


def discriminability(kind: str, records: Sequence[Any], preds: Sequence[Any],
                     extras: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Mean score per group (``intact`` and each synthesised violation); {} for other kinds."""
    if kind not in DISCRIMINABILITY_SCALES:
        return {}
    sums: dict[str, list[float]] = {}
    counts: Counter = Counter()
    scale = ""
    for rec, pred, extra in zip(records, preds, extras, strict=True):
        group = (rec.violation if kind == "instruction" else (rec.check or rec.hallucination)) or "intact"
        if kind == "consistency" and rec.hallucination == "none":
            group = "intact"
        counts[group] += 1
        if kind == "instruction":
            value, how = _instruction_score(pred, extra)
            scale = scale or how
        else:
            value = None if pred is None else float(pred)
        if value is not None:
            sums.setdefault(group, []).append(value)
    groups = {g: {"n": counts[g], "mean": (sum(sums[g]) / len(sums[g])) if sums.get(g) else None,
                  "unusable": counts[g] - len(sums.get(g, []))} for g in counts}
    return {"groups": groups, "scale": scale}


def truth(kind: str, rec: Any, source: str = "rule") -> Any:
    """A record's label: its own (``"rule"``: synthesised) or its teacher's (None: no usable one)."""
    if source == "rule":
        if kind == "relevance":
            return rec.score
        return rec.labels if kind == "ranking" else rec.label
    if source != "teacher":
        raise ValueError(f"labels must be 'rule' or 'teacher', got {source!r}")
    t = rec.teacher
    if t is None:
        return None
    if kind == "ranking":
        return None if t.labels is None or any(v is None for v in t.labels) or sum(t.labels) == 0 else t.labels
    return t.label


def _conditions(query: str) -> int:
    return len([p for p in query.split(";") if p.strip()])


def failure_breakdown(kind: str, records: Sequence[Any], preds: Sequence[Any], extras: Sequence[dict[str, Any]],
                      labels: str = "rule") -> dict[str, int]:
    """The evaluator's errors on ``records`` by type (an unusable verdict is its own type)."""
    out: Counter = Counter()
    for rec, pred, extra in zip(records, preds, extras, strict=True):
        y = truth(kind, rec, labels)
        if y is None:
            continue
        if kind in JUDGES and pred is None:
            out["unusable answer"] += 1
            continue
        if kind == "consistency":
            actual = rec.hallucination if labels == "rule" else ("none" if y == 1 else rec.teacher.details.get("type"))
            said = extra.get("type")
            if y == 1 and pred == 0:
                out[f"over-sensitivity on {said if said in ('item', 'content') else 'untyped'} hallucination"] += 1
            elif y == 0 and pred == 1:
                out[f"false negative on {actual} hallucination"] += 1
            elif y == 0 and pred == 0 and said in ("item", "content") and actual in ("item", "content") \
                    and said != actual:
                out[f"{actual} hallucination read as {said}"] += 1
        elif kind == "relevance":
            if pred == y:
                continue
            if (y == 0) != (pred == 0):
                out["category misjudgement"] += 1
            elif _conditions(rec.query) >= 2:
                out["multi-condition misjudgement"] += 1
            else:
                out["condition misjudgement"] += 1
        elif kind == "instruction":
            if y == 1 and pred == 0:
                out["over-sensitivity (compliant judged violating)"] += 1
            elif y == 0 and pred == 1:
                out[f"missed {rec.violation or 'violation'} violation"] += 1
        elif kind == "behavior":
            if (pred > 0.5) != bool(y):
                out["missed act" if y else "false act"] += 1
    return dict(out)
