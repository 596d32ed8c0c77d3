"""Figures of a run (matplotlib, Agg): SR by turn (Fig. 4), ΔCGV by horizon (Fig. 7) and
dialogue action shares (Fig. 9), one line / bar group per env-agent cohort."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

__all__ = ["plot_sr_by_turn", "plot_cgv_gain", "plot_action_shares", "write_plots"]


_SURROGATE = re.compile("[\ud800-\udfff]")
_MAX_LABEL = 60  # characters of a cohort name shown in a legend or on an axis


def _label(text: str) -> str:
    """A cohort name ("env / agent", from the run's records) as matplotlib shows it
    literally: every ``$`` escaped (a pair would start mathtext, whose parser raises on
    most text), lone surrogates as U+FFFD (the font renderer refuses them), each of env
    and agent cut to 60 characters.

    >>> _label("SituRec-Supermarket-v0 / hf:$x^$")
    'SituRec-Supermarket-v0 / hf:\\\\$x^\\\\$'
    """
    parts = _SURROGATE.sub("\ufffd", str(text)).split(" / ", 1)
    parts = [p if len(p) <= _MAX_LABEL else p[: _MAX_LABEL - 1] + "\u2026" for p in parts]
    return " / ".join(parts).replace("$", r"\$")


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _save(plt, fig, path: str | os.PathLike, **savefig: Any) -> Path:
    """Lay out, write and close the figure."""
    fig.tight_layout()
    fig.savefig(path, dpi=100, **savefig)
    plt.close(fig)
    return Path(path)


def plot_sr_by_turn(groups: dict[str, dict[str, Any]], path: str | os.PathLike) -> Path:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 4))
    for key, s in groups.items():
        sr = s["sr_by_turn"]
        ax.plot(range(1, len(sr) + 1), sr, marker="o", markersize=3, label=_label(key))
    ax.set_xlabel("turn t")
    ax.set_xticks(range(1, max((len(s["sr_by_turn"]) for s in groups.values()), default=20) + 1, 2))
    ax.set_ylabel("SR(t) (%)")
    ax.set_ylim(0, 100)
    ax.set_title("Success rate by turn")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=9)
    return _save(plt, fig, path)


def plot_cgv_gain(groups: dict[str, dict[str, Any]], path: str | os.PathLike) -> Path:
    plt = _plt()
    horizons = ["1", "2", "3", "4", "5", "End"]
    fig, ax = plt.subplots(figsize=(6, 4))
    lowest = 0.0
    curves = {key: [s["cgv"].get(f"delta_{h}") for h in horizons] for key, s in groups.items()}
    curves = {k: [0.0 if y is None else y for y in ys] for k, ys in curves.items() if any(y is not None for y in ys)}
    for k, (key, ys) in enumerate(curves.items()):
        lowest = min(lowest, *ys)
        (line,) = ax.plot(horizons, ys, marker="o", label=f"{_label(key)} (n={int(groups[key]['cgv']['events'])})")
        # One curve: every value; several: only the End value of each, staggered, so none collide.
        points = list(zip(horizons, ys, strict=True)) if len(curves) == 1 else [(horizons[-1], ys[-1])]
        for x, y in points:
            ax.annotate(f"{y:.1f}", (x, y), textcoords="offset points", xytext=(0, 6 + 11 * k * (len(curves) > 1)),
                        ha="center", fontsize=9, color=line.get_color())
    ax.set_ylim(bottom=lowest)  # gains start at 0: an axis from the smallest gain exaggerates them
    highest = max((max(ys) for ys in curves.values()), default=0.0)
    ax.set_ylim(top=max(highest, 1.0) * 1.12 + 5 * len(curves))  # room for the value labels
    ax.set_xlabel("horizon h (turns)")
    ax.set_ylabel("ΔCGV = CGV(h) - CGV(0) (pp)")
    ax.set_title("Goal visibility gain")
    ax.grid(alpha=0.3)
    if ax.get_lines():
        ax.legend(fontsize=9, loc="lower right")
    else:
        ax.text(0.5, 0.5, "no navigation-goal events", ha="center", transform=ax.transAxes)
    return _save(plt, fig, path)


def plot_action_shares(groups: dict[str, dict[str, Any]], path: str | os.PathLike) -> Path:
    import numpy as np

    from situ_gym.actions.assistant import ACTION_TYPES

    plt = _plt()
    keys = list(groups)
    labels = [_label(k).replace(" / ", "\n") for k in keys]  # env over agent: short enough to read
    fig, ax = plt.subplots(figsize=(6, 0.7 * max(2, len(keys)) + 2.2))
    left = np.zeros(len(keys))
    cmap = plt.get_cmap("tab10")
    for i, action in enumerate(ACTION_TYPES):
        vals = np.array([groups[k]["action_shares"]["shares"][action] for k in keys])
        bars = ax.barh(labels, vals, left=left, color=cmap(i), label=action)
        # Values on segments wide enough to hold them; the legend names the rest.
        ax.bar_label(bars, labels=[f"{v:.0f}" if v >= 4 else "" for v in vals], label_type="center",
                     fontsize=9, color="white" if i in (0, 3, 5, 9) else "black")
        left += vals
    ax.set_xlim(0, 100)
    ax.invert_yaxis()  # first cohort on top, as in the report tables
    ax.set_xlabel("share of turns (%)", labelpad=2)
    ax.set_title("Dialogue action shares")
    ax.legend(fontsize=9, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.18), frameon=False)
    return _save(plt, fig, path, bbox_inches="tight")


def write_plots(run_dir: str | os.PathLike, groups: dict[str, dict[str, Any]]) -> list[Path]:
    """All three figures as PNG in the run directory."""
    run = Path(run_dir)
    run.mkdir(parents=True, exist_ok=True)
    return [
        plot_sr_by_turn(groups, run / "sr_by_turn.png"),
        plot_cgv_gain(groups, run / "cgv_gain.png"),
        plot_action_shares(groups, run / "action_shares.png"),
    ]
