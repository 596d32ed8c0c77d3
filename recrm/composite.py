"""RecRM's gated composite reward: the R1..R5 ablation ladder and the paper's formula as written."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from recrm import dimensions as dims
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

# The dimensions are declared in recrm.dimensions; these are its names (declared ones only).
COMPONENT_NAMES = dims.DIMENSION_NAMES
# The additive terms of ``ungated`` (``RecRMResult.terms``): what each part of the formula
# adds with the gates open. The first gate's name ("instruction") holds R2's constant 1,
# "dialogue" the dialogue credit, the scores their own part.
TERMS = dims.TERMS


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
        """The dimensions this variant's total uses (each dimension's ``switch`` flag is on)."""
        return tuple(d.name for d in dims.dimensions() if d.active_in(self))


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
        # the dimensions as declared (and registered) now; the composite keeps them
        self.dimensions = dims.dimensions()
        names = tuple(d.name for d in self.dimensions)
        self._gates = tuple(d for d in self.dimensions if d.is_gate)
        self._anchor = next(d for d in self.dimensions if d.weight == "alpha")
        self._bonus = tuple(d for d in self.dimensions if d.weight == "beta")
        self.term_names = (dims.BASE_TERM, *(d.name for d in self.dimensions if not d.is_gate), dims.DIALOGUE)
        self.active = tuple(d.name for d in self.dimensions if d.active_in(self.variant))
        comps = list(components) if components is not None else default_components()
        self.components: dict[str, RewardComponent] = {}
        for comp in comps:
            if comp.name not in names:
                raise ValueError(
                    f"component name must be one of {names}, got {comp.name!r}"
                )
            if comp.name in self.components:
                raise ValueError(f"two components named {comp.name!r}")
            self.components[comp.name] = comp
        missing = [n for n in self.active if n not in self.components]
        if missing:
            raise ValueError(
                f"variant {self.variant.name!r} needs components {missing}; got {list(self.components)}"
            )

    @property
    def scale(self) -> float:
        """Maximum of the bracket: ``alpha + 2 beta`` (``alpha + n beta`` for n beta-weighted
        scores, ``recrm.dimensions``; 1 when normalised)."""
        return self.alpha + float(len(self._bonus)) * self.beta

    def _bracket(self, r_relev: float, bonus: Sequence[float | None]) -> float:
        """``alpha R_relev + beta 1[R_relev > tau] sum(bonus)`` (None bonus values count as 0)."""
        bracket = self.alpha * r_relev
        if r_relev > self.tau:
            opened = 0.0
            for x in bonus:
                opened += x or 0.0
            bracket += self.beta * opened
        return bracket

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
        total = c_inst * c_consist * self._bracket(r_relev, (r_rank, r_beh))
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
        anchor = self._anchor.name  # relevance
        cap = details.get(anchor, {}).get("first_turn_cap")
        if v.first_turn_cap and cap is not None and values.get(anchor) is not None:
            # the default's cap on a blind first-turn guess (recrm.components.relevance); the
            # value reported is the one that entered the reward
            values = {**values, anchor: float(cap)}
        # an inactive gate is open (1); an active one without a value is shut (0)
        gates = {g.name: ((values.get(g.name) or 0.0) if g.active_in(v) else 1.0) for g in self._gates}
        r_relev = values.get(anchor) if self._anchor.active_in(v) else None
        bonus = [d.name for d in self._bonus if d.active_in(v)]
        indicator = r_relev is not None and r_relev > self.tau and bool(bonus)
        credit = None
        terms = dict.fromkeys(self.term_names, 0.0)
        # The variant's value with the gates open; every variant gates it the same way.
        if not v.instruction:  # R1: the outcome alone
            ungated = 0.0
        elif not v.relevance:  # R2: instruction following alone
            ungated = terms[dims.BASE_TERM] = 1.0
        elif r_relev is None and not v.dialogue_credit:  # the paper: R_relev undefined, nothing to pay
            ungated = 0.0
            details = {**details, dims.DIALOGUE: {"value": None, "reason": "no product judged: R_relev is "
                                                  "undefined and the paper's formula gives 0"}}
        elif r_relev is None:  # a dialogue turn judging no item: scored for what it does
            value, why = dialogue_value(ctx)
            credit = self.neutral * value
            details = {**details, dims.DIALOGUE: {"value": value, "reason": why}}
            ungated = terms[dims.DIALOGUE] = credit * (1.0 if self.normalize else self.scale)
        elif not bonus:  # R3
            ungated = terms[anchor] = r_relev * (1.0 if self.normalize else self.alpha)
        else:  # R4 / R5
            ungated = self._bracket(r_relev, [values.get(n) for n in bonus])
            if self.normalize:
                ungated = ungated / self.scale
            per = 1.0 / self.scale if self.normalize else 1.0
            terms[anchor] = self.alpha * r_relev * per
            if r_relev > self.tau:
                for n in bonus:
                    terms[n] = self.beta * (values.get(n) or 0.0) * per
        total = 1.0
        for gate in gates.values():
            total *= gate
        total *= ungated
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
        active = composite.active
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

