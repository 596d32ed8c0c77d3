"""Figures of a run (matplotlib, Agg): SR by turn (Fig. 4), ΔCGV by horizon (Fig. 7) and
dialogue action shares (Fig. 9), one line / bar group per env-agent cohort; dialogue ratings
(Fig. 3), suggested actions within Navigate responses (Fig. 10) and termination reasons
(Fig. 11), one panel per environment with one row / bar group per agent."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

__all__ = ["FIGURES", "plot_sr_by_turn", "plot_cgv_gain", "plot_action_shares", "plot_navigate_actions",
           "plot_dialogue_ratings", "plot_terminations", "write_plots"]


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


def _save(plt, fig, path: str | os.PathLike, tight: bool = True, **savefig: Any) -> Path:
    """Lay out (unless the figure has its own layout engine), write and close the figure."""
    if tight:
        fig.tight_layout()
    fig.savefig(path, dpi=100, **savefig)
    plt.close(fig)
    return Path(path)


def _env_axes(plt, groups: dict[str, dict[str, Any]], panel_height: float = 3.0):
    """Line charts: one panel per environment (the paper's Fig. 4 and 7 layout), each
    holding its agents' curves; legends go under each panel so they never cover a curve."""
    from eval.aggregate import by_environment

    envs = by_environment(groups)
    fig, axes = plt.subplots(len(envs), 1, figsize=(6.4, panel_height * len(envs)), squeeze=False,
                             layout="constrained")
    return fig, list(axes[:, 0]), envs


def _legend_below(ax, n: int) -> None:
    ax.legend(fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=min(3, n), frameon=False)


def plot_sr_by_turn(groups: dict[str, dict[str, Any]], path: str | os.PathLike) -> Path:
    plt = _plt()
    fig, axes, envs = _env_axes(plt, groups)
    longest = max((len(s["sr_by_turn"]) for s in groups.values()), default=20)
    for ax, (env, cohorts) in zip(axes, envs.items(), strict=True):
        for agent, s in cohorts:
            sr = s["sr_by_turn"]
            ax.plot(range(1, len(sr) + 1), sr, marker="o", markersize=3, label=_label(agent))
        ax.set_xlabel("turn t")
        ax.set_xticks(range(1, longest + 1, 2))
        ax.set_ylabel("SR(t) (%)")
        ax.set_ylim(0, 100)
        ax.set_title(f"Success rate by turn: {_label(env)}", fontsize=10)
        ax.grid(alpha=0.3)
        _legend_below(ax, len(cohorts))
    return _save(plt, fig, path, tight=False, bbox_inches="tight", pad_inches=0.1)


def _spread(values: list[float], gap: float) -> list[float]:
    """Label heights for ``values``, lowest first, each pushed up to at least ``gap`` above
    the one below (labels of curves ending close together would print over each other).

    >>> _spread([11.0, 10.0, 30.0], 4.0)
    [14.0, 10.0, 30.0]
    """
    out = list(values)
    below = None
    for i in sorted(range(len(values)), key=lambda i: values[i]):
        if below is not None:
            out[i] = max(out[i], below + gap)
        below = out[i]
    return out


def plot_cgv_gain(groups: dict[str, dict[str, Any]], path: str | os.PathLike) -> Path:
    plt = _plt()
    horizons = ["1", "2", "3", "4", "5", "End"]
    fig, axes, envs = _env_axes(plt, groups)
    for ax, (env, cohorts) in zip(axes, envs.items(), strict=True):
        curves = {agent: ([s["cgv"].get(f"delta_{h}") for h in horizons], int(s["cgv"]["events"]))
                  for agent, s in cohorts}
        curves = {a: ([0.0 if y is None else y for y in ys], n) for a, (ys, n) in curves.items()
                  if any(y is not None for y in ys)}
        lowest = min([0.0, *(y for ys, _ in curves.values() for y in ys)])
        highest = max([1.0, *(y for ys, _ in curves.values() for y in ys)])
        # Numeric x with the horizons as tick labels: strings as x would be "categorical
        # units", which matplotlib announces at INFO on every plot.
        xs = range(len(horizons))
        lines = [ax.plot(xs, ys, marker="o", label=f"{_label(a)} (n={n})")[0] for a, (ys, n) in curves.items()]
        ax.set_xticks(xs, horizons)
        if len(curves) == 1:  # one curve: every value above its point
            ys = next(iter(curves.values()))[0]
            for x, y in zip(xs, ys, strict=True):
                ax.annotate(f"{y:.1f}", (x, y), textcoords="offset points", xytext=(0, 6), ha="center",
                            fontsize=9, color=lines[0].get_color())
        else:  # several: only the End values, right of the last point and spread apart
            ends = [ys[-1] for ys, _ in curves.values()]
            for line, y, at in zip(lines, ends, _spread(ends, 0.06 * (highest - lowest)), strict=True):
                ax.annotate(f"{y:.1f}", (len(horizons) - 1, y), xytext=(len(horizons) - 0.8, at), va="center",
                            fontsize=9, color=line.get_color(), arrowprops={"arrowstyle": "-", "color": "0.7", "lw": 0.5})
            ax.set_xlim(-0.3, len(horizons) - 0.3)
        ax.set_ylim(bottom=lowest)  # gains start at 0: an axis from the smallest gain exaggerates them
        ax.set_ylim(top=highest * 1.12)  # room for the value labels
        ax.set_xlabel("horizon h (turns)")
        ax.set_ylabel("ΔCGV = CGV(h) - CGV(0) (pp)")
        ax.set_title(f"Goal visibility gain: {_label(env)}", fontsize=10)
        ax.grid(alpha=0.3)
        if lines:
            _legend_below(ax, len(lines))
        else:
            ax.text(0.5, 0.5, "no navigation-goal events", ha="center", transform=ax.transAxes)
    return _save(plt, fig, path, tight=False, bbox_inches="tight", pad_inches=0.1)


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


def _panels(plt, groups: dict[str, dict[str, Any]], row_height: float, extra: float, width: float = 6.8):
    """One panel per environment stacked vertically (width fixed, so the viewer shows it
    unscaled), each as tall as its agents need; returns the figure, the axes and the
    environments with their (agent, cohort) lists."""
    from eval.aggregate import by_environment

    envs = by_environment(groups)
    heights = [row_height * max(2, len(c)) + extra for c in envs.values()]  # one agent still gets room
    fig, axes = plt.subplots(len(envs), 1, figsize=(width, sum(heights)), squeeze=False,
                             gridspec_kw={"height_ratios": heights}, layout="constrained")
    return fig, list(axes[:, 0]), envs


# Area of a bubble for a 100 % share, in points^2: shares sum to 100 per row, so only one
# bubble of a row can be this large, and it stays within a column's width.
_BUBBLE_AREA = 700.0


def plot_navigate_actions(groups: dict[str, dict[str, Any]], path: str | os.PathLike) -> Path:
    """Fig. 10: per environment, x the suggested user action, y the agent; bubble area the
    action's share of the Navigate events, colour its same-action rate, grey dot zero use."""
    plt = _plt()
    fig, axes, envs = _panels(plt, groups, row_height=0.6, extra=2.0)
    norm = plt.Normalize(0, 100)
    cmap = plt.get_cmap("viridis")
    for ax, (env, cohorts) in zip(axes, envs.items(), strict=True):
        navs = [s.get("navigate_actions") or {} for _, s in cohorts]
        actions = list(dict.fromkeys(a for nav in navs for a in nav.get("actions", [])))
        for y, nav in enumerate(navs):
            for x, action in enumerate(actions):
                n = nav.get("counts", {}).get(action, 0)
                if not n:
                    ax.scatter(x, y, s=8, color="0.75", zorder=2)
                    continue
                share, rate = nav["shares"][action], nav["same_rate"][action]
                # A floor on the area keeps a rare suggestion visibly more than the zero-use dot.
                ax.scatter(x, y, s=max(_BUBBLE_AREA * share / 100.0, 30.0), color=cmap(norm(rate)), edgecolors="0.2",
                           linewidths=0.5, zorder=3)
                # The share in figures beside bubbles large enough to be read as "most of it".
                if share >= 10:
                    ax.annotate(f"{share:.0f}%", (x, y), textcoords="offset points", xytext=(0, -19),
                                ha="center", va="top", fontsize=8)
            # Events per row just right of the axes (x in axes units, y in data units).
            ax.text(1.01, y, f"n={nav.get('events', 0)}", transform=ax.get_yaxis_transform(), ha="left",
                    va="center", fontsize=8, color="0.35")
        ax.set_xticks(range(len(actions)), actions, rotation=40, ha="right", fontsize=9)
        ax.set_yticks(range(len(cohorts)), [_label(a) for a, _ in cohorts], fontsize=9)
        ax.set_xlim(-0.6, len(actions) - 0.4)
        ax.set_ylim(len(cohorts) - 0.4, -0.6)  # first agent on top, room for the share labels
        ax.grid(alpha=0.25)
        ax.set_axisbelow(True)
        ax.set_title(_label(env), fontsize=10)
    bar = fig.colorbar(plt.cm.ScalarMappable(norm=norm, cmap=cmap), ax=axes, shrink=0.9, pad=0.08)
    bar.set_label("same-action rate (%)")
    # Legend keys as markers (a marker's size is its diameter: the square root of a scatter area).
    from matplotlib.lines import Line2D

    sizes = [Line2D([], [], linestyle="", marker="o", markersize=(_BUBBLE_AREA * v / 100.0) ** 0.5,
                    markerfacecolor="0.85", markeredgecolor="0.2", markeredgewidth=0.5) for v in (10, 50, 100)]
    zero = Line2D([], [], linestyle="", marker="o", markersize=8 ** 0.5, color="0.75")
    fig.legend([*sizes, zero], ["10%", "50%", "100%", "never suggested"], loc="outside lower center", ncol=4,
               fontsize=9, frameon=False, title="bubble area: share of Navigate events",
               title_fontsize=9, columnspacing=2.5, handletextpad=1.2, handleheight=2.6)  # room for the 100% key
    fig.suptitle("Suggested actions within Navigate responses", fontsize=11)
    return _save(plt, fig, path, tight=False, bbox_inches="tight", pad_inches=0.1)


def _rating(stat: dict[str, Any] | None) -> float | None:
    if not stat:
        return None
    return stat.get("mean") if stat.get("mean") is not None else stat.get("cohort")


# Dimension names on two lines: seven full names side by side overrun a 6.8-inch figure.
_TWO_LINES = {"Informativeness": "Informative-\nness", "Naturalness": "Natural-\nness",
              "Groundedness": "Grounded-\nness", "Preference Alignment": "Preference\nAlignment",
              "Proactiveness": "Proactive-\nness", "Non-repetition": "Non-\nrepetition"}


def plot_dialogue_ratings(groups: dict[str, dict[str, Any]], path: str | os.PathLike) -> Path | None:
    """Fig. 3: per environment, the seven judge dimensions as bar groups, one bar per agent
    (subset mean of the 1-5 ratings); None (nothing written) when no cohort was rated."""
    import numpy as np

    from eval.judge import DIMENSIONS

    if not any(s.get("dialogue") for s in groups.values()):
        return None
    plt = _plt()
    fig, axes, envs = _panels(plt, groups, row_height=0.0, extra=2.8)
    cmap = plt.get_cmap("tab10")
    agents = list(dict.fromkeys(a for cohorts in envs.values() for a, _ in cohorts))  # one colour per agent
    x = np.arange(len(DIMENSIONS))
    for ax, (env, cohorts) in zip(axes, envs.items(), strict=True):
        width = 0.8 / max(1, len(cohorts))
        for i, (agent, s) in enumerate(cohorts):
            ratings = (s.get("dialogue") or {}).get("ratings", {})
            vals = [_rating(ratings.get(d)) for d in DIMENSIONS]
            bars = ax.bar(x - 0.4 + width * (i + 0.5), [np.nan if v is None else v for v in vals], width,
                          color=cmap(agents.index(agent) % 10), label=_label(agent))
            # Values on the bars only while they stay legible (few agents per group).
            if len(cohorts) <= 4:
                ax.bar_label(bars, labels=["" if v is None else f"{v:.1f}" for v in vals], fontsize=7, padding=1)
        ax.set_xticks(x, [_TWO_LINES.get(d, d) for d in DIMENSIONS], fontsize=9)
        ax.set_ylim(1, 5.3)  # the judge's 1-5 scale; bars start at its floor
        ax.set_ylabel("rating (1-5)")
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
        ax.set_title(_label(env), fontsize=10)
    handles = {h.get_label(): h for ax in axes for h in ax.get_legend_handles_labels()[0]}
    fig.legend(list(handles.values()), list(handles), loc="outside lower center", ncol=min(4, len(handles)),
               fontsize=9, frameon=False)
    fig.suptitle("Dialogue quality ratings", fontsize=11)
    return _save(plt, fig, path, tight=False, bbox_inches="tight", pad_inches=0.1)


# Legend names and colours of the termination reasons (success green, running out of turns
# grey, the other stops warm colours, crashes red).
_ENDINGS = {
    "success_cart_added": ("Cart added", "#2ca02c"),
    "turn_limit": ("Turn limit", "#9a9a9a"),
    "recommendation_exhausted": ("Rec. limit", "#ff7f0e"),
    "moderator_end": ("Moderator end", "#9467bd"),
    "motion_stall": ("Motion stall", "#8c564b"),
    "error": ("Error", "#d62728"),
}


def plot_terminations(groups: dict[str, dict[str, Any]], path: str | os.PathLike) -> Path:
    """Fig. 11: per environment, one stacked horizontal bar per agent of its episodes'
    termination reasons in % of its episodes, each segment labelled with its count."""
    import numpy as np

    from eval.aggregate import termination_reasons

    plt = _plt()
    reasons = termination_reasons(groups)
    fig, axes, envs = _panels(plt, groups, row_height=0.45, extra=1.0)
    others = plt.get_cmap("Set3")
    for ax, (env, cohorts) in zip(axes, envs.items(), strict=True):
        left = np.zeros(len(cohorts))
        for k, reason in enumerate(reasons):
            name, colour = _ENDINGS.get(reason, (_label(reason), others(k % 12)))
            counts = np.array([s["termination"].get(reason, 0) for _, s in cohorts])
            totals = np.array([max(1, s["episodes"]) for _, s in cohorts])
            vals = 100.0 * counts / totals
            bars = ax.barh(range(len(cohorts)), vals, left=left, color=colour, label=name, height=0.7)
            # Counts on segments wide enough to hold them; the legend names every colour.
            ax.bar_label(bars, labels=[str(n) if v >= 2.5 * len(str(n)) else "" for n, v in zip(counts, vals, strict=True)],
                         label_type="center", fontsize=8, color="black" if reason == "turn_limit" else "white")
            left += vals
        ax.set_yticks(range(len(cohorts)), [f"{_label(a)} (n={s['episodes']})" for a, s in cohorts], fontsize=9)
        ax.set_xlim(0, 100)
        ax.invert_yaxis()  # first agent on top, as in the report tables
        ax.set_xlabel("share of episodes (%)", fontsize=9)
        ax.set_title(_label(env), fontsize=10)
    handles = {h.get_label(): h for ax in axes for h in ax.get_legend_handles_labels()[0]}
    fig.legend(list(handles.values()), list(handles), loc="outside lower center", ncol=min(6, len(handles)),
               fontsize=9, frameon=False)
    fig.suptitle("Episode termination reasons (segment labels: episodes)", fontsize=11)
    return _save(plt, fig, path, tight=False, bbox_inches="tight", pad_inches=0.1)


# Every figure a run directory may hold, in the order the viewer shows them.
FIGURES = ("sr_by_turn.png", "cgv_gain.png", "action_shares.png", "navigate_actions.png",
           "dialogue_ratings.png", "terminations.png")


def write_plots(run_dir: str | os.PathLike, groups: dict[str, dict[str, Any]]) -> list[Path]:
    """Every figure as PNG in the run directory (dialogue ratings only when the run was rated)."""
    run = Path(run_dir)
    run.mkdir(parents=True, exist_ok=True)
    paths = [
        plot_sr_by_turn(groups, run / "sr_by_turn.png"),
        plot_cgv_gain(groups, run / "cgv_gain.png"),
        plot_action_shares(groups, run / "action_shares.png"),
        plot_navigate_actions(groups, run / "navigate_actions.png"),
        plot_dialogue_ratings(groups, run / "dialogue_ratings.png"),
        plot_terminations(groups, run / "terminations.png"),
    ]
    if paths[4] is None:
        (run / "dialogue_ratings.png").unlink(missing_ok=True)  # no ratings now: an older figure would mislead
    return [p for p in paths if p is not None]
