"""The task budget rule (SituRecBench App. A.3, step 4) and the reference set A_e.

Pure functions over prices and catalog records; the generator and the validator share them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Literal

from situ_gym.scene.model import Product

__all__ = [
    "BUDGET_TIERS",
    "PRICE_INCREMENTS",
    "price_increment",
    "round_up_budget",
    "compute_budget",
    "eligible_products",
    "reference_set",
]

BUDGET_TIERS = ("strict", "moderate", "flexible")
# (upper bound exclusive, increment): $1 under $20, $5 under $100, $10 under $500,
# $50 under $1,000, $100 from $1,000 up.
PRICE_INCREMENTS: tuple[tuple[float, float], ...] = (
    (20.0, 1.0),
    (100.0, 5.0),
    (500.0, 10.0),
    (1000.0, 50.0),
    (math.inf, 100.0),
)


def _cents(value: float) -> int:
    return int(round(value * 100))


def price_increment(price: float) -> float:
    """The rounding increment of the price range ``price`` falls in.

    >>> price_increment(19.99), price_increment(20.0), price_increment(1200)
    (1.0, 5.0, 100.0)
    """
    if not price > 0:
        raise ValueError(f"price must be positive, got {price!r}")
    for bound, step in PRICE_INCREMENTS:
        if price < bound:
            return step
    raise AssertionError("unreachable")  # pragma: no cover - the last bound is inf


def round_up_budget(base: float, target_price: float) -> float:
    """Round ``base`` up to a multiple of its range's increment, strictly above the target.

    The increment is the one of ``base``'s price range. If the rounded value is not strictly
    above ``target_price`` one more increment is added.

    >>> round_up_budget(4.29, 4.29), round_up_budget(4.0, 4.0), round_up_budget(61.5, 40.0)
    (5.0, 5.0, 65.0)
    """
    step_c = _cents(price_increment(base))
    budget_c = -(-_cents(base) // step_c) * step_c
    if budget_c <= _cents(target_price):
        budget_c += step_c
    return budget_c / 100


def compute_budget(target_price: float, eligible_prices: Iterable[float],
                   tier: Literal["strict", "moderate", "flexible"]) -> float:
    """The budget of a task by the paper's four-step rule.

    1. ``strict``: the starting point is the target price.
    2. ``moderate`` / ``flexible``: sort the eligible prices strictly above the target in
       ascending order (n of them) and take the one at 1-based position ``ceil(n/3)``
       (moderate) or ``ceil(2n/3)`` (flexible), i.e. about the one-third / two-thirds
       position; with none dearer the starting point is the target price.
    3. Round the starting point up to a multiple of its range's increment
       (``PRICE_INCREMENTS``: $1 under $20, $5 under $100, $10 under $500, $50 under $1,000,
       $100 above).
    4. If that is not strictly above the target price, add one increment.

    ``eligible_prices``: prices of every catalog product meeting the task's category and
    required tags and carrying no avoided tag (the target may be among them).

    >>> compute_budget(3.49, [2.99, 3.49, 3.99, 4.49, 5.29], "strict")
    4.0
    >>> compute_budget(3.49, [2.99, 3.49, 3.99, 4.49, 5.29], "moderate")
    4.0
    >>> compute_budget(3.49, [2.99, 3.49, 3.99, 4.49, 5.29], "flexible")
    5.0
    """
    if tier not in BUDGET_TIERS:
        raise ValueError(f"tier must be one of {BUDGET_TIERS}, got {tier!r}")
    if not target_price > 0:
        raise ValueError(f"target_price must be positive, got {target_price!r}")
    target_c = _cents(target_price)
    base = target_price
    if tier != "strict":
        dearer = sorted(p for p in eligible_prices if _cents(p) > target_c)
        if dearer:
            n = len(dearer)
            k = 1 if tier == "moderate" else 2
            position = -(-n * k // 3)  # ceil(n * k / 3), 1-based
            base = dearer[position - 1]
    return round_up_budget(base, target_price)


def eligible_products(products: Iterable[Product], category: str, required_tags: Sequence[str],
                      avoided_tags: Sequence[str]) -> list[Product]:
    """Products of ``category`` carrying every required tag and no avoided tag (any price)."""
    required, avoided = set(required_tags), set(avoided_tags)
    out = []
    for p in products:
        tags = set(p.tags)
        if p.category == category and required <= tags and not (avoided & tags):
            out.append(p)
    return out


def reference_set(products: Iterable[Product], category: str, required_tags: Sequence[str],
                  avoided_tags: Sequence[str], budget: float) -> list[str]:
    """A_e: ids (catalog order) of eligible products priced at or under ``budget``."""
    budget_c = _cents(budget)
    return [p.id for p in eligible_products(products, category, required_tags, avoided_tags)
            if _cents(p.price) <= budget_c]
