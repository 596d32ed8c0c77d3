"""Small scenes built in code from the model classes, so tests control the geometry."""

from __future__ import annotations

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

__all__ = ["outer_walls", "tiny_supermarket", "tiny_home", "shelf_products"]


def outer_walls(bounds, height=4.0, t=0.2):
    x0, y0, x1, y1 = bounds
    return [
        Wall(footprint=(x0 - t, y0 - t, x1 + t, y0), height=height),
        Wall(footprint=(x0 - t, y1, x1 + t, y1 + t), height=height),
        Wall(footprint=(x0 - t, y0, x0, y1), height=height),
        Wall(footprint=(x1, y0, x1 + t, y1), height=height),
    ]


def _product(pid, color, fixture=None, instances=(), category="cereal", store=None, area=None):
    return Product(
        id=pid,
        name=f"Product {pid}",
        brand="Brand",
        category=category,
        group="pantry",
        price=3.5,
        attributes={},
        tags=[],
        color=color,
        fixture_id=fixture,
        store_id=store,
        area_id=area,
        instances=list(instances),
    )


def shelf_products(fid, footprint, levels, front_yaw, n_per_level=6, color0=(40, 80, 200), prefix="p"):
    """Products in a row on each level of a single-sided shelf facing +y or -y."""
    x0, y0, x1, y1 = footprint
    products = []
    k = 0
    depth_c = (y0 + y1) / 2 + (0.05 if front_yaw == 90 else -0.05)
    for lvl in levels:
        span = (x1 - x0 - 0.2) / n_per_level
        for i in range(n_per_level):
            cx = x0 + 0.1 + span * (i + 0.5)
            color = ((color0[0] + 16 * k) % 224 + 16, color0[1], color0[2])
            products.append(
                _product(
                    f"{prefix}{k}",
                    color,
                    fixture=fid,
                    instances=[
                        Instance(id=f"{prefix}{k}-0", position=(cx, depth_c, lvl), size=(span * 0.8, 0.25, 0.25), facing=front_yaw)
                    ],
                )
            )
            k += 1
    return products


def tiny_supermarket(extra_products=(), extra_fixtures=()):
    """A 12 x 10 m hall: one shelf along y=6..6.6 facing south, a chest freezer, an upright freezer."""
    bounds = (0.0, 0.0, 12.0, 10.0)
    shelf = Fixture(
        id="f_shelf",
        name="Shelf 1",
        kind="shelf",
        footprint=(2.0, 6.0, 8.0, 6.6),
        height=2.0,
        levels=[0.15, 0.6, 1.05, 1.5],
        color=(200, 40, 40),
        front_yaw=270.0,
        approach={"front": Pose2(x=5.0, y=5.0, yaw=90.0)},
        product_ids=[],
    )
    chest = Fixture(
        id="f_chest",
        name="Chest Freezer 1",
        kind="chest_freezer",
        footprint=(2.0, 1.5, 4.4, 2.5),
        height=0.9,
        levels=[0.3],
        color=(40, 200, 40),
        front_yaw=90.0,
        approach={"front": Pose2(x=3.2, y=3.3, yaw=270.0)},
        product_ids=[],
    )
    upright = Fixture(
        id="f_upright",
        name="Upright Freezer 1",
        kind="upright_freezer",
        footprint=(11.2, 2.0, 12.0, 4.0),
        height=2.1,
        levels=[0.2, 0.7, 1.2, 1.7],
        color=(40, 40, 200),
        front_yaw=180.0,
        approach={"front": Pose2(x=10.2, y=3.0, yaw=0.0)},
        product_ids=[],
    )
    prods = shelf_products("f_shelf", shelf.footprint, shelf.levels, 270.0)
    prods.append(
        _product("ice", (220, 220, 64), fixture="f_chest",
                 instances=[Instance(id="ice-0", position=(3.2, 2.0, 0.3), size=(0.4, 0.3, 0.2), facing=90.0)])
    )
    prods.append(
        _product("peas", (64, 220, 220), fixture="f_upright",
                 instances=[Instance(id="peas-0", position=(11.6, 3.0, 0.7), size=(0.3, 0.3, 0.25), facing=180.0)])
    )
    prods.extend(extra_products)
    fixtures = [shelf, chest, upright, *extra_fixtures]
    fixtures = [
        f.model_copy(update={"product_ids": [p.id for p in prods if p.fixture_id == f.id]}) for f in fixtures
    ]
    layout = Layout(bounds=bounds, walls=outer_walls(bounds), start=Pose2(x=1.0, y=4.0, yaw=0.0))
    wps = [
        Waypoint(id="w0", x=1.0, y=4.0, neighbors=["w1"]),
        Waypoint(id="w1", x=9.0, y=4.0, neighbors=["w0"]),
    ]
    return Scene(store="supermarket", name="tiny-mart", layout=layout, products=prods, fixtures=fixtures, waypoints=wps)


def tiny_home():
    """A 16 x 12 m hall with one 6 x 5 m store (doorway in its south wall) and one area."""
    bounds = (0.0, 0.0, 16.0, 12.0)
    walls = outer_walls(bounds)
    sx0, sy0, sx1, sy1 = 5.0, 6.0, 11.0, 11.0
    t = 0.15
    walls += [
        Wall(footprint=(sx0, sy0, 7.2, sy0 + t), height=3.0, owner="s1"),
        Wall(footprint=(8.8, sy0, sx1, sy0 + t), height=3.0, owner="s1"),
        Wall(footprint=(sx0, sy1 - t, sx1, sy1), height=3.0, owner="s1"),
        Wall(footprint=(sx0, sy0 + t, sx0 + t, sy1 - t), height=3.0, owner="s1"),
        Wall(footprint=(sx1 - t, sy0 + t, sx1, sy1 - t), height=3.0, owner="s1"),
    ]
    store = Store(
        id="s1",
        name="Nordic Nest",
        theme="scandinavian",
        footprint=(sx0, sy0, sx1, sy1),
        wall_height=3.0,
        color=(180, 120, 40),
        doorway=(7.2, sy0, 8.8, sy0 + t),
        approach={
            "outside_doorway": Pose2(x=8.0, y=5.2, yaw=90.0),
            "inside_doorway": Pose2(x=8.0, y=6.9, yaw=90.0),
        },
        area_ids=["a1"],
        product_ids=["sofa", "lamp"],
    )
    area = Area(
        id="a1",
        store_id="s1",
        name="Living Room",
        footprint=(6.0, 8.0, 10.0, 10.6),
        color=(60, 160, 90),
        approach=Pose2(x=8.0, y=8.3, yaw=90.0),
        product_ids=["sofa", "lamp"],
    )
    prods = [
        _product("sofa", (200, 60, 120), category="sofa", store="s1", area="a1",
                 instances=[Instance(id="sofa-0", position=(8.0, 9.9, 0.0), size=(2.0, 0.9, 0.85), facing=270.0)]),
        _product("lamp", (90, 60, 220), category="floor lamp", store="s1", area="a1",
                 instances=[Instance(id="lamp-0", position=(9.6, 9.9, 0.0), size=(0.4, 0.4, 1.6), facing=270.0)]),
    ]
    layout = Layout(bounds=bounds, walls=walls, start=Pose2(x=2.0, y=2.0, yaw=45.0))
    wps = [
        Waypoint(id="w0", x=2.0, y=2.0, neighbors=["w1"]),
        Waypoint(id="w1", x=8.0, y=5.2, neighbors=["w0"]),
    ]
    return Scene(store="home_furnishings", name="tiny-home", layout=layout, products=prods, stores=[store],
                 areas=[area], waypoints=wps)
