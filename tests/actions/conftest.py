"""Tiny in-code scenes and hand-made RoleViews for the actions tests."""

from __future__ import annotations

import numpy as np
import pytest

from situ_gym.scene.index import SceneIndex
from situ_gym.scene.model import Area, Fixture, Layout, Pose2, Product, Scene, Store
from situ_gym.som.types import RoleView, VisibleEntity

_COLORS = iter((i, 40 + i, 80 + i) for i in range(10, 200))


def _product(pid: str, name: str, **where) -> Product:
    return Product(
        id=pid,
        name=name,
        brand=name.split()[0],
        category="test",
        group="test",
        price=3.99,
        attributes={},
        tags=[],
        color=next(_COLORS),
        instances=[],
        **where,
    )


def _fixture(fid: str, name: str, sides: tuple[str, ...], products: list[str]) -> Fixture:
    return Fixture(
        id=fid,
        name=name,
        kind="shelf",
        footprint=(0.0, 0.0, 1.0, 1.0),
        height=2.0,
        levels=[0.5, 1.0],
        color=next(_COLORS),
        front_yaw=90.0,
        approach={s: Pose2(x=0.5, y=-0.5 if s == "front" else 1.5) for s in sides},
        product_ids=products,
    )


def _layout() -> Layout:
    return Layout(bounds=(0.0, 0.0, 20.0, 20.0), walls=[], start=Pose2(x=1.0, y=1.0))


def build_market() -> SceneIndex:
    scene = Scene(
        store="supermarket",
        name="tiny market",
        layout=_layout(),
        products=[
            _product("sm_p001", "Harbor Catch Plain Frozen Cod Fillets, 1 lb", fixture_id="sm_f01"),
            _product("sm_p002", "Sunny Farms Whole Milk, 1 gal", fixture_id="sm_f02"),
            _product("sm_p003", "Crunchy O's Honey Cereal, 12 oz", fixture_id="sm_f03"),
            _product("sm_p004", "Crème Brûlée Yogurt Cup", fixture_id="sm_f02"),
            _product("sm_p005", "Sunny Farms Skim Milk, 1 gal", fixture_id="sm_f02"),
        ],
        fixtures=[
            _fixture("sm_f01", "Frozen Seafood Freezer", ("front",), ["sm_p001"]),
            _fixture("sm_f02", "Dairy Cooler", ("front", "back"), ["sm_p002", "sm_p004"]),
            _fixture("sm_f03", "Aisle 7 Cereal Shelf", ("front",), ["sm_p003"]),
        ],
        waypoints=[],
    )
    return SceneIndex(scene)


def build_home() -> SceneIndex:
    scene = Scene(
        store="home_furnishings",
        name="tiny mall",
        layout=_layout(),
        products=[
            _product("hf_p001", "Nordlys Oak Coffee Table", store_id="hf_s01", area_id="hf_a01"),
            _product("hf_p002", "Lumen Brass Table Lamp", store_id="hf_s01", area_id="hf_a01"),
            _product("hf_p003", "Cozy Wool Throw Blanket", store_id="hf_s02", area_id="hf_a02"),
        ],
        stores=[
            Store(
                id="hf_s01",
                name="Nordic Living",
                theme="scandinavian",
                footprint=(0.0, 0.0, 5.0, 5.0),
                wall_height=3.0,
                color=next(_COLORS),
                doorway=(2.0, 0.0, 3.0, 0.1),
                approach={
                    "outside_doorway": Pose2(x=2.5, y=-0.5),
                    "inside_doorway": Pose2(x=2.5, y=0.5),
                },
                area_ids=["hf_a01"],
                product_ids=["hf_p001", "hf_p002"],
            ),
            Store(
                id="hf_s02",
                name="Warm Textiles",
                theme="textiles",
                footprint=(6.0, 0.0, 11.0, 5.0),
                wall_height=3.0,
                color=next(_COLORS),
                doorway=(8.0, 0.0, 9.0, 0.1),
                approach={
                    "outside_doorway": Pose2(x=8.5, y=-0.5),
                    "inside_doorway": Pose2(x=8.5, y=0.5),
                },
                area_ids=["hf_a02"],
                product_ids=["hf_p003"],
            ),
        ],
        areas=[
            Area(
                id="hf_a01",
                store_id="hf_s01",
                name="Living Room Display",
                footprint=(0.5, 1.0, 4.5, 4.5),
                color=next(_COLORS),
                approach=Pose2(x=2.5, y=2.0),
                product_ids=["hf_p001", "hf_p002"],
            ),
            Area(
                id="hf_a02",
                store_id="hf_s02",
                name="Bedroom Corner",
                footprint=(6.5, 1.0, 10.5, 4.5),
                color=next(_COLORS),
                approach=Pose2(x=8.5, y=2.0),
                product_ids=["hf_p003"],
            ),
        ],
        waypoints=[],
    )
    return SceneIndex(scene)


def make_view(
    role: str, index: SceneIndex, handles: dict[str, str], visible: list[str]
) -> RoleView:
    """A RoleView whose ``visible`` lists the given handles (kinds and names from the index)."""
    seen = [
        VisibleEntity(
            handle=h,
            entity_id=handles[h],
            kind=index.kind(handles[h]),
            name=index.name(handles[h]),
            distance=2.0,
            pixels=500,
        )
        for h in visible
    ]
    return RoleView(
        role=role, image=np.zeros((4, 4, 3), np.uint8), handles=dict(handles), visible=seen
    )


# Supermarket: cod and milk are in view, the cereal is held (a handle but not marked);
# the freezer and the cereal shelf are marked, the dairy cooler is a fixed handle only.
def build_market_views(market: SceneIndex) -> tuple[RoleView, RoleView]:
    assistant = make_view(
        "assistant",
        market,
        {
            "a": "sm_p001",
            "b": "sm_p002",
            "c": "sm_p003",
            "1": "sm_f01",
            "2": "sm_f02",
            "3": "sm_f03",
        },
        ["a", "b", "1", "3"],
    )
    user = make_view(
        "user",
        market,
        {
            "1": "sm_p001",
            "2": "sm_p002",
            "3": "sm_p003",
            "A": "sm_f01",
            "B": "sm_f02",
            "C": "sm_f03",
        },
        ["1", "2", "A", "C"],
    )
    return assistant, user


# Home: table and lamp in view; store Nordic Living and its living-room area marked;
# Warm Textiles and its bedroom corner are fixed handles only.
def build_home_views(home: SceneIndex) -> tuple[RoleView, RoleView]:
    assistant = make_view(
        "assistant",
        home,
        {
            "a": "hf_p001",
            "b": "hf_p002",
            "1": "hf_s01",
            "2": "hf_s02",
            "1a": "hf_a01",
            "2a": "hf_a02",
        },
        ["a", "b", "1", "1a"],
    )
    user = make_view(
        "user",
        home,
        {
            "1": "hf_p001",
            "2": "hf_p002",
            "A": "hf_s01",
            "B": "hf_s02",
            "A1": "hf_a01",
            "B1": "hf_a02",
        },
        ["1", "2", "A", "A1"],
    )
    return assistant, user


@pytest.fixture(scope="session")
def market() -> SceneIndex:
    return build_market()


@pytest.fixture(scope="session")
def home() -> SceneIndex:
    return build_home()


@pytest.fixture()
def market_views(market: SceneIndex) -> tuple[RoleView, RoleView]:
    return build_market_views(market)


@pytest.fixture()
def home_views(home: SceneIndex) -> tuple[RoleView, RoleView]:
    return build_home_views(home)
