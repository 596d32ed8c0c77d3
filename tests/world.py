"""The toy stores, tasks and views the tests build in code, all from one set of entity builders.

Each world is small and hand-made so that a test controls exactly what is there:

* ``shopper_*``: a fish counter and a lamp store with one task each (user simulator tests);
* ``parser_*``: a market and a two-store mall with both roles' handles (action parsing);
* ``render_*``: walled halls with real geometry (the embedded backend draws them);
* ``marks_*``: stores with many fixtures, stores and areas (Set-of-Mark labels);
* ``reward_*``: an eight-product market and a breakfast task (RecRM scoring);
* ``records_*``: three-product stores behind hand-written trajectories (metrics, reports).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from functools import partial
from typing import Any

import numpy as np

from situ_gym.scene.index import SceneIndex
from situ_gym.scene.model import (
    AcceptancePolicy,
    Area,
    DisclosureItem,
    Fixture,
    Instance,
    Interaction,
    Layout,
    Pose2,
    Product,
    Profile,
    Scene,
    Store,
    Task,
    Wall,
    Waypoint,
)
from situ_gym.som.types import RoleView, VisibleEntity

__all__ = [
    "pose", "product", "fixture", "store", "area", "waypoint", "outer_walls", "scene", "role_view",
    "task",
    "shopper_market", "shopper_home", "shopper_profile", "shopper_market_task", "shopper_home_task",
    "parser_market", "parser_home", "parser_market_views", "parser_home_views",
    "render_market", "render_home", "render_product", "shelf_products",
    "marks_market", "marks_home",
    "REWARD_PRODUCTS", "REWARD_FIXTURES", "reward_market", "reward_task",
    "records_market", "records_home",
]

# Distinct segmentation colours for entities whose colour no test looks at.
_COLORS = ((1 + i % 250, 40 + (i // 250) % 200, 200) for i in itertools.count())

# --------------------------------------------------------------------------- entity builders


def pose(x: float, y: float, yaw: float = 0.0) -> Pose2:
    return Pose2(x=x, y=y, yaw=yaw)


def product(pid: str, name: str | None = None, **fields: Any) -> Product:
    """A product; ``fields`` override the defaults (fixture_id, or store_id and area_id, say where)."""
    name = name or f"Product {pid}"
    defaults = dict(brand=name.split()[0], category="test", group="test", price=1.0, attributes={},
                    tags=[], instances=[])
    return Product(id=pid, name=name, **_colored(defaults, fields))


def fixture(fid: str, name: str, **fields: Any) -> Fixture:
    defaults = dict(kind="shelf", footprint=(0.0, 0.0, 1.0, 1.0), height=2.0, levels=[0.5],
                    front_yaw=90.0, approach={"front": pose(0.0, 0.0)}, product_ids=[])
    return Fixture(id=fid, name=name, **_colored(defaults, fields))


def store(sid: str, name: str, *, outside: Pose2 | None = None, inside: Pose2 | None = None,
          **fields: Any) -> Store:
    """A store; the doorway poses default to half a metre either side of the doorway's middle."""
    doorway = fields.setdefault("doorway", (2.0, 0.0, 3.0, 0.1))
    mid_x, y = (doorway[0] + doorway[2]) / 2, doorway[1]
    approach = {"outside_doorway": outside or pose(mid_x, y - 0.5),
                "inside_doorway": inside or pose(mid_x, y + 0.5)}
    defaults = dict(theme="t", footprint=(0.0, 0.0, 5.0, 5.0), wall_height=3.0, approach=approach,
                    area_ids=[], product_ids=[])
    return Store(id=sid, name=name, **_colored(defaults, fields))


def area(aid: str, store_id: str, name: str, **fields: Any) -> Area:
    defaults = dict(footprint=(0.0, 0.0, 2.0, 2.0), approach=pose(0.0, 0.0), product_ids=[])
    return Area(id=aid, store_id=store_id, name=name, **_colored(defaults, fields))


def _colored(defaults: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    """``defaults`` updated with ``fields``, with a fresh colour unless one is given."""
    return {**defaults, "color": next(_COLORS), **fields}


def waypoint(wid: str, x: float, y: float, *neighbors: str) -> Waypoint:
    return Waypoint(id=wid, x=x, y=y, neighbors=list(neighbors))


def outer_walls(bounds, height: float = 4.0, t: float = 0.2) -> list[Wall]:
    """Four walls of thickness ``t`` just outside ``bounds``."""
    x0, y0, x1, y1 = bounds
    return [
        Wall(footprint=(x0 - t, y0 - t, x1 + t, y0), height=height),
        Wall(footprint=(x0 - t, y1, x1 + t, y1 + t), height=height),
        Wall(footprint=(x0 - t, y0, x0, y1), height=height),
        Wall(footprint=(x1, y0, x1 + t, y1), height=height),
    ]


def scene(kind: str, name: str, products: Iterable[Product], *, bounds=(-10.0, -10.0, 10.0, 10.0),
          walls: Iterable[Wall] = (), start: Pose2 | None = None, **fields: Any) -> Scene:
    """A scene; ``fields`` are its fixtures, or its stores and areas, and its waypoints."""
    layout = Layout(bounds=bounds, walls=list(walls), start=start or pose(0.0, -5.0))
    return Scene(store=kind, name=name, products=list(products), layout=layout,
                 **{"waypoints": [], **fields})


def role_view(role: str, index: SceneIndex, handles: dict[str, str], visible: Sequence[str],
              distances: Sequence[float] | None = None) -> RoleView:
    """A RoleView whose ``visible`` lists the given handles (kinds and names from the index)."""
    seen = [
        VisibleEntity(
            handle=h, entity_id=handles[h], kind=index.kind(handles[h]),
            name=index.name(handles[h]), distance=2.0 if distances is None else distances[k],
            pixels=500,
        )
        for k, h in enumerate(visible)
    ]
    return RoleView(role=role, image=np.zeros((4, 4, 3), np.uint8), handles=dict(handles), visible=seen)


def task(tid: str, kind: str, request: str, disclosure: Iterable[tuple], *,
         acceptance: dict[str, Any], **fields: Any) -> Task:
    """A task; ``disclosure`` holds (kind, text[, value]) tuples, ``acceptance`` overrides a
    policy that wants to inspect, no explanation and no substitute, and explains a rejection."""
    policy = dict(inspect_before_buying=True, explanations_needed=0, accept_substitutes=False,
                  rejection_style="reason")
    return Task(
        id=tid, store=kind, request=request,
        disclosure=[DisclosureItem(kind=d[0], text=d[1], value=d[2] if len(d) > 2 else None)
                    for d in disclosure],
        acceptance=AcceptancePolicy(**{**policy, **acceptance}),
        **{"budget_tier": "strict", "subset": 0, **fields},
    )


# --------------------------------------------------------------------------- shopper world


def _noted(pid: str, name: str, **kw: Any) -> Product:
    """A shopper-world product whose label note is its name."""
    return product(pid, name, attributes={"note": name.lower()}, **kw)


def shopper_market() -> Scene:
    """Four frozen fish fillets (one breaded) in a freezer, a cereal on a shelf, an empty cooler."""
    fish = dict(category="frozen fish", fixture_id="sm_f01")
    products = [
        _noted("sm_p01", "Harbor Catch Plain Cod Fillets", price=9.49,
               tags=["prep:plain", "diet:high_protein"], **fish),
        _noted("sm_p02", "Harbor Catch Breaded Tilapia", price=7.99,
               tags=["prep:breaded", "diet:high_protein"], **fish),
        _noted("sm_p03", "Ocean Prime Wild Salmon Fillets", price=14.99,
               tags=["prep:plain", "diet:high_protein"], **fish),
        _noted("sm_p04", "Northern Plain Haddock Fillets", price=8.79,
               tags=["prep:plain", "diet:high_protein"], **fish),
        _noted("sm_p05", "Sunny Oat Crunch Cereal", category="cereal", price=4.5,
               tags=["diet:vegan"], fixture_id="sm_f02"),
    ]
    front, back = pose(0.5, -1.0, 90.0), pose(0.5, 2.0, -90.0)
    side = dict(front_yaw=-90.0)
    fixtures = [
        fixture("sm_f01", "Upright Freezer 2", kind="upright_freezer", approach={"front": front},
                product_ids=["sm_p01", "sm_p02", "sm_p03", "sm_p04"], **side),
        fixture("sm_f02", "Breakfast Shelf 1", approach={"front": front, "back": back},
                product_ids=["sm_p05"], **side),
        fixture("sm_f03", "Open Cooler 3", kind="open_cooler", approach={"front": front}, **side),
    ]
    return scene("supermarket", "tiny market", products, fixtures=fixtures)


def shopper_home() -> Scene:
    """Three floor lamps (one modern brass, two rattan) in a lighting store; an empty plant store."""
    lamps = ["hf_p01", "hf_p02", "hf_p03"]
    where = dict(category="floor lamp", store_id="hf_s01", area_id="hf_a01")
    products = [
        _noted("hf_p01", "Brass Arc Floor Lamp", price=129.0,
               tags=["style:modern", "material:brass"], **where),
        _noted("hf_p02", "Rattan Globe Floor Lamp", price=89.0,
               tags=["style:boho", "material:rattan"], **where),
        _noted("hf_p03", "Wicker Rattan Floor Lamp", price=49.0,
               tags=["style:boho", "material:rattan"], **where),
    ]
    stores = [
        store("hf_s01", "Light Logic", theme="indoor lighting", area_ids=["hf_a01"], product_ids=lamps),
        store("hf_s02", "The Plant", theme="plants and planters"),
    ]
    areas = [area("hf_a01", "hf_s01", "Reading Nook", footprint=(0.0, 0.0, 5.0, 5.0),
                  approach=pose(1.0, 1.0), product_ids=lamps)]
    return scene("home_furnishings", "tiny home", products, stores=stores, areas=areas)


def shopper_profile(**interaction: Any) -> Profile:
    """Dana, a cautious shopper with middling traits; ``interaction`` overrides her settings."""
    settings = dict(
        behavior_style="cautious", patience=3, price_sensitivity="medium",
        explanation_seeking="medium", substitute_willingness="medium",
        navigation_following=1.0, talkativeness="medium",
    )
    settings.update(interaction)
    traits = ("openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism")
    return Profile(
        id="u01", name="Dana", persona="busy nurse", gender="female",
        demographics={"age_group": "30-39"}, big_five=dict.fromkeys(traits, 0.5),
        interaction=Interaction(**settings),
    )


def shopper_market_task(**acceptance: Any) -> Task:
    """Plain white fish under $10, nothing breaded: the cod (or the haddock)."""
    return task(
        "sm_t01", "supermarket",
        "I want a plain white fish for a quick dinner, under $10, nothing breaded.",
        [("category", "some frozen fish", "frozen fish"), ("use", "a quick weeknight dinner"),
         ("budget", "under $10", 10.0), ("avoid", "anything breaded", "prep:breaded"),
         ("need", "plain fillets", "prep:plain")],
        acceptance={"rejection_style": "clarify", **acceptance}, profile_id="u01", theme="dinner",
        category="frozen fish", required_tags=["prep:plain"], avoided_tags=["prep:breaded"],
        target_product_id="sm_p01", budget=10.0, reference_set=["sm_p01", "sm_p04"],
    )


def shopper_home_task(**acceptance: Any) -> Task:
    """A rattan floor lamp under $100, not modern: the globe lamp."""
    return task(
        "hf_t01", "home_furnishings",
        "A warm floor lamp for my reading corner, under $100, natural materials.",
        [("use", "lighting my reading corner"), ("budget", "under $100", 100.0),
         ("need", "natural rattan", "material:rattan")],
        acceptance=acceptance, profile_id="u01", theme="reading light",
        category="floor lamp", required_tags=["material:rattan"], avoided_tags=["style:modern"],
        target_product_id="hf_p02", budget=100.0, reference_set=["hf_p02"],
    )


# --------------------------------------------------------------------------- parser world


def parser_market() -> SceneIndex:
    """Cod, two milks, a cereal and a yogurt whose name has accents, on three fixtures."""
    item = partial(product, price=3.99)
    return SceneIndex(scene(
        "supermarket", "tiny market",
        [
            item("sm_p001", "Harbor Catch Plain Frozen Cod Fillets, 1 lb", fixture_id="sm_f01"),
            item("sm_p002", "Sunny Farms Whole Milk, 1 gal", fixture_id="sm_f02"),
            item("sm_p003", "Crunchy O's Honey Cereal, 12 oz", fixture_id="sm_f03"),
            item("sm_p004", "Crème Brûlée Yogurt Cup", fixture_id="sm_f02"),
            item("sm_p005", "Sunny Farms Skim Milk, 1 gal", fixture_id="sm_f02"),
        ],
        fixtures=[
            _parser_fixture("sm_f01", "Frozen Seafood Freezer", ("front",), ["sm_p001"]),
            _parser_fixture("sm_f02", "Dairy Cooler", ("front", "back"), ["sm_p002", "sm_p004"]),
            _parser_fixture("sm_f03", "Aisle 7 Cereal Shelf", ("front",), ["sm_p003"]),
        ],
        bounds=(0.0, 0.0, 20.0, 20.0), start=pose(1.0, 1.0),
    ))


def _parser_fixture(fid: str, name: str, sides: tuple[str, ...], products: list[str]) -> Fixture:
    approach = {s: pose(0.5, -0.5 if s == "front" else 1.5) for s in sides}
    return fixture(fid, name, levels=[0.5, 1.0], approach=approach, product_ids=products)


def parser_home() -> SceneIndex:
    """A table and a lamp in Nordic Living's living room; a throw in Warm Textiles' bedroom."""
    item = partial(product, price=3.99)
    return SceneIndex(scene(
        "home_furnishings", "tiny mall",
        [
            item("hf_p001", "Nordlys Oak Coffee Table", store_id="hf_s01", area_id="hf_a01"),
            item("hf_p002", "Lumen Brass Table Lamp", store_id="hf_s01", area_id="hf_a01"),
            item("hf_p003", "Cozy Wool Throw Blanket", store_id="hf_s02", area_id="hf_a02"),
        ],
        stores=[
            store("hf_s01", "Nordic Living", theme="scandinavian", area_ids=["hf_a01"],
                  product_ids=["hf_p001", "hf_p002"]),
            store("hf_s02", "Warm Textiles", theme="textiles", footprint=(6.0, 0.0, 11.0, 5.0),
                  doorway=(8.0, 0.0, 9.0, 0.1), area_ids=["hf_a02"], product_ids=["hf_p003"]),
        ],
        areas=[
            area("hf_a01", "hf_s01", "Living Room Display", footprint=(0.5, 1.0, 4.5, 4.5),
                 approach=pose(2.5, 2.0), product_ids=["hf_p001", "hf_p002"]),
            area("hf_a02", "hf_s02", "Bedroom Corner", footprint=(6.5, 1.0, 10.5, 4.5),
                 approach=pose(8.5, 2.0), product_ids=["hf_p003"]),
        ],
        bounds=(0.0, 0.0, 20.0, 20.0), start=pose(1.0, 1.0),
    ))


def parser_market_views(market: SceneIndex) -> tuple[RoleView, RoleView]:
    """Cod and milk in view, the cereal held (a handle but not marked); the freezer and the
    cereal shelf marked, the dairy cooler a fixed handle only. Returns (assistant, user)."""
    ids = ["sm_p001", "sm_p002", "sm_p003", "sm_f01", "sm_f02", "sm_f03"]
    assistant = dict(zip(["a", "b", "c", "1", "2", "3"], ids, strict=True))
    user = dict(zip(["1", "2", "3", "A", "B", "C"], ids, strict=True))
    return (role_view("assistant", market, assistant, ["a", "b", "1", "3"]),
            role_view("user", market, user, ["1", "2", "A", "C"]))


def parser_home_views(home: SceneIndex) -> tuple[RoleView, RoleView]:
    """Table and lamp in view; Nordic Living and its living room marked; Warm Textiles and its
    bedroom corner fixed handles only. Returns (assistant, user)."""
    ids = ["hf_p001", "hf_p002", "hf_s01", "hf_s02", "hf_a01", "hf_a02"]
    assistant = dict(zip(["a", "b", "1", "2", "1a", "2a"], ids, strict=True))
    user = dict(zip(["1", "2", "A", "B", "A1", "B1"], ids, strict=True))
    return (role_view("assistant", home, assistant, ["a", "b", "1", "1a"]),
            role_view("user", home, user, ["1", "2", "A", "A1"]))


# --------------------------------------------------------------------------- render world


def render_product(pid, color, category="cereal", instances=(), **where) -> Product:
    """A product the renderer draws: ``color`` is its segmentation colour."""
    return product(pid, brand="Brand", category=category, group="pantry", price=3.5, color=color,
                   instances=instances, **where)


def shelf_products(fid, footprint, levels, front_yaw, n_per_level=6, color0=(40, 80, 200), prefix="p"):
    """Products in a row on each level of a single-sided shelf facing +y or -y."""
    x0, y0, x1, y1 = footprint
    depth_c = (y0 + y1) / 2 + (0.05 if front_yaw == 90 else -0.05)
    span = (x1 - x0 - 0.2) / n_per_level
    products = []
    for k, (lvl, i) in enumerate(itertools.product(levels, range(n_per_level))):
        cx = x0 + 0.1 + span * (i + 0.5)
        color = ((color0[0] + 16 * k) % 224 + 16, color0[1], color0[2])
        box = Instance(id=f"{prefix}{k}-0", position=(cx, depth_c, lvl),
                       size=(span * 0.8, 0.25, 0.25), facing=front_yaw)
        products.append(render_product(f"{prefix}{k}", color, fixture_id=fid, instances=[box]))
    return products


def render_market(extra_products=(), extra_fixtures=()) -> Scene:
    """A 12 x 10 m hall: one shelf along y=6..6.6 facing south, a chest freezer, an upright freezer."""
    bounds = (0.0, 0.0, 12.0, 10.0)
    shelf = fixture("f_shelf", "Shelf 1", footprint=(2.0, 6.0, 8.0, 6.6),
                    levels=[0.15, 0.6, 1.05, 1.5], color=(200, 40, 40), front_yaw=270.0,
                    approach={"front": pose(5.0, 5.0, 90.0)})
    chest = fixture("f_chest", "Chest Freezer 1", kind="chest_freezer",
                    footprint=(2.0, 1.5, 4.4, 2.5), height=0.9, levels=[0.3], color=(40, 200, 40),
                    front_yaw=90.0, approach={"front": pose(3.2, 3.3, 270.0)})
    upright = fixture("f_upright", "Upright Freezer 1", kind="upright_freezer",
                      footprint=(11.2, 2.0, 12.0, 4.0), height=2.1, levels=[0.2, 0.7, 1.2, 1.7],
                      color=(40, 40, 200), front_yaw=180.0, approach={"front": pose(10.2, 3.0, 0.0)})
    prods = shelf_products("f_shelf", shelf.footprint, shelf.levels, 270.0)
    prods.append(render_product("ice", (220, 220, 64), fixture_id="f_chest", instances=[
        Instance(id="ice-0", position=(3.2, 2.0, 0.3), size=(0.4, 0.3, 0.2), facing=90.0)]))
    prods.append(render_product("peas", (64, 220, 220), fixture_id="f_upright", instances=[
        Instance(id="peas-0", position=(11.6, 3.0, 0.7), size=(0.3, 0.3, 0.25), facing=180.0)]))
    prods.extend(extra_products)
    fixtures = [
        f.model_copy(update={"product_ids": [p.id for p in prods if p.fixture_id == f.id]})
        for f in [shelf, chest, upright, *extra_fixtures]
    ]
    return scene("supermarket", "tiny-mart", prods, fixtures=fixtures, bounds=bounds,
                 walls=outer_walls(bounds), start=pose(1.0, 4.0, 0.0),
                 waypoints=[waypoint("w0", 1.0, 4.0, "w1"), waypoint("w1", 9.0, 4.0, "w0")])


def render_home() -> Scene:
    """A 16 x 12 m hall with one 6 x 5 m store (doorway in its south wall) and one area."""
    bounds = (0.0, 0.0, 16.0, 12.0)
    sx0, sy0, sx1, sy1 = 5.0, 6.0, 11.0, 11.0
    t = 0.15
    store_walls = [
        (sx0, sy0, 7.2, sy0 + t), (8.8, sy0, sx1, sy0 + t), (sx0, sy1 - t, sx1, sy1),
        (sx0, sy0 + t, sx0 + t, sy1 - t), (sx1 - t, sy0 + t, sx1, sy1 - t),
    ]
    walls = outer_walls(bounds) + [Wall(footprint=w, height=3.0, owner="s1") for w in store_walls]
    nordic = store("s1", "Nordic Nest", theme="scandinavian", footprint=(sx0, sy0, sx1, sy1),
                   color=(180, 120, 40), doorway=(7.2, sy0, 8.8, sy0 + t),
                   outside=pose(8.0, 5.2, 90.0), inside=pose(8.0, 6.9, 90.0),
                   area_ids=["a1"], product_ids=["sofa", "lamp"])
    living = area("a1", "s1", "Living Room", footprint=(6.0, 8.0, 10.0, 10.6), color=(60, 160, 90),
                  approach=pose(8.0, 8.3, 90.0), product_ids=["sofa", "lamp"])
    where = dict(store_id="s1", area_id="a1")
    prods = [
        render_product("sofa", (200, 60, 120), "sofa", [Instance(
            id="sofa-0", position=(8.0, 9.9, 0.0), size=(2.0, 0.9, 0.85), facing=270.0)], **where),
        render_product("lamp", (90, 60, 220), "floor lamp", [Instance(
            id="lamp-0", position=(9.6, 9.9, 0.0), size=(0.4, 0.4, 1.6), facing=270.0)], **where),
    ]
    return scene("home_furnishings", "tiny-home", prods, stores=[nordic], areas=[living],
                 bounds=bounds, walls=walls, start=pose(2.0, 2.0, 45.0),
                 waypoints=[waypoint("w0", 2.0, 2.0, "w1"), waypoint("w1", 8.0, 5.2, "w0")])


# --------------------------------------------------------------------------- marks world


def _marks_product(i: int, color, **where) -> Product:
    box = Instance(id=f"p{i}_0", position=(1.0, 1.0, 0.5), size=(0.2, 0.2, 0.3))
    return product(f"p{i}", f"Product {i}", brand="Brand", category="thing", group="things", price=1.0 + i,
                   color=color, instances=[box], **where)


def marks_market(n_fixtures: int = 5, name: str = "tiny-market") -> Scene:
    """Four products on shelf f0 of ``n_fixtures`` shelves; even-numbered shelves have a back."""
    fixtures = []
    for i in range(n_fixtures):
        approach = {"front": pose(float(i), 1.0, 90.0)}
        if i % 2 == 0:
            approach["back"] = pose(float(i), 3.0, -90.0)
        fixtures.append(fixture(
            f"f{i}", f"Shelf {i}", footprint=(2.0 * i, 2.0, 2.0 * i + 1.5, 2.5), height=1.8,
            levels=[0.3, 1.0], color=(10, 20 * i + 20, 200), front_yaw=-90.0, approach=approach))
    return scene(
        "supermarket", name, [_marks_product(i, (200, 10 * i + 10, 0), fixture_id="f0") for i in range(4)],
        fixtures=fixtures, bounds=(0.0, 0.0, 12.0, 8.0),
        walls=[Wall(footprint=(0.0, 7.8, 12.0, 8.0), height=3.0)], start=pose(1.0, 1.0, 90.0),
        waypoints=[waypoint("w0", 1.0, 1.0, "w1"), waypoint("w1", 5.0, 1.0, "w0")],
    )


def marks_home(name: str = "tiny-home") -> Scene:
    """Three stores of three areas each; one product, in store s0's area a00."""
    stores, areas = [], []
    for s in range(3):
        x0 = 4.0 * s
        area_ids = [f"a{s}{j}" for j in range(3)]
        areas += [
            area(aid, f"s{s}", f"Area {s}{j}", footprint=(x0 + j, 4.0, x0 + j + 1.0, 6.0),
                 color=(30, 100 + 10 * s, 10 * j + 10), approach=pose(x0 + j + 0.5, 5.0, 90.0))
            for j, aid in enumerate(area_ids)
        ]
        stores.append(store(
            f"s{s}", f"Store {s}", theme="lamps", footprint=(x0, 4.0, x0 + 3.5, 7.0),
            color=(120, 60, 10 * s + 10), doorway=(x0 + 1.0, 3.95, x0 + 2.0, 4.05),
            outside=pose(x0 + 1.5, 3.5, 90.0), inside=pose(x0 + 1.5, 4.5, 90.0), area_ids=area_ids))
    return scene(
        "home_furnishings", name, [_marks_product(0, (200, 10, 0), store_id="s0", area_id="a00")],
        stores=stores, areas=areas, bounds=(0.0, 0.0, 12.0, 8.0),
        walls=[Wall(footprint=(0.0, 3.95, 1.0, 4.05), height=3.0, owner="s0")],
        start=pose(1.0, 1.0, 90.0), waypoints=[waypoint("w0", 1.0, 1.0)],
    )


# --------------------------------------------------------------------------- reward world

# id, name, brand, category, group, price, tags, fixture
REWARD_PRODUCTS = [
    ("sm_p001", "Harbor Catch Plain Frozen Cod Fillets, 1 lb", "Harbor Catch", "frozen fish",
     "frozen foods", 9.99, ["diet:high-protein"], "sm_f01"),
    ("sm_p002", "Harbor Catch Breaded Fish Sticks, 24 ct", "Harbor Catch", "frozen fish",
     "frozen foods", 7.49, ["diet:kid-friendly"], "sm_f01"),
    ("sm_p003", "Polar Bay Wild Salmon Portions, 12 oz", "Polar Bay", "frozen fish",
     "frozen foods", 13.99, ["diet:high-protein", "diet:gluten-free"], "sm_f01"),
    ("sm_p004", "Sunny Fields Gluten-Free Oat Cereal, 12 oz", "Sunny Fields", "breakfast cereal",
     "pantry", 4.99, ["diet:gluten-free", "diet:vegan"], "sm_f02"),
    ("sm_p005", "Sunny Fields Honey Nut Crunch Cereal, 14 oz", "Sunny Fields", "breakfast cereal",
     "pantry", 3.99, ["allergen:contains-nuts", "flavor:honey"], "sm_f02"),
    ("sm_p006", "Morning Mill Almond Granola, 16 oz", "Morning Mill", "granola",
     "pantry", 5.49, ["allergen:contains-nuts", "diet:vegan"], "sm_f02"),
    ("sm_p007", "Green Valley Organic Bananas, 2 lb", "Green Valley", "fresh fruit",
     "produce", 1.99, ["diet:organic"], "sm_f03"),
    ("sm_p008", "Sunny Fields Gluten-Free Corn Flakes, 10 oz", "Sunny Fields", "breakfast cereal",
     "pantry", 6.49, ["diet:gluten-free"], "sm_f02"),
]
REWARD_FIXTURES = [
    ("sm_f01", "Upright Freezer 2", "upright_freezer"),
    ("sm_f02", "Cereal Shelf 1", "shelf"),
    ("sm_f03", "Produce Stand 1", "produce_stand"),
]


def reward_market() -> SceneIndex:
    """Frozen fish, breakfast cereals (two gluten-free, one with nuts), granola and bananas."""
    products = [
        product(pid, name, brand=brand, category=cat, group=group, price=price,
                attributes={"size": name.rsplit(", ", 1)[-1]}, tags=tags, color=(10 + i, 20, 30),
                fixture_id=fix)
        for i, (pid, name, brand, cat, group, price, tags, fix) in enumerate(REWARD_PRODUCTS)
    ]
    fixtures = [
        fixture(fid, name, kind=kind, footprint=(i * 3.0, 0.0, i * 3.0 + 2.0, 1.0),
                levels=[0.5, 1.0], color=(100 + i, 50, 50),
                approach={"front": pose(i * 3.0 + 1.0, 2.0, 270.0)},
                product_ids=[p[0] for p in REWARD_PRODUCTS if p[7] == fid])
        for i, (fid, name, kind) in enumerate(REWARD_FIXTURES)
    ]
    return SceneIndex(scene("supermarket", "toy market", products, fixtures=fixtures,
                            bounds=(0.0, 0.0, 12.0, 8.0), start=pose(1.0, 6.0),
                            waypoints=[waypoint("w0", 1.0, 6.0)]))


def reward_task(accept_substitutes: bool = True, **overrides: Any) -> Task:
    """A gluten-free, nut-free breakfast cereal under $6: the oat cereal (or the corn flakes)."""
    fields: dict[str, Any] = dict(
        profile_id="pr_01", theme="family breakfast", category="breakfast cereal",
        required_tags=["diet:gluten-free"], avoided_tags=["allergen:contains-nuts"],
        target_product_id="sm_p004", budget=6.0, reference_set=["sm_p004", "sm_p008"],
    )
    fields.update(overrides)
    return task(
        fields.pop("id", "sm_t001"), fields.pop("store", "supermarket"),
        fields.pop("request", "A gluten-free breakfast cereal for the kids, no nuts, under $6."),
        [("category", "I need some breakfast cereal", "breakfast cereal"),
         ("budget", "under six dollars please", 6.0),
         ("avoid", "no nuts, my son is allergic", "allergen:contains-nuts"),
         ("need", "it has to be gluten-free", "diet:gluten-free")],
        acceptance=dict(inspect_before_buying=False, accept_substitutes=accept_substitutes),
        **fields,
    )


# --------------------------------------------------------------------------- records world


def _records_product(pid, name, price, **where) -> Product:
    return product(pid, name, brand="B", category="lamp", group="lighting", price=price,
                   tags=["style:modern"], color=(10, ord(pid[-1]), 20), **where)


def records_home() -> Scene:
    """Two stores; store st1 has areas ar1, ar2; products p1 in ar1, p2 in ar2, p3 in st2."""
    at = pose(0.0, 0.0)
    stores = [
        store(sid, f"Store {sid}", color=(200, i, 0), doorway=(0, 0, 1, 0.1), outside=at, inside=at,
              area_ids=areas)
        for i, (sid, areas) in enumerate([("st1", ["ar1", "ar2"]), ("st2", [])])
    ]
    areas = [area(aid, "st1", f"Area {aid}", color=(150, i, 0)) for i, aid in enumerate(["ar1", "ar2"])]
    products = [
        _records_product("p1", "Oak Lamp", 49.0, store_id="st1", area_id="ar1"),
        _records_product("p2", "Brass Lamp", 89.5, store_id="st1", area_id="ar2"),
        _records_product("p3", "Paper Lamp", 15.0, store_id="st2"),
    ]
    return scene("home_furnishings", "tiny home", products, stores=stores, areas=areas,
                 bounds=(0, 0, 20, 20), start=at, waypoints=[waypoint("w1", 1, 1)])


def records_market() -> Scene:
    """Products a, b, c on shelves fx1, fx2, fx3."""
    fixtures = [fixture(fid, f"Shelf {fid}", color=(100, i, 0), front_yaw=0.0)
                for i, fid in enumerate(["fx1", "fx2", "fx3"])]
    products = [_records_product("a", "Cod Fillets", 9.99, fixture_id="fx1"),
                _records_product("b", "Salmon", 12.5, fixture_id="fx2"),
                _records_product("c", "Tuna", 4.0, fixture_id="fx3")]
    return scene("supermarket", "tiny market", products, fixtures=fixtures, bounds=(0, 0, 20, 20),
                 start=pose(0.0, 0.0), waypoints=[waypoint("w1", 1, 1)])
