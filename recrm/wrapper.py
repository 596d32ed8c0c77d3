"""RecRMReward: a Gymnasium wrapper that replaces the env's reward with RecRM's gated reward."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np

from recrm.components import RewardComponent
from recrm.composite import RecRMComposite, RecRMResult, score_turns
from recrm.context import TurnContext
from recrm.outcome import env_outcome_credit

__all__ = ["RecRMReward", "RecRMVectorReward", "step_envs", "variant_for"]


def variant_for(env: gym.Env | gym.vector.VectorEnv) -> str:
    """The variant an env's protocol implies: ``"paper"`` under ``protocol="paper"``, else ``"full"``.

    An env without a ``protocol`` attribute (a test double, another env) plays the default.
    A ``SyncVectorEnv`` answers for its sub-envs, which must agree.
    """
    base = env.unwrapped
    envs = base.envs if isinstance(base, gym.vector.SyncVectorEnv) else [base]
    protocols = {getattr(e.unwrapped, "protocol", "default") for e in envs}
    if len(protocols) > 1:
        raise ValueError(f"the envs play different protocols {sorted(protocols)}: give RecRMReward a variant")
    return "paper" if protocols == {"paper"} else "full"


class RecRMReward(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Replace each step's reward with RecRM's ``R_total`` for the assistant turn just taken.

    ``R_total = C_inst * C_consist * (alpha R_relev + beta 1[R_relev > tau] (R_rank + R_beh))``,
    normalised to [0, 1] by default (see ``RecRMComposite``, which also documents the
    dialogue credit of turns that judge no item). ``variant`` selects a rung of the
    ablation ladder: ``"outcome"`` (R1) passes the env's outcome reward through
    unchanged (and reports it as ``total``); ``"+instruction"``, ``"+relevance"``, ``"+behavior"``, ``"full"`` (R2..R5)
    give the RecRM reward plus ``outcome_bonus * env_reward`` (the env pays 1.0 on the
    step an item enters the cart, i.e. at the end of a successful episode). ``"paper"`` is
    the formula of RecRM-Bench 4.5 as written (not normalised, 0 on a turn that judges no
    product, no first-turn cap). ``variant=None`` (default) follows the env:
    ``"paper"`` when ``env.unwrapped.protocol == "paper"``, ``"full"`` otherwise
    (``variant_for``); a variant given explicitly wins.

    ``scorers`` picks a rule or a learned model per dimension, e.g.
    ``{"relevance": "model:runs/rm/relevance"}`` (see ``recrm.scorers``); a model folder is
    loaded once per process and shared by every wrapper that names it.

    What the wrapper reads: ``info["turn"]`` (the ``TurnRecord`` of the step), and from
    ``env.unwrapped`` the hidden ``task``, the ``index`` (SceneIndex) and ``turns`` (the
    episode so far) — nothing heavy travels in ``info``, so vector envs work.

    What it writes: ``info["recrm"]`` — ``total``, ``reward`` (what ``step`` returned),
    ``env_reward``, ``variant``, ``components`` (name -> value or None), ``gates``,
    ``indicator``, ``judged_item``, ``dialogue_credit`` and per-component ``details``
    (failed checks, wrong claims), and on an episode's last step ``outcome_credit`` (the share
    of the outcome bonus its purchase earns, ``recrm.outcome.outcome_credit``: trainers read
    it here, so it reaches a remote env's client too) — and the component values into
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
        variant: str | None = None,
        outcome_bonus: float = 0.0,
        *,
        normalize: bool | None = None,
        neutral: float = 0.2,
        scorers: Mapping[str, Any] | None = None,
    ):
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
            scorers=scorers,
        )
        gym.Wrapper.__init__(self, env)
        self.composite, self.outcome_bonus = _reward_setup(
            outcome_bonus, alpha=alpha, beta=beta, tau=tau, components=components,
            variant=variant_for(env) if variant is None else variant,
            normalize=normalize, neutral=neutral, scorers=scorers,
        )

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        return step_envs([self], [action])[0]

    def _inner_step(self, action: Any) -> tuple[tuple, TurnContext]:
        """The wrapped env's step and the context of the turn it played (scored later)."""
        stepped = self.env.step(action)
        record = stepped[4].get("turn")
        if record is None:
            raise ValueError(
                f"RecRMReward needs info['turn'] (a TurnRecord) from the wrapped env; got keys {sorted(stepped[4])}"
            )
        return stepped, TurnContext.from_env(self.env, record)

    def _finish(self, stepped: tuple, result: RecRMResult) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """The wrapper's step result: the env's step with the reward replaced and recorded."""
        obs, env_reward, terminated, truncated, info = stepped
        reward, fields = _reward_of(result, float(env_reward), self.composite.variant.name, self.outcome_bonus)
        info["turn"].reward.update(fields)
        info = dict(info)
        info["recrm"] = {**result.as_dict(), "reward": reward, "env_reward": float(env_reward)}
        if terminated or truncated:
            info["recrm"]["outcome_credit"] = env_outcome_credit(self.env)
        return obs, reward, terminated, truncated, info


class RecRMVectorReward(gym.vector.VectorWrapper, gym.utils.RecordConstructorArgs):
    """``RecRMReward`` for a whole ``SyncVectorEnv``: one batched call per component per step.

    Takes ``RecRMReward``'s keyword arguments and gives each env exactly the reward,
    ``info["recrm"]`` (batched the gymnasium way: arrays with ``_recrm`` masks) and
    ``TurnRecord.reward`` fields that ``make_vec(..., wrappers=[RecRMReward])`` gives, but
    scores all the envs' turns of a step together (``recrm.composite.score_turns``), so a
    learned ``model:PATH`` scorer runs one forward pass per step instead of one per env.

    The turns' ground truth lives in the sub-envs, so the vector env must be a
    ``SyncVectorEnv`` whose autoreset mode keeps a finished env until the next step
    (``next_step``, gymnasium's default, or ``disabled``). Steps in which an env is
    autoreset carry no turn: its reward stays 0, as the env gives it.

    Example::

        >>> import gymnasium as gym, situ_gym, recrm
        >>> envs = recrm.RecRMVectorReward(gym.make_vec("SituRec-Supermarket-v0", num_envs=2,
        ...                                             vectorization_mode="sync"))
        >>> _ = envs.reset(seed=0)
        >>> greet = ('{"response": "Hi! What are you shopping for today?", '
        ...          '"assistant_actions": [{"type": "Greet"}], '
        ...          '"expected_user_action": {"name": "idle", "arguments": {}}, "ranking": []}')
        >>> _, rewards, _, _, infos = envs.step([greet, "not json"])
        >>> rewards.tolist(), infos["recrm"]["gates"]["instruction"].tolist()
        ([0.2, 0.0], [1.0, 0.0])
    """

    def __init__(self, env: gym.vector.VectorEnv, **kwargs: Any):
        gym.utils.RecordConstructorArgs.__init__(self, **kwargs)
        gym.vector.VectorWrapper.__init__(self, env)
        base = env.unwrapped
        if not isinstance(base, gym.vector.SyncVectorEnv):
            raise ValueError(
                f"RecRMVectorReward needs a SyncVectorEnv (it reads each env's state), got {type(base).__name__}; "
                "for other vector envs wrap each env: make_vec(..., wrappers=[RecRMReward])"
            )
        mode = gym.vector.AutoresetMode(base.metadata.get("autoreset_mode", gym.vector.AutoresetMode.NEXT_STEP))
        if mode == gym.vector.AutoresetMode.SAME_STEP:
            raise ValueError("RecRMVectorReward cannot score autoreset_mode='same_step' (the env is reset before "
                             "its turn is scored); use 'next_step' or 'disabled'")
        if kwargs.get("variant") is None:
            kwargs = {**kwargs, "variant": variant_for(env)}
        self.composite, self.outcome_bonus = _reward_setup(**kwargs)

    def step(self, actions: Any):
        obs, rewards, terminated, truncated, infos = self.env.step(actions)
        turns, mask = infos.get("turn"), infos.get("_turn")
        envs = self.env.unwrapped.envs
        played = [] if turns is None else [i for i in range(self.num_envs) if mask[i]]
        results = self.composite.score_batch([TurnContext.from_env(envs[i], turns[i]) for i in played])
        rewards = np.array(rewards, dtype=np.float64)
        for i, result in zip(played, results, strict=True):
            env_reward = float(rewards[i])
            reward, fields = _reward_of(result, env_reward, self.composite.variant.name, self.outcome_bonus)
            turns[i].reward.update(fields)
            rewards[i] = reward
            recrm = {**result.as_dict(), "reward": reward, "env_reward": env_reward}
            if terminated[i] or truncated[i]:
                recrm["outcome_credit"] = env_outcome_credit(envs[i])
            infos = self._add_info(infos, {"recrm": recrm}, i)
        return obs, rewards, terminated, truncated, infos


def _reward_setup(outcome_bonus: float = 0.0, **composite_kwargs: Any) -> tuple[RecRMComposite, float]:
    """The composite and outcome bonus of ``RecRMReward``'s arguments (both wrappers take them)."""
    if outcome_bonus < 0:
        raise ValueError(f"outcome_bonus must be >= 0, got {outcome_bonus!r}")
    return RecRMComposite(**composite_kwargs), float(outcome_bonus)


def _reward_of(result: RecRMResult, env_reward: float, variant: str, outcome_bonus: float):
    """The step's reward and the ``TurnRecord.reward`` fields (sets ``result.total`` for R1)."""
    if variant == "outcome":
        reward = result.total = env_reward  # R1: the outcome is the whole reward
    else:
        reward = result.total + outcome_bonus * env_reward
    return reward, {**result.reward_fields(), "recrm/reward": reward}


def step_envs(envs: Sequence[gym.Env], actions: Sequence[Any]) -> list[tuple]:
    """``env.step(action)`` for each env, the ``RecRMReward`` ones scored together.

    The envs whose outermost wrapper is a ``RecRMReward`` step their wrapped env first;
    then all their turns are scored by ``recrm.composite.score_turns``: one batched call
    per component (a ``model:PATH`` scorer named by several wrappers sees one batch), and
    every result equals what that env's own ``step`` would have returned. Other envs are
    stepped as they are. This is how a caller that steps a list of envs in lock-step (the
    GSPO rollout, ``train.rollout``) batches its learned reward models.

    >>> import gymnasium as gym, situ_gym, recrm
    >>> envs = [recrm.RecRMReward(gym.make("SituRec-Supermarket-v0")) for _ in range(2)]
    >>> _ = [env.reset(seed=s) for s, env in enumerate(envs)]
    >>> greet = ('{"response": "Hi! What are you shopping for today?", '
    ...          '"assistant_actions": [{"type": "Greet"}], '
    ...          '"expected_user_action": {"name": "idle", "arguments": {}}, "ranking": []}')
    >>> [reward for _, reward, *_ in recrm.step_envs(envs, [greet, "not json"])]
    [0.2, 0.0]
    """
    if len(envs) != len(actions):
        raise ValueError(f"step_envs needs one action per env, got {len(actions)} actions for {len(envs)} envs")
    out: list[Any] = [None] * len(envs)
    pending: list[tuple[int, RecRMReward, tuple, TurnContext]] = []
    for i, (env, action) in enumerate(zip(envs, actions, strict=True)):
        if isinstance(env, RecRMReward):
            stepped, ctx = env._inner_step(action)
            pending.append((i, env, stepped, ctx))
        else:
            out[i] = env.step(action)
    results = score_turns([(env.composite, ctx) for _, env, _, ctx in pending])
    for (i, env, stepped, _), result in zip(pending, results, strict=True):
        out[i] = env._finish(stepped, result)
    return out
