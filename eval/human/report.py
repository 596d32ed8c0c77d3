"""Human runs summarised: each run's usual report, and the questionnaire beside the judge (Fig. 5).

``python -m eval.human report --out runs/human`` writes ``report.md``, ``metrics.json``,
plots and the trajectory viewer into every assistant's run directory (as ``eval.rollout``
does) and ``questionnaire.md`` into the study directory: per assistant, the mean
participant rating of each App. C.1 dimension next to the judge's mean rating of the
same trajectories, then per dimension how well the two rank the assistants alike
(Pearson's r and Spearman's rho across assistants, as ``eval.agreement`` computes them).
A cell that has no value says why: fewer than three assistants rated by both (with the
count), or one side giving every assistant the same mean (no ranking to compare).

``--judge llm --judge-model SPEC [--judge-base-url URL]`` has a chat model rate the
conversations (each run in one batch); its replies are cached in the study directory
(``judge_cache.sqlite``), so the run reports and the questionnaire table, which both need
the ratings, ask the model once per conversation, and a second report asks it nothing. The
judge rates under ``protocol``, by default the one the episodes recorded.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from eval.io import read_episodes
from eval.judge import DIMENSIONS, DialogueJudge
from situ_gym import jsonl

__all__ = ["read_ratings", "questionnaire_rows", "format_questionnaire", "ranking_agreement", "why_empty", "report"]

logger = logging.getLogger(__name__)


def read_ratings(run_dir: str | Path) -> dict[str, dict[str, int]]:
    """``episode_id -> {dimension: 1-5}`` from ``ratings.jsonl`` (a torn last line is skipped)."""
    path = Path(run_dir) / "ratings.jsonl"
    if not path.exists():
        return {}
    out = {}
    lines = path.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        try:
            row = jsonl.loads(line)
            out[str(row["episode_id"])] = {d: int(row["ratings"][d]) for d in DIMENSIONS}
        except (ValueError, KeyError, TypeError) as exc:
            if i == len(lines) - 1:
                logger.warning("%s: skipping a torn last line", path)
                continue
            raise ValueError(f"{path}: line {i + 1} is not a rating record ({exc})") from exc
    return out


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def questionnaire_rows(run_dirs: list[Path], judge: str | DialogueJudge = "rule") -> list[dict[str, Any]]:
    """Per run: agent, episode count, mean participant and judge rating per dimension
    (``judge``: a judge, or a name for ``eval.judge.make_judge``)."""
    from eval.aggregate import load_indexes, load_tasks
    from eval.judge import make_judge

    rater = make_judge(judge) if isinstance(judge, str) else judge
    rows = []
    for run in run_dirs:
        episodes = read_episodes(run / "trajectories.jsonl")
        if not episodes:
            continue
        stores = {ep.store for ep in episodes}
        indexes, tasks = load_indexes(stores), load_tasks(stores)
        human = read_ratings(run)
        judged = rater.rate_batch([(ep, tasks.get(ep.task_id), indexes.get(ep.store)) for ep in episodes])
        rated = [human[ep.episode_id] for ep in episodes if ep.episode_id in human]
        config = run / "config.json"
        name = jsonl.loads(config.read_text(encoding="utf-8")).get("assistant") if config.exists() else None
        rows.append({
            "agent": name or episodes[0].agent,
            "episodes": len(episodes),
            "rated": len(rated),
            "human": {d: _mean([r[d] for r in rated]) for d in DIMENSIONS},
            "judge": {d: _mean([float(j[d]) for j in judged]) for d in DIMENSIONS},
            "judge_name": judged[0]["judge"],
        })
    return rows


def format_questionnaire(rows: list[dict[str, Any]]) -> str:
    """A markdown table: one line per assistant and rater. Assistant and judge names are
    literal text (:func:`eval.report.md_text`): no markup of theirs survives rendering, and
    a '|' or a line break in them cannot split the row."""
    from eval.report import md_text

    head = ["Assistant", "Rater", "n", *DIMENSIONS]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        raters = [("participants", row["rated"], row["human"]),
                  (f"judge ({md_text(row['judge_name'])})", row["episodes"], row["judge"])]
        for rater, n, means in raters:
            cells = [("- (no ratings)" if n == 0 else "-") if means[d] is None else f"{means[d]:.2f}"
                     for d in DIMENSIONS]
            lines.append("| " + " | ".join([md_text(row["agent"]), rater, str(n), *cells]) + " |")
    return "\n".join(lines)


def ranking_agreement(rows: list[dict[str, Any]]) -> dict[str, dict[str, float | None]]:
    """Per dimension: Pearson and Spearman between participant and judge means across assistants."""
    from eval.agreement import correlate

    return {d: correlate([r["human"][d] for r in rows], [r["judge"][d] for r in rows]) for d in DIMENSIONS}


MIN_ASSISTANTS = 3  # eval.agreement.correlate's least number of pairs


def why_empty(rows: list[dict[str, Any]], dimension: str) -> str:
    """Why no coefficient can be given for ``dimension``, in the words of the table cell."""
    pairs = [(r["human"][dimension], r["judge"][dimension]) for r in rows
             if r["human"][dimension] is not None and r["judge"][dimension] is not None]
    if len(pairs) < MIN_ASSISTANTS:
        return f"needs at least {MIN_ASSISTANTS} assistants rated by both (n={len(pairs)})"
    constant = [side for side, i in (("participants", 0), ("judge", 1)) if len({round(p[i], 9) for p in pairs}) == 1]
    if constant:
        return f"{' and '.join(constant)} gave every assistant the same mean: no ranking to compare"
    return "undefined (no variation to correlate)"


def _format_agreement(agreement: dict[str, dict[str, float | None]], rows: list[dict[str, Any]]) -> str:
    lines = ["| Dimension | Assistants | Pearson (r) | Spearman (rho) |", "|---|---|---|---|"]
    for d, c in agreement.items():
        cells = [f"{c[k]:.3f}" if c[k] is not None else f"- ({why_empty(rows, d)})" for k in ("pearson", "spearman")]
        lines.append(f"| {d} | {c['n']} | {cells[0]} | {cells[1]} |")
    return "\n".join(lines)


def report(study_dir: str | Path, judge: str = "rule", *, judge_model: str | None = None,
           judge_base_url: str | None = None, protocol: str | None = None) -> str:
    """Write every run's report and ``questionnaire.md``; returns the questionnaire table.

    A bad judge (a missing model, a dead endpoint) is a ValueError before any report is written."""
    from eval.judge import judge_from_cli, recorded_protocol
    from eval.rollout import finalize

    root = Path(study_dir)
    runs = sorted(p for p in (root / "runs").glob("*") if (p / "trajectories.jsonl").exists())
    if not runs:
        raise ValueError(f"no finished conversations under {root / 'runs'}")
    if protocol is None:  # one protocol for every run: the assistants are compared under one judge
        protocol = recorded_protocol(ep for run in runs for ep in read_episodes(run / "trajectories.jsonl"))
    kwargs: dict[str, Any] = {"protocol": protocol}
    if judge == "llm":
        kwargs |= {"model": judge_model, "base_url": judge_base_url, "cache": str(root / "judge_cache.sqlite")}
    if judge == "none":
        raise ValueError("the questionnaire table needs a judge: --judge rule or --judge llm")
    rater = judge_from_cli(judge, model=judge_model, base_url=judge_base_url, protocol=protocol,
                           cache=kwargs.get("cache"))
    for run in runs:
        finalize(run, judge=judge, judge_kwargs=kwargs)  # logs each run's judge usage in its own file
    rows = questionnaire_rows(runs, rater)
    table = format_questionnaire(rows) + "\n\nParticipants and judge ranking the assistants alike (Fig. 5):\n\n" + \
        _format_agreement(ranking_agreement(rows), rows)
    (root / "questionnaire.md").write_text(table + "\n", encoding="utf-8")
    return table
