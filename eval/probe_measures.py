"""The reward the reward probes play under and the measures of one assistant's episodes,
shared by ``eval.probes`` (the probe table) and ``eval.best_of_n`` (best-of-N under RecRM)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from situ_gym.records import EpisodeRecord

__all__ = ["REWARD_KWARGS", "reward_kwargs", "ProbeRow", "summarize"]


def reward_kwargs(protocol: str = "default") -> dict[str, Any]:
    """The reward the probes play under: the one GSPO trains on (train/configs use variant
    "full" with outcome bonus 1), or the paper's composite under ``protocol="paper"``."""
    from situ_gym.protocol import check_protocol

    check_protocol(protocol)
    return {"variant": "full" if protocol == "default" else "paper", "outcome_bonus": 1.0}


REWARD_KWARGS: dict[str, Any] = reward_kwargs()


@dataclass(frozen=True)
class ProbeRow:
    """One assistant in one env; rates are fractions in [0, 1]."""

    env: str
    assistant: str
    episodes: int
    turns: int
    r_total: float  # mean over all turns
    train_reward: float  # mean over episodes of recrm.outcome.episode_reward
    gate_instruction: float  # share of turns with C_inst = 1
    gate_consistency: float  # share of turns with C_consist = 1
    sr: float  # share of episodes with a nonempty cart (eval.metrics.success)
    errors: int = 0  # crashed episodes, left out of every measure


def summarize(env: str, assistant: str, episodes: list[EpisodeRecord]) -> ProbeRow:
    """The row of one assistant; crashed episodes are counted, not scored."""
    from eval.metrics import success
    from recrm.outcome import episode_reward, outcome_credit

    played = [ep for ep in episodes if ep.termination != "error"]
    totals = [[float(t.reward.get("recrm/total") or 0.0) for t in ep.turns] for ep in played]
    turns = [t for ep in played for t in ep.turns]
    from situ_gym.scene import SceneIndex
    from situ_gym.scene.loader import load_scene

    index = SceneIndex(load_scene(played[0].store)) if played else None

    def share(ep: EpisodeRecord) -> float:
        return outcome_credit(ep.turns, ep.cart, index)

    returns = [
        episode_reward(ts, ep.termination == "success_cart_added", REWARD_KWARGS["outcome_bonus"], share(ep))
        for ts, ep in zip(totals, played, strict=True)
    ]

    def passed(name: str) -> float:
        return _mean([1.0 if (t.reward.get(f"recrm/{name}") or 0.0) >= 1.0 else 0.0 for t in turns])

    return ProbeRow(
        env=env,
        assistant=assistant,
        episodes=len(played),
        turns=len(turns),
        r_total=_mean([x for ts in totals for x in ts]),
        train_reward=_mean(returns),
        gate_instruction=passed("instruction"),
        gate_consistency=passed("consistency"),
        sr=_mean([float(success(ep)) for ep in played]),
        errors=len(episodes) - len(played),
    )


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0
