"""Held-out evaluation of an HFPolicyAssistant: ``eval.runner.play_batch``, one batched generate per turn.

Used by the GPU script for before/after figures (SR, mean R_total, tokens/s). For the
benchmark's full report use ``python -m eval.rollout --agent hf --model PATH``; both
drive the same ``HFPolicyAssistant`` (same prompts, same generation code).
"""

from __future__ import annotations

import logging
from typing import Any

from eval.runner import EpisodeSpec, play_batch

__all__ = ["evaluate_policy"]

logger = logging.getLogger(__name__)


def evaluate_policy(
    agent: Any,
    store: str,
    task_ids: list[str],
    *,
    seed: int = 0,
    max_turns: int = 20,
    image_size: tuple[int, int] = (640, 480),
    variant: str = "full",
    env_factory: Any = None,
) -> dict[str, Any]:
    """Play one episode per task (env seed ``seed``) and summarise.

    Returns ``episodes``, ``success_rate`` (share ending with a cart addition),
    ``mean_r_total`` (hard-gated RecRM total, mean over all turns), ``mean_turns``,
    ``terminations`` counts, ``generated_tokens``, ``generate_s``, ``env_s`` and
    ``tokens_per_s`` (generated tokens / generation seconds).
    """
    if not task_ids:
        raise ValueError("task_ids is empty")
    if env_factory is None:
        import gymnasium as gym

        import situ_gym  # noqa: F401
        from recrm import RecRMReward
        from train.tasks import ENV_OF_STORE

        def env_factory(_store):
            env = gym.make(ENV_OF_STORE[_store], max_turns=max_turns, image_size=tuple(image_size))
            return RecRMReward(env, variant=variant)

    envs = [env_factory(store) for _ in task_ids]
    totals: list[float] = []

    def on_step(_i: int, _text: str, _obs: Any, info: dict[str, Any], _done: bool) -> None:
        if "recrm" in info:
            totals.append(float(info["recrm"]["total"]))

    tokens0, gen0 = agent.generated_tokens, agent.generate_seconds
    try:
        results = play_batch(envs, agent, [EpisodeSpec(task_id, seed) for task_id in task_ids], on_step=on_step)
    finally:
        for env in envs:
            env.close()
    crashed = next((r.error for r in results if r.error is not None), None)
    if crashed is not None:  # evaluation figures over crashed episodes would mislead
        raise RuntimeError(f"an evaluation episode crashed: {crashed.strip().splitlines()[-1]}")
    terminations = [r.termination for r in results]
    turns = [r.turns for r in results]
    env_s = sum(r.env_seconds for r in results)
    gen_tokens = agent.generated_tokens - tokens0
    gen_s = agent.generate_seconds - gen0
    counts: dict[str, int] = {}
    for t in terminations:
        counts[str(t)] = counts.get(str(t), 0) + 1
    return {
        "episodes": len(task_ids),
        "success_rate": sum(t == "success_cart_added" for t in terminations) / len(task_ids),
        "mean_r_total": sum(totals) / len(totals) if totals else float("nan"),
        "mean_turns": sum(turns) / len(turns),
        "terminations": counts,
        "generated_tokens": gen_tokens,
        "generate_s": gen_s,
        "env_s": env_s,
        "tokens_per_s": gen_tokens / gen_s if gen_s > 0 else float("nan"),
    }
