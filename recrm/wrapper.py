"""RecRMReward: a Gymnasium wrapper that replaces the env's reward with RecRM's gated reward."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, SupportsFloat

import gymnasium as gym

from recrm.components import RewardComponent
from recrm.composite import RecRMComposite
from recrm.context import TurnContext

__all__ = ["RecRMReward"]


class RecRMReward(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Replace each step's reward with RecRM's ``R_total`` for the assistant turn just taken.

    ``R_total = C_inst * C_consist * (alpha R_relev + beta 1[R_relev > tau] (R_rank + R_beh))``,
    normalised to [0, 1] by default (see ``RecRMComposite``, which also documents the
    dialogue credit of turns that judge no item). ``variant`` selects a rung of the
    ablation ladder: ``"outcome"`` (R1) passes the env's outcome reward through
    unchanged (and reports it as ``total``); ``"+instruction"``, ``"+relevance"``, ``"+behavior"``, ``"full"`` (R2..R5)
    give the RecRM reward plus ``outcome_bonus * env_reward`` (the env pays 1.0 on the
    step an item enters the cart, i.e. at the end of a successful episode).

    ``scorers`` picks a rule or a learned model per dimension, e.g.
    ``{"relevance": "model:runs/rm/relevance"}`` (see ``recrm.scorers``); a model folder is
    loaded once per process and shared by every wrapper that names it.

    What the wrapper reads: ``info["turn"]`` (the ``TurnRecord`` of the step), and from
    ``env.unwrapped`` the hidden ``task``, the ``index`` (SceneIndex) and ``turns`` (the
    episode so far) — nothing heavy travels in ``info``, so vector envs work.

    What it writes: ``info["recrm"]`` — ``total``, ``reward`` (what ``step`` returned),
    ``env_reward``, ``variant``, ``components`` (name -> value or None), ``gates``,
    ``indicator``, ``judged_item``, ``dialogue_credit`` and per-component ``details``
    (failed checks, wrong claims) — and the component values into
    ``info["turn"].reward`` (``"recrm/<name>"``, ``"recrm/total"``) so trajectory files
    keep them.

    Example::

        >>> import gymnasium as gym, situ_gym, recrm
        >>> env = recrm.RecRMReward(gym.make("SituRec-Supermarket-v0"), variant="full")
        >>> obs, info = env.reset(seed=0)
        >>> text = ('{"response": "Hi! What are you shopping for today?", '
        ...         '"assistant_actions": [{"type": "Greet"}], '
        ...         '"expected_user_action": {"name": "idle", "arguments": {}}, "ranking": []}')
        >>> obs, reward, terminated, truncated, info = env.step(text)
        >>> info["recrm"]["gates"]
        {'instruction': 1.0, 'consistency': 1.0}
        >>> reward  # a valid opening question earns the dialogue credit
        0.2
        >>> info["turn"].reward["recrm/total"] == reward
        True
    """

    def __init__(
        self,
        env: gym.Env,
        alpha: float = 1.0,
        beta: float = 0.5,
        tau: float = 0.5,
        components: Sequence[RewardComponent] | None = None,
        variant: str = "full",
        outcome_bonus: float = 0.0,
        *,
        normalize: bool = True,
        neutral: float = 0.2,
        decay: float = 0.5,
        scorers: Mapping[str, Any] | None = None,
    ):
        if outcome_bonus < 0:
            raise ValueError(f"outcome_bonus must be >= 0, got {outcome_bonus!r}")
        gym.utils.RecordConstructorArgs.__init__(
            self,
            alpha=alpha,
            beta=beta,
            tau=tau,
            components=components,
            variant=variant,
            outcome_bonus=outcome_bonus,
            normalize=normalize,
            neutral=neutral,
            decay=decay,
            scorers=scorers,
        )
        gym.Wrapper.__init__(self, env)
        self.composite = RecRMComposite(
            alpha=alpha,
            beta=beta,
            tau=tau,
            components=components,
            variant=variant,
            normalize=normalize,
            neutral=neutral,
            decay=decay,
            scorers=scorers,
        )
        self.outcome_bonus = float(outcome_bonus)

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        obs, env_reward, terminated, truncated, info = self.env.step(action)
        record = info.get("turn")
        if record is None:
            raise ValueError(
                f"RecRMReward needs info['turn'] (a TurnRecord) from the wrapped env; got keys {sorted(info)}"
            )
        result = self.composite.score(TurnContext.from_env(self.env, record))
        env_reward = float(env_reward)
        if self.composite.variant.name == "outcome":
            reward = result.total = env_reward  # R1: the outcome is the whole reward
        else:
            reward = result.total + self.outcome_bonus * env_reward
        record.reward.update(result.reward_fields())
        record.reward["recrm/reward"] = reward
        info = dict(info)
        info["recrm"] = {**result.as_dict(), "reward": reward, "env_reward": env_reward}
        return obs, reward, terminated, truncated, info
