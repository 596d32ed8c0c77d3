"""The trajectory reward part by part, and what GSPO's groups say about it.

The trajectory reward (``train.rollout``) is the mean over turns of the soft-gated RecRM
total plus the outcome bonus. The total is additive in its terms (``recrm.composite.TERMS``:
``ungated = sum(terms)``), so the trajectory reward splits exactly into one part per term
(each the mean over turns of ``soft gates x term``) plus ``outcome`` (bonus x gate share on
a purchase). With ``reward_parts: true`` GSPO gets one TRL reward function per part
(``part_reward_functions``), so ``GRPOConfig.multi_objective_aggregation``
(``normalize_then_sum``, GDPO-style) and ``reward_weights`` apply; with the weights all 1
and ``sum_then_normalize`` it trains on the same reward as the single function.

Logged every step (``log_training_metrics``), in either mode: each component's mean and
the gates' pass rates (as before), each part's mean and its share of the advantage (the
part's share of ``sum |A_part|`` where ``A_part = (part - group mean) / group std of the
reward``, TRL's group-normalised advantage split along the parts), and pass^k: a group's
G rollouts are G trials of one episode (same task and seed), so ``pass^k = C(c, k) /
C(G, k)`` for c successes (tau-bench), averaged over the groups, for k = 1, 2, 4, ... <= G.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from recrm.composite import TERMS
from recrm.dimensions import dimension_names, gate_names, term_names
from recrm.outcome import episode_reward

__all__ = ["PARTS", "parts", "soft_gated_total", "soft_gate", "turn_parts", "episode_parts", "EpisodeTally",
           "part_reward_functions", "rollout_fields", "pass_hat_k", "advantage_shares",
           "log_training_metrics"]

PARTS = (*TERMS, "outcome")  # of the declared dimensions (recrm.dimensions); ``parts()`` with registered ones


def parts() -> tuple[str, ...]:
    """The trajectory reward's parts: the composite's terms (``recrm.dimensions.term_names``) and ``outcome``."""
    return (*term_names(), "outcome")


def soft_gated_total(recrm: dict[str, Any], floor: float) -> float:
    """A turn's R_total with the gates softened to ``max(gate, floor)``.

    ``recrm`` is the wrapper's ``info["recrm"]``: ``total = C_inst * C_consist * ungated``
    (inactive gates are 1), so the soft total is ``max(C_inst, f) * max(C_consist, f) *
    ungated``.

    >>> turn = {"total": 0.0, "gates": {"instruction": 0.0, "consistency": 1.0}, "ungated": 0.2}
    >>> soft_gated_total(turn, 0.0), soft_gated_total(turn, 0.5)
    (0.0, 0.1)
    """
    if floor <= 0:
        return float(recrm["total"])
    return soft_gate(recrm, floor) * float(recrm["ungated"])


def soft_gate(recrm: dict[str, Any], floor: float) -> float:
    """The factor the turn's ``ungated`` value is paid at: ``C_inst * C_consist``, each at least ``floor``."""
    gates = recrm.get("gates", {})
    factor = 1.0
    for name in gate_names():  # recrm.dimensions: C_inst, C_consist
        factor *= max(float(gates.get(name, 1.0)), floor)
    return factor


def turn_parts(recrm: Mapping[str, Any], soft_gate: float) -> dict[str, float]:
    """One turn's soft-gated total by term: ``soft_gate x terms`` (``info["recrm"]``)."""
    terms = recrm.get("terms") or {}
    return {name: soft_gate * float(terms.get(name, 0.0)) for name in term_names()}


def episode_parts(turns: Sequence[Mapping[str, float]], outcome: float) -> dict[str, float]:
    """The trajectory reward by part: each term's mean over the turns, and the outcome."""
    out = {name: (sum(t[name] for t in turns) / len(turns) if turns else 0.0) for name in term_names()}
    out["outcome"] = float(outcome)
    return out


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


@dataclass
class EpisodeTally:
    """One episode's RecRM reward turn by turn (each step's ``info["recrm"]``), and the fields
    its rollout row carries for the reward functions and ``log_training_metrics``.

    >>> tally = EpisodeTally()
    >>> tally.add({"total": 0.0, "ungated": 0.4, "gates": {"instruction": 0.0}, "terms": {}}, floor=0.5)
    >>> tally.totals, tally.gates["instruction"]
    ([0.2], [0.0])
    """

    totals: list[float] = field(default_factory=list)  # soft-gated R_total per turn
    components: dict[str, list[float]] = field(default_factory=lambda: {n: [] for n in dimension_names()})
    gates: dict[str, list[float]] = field(default_factory=lambda: {g: [] for g in gate_names()})  # 1: fully open
    parts: list[dict[str, float]] | None = field(default_factory=list)  # per turn; None: a wrapper without terms
    last: Mapping[str, Any] | None = None  # the last step's info["recrm"] (its outcome_credit at the end)

    def add(self, recrm: Mapping[str, Any], floor: float) -> None:
        """Record one step's ``info["recrm"]``, its gates softened to ``floor``."""
        self.last = recrm
        self.totals.append(soft_gated_total(recrm, floor))
        if self.parts is not None and "terms" in recrm:
            self.parts.append(turn_parts(recrm, soft_gate(recrm, max(floor, 0.0))))
        else:  # a reward wrapper that reports no terms: the trajectory reward stays whole
            self.parts = None
        for name in self.components:
            value = (recrm.get("components") or {}).get(name)
            if value is not None:
                self.components[name].append(float(value))
        for name in self.gates:
            gate = (recrm.get("gates") or {}).get(name)
            if gate is not None:
                self.gates[name].append(1.0 if gate >= 1.0 else 0.0)

    def fields(self, success: bool, outcome_bonus: float, credit: float) -> dict[str, float]:
        """``traj_reward`` (``recrm.outcome.episode_reward`` with the outcome ``credit``),
        ``recrm_total`` and each ``recrm_<dimension>`` (means over turns), each ``gate_<gate>``
        (pass rate) and, with terms, each ``part_<part>`` (they sum to ``traj_reward``)."""
        out = {"traj_reward": episode_reward(self.totals, success, outcome_bonus, credit),
               "recrm_total": _mean(self.totals) if self.totals else 0.0}
        out.update({f"recrm_{n}": _mean(self.components.get(n, [])) for n in dimension_names()})
        out.update({f"gate_{g}": _mean(self.gates.get(g, [])) for g in gate_names()})
        if self.parts is not None:
            outcome = outcome_bonus * credit if success else 0.0
            out.update({f"part_{n}": value for n, value in episode_parts(self.parts, outcome).items()})
        return out


def _values(kwargs: Mapping[str, Any], key: str) -> list[float]:
    return [float(v) for v in kwargs.get(key) or [] if v is not None and not math.isnan(v)]


def _groups(kwargs: Mapping[str, Any], n: int) -> list[list[int]]:
    """Rows that played the same episode (same store, task and seed), in first-seen order."""
    keys = [tuple((kwargs.get(k) or [None] * n)[i] for k in ("store", "task_id", "seed")) for i in range(n)]
    groups: dict[tuple, list[int]] = defaultdict(list)
    for i, key in enumerate(keys):
        groups[key].append(i)
    return list(groups.values())


def pass_hat_k(successes: Sequence[Sequence[float]], k: int) -> float | None:
    """Mean over groups of ``C(c, k) / C(G, k)`` (c successes of G trials); None if no group has k trials.

    >>> pass_hat_k([[1, 1, 0, 0]], 1), pass_hat_k([[1, 1, 0, 0]], 2), pass_hat_k([[1, 1, 1, 1]], 4)
    (0.5, 0.16666666666666666, 1.0)
    """
    rates = [math.comb(int(sum(g)), k) / math.comb(len(g), k) for g in successes if len(g) >= k]
    return sum(rates) / len(rates) if rates else None


def advantage_shares(parts: Mapping[str, Sequence[float]], groups: Sequence[Sequence[int]]) -> dict[str, float]:
    """Each part's share of the magnitude of the group-normalised advantage.

    >>> advantage_shares({"a": [1.0, 0.0], "b": [0.0, 0.0]}, [[0, 1]])
    {'a': 1.0, 'b': 0.0}
    """
    size = {name: 0.0 for name in parts}
    for group in groups:
        if len(group) < 2:
            continue
        totals = [sum(parts[name][i] for name in parts) for i in group]
        mean = sum(totals) / len(totals)
        std = math.sqrt(sum((t - mean) ** 2 for t in totals) / (len(totals) - 1))  # torch.std's unbiased one
        for name, values in parts.items():
            part_mean = sum(values[i] for i in group) / len(group)
            size[name] += sum(abs(values[i] - part_mean) for i in group) / (std + 1e-4)
    whole = sum(size.values())
    return {name: (s / whole if whole > 0 else 0.0) for name, s in size.items()}


def log_training_metrics(kwargs: Mapping[str, Any], log_metric: Callable[[str, float], Any]) -> None:
    """Component means, gate pass rates, SR, turns, timing, part means, advantage shares and
    pass^k of one batch of rollouts (the rollout's extra fields in ``kwargs``)."""
    for name in ("recrm_total", *(f"recrm_{n}" for n in dimension_names())):
        values = _values(kwargs, name)
        if values:
            log_metric(f"recrm/{name[len('recrm_'):]}/mean", sum(values) / len(values))
    for name in (f"gate_{g}" for g in gate_names()):
        values = _values(kwargs, name)
        if values:
            log_metric(f"recrm/{name}/pass_rate", sum(values) / len(values))
    for key, metric in (("success", "siturec/success_rate"), ("num_turns", "siturec/turns"),
                        ("time_generate_s", "timing/generate_s"), ("time_env_s", "timing/env_reward_s")):
        values = kwargs.get(key)
        if values:
            log_metric(metric, sum(values) / len(values))
    success = kwargs.get("success")
    if success:
        groups = _groups(kwargs, len(success))
        trials = [[float(success[i]) for i in g] for g in groups]
        k = 1
        while (value := pass_hat_k(trials, k)) is not None:
            log_metric(f"siturec/pass^{k}", value)
            k *= 2
        by_part = {name: list(kwargs[f"part_{name}"]) for name in parts() if kwargs.get(f"part_{name}")}
        if by_part:
            for name, values in by_part.items():
                log_metric(f"recrm/part_{name}/mean", sum(values) / len(values))
            for name, share in advantage_shares(by_part, groups).items():
                log_metric(f"recrm/part_{name}/advantage_share", share)


def rollout_fields(kwargs: Mapping[str, Any]) -> Mapping[str, Any]:
    """A reward function's keyword arguments with the rollouts' fields: as they are on the
    ``rollout_func`` path (``SituRecRollout``'s extra fields), or, on the ``environment_factory``
    path, each rollout's ``environments[i].reward_fields`` (``train.environment``) as columns."""
    environments = kwargs.get("environments")
    if environments is None or any(key.startswith("part_") for key in kwargs):
        return kwargs
    rows = [env.reward_fields for env in environments]
    return {**kwargs, **{key: [row.get(key) for row in rows] for key in rows[0]}} if rows else kwargs


def part_reward_functions() -> list[Callable[..., list[float]]]:
    """One TRL reward function per part (``rewards/recrm_<part>/mean`` in TRL's logs); they
    sum to the trajectory reward. The first one also logs ``log_training_metrics``. Each reads
    the rollout's ``part_<name>`` field, or its environment's (``rollout_fields``)."""

    def make(name: str, logs: bool) -> Callable[..., list[float]]:
        def reward(prompts, completions, log_metric=None, **kwargs) -> list[float]:
            kwargs = rollout_fields(kwargs)
            values = kwargs.get(f"part_{name}")
            if values is None:
                raise ValueError(f"recrm_{name} needs the rollout's part_{name} field (train.rollout.SituRecRollout, "
                                 "or train.environment.SituRecToolEnv with reward_parts)")
            if logs and log_metric is not None:
                log_training_metrics(kwargs, log_metric)
            return [float(v) for v in values]

        reward.__name__ = reward.__qualname__ = f"recrm_{name}"
        return reward

    return [make(name, i == 0) for i, name in enumerate(parts())]
