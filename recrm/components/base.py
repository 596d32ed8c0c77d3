"""The reward-component interface: ``score(ctx) -> ComponentScore`` with None = not applicable."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from recrm.context import TurnContext

__all__ = ["ComponentScore", "RewardComponent", "RankingComponent"]


@dataclass(frozen=True)
class ComponentScore:
    """One component's verdict on one turn.

    ``value`` is in [0, 1], or None when the component does not apply to the turn (for
    example relevance on a turn that judges no item). ``details`` says why: the checks
    that failed, the claims found wrong, the numbers behind the value. It holds only
    JSON-serialisable values so it can travel in ``info`` and in trajectory files.
    """

    value: float | None
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.value is not None and not 0.0 <= self.value <= 1.0:
            raise ValueError(f"component value must be in [0, 1] or None, got {self.value!r}")


@runtime_checkable
class RewardComponent(Protocol):
    """A scorer of one reward dimension. Rule-based or model-based; stateless per turn."""

    name: str

    def score(self, ctx: TurnContext) -> ComponentScore: ...


class RankingComponent:
    """A component that judges the turn's ranking cut at its top ``k``: ``None`` without one."""

    name = "ranking-based"

    def __init__(self, k: int = 10):
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k!r}")
        self.k = k

    def score(self, ctx: TurnContext) -> ComponentScore:
        if not ctx.ranking:
            return ComponentScore(None, {"reason": "no ranking"})
        return self.score_ranking(ctx, list(ctx.ranking[: self.k]))

    def score_ranking(self, ctx: TurnContext, top: list[str]) -> ComponentScore:
        raise NotImplementedError
