"""Multi-turn SituRec rollouts for TRL's GRPOTrainer (``rollout_func``), episodes in lock-step.

``SituRecRollout(cfg)(prompts, trainer)`` receives the batch's prompt keys (already
repeated G times by TRL's sampler: one rollout per prompt received) and plays each
episode in its own ``SituRec`` env wrapped by ``recrm.RecRMReward``. Every turn, ALL
active episodes generate in ONE batched call and are stepped by ``recrm.step_envs`` (one
batched call per reward component, so a learned scorer runs once per turn for all of
them); finished episodes drop out.

Per rollout it returns::

    prompt_ids      turn 1's prompt (agents.prompting.Conversation.prompt_ids)
    completion_ids  model turn 1 | env turn 2 | model turn 2 | ... (truncated to
                    max_completion_length here; TRL does not enforce it)
    env_mask        1 on model tokens, 0 on env tokens (loss and GSPO ratio use 1s only)
    logprobs        without vLLM: None (the trainer recomputes them under exactly this
                    sequence); with vLLM: one float per completion token, vLLM's
                    log-probability of each sampled model token and 0.0 on env tokens (what
                    TRL's own tool loop writes there), which TRL's importance-sampling
                    correction compares with its recomputed ones under ``env_mask``

plus extra fields the reward function reads: ``traj_reward``, ``success``,
``num_turns``, ``termination``, ``task_id``, ``recrm_total``, per-component means
``recrm_<name>``, gate pass rates ``gate_instruction`` / ``gate_consistency``, the
time split ``time_generate_s`` / ``time_env_s``, and the trajectory reward by part
``part_<name>`` (``train.rewards.PARTS``; they sum to ``traj_reward``).

With vLLM on several processes every rank calls generation together (TRL's server mode
gathers all ranks' prompts and hands each rank the slice ``len(prompts) x rank``; colocate
with tensor parallelism gathers within its group): each turn the ranks agree on the most
active episodes and the largest token budget on any rank, every rank pads its batch to that
size with one-token filler contexts (their outputs are dropped), and the loop goes on until
no rank has an active episode.

Trajectory reward = mean over turns of the (soft-gated) per-turn ``R_total`` +
``outcome_bonus`` if the episode ended with a cart addition (``success_cart_added``).
Soft gate: while ``gate_floor_at(step) = f > 0``, a turn scores
``max(C_inst, f) * max(C_consist, f) * ungated`` instead of ``C_inst * C_consist *
ungated``, so an untrained policy that never passes the gates still gets a gradient.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agents.prompting import Conversation
from recrm.composite import COMPONENT_NAMES
from recrm.outcome import env_outcome_credit, episode_reward  # episode_reward: re-exported
from recrm.wrapper import step_envs
from train.rewards import (  # soft_gated_total: re-exported
    EpisodeTally,
    log_training_metrics,
    soft_gated_total,
)
from train.tasks import ENV_OF_STORE, parse_prompt_key

if TYPE_CHECKING:  # train.config imports trl; eval.probes uses episode_reward without it
    from train.config import SituRecArguments

__all__ = ["COMPONENTS", "Generated", "SituRecRollout", "episode_outcome_credit", "episode_reward", "gate_floor_at",
           "make_recrm_env", "rank_lockstep", "soft_gated_total", "trajectory_reward", "vllm_generate"]

logger = logging.getLogger(__name__)

COMPONENTS = COMPONENT_NAMES


@dataclass
class Generated:
    """One batched generate call: token ids per context and, from vLLM, their log-probabilities."""

    ids: list[list[int]]
    logprobs: list[list[float | None]] | None = None  # same shape as ids; None: the trainer recomputes


# (contexts, max new tokens) -> ids per context, or Generated with their logprobs
Generate = Callable[[list[list[int]], int], "list[list[int]] | Generated"]
# (active episodes here, token budget here) -> (most active on any rank, largest budget on any rank)
Lockstep = Callable[[int, int], tuple[int, int]]


def vllm_generate(vllm: Any) -> Generate:
    """``Generate`` through TRL's ``VLLMGeneration``: the sampled ids and vLLM's logprob of each."""

    def generate(contexts: list[list[int]], max_new: int) -> Generated:
        # VLLMGeneration reads its token cap at call time: one turn's budget, not the whole episode's.
        cap, vllm.max_completion_length = vllm.max_completion_length, max_new
        try:
            _, ids, logprobs, _ = vllm.generate(prompts=contexts, images=None, num_generations=1)
        finally:
            vllm.max_completion_length = cap
        ids = [list(seq)[:max_new] for seq in ids]
        if logprobs is None:
            return Generated(ids)
        # (batch, tokens, top-k) with the sampled token first; None where vLLM had NaN (TRL maps it back)
        return Generated(ids, [[lp[0] for lp in seq][: len(i)] for seq, i in zip(logprobs, ids, strict=True)])

    return generate


def rank_lockstep(accelerator: Any) -> Lockstep:
    """``Lockstep`` over all processes: one gather of (active, budget) per turn, maximum over ranks."""

    def agree(active: int, budget: int) -> tuple[int, int]:
        import torch

        mine = torch.tensor([[active, budget]], dtype=torch.long, device=accelerator.device)
        most = accelerator.gather(mine).view(-1, 2).max(dim=0).values
        return int(most[0]), int(most[1])

    return agree


def gate_floor_at(step: int, floor: float, warmup_steps: int) -> float:
    """Soft-gate floor at ``step``: ``floor`` at 0, linear to 0 at ``warmup_steps``.

    >>> [gate_floor_at(s, 0.5, 4) for s in (0, 2, 4, 9)]
    [0.5, 0.25, 0.0, 0.0]
    """
    if floor <= 0 or warmup_steps < 1:
        return 0.0
    return floor * max(0.0, 1.0 - step / warmup_steps)


@dataclass
class _Episode:
    env: Any
    conv: Conversation
    task_id: str
    done: bool = False
    turns: int = 0
    tally: EpisodeTally = field(default_factory=EpisodeTally)  # RecRM turn by turn (train.rewards)
    termination: str | None = None
    logprobs: list[float | None] | None = field(default_factory=list)  # aligned with conv.completion_ids


def episode_outcome_credit(env: Any, recrm: Mapping[str, Any] | None = None) -> float:
    """The outcome credit of a finished episode (``recrm.outcome.outcome_credit``): the one
    ``RecRMReward`` wrote into its last step's ``info["recrm"]`` when given (a remote env's
    too), else computed from ``env``'s records (1.0 for envs without records)."""
    if recrm is not None and recrm.get("outcome_credit") is not None:
        return float(recrm["outcome_credit"])
    return env_outcome_credit(env)


def make_recrm_env(cfg: SituRecArguments, store: str):
    """``gym.make`` of ``store``'s env with the configured turn limit and view, wrapped by ``recrm.RecRMReward``."""
    import gymnasium as gym

    import situ_gym  # noqa: F401  (registers the envs)
    from recrm import RecRMReward

    env = gym.make(ENV_OF_STORE[store], max_turns=cfg.max_turns, image_size=tuple(cfg.env_image_size),
                   catalog_view=cfg.catalog_view, catalog_k=cfg.catalog_k, protocol=cfg.env_protocol,
                   ablation=cfg.env_ablation, text_only=cfg.env_text_only)
    return RecRMReward(env, **cfg.recrm_kwargs())


def _generate_turn(
    generate: Generate, contexts: list[list[int]], budget: int, lockstep: Lockstep | None, filler: list[int]
) -> Generated | None:
    """This turn's batched call for ``contexts`` (outputs in their order); None once no rank has one.

    With ``lockstep`` every rank calls with the agreed batch size and budget, padding with ``filler``.
    """
    batch = len(contexts)
    if lockstep is not None:
        batch, budget = lockstep(batch, budget)
    if batch == 0:
        return None
    padded = contexts + [filler] * (batch - len(contexts))
    generated = generate(padded, budget)
    if not isinstance(generated, Generated):
        generated = Generated(list(generated))
    if len(generated.ids) != len(padded):
        raise RuntimeError(f"generate returned {len(generated.ids)} outputs for {len(padded)} contexts")
    mine = len(contexts)
    return Generated(generated.ids[:mine], None if generated.logprobs is None else generated.logprobs[:mine])


class SituRecRollout:
    """The ``rollout_func``: ``SituRecRollout(cfg, max_completion_length)`` is called as ``rollout(prompts, trainer)``.

    ``max_completion_length`` is ``GRPOConfig.max_completion_length``: TRL does not enforce
    it on rollout output, so completions are truncated here.

    ``env_factory(store) -> env`` defaults to ``gym.make(ENV_OF_STORE[store], ...)``
    wrapped by ``recrm.RecRMReward``. Envs are pooled per store and reused across calls
    (``reset`` with the row's seed and task_id).
    """

    def __init__(
        self, cfg: SituRecArguments, max_completion_length: int, env_factory: Callable[[str], Any] | None = None
    ):
        if max_completion_length < 1:
            raise ValueError(f"max_completion_length must be positive, got {max_completion_length!r}")
        self.cfg = cfg
        self.max_completion_length = max_completion_length
        self.env_factory = env_factory or (lambda store: make_recrm_env(cfg, store))
        self._pools: dict[str, list[Any]] = {}

    # ------------------------------------------------------------------ envs
    def _envs(self, store: str, n: int) -> list[Any]:
        pool = self._pools.setdefault(store, [])
        while len(pool) < n:
            pool.append(self.env_factory(store))
        return pool[:n]

    def __call__(self, prompts: list, trainer: Any) -> dict[str, list]:
        from agents.hf_policy import eos_token_ids, generate_batch

        tokenizer = trainer.processing_class
        tokenizer = getattr(tokenizer, "tokenizer", tokenizer)  # a processor wraps its tokenizer
        args = trainer.args
        model = None if args.use_vllm else trainer.accelerator.unwrap_model(trainer.model)
        eos_ids = eos_token_ids(model, tokenizer)
        lockstep = None
        if args.use_vllm:
            generate = vllm_generate(trainer.vllm_generation)
            if trainer.accelerator.num_processes > 1:  # generation is collective: all ranks, every turn
                lockstep = rank_lockstep(trainer.accelerator)
        else:

            def generate(contexts: list[list[int]], max_new: int) -> list[list[int]]:
                was_training = model.training
                model.eval()
                try:
                    return generate_batch(
                        model, contexts, pad_id=tokenizer.pad_token_id, eos_ids=eos_ids, max_new_tokens=max_new,
                        do_sample=True, temperature=args.temperature, top_p=args.top_p,
                    )
                finally:
                    model.train(was_training)

        floor = gate_floor_at(trainer.state.global_step, self.cfg.gate_floor, self.cfg.gate_warmup_steps)
        out = self.play(prompts, tokenizer, generate, eos_ids=eos_ids, gate_floor=floor, lockstep=lockstep)
        if args.use_vllm and out["logprobs"] is None and getattr(args, "vllm_importance_sampling_correction", False):
            raise RuntimeError(
                "vLLM returned no token logprobs, which vllm_importance_sampling_correction needs: serve "
                "logprobs (trl vllm-serve does) or set vllm_importance_sampling_correction: false"
            )
        return out

    # ------------------------------------------------------------------ the lock-step loop
    def play(
        self,
        prompts: list,
        tokenizer: Any,
        generate: Generate,
        *,
        eos_ids: frozenset[int],
        gate_floor: float = 0.0,
        lockstep: Lockstep | None = None,
    ) -> dict[str, list]:
        """Play one episode per prompt key; ``generate`` is called once per turn for all active ones.

        With ``lockstep`` (several processes sharing one generation backend) the turn loop runs
        until no rank has an active episode, and each call gets the agreed number of contexts
        (local ones first, then one-token fillers whose outputs are dropped) and token budget.
        """
        cfg = self.cfg
        keys = [parse_prompt_key(p) for p in prompts]
        by_store: dict[str, int] = {}
        episodes: list[_Episode] = []
        t_env = time.perf_counter()
        for store, task_id, seed in keys:
            slot = by_store.get(store, 0)
            by_store[store] = slot + 1
            env = self._envs(store, slot + 1)[slot]
            obs, info = env.reset(seed=seed, options={"task_id": task_id})
            if info.get("task_id", task_id) != task_id:
                raise RuntimeError(f"env reset to task {info.get('task_id')!r}, asked for {task_id!r}")
            conv = Conversation(tokenizer, store, obs, ablation=info.get("ablation"))  # the prompt follows D.4
            episodes.append(_Episode(env=env, conv=conv, task_id=task_id))
        time_env = time.perf_counter() - t_env
        time_gen = 0.0
        limit = self.max_completion_length
        filler = episodes[0].conv.prompt_ids[:1] if episodes else [int(tokenizer.eos_token_id)]

        for _ in range(cfg.max_turns):
            active = [e for e in episodes if not e.done]
            for e in active:
                if len(e.conv.completion_ids) >= limit:
                    e.done, e.termination = True, e.termination or "length_limit"
            active = [e for e in active if not e.done]
            budgets = [min(cfg.max_new_tokens, limit - len(e.conv.completion_ids)) for e in active]
            t0 = time.perf_counter()
            generated = _generate_turn(generate, [e.conv.ids for e in active], max(budgets, default=0), lockstep,
                                       filler)
            time_gen += time.perf_counter() - t0
            if generated is None:
                break
            if not active:
                continue  # this rank is done; it generated fillers for the ranks that are not
            t0 = time.perf_counter()
            texts = []
            logprobs = generated.logprobs or [None] * len(active)
            for e, ids, logps, own in zip(active, generated.ids, logprobs, budgets, strict=True):
                ids = list(ids)[:own]
                e.conv.add_model_tokens(ids, eos_ids=eos_ids)
                self._add_logprobs(e, logps, len(ids))
                texts.append(tokenizer.decode(ids, skip_special_tokens=True).strip())
            # one batched reward call per RecRM component (and learned model) for all active episodes
            stepped = step_envs([e.env for e in active], texts)
            for e, (obs, _reward, terminated, truncated, info) in zip(active, stepped, strict=True):
                self._record(e, info, gate_floor)
                if terminated or truncated:
                    e.done, e.termination = True, info.get("termination") or ("turn_limit" if truncated else "ended")
                else:
                    env_ids = e.conv.add_observation(obs)
                    if e.logprobs is not None:
                        e.logprobs.extend([0.0] * len(env_ids))  # masked by env_mask wherever TRL reads them
            time_env += time.perf_counter() - t0

        return self._collect(episodes, time_gen, time_env)

    @staticmethod
    def _add_logprobs(e: _Episode, logps: list[float | None] | None, n: int) -> None:
        """Append a turn's ``n`` model-token logprobs; without them the episode has none (trainer recomputes)."""
        if logps is None:
            e.logprobs = None
        elif e.logprobs is not None:
            if len(logps) < n:
                raise RuntimeError(f"generate returned {len(logps)} logprobs for {n} tokens")
            e.logprobs.extend(logps[:n])

    def _record(self, e: _Episode, info: dict, floor: float) -> None:
        recrm = info.get("recrm")
        if recrm is None:
            raise RuntimeError("the env step returned no info['recrm']: wrap the env with recrm.RecRMReward")
        e.turns += 1
        e.tally.add(recrm, floor)

    def _collect(self, episodes: list[_Episode], time_gen: float, time_env: float) -> dict[str, list]:
        limit = self.max_completion_length
        out: dict[str, list] = {k: [] for k in ("prompt_ids", "completion_ids", "env_mask")}
        with_logprobs = bool(episodes) and all(e.logprobs is not None for e in episodes)
        out["logprobs"] = [e.logprobs[:limit] for e in episodes] if with_logprobs else None
        rows = []
        for e in episodes:
            success = e.termination == "success_cart_added"
            out["prompt_ids"].append(list(e.conv.prompt_ids))
            out["completion_ids"].append(e.conv.completion_ids[:limit])
            out["env_mask"].append(e.conv.env_mask[:limit])
            credit = episode_outcome_credit(e.env, e.tally.last) if success else 1.0
            rows.append({**e.tally.fields(success, self.cfg.outcome_bonus, credit),
                         "success": 1.0 if success else 0.0, "num_turns": e.turns,
                         "termination": e.termination or "unfinished", "task_id": e.task_id,
                         "time_generate_s": time_gen, "time_env_s": time_env})
        # the parts only when every episode has them (they sum to traj_reward: train.rewards)
        out.update({k: [row[k] for row in rows] for k in (rows[0] if rows else ()) if all(k in row for row in rows)})
        return out


def trajectory_reward(prompts, completions, traj_reward=None, log_metric=None, **kwargs) -> list[float | None]:
    """GRPO reward function: the rollout's ``traj_reward``; logs component means and SR.

    >>> logged = {}
    >>> trajectory_reward(["p", "p"], ["a", "b"], traj_reward=[0.5, 1.5], success=[0.0, 1.0],
    ...                   recrm_total=[0.5, 0.5], log_metric=logged.__setitem__)
    [0.5, 1.5]
    >>> logged["siturec/success_rate"], logged["recrm/total/mean"]
    (0.5, 0.5)
    """
    if traj_reward is None:
        raise ValueError("trajectory_reward needs the rollout's traj_reward field (use SituRecRollout)")
    if log_metric is not None:
        log_training_metrics(kwargs, log_metric)
    return [None if r is None else float(r) for r in traj_reward]
