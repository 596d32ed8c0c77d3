"""The RecRM reward dimensions, each declared once: name, role, model, rule scorer, place in the formula.

Every module that needs the dimensions reads them here: the composite (``recrm.composite``:
which components it takes, which gate, which terms its total splits into), the scorer
registry (``recrm.scorers``: ``rule`` / ``model:PATH`` / ``llm:SPEC`` per dimension), the
databases (``recrm.data.schema.KINDS``), the judges' prompts (``recrm.data.prompts.JUDGE_KINDS``),
reward-model training (``recrm.train.TASKS``), the analyses (``recrm.analyse``, ``recrm.score``,
``recrm.evaluate``) and GSPO's rollout and logs (``train.rollout``, ``train.rewards``).
(``recrm.components.instruction.DIMENSIONS`` are something else: the six rubric dimensions
of instruction following.)

The gated formula, in terms of these declarations::

    R_total = prod_{role gate} C_g  x  (alpha R_a + beta 1[R_a > tau] sum_{weight beta} R_d) / (alpha + n_beta beta)

with ``R_a`` the one ``weight="alpha"`` score (relevance: its threshold ``tau`` opens the
beta terms, a turn where it is None earns the dialogue credit instead, its
``first_turn_cap`` detail caps it) and ``n_beta`` the number of ``weight="beta"`` scores
(ranking, behaviour). ``switch`` names the ``recrm.composite.Variant`` flag (the rung of the
R1..R5 ladder) that makes the dimension count in the total.

Adding a dimension is one :class:`Dimension` plus its rule component (a class with ``name``
and ``score(ctx) -> ComponentScore``, ``recrm.components.base``):

* a new **gate** (``role="gate"``) multiplies the total like C_inst and C_consist: nothing in
  the formula changes; ``RecRMResult.gates``, the soft gates of ``train.rollout`` and the gate
  pass rates (``recrm.score``, ``recrm.analyse``, ``train.rewards``) pick it up.
* a new **score** (``role="score"``, ``weight="beta"``) is one more behaviour-style term,
  ``beta 1[R_relev > tau] R_new``, and the normalisation becomes ``alpha + n_beta beta``
  (so ``R_total`` stays in [0, 1]); it gets its own entry in ``RecRMResult.terms`` and its own
  GSPO reward part.
* what the formula does NOT absorb: a second ``weight="alpha"`` anchor (the formula has one
  relevance), a term that is neither a gate nor a beta term (a new place in the bracket),
  or a new rung of the ladder (``switch`` must be one of :data:`SWITCHES`; a new one is a
  new ``Variant`` field and ``VARIANTS`` entry in ``recrm.composite``). Those change
  ``RecRMComposite._result``.
* a learned model (``model=...``) also needs a record type (``recrm.data.schema``), its
  judge prompt or input text (``recrm.data.prompts``, ``recrm.inputs``, ``recrm.judges.formats``)
  and a trainer; ``model=None`` keeps the dimension rule-only (no database, no
  ``recrm.train`` task), scorable by ``rule`` or a component object.

Declare a permanent dimension in :data:`DIMENSIONS` (the module constants below, such as
:data:`DIMENSION_NAMES`, are derived from it at import). A plug-in or a test registers one
at runtime with :func:`register_dimension` (or the :func:`registered` context manager); the
composite and the scorers read :func:`dimensions` when they are built, so they see it, while
the constants keep the declared ones.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Dimension",
    "DIMENSIONS",
    "DIMENSION_NAMES",
    "GATES",
    "SCORES",
    "ANCHOR",
    "BONUS",
    "BASE_TERM",
    "DIALOGUE",
    "TERMS",
    "TRAINED",
    "JUDGES",
    "HEADED",
    "MODEL_TYPES",
    "ROLES",
    "MODELS",
    "SWITCHES",
    "dimensions",
    "dimension",
    "dimension_names",
    "gate_names",
    "term_names",
    "register_dimension",
    "unregister_dimension",
    "registered",
]

ROLES = ("gate", "score")
# what a learned scorer of the dimension is (``recrm_scorer.json``'s default ``type``):
# judge = a causal LM writing a verdict (instruction / consistency: 0/1, relevance: 0/1/2);
# cross_encoder = one logit per (shopper, item) pair; classifier = two classes over a list.
# The two head kinds also train as "generative" (yes/no per item, 1/0 per list: recrm.train's head).
MODELS = ("judge", "cross_encoder", "classifier")
WEIGHTS = ("alpha", "beta")
DIALOGUE = "dialogue"  # the term a turn judging no product is paid under (recrm.dialogue)


@dataclass(frozen=True)
class Dimension:
    """One reward dimension of RecRM.

    ``rule``: the rule-based component, a ``"module:Class"`` path or a zero-argument factory
    (called for a fresh instance). ``symbol`` is the formula's name of the value (C_inst,
    R_relev, ...) and ``label`` how a reader names it (``eval.viewer``). ``switch``: the
    ``Variant`` flag that makes it count in the total. ``weight``: a score's coefficient,
    ``"alpha"`` (the anchor) or ``"beta"``; None for gates. ``model``: the learned scorer kind
    it trains as (one of :data:`MODELS`), None for a rule-only dimension. ``scorer``: the
    default scorer spec when the composite is not told another.
    """

    name: str
    role: str
    rule: str | Callable[[], Any]
    description: str
    symbol: str
    label: str
    switch: str
    weight: str | None = None
    model: str | None = None
    scorer: str = "rule"

    def __post_init__(self) -> None:
        if not self.name or not isinstance(self.name, str) or "/" in self.name:
            raise ValueError(f"a dimension name is a non-empty string without '/', got {self.name!r}")
        if self.role not in ROLES:
            raise ValueError(f"dimension {self.name!r}: role must be one of {ROLES}, got {self.role!r}")
        if self.role == "gate" and self.weight is not None:
            raise ValueError(f"dimension {self.name!r}: a gate has no weight, got {self.weight!r}")
        if self.role == "score" and self.weight not in WEIGHTS:
            raise ValueError(f"dimension {self.name!r}: a score's weight must be one of {WEIGHTS}, got {self.weight!r}")
        if self.model is not None and self.model not in MODELS:
            raise ValueError(f"dimension {self.name!r}: model must be one of {MODELS} or None, got {self.model!r}")
        if not (callable(self.rule) or (isinstance(self.rule, str) and ":" in self.rule)):
            raise ValueError(f"dimension {self.name!r}: rule must be 'module:Class' or a factory, got {self.rule!r}")

    @property
    def is_gate(self) -> bool:
        return self.role == "gate"

    def active_in(self, variant: Any) -> bool:
        """Does the dimension count in ``variant``'s total (its ``switch`` flag is on)?"""
        return bool(getattr(variant, self.switch))

    def make_rule(self) -> Any:
        """A fresh rule-based component of this dimension."""
        factory = self.rule
        if isinstance(factory, str):
            module, _, attr = factory.partition(":")
            factory = getattr(importlib.import_module(module), attr)
        component = factory()
        if getattr(component, "name", None) != self.name:
            raise ValueError(f"the rule component of {self.name!r} is named {getattr(component, 'name', None)!r}")
        return component


# The declarations, in the composite's order: gates first (they multiply), then the bracket.
DIMENSIONS: tuple[Dimension, ...] = (
    Dimension(
        name="instruction", role="gate", rule="recrm.components.instruction:InstructionFollowing",
        description="the output follows the assistant's instructions: schema, one legal action, no jargon or ids",
        symbol="C_inst", label="instruction gate (C_inst)", switch="instruction", model="judge",
    ),
    Dimension(
        name="consistency", role="gate", rule="recrm.components.consistency:FactualConsistency",
        description="no item or content hallucination against the catalog, the cart, the hand and the budget",
        symbol="C_consist", label="consistency gate (C_consist)", switch="consistency", model="judge",
    ),
    Dimension(
        name="relevance", role="score", rule="recrm.components.relevance:QueryItemRelevance",
        description="the judged item against what the shopper has revealed: 0 / 0.5 / 1 (the paper's 0/1/2)",
        symbol="R_relev", label="relevance (R_relev)", switch="relevance", weight="alpha", model="judge",
    ),
    Dimension(
        name="ranking", role="score", rule="recrm.components.ranking:ItemRanking",
        description="NDCG@10 of the turn's ranking against the task's reference items",
        symbol="R_rank", label="ranking (R_rank)", switch="behavior", weight="beta", model="cross_encoder",
    ),
    Dimension(
        name="behavior", role="score", rule="recrm.components.behavior:BehaviorPrediction",
        description="the top 10 hold the item this shopper would buy (list-level behaviour prediction)",
        symbol="R_beh", label="behaviour (R_beh)", switch="behavior", weight="beta", model="classifier",
    ),
)


def _check(dims: tuple[Dimension, ...]) -> None:
    names = [d.name for d in dims]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"two dimensions named {dup}")
    if DIALOGUE in names:
        raise ValueError(f"{DIALOGUE!r} is the dialogue credit's term, not a dimension name")
    anchors = [d.name for d in dims if d.weight == "alpha"]
    if len(anchors) != 1:
        raise ValueError(f"the formula has exactly one alpha-weighted score (relevance), got {anchors}")
    if not any(d.is_gate for d in dims):
        raise ValueError("the formula needs at least one gate")


_check(DIMENSIONS)

DIMENSION_NAMES: tuple[str, ...] = tuple(d.name for d in DIMENSIONS)
GATES: tuple[str, ...] = tuple(d.name for d in DIMENSIONS if d.is_gate)
SCORES: tuple[str, ...] = tuple(d.name for d in DIMENSIONS if not d.is_gate)
ANCHOR: str = next(d.name for d in DIMENSIONS if d.weight == "alpha")
BONUS: tuple[str, ...] = tuple(d.name for d in DIMENSIONS if d.weight == "beta")
# R2 (R = C_inst) pays a constant 1 with the gates open; it is booked under the first gate's name
BASE_TERM: str = GATES[0]
# the additive terms of the composite's ``ungated`` value (``RecRMResult.terms``)
TERMS: tuple[str, ...] = (BASE_TERM, *SCORES, DIALOGUE)
TRAINED: tuple[str, ...] = tuple(d.name for d in DIMENSIONS if d.model is not None)  # databases, recrm.train tasks
JUDGES: tuple[str, ...] = tuple(d.name for d in DIMENSIONS if d.model == "judge")
HEADED: tuple[str, ...] = tuple(n for n in TRAINED if n not in JUDGES)  # classifier / generative heads
MODEL_TYPES: dict[str, str] = {d.name: d.model for d in DIMENSIONS if d.model is not None}
# the Variant flags a dimension may switch on with (recrm.composite.Variant's rungs)
SWITCHES: tuple[str, ...] = tuple(dict.fromkeys(d.switch for d in DIMENSIONS))

_registered: list[Dimension] = []


def dimensions() -> tuple[Dimension, ...]:
    """The declared dimensions and, after them, any registered at runtime."""
    return DIMENSIONS + tuple(_registered)


def dimension(name: str) -> Dimension:
    """The dimension called ``name`` (declared or registered)."""
    for d in dimensions():
        if d.name == name:
            return d
    raise ValueError(f"unknown reward dimension {name!r}; choose one of {list(dimension_names())}")


def dimension_names() -> tuple[str, ...]:
    return tuple(d.name for d in dimensions())


def gate_names() -> tuple[str, ...]:
    return tuple(d.name for d in dimensions() if d.is_gate)


def term_names() -> tuple[str, ...]:
    """The composite's additive terms (``TERMS`` with any registered scores before the dialogue credit)."""
    return (BASE_TERM, *(d.name for d in dimensions() if not d.is_gate), DIALOGUE)


def register_dimension(dim: Dimension) -> Dimension:
    """Add ``dim`` after the declared dimensions (composites and scorers built from now on take it).

    Its ``switch`` must be one of :data:`SWITCHES` and, being a score, its weight ``"beta"``
    (the formula has one alpha-weighted score). Undo with :func:`unregister_dimension`.
    """
    if not isinstance(dim, Dimension):
        raise TypeError(f"register a Dimension, got {type(dim).__name__}")
    if dim.switch not in SWITCHES:
        raise ValueError(f"dimension {dim.name!r}: switch must be one of {SWITCHES} (a Variant flag), "
                         f"got {dim.switch!r}")
    _check(dimensions() + (dim,))
    _registered.append(dim)
    return dim


def unregister_dimension(name: str) -> None:
    """Remove a dimension :func:`register_dimension` added (declared ones stay)."""
    for i, d in enumerate(_registered):
        if d.name == name:
            del _registered[i]
            return
    if name in DIMENSION_NAMES:
        raise ValueError(f"{name!r} is declared in recrm.dimensions.DIMENSIONS, not registered")
    raise ValueError(f"no registered dimension {name!r}")


@contextmanager
def registered(dim: Dimension) -> Iterator[Dimension]:
    """``register_dimension(dim)`` for the ``with`` block."""
    register_dimension(dim)
    try:
        yield dim
    finally:
        unregister_dimension(dim.name)
