"""Invented Home Furnishings vocabulary: seven stores, their display areas and product lines.

The tables live in ``vocab/home.json``. Product ``i`` of a category gets model name ``i`` of
the category's slice of ``MODEL_NAMES``, brand ``i % len(brands)``, material ``i % M``, colour
``(i + i // M) % C``, style ``(2 i + 1) % S``, size category ``(i + 1) % 3`` and features
``i % F`` and ``(i + 2) % F``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources

__all__ = ["FurnitureCategory", "HomeArea", "HomeStore", "STORES", "MODEL_NAMES", "SIZE_STEPS"]


@dataclass(frozen=True)
class FurnitureCategory:
    category: str
    group: str
    noun: str
    box: tuple[float, float, float]  # width, depth, height in metres (standard size)
    price: float  # standard-size price
    n: int
    materials: tuple[str, ...]
    colors: tuple[str, ...]
    styles: tuple[str, ...]
    features: tuple[str, ...]
    brands: tuple[str, ...]


@dataclass(frozen=True)
class HomeArea:
    name: str
    categories: tuple[FurnitureCategory, ...]


@dataclass(frozen=True)
class HomeStore:
    name: str
    slug: str
    theme: str
    areas: tuple[HomeArea, ...]


def _category(raw: dict) -> FurnitureCategory:
    lists = ("box", "materials", "colors", "styles", "features", "brands")
    return FurnitureCategory(**{k: tuple(v) if k in lists else v for k, v in raw.items()})


_DATA = json.loads(resources.files("situ_gym.assets").joinpath("vocab", "home.json").read_text("utf-8"))

MODEL_NAMES: tuple[str, ...] = tuple(_DATA["model_names"])
# size category -> (width scale, price factor)
SIZE_STEPS: dict[str, tuple[float, float]] = {size: tuple(step) for size, step in _DATA["size_steps"].items()}
STORES: tuple[HomeStore, ...] = tuple(
    HomeStore(st["name"], st["slug"], st["theme"], tuple(
        HomeArea(area["name"], tuple(_category(c) for c in area["categories"])) for area in st["areas"]
    ))
    for st in _DATA["stores"]
)
