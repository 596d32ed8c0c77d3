"""Set-of-Mark view types shared by the SoM renderer, the actions layer and the env."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from situ_gym.backends.base import Frame

__all__ = ["ROLES", "EntityKind", "VisibleEntity", "RoleView", "Region", "Analysis"]

ROLES = ("user", "assistant")
EntityKind = Literal["product", "fixture", "store", "area"]


@dataclass(frozen=True)
class VisibleEntity:
    handle: str  # this role's label for it in this observation
    entity_id: str
    kind: EntityKind
    name: str
    distance: float  # metres to the nearest visible pixel
    pixels: int  # visible pixel count


@dataclass
class RoleView:
    """What one role sees in one observation.

    ``handles`` maps every handle the role may use now to an entity id: the products
    marked in this view (numbered afresh each observation), the held item (given a
    product handle even when out of view), and the role's fixed fixture/store/area
    handles from the minimap. ``visible`` lists only what is marked in this frame.
    """

    role: str
    image: np.ndarray | None  # uint8 (H, W, 3): RGB with this role's marks; None when not drawn
    handles: dict[str, str]
    visible: list[VisibleEntity] = field(default_factory=list)

    def visible_ids(self) -> list[str]:
        return [v.entity_id for v in self.visible]

    def handle_of(self, entity_id: str) -> str | None:
        for handle, eid in self.handles.items():
            if eid == entity_id:
                return handle
        return None


@dataclass(frozen=True)
class Region:
    """One entity's visible region in a frame (pixels within the depth limit)."""

    entity_id: str
    kind: str
    name: str
    pixels: int
    distance: float  # metres to the nearest visible pixel
    bbox: tuple[int, int, int, int]  # x, y, w, h of the whole visible region
    anchor: tuple[int, int]  # (x, y) label point, a pixel of the region
    contours: tuple[np.ndarray, ...] = ()  # products, and buildings too large for a box; image coordinates


@dataclass(frozen=True)
class Analysis:
    """Role-independent result of ``situ_gym.som.marks.analyse``; feed it to ``draw`` per role."""

    frame: Frame
    regions: tuple[Region, ...]  # products (by entity order) then fixtures/stores/areas

    def region(self, entity_id: str) -> Region | None:
        for r in self.regions:
            if r.entity_id == entity_id:
                return r
        return None
