"""How much of the outcome bonus a purchase earns (the share of validly presented turns), and
the trajectory reward GSPO trains on.

A purchase the shopper was talked into with invented claims, mislabelled recommendations or
padding should not earn the full bonus. ``outcome_credit`` is 0 when the turn that
first put the bought product forward (``situ_gym.language.attempts``) failed a RecRM gate (the
recommendation itself was invalid), else the share of the episode's turns that passed both gates.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from recrm.dimensions import GATES, gate_names
from situ_gym.language import analyze, lexicon_for, put_forward
from situ_gym.records import TurnRecord
from situ_gym.scene.index import SceneIndex

__all__ = ["outcome_credit", "env_outcome_credit", "episode_reward"]


def _passed(t: TurnRecord) -> bool:
    """Every gate (recrm.dimensions: C_inst, C_consist) fully open on the turn."""
    return all((t.reward.get(f"recrm/{g}") or 0.0) >= 1.0 for g in gate_names())


def outcome_credit(turns: Sequence[TurnRecord], cart: Sequence[str], index: SceneIndex) -> float:
    """Share in [0, 1] of the bonus a purchase earns (1.0 for an episode with no gated turn).

    >>> outcome_credit([], [], None)
    1.0
    """
    gated = [t for t in turns if f"recrm/{GATES[0]}" in t.reward]
    if not gated:
        return 1.0
    lex = lexicon_for(index)
    bought = set(cart)
    # the turn that first put the bought product forward (the env's attempt rule)
    offered = [(t, t.put_forward or put_forward(analyze(t.response, lex, visible=frozenset(t.visible_before)))) for t in gated]
    proposing = [t for t, products in offered if bought & set(products)]
    if proposing and not _passed(proposing[0]):
        return 0.0
    return sum(_passed(t) for t in gated) / len(gated)


def env_outcome_credit(env: Any) -> float:
    """``outcome_credit`` of the episode an env has played so far (1.0 for an env that keeps no
    turns, cart or index: a test double, another env). ``RecRMReward`` writes it into
    ``info["recrm"]["outcome_credit"]`` on an episode's last step, so a trainer reads it from the
    info, which a remote env (``situ_gym.serve``) carries too."""
    base = getattr(env, "unwrapped", env)
    turns, index = getattr(base, "turns", None), getattr(base, "index", None)
    cart = getattr(getattr(base, "backend", None), "cart", None)
    if turns is None or cart is None or index is None:
        return 1.0
    return outcome_credit(turns, cart, index)


def episode_reward(
    turn_totals: list[float], success: bool, outcome_bonus: float, gate_share: float = 1.0
) -> float:
    """The trajectory reward GSPO trains on: mean per-turn R_total + the outcome bonus on
    success, times ``gate_share`` (``recrm.outcome.outcome_credit``: 0 when the turn that
    proposed the bought product failed a gate, else the share of turns passing both gates).

    >>> episode_reward([0.2, 0.8], True, 1.0), episode_reward([], False, 1.0)
    (1.5, 0.0)
    >>> episode_reward([0.0, 0.8], True, 1.0, gate_share=0.5)
    0.9
    """
    mean_total = sum(turn_totals) / len(turn_totals) if turn_totals else 0.0
    return mean_total + (outcome_bonus * gate_share if success else 0.0)
