"""Learning-evidence figures: observation modes, 95% intervals, per-episode logs, GSPO curves and timing."""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path
from typing import Any

import gymnasium as gym

__all__ = [
    "SUCCESS",
    "NavOnlyCatalog",
    "OBSERVATION_MODES",
    "TEACHERS",
    "observation_mode",
    "wilson_interval",
    "bootstrap_interval",
    "phase_figures",
    "EpisodeLog",
    "gspo_curve",
    "gspo_timing",
    "plot_curves",
]

logger = logging.getLogger(__name__)

SUCCESS = "success_cart_added"


class NavOnlyCatalog(gym.ObservationWrapper):
    """The observation's catalog replaced by the navigation index alone (no product rows).

    ~2.3k-token SmolLM2 prompts instead of ~19.8k: small enough for a CPU smoke run of the
    real model; the retrieved-catalog view (issue 15 point 2) replaces it for real runs.
    """

    def observation(self, observation):
        return {**observation, "catalog": self.env.unwrapped._nav_text}


# name -> (env keywords, wrapper or None). "compact" is the retrieved catalog view (BM25 over the
# dialogue, README "Compact observation"): what fits SmolLM2's 8,192-token context.
OBSERVATION_MODES: dict[str, tuple[dict[str, Any], Any]] = {
    "full": ({}, None),
    "compact": ({"catalog_view": "retrieved", "catalog_k": 5}, None),
    "nav_only": ({}, NavOnlyCatalog),
}
# The SFT teacher of each mode: in the compact view the heuristic may only use the entries the
# conversation has listed (agents/restricted.py), as the policy it teaches.
TEACHERS = {"full": "heuristic", "compact": "heuristic-restricted", "nav_only": "heuristic"}


@contextlib.contextmanager
def observation_mode(mode: str):
    """Make SFT, GSPO and evaluation build their envs in ``mode``.

    SFT and GSPO create envs from ``train.tasks.ENV_OF_STORE``; for a mode other than
    "full" that table points, for the duration, at env ids registered here that add the
    mode's keywords and wrapper. (Until the training configs carry env keywords.)
    """
    import situ_gym  # noqa: F401  (registers the base ids)
    from train import tasks

    if mode not in OBSERVATION_MODES:
        raise ValueError(f"observation_mode must be one of {sorted(OBSERVATION_MODES)}, got {mode!r}")
    kwargs, wrapper = OBSERVATION_MODES[mode]
    if not kwargs and wrapper is None:
        yield
        return
    saved = dict(tasks.ENV_OF_STORE)
    try:
        for store, base_id in saved.items():
            new_id = base_id.replace("SituRec-", f"SituRecEvidence{mode.title().replace('_', '')}-")

            def make(_base=base_id, **kw):
                env = gym.make(_base, **{**kwargs, **kw})
                return wrapper(env) if wrapper else env

            if new_id not in gym.registry:
                gym.register(id=new_id, entry_point=make, disable_env_checker=True)
            tasks.ENV_OF_STORE[store] = new_id
        yield
    finally:
        tasks.ENV_OF_STORE.update(saved)


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a success rate (scipy).

    >>> [round(x, 3) for x in wilson_interval(8, 10)]
    [0.49, 0.943]
    """
    from scipy.stats import binomtest

    if n < 1:
        raise ValueError(f"n must be positive, got {n!r}")
    ci = binomtest(successes, n).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def bootstrap_interval(values: list[float], seed: int = 0, confidence: float = 0.95) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean (scipy); None for fewer than 2 values."""
    import numpy as np
    from scipy.stats import bootstrap

    if len(values) < 2:
        return None
    data = np.asarray(values, dtype=float)
    if np.all(data == data[0]):
        return float(data[0]), float(data[0])
    res = bootstrap((data,), np.mean, confidence_level=confidence, method="percentile", n_resamples=2000,
                    random_state=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def phase_figures(episodes: list[dict], seed: int = 0) -> dict[str, Any]:
    """SR, mean R_total (per-episode mean over turns, then over episodes) and turns, with 95% CIs."""
    n = len(episodes)
    if n == 0:
        raise ValueError("no episodes to summarise")
    wins = sum(e["termination"] == SUCCESS for e in episodes)
    rewards = [e["mean_r_total"] for e in episodes]
    turns = [float(e["turns"]) for e in episodes]
    return {
        "episodes": n,
        "success_rate": wins / n,
        "success_rate_ci95": list(wilson_interval(wins, n)),
        "mean_r_total": sum(rewards) / n,
        "mean_r_total_ci95": bootstrap_interval(rewards, seed),
        "mean_turns": sum(turns) / n,
        "mean_turns_ci95": bootstrap_interval(turns, seed),
    }


class EpisodeLog:
    """Wraps an env and appends one record per episode to ``sink`` (task, turns, R_total, termination)."""

    def __init__(self, env: Any, sink: list[dict]):
        self.env, self.sink, self._rec = env, sink, None

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        self._rec = {"task_id": info.get("task_id"), "turns": 0, "totals": [], "termination": None}
        self.sink.append(self._rec)
        return obs, info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._rec["turns"] += 1
        self._rec["totals"].append(float(info["recrm"]["total"]))
        if terminated or truncated:
            self._rec["termination"] = info.get("termination") or ("turn_limit" if truncated else "ended")
        return obs, reward, terminated, truncated, info

    def close(self):
        self.env.close()


def gspo_curve(history: list[dict]) -> list[dict]:
    """Per logged GSPO step: SR and mean trajectory reward of the rollouts generated for it,
    and where logged ``pass_k`` ({k: pass^k} over the step's groups, ``train.rewards``)."""
    curve = []
    for h in history:
        if "siturec/success_rate" in h and "reward" in h and "step" in h:
            point = {"step": int(h["step"]), "success_rate": float(h["siturec/success_rate"]), "reward": float(h["reward"])}
            pass_k = {int(k.split("^")[1]): float(v) for k, v in h.items() if k.startswith("siturec/pass^")}
            curve.append({**point, "pass_k": dict(sorted(pass_k.items()))} if pass_k else point)
    return curve


def gspo_timing(history: list[dict], wall_s: float, generation_batch: int) -> dict[str, Any]:
    """Generation / env + reward / optimisation seconds and rollout tokens/s from TRL's log history."""
    gen = sum(float(h.get("timing/generate_s", 0.0)) for h in history)
    env = sum(float(h.get("timing/env_reward_s", 0.0)) for h in history)
    runtime = next((float(h["train_runtime"]) for h in history if "train_runtime" in h), wall_s)
    # completions/mean_length counts model tokens only (TRL uses env_mask); one value per generation cycle
    tokens = sum(float(h["completions/mean_length"]) * generation_batch for h in history if "timing/generate_s" in h
                 and "completions/mean_length" in h)
    return {"wall_s": wall_s, "train_runtime_s": runtime, "generation_s": gen, "env_reward_s": env,
            "optimisation_s": max(0.0, runtime - gen - env), "load_and_setup_s": max(0.0, wall_s - runtime),
            "generated_tokens": tokens, "tokens_per_s": tokens / gen if gen > 0 else None}


def plot_curves(curves: dict[str, list[dict]], path: Path) -> Path:
    """SR and reward over GSPO steps, one line per reward variant (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for variant, curve in curves.items():
        steps = [c["step"] for c in curve]
        axes[0].plot(steps, [c["success_rate"] for c in curve], marker="o", label=variant)
        axes[1].plot(steps, [c["reward"] for c in curve], marker="o", label=variant)
    axes[0].set_ylim(-0.02, 1.02)
    steps_seen = sorted({c["step"] for curve in curves.values() for c in curve}) or [0]
    for ax, title in zip(axes, ("rollout success rate", "mean trajectory reward"), strict=True):
        ax.set_xlabel("GSPO step")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # steps are whole numbers
        if len(steps_seen) <= 2:
            ax.set_xlim(min(steps_seen) - 1, max(steps_seen) + 1)  # a lone step is no range of steps
        ax.set_title(title)
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
