"""Fast lookups over a loaded Scene: entity by id, by segmentation colour, by name."""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from functools import cached_property
from typing import TypeVar

from situ_gym.scene.model import Area, Fixture, Product, Scene, Store
from situ_gym.stores import store_spec

__all__ = ["SceneIndex", "color_key", "index_of", "per_index"]

_T = TypeVar("_T")

Entity = Product | Fixture | Store | Area


def color_key(rgb: tuple[int, int, int]) -> int:
    """Pack an RGB colour into one int (r << 16 | g << 8 | b), as used for seg lookups."""
    r, g, b = rgb
    return (int(r) << 16) | (int(g) << 8) | int(b)


class SceneIndex:
    """Read-only indexes of one scene. Build once per env; share freely."""

    def __init__(self, scene: Scene):
        self.scene = scene
        self.products: dict[str, Product] = {p.id: p for p in scene.products}
        self.fixtures: dict[str, Fixture] = {f.id: f for f in scene.fixtures}
        self.stores: dict[str, Store] = {s.id: s for s in scene.stores}
        self.areas: dict[str, Area] = {a.id: a for a in scene.areas}
        self.entities: dict[str, Entity] = {
            **self.products,
            **self.fixtures,
            **self.stores,
            **self.areas,
        }
        self.by_color: dict[int, str] = {color_key(e.color): eid for eid, e in self.entities.items()}

    @property
    def store(self) -> str:
        return self.scene.store

    def kind(self, entity_id: str) -> str:
        """"product", "fixture", "store" or "area"; KeyError for an unknown id."""
        if entity_id in self.products:
            return "product"
        if entity_id in self.fixtures:
            return "fixture"
        if entity_id in self.stores:
            return "store"
        if entity_id in self.areas:
            return "area"
        raise KeyError(f"unknown entity id {entity_id!r} in {self.scene.name}")

    def name(self, entity_id: str) -> str:
        return self.entities[entity_id].name

    @property
    def nav_targets(self) -> list[str]:
        """Navigation targets: fixtures ("fixtures" layout) or stores then areas ("stores" layout)."""
        if store_spec(self.scene.store).layout == "fixtures":
            return list(self.fixtures)
        return list(self.stores) + list(self.areas)

    def location_of(self, product_id: str) -> list[str]:
        """Entity ids holding a product: [fixture] or [store, area]."""
        p = self.products[product_id]
        return [eid for eid in (p.fixture_id, p.store_id, p.area_id) if eid]

    def location_text(self, product_id: str) -> str:
        return " / ".join(self.name(eid) for eid in self.location_of(product_id))

    @cached_property
    def _names_lower(self) -> dict[str, str]:
        return {p.name.lower(): pid for pid, p in self.products.items()}

    def product_by_name(self, name: str) -> str | None:
        """Exact (case-insensitive) display-name match, else None."""
        return self._names_lower.get(name.strip().lower())


# One index per scene object: the tables ``per_index`` derives (lexicons, name tables) refer
# back to their index, so a weakly keyed cache never frees them, and an index built per env
# kept ~2 MB per env alive for the process's life (a server making envs grew without bound).
_INDEXES: dict[int, tuple[Scene, SceneIndex]] = {}


def index_of(scene: Scene) -> SceneIndex:
    """The shared SceneIndex of ``scene`` (a cached, read-only scene from ``load_scene``)."""
    entry = _INDEXES.get(id(scene))
    if entry is None or entry[0] is not scene:
        entry = _INDEXES[id(scene)] = (scene, SceneIndex(scene))
    return entry[1]


def per_index(build: Callable[[SceneIndex], _T]) -> Callable[[SceneIndex], _T]:
    """``build(index)`` computed once per SceneIndex: lexicons and lookup tables derived from
    a scene. Weakly keyed, so the tables go with the scene."""
    cache: weakref.WeakKeyDictionary[SceneIndex, _T] = weakref.WeakKeyDictionary()

    @functools.wraps(build)
    def cached(index: SceneIndex) -> _T:
        value = cache.get(index)
        if value is None:
            value = cache[index] = build(index)
        return value

    return cached
