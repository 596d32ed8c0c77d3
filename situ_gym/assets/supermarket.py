"""Seeded generator of the Supermarket scene: hall, 29 fixtures, 233 products, 1,324 instances.

Plan (metres, x east, y north; hall 44 x 32, entrance on the south wall):

* 12 double-sided shelf gondolas (6.0 x 1.2 x 2.0, 5 levels) in 6 columns x 2 rows; fronts face
  west, backs east; aisles 2.6 m between columns, a 3 m cross aisle between the rows.
* 8 upright freezers (2.0 x 0.8 x 2.1) side by side against the north wall, facing south.
* 3 chest freezers (2.4 x 1.0 x 0.9) in a row between the shelves and the upright freezers.
* 4 open coolers (3.0 x 1.0 x 1.6) side by side against the east wall, facing west.
* 2 produce stands (2.0 x 1.4 x 0.9, four sloped bins) near the entrance, facing east.
"""

from __future__ import annotations

import random

from situ_gym.assets.colors import ColorPool
from situ_gym.assets.placement import (
    Lane,
    connect_waypoints,
    justify,
    outer_walls,
    pack_lanes,
    r3,
)
from situ_gym.assets.vocab_supermarket import CATEGORIES, GroceryCategory
from situ_gym.scene.model import Fixture, Instance, Layout, Pose2, Product, Scene
from situ_gym.scene.validate import TABLE2

__all__ = ["BOUNDS", "build_supermarket", "FIXTURE_SPECS"]

BOUNDS = (0.0, 0.0, 44.0, 32.0)
START = Pose2(x=7.0, y=1.5, yaw=90.0)
APPROACH_OFFSET = 0.9  # approach points stand this far in front of a fixture face
FACING_GAP = 0.01  # between adjacent facings of one product
PRODUCT_GAP = 0.12  # between runs of different products
LANE_MARGIN = 0.08

# kind -> (length, depth, height, levels, sides, lanes per level (depth split))
FIXTURE_SPECS = {
    "shelf": (6.0, 1.2, 2.0, (0.1, 0.55, 0.93, 1.31, 1.69), ("front", "back"), 1),
    "upright_freezer": (2.0, 0.8, 2.1, (0.12, 0.52, 0.92, 1.32, 1.72), ("front",), 1),
    "chest_freezer": (2.4, 1.0, 0.9, (0.45,), ("front",), 4),
    "open_cooler": (3.0, 1.0, 1.6, (0.15, 0.5, 0.85, 1.2), ("front",), 1),
    "produce_stand": (2.0, 1.4, 0.9, (0.45, 0.55, 0.65, 0.75), ("front",), 1),
}
BACK_APPROACH = {"shelf", "chest_freezer"}  # free-standing fixtures reachable from behind
KIND_LABEL = {
    "shelf": "Shelf", "upright_freezer": "Upright Freezer", "chest_freezer": "Chest Freezer",
    "open_cooler": "Open Cooler", "produce_stand": "Produce Stand",
}

SHELF_X = (12.0, 15.8, 19.6, 23.4, 27.2, 31.0)  # west edge of each gondola column
SHELF_Y = (6.0, 15.0)  # south edge of each gondola row


def _fixture_frames() -> list[tuple[str, tuple[float, float], float]]:
    """(kind, centre, front_yaw) of the 29 fixtures, in id order."""
    frames = []
    for row_y in SHELF_Y:
        for col_x in SHELF_X:
            frames.append(("shelf", (col_x + 0.6, row_y + 3.0), 180.0))
    for i in range(3):
        frames.append(("chest_freezer", (14.5 + 5.7 * i, 25.5), 270.0))
    for i in range(8):
        frames.append(("upright_freezer", (11.0 + 2.0 * i, 31.6), 270.0))
    for i in range(4):
        frames.append(("open_cooler", (43.5, 7.5 + 3.0 * i), 180.0))
    for i in range(2):
        frames.append(("produce_stand", (4.2, 9.0 + 7.0 * i), 0.0))
    return frames


def _axes(front_yaw: float) -> tuple[tuple[float, float], tuple[float, float]]:
    """Unit front normal f and the run direction t (f rotated +90 degrees)."""
    f = {0.0: (1.0, 0.0), 90.0: (0.0, 1.0), 180.0: (-1.0, 0.0), 270.0: (0.0, -1.0)}[front_yaw % 360.0]
    return f, (-f[1], f[0])


def _footprint(center, length, depth, front_yaw):
    f, _ = _axes(front_yaw)
    hx, hy = (depth / 2, length / 2) if f[1] == 0 else (length / 2, depth / 2)
    cx, cy = center
    return (r3(cx - hx), r3(cy - hy), r3(cx + hx), r3(cy + hy))


def _waypoints(rects):
    aisle_x = (10.6, 14.5, 18.3, 22.1, 25.9, 29.7, 33.6)
    pts = [(x, y) for y in (3.6, 13.5, 23.0) for x in aisle_x]
    pts += [(x, 28.6) for x in aisle_x]
    pts += [(7.0, y) for y in (3.6, 9.0, 13.5, 18.0, 23.0, 28.6)]
    pts += [(38.5, y) for y in (3.6, 7.5, 10.5, 13.5, 16.5, 19.5, 23.0, 28.6)]
    named = [(f"sm_w{i + 1:02d}", x, y) for i, (x, y) in enumerate(pts)]
    return connect_waypoints(named, rects, max_dist=10.0)


def _products(rng: random.Random, colors: ColorPool):
    """Catalog records without instances: (category spec, fields) in catalog order."""
    out = []
    for cat in CATEGORIES:
        if cat.n > len(cat.variants):
            raise ValueError(f"category {cat.category!r} lists {len(cat.variants)} variants, needs {cat.n}")
        for i in range(cat.n):
            desc, vtags = cat.variants[i]
            brand, bfactor, btags = cat.brands[i % len(cat.brands)]
            size_label, sfactor = cat.sizes[i % len(cat.sizes)]
            name = " ".join(w for w in (brand, desc, cat.noun) if w) + f", {size_label}"
            tags = [t for t in (vtags + "," + btags).split(",") if t]
            if not any(t.startswith("packaging:") for t in tags):
                tags.append(f"packaging:{cat.packaging}")
            tags.append(f"size:{size_label}")
            tags = sorted(set(tags))
            price = cat.price * bfactor * sfactor * rng.uniform(0.93, 1.07)
            price = min(max(0.99, round(price, 1) - 0.01), 39.99)  # groceries $0.99-$40
            w, d, h = cat.box
            w *= (1.0 if i % len(cat.sizes) == 0 else 1.15) * rng.uniform(0.96, 1.04)
            out.append((cat, dict(name=name, brand=brand, price=round(price, 2),
                                  tags=tags, attributes=_attributes(cat, tags, size_label, rng),
                                  color=colors.take(), box=(r3(w), r3(d), r3(h)))))
    return out


def _attributes(cat: GroceryCategory, tags: list[str], size_label: str, rng: random.Random):
    values: dict[str, list[str]] = {}
    for t in tags:
        k, v = t.split(":", 1)
        values.setdefault(k, []).append(v)
    attrs: dict[str, str | list[str]] = {"size": size_label}
    attrs["packaging"] = values.get("packaging", [cat.packaging])[0]
    if cat.food:
        attrs["flavour"] = ", ".join(values.get("flavour", values.get("variety", ["original"])))
        attrs["diet"] = values.get("diet", ["no special diet"])
        attrs["allergens"] = values.get("allergen", ["none listed"])
        kcal = rng.randint(*cat.kcal)
        attrs["nutrition"] = f"{kcal} kcal per serving"
    else:
        attrs["scent"] = ", ".join(values.get("scent", ["not applicable"]))
        attrs["features"] = sorted(
            f"{k} {v}" if k not in ("feature",) else v
            for k, vs in values.items() if k not in ("packaging", "size", "scent") for v in vs
        ) or ["standard"]
    for k in ("roast", "form", "caffeine", "ply", "life stage", "fat", "cheese", "egg", "pulp", "fish",
              "cut", "shape", "grain", "bean", "oil", "texture", "pet", "season", "certification"):
        if k in values:
            attrs[k] = ", ".join(values[k])
    return attrs


def _instance_counts(rng, cats):
    ranges = {"ambient": (4, 7), "frozen": (5, 7), "chilled": (6, 8), "produce": (3, 4)}
    counts = [rng.randint(*ranges[c.storage]) for c in cats]
    target = TABLE2["supermarket"]["instances"]
    adjustable = [i for i, c in enumerate(cats) if c.storage == "ambient"]
    while sum(counts) != target:
        i = rng.choice(adjustable)
        if sum(counts) < target and counts[i] < 9:
            counts[i] += 1
        elif sum(counts) > target and counts[i] > 3:
            counts[i] -= 1
    return counts


def _chunks(seq, k):
    n = len(seq)
    return [seq[round(j * n / k): round((j + 1) * n / k)] for j in range(k)]


def build_supermarket(rng: random.Random) -> Scene:
    colors = ColorPool(rng)
    prods = _products(rng, colors)
    cats = [c for c, _ in prods]
    counts = _instance_counts(rng, cats)
    ids = [f"sm_p{i + 1:03d}" for i in range(len(prods))]

    frames = _fixture_frames()
    kind_index: dict[str, int] = {}
    fixtures_raw = []
    for kind, center, yaw in frames:
        kind_index[kind] = kind_index.get(kind, 0) + 1
        fid = f"sm_{kind}_{kind_index[kind]:02d}"
        fixtures_raw.append((fid, kind, center, yaw))

    # Which fixture face holds which products.
    by_kind: dict[str, list[int]] = {}
    for i, c in enumerate(cats):
        by_kind.setdefault(c.fixture, []).append(i)
    faces: dict[tuple[str, str], list[int]] = {}
    for kind in FIXTURE_SPECS:
        fx = [f for f in fixtures_raw if f[1] == kind]
        sides = FIXTURE_SPECS[kind][4]
        slots = [(f[0], s) for f in fx for s in sides]
        for slot, chunk in zip(slots, _chunks(by_kind.get(kind, []), len(slots)), strict=True):
            faces[slot] = chunk

    placed: dict[int, list[Instance]] = {}
    fixture_of: dict[int, str] = {}
    fixtures = []
    for fid, kind, center, yaw in fixtures_raw:
        length, depth, height, levels, sides, split = FIXTURE_SPECS[kind]
        fp = _footprint(center, length, depth, yaw)
        f, t = _axes(yaw)
        product_ids: list[str] = []
        for side in sides:
            members = faces[(fid, side)]
            side_depth = depth / len(sides)
            lanes = []
            for li, z in enumerate(levels):
                top = levels[li + 1] if li + 1 < len(levels) else height
                clearance = (height if split > 1 or kind == "produce_stand" else top) - z - 0.02
                lane_depth = side_depth / (len(levels) if kind == "produce_stand" else split)
                for s in range(split):
                    lanes.append(Lane(z=z, clearance=clearance, max_depth=lane_depth - 0.04,
                                      length=length - 2 * LANE_MARGIN, key=(li, s)))

            def box(i):
                return prods[i][1]["box"]

            def run(i):
                return counts[i] * box(i)[0] + (counts[i] - 1) * FACING_GAP

            pack_lanes(members, lanes, gap=PRODUCT_GAP, run=run,
                       height=lambda i: box(i)[2], depth=lambda i: box(i)[1])
            sign = 1.0 if side == "front" else -1.0
            facing = yaw if side == "front" else (yaw + 180.0) % 360.0
            for lane in lanes:
                li, s = lane.key
                for i, start in justify(lane, run):
                    w, d, h = box(i)
                    # depth measured from this side's edge into the fixture
                    if kind == "produce_stand":  # sloped bins: the lowest at the front
                        v = (li + 0.5) * side_depth / len(levels)
                    elif split > 1:
                        v = (s + 0.5) * side_depth / split
                    else:
                        v = 0.03 + d / 2
                    normal_off = sign * (depth / 2 - v)
                    insts = []
                    for k in range(counts[i]):
                        u = LANE_MARGIN + start + k * (w + FACING_GAP) + w / 2 - length / 2
                        x = center[0] + f[0] * normal_off + t[0] * u
                        y = center[1] + f[1] * normal_off + t[1] * u
                        size = (d, w, h) if f[1] == 0 else (w, d, h)
                        insts.append(Instance(id=f"{ids[i]}_i{k + 1:02d}",
                                              position=(r3(x), r3(y), r3(lane.z)),
                                              size=tuple(r3(v_) for v_ in size), facing=facing))
                    placed[i] = insts
                    fixture_of[i] = fid
            product_ids += [ids[i] for i in members]
        approach = {"front": _approach(center, depth, yaw, "front")}
        if kind in BACK_APPROACH:
            approach["back"] = _approach(center, depth, yaw, "back")
        groups = []
        for pid in product_ids:
            c = cats[ids.index(pid)].category
            if c not in groups:
                groups.append(c)
        name = f"{KIND_LABEL[kind]} {int(fid[-2:])}: " + ", ".join(groups[:3])
        fixtures.append(Fixture(id=fid, name=name, kind=kind, footprint=fp, height=height,
                                levels=list(levels), color=colors.take(), front_yaw=yaw,
                                approach=approach, product_ids=sorted(product_ids)))

    products = []
    for i, (cat, fields) in enumerate(prods):
        products.append(Product(
            id=ids[i], name=fields["name"], brand=fields["brand"], category=cat.category,
            group=cat.group, price=fields["price"], attributes=fields["attributes"],
            tags=fields["tags"], color=fields["color"], fixture_id=fixture_of[i],
            instances=placed[i]))

    walls = outer_walls(BOUNDS)
    rects = [w.footprint for w in walls] + [fx.footprint for fx in fixtures]
    layout = Layout(bounds=BOUNDS, walls=walls, start=START)
    return Scene(store="supermarket", name="Supermarket", layout=layout, products=products,
                 fixtures=fixtures, waypoints=_waypoints(rects))


def _approach(center, depth, yaw, side) -> Pose2:
    f, _ = _axes(yaw)
    sign = 1.0 if side == "front" else -1.0
    off = depth / 2 + APPROACH_OFFSET
    x, y = center[0] + sign * f[0] * off, center[1] + sign * f[1] * off
    face = (yaw + 180.0) % 360.0 if side == "front" else yaw
    return Pose2(x=r3(x), y=r3(y), yaw=face)
