"""RecRM's gated composite reward: the R1..R5 ablation ladder and the paper's formula as written."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from recrm.components import RewardComponent, default_components
from recrm.context import TurnContext
from recrm.dialogue import dialogue_value
from recrm.scorers import build_components, score_batch

__all__ = [
    "COMPONENT_NAMES",
    "TERMS",
    "VARIANTS",
    "Variant",
    "RecRMResult",
    "RecRMComposite",
    "resolve_variant",
    "score_turns",
]

logger = logging.getLogger(__name__)

COMPONENT_NAMES = ("instruction", "consistency", "relevance", "ranking", "behavior")
# The additive terms of ``ungated`` (``RecRMResult.terms``): what each part of the formula
# adds with the gates open. "instruction" is R2's constant 1, "dialogue" the dialogue credit.
TERMS = ("instruction", "relevance", "ranking", "behavior", "dialogue")


@dataclass(frozen=True)
class Variant:
    """One reward variant: which RecRM terms are active, and whether the default's shaping applies.

    The ladder R1..R5 shapes the reward for GSPO (``situ_gym.protocol``, row "recrm_composite"):
    the bracket is divided by its maximum, a turn that judges no product earns a dialogue
    credit, and a product put forward before the shopper revealed anything is at most weakly
    relevant. ``"paper"`` turns all three off: RecRM-Bench 4.5's formula as written.
    """

    name: str
    rung: str
    instruction: bool
    relevance: bool
    behavior: bool  # ranking + behaviour terms
    consistency: bool
    help: str
    normalized: bool = True  # bracket / (alpha + 2 beta) unless the composite is told otherwise
    dialogue_credit: bool = True  # a turn judging no product earns neutral * dialogue value
    first_turn_cap: bool = True  # relevance's first_turn_cap detail replaces its value

    @property
    def active(self) -> tuple[str, ...]:
        on = {
            "instruction": self.instruction,
            "consistency": self.consistency,
            "relevance": self.relevance,
            "ranking": self.behavior,
            "behavior": self.behavior,
        }
        return tuple(n for n in COMPONENT_NAMES if on[n])


VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant(
            "outcome",
            "R1",
            False,
            False,
            False,
            False,
            "env outcome reward only (1 when an item enters the cart)",
        ),
        Variant("+instruction", "R2", True, False, False, False, "R = C_inst"),
        Variant("+relevance", "R3", True, True, False, False, "R = C_inst * R_relev"),
        Variant(
            "+behavior",
            "R4",
            True,
            True,
            True,
            False,
            "R = C_inst * (a R_relev + b 1[R_relev > tau] (R_rank + R_beh)) / (a + 2b)",
        ),
        Variant(
            "full",
            "R5",
            True,
            True,
            True,
            True,
            "R = C_inst * C_consist * (a R_relev + b 1[R_relev > tau] (R_rank + R_beh)) / (a + 2b)",
        ),
        Variant(
            "paper",
            "R5",  # the R5 formula, unshaped; not a rung of its own, so no "R6"
            True,
            True,
            True,
            True,
            "R = C_inst * C_consist * (a R_relev + b 1[R_relev > tau] (R_rank + R_beh)) as written "
            "(RecRM-Bench 4.5): not normalised, 0 on a turn judging no product, no first-turn cap",
            normalized=False,
            dialogue_credit=False,
            first_turn_cap=False,
        ),
    )
}
_LADDER = ("outcome", "+instruction", "+relevance", "+behavior", "full")
_ALIASES = {VARIANTS[n].rung.lower(): n for n in _LADDER} | {
    "instruction": "+instruction",
    "relevance": "+relevance",
    "behavior": "+behavior",
    "r5": "full",
}


def resolve_variant(name: str | Variant) -> Variant:
    """A variant by name ("outcome", "+instruction", "+relevance", "+behavior", "full", "paper") or R1..R5."""
    if isinstance(name, Variant):
        return name
    key = str(name).strip()
    key = key if key in VARIANTS else _ALIASES.get(key.lower(), key)
    if key not in VARIANTS:
        raise ValueError(
            f"unknown RecRM variant {name!r}; choose one of {list(VARIANTS)} or R1..R5"
        )
    return VARIANTS[key]


@dataclass
class RecRMResult:
    """The composite's verdict on one turn; ``as_dict`` is what goes into ``info["recrm"]``."""

    total: float
    variant: str
    components: dict[str, float | None]
    gates: dict[str, float]
    indicator: bool
    judged_item: str | None
    dialogue_credit: float | None
    ungated: float = 0.0  # the variant's value with both gates open: total = gates x ungated
    details: dict[str, dict[str, Any]] = field(default_factory=dict)
    terms: dict[str, float] = field(default_factory=dict)  # ungated part by part (TERMS); they sum to it

    def as_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "variant": self.variant,
            "components": dict(self.components),
            "gates": dict(self.gates),
            "indicator": self.indicator,
            "judged_item": self.judged_item,
            "dialogue_credit": self.dialogue_credit,
            "ungated": self.ungated,
            "terms": dict(self.terms),
            "details": self.details,
        }

    def reward_fields(self) -> dict[str, float | None]:
        """Flat name -> value map for ``TurnRecord.reward``."""
        out: dict[str, float | None] = {f"recrm/{k}": v for k, v in self.components.items()}
        out["recrm/total"] = self.total
        return out


class RecRMComposite:
    """``R_total = C_inst * C_consist * (alpha R_relev + beta 1[R_relev > tau] (R_rank + R_beh))``.

    Every component is in [0, 1]. With ``normalize=True`` (default) the bracket is
    divided by its maximum ``alpha + 2 beta`` so that ``R_total`` is in [0, 1]; with the
    defaults ``alpha=1, beta=0.5, tau=0.5`` a fully relevant item (R_relev = 1) that
    heads a ranking holding the target scores 0.5 + 0.25 (R_rank + R_beh), while a weakly
    relevant one (0.5, not above tau) scores 0.25 and opens no behaviour term.

    Inapplicable values (``None``): R_rank and R_beh count as 0 (no ranking, no credit).
    When the turn judges no item at all (no Recommend, no catalog id ranked), R_relev is
    undefined; such dialogue turns (asking, greeting, guiding) receive a *dialogue
    credit* instead of the bracket: ``neutral * value`` (as a fraction of the maximum),
    where ``value`` in [0, 1] scores what the turn does (``recrm.dialogue``: a question
    about an open slot, guidance an expected action can follow, an opening greeting).
    A turn is worth at most ``neutral`` (0.2) this way, far below an honest
    recommendation of the target (up to 1); naming a product makes the turn a
    recommendation attempt, judged as one. The gates still apply to it.

    A right-category product put forward before the shopper revealed anything is at most
    weakly relevant (the relevance judge's ``first_turn_cap`` detail replaces its value).

    Variants (the paper's R1..R5 ladder, see ``VARIANTS``): ``"outcome"`` turns every
    RecRM term off (the wrapper then passes the env reward through); ``"+instruction"``
    gives ``C_inst``; ``"+relevance"`` ``C_inst * R_relev``; ``"+behavior"`` the full
    bracket gated by ``C_inst`` only; ``"full"`` adds the ``C_consist`` gate. Inactive
    components are still scored and reported (``components``) unless ``score_inactive``
    is False; they just do not enter ``total``.

    ``"paper"`` is RecRM-Bench 4.5 as written (the default under ``protocol="paper"``):
    all five components, ``R_total = C_inst * C_consist * (alpha R_relev + beta 1[R_relev >
    tau] (R_rank + R_beh))`` in [0, alpha + 2 beta], no dialogue credit (a turn judging no
    product has no R_relev and scores 0, ``dialogue_credit`` None) and no first-turn cap.
    The paper does not give alpha, beta or tau; the defaults here (alpha = 1, beta = 0.5,
    tau = 0.5) are ours, for every variant.

    ``normalize`` None (default) follows the variant (on for R1..R5, off for ``"paper"``).

    >>> RecRMComposite(alpha=1.0, beta=0.5, tau=0.5).combine(1.0, 1.0, 1.0, 1.0, 1.0)
    1.0
    >>> RecRMComposite().combine(1.0, 1.0, 0.5, 1.0, 1.0)  # weakly relevant: no behaviour terms
    0.25
    >>> RecRMComposite(variant="paper").combine(1.0, 1.0, 1.0, 1.0, 1.0)  # alpha + 2 beta
    2.0
    """

    def __init__(
        self,
        alpha: float = 1.0,
        beta: float = 0.5,
        tau: float = 0.5,
        components: Sequence[RewardComponent] | None = None,
        variant: str | Variant = "full",
        normalize: bool | None = None,
        neutral: float = 0.2,
        score_inactive: bool = True,
        scorers: Mapping[str, Any] | None = None,
    ):
        if alpha < 0 or beta < 0 or alpha + beta <= 0:
            raise ValueError(
                f"alpha and beta must be >= 0 and not both 0, got alpha={alpha!r}, beta={beta!r}"
            )
        if not 0.0 <= tau < 1.0:
            raise ValueError(f"tau must be in [0, 1), got {tau!r}")
        if not 0.0 <= neutral <= 1.0:
            raise ValueError(f"neutral must be in [0, 1], got {neutral!r}")
        self.alpha, self.beta, self.tau = float(alpha), float(beta), float(tau)
        self.variant = resolve_variant(variant)
        if normalize and not self.variant.normalized:
            raise ValueError(f"variant {self.variant.name!r} is not normalised (the paper's formula as written); "
                             "drop normalize=True or use variant 'full'")
        self.normalize = self.variant.normalized if normalize is None else bool(normalize)
        self.neutral = float(neutral)
        self.score_inactive = score_inactive
        if scorers is not None and components is not None:
            raise ValueError("give components or scorers, not both")
        if scorers is not None:
            components = build_components(scorers)
        comps = list(components) if components is not None else default_components()
        self.components: dict[str, RewardComponent] = {}
        for comp in comps:
            if comp.name not in COMPONENT_NAMES:
                raise ValueError(
                    f"component name must be one of {COMPONENT_NAMES}, got {comp.name!r}"
                )
            if comp.name in self.components:
                raise ValueError(f"two components named {comp.name!r}")
            self.components[comp.name] = comp
        missing = [n for n in self.variant.active if n not in self.components]
        if missing:
            raise ValueError(
                f"variant {self.variant.name!r} needs components {missing}; got {list(self.components)}"
            )

    @property
    def scale(self) -> float:
        """Maximum of the bracket: ``alpha + 2 beta`` (1 when normalised)."""
        return self.alpha + 2.0 * self.beta

    def combine(
        self,
        c_inst: float,
        c_consist: float,
        r_relev: float | None,
        r_rank: float | None,
        r_beh: float | None,
    ) -> float:
        """The gated formula on given values (None rank/behaviour count as 0)."""
        if r_relev is None:
            return 0.0
        bracket = self.alpha * r_relev
        if r_relev > self.tau:
            bracket += self.beta * ((r_rank or 0.0) + (r_beh or 0.0))
        total = c_inst * c_consist * bracket
        return total / self.scale if self.normalize else total

    def score(self, ctx: TurnContext) -> RecRMResult:
        return self.score_batch([ctx])[0]

    def score_batch(self, ctxs: Sequence[TurnContext]) -> list[RecRMResult]:
        """Score many turns (e.g. one per env of a vector env): one batched call per component."""
        return score_turns([(self, c) for c in ctxs])

    def _result(
        self, ctx: TurnContext, values: dict[str, float | None], details: dict[str, dict[str, Any]]
    ) -> RecRMResult:
        v = self.variant
        cap = details.get("relevance", {}).get("first_turn_cap")
        if v.first_turn_cap and cap is not None and values.get("relevance") is not None:
            # the default's cap on a blind first-turn guess (recrm.components.relevance); the
            # value reported is the one that entered the reward
            values = {**values, "relevance": float(cap)}
        c_inst = (values.get("instruction") or 0.0) if v.instruction else 1.0
        c_consist = (values.get("consistency") or 0.0) if v.consistency else 1.0
        gates = {"instruction": c_inst, "consistency": c_consist}
        r_relev = values.get("relevance") if v.relevance else None
        indicator = r_relev is not None and r_relev > self.tau and v.behavior
        credit = None
        terms = dict.fromkeys(TERMS, 0.0)
        # The variant's value with the gates open; every variant gates it the same way.
        if not v.instruction:  # R1: the outcome alone
            ungated = 0.0
        elif not v.relevance:  # R2: instruction following alone
            ungated = terms["instruction"] = 1.0
        elif r_relev is None and not v.dialogue_credit:  # the paper: R_relev undefined, nothing to pay
            ungated = 0.0
            details = {**details, "dialogue": {"value": None, "reason": "no product judged: R_relev is "
                                               "undefined and the paper's formula gives 0"}}
        elif r_relev is None:  # a dialogue turn judging no item: scored for what it does
            value, why = dialogue_value(ctx)
            credit = self.neutral * value
            details = {**details, "dialogue": {"value": value, "reason": why}}
            ungated = terms["dialogue"] = credit * (1.0 if self.normalize else self.scale)
        elif not v.behavior:  # R3
            ungated = terms["relevance"] = r_relev * (1.0 if self.normalize else self.alpha)
        else:  # R4 / R5
            ungated = self.combine(1.0, 1.0, r_relev, values.get("ranking"), values.get("behavior"))
            per = 1.0 / self.scale if self.normalize else 1.0
            terms["relevance"] = self.alpha * r_relev * per
            if r_relev > self.tau:
                terms["ranking"] = self.beta * (values.get("ranking") or 0.0) * per
                terms["behavior"] = self.beta * (values.get("behavior") or 0.0) * per
        total = c_inst * c_consist * ungated
        return RecRMResult(
            total=float(total),
            variant=v.name,
            components=values,
            gates=gates,
            indicator=bool(indicator),
            judged_item=ctx.judged_item,
            dialogue_credit=credit,
            ungated=float(ungated),
            details=details,
            terms={k: float(x) for k, x in terms.items()},
        )


def score_turns(turns: Sequence[tuple[RecRMComposite, TurnContext]]) -> list[RecRMResult]:
    """Score (composite, turn) pairs, e.g. the turns of one step of many envs, each with its own
    ``RecRMReward``: every distinct component gets ONE batched call over all the turns it judges.

    Composites naming the same ``model:PATH`` share that scorer (one copy per process, see
    ``recrm.scorers``), so a vector step costs one forward pass per learned model, whatever
    the number of envs. Each turn's result is what ``composite.score(ctx)`` gives alone.
    """
    values: list[dict[str, float | None]] = [{} for _ in turns]
    details: list[dict[str, dict[str, Any]]] = [{} for _ in turns]
    groups: dict[int, tuple[RewardComponent, str, list[int]]] = {}
    for k, (composite, _ctx) in enumerate(turns):
        active = composite.variant.active
        for name, comp in composite.components.items():
            if name in active or composite.score_inactive:
                groups.setdefault(id(comp), (comp, name, []))[2].append(k)
    for comp, name, ks in groups.values():
        for k, s in zip(ks, score_batch(comp, [turns[k][1] for k in ks]), strict=True):
            values[k][name] = s.value
            details[k][name] = s.details
    out = []
    for (composite, ctx), v, d in zip(turns, values, details, strict=True):
        order = [n for n in composite.components if n in v]  # the composite's own order, as alone
        out.append(composite._result(ctx, {n: v[n] for n in order}, {n: d[n] for n in order}))
    return out

