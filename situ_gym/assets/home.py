"""Seeded generator of the Home Furnishings scene: 7 walled stores, 24 areas, 222 products.

Plan (metres; hall 56 x 40): an east-west corridor (y 16..24) with four stores north of it
(x 0..56 in 14 m bays, doorways facing south) and three south of it (doorways facing north);
the south-east bay is the entrance lobby. Each store is 14 x 16 m with 0.2 m walls owned by the
store and a 2.4 m doorway centred in its front wall; a 2.8 m central aisle runs from the doorway
to the back wall, display areas lie left and right of it (four quadrants, or a full-depth left
area and two right quadrants). Products stand in rows against the side walls, tallest at the
back; each area's approach point is on its aisle side, facing the rows.
"""

from __future__ import annotations

import random

from situ_gym.assets.colors import ColorPool
from situ_gym.assets.placement import connect_waypoints, outer_walls, r3
from situ_gym.assets.vocab_home import MODEL_NAMES, SIZE_STEPS, STORES, FurnitureCategory
from situ_gym.scene.model import Area, Instance, Layout, Pose2, Product, Scene, Store, Wall
from situ_gym.scene.validate import TABLE2

__all__ = ["BOUNDS", "build_home"]

BOUNDS = (0.0, 0.0, 56.0, 40.0)
START = Pose2(x=49.0, y=1.5, yaw=90.0)
BAY_W, BAY_D = 14.0, 16.0
WALL_T, WALL_H = 0.2, 3.0
DOOR_W = 2.4
AISLE = (5.6, 8.4)  # central aisle, lateral coordinate u inside the bay
FRONT_S, SPLIT_S, BACK_S = 2.0, 8.4, 15.6  # area depth limits (s from the front wall)
PRODUCT_DEPTH = 4.0  # rows occupy this much of an area's width from the side wall
ROW_GAP, ITEM_GAP = 0.35, 0.15
# (x0 of the bay, front-wall y, +1: store extends north of its front wall / -1: south)
BAYS = ((0.0, 24.0, 1), (14.0, 24.0, 1), (28.0, 24.0, 1), (42.0, 24.0, 1),
        (0.0, 16.0, -1), (14.0, 16.0, -1), (28.0, 16.0, -1))
SIZES = tuple(SIZE_STEPS)


class _Bay:
    """Local store frame: u across (0..14 from the bay's west edge), s inward from the front."""

    def __init__(self, x0: float, yf: float, d: int):
        self.x0, self.yf, self.d = x0, yf, d

    def pt(self, u: float, s: float) -> tuple[float, float]:
        return (self.x0 + u, self.yf + self.d * s)

    def rect(self, u0, s0, u1, s1):
        (ax, ay), (bx, by) = self.pt(u0, s0), self.pt(u1, s1)
        return (r3(min(ax, bx)), r3(min(ay, by)), r3(max(ax, bx)), r3(max(ay, by)))

    @property
    def inward_yaw(self) -> float:
        return 90.0 if self.d > 0 else 270.0


def _product_fields(cat: FurnitureCategory, i: int, rng: random.Random):
    M, C, S = len(cat.materials), len(cat.colors), len(cat.styles)
    material, color = cat.materials[i % M], cat.colors[(i + i // M) % C]
    style, size = cat.styles[(2 * i + 1) % S], SIZES[(i + 1) % 3]
    brand_i = i % len(cat.brands)
    brand = cat.brands[brand_i]
    feats = []
    if cat.features:
        F = len(cat.features)
        feats = sorted({cat.features[i % F], cat.features[(i + 2) % F]})
    wscale, pfactor = SIZE_STEPS[size]
    price = cat.price * pfactor * (1.0 + 0.15 * brand_i) * rng.uniform(0.9, 1.1)
    price = round(price / 10) * 10 - 0.01 if price >= 100 else int(price) + 0.99
    price = min(max(price, 15.0), 3000.0)
    w, d, h = cat.box
    w, d = w * wscale, d * (1.0 if cat.box[0] >= 1.0 else wscale)
    h *= rng.uniform(0.95, 1.05)
    return dict(material=material, color=color, style=style, size=size, brand=brand,
                features=feats, price=round(price, 2), box=(r3(w), r3(d), r3(h)))


def _name(cat: FurnitureCategory, model: str, f) -> str:
    if cat.group == "plants":
        return f"{f['brand']} {f['material'].title()} in {model} Pot, {f['size'].title()}"
    color, material = f["color"], f["material"]
    if color in material or material in color:  # "walnut" on walnut: say it once
        return f"{f['brand']} {model} {cat.noun}, {material.title()}"
    cw, mw = color.split(), material.split()
    # words the colour ends with and the material starts with are said once:
    # "white marble" + "marble top" -> "White Marble Top"
    k = max((n for n in range(1, min(len(cw), len(mw)) + 1) if cw[-n:] == mw[:n]), default=0)
    return f"{f['brand']} {model} {cat.noun}, {' '.join(cw + mw[k:]).title()}"


def _tags_attrs(cat: FurnitureCategory, f):
    mat_key = "plant" if cat.group == "plants" else "material"
    tags = sorted({f"{mat_key}:{f['material']}", f"color:{f['color']}", f"style:{f['style']}",
                   f"size:{f['size']}", *f["features"]})
    w, d, h = f["box"]
    attrs: dict[str, str | list[str]] = {
        mat_key: f["material"], "color": f["color"], "style": f["style"],
        "size_category": f["size"],
        "dimensions": f"{round(w * 100)} W x {round(d * 100)} D x {round(h * 100)} H cm",
        "features": [t.split(":", 1)[1] for t in f["features"]] or ["none listed"],
    }
    return tags, attrs


def _pack_rows(items, region_len: float, region_depth: float):
    """First-fit-decreasing rows along s, stacked from the side wall inward.

    ``items`` = (key, count, w, d, h). Rows are filled deepest items first; then the rows are
    ordered tallest first so the tallest pieces stand against the wall. Returns
    ``{key: (row offset u from the wall, start s within the row)}``; ValueError on overflow.
    """
    rows: list[dict] = []
    for key, count, w, d, h in sorted(items, key=lambda it: (-it[3], -it[2], it[0])):
        run = count * w + (count - 1) * 0.02
        if run > region_len:
            raise ValueError(f"{key!r} is longer ({run:.2f} m) than its area ({region_len:.2f} m)")
        for row in rows:
            if row["used"] + ITEM_GAP + run <= region_len:
                row["items"].append((key, row["used"] + ITEM_GAP))
                row["used"] += ITEM_GAP + run
                row["depth"], row["height"] = max(row["depth"], d), max(row["height"], h)
                break
        else:
            rows.append({"items": [(key, 0.0)], "used": run, "depth": d, "height": h})
    rows.sort(key=lambda r: -r["height"])
    need = sum(r["depth"] for r in rows) + ROW_GAP * (len(rows) - 1)
    if need > region_depth + 1e-9:
        raise ValueError(f"area overflow: rows need {need:.2f} m of {region_depth:.2f} m "
                         f"for {[k for r in rows for k, _ in r['items']]}")
    out, row_u = {}, 0.0
    for r in rows:
        for key, start in r["items"]:
            out[key] = (row_u, start)
        row_u += r["depth"] + ROW_GAP
    return out


def _area_frames(n_areas: int):
    """(u0, s0, u1, s1, side) of each area; side -1 = left of the aisle, +1 = right."""
    left_u, right_u = (0.4, AISLE[0]), (AISLE[1], BAY_W - 0.4)
    quads = [(left_u, (FRONT_S, SPLIT_S), -1), (left_u, (SPLIT_S + 0.4, BACK_S), -1),
             (right_u, (FRONT_S, SPLIT_S), 1), (right_u, (SPLIT_S + 0.4, BACK_S), 1)]
    if n_areas == 3:
        quads = [(left_u, (FRONT_S, BACK_S), -1), quads[2], quads[3]]
    return [(u[0], s[0], u[1], s[1], side) for u, s, side in quads]


def build_home(rng: random.Random) -> Scene:
    colors = ColorPool(rng)
    n_products = sum(c.n for st in STORES for a in st.areas for c in a.categories)
    extra = TABLE2["home_furnishings"]["instances"] - n_products
    # Products shown twice side by side: a seeded choice among the smaller pieces.
    small = []
    k = 0
    for st in STORES:
        for a in st.areas:
            for c in a.categories:
                for _ in range(c.n):
                    if c.box[0] <= 0.8:
                        small.append(k)
                    k += 1
    doubled = set(rng.sample(small, extra))

    products, stores, areas = [], [], []
    walls = outer_walls(BOUNDS)
    pidx = 0
    waypoints = [(f"hf_w{i + 1:02d}", 7.0 + 3.5 * i, 20.0) for i in range(14)]
    for st, (x0, yf, d) in zip(STORES, BAYS, strict=True):
        bay = _Bay(x0, yf, d)
        sid = f"hf_store_{st.slug}"
        door_u = (BAY_W - DOOR_W) / 2, (BAY_W + DOOR_W) / 2
        for u0, s0, u1, s1 in ((0, 0, door_u[0], WALL_T), (door_u[1], 0, BAY_W, WALL_T),
                               (0, BAY_D - WALL_T, BAY_W, BAY_D), (0, WALL_T, WALL_T, BAY_D - WALL_T),
                               (BAY_W - WALL_T, WALL_T, BAY_W, BAY_D - WALL_T)):
            walls.append(Wall(footprint=bay.rect(u0, s0, u1, s1), height=WALL_H, owner=sid))
        store_pids, area_ids = [], []
        for ai, ((u0, s0, u1, s1, side), area) in enumerate(
                zip(_area_frames(len(st.areas)), st.areas, strict=True)):
            aid = f"hf_area_{st.slug}_{ai + 1}"
            items, recs = [], []
            model_i = 0
            for cat in area.categories:
                for i in range(cat.n):
                    f = _product_fields(cat, i, rng)
                    model = MODEL_NAMES[(model_i + 7 * ai + len(products)) % len(MODEL_NAMES)]
                    model_i += 1
                    pid = f"hf_p{pidx + 1:03d}"
                    count = 2 if pidx in doubled else 1
                    recs.append((pid, cat, f, model, count))
                    items.append((pid, count, *f["box"]))
                    pidx += 1
            items.sort(key=lambda it: (-it[4], it[0]))
            region_len = (s1 - s0) - 0.2
            rows = _pack_rows(items, region_len, PRODUCT_DEPTH)
            facing = 0.0 if side < 0 else 180.0  # rows face the aisle
            # Rows run along s; depth goes from the side wall (u0 on the left, u1 on the right).
            a_pids = []
            for pid, cat, f, model, count in recs:
                row_u, start = rows[pid]
                w, dd, h = f["box"]
                insts = []
                for k in range(count):
                    s = s0 + 0.1 + start + k * (w + 0.02) + w / 2
                    u = (u0 + row_u + dd / 2) if side < 0 else (u1 - row_u - dd / 2)
                    x, y = bay.pt(u, s)
                    insts.append(Instance(id=f"{pid}_i{k + 1:02d}", position=(r3(x), r3(y), 0.0),
                                          size=(r3(dd), r3(w), r3(h)), facing=facing))
                tags, attrs = _tags_attrs(cat, f)
                products.append(Product(
                    id=pid, name=_name(cat, model, f), brand=f["brand"], category=cat.category,
                    group=cat.group, price=f["price"], attributes=attrs, tags=tags,
                    color=colors.take(), store_id=sid, area_id=aid, instances=insts))
                a_pids.append(pid)
            au = AISLE[0] - 0.5 if side < 0 else AISLE[1] + 0.5
            ax, ay = bay.pt(au, (s0 + s1) / 2)
            areas.append(Area(id=aid, store_id=sid, name=f"{st.name} - {area.name}",
                              footprint=bay.rect(u0, s0, u1, s1), color=colors.take(),
                              approach=Pose2(x=r3(ax), y=r3(ay), yaw=180.0 if side < 0 else 0.0),
                              product_ids=a_pids))
            area_ids.append(aid)
            store_pids += a_pids
        ox, oy = bay.pt(BAY_W / 2, -1.2)
        ix, iy = bay.pt(BAY_W / 2, 1.2)
        yaw = bay.inward_yaw
        stores.append(Store(
            id=sid, name=st.name, theme=st.theme, footprint=bay.rect(0, 0, BAY_W, BAY_D),
            wall_height=WALL_H, color=colors.take(), doorway=bay.rect(door_u[0], 0, door_u[1], WALL_T),
            approach={"outside_doorway": Pose2(x=r3(ox), y=r3(oy), yaw=yaw),
                      "inside_doorway": Pose2(x=r3(ix), y=r3(iy), yaw=yaw)},
            area_ids=area_ids, product_ids=store_pids))
        for s in (1.5, 7.0, 12.5):
            x, y = bay.pt(BAY_W / 2, s)
            waypoints.append((f"hf_w{len(waypoints) + 1:02d}", x, y))
    for y in (14.5, 9.0, 3.5):
        waypoints.append((f"hf_w{len(waypoints) + 1:02d}", 49.0, y))

    rects = [w.footprint for w in walls] + [
        (i.position[0] - i.size[0] / 2, i.position[1] - i.size[1] / 2,
         i.position[0] + i.size[0] / 2, i.position[1] + i.size[1] / 2)
        for p in products for i in p.instances]
    layout = Layout(bounds=BOUNDS, walls=walls, start=START)
    return Scene(store="home_furnishings", name="Home Furnishings Store", layout=layout,
                 products=products, stores=stores, areas=areas,
                 waypoints=connect_waypoints(waypoints, rects, max_dist=6.0))
