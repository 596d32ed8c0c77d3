"""Generic builder of a "fixtures"-layout store from data: one hall of fixtures holding products.

A store folder whose ``store.json`` says ``"builder": "fixtures"`` holds two more files:

``layout.json``
    ``bounds`` ``[xmin, ymin, xmax, ymax]`` (metres, the walkable hall; outer walls are added),
    ``start`` ``{"x", "y", "yaw"}``, ``fixture_types`` (name -> ``kind`` from
    ``situ_gym.scene.model.FIXTURE_KINDS``, ``length``, ``depth``, ``height``, ``levels``, and
    optionally ``sides`` ``["front"]`` or ``["front", "back"]`` and ``split``, the lanes a level is
    divided into across its depth; a missing value is the Supermarket's for that kind),
    ``fixtures`` (in id order: ``type``, ``center`` ``[x, y]``, ``front_yaw`` in {0, 90, 180, 270},
    optionally ``categories``: the catalog categories it holds), ``waypoints`` (``[x, y]`` pairs,
    joined automatically), and optionally ``walls`` (extra solid boxes: ``footprint``, ``height``),
    ``approach_offset`` (metres in front of a face, 0.9) and ``waypoint_max_dist`` (10).

``catalog.json``
    ``categories`` in the schema of ``vocab/supermarket.json`` (see
    ``situ_gym.assets.vocab_supermarket``; ``fixture`` names a fixture kind), and ``instances``:
    storage -> ``[min, max]`` facings per product (default ``[3, 6]``).

A category listed by a fixture goes on that fixture; the others of a kind are spread, in
catalog order, over that kind's fixtures that list none. Products, names, prices, tags,
attributes and colours are made as the Supermarket's are (``situ_gym.assets.supermarket``).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from situ_gym.assets.colors import ColorPool
from situ_gym.assets.placement import Lane, connect_waypoints, justify, outer_walls, pack_lanes, r3
from situ_gym.assets.supermarket import (
    APPROACH_OFFSET,
    FACING_GAP,
    FIXTURE_SPECS,
    KIND_LABEL,
    LANE_MARGIN,
    PRODUCT_GAP,
    _approach,
    _attributes,
    _axes,
    _chunks,
    _footprint,
)
from situ_gym.assets.vocab_supermarket import GroceryCategory, _category
from situ_gym.scene.model import (
    FIXTURE_KINDS,
    Fixture,
    Instance,
    Layout,
    Pose2,
    Product,
    Scene,
    Wall,
)

__all__ = ["build_fixture_store", "read_layout", "read_catalog"]

_DEFAULT_INSTANCES = (3, 6)


def _read(folder: Path, name: str) -> dict[str, Any]:
    path = Path(folder) / name
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{path}: missing (a 'fixtures' builder store needs layout.json and catalog.json)") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}:{e.lineno}: not JSON: {e.msg}") from None


def read_catalog(folder: Path) -> tuple[tuple[GroceryCategory, ...], dict[str, tuple[int, int]]]:
    """The folder's catalog.json: categories and facings per storage."""
    raw = _read(folder, "catalog.json")
    cats = tuple(_category(c) for c in raw["categories"])
    instances = {k: (int(v[0]), int(v[1])) for k, v in raw.get("instances", {}).items()}
    names = [c.category for c in cats]
    if len(set(names)) != len(names):
        raise ValueError(f"{folder}/catalog.json: duplicate category names")
    for c in cats:
        if c.fixture not in FIXTURE_KINDS:
            raise ValueError(f"{folder}/catalog.json: category {c.category!r}: fixture {c.fixture!r} "
                             f"is not one of {FIXTURE_KINDS}")
        if c.n > len(c.variants):
            raise ValueError(f"{folder}/catalog.json: category {c.category!r} lists "
                             f"{len(c.variants)} variants, needs {c.n}")
    return cats, instances


def read_layout(folder: Path) -> dict[str, Any]:
    """The folder's layout.json with every fixture's type resolved to its full dimensions."""
    raw = _read(folder, "layout.json")
    types = {}
    for name, t in raw.get("fixture_types", {}).items():
        kind = t.get("kind")
        if kind not in FIXTURE_KINDS:
            raise ValueError(f"{folder}/layout.json: fixture type {name!r}: kind {kind!r} is not one of {FIXTURE_KINDS}")
        length, depth, height, levels, sides, split = FIXTURE_SPECS[kind]
        types[name] = dict(kind=kind, length=float(t.get("length", length)), depth=float(t.get("depth", depth)),
                           height=float(t.get("height", height)), levels=tuple(t.get("levels", levels)),
                           sides=tuple(t.get("sides", sides)), split=int(t.get("split", split)))
        if not set(types[name]["sides"]) <= {"front", "back"} or "front" not in types[name]["sides"]:
            raise ValueError(f"{folder}/layout.json: fixture type {name!r}: sides must be [front] or [front, back]")
    fixtures = []
    for i, f in enumerate(raw["fixtures"]):
        t = f.get("type")
        if t not in types:
            raise ValueError(f"{folder}/layout.json: fixtures[{i}]: unknown type {t!r} (fixture_types: {sorted(types)})")
        yaw = float(f["front_yaw"]) % 360.0
        if yaw not in (0.0, 90.0, 180.0, 270.0):
            raise ValueError(f"{folder}/layout.json: fixtures[{i}]: front_yaw {f['front_yaw']} not in 0/90/180/270")
        fixtures.append(dict(types[t], center=(float(f["center"][0]), float(f["center"][1])), front_yaw=yaw,
                             categories=tuple(f.get("categories", ()))))
    return dict(
        bounds=tuple(float(v) for v in raw["bounds"]),
        start=Pose2(**raw["start"]),
        fixtures=fixtures,
        waypoints=[(float(x), float(y)) for x, y in raw["waypoints"]],
        walls=[Wall(footprint=tuple(r3(v) for v in w["footprint"]), height=float(w.get("height", 1.0)))
               for w in raw.get("walls", [])],
        approach_offset=float(raw.get("approach_offset", APPROACH_OFFSET)),
        waypoint_max_dist=float(raw.get("waypoint_max_dist", 10.0)),
    )


def _products(cats, rng: random.Random, colors: ColorPool):
    """Catalog records without instances, as ``supermarket._products`` makes them from ``cats``."""
    out = []
    for cat in cats:
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
            price = min(max(0.99, round(price, 1) - 0.01), 39.99)
            w, d, h = cat.box
            w *= (1.0 if i % len(cat.sizes) == 0 else 1.15) * rng.uniform(0.96, 1.04)
            out.append((cat, dict(name=name, brand=brand, price=round(price, 2),
                                  tags=tags, attributes=_attributes(cat, tags, size_label, rng),
                                  color=colors.take(), box=(r3(w), r3(d), r3(h)))))
    return out


def _assign(layout, cats_of_products: list[GroceryCategory], fids: list[str]) -> dict[tuple[str, str], list[int]]:
    """(fixture id, side) -> product indices on that face."""
    listed: dict[str, int] = {}
    for fi, f in enumerate(layout["fixtures"]):
        for c in f["categories"]:
            if c in listed:
                raise ValueError(f"layout.json: category {c!r} is listed by two fixtures")
            listed[c] = fi
    known = {c.category for c in cats_of_products}
    unknown = sorted(set(listed) - known)
    if unknown:
        raise ValueError(f"layout.json: fixtures list categories not in catalog.json: {unknown}")
    faces: dict[tuple[str, str], list[int]] = {}
    explicit: dict[int, list[int]] = {}
    by_kind: dict[str, list[int]] = {}
    for i, c in enumerate(cats_of_products):
        if c.category in listed:
            fi = listed[c.category]
            if layout["fixtures"][fi]["kind"] != c.fixture:
                raise ValueError(f"layout.json: category {c.category!r} ({c.fixture}) listed by a "
                                 f"{layout['fixtures'][fi]['kind']} fixture")
            explicit.setdefault(fi, []).append(i)
        else:
            by_kind.setdefault(c.fixture, []).append(i)
    for fi, f in enumerate(layout["fixtures"]):
        if f["categories"]:
            slots = [(fids[fi], s) for s in f["sides"]]
            for slot, chunk in zip(slots, _chunks(explicit.get(fi, []), len(slots)), strict=True):
                faces[slot] = chunk
    for kind in FIXTURE_KINDS:
        slots = [(fids[fi], s) for fi, f in enumerate(layout["fixtures"])
                 if f["kind"] == kind and not f["categories"] for s in f["sides"]]
        members = by_kind.get(kind, [])
        if members and not slots:
            names = sorted({cats_of_products[i].category for i in members})
            raise ValueError(f"catalog.json: no {kind} fixture is free to hold {names}")
        for slot, chunk in zip(slots, _chunks(members, len(slots)), strict=True):
            faces[slot] = chunk
    return faces


def build_fixture_store(folder: Path, spec, rng: random.Random) -> Scene:
    """The scene of the "fixtures"-layout store in ``folder`` (``spec`` is its ``StoreSpec``)."""
    folder = Path(folder)
    cats, instance_ranges = read_catalog(folder)
    layout = read_layout(folder)
    prefix = spec.id_prefix

    colors = ColorPool(rng)
    prods = _products(cats, rng, colors)
    pcats = [c for c, _ in prods]
    counts = [rng.randint(*instance_ranges.get(c.storage, _DEFAULT_INSTANCES)) for c in pcats]
    ids = [f"{prefix}_p{i + 1:03d}" for i in range(len(prods))]

    kind_index: dict[str, int] = {}
    fids = []
    for f in layout["fixtures"]:
        kind_index[f["kind"]] = kind_index.get(f["kind"], 0) + 1
        fids.append(f"{prefix}_{f['kind']}_{kind_index[f['kind']]:02d}")
    faces = _assign(layout, pcats, fids)

    placed: dict[int, list[Instance]] = {}
    fixture_of: dict[int, str] = {}
    fixtures = []
    offset = layout["approach_offset"]
    for fid, fx in zip(fids, layout["fixtures"], strict=True):
        kind, center, yaw = fx["kind"], fx["center"], fx["front_yaw"]
        length, depth, height = fx["length"], fx["depth"], fx["height"]
        levels, sides, split = fx["levels"], fx["sides"], fx["split"]
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

            try:
                pack_lanes(members, lanes, gap=PRODUCT_GAP, run=run,
                           height=lambda i: box(i)[2], depth=lambda i: box(i)[1])
            except ValueError as e:  # names the fixture face that is too small
                raise ValueError(f"layout.json: fixture {fid} ({side}) is too small: {e}") from None
            sign = 1.0 if side == "front" else -1.0
            facing = yaw if side == "front" else (yaw + 180.0) % 360.0
            for lane in lanes:
                li, s = lane.key
                for i, start in justify(lane, run):
                    w, d, h = box(i)
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
        approach = {s: _offset_approach(center, depth, yaw, s, offset) for s in sides}
        groups = []
        for pid in product_ids:
            c = pcats[ids.index(pid)].category
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

    walls = outer_walls(layout["bounds"]) + layout["walls"]
    rects = [w.footprint for w in walls] + [fx.footprint for fx in fixtures]
    named = [(f"{prefix}_w{i + 1:02d}", x, y) for i, (x, y) in enumerate(layout["waypoints"])]
    waypoints = connect_waypoints(named, rects, max_dist=layout["waypoint_max_dist"])
    return Scene(store=spec.id, name=spec.name,
                 layout=Layout(bounds=layout["bounds"], walls=walls, start=layout["start"]),
                 products=products, fixtures=fixtures, waypoints=waypoints)


def _offset_approach(center, depth, yaw, side, offset: float) -> Pose2:
    if offset == APPROACH_OFFSET:
        return _approach(center, depth, yaw, side)
    f, _ = _axes(yaw)
    sign = 1.0 if side == "front" else -1.0
    off = depth / 2 + offset
    face = (yaw + 180.0) % 360.0 if side == "front" else yaw
    return Pose2(x=r3(center[0] + sign * f[0] * off), y=r3(center[1] + sign * f[1] * off), yaw=face)
