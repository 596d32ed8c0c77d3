"""Agreement between shopper types across assistants (paper Table 4): per-metric Pearson and Spearman.

    python -m eval.agreement RUN_DIR [RUN_DIR ...] [--judge rule|llm|none] [--judge-model SPEC]
                             [--protocol default|paper] [--ratings judge|questionnaire] [--users A,B]
                             [--tasks per-profile] [--json OUT]

Each RUN_DIR holds ``trajectories.jsonl`` and ``config.json``; the config records the
agent name and the user type (``{"config": {"agent": ..., "user": ...}}`` as written by
``eval.rollout``, or the same two keys at the top level). Dialogue ratings come from
``--judge`` (default: the rule-based judge; ``llm`` with ``--judge-model``), which rates the
trajectories of both groups, as Table 4 does (App. C.2: "the same LLM judge for dialogue
ratings"). With ``--ratings questionnaire`` a run's ``ratings.jsonl`` (one JSON object per
line: ``{"episode_id": ..., "ratings": {dimension: 1-5}}``, the participants' answers that
``eval.human`` saves) replaces the judge's ratings of those episodes, dimension by
dimension, and the judge rates only what is left. The judge rates under ``--protocol``, by
default the one protocol every run's episodes recorded.

Runs are grouped by user type (exactly two types, or the two named by ``--users``; the
first is the reference, e.g. ``human``) and paired by assistant: the agent name, joined
with its model when the config records one (``openai:gpt-4o``, ``hf:runs/x``, the names of
``eval.human``'s study), so two models of one kind are two assistants; runs sharing a user
type and an assistant are pooled. For every metric (SR, AFR, LNSR, R@5, NDCG@10 and the seven dialogue
dimensions) each agent contributes one mean per user type: the mean over the four
profile-stratified subsets for simulated users, the plain mean over all trajectories for
``human`` runs (App. C.2). Pearson's r and Spearman's rho (``scipy.stats``; values are
rounded to 9 decimals first so that differences below numerical precision tie) are taken
across the paired agents and printed in Table 4's layout; ``--json OUT`` writes them
with the per-agent means. Fewer than three paired agents, or a metric that is constant in
one group, gives no coefficient ("-").

``--tasks per-profile`` keeps only the paper's one-task-per-profile cohort (seed 42; the
GPT-4o-user runs of Table 7), the same cohort as ``eval.rollout --tasks per-profile``, in
simulated-user runs; ``human`` runs keep the tasks their participants played.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from situ_gym import jsonl
from situ_gym.cli import fail
from situ_gym.jsonl import object_lines

__all__ = ["METRICS", "COLUMNS", "per_profile_tasks", "assistant_name", "load_run", "agent_means", "correlate", "format_table", "main"]

logger = logging.getLogger(__name__)

# Table 4's columns: metric key -> column header.
COLUMNS = {
    "SR": "SR", "AFR": "AFR", "LNSR": "LNSR", "R@5": "R@5", "NDCG@10": "NDCG@10",
    "Overall": "Overall", "Informativeness": "Inform.", "Naturalness": "Natur.", "Groundedness": "Ground.",
    "Preference Alignment": "Prefer.", "Proactiveness": "Proact.", "Non-repetition": "Nonrep.",
}
METRICS = tuple(COLUMNS)
_TASK_METRICS = ("SR", "AFR", "LNSR", "R@5", "NDCG@10")


def per_profile_tasks(tasks: Sequence[Any], seed: int = 42) -> list[str]:
    """One task id per profile (profiles in bank order), drawn with ``default_rng(seed)``.

    >>> from types import SimpleNamespace as T
    >>> bank = [T(id=f"u{p}_t{k}", profile_id=f"u{p}") for p in range(3) for k in range(4)]
    >>> per_profile_tasks(bank) == per_profile_tasks(bank) and len(per_profile_tasks(bank))
    3
    """
    by_profile: dict[str, list[str]] = {}
    for t in tasks:
        by_profile.setdefault(t.profile_id, []).append(t.id)
    rng = np.random.default_rng(seed)
    return [ids[int(rng.integers(len(ids)))] for ids in by_profile.values()]


def _read_config(run: Path) -> dict[str, Any]:
    path = run / "config.json"
    if not path.is_file():
        raise ValueError(f"{run}: no config.json (need the agent name and the user type)")
    try:
        data = jsonl.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON ({exc.msg} at line {exc.lineno})") from exc
    cfg = data.get("config", data) if isinstance(data, dict) else {}
    agent, user = cfg.get("agent"), cfg.get("user")
    if not isinstance(agent, str) or not isinstance(user, str):
        raise ValueError(f"{path}: needs string 'agent' and 'user' (in 'config' or at the top level)")
    return cfg


def assistant_name(cfg: dict[str, Any]) -> str:
    """The assistant a run measured: ``agent``, or ``agent:model`` for model-backed agents.

    >>> assistant_name({"agent": "openai", "model": "gpt-4o"}), assistant_name({"agent": "heuristic", "model": None})
    ('openai:gpt-4o', 'heuristic')
    """
    model = cfg.get("model")
    return f"{cfg['agent']}:{model}" if isinstance(model, str) and model else cfg["agent"]


def _read_ratings(run: Path) -> dict[str, dict[str, float]]:
    path = run / "ratings.jsonl"
    if not path.exists():
        return {}
    out = {}
    for n, row in object_lines(path.read_text(encoding="utf-8").split("\n"), path):
        ratings = row.get("ratings")
        if not isinstance(row.get("episode_id"), str) or not isinstance(ratings, dict):
            raise ValueError(f'{path}:{n}: need {{"episode_id": str, "ratings": {{dimension: 1-5}}}}')
        for dim, value in ratings.items():
            if dim not in COLUMNS or dim in _TASK_METRICS:
                raise ValueError(f"{path}:{n}: unknown dimension {dim!r}; valid: {list(METRICS[5:])}")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 1 <= value <= 5:
                raise ValueError(f"{path}:{n}: {dim!r} must be a number from 1 to 5, got {value!r}")
        out[row["episode_id"]] = {k: float(v) for k, v in ratings.items()}
    return out


def load_run(run_dir: str | Path, *, tasks: str = "all", questionnaire: bool = False) -> dict[str, Any]:
    """``{"dir", "agent", "user", "episodes", "ratings_override"}`` of one run directory;
    the override holds its ``ratings.jsonl`` when ``questionnaire`` is set, else nothing."""
    from eval.io import read_episodes

    run = Path(run_dir)
    if not (run / "trajectories.jsonl").is_file():
        raise ValueError(f"{run}: no trajectories.jsonl")
    if tasks not in ("all", "per-profile"):
        raise ValueError(f"tasks must be 'all' or 'per-profile', got {tasks!r}")
    cfg = _read_config(run)
    episodes = read_episodes(run / "trajectories.jsonl")
    if tasks == "per-profile" and cfg["user"] != "human":  # people played the study's own tasks
        from eval.aggregate import load_tasks

        keep: set[str] = set()
        for store in sorted({ep.store for ep in episodes}):
            keep |= set(per_profile_tasks(list(load_tasks({store}).values())))
        episodes = [ep for ep in episodes if ep.task_id in keep]
    return {"dir": str(run), "agent": assistant_name(cfg), "user": cfg["user"], "episodes": episodes,
            "ratings_override": _read_ratings(run) if questionnaire else {}}


def agent_means(runs: Sequence[dict[str, Any]], judge: Any | None) -> dict[str, float | None]:
    """Per-metric means of the pooled episodes of ``runs`` (one user type, one agent)."""
    from eval.aggregate import load_indexes, load_tasks, subset_stat, summarize

    episodes = [ep for r in runs for ep in r["episodes"]]
    if not episodes:
        return dict.fromkeys(METRICS)
    override = {k: v for r in runs for k, v in r["ratings_override"].items()}
    stores = {ep.store for ep in episodes}
    indexes = load_indexes(stores)
    summary = summarize(episodes, indexes)
    ratings: list[dict[str, Any]] = [{} for _ in episodes]
    if judge is not None or override:
        tasks = load_tasks(stores)
        # The judge rates episodes whose override lacks some dimension; the override wins per dimension.
        todo = [i for i, ep in enumerate(episodes) if set(METRICS[5:]) - set(override.get(ep.episode_id, {}))]
        if judge is not None and todo:
            items = [(episodes[i], tasks.get(episodes[i].task_id), indexes.get(episodes[i].store)) for i in todo]
            rated = judge.rate_batch(items) if hasattr(judge, "rate_batch") else [judge.rate(*it) for it in items]
            for i, r in zip(todo, rated, strict=True):
                ratings[i] = r
        for i, ep in enumerate(episodes):
            ratings[i] = {**ratings[i], **override.get(ep.episode_id, {})}
    # Humans: the plain mean of all trajectories; simulated users: the mean of subset means.
    stat = "cohort" if all(r["user"] == "human" for r in runs) else "mean"
    out: dict[str, float | None] = {}
    for m in METRICS:
        if m in _TASK_METRICS:
            out[m] = summary["metrics"][m][stat]
        else:
            out[m] = subset_stat((ep.subset, r.get(m)) for ep, r in zip(episodes, ratings, strict=True))[stat]
    return out


def correlate(xs: Sequence[float | None], ys: Sequence[float | None]) -> dict[str, float | None]:
    """Pearson r and Spearman rho over the pairs where both values exist (None when undefined)."""
    from scipy import stats

    pairs = [(float(x), float(y)) for x, y in zip(xs, ys, strict=True) if x is not None and y is not None]
    if len(pairs) < 3:
        return {"pearson": None, "spearman": None, "n": len(pairs)}
    a = np.round(np.array([p[0] for p in pairs]), 9)
    b = np.round(np.array([p[1] for p in pairs]), 9)
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return {"pearson": None, "spearman": None, "n": len(pairs)}
    r = float(stats.pearsonr(a, b).statistic)
    rho = float(stats.spearmanr(a, b).statistic)
    return {"pearson": None if math.isnan(r) else r, "spearman": None if math.isnan(rho) else rho, "n": len(pairs)}


def compare(runs: Sequence[dict[str, Any]], judge: Any | None, users: Sequence[str] | None = None) -> dict[str, Any]:
    """Group by user type, pair by agent, correlate every metric across the paired agents."""
    by_user: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for r in runs:
        by_user.setdefault(r["user"], {}).setdefault(r["agent"], []).append(r)
    if users is None:
        if len(by_user) != 2:
            raise ValueError(f"need runs of exactly two user types, got {sorted(by_user)}; choose two with --users A,B")
        users = sorted(by_user, key=lambda u: (u != "human", u))
    missing = [u for u in users if u not in by_user]
    if len(users) != 2 or missing:
        raise ValueError(f"--users must name two user types present in the runs {sorted(by_user)}, got {list(users)}")
    a, b = users
    agents = sorted(set(by_user[a]) & set(by_user[b]))
    unpaired = sorted(set(by_user[a]) ^ set(by_user[b]))
    if unpaired:
        logger.warning("agents without a run for both user types are left out: %s", unpaired)
    means = {u: {ag: agent_means(by_user[u][ag], judge) for ag in agents} for u in (a, b)}
    coefficients = {
        m: correlate([means[a][ag][m] for ag in agents], [means[b][ag][m] for ag in agents]) for m in METRICS
    }
    return {"users": [a, b], "agents": agents, "means": means, "coefficients": coefficients}


def format_table(result: dict[str, Any]) -> str:
    """Table 4's layout: one Pearson row and one Spearman row over the metric columns."""
    heads = [COLUMNS[m] for m in METRICS]
    width = max(len(h) for h in heads) + 1

    def row(label: str, key: str) -> str:
        cells = []
        for m in METRICS:
            v = result["coefficients"][m][key]
            cells.append(("-" if v is None else f"{v:.3f}").rjust(width))
        return label.ljust(16) + "".join(cells)

    a, b = result["users"]
    title = f"Agreement of assistant performance: {a} vs {b} users ({len(result['agents'])} agents: " \
            f"{', '.join(result['agents'])})"
    return "\n".join([title, "Coefficient".ljust(16) + "".join(h.rjust(width) for h in heads),
                      row("Pearson (r)", "pearson"), row("Spearman (rho)", "spearman")])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.agreement", description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+", help="run directories (trajectories.jsonl + config.json)")
    parser.add_argument("--judge", default="rule", help="rule | llm | none (default: rule)")
    parser.add_argument("--judge-model", default=None, help="chat model SPEC for --judge llm")
    parser.add_argument("--judge-base-url", default=None, help="OpenAI-compatible URL for the judge")
    parser.add_argument("--protocol", default=None, choices=("default", "paper"),
                        help="the judge's protocol (default: the one all the runs' episodes were played under)")
    parser.add_argument("--ratings", default="judge", choices=("judge", "questionnaire"),
                        help="dialogue ratings: judge (default; the judge rates every trajectory, as Table 4) "
                             "or questionnaire (a run's ratings.jsonl replaces the judge's)")
    parser.add_argument("--users", default=None, help="the two user types to compare, e.g. human,llm")
    parser.add_argument("--tasks", default="all", help="all | per-profile (one task per profile, seed 42)")
    parser.add_argument("--json", default=None, help="write coefficients and per-agent means here")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        from eval.judge import judge_from_cli, recorded_protocol

        runs = [load_run(r, tasks=args.tasks, questionnaire=args.ratings == "questionnaire") for r in args.runs]
        # One judge, one protocol for both user groups: Table 4 rates them alike.
        protocol = args.protocol or recorded_protocol(ep for r in runs for ep in r["episodes"])
        judge = judge_from_cli(args.judge, model=args.judge_model, base_url=args.judge_base_url, protocol=protocol)
        users = [u.strip() for u in args.users.split(",")] if args.users else None
        result = compare(runs, judge, users)
    except (ValueError, FileNotFoundError, RuntimeError) as exc:
        fail(parser, str(exc).splitlines()[0])
    print(format_table(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2, sort_keys=True), encoding="utf-8")
        print(f"\nwritten: {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
