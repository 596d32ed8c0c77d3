"""Does the RecRM reward carry signal? Per-turn AUC, reward-SR correlation and gate pass rates of saved runs.

No training needed: for runs recorded with ``--reward recrm`` (each turn stores
``recrm/<component>`` and ``recrm/total``) it reports

* AUC: how well a turn's R_total (and each component) separates turns of successful
  episodes (the cart is not empty, as ``eval.metrics.success``) from turns of failed
  ones: the Mann-Whitney U statistic over n_success x n_failed (ties count one half);
  0.5 is no signal. Turns where a component does not apply (``None``) are left out of
  that component's AUC.
* across assistants (the runs given, per store and over all): Pearson and Spearman
  correlation of mean episode reward (mean over episodes of the mean per-turn R_total)
  with SR;
* each gate's pass rate: C_inst and C_consist fully open (value 1), and the relevance
  gate 1[R_relev > tau] among turns that judge an item.

::

    python -m eval.rollout --env SituRec-Supermarket-v0 --agent heuristic --reward recrm --out runs/h
    python -m eval.rollout --env SituRec-Supermarket-v0 --agent random --reward recrm --out runs/r
    python -m recrm.analyse runs/h runs/r --json runs/analysis.json
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from recrm import dimensions as dims
from recrm.composite import COMPONENT_NAMES
from situ_gym.records import EpisodeRecord

__all__ = ["SIGNALS", "auc", "correlations", "analyse_run", "analyse", "load_run", "format_table", "format_markdown",
           "main"]

logger = logging.getLogger(__name__)

SIGNALS = ("total", *COMPONENT_NAMES)
# the multiplicative gates (C_inst, C_consist) and the relevance gate 1[R_relev > tau]
GATES = (*dims.GATES, dims.ANCHOR)
_OPEN = 1.0 - 1e-9  # a multiplicative gate passes when fully open


def auc(positive: Sequence[float], negative: Sequence[float]) -> float | None:
    """P(score of a positive > score of a negative) + P(tie)/2; None when a side is empty.

    >>> auc([0.9, 0.8], [0.1, 0.2])
    1.0
    >>> auc([0.5, 0.5], [0.5])
    0.5
    """
    from scipy.stats import mannwhitneyu

    if len(positive) == 0 or len(negative) == 0:
        return None
    u = mannwhitneyu(positive, negative, alternative="two-sided", method="asymptotic").statistic
    return float(u) / (len(positive) * len(negative))


def correlations(x: Sequence[float], y: Sequence[float]) -> dict[str, float | None]:
    """Pearson and Spearman correlation of ``x`` with ``y`` (None with < 3 points or no spread)."""
    from scipy.stats import pearsonr, spearmanr

    if len(x) < 3 or np.ptp(np.asarray(x, float)) == 0 or np.ptp(np.asarray(y, float)) == 0:
        return {"pearson": None, "spearman": None, "n": len(x)}
    return {"pearson": float(pearsonr(x, y).statistic), "spearman": float(spearmanr(x, y).statistic), "n": len(x)}


def _value(turn_reward: dict[str, Any], name: str) -> float | None:
    v = turn_reward.get(f"recrm/{name}")
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def _share(flags: list[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def analyse_run(episodes: Sequence[EpisodeRecord], *, tau: float = 0.5) -> dict[str, Any]:
    """AUC per signal, SR, mean episode reward and gate pass rates of one run's episodes."""
    played = [ep for ep in episodes if ep.error is None and ep.turns]
    rewarded = [ep for ep in played if any(_value(t.reward, "total") is not None for t in ep.turns)]
    if played and not rewarded:
        raise ValueError("the run has no RecRM rewards: record it with --reward recrm")
    values: dict[str, dict[bool, list[float]]] = {s: {True: [], False: []} for s in SIGNALS}
    gates: dict[str, list[bool]] = {g: [] for g in GATES}
    episode_means = []
    for ep in rewarded:
        won = len(ep.cart) > 0
        totals = []
        for t in ep.turns:
            for s in SIGNALS:
                v = _value(t.reward, s)
                if v is not None:
                    values[s][won].append(v)
            total = _value(t.reward, "total")
            if total is not None:
                totals.append(total)
            for g in dims.GATES:
                v = _value(t.reward, g)
                if v is not None:
                    gates[g].append(v >= _OPEN)
            relev = _value(t.reward, dims.ANCHOR)
            if relev is not None:
                gates[dims.ANCHOR].append(relev > tau)
        episode_means.append(float(np.mean(totals)) if totals else 0.0)
    return {
        "episodes": len(rewarded),
        "turns": sum(len(ep.turns) for ep in rewarded),
        "sr": float(np.mean([len(ep.cart) > 0 for ep in rewarded])) if rewarded else None,
        "mean_episode_reward": float(np.mean(episode_means)) if episode_means else None,
        "auc": {s: auc(values[s][True], values[s][False]) for s in SIGNALS},
        "auc_turns": {s: [len(values[s][True]), len(values[s][False])] for s in SIGNALS},
        "gate_pass": {g: _share(gates[g]) for g in GATES},
        "_values": values,
    }


def load_run(path: str | Path) -> tuple[str, str, list[EpisodeRecord]]:
    """(assistant name, env id, episodes) of a run directory or a trajectories.jsonl file."""
    from situ_gym.records import read_episodes

    p = Path(path)
    file = p / "trajectories.jsonl" if p.is_dir() else p
    if not file.is_file():
        raise ValueError(f"no trajectory file at {str(file)!r} (give a run directory or a .jsonl file)")
    episodes = read_episodes(file)
    if not episodes:
        raise ValueError(f"{file}: no episodes")
    agents = sorted({ep.agent for ep in episodes})
    envs = sorted({ep.env_id for ep in episodes})
    if len(envs) > 1:
        raise ValueError(f"{file}: episodes of several envs {envs}; analyse one env per run")
    return "+".join(agents), envs[0], episodes


def analyse(runs: Sequence[tuple[str, str, Sequence[EpisodeRecord]]], *, tau: float = 0.5) -> dict[str, Any]:
    """Per-run figures, pooled AUC per env and over all, and reward-SR correlations across runs."""
    per_run = []
    for name, env_id, episodes in runs:
        try:
            figures = analyse_run(episodes, tau=tau)
        except ValueError as exc:
            raise ValueError(f"{name} on {env_id}: {exc}") from None
        per_run.append({"agent": name, "env": env_id, **figures})
    groups: dict[str, list[dict]] = {}
    for row in per_run:
        groups.setdefault(row["env"], []).append(row)
    if len(groups) > 1:
        groups["all"] = list(per_run)
    pooled = {}
    for group, rows in groups.items():
        pooled[group] = {
            "runs": len(rows),
            "auc": {
                s: auc(
                    [v for r in rows for v in r["_values"][s][True]],
                    [v for r in rows for v in r["_values"][s][False]],
                )
                for s in SIGNALS
            },
            "reward_vs_sr": correlations(
                [r["mean_episode_reward"] for r in rows if r["sr"] is not None],
                [r["sr"] for r in rows if r["sr"] is not None],
            ),
        }
    for row in per_run:
        del row["_values"]
    return {"tau": tau, "runs": per_run, "groups": pooled}


def _fmt(v: float | None, digits: int = 3) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def format_table(result: dict[str, Any]) -> str:
    """The printed report: one row per run, then pooled AUCs and correlations per group."""
    head = f"{'env':28} {'agent':26} {'eps':>4} {'SR':>5} {'meanR':>6} " + " ".join(
        f"{'AUC:' + s[:5]:>10}" for s in SIGNALS
    ) + " " + " ".join(f"{'pass:' + g[:5]:>10}" for g in GATES)
    lines = [head]
    for r in result["runs"]:
        lines.append(
            f"{r['env']:28} {r['agent']:26} {r['episodes']:4d} {_fmt(r['sr'], 2):>5} {_fmt(r['mean_episode_reward']):>6} "
            + " ".join(f"{_fmt(r['auc'][s]):>10}" for s in SIGNALS)
            + " "
            + " ".join(f"{_fmt(r['gate_pass'][g]):>10}" for g in GATES)
        )
    lines.append("")
    lines.append(f"{'pooled over runs':55} " + " ".join(f"{'AUC:' + s[:5]:>10}" for s in SIGNALS)
                 + f" {'pearson':>8} {'spearman':>8}")
    for group, g in result["groups"].items():
        corr = g["reward_vs_sr"]
        lines.append(
            f"{group:45} {g['runs']:3d} runs " + " ".join(f"{_fmt(g['auc'][s]):>10}" for s in SIGNALS)
            + f" {_fmt(corr['pearson']):>8} {_fmt(corr['spearman']):>8}"
        )
    return "\n".join(lines)


def format_markdown(result: dict[str, Any]) -> str:
    """The same figures as two Markdown tables (per run; pooled per group)."""
    cols = " | ".join(f"AUC {s}" for s in SIGNALS) + " | " + " | ".join(f"{g} pass %" for g in GATES)
    lines = [f"| Env | Assistant | SR % | mean R | {cols} |", "|" + "---|" * (4 + len(SIGNALS) + len(GATES))]
    for r in result["runs"]:
        passes = " | ".join("-" if r["gate_pass"][g] is None else f"{100 * r['gate_pass'][g]:.1f}" for g in GATES)
        lines.append(
            f"| {r['env']} | {r['agent']} | {100 * r['sr']:.0f} | {_fmt(r['mean_episode_reward'])} | "
            + " | ".join(_fmt(r["auc"][s]) for s in SIGNALS) + f" | {passes} |"
        )
    lines += ["", "| Pooled | runs | " + " | ".join(f"AUC {s}" for s in SIGNALS) + " | Pearson (mean R, SR) | Spearman |",
              "|" + "---|" * (4 + len(SIGNALS))]
    for group, g in result["groups"].items():
        corr = g["reward_vs_sr"]
        lines.append(f"| {group} | {g['runs']} | " + " | ".join(_fmt(g["auc"][s]) for s in SIGNALS)
                     + f" | {_fmt(corr['pearson'])} | {_fmt(corr['spearman'])} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m recrm.analyse", description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="run directories (or trajectories.jsonl files) recorded with --reward recrm")
    parser.add_argument("--tau", type=float, default=0.5, help="relevance gate threshold (RecRMComposite's tau)")
    parser.add_argument("--json", default=None, help="write the figures to this JSON file")
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables instead of the text table")
    args = parser.parse_args(argv)
    if not 0.0 <= args.tau < 1.0:
        print(f"error: --tau must be in [0, 1), got {args.tau!r}", file=sys.stderr)
        return 2
    try:
        import scipy.stats  # noqa: F401  (checked first: a missing extra is a setup error, not a crash)
    except ImportError:
        print('error: recrm.analyse needs scipy: pip install "situ-gym[eval]"', file=sys.stderr)
        return 2
    try:
        runs = [load_run(path) for path in args.runs]
        result = analyse(runs, tau=args.tau)
    except ValueError as exc:
        print(f"error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    print(format_markdown(result) if args.markdown else format_table(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
