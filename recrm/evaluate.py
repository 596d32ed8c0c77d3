"""Evaluate rule, learned and zero-shot scorers on held-out RecRM data with the paper's metrics.

    python -m recrm.evaluate --scorer rule --data data/recrm
    python -m recrm.evaluate --scorer rule --scorer relevance=model:runs/rm/relevance --data data/recrm
    python -m recrm.evaluate --scorer rule --scorer llm:hf:gguf:smollm2 --data data/recrm-teacher [--labels teacher]

Each ``--scorer`` SPEC is one evaluator (a row of the paper's main table): a bare SPEC scores
every dimension, ``DIMENSION=SPEC`` one. Printed: per dimension and evaluator; the main table
(IF, FC, QIR: ACC/F1; ranking ACC/AUC/HR; behaviour ACC/AUC); where the records carry a teacher's
labels (``python -m recrm.data label``), their agreement with the records' own (weighted kappa,
Spearman, per dimension and sub-dimension); the discriminability table (mean score of intact vs
each synthesised violation, per evaluator); and each evaluator's failures by type.

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
from recrm.data.prompts import JUDGE_KINDS, SCORE_RANGE, list_text, pair_text
from recrm.data.schema import KINDS
from recrm.judges.analysis import DISCRIMINABILITY_SCALES, truth
from recrm.judges.formats import GENERATIVE_KINDS, record_requests
from situ_gym import cli
from situ_gym.records import TurnRecord

__all__ = ["judge_metrics", "ranking_metrics", "behavior_metrics", "rule_predictions", "rule_verdicts",
           "model_predictions", "model_verdicts", "llm_verdicts", "predict", "truth", "metrics_for", "evaluate",
           "evaluate_rows", "parse_rows", "format_table", "format_main_table", "main"]


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
    def __init__(self, worlds: Any = None):
        # one _Worlds given on shares its loaded stores
        self._worlds = worlds._worlds if isinstance(worlds, _Worlds) else dict(worlds or {})

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
    return rule_verdicts(kind, records, worlds)[0]


def rule_verdicts(kind: str, records: Sequence[Any], worlds: Mapping[str, Any] | None = None) -> tuple[list, list]:
    """``(predictions, extras)``: the rule verdicts and, per record, what else the rule says
    (instruction: ``overall`` 1-5 and ``dimensions``; consistency: the hallucination ``type``)."""
    world_of = _Worlds(worlds)
    out: list = []
    extras: list = []
    for rec in records:
        world = world_of(rec.source.store)
        task = world.tasks.get(rec.source.task_id)
        if task is None:
            raise DataError(f"record {rec.id}: unknown task {rec.source.task_id!r} in store {rec.source.store!r}")
        extra: dict[str, Any] = {}
        if kind == "instruction":
            verdict = InstructionFollowing().score(_turn_ctx(rec, world))
            out.append(int(verdict.value))
            extra = {"overall": verdict.details.get("overall"), "dimensions": verdict.details.get("dimensions")}
        elif kind == "consistency":
            verdict = FactualConsistency().score(_turn_ctx(rec, world))
            out.append(int(verdict.value))
            kinds = {f.get("kind") for f in verdict.details.get("findings", [])}
            extra = {"type": "item" if "item" in kinds else "content" if kinds else "none"}
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
        extras.append(extra)
    return out, extras


def _from_verdicts(kind: str, records: Sequence[Any], ask) -> tuple[list, list]:
    """Predictions and extras from a Verdict-giving judge ``ask(fields) -> [Verdict]``.

    An unusable verdict stays None for the judges (counted as unparsed by the metrics); a
    ranking candidate or behaviour list without one scores 0 and is counted in ``unparsed``."""
    fields, spans = record_requests(kind, records)
    verdicts = ask(fields)
    preds, extras = [], []
    for start, n in spans:
        vs = verdicts[start : start + n]
        bad = sum(v.label is None for v in vs)
        if kind in GENERATIVE_KINDS:
            scores = [0.0 if v.label is None else (v.extra["prob"] if v.extra.get("prob") is not None
                                                   else float(v.label)) for v in vs]
            preds.append(scores if kind == "ranking" else scores[0])
            extras.append({"unparsed": bad, **({"error": vs[0].error} if bad and kind == "behavior" else {})})
        else:
            preds.append(vs[0].label)
            extras.append({**vs[0].extra, **({"error": vs[0].error} if vs[0].error else {})})
    return preds, extras


def model_verdicts(kind: str, records: Sequence[Any], scorer) -> tuple[list, list]:
    """``(predictions, extras)`` of a learned scorer (``recrm.scorers``) on the labels' scale."""
    import math

    if callable(getattr(scorer, "verdicts", None)):  # generative judges and heads
        return _from_verdicts(kind, records, scorer.verdicts)
    if kind == "ranking":
        firsts, seconds = [], []
        for r in records:
            firsts += [pair_text(r.profile, r.query)] * len(r.candidates)
            seconds += r.candidates
        logits = iter(scorer.pair_logits(firsts, seconds))
        preds = [[1.0 / (1.0 + math.exp(-next(logits))) for _ in r.candidates] for r in records]
        return preds, [{} for _ in records]
    if kind == "behavior":
        probs = scorer.list_probs([list_text(r.profile, r.query, r.items) for r in records])
        return list(probs), [{} for _ in records]
    raise ValueError(f"a {type(scorer).__name__} cannot score {kind!r} records")


def model_predictions(kind: str, records: Sequence[Any], scorer) -> list:
    """A learned scorer's verdict on each record, on the labels' scale."""
    return model_verdicts(kind, records, scorer)[0]


def llm_verdicts(kind: str, records: Sequence[Any], judge) -> tuple[list, list]:
    """``(predictions, extras)`` of a zero-shot chat-model judge (``recrm.judges.llm.LLMScorer``)."""
    return _from_verdicts(kind, records, lambda fields: judge.judge(kind, fields))


def check_spec(kind: str, spec: str) -> None:
    if spec != "rule" and not (spec.startswith("model:") and spec[6:]) and not (spec.startswith("llm:") and spec[4:]):
        raise ValueError(f"scorer for {kind!r} must be 'rule' or 'model:PATH' or 'llm:SPEC' (a chat backend, "
                         f"e.g. llm:hf:gguf:smollm2), got {spec!r}")


def predict(kind: str, records: Sequence[Any], spec: str, worlds: Mapping[str, Any] | None = None
            ) -> tuple[list, list]:
    """``(predictions, extras)`` of the scorer ``spec`` ("rule", "model:PATH", "llm:SPEC") on ``records``."""
    check_spec(kind, spec)
    if spec == "rule":
        return rule_verdicts(kind, records, worlds)
    if spec.startswith("model:"):
        from recrm.scorers import load_model_scorer

        return model_verdicts(kind, records, load_model_scorer(spec[6:], kind))
    from recrm.judges.llm import LLMScorer

    return llm_verdicts(kind, records, LLMScorer(kind, spec))


# ------------------------------------------------------------------ labels
def metrics_for(kind: str, records: Sequence[Any], preds: Sequence[Any], extras: Sequence[Any] | None = None,
                labels: str = "rule") -> dict[str, Any]:
    """The paper's metrics of ``preds`` against the records' labels (``labels``: rule or teacher;
    records without a usable teacher label are left out of a teacher evaluation)."""
    extras = list(extras) if extras is not None else [{} for _ in records]
    keep = [i for i, r in enumerate(records) if truth(kind, r, labels) is not None]
    ys = [truth(kind, records[i], labels) for i in keep]
    ps = [preds[i] for i in keep]
    if not keep:
        return {"n": 0}
    if kind in JUDGE_KINDS:  # classes: the judge's labels 0..max
        return judge_metrics(ys, ps, SCORE_RANGE[kind][1] + 1)
    unparsed = sum(int(extras[i].get("unparsed", 0)) for i in keep)
    if kind == "ranking":
        # a teacher may say yes to several candidates: the first of them stands for the positive in HR
        lists = [([int(j == y.index(1)) for j in range(len(y))] if sum(y) > 1 else list(y), p)
                 for y, p in zip(ys, ps, strict=True)]
        return {**ranking_metrics(lists), "unparsed": unparsed}
    return {**behavior_metrics(ys, ps), "unparsed": unparsed}


# ------------------------------------------------------------------ evaluation
def evaluate(data_dir: str, scorers: Mapping[str, str], *, split: str = "test", limit: int | None = None,
             worlds: Mapping[str, Any] | None = None, labels: str = "rule") -> dict[str, dict[str, Any]]:
    """Metrics per dimension; ``scorers`` maps a dimension to "rule", "model:PATH" or "llm:SPEC"."""
    report = evaluate_rows(data_dir, {"": dict(scorers)}, split=split, limit=limit, worlds=worlds, labels=labels)
    return report["rows"].get("", {})


def evaluate_rows(data_dir: str, rows: Mapping[str, Mapping[str, str]], *, split: str = "test",
                  limit: int | None = None, worlds: Mapping[str, Any] | None = None,
                  labels: str = "rule") -> dict[str, Any]:
    """Every evaluator (``rows``: name -> {dimension: spec}) on the held-out records, with the analyses.

    Returns ``{"rows": {name: {kind: metrics}}, "discriminability": {name: {kind: {group: ...}}},
    "failures": {name: {kind: {type: count}}}, "agreement": {kind: {sub: ...}}}`` (agreement: the
    records' own labels against their teacher's, where ``label --teacher`` has run)."""
    from recrm.judges.analysis import agreement, discriminability, failure_breakdown

    for specs in rows.values():
        for kind, spec in specs.items():
            check_spec(kind, spec)
    worlds = _Worlds(worlds)
    report: dict[str, Any] = {"labels": labels, "rows": {}, "discriminability": {}, "failures": {}, "agreement": {}}
    cache: dict[str, list] = {}
    for kind in KINDS:
        if not any(kind in specs for specs in rows.values()) or not data_file(data_dir, kind).is_file():
            continue
        records = load_split(data_dir, kind, split)[:limit]
        if not records:
            continue
        cache[kind] = records
        agree = agreement(kind, records)
        if agree:
            report["agreement"][kind] = agree
        for name, specs in rows.items():
            spec = specs.get(kind)
            if spec is None:
                continue
            preds, extras = predict(kind, records, spec, worlds)
            report["rows"].setdefault(name, {})[kind] = {"scorer": spec, **metrics_for(kind, records, preds, extras,
                                                                                       labels)}
            disc = discriminability(kind, records, preds, extras)
            if disc:
                report["discriminability"].setdefault(name, {})[kind] = disc
            fails = failure_breakdown(kind, records, preds, extras, labels)
            if fails:
                report["failures"].setdefault(name, {})[kind] = fails
    return report


_NUM = {"n", "unparsed"}


def _cell(m: Mapping[str, Any] | None, key: str) -> str:
    v = None if m is None else m.get(key)
    if v is None:
        return "-"
    return str(v) if key in _NUM else f"{100 * v:.1f}"


def format_table(results: Mapping[str, Mapping[str, Any]]) -> str:
    """A Markdown table, one row per dimension and scorer (``results``: kind -> metrics)."""
    return format_dimension_table({"rows": {"": results}})


def format_dimension_table(report: Mapping[str, Any]) -> str:
    """One row per dimension and evaluator: n, ACC, macro-F1, kappa_w, AUC, HR mean, unparsed."""
    cols = ["n", "acc", "macro_f1", "kappa_w", "auc", "hr_mean", "unparsed"]
    lines = ["| dimension | scorer | " + " | ".join(cols) + " |", "|" + "---|" * (len(cols) + 2)]
    for kind in KINDS:
        for results in report["rows"].values():
            m = results.get(kind)
            if m is not None:
                lines.append(f"| {kind} | {m['scorer']} | " + " | ".join(_cell(m, c) for c in cols) + " |")
    return "\n".join(lines)


# the paper's main table: (dimension, metric) columns
MAIN_COLUMNS = [("instruction", "acc", "IF ACC"), ("instruction", "macro_f1", "IF F1"),
                ("consistency", "acc", "FC ACC"), ("consistency", "macro_f1", "FC F1"),
                ("relevance", "acc", "QIR ACC"), ("relevance", "macro_f1", "QIR F1"),
                ("ranking", "acc", "Rank ACC"), ("ranking", "auc", "Rank AUC"), ("ranking", "hr_mean", "Rank HR"),
                ("behavior", "acc", "Beh ACC"), ("behavior", "auc", "Beh AUC")]


def format_main_table(report: Mapping[str, Any]) -> str:
    """The paper's main table (Table "Performance Comparison"): one row per evaluator, in %."""
    lines = ["| scorer | " + " | ".join(c[2] for c in MAIN_COLUMNS) + " |", "|" + "---|" * (len(MAIN_COLUMNS) + 1)]
    for name, results in report["rows"].items():
        lines.append(f"| {name} | " + " | ".join(_cell(results.get(k), key) for k, key, _ in MAIN_COLUMNS) + " |")
    return "\n".join(lines)


def format_agreement(report: Mapping[str, Any]) -> str:
    """Rule (synthesised) labels against the teacher's, per dimension and sub-dimension."""
    lines = ["| dimension | sub-dimension | n | raw agreement | kappa_w | spearman |", "|---|---|---|---|---|---|"]
    for kind, subs in report["agreement"].items():
        for sub, m in subs.items():
            f = lambda v: "-" if v is None else f"{v:.3f}"  # noqa: E731
            lines.append(f"| {kind} | {sub} | {m['n']} | {f(m['raw'])} | {f(m['kappa_w'])} | {f(m['spearman'])} |")
    return "\n".join(lines)


def format_discriminability(report: Mapping[str, Any]) -> str:
    """Mean score of intact vs each synthesised violation, per evaluator (instruction: overall 1-5)."""
    out = []
    for kind, scale in DISCRIMINABILITY_SCALES.items():
        groups: list[str] = []
        for per_kind in report["discriminability"].values():
            for g in per_kind.get(kind, {}).get("groups", {}):
                if g not in groups:
                    groups.append(g)
        if not groups:
            continue
        groups = sorted(groups, key=lambda g: (g != "intact", g))
        out.append(f"{kind} ({scale}; n per group in brackets)\n")
        out.append("| scorer | " + " | ".join(groups) + " |")
        out.append("|" + "---|" * (len(groups) + 1))
        for name, per_kind in report["discriminability"].items():
            d = per_kind.get(kind)
            if d is None:
                continue
            cells = []
            for g in groups:
                m = d["groups"].get(g)
                cells.append("-" if m is None or m["mean"] is None else f"{m['mean']:.2f} ({m['n']})")
            out.append(f"| {name}{' (' + d['scale'] + ')' if d.get('scale') else ''} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out).rstrip()


def format_failures(report: Mapping[str, Any]) -> str:
    """The errors of each evaluator by type (count and share of its errors)."""
    lines = ["| scorer | dimension | failure type | count | share of errors |", "|---|---|---|---|---|"]
    for name, per_kind in report["failures"].items():
        for kind, types in per_kind.items():
            total = sum(types.values())
            for t, c in sorted(types.items(), key=lambda kv: -kv[1]):
                lines.append(f"| {name} | {kind} | {t} | {c} | {100 * c / total:.1f} |")
    return "\n".join(lines)


def parse_rows(values: Sequence[str]) -> dict[str, dict[str, str]]:
    """Evaluators from ``--scorer`` values: a bare SPEC scores every dimension, ``DIM=SPEC`` one.

    >>> parse_rows(["rule", "relevance=model:runs/rm/rel"])
    {'rule': {'instruction': 'rule', 'consistency': 'rule', 'relevance': 'rule', 'ranking': 'rule', 'behavior': 'rule'}, 'model:runs/rm/rel': {'relevance': 'model:runs/rm/rel'}}
    """
    rows: dict[str, dict[str, str]] = {}
    for v in values:
        name, sep, spec = v.partition("=")
        if sep and name in KINDS:
            rows.setdefault(spec, {})[name] = spec
        elif sep and not v.startswith(("llm:", "model:")):
            raise ValueError(f"--scorer {v!r}: use 'rule', 'model:PATH', 'llm:SPEC' or DIMENSION=SPEC with "
                             f"DIMENSION in {list(KINDS)}")
        else:
            for k in KINDS:
                rows.setdefault(v, {})[k] = v
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m recrm.evaluate", description=__doc__.splitlines()[0])
    parser.add_argument("--scorer", action="append", default=[],
                        help="rule | model:PATH | llm:SPEC | DIMENSION=SPEC (repeatable: one evaluator per SPEC)")
    parser.add_argument("--data", required=True, help="directory of <kind>.jsonl files")
    parser.add_argument("--split", default="test", choices=("train", "test"))
    parser.add_argument("--labels", default="rule", choices=("rule", "teacher"),
                        help="ground truth: the records' own labels or their teacher's (python -m recrm.data label)")
    parser.add_argument("--limit", type=int, default=None, help="at most this many records per dimension")
    parser.add_argument("--json", action="store_true", help="print the metrics as JSON")
    cli.add_verbose(parser)
    args = parser.parse_args(argv)
    cli.setup_logging(args.verbose)
    from situ_gym.llm import BackendUnavailable

    try:
        rows = parse_rows(args.scorer or ["rule"])
        report = evaluate_rows(args.data, rows, split=args.split, limit=args.limit, labels=args.labels)
    except (DataError, ValueError, OSError, BackendUnavailable) as exc:
        print(f"error: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}", file=sys.stderr)
        return 2
    if not report["rows"]:
        print(f"error: no {args.split} records in {args.data} for {sorted({k for r in rows.values() for k in r})}",
              file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    parts = [format_dimension_table(report), "", f"Main table (%, labels: {args.labels})", "",
             format_main_table(report)]
    if report["agreement"]:
        parts += ["", "Agreement of the records' labels with the teacher's", "", format_agreement(report)]
    if report["discriminability"]:
        parts += ["", "Discriminability: mean score, intact vs each synthesised violation", "",
                  format_discriminability(report)]
    if report["failures"]:
        parts += ["", "Failures by type", "", format_failures(report)]
    print("\n".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
