"""Cross checks of scene and task-bank records; raises AssetError naming file, record and field."""

from __future__ import annotations

import math
import re
from collections import Counter, deque
from collections.abc import Iterable

import numpy as np

from situ_gym.scene.budget import compute_budget, eligible_products, reference_set
from situ_gym.scene.model import (
    BACKGROUND_COLOR,
    FLOOR_COLOR,
    WALL_COLOR,
    Pose2,
    Rect,
    Scene,
    TaskBank,
)
from situ_gym.stores import PAPER_STORES, store_spec

__all__ = [
    "AssetError",
    "TABLE2",
    "SUPERMARKET_FIXTURE_COUNTS",
    "HOME_STORE_NAMES",
    "HOME_AREA_COUNT",
    "BODY_RADIUS",
    "APPROACH_CLEARANCE",
    "MIN_AISLE",
    "MIN_COLOR_DIFF",
    "MIN_DOORWAY",
    "rect_point_distance",
    "segment_clearance",
    "obstacle_rects",
    "instance_rect",
    "scene_stats",
    "check_colors",
    "check_scene",
    "check_task_bank",
    "check_table2",
]

# ---------------------------------------------------------------- expected statistics
# SituRecBench Table 2 and App. A.3 live in the paper stores' store.json ("expected"); these
# views of them are kept for callers that name the paper's numbers.
_COUNT_KEYS = ("products", "instances", "nav_targets", "waypoints", "profiles", "tasks")
TABLE2 = {sid: {k: store_spec(sid).expected[k] for k in _COUNT_KEYS} for sid in PAPER_STORES}
SUPERMARKET_FIXTURE_COUNTS = dict(store_spec(PAPER_STORES[0]).expected["fixture_kinds"])
HOME_STORE_NAMES = tuple(store_spec(PAPER_STORES[1]).expected["store_names"])
HOME_AREA_COUNT = store_spec(PAPER_STORES[1]).expected["areas"]
TASKS_PER_PROFILE = 4
N_SUBSETS = 4

BODY_RADIUS = 0.3  # metres; the walker's collision radius
APPROACH_CLEARANCE = 0.45  # free floor around approach points, waypoints and the start pose
MIN_AISLE = 2.0  # gap between two fixtures that do not touch
MIN_COLOR_DIFF = 12  # two entity colours differ by at least this in some channel
MIN_DOORWAY = 1.6
_EPS = 1e-6
_LEVEL_TOL = 1e-3
_POS_TOL = 2e-3  # coordinates are written with 3 decimals


class AssetError(ValueError):
    """A scene or task file is malformed; says which file, record and field."""

    def __init__(self, message: str, *, file: str = "", record: str | None = None,
                 field: str | None = None):
        message = _one_line(message)
        self.file, self.record, self.field, self.message = file, record, field, message
        self.problems: list[AssetError] = [self]  # every problem found by the same check
        # one line, "FILE: record 'R' field 'F': message"; the record id and field path come
        # from the file, so they are quoted and shortened (a hostile key stays one short line)
        where = [f"record {_short(record)}"] if record is not None else []
        if field is not None:
            where.append(f"field {_short(field)}")
        super().__init__(f"{file or '<assets>'}: " + (" ".join(where) + ": " if where else "") + message)


# line breaks and other control characters, which ids and names taken from a file may hold
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_MAX_MESSAGE = 2_000


def _one_line(message: str) -> str:
    """``message`` on one line (control characters escaped as ``\\n``, ``\\x1b``...) and at
    most about ``_MAX_MESSAGE`` characters."""
    message = _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), message)
    return message if len(message) <= _MAX_MESSAGE else message[:_MAX_MESSAGE] + f"... ({len(message)} chars)"


def _short(text: str, limit: int = 80) -> str:
    """``repr(text)``, cut to about ``limit`` characters."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text)} chars)"


# ---------------------------------------------------------------- geometry helpers
def rect_point_distance(rect: Rect, x: float, y: float) -> float:
    """Distance from a point to an axis-aligned rectangle (0 inside)."""
    xmin, ymin, xmax, ymax = rect
    dx = max(xmin - x, 0.0, x - xmax)
    dy = max(ymin - y, 0.0, y - ymax)
    return math.hypot(dx, dy)


def segment_clearance(p: tuple[float, float], q: tuple[float, float], rects: Iterable[Rect],
                      step: float = 0.05) -> float:
    """Smallest distance from the segment p-q to any rectangle (sampled every ``step`` m)."""
    arr = np.asarray(list(rects), dtype=float).reshape(-1, 4)
    if len(arr) == 0:
        return math.inf
    n = max(1, math.ceil(math.dist(p, q) / step))
    t = np.linspace(0.0, 1.0, n + 1)[:, None]
    xs = p[0] + (q[0] - p[0]) * t
    ys = p[1] + (q[1] - p[1]) * t
    dx = np.maximum(np.maximum(arr[None, :, 0] - xs, xs - arr[None, :, 2]), 0.0)
    dy = np.maximum(np.maximum(arr[None, :, 1] - ys, ys - arr[None, :, 3]), 0.0)
    return float(np.sqrt(dx * dx + dy * dy).min())


def instance_rect(position: tuple[float, float, float], size: tuple[float, float, float]) -> Rect:
    x, y, _ = position
    sx, sy, _ = size
    return (x - sx / 2, y - sy / 2, x + sx / 2, y + sy / 2)


def obstacle_rects(scene: Scene) -> list[Rect]:
    """Floor rectangles a body cannot enter: walls, fixtures, and (Home) product instances."""
    rects = [w.footprint for w in scene.layout.walls]
    rects += [f.footprint for f in scene.fixtures]
    if store_spec(scene.store).products_block:
        rects += [instance_rect(i.position, i.size) for p in scene.products for i in p.instances]
    return rects


def _inside(inner: Rect, outer: Rect, tol: float = _EPS) -> bool:
    return (inner[0] >= outer[0] - tol and inner[1] >= outer[1] - tol
            and inner[2] <= outer[2] + tol and inner[3] <= outer[3] + tol)


def _rect_gap(a: Rect, b: Rect) -> float:
    dx = max(a[0] - b[2], b[0] - a[2], 0.0)
    dy = max(a[1] - b[3], b[1] - a[3], 0.0)
    return math.hypot(dx, dy)


def _faces(pose: Pose2, target: tuple[float, float], max_angle: float = 60.0) -> bool:
    """Whether the pose's yaw points at ``target`` within ``max_angle`` degrees."""
    dx, dy = target[0] - pose.x, target[1] - pose.y
    if math.hypot(dx, dy) < _EPS:
        return True
    diff = (math.degrees(math.atan2(dy, dx)) - pose.yaw + 180.0) % 360.0 - 180.0
    return abs(diff) <= max_angle


def _center(rect: Rect) -> tuple[float, float]:
    return ((rect[0] + rect[2]) / 2, (rect[1] + rect[3]) / 2)


# ---------------------------------------------------------------- problem collection
class _Problems:
    def __init__(self, file: str):
        self.file = file
        self.items: list[AssetError] = []

    def add(self, record: str | None, field: str | None, message: str) -> None:
        self.items.append(AssetError(message, file=self.file, record=record, field=field))

    def raise_first(self) -> None:
        if not self.items:
            return
        first = self.items[0]
        if len(self.items) > 1:
            first = AssetError(f"{first.message} (and {len(self.items) - 1} more problems; "
                               f"next: {[str(e) for e in self.items[1:4]]})",
                               file=first.file, record=first.record, field=first.field)
        first.problems = list(self.items)
        raise first


# ---------------------------------------------------------------- colours
def check_colors(colored: Iterable[tuple[str, tuple[int, int, int]]], file: str = "") -> None:
    """Entity colours: unique, not reserved, channels 0 or >= 16, pairs >= MIN_COLOR_DIFF apart."""
    probs = _Problems(file)
    _color_problems(list(colored), probs)
    probs.raise_first()


def _color_problems(colored: list[tuple[str, tuple[int, int, int]]], probs: _Problems) -> None:
    reserved = {BACKGROUND_COLOR: "BACKGROUND", FLOOR_COLOR: "FLOOR", WALL_COLOR: "WALL"}
    for eid, c in colored:
        if tuple(c) in reserved:
            probs.add(eid, "color", f"colour {tuple(c)} is the reserved {reserved[tuple(c)]} colour")
        if any(0 < v < 16 or v > 255 or v < 0 for v in c):
            probs.add(eid, "color", f"colour {tuple(c)} has a channel in 1..15 or outside 0..255")
    # channels outside 0..255 are reported above; numpy cannot hold some of them (2**64)
    colored = [(eid, c) for eid, c in colored if all(0 <= v <= 255 for v in c)]
    if len(colored) < 2:
        return
    arr = np.asarray([c for _, c in colored], dtype=int)
    diff = np.abs(arr[:, None, :] - arr[None, :, :]).max(axis=2)
    np.fill_diagonal(diff, 255)
    for i, j in zip(*np.nonzero(diff < MIN_COLOR_DIFF), strict=True):
        if i < j:
            kind = "duplicate" if diff[i, j] == 0 else "too close"
            probs.add(colored[j][0], "color",
                      f"{kind} colour {tuple(colored[j][1])} vs {colored[i][0]!r} {tuple(colored[i][1])}"
                      f" (need a channel differing by >= {MIN_COLOR_DIFF})")


# ---------------------------------------------------------------- scene
def check_scene(scene: Scene, file: str = "scene.json") -> None:
    """Every cross check of one scene; raises AssetError for the first problem found."""
    probs = _Problems(file)
    _scene_problems(scene, probs)
    probs.raise_first()


def _scene_problems(scene: Scene, probs: _Problems) -> None:
    add = probs.add
    # ids
    seen: dict[str, str] = {}
    for kind, recs in (("product", scene.products), ("fixture", scene.fixtures),
                       ("store", scene.stores), ("area", scene.areas), ("waypoint", scene.waypoints)):
        for r in recs:
            if r.id in seen:
                add(r.id, "id", f"duplicate id (already used by a {seen[r.id]})")
            seen[r.id] = kind
    inst_ids = Counter(i.id for p in scene.products for i in p.instances)
    for iid, n in inst_ids.items():
        if n > 1:
            add(iid, "id", f"duplicate instance id ({n} times)")
    names = Counter(p.name.lower() for p in scene.products)
    for p in scene.products:
        if names[p.name.lower()] > 1:
            add(p.id, "name", f"duplicate product name {p.name!r}")
        for t in p.tags:
            k, sep, v = t.partition(":")
            if not sep or not k or not v:
                add(p.id, "tags", f"tag {t!r} is not 'key:value'")
        if not p.instances:
            add(p.id, "instances", "product has no instance")

    _color_problems([(e.id, e.color) for e in (*scene.products, *scene.fixtures, *scene.stores,
                                                *scene.areas)], probs)
    if store_spec(scene.store).layout == "fixtures":
        _fixtures_problems(scene, probs)
    else:
        _stores_problems(scene, probs)
    _floor_problems(scene, probs)


def _instances_adjacent(rects: list[Rect], tol: float = 0.05) -> bool:
    if len(rects) < 2:
        return True
    todo, done = [0], {0}
    while todo:
        i = todo.pop()
        for j in range(len(rects)):
            if j not in done and _rect_gap(rects[i], rects[j]) <= tol:
                done.add(j)
                todo.append(j)
    return len(done) == len(rects)


def _fixtures_problems(scene: Scene, probs: _Problems) -> None:
    add = probs.add
    if scene.stores or scene.areas:
        add(None, "stores", "a fixtures-layout scene (like the Supermarket) has no stores or areas")
    fixtures = {f.id: f for f in scene.fixtures}
    holds: dict[str, set[str]] = {f.id: set() for f in scene.fixtures}
    for p in scene.products:
        if p.store_id or p.area_id:
            add(p.id, "store_id", "products on fixtures have no store_id/area_id")
        f = fixtures.get(p.fixture_id or "")
        if f is None:
            add(p.id, "fixture_id", f"unknown fixture {p.fixture_id!r}")
            continue
        holds[f.id].add(p.id)
        back = (f.front_yaw + 180.0) % 360.0
        for inst in p.instances:
            r = instance_rect(inst.position, inst.size)
            z, h = inst.position[2], inst.size[2]
            if not _inside(r, f.footprint, _POS_TOL):
                add(inst.id, "position", f"instance {r} outside fixture {f.id} footprint {f.footprint}")
            if not any(abs(z - lv) <= _LEVEL_TOL for lv in f.levels):
                add(inst.id, "position", f"z={z} is not a level of {f.id} {f.levels}")
            if z + h > f.height + _LEVEL_TOL:
                add(inst.id, "size", f"top {z + h:.3f} above fixture {f.id} height {f.height}")
            ok_facing = {f.front_yaw % 360.0} | ({back} if "back" in f.approach else set())
            if inst.facing % 360.0 not in ok_facing:
                add(inst.id, "facing", f"facing {inst.facing} not the front ({f.front_yaw}) of {f.id}")
        if len({(i.position[2], i.facing) for i in p.instances}) > 1:
            add(p.id, "instances", "instances of one product are on different levels or faces")
        if not _instances_adjacent([instance_rect(i.position, i.size) for i in p.instances]):
            add(p.id, "instances", "instances of one product do not sit together")
    for f in scene.fixtures:
        if set(f.product_ids) != holds[f.id]:
            missing = sorted(holds[f.id] - set(f.product_ids))
            extra = sorted(set(f.product_ids) - holds[f.id])
            add(f.id, "product_ids", f"product list disagrees with products' fixture_id "
                f"(missing {missing[:5]}, unknown or elsewhere {extra[:5]})")
        if len(f.product_ids) != len(set(f.product_ids)):
            add(f.id, "product_ids", "duplicate product ids")
        if not f.levels or sorted(f.levels) != list(f.levels) or f.levels[-1] >= f.height:
            add(f.id, "levels", f"levels {f.levels} must be ascending and below height {f.height}")
        if "front" not in f.approach or set(f.approach) - {"front", "back"}:
            add(f.id, "approach", f"approach keys {sorted(f.approach)} must be front[, back]")
        if not _inside(f.footprint, scene.layout.bounds):
            add(f.id, "footprint", f"{f.footprint} outside the hall {scene.layout.bounds}")
        for side, pose in f.approach.items():
            if not _faces(pose, _center(f.footprint)):
                add(f.id, f"approach.{side}", f"yaw {pose.yaw} does not face the fixture")
    fl = scene.fixtures
    for i, a in enumerate(fl):
        for b in fl[i + 1:]:
            gap = _rect_gap(a.footprint, b.footprint)
            overlap = (min(a.footprint[2], b.footprint[2]) - max(a.footprint[0], b.footprint[0]) > _EPS
                       and min(a.footprint[3], b.footprint[3]) - max(a.footprint[1], b.footprint[1]) > _EPS)
            if overlap or (_EPS < gap < MIN_AISLE - _EPS):
                add(b.id, "footprint", f"{'overlaps' if overlap else f'aisle {gap:.2f} m to'} {a.id}"
                    f" (fixtures touch or leave >= {MIN_AISLE} m)")


def _stores_problems(scene: Scene, probs: _Problems) -> None:
    add = probs.add
    if scene.fixtures:
        add(None, "fixtures", "a stores-layout scene (like the Home Furnishings Store) has no fixtures")
    stores = {s.id: s for s in scene.stores}
    areas = {a.id: a for a in scene.areas}
    store_products: dict[str, set[str]] = {s: set() for s in stores}
    area_products: dict[str, set[str]] = {a: set() for a in areas}
    for p in scene.products:
        if p.fixture_id:
            add(p.id, "fixture_id", "products in stores have no fixture_id")
        if p.store_id not in stores:
            add(p.id, "store_id", f"unknown store {p.store_id!r}")
            continue
        a = areas.get(p.area_id or "")
        if a is None:
            add(p.id, "area_id", f"unknown area {p.area_id!r}")
            continue
        if a.store_id != p.store_id:
            add(p.id, "area_id", f"area {a.id} belongs to {a.store_id}, not {p.store_id}")
        store_products[p.store_id].add(p.id)
        area_products[a.id].add(p.id)
        for inst in p.instances:
            r = instance_rect(inst.position, inst.size)
            if not _inside(r, a.footprint, _POS_TOL):
                add(inst.id, "position", f"instance {r} outside area {a.id} footprint {a.footprint}")
            if abs(inst.position[2]) > _LEVEL_TOL:
                add(inst.id, "position", f"z={inst.position[2]}: furniture stands on the floor")
        if not _instances_adjacent([instance_rect(i.position, i.size) for i in p.instances]):
            add(p.id, "instances", "instances of one product do not sit together")
    for s in scene.stores:
        if set(s.product_ids) != store_products[s.id]:
            add(s.id, "product_ids", "product list disagrees with products' store_id")
        own_areas = {a.id for a in scene.areas if a.store_id == s.id}
        if set(s.area_ids) != own_areas:
            add(s.id, "area_ids", f"area list {s.area_ids} disagrees with areas' store_id {sorted(own_areas)}")
        if set(s.approach) != {"outside_doorway", "inside_doorway"}:
            add(s.id, "approach", f"approach keys {sorted(s.approach)} must be outside/inside_doorway")
        if not _inside(s.footprint, scene.layout.bounds):
            add(s.id, "footprint", f"{s.footprint} outside the hall {scene.layout.bounds}")
        dw = s.doorway
        width = max(dw[2] - dw[0], dw[3] - dw[1])
        if width < MIN_DOORWAY - _EPS:
            add(s.id, "doorway", f"doorway {width:.2f} m wide, need >= {MIN_DOORWAY}")
        inner = (dw[0] + 0.01, dw[1] + 0.01, dw[2] - 0.01, dw[3] - 0.01)
        for w in scene.layout.walls:
            if _rect_gap(w.footprint, inner) == 0.0 and _overlaps(w.footprint, inner):
                add(s.id, "doorway", f"wall {w.footprint} blocks the doorway {dw}")
        if not any(w.owner == s.id for w in scene.layout.walls):
            add(s.id, "footprint", "store has no walls (Layout.walls with owner = store id)")
        for key, pose in s.approach.items():
            if not _faces(pose, _center(s.footprint), 45.0):
                add(s.id, f"approach.{key}", f"yaw {pose.yaw} does not face into the store")
        inside = s.approach.get("inside_doorway")
        if inside is not None and rect_point_distance(s.footprint, inside.x, inside.y) > 0:
            add(s.id, "approach.inside_doorway", "point is not inside the store")
        outside = s.approach.get("outside_doorway")
        if outside is not None and rect_point_distance(s.footprint, outside.x, outside.y) == 0:
            add(s.id, "approach.outside_doorway", "point is inside the store")
    for a in scene.areas:
        if a.store_id not in stores:
            add(a.id, "store_id", f"unknown store {a.store_id!r}")
            continue
        if not _inside(a.footprint, stores[a.store_id].footprint):
            add(a.id, "footprint", f"{a.footprint} outside store {a.store_id}")
        if set(a.product_ids) != area_products[a.id]:
            add(a.id, "product_ids", "product list disagrees with products' area_id")
        if rect_point_distance(a.footprint, a.approach.x, a.approach.y) > 0:
            add(a.id, "approach", "approach point is not inside the area")
        pts = [i.position for pid in a.product_ids for p in scene.products if p.id == pid
               for i in p.instances]
        if pts:
            c = (sum(q[0] for q in pts) / len(pts), sum(q[1] for q in pts) / len(pts))
            if not _faces(a.approach, c):
                add(a.id, "approach", f"yaw {a.approach.yaw} does not face the area's products")
    for w in scene.layout.walls:
        if w.owner is not None and w.owner not in stores:
            add(None, "layout.walls", f"wall owner {w.owner!r} is not a store")


def _overlaps(a: Rect, b: Rect) -> bool:
    return (min(a[2], b[2]) - max(a[0], b[0]) > _EPS and min(a[3], b[3]) - max(a[1], b[1]) > _EPS)


def _approach_points(scene: Scene) -> list[tuple[str, str, Pose2]]:
    out = [(None, "layout.start", scene.layout.start)]
    out += [(f.id, f"approach.{k}", p) for f in scene.fixtures for k, p in f.approach.items()]
    out += [(s.id, f"approach.{k}", p) for s in scene.stores for k, p in s.approach.items()]
    out += [(a.id, "approach", a.approach) for a in scene.areas]
    return out


def _floor_problems(scene: Scene, probs: _Problems, reach: float = 8.0) -> None:
    """Free floor at approach points / start / waypoints; a connected, clear waypoint graph."""
    add = probs.add
    rects = obstacle_rects(scene)
    arr = np.asarray(rects, dtype=float).reshape(-1, 4)
    bounds = scene.layout.bounds

    def clearance(x, y):
        dx = np.maximum(np.maximum(arr[:, 0] - x, x - arr[:, 2]), 0.0)
        dy = np.maximum(np.maximum(arr[:, 1] - y, y - arr[:, 3]), 0.0)
        return float(np.sqrt(dx * dx + dy * dy).min()) if len(arr) else math.inf

    def in_bounds(x, y):
        return bounds[0] <= x <= bounds[2] and bounds[1] <= y <= bounds[3]

    for w in scene.layout.walls:
        if w.height <= 0:
            add(None, "layout.walls", f"wall {w.footprint} has height {w.height}")
    wps = {w.id: w for w in scene.waypoints}
    for w in scene.waypoints:
        if not in_bounds(w.x, w.y) or clearance(w.x, w.y) < APPROACH_CLEARANCE - _EPS:
            add(w.id, "x", f"waypoint ({w.x}, {w.y}) is not on free floor "
                f"(clearance {clearance(w.x, w.y):.2f} m, need {APPROACH_CLEARANCE})")
        for n in w.neighbors:
            if n not in wps:
                add(w.id, "neighbors", f"unknown waypoint {n!r}")
            elif n == w.id:
                add(w.id, "neighbors", "waypoint lists itself")
            elif w.id not in wps[n].neighbors:
                add(w.id, "neighbors", f"edge to {n!r} is not symmetric")
            elif not (in_bounds(w.x, w.y) and in_bounds(wps[n].x, wps[n].y)):
                continue  # the endpoint off the floor is reported; no clearance to sample
            elif w.id < n:
                c = segment_clearance((w.x, w.y), (wps[n].x, wps[n].y), rects)
                if c < BODY_RADIUS - _EPS:
                    add(w.id, "neighbors", f"edge to {n!r} passes {c:.2f} m from an obstacle")
    if wps:
        start = next(iter(wps))
        seen, todo = {start}, deque([start])
        while todo:
            for n in wps[todo.popleft()].neighbors:
                if n in wps and n not in seen:
                    seen.add(n)
                    todo.append(n)
        if len(seen) != len(wps):
            add(sorted(set(wps) - seen)[0], "neighbors",
                f"waypoint graph is not connected ({len(wps) - len(seen)} unreachable)")
    for rid, field, pose in _approach_points(scene):
        c = clearance(pose.x, pose.y)
        if not in_bounds(pose.x, pose.y) or c < APPROACH_CLEARANCE - _EPS:
            add(rid, field, f"({pose.x}, {pose.y}) is not on free floor "
                f"(clearance {c:.2f} m, need {APPROACH_CLEARANCE})")
            continue
        near = sorted(scene.waypoints, key=lambda w: math.dist((w.x, w.y), (pose.x, pose.y)))
        if not any(math.dist((w.x, w.y), (pose.x, pose.y)) <= reach
                   and segment_clearance((w.x, w.y), (pose.x, pose.y), rects) >= BODY_RADIUS - _EPS
                   for w in near[:6]):
            add(rid, field, f"no waypoint within {reach} m with a clear line to ({pose.x}, {pose.y})")


# ---------------------------------------------------------------- task bank
def check_task_bank(bank: TaskBank, scene: Scene, file: str = "tasks.json") -> None:
    """Cross checks of a task bank against its scene; raises AssetError for the first problem."""
    probs = _Problems(file)
    add = probs.add
    products = {p.id: p for p in scene.products}
    if bank.store != scene.store:
        add(None, "store", f"bank is for {bank.store!r}, scene for {scene.store!r}")
    profiles = {}
    for pr in bank.profiles:
        if pr.id in profiles:
            add(pr.id, "id", "duplicate profile id")
        profiles[pr.id] = pr
        for k, v in pr.big_five.items():
            if not 0.0 <= v <= 1.0:
                add(pr.id, f"big_five.{k}", f"{v} is outside [0, 1]")
    per_profile: dict[str, list] = {pid: [] for pid in profiles}
    seen_tasks: set[str] = set()
    for t in bank.tasks:
        if t.id in seen_tasks:
            add(t.id, "id", "duplicate task id")
        seen_tasks.add(t.id)
        if t.store != scene.store:
            add(t.id, "store", f"task store {t.store!r} is not the scene's {scene.store!r}")
        if t.profile_id not in profiles:
            add(t.id, "profile_id", f"unknown profile {t.profile_id!r}")
        else:
            per_profile[t.profile_id].append(t)
        target = products.get(t.target_product_id)
        if target is None:
            add(t.id, "target_product_id", f"unknown product {t.target_product_id!r}")
            continue
        if target.category != t.category:
            add(t.id, "category", f"{t.category!r} is not the target's category {target.category!r}")
        missing = sorted(set(t.required_tags) - set(target.tags))
        if missing:
            add(t.id, "required_tags", f"target {target.id} lacks required tags {missing}")
        clash = sorted(set(t.avoided_tags) & set(target.tags))
        if clash:
            add(t.id, "avoided_tags", f"target {target.id} carries avoided tags {clash}")
        if not 1 <= len(t.required_tags) <= 3:
            add(t.id, "required_tags", f"{len(t.required_tags)} tags, need 1-3")
        if len(t.avoided_tags) > 2:
            add(t.id, "avoided_tags", f"{len(t.avoided_tags)} tags, need 0-2")
        if not t.budget > target.price:
            add(t.id, "budget", f"budget {t.budget} is not above the target price {target.price}")
        eligible = eligible_products(scene.products, t.category, t.required_tags, t.avoided_tags)
        expected_budget = compute_budget(target.price, [p.price for p in eligible], t.budget_tier)
        if abs(expected_budget - t.budget) > 0.005:
            add(t.id, "budget", f"budget {t.budget} does not follow the {t.budget_tier} rule "
                f"(expected {expected_budget})")
        unknown = [r for r in t.reference_set if r not in products]
        if unknown:
            add(t.id, "reference_set", f"unknown products {unknown[:5]}")
        if target.id not in t.reference_set:
            add(t.id, "reference_set", f"target {target.id} is not in its reference set")
        expected = reference_set(scene.products, t.category, t.required_tags, t.avoided_tags, t.budget)
        if sorted(expected) != sorted(t.reference_set):
            add(t.id, "reference_set", f"{sorted(t.reference_set)} differs from the recomputed "
                f"{sorted(expected)}")
        if not t.disclosure or t.disclosure[0].kind not in ("category", "use"):
            add(t.id, "disclosure", "disclosure must open with a 'category' or 'use' item")
        else:
            opening = True
            for item in t.disclosure:
                if item.kind in ("category", "use"):
                    if not opening:
                        add(t.id, "disclosure", f"{item.kind!r} item after budget/avoid/need items")
                else:
                    opening = False
    for pid, tasks in per_profile.items():
        if len(tasks) != TASKS_PER_PROFILE:
            add(pid, "tasks", f"profile has {len(tasks)} tasks, need {TASKS_PER_PROFILE}")
        elif sorted(t.subset for t in tasks) != list(range(N_SUBSETS)):
            add(pid, "subset", f"subsets {sorted(t.subset for t in tasks)} must be 0..3 once each")
    probs.raise_first()


# ---------------------------------------------------------------- statistics
def scene_stats(scene: Scene, bank: TaskBank | None = None) -> dict[str, int]:
    """Table 2 row of one store (profiles/tasks only with a bank)."""
    stats = {
        "products": len(scene.products),
        "instances": sum(len(p.instances) for p in scene.products),
        "nav_targets": len(scene.fixtures) + len(scene.stores) + len(scene.areas),
        "waypoints": len(scene.waypoints),
    }
    if bank is not None:
        stats["profiles"] = len(bank.profiles)
        stats["tasks"] = len(bank.tasks)
    return stats


def check_table2(scene: Scene, bank: TaskBank | None = None, file: str = "") -> None:
    """The store's data must reproduce the counts its spec expects: SituRecBench Table 2 and the
    App. A.3 composition for the paper's stores (``expected`` in their store.json)."""
    probs = _Problems(file)
    expected = store_spec(scene.store).expected
    source = "Table 2 says" if scene.store in PAPER_STORES else "store.json expects"
    for key, value in scene_stats(scene, bank).items():
        if key in expected and value != expected[key]:
            probs.add(None, key, f"{value} {key}, {source} {expected[key]}")
    if "fixture_kinds" in expected:
        kinds = dict(Counter(f.kind for f in scene.fixtures))
        if kinds != expected["fixture_kinds"]:
            probs.add(None, "fixtures", f"fixture kinds {kinds}, expected {expected['fixture_kinds']}")
    if "store_names" in expected:
        names = tuple(sorted(s.name for s in scene.stores))
        if names != tuple(sorted(expected["store_names"])):
            probs.add(None, "stores", f"stores {names}, expected {tuple(expected['store_names'])}")
    if "areas" in expected:
        if len(scene.areas) != expected["areas"]:
            probs.add(None, "areas", f"{len(scene.areas)} areas, expected {expected['areas']}")
        for s in scene.stores:
            if not 3 <= len(s.area_ids) <= 4:
                probs.add(s.id, "area_ids", f"{len(s.area_ids)} areas, need 3-4")
    probs.raise_first()
