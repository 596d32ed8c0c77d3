"""Invented Supermarket catalog vocabulary: categories, brands and variants (no real retailer data).

Each category expands into ``n`` products: variant ``i`` is sold by brand ``i % len(brands)``
in size ``i % len(sizes)``; the display name is ``"<brand> <variant> <noun>, <size>"``.
Tags are ``"key:value"`` labels; a brand's tags apply to all of its products. The tables live in
``vocab/supermarket.json``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources

__all__ = ["GroceryCategory", "CATEGORIES", "STORAGE_FIXTURES"]


@dataclass(frozen=True)
class GroceryCategory:
    category: str  # specific type, e.g. "breakfast cereal"
    group: str  # broad family
    storage: str  # "ambient", "frozen", "chilled", "produce"
    fixture: str  # fixture kind holding it
    noun: str  # appended to the variant in the display name ("" for none)
    box: tuple[float, float, float]  # width (along the board), depth, height in metres
    price: float  # typical shelf price of the first size
    packaging: str
    sizes: tuple[tuple[str, float], ...]  # (label, price factor)
    brands: tuple[tuple[str, float, str], ...]  # (name, price factor, comma-separated tags)
    variants: tuple[tuple[str, str], ...]  # (descriptor, comma-separated tags)
    n: int
    food: bool = True
    kcal: tuple[int, int] = (80, 250)  # per serving, for the nutrition attribute


def _category(raw: dict) -> GroceryCategory:
    """JSON lists back to the dataclass's tuples (rows of sizes, brands and variants too)."""
    fields = {k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()}
    for rows in ("sizes", "brands", "variants"):
        fields[rows] = tuple(tuple(row) for row in fields[rows])
    return GroceryCategory(**fields)


_DATA = json.loads(resources.files("situ_gym.assets").joinpath("vocab", "supermarket.json").read_text("utf-8"))

# Storage requirement -> fixture kinds that may hold it (paper App. A.3).
STORAGE_FIXTURES: dict[str, tuple[str, ...]] = {k: tuple(v) for k, v in _DATA["storage_fixtures"].items()}
CATEGORIES: tuple[GroceryCategory, ...] = tuple(_category(c) for c in _DATA["categories"])
