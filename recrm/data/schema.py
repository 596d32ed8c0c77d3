"""Typed records of the five RecRM-format databases (one JSONL line each)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from recrm import dimensions as dims
from recrm.components.instruction import DIMENSIONS
from situ_gym.records import TurnRecord, known_store, validation_summary

__all__ = [
    "KINDS",
    "RECORD_TYPES",
    "Source",
    "TeacherLabel",
    "InstructionRecord",
    "ConsistencyRecord",
    "RelevanceRecord",
    "RankingRecord",
    "BehaviorRecord",
    "Record",
]

# the dimensions with a learned model (recrm.dimensions): one database each
KINDS = dims.TRAINED
Split = Literal["train", "test"]


class _Rec(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Source(_Rec):
    """Where a record comes from: the episode turn it was built on (for the rule scorers)."""

    store: str
    task_id: str
    episode_id: str = ""
    turn: int = 0
    agent: str = ""
    seed: int = 0

    # the rule scorers load this store's world: an unknown one is refused at the line
    _known_store = field_validator("store")(classmethod(lambda cls, value: known_store(value)))


def _turn_like(value: dict[str, Any], what: str) -> dict[str, Any]:
    """``value`` if it validates as a TurnRecord (the rule scorers rebuild one from it)."""
    try:
        TurnRecord.model_validate(value)
    except ValidationError as exc:
        raise ValueError(f"{what} is not a TurnRecord: {validation_summary(exc)}") from None
    return value


class TeacherLabel(_Rec):
    """A model teacher's label of a record, beside the record's own (rule) label.

    ``label`` is on the record's scale (instruction, consistency, behaviour 0/1; relevance
    0/1/2), None when the teacher's answer was unusable (``error`` says why); a ranking
    record has ``labels`` (yes 1 / no 0 per candidate, None where unusable) and ``scores``
    (P(yes) per candidate, or the answer). ``details``: the rest of the teacher's output in
    the paper's format (overall and dimension scores, hallucination lists, reasons).
    """

    model: str
    label: int | None = None
    labels: list[int | None] | None = None
    scores: list[float | None] | None = None
    details: dict[str, Any] = {}
    error: str | None = None


class _Record(_Rec):
    """What every database line has: its kind, id, split and the episode turn it was built on,
    and, once ``python -m recrm.data label --teacher`` has run, a model teacher's label."""

    kind: str
    id: str
    split: Split
    source: Source
    teacher: TeacherLabel | None = None


class _TurnRecordFields(_Record):
    """A record built on a saved turn: ``turn`` and ``history`` hold TurnRecord dicts, checked
    when the record is read, so that scoring it later cannot fail on them."""

    @field_validator("turn", check_fields=False)
    @classmethod
    def _turn(cls, value: dict[str, Any]) -> dict[str, Any]:
        return _turn_like(value, "the turn")

    @field_validator("history", check_fields=False)
    @classmethod
    def _history(cls, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for i, h in enumerate(value):
            _turn_like(h, f"history item {i}")
        return value


class InstructionRecord(_TurnRecordFields):
    """A turn's assistant output with its compliance label (paper: IF database).

    ``turn`` is the (possibly perturbed) TurnRecord as a dict and ``history`` the earlier
    turns (slim TurnRecord dicts), so the rule scorer can rebuild the TurnContext.
    Positives have every dimension at 5; a synthesised negative breaks exactly one
    (``violation``) and scores 1 there.
    """

    kind: Literal["instruction"] = "instruction"
    context: str  # the dialogue and view the judge reads
    response: str  # the assistant's raw output
    label: int = Field(ge=0, le=1)  # 1 = compliant
    violation: str | None = None  # the broken dimension, None for positives
    dimensions: dict[str, int]
    reason: str
    turn: dict[str, Any]
    history: list[dict[str, Any]] = []

    @model_validator(mode="after")
    def _consistent(self) -> InstructionRecord:
        if set(self.dimensions) != set(DIMENSIONS):
            raise ValueError(f"dimensions must be exactly {list(DIMENSIONS)}, got {sorted(self.dimensions)}")
        bad = {k: v for k, v in self.dimensions.items() if not 1 <= v <= 5}
        if bad:
            raise ValueError(f"dimension scores must be 1..5, got {bad}")
        if self.violation is not None and self.violation not in DIMENSIONS:
            raise ValueError(f"violation must be one of {list(DIMENSIONS)} or null, got {self.violation!r}")
        if (self.label == 1) != (self.violation is None):
            raise ValueError(f"label {self.label} disagrees with violation {self.violation!r}")
        return self


class ConsistencyRecord(_TurnRecordFields):
    """A response with the facts it must agree with and its hallucination label."""

    kind: Literal["consistency"] = "consistency"
    facts: str  # the catalog facts, cart and hand state the response is checked against
    response: str
    label: int = Field(ge=0, le=1)  # 1 = consistent
    hallucination: Literal["none", "item", "content"]
    check: str = ""  # the injected error: unknown_product, price, attribute, location, ...
    reason: str
    turn: dict[str, Any]
    history: list[dict[str, Any]] = []

    @model_validator(mode="after")
    def _consistent(self) -> ConsistencyRecord:
        if (self.label == 1) != (self.hallucination == "none"):
            raise ValueError(f"label {self.label} disagrees with hallucination {self.hallucination!r}")
        return self


class RelevanceRecord(_Record):
    """(shopper need, item, 0/1/2) with a short reason (paper: relevance database)."""

    kind: Literal["relevance"] = "relevance"
    query: str  # what the shopper has said about the need
    item: str  # the product as the judge reads it
    product_id: str
    score: int = Field(ge=0, le=2)
    reason: str
    revealed: dict[str, int] = {}  # disclosed detail kinds -> count (rebuilds the rule context)


class _ListRecord(_Record):
    """A record about a list of items: who the shopper is and what they asked for."""

    profile: str
    query: str


class RankingRecord(_ListRecord):
    """A candidate set with the item the shopper chose (paper: item ranking)."""

    kind: Literal["ranking"] = "ranking"
    candidate_ids: list[str] = Field(min_length=2)
    candidates: list[str]
    labels: list[int]
    positive: int = Field(ge=0)

    @model_validator(mode="after")
    def _consistent(self) -> RankingRecord:
        n = len(self.candidate_ids)
        if len(self.candidates) != n or len(self.labels) != n:
            raise ValueError(
                f"candidate_ids, candidates and labels must have one length, got {n}, "
                f"{len(self.candidates)}, {len(self.labels)}"
            )
        if self.positive >= n:
            raise ValueError(f"positive {self.positive} is outside the {n} candidates")
        if self.labels[self.positive] != 1 or sum(self.labels) != 1 or any(v not in (0, 1) for v in self.labels):
            raise ValueError(f"labels must be one-hot at positive={self.positive}, got {self.labels}")
        return self


class BehaviorRecord(_ListRecord):
    """A recommended list and whether it holds the item the shopper bought (list-level)."""

    kind: Literal["behavior"] = "behavior"
    item_ids: list[str] = Field(min_length=1)
    items: list[str]
    label: int = Field(ge=0, le=1)
    purchased_id: str

    @model_validator(mode="after")
    def _consistent(self) -> BehaviorRecord:
        if len(self.items) != len(self.item_ids):
            raise ValueError(f"items ({len(self.items)}) and item_ids ({len(self.item_ids)}) differ in length")
        if self.label != int(self.purchased_id in self.item_ids):
            raise ValueError(f"label {self.label} disagrees with purchased_id in item_ids")
        return self


Record = InstructionRecord | ConsistencyRecord | RelevanceRecord | RankingRecord | BehaviorRecord
# kind -> record type, in KINDS' order (each record type's ``kind`` default names its dimension)
_BY_KIND = {t.model_fields["kind"].default: t
            for t in (InstructionRecord, ConsistencyRecord, RelevanceRecord, RankingRecord, BehaviorRecord)}
if set(_BY_KIND) != set(KINDS):
    raise ImportError(f"recrm.data.schema: record types for {sorted(_BY_KIND)}, but the dimensions with a "
                      f"model are {list(KINDS)} (recrm.dimensions): declare the record type with the model")
RECORD_TYPES: dict[str, type[BaseModel]] = {k: _BY_KIND[k] for k in KINDS}
