"""Tiny scenes and synthetic frames for the SoM tests, built in code."""

from __future__ import annotations

import numpy as np
import pytest

from situ_gym.backends.base import Frame, Pose
from situ_gym.scene.index import SceneIndex
from situ_gym.scene.model import (
    Area,
    Fixture,
    Instance,
    Layout,
    Pose2,
    Product,
    Scene,
    Store,
    Wall,
    Waypoint,
)

H, W = 120, 160

# Handle formats per role and entity kind (paper App. B.2).
FORMATS = {
    "user": {"product": r"\d+", "fixture": r"[A-Z]+", "store": r"[A-Z]+", "area": r"[A-Z]+\d+"},
    "assistant": {"product": r"[a-z]+", "fixture": r"\d+", "store": r"\d+", "area": r"\d+[a-z]+"},
}


def _product(i: int, color, *, fixture_id=None, store_id=None, area_id=None) -> Product:
    return Product(
        id=f"p{i}",
        name=f"Product {i}",
        brand="Brand",
        category="thing",
        group="things",
        price=1.0 + i,
        attributes={},
        tags=[],
        color=color,
        fixture_id=fixture_id,
        store_id=store_id,
        area_id=area_id,
        instances=[Instance(id=f"p{i}_0", position=(1.0, 1.0, 0.5), size=(0.2, 0.2, 0.3))],
    )


def _fixture(i: int, color, *, back: bool = True) -> Fixture:
    approach = {"front": Pose2(x=float(i), y=1.0, yaw=90.0)}
    if back:
        approach["back"] = Pose2(x=float(i), y=3.0, yaw=-90.0)
    return Fixture(
        id=f"f{i}",
        name=f"Shelf {i}",
        kind="shelf",
        footprint=(2.0 * i, 2.0, 2.0 * i + 1.5, 2.5),
        height=1.8,
        levels=[0.3, 1.0],
        color=color,
        front_yaw=-90.0,
        approach=approach,
        product_ids=[],
    )


def make_supermarket(n_fixtures: int = 5, name: str = "tiny-market") -> Scene:
    products = [_product(i, (200, 10 * i + 10, 0), fixture_id="f0") for i in range(4)]
    fixtures = [_fixture(i, (10, 20 * i + 20, 200), back=i % 2 == 0) for i in range(n_fixtures)]
    return Scene(
        store="supermarket",
        name=name,
        layout=Layout(
            bounds=(0.0, 0.0, 12.0, 8.0),
            walls=[Wall(footprint=(0.0, 7.8, 12.0, 8.0), height=3.0)],
            start=Pose2(x=1.0, y=1.0, yaw=90.0),
        ),
        products=products,
        fixtures=fixtures,
        waypoints=[
            Waypoint(id="w0", x=1.0, y=1.0, neighbors=["w1"]),
            Waypoint(id="w1", x=5.0, y=1.0, neighbors=["w0"]),
        ],
    )


def make_home(name: str = "tiny-home") -> Scene:
    stores, areas, products = [], [], []
    for s in range(3):
        x0 = 4.0 * s
        area_ids = [f"a{s}{j}" for j in range(3)]
        for j, aid in enumerate(area_ids):
            areas.append(
                Area(
                    id=aid,
                    store_id=f"s{s}",
                    name=f"Area {s}{j}",
                    footprint=(x0 + j, 4.0, x0 + j + 1.0, 6.0),
                    color=(30, 100 + 10 * s, 10 * j + 10),
                    approach=Pose2(x=x0 + j + 0.5, y=5.0, yaw=90.0),
                    product_ids=[],
                )
            )
        stores.append(
            Store(
                id=f"s{s}",
                name=f"Store {s}",
                theme="lamps",
                footprint=(x0, 4.0, x0 + 3.5, 7.0),
                wall_height=3.0,
                color=(120, 60, 10 * s + 10),
                doorway=(x0 + 1.0, 3.95, x0 + 2.0, 4.05),
                approach={
                    "outside_doorway": Pose2(x=x0 + 1.5, y=3.5, yaw=90.0),
                    "inside_doorway": Pose2(x=x0 + 1.5, y=4.5, yaw=90.0),
                },
                area_ids=area_ids,
                product_ids=[],
            )
        )
    products = [_product(0, (200, 10, 0), store_id="s0", area_id="a00")]
    return Scene(
        store="home_furnishings",
        name=name,
        layout=Layout(
            bounds=(0.0, 0.0, 12.0, 8.0),
            walls=[Wall(footprint=(0.0, 3.95, 1.0, 4.05), height=3.0, owner="s0")],
            start=Pose2(x=1.0, y=1.0, yaw=90.0),
        ),
        products=products,
        stores=stores,
        areas=areas,
        waypoints=[Waypoint(id="w0", x=1.0, y=1.0, neighbors=[])],
    )


class Canvas:
    """A synthetic frame the test paints entity rectangles into."""

    def __init__(self, index: SceneIndex, h: int = H, w: int = W):
        self.index = index
        self.rgb = np.full((h, w, 3), 90, dtype=np.uint8)
        self.seg = np.full((h, w, 3), 8, dtype=np.uint8)  # floor colour
        self.depth = np.full((h, w), np.inf, dtype=np.float32)

    def paint(
        self, entity_id: str, x0: int, y0: int, x1: int, y1: int, depth: float = 2.0
    ) -> Canvas:
        color = self.index.entities[entity_id].color
        self.seg[y0:y1, x0:x1] = color
        self.depth[y0:y1, x0:x1] = depth
        self.rgb[y0:y1, x0:x1] = (np.array(color) // 2 + 60).astype(np.uint8)
        return self

    def frame(self) -> Frame:
        return Frame(
            rgb=self.rgb.copy(),
            depth=self.depth.copy(),
            seg=self.seg.copy(),
            pose=Pose(1.0, 1.0, 90.0),
        )


@pytest.fixture
def market() -> SceneIndex:
    return SceneIndex(make_supermarket())


@pytest.fixture
def home() -> SceneIndex:
    return SceneIndex(make_home())
