"""The rule shopper's memory of one episode (what it said, saw, inspected, decided)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["EpisodeState"]


@dataclass
class EpisodeState:
    disclosed: set[int] = field(default_factory=set)  # indices into the goal details
    unproductive: int = 0
    explanations: int = 0  # explanation turns heard (any product)
    explained: dict[str, set[str]] = field(default_factory=dict)  # product -> what its explanations cited
    rejected: set[str] = field(default_factory=set)
    substitute_ok: dict[str, bool] = field(default_factory=dict)  # drawn once per product
    tradeoff_ok: dict[str, bool] = field(default_factory=dict)
    hesitated: set[str] = field(default_factory=set)  # products whose miss was voiced
    considering: str | None = None  # the product under discussion
    responses: set[str] = field(default_factory=set)  # assistant texts heard (normalised)
    seen: set[str] = field(default_factory=set)
    inspected: set[str] = field(default_factory=set)
    proposed: set[str] = field(default_factory=set)
    visited: list[str] = field(default_factory=list)
    explore_moves: int = 0
    at: tuple[str, str | None] | None = None  # where the last move_to_* took the shopper
    scans: int = 0  # look-arounds since arriving there
    remarks_used: set[str] = field(default_factory=set)
    gave_up: bool = False
