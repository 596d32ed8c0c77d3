"""Shared helpers of the store generators: rounding, walls, lanes of facings, waypoint graphs."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from situ_gym.scene.model import Rect, Wall, Waypoint
from situ_gym.scene.validate import rect_point_distance, segment_clearance

__all__ = [
    "r3",
    "outer_walls",
    "Lane",
    "pack_lanes",
    "justify",
    "connect_waypoints",
    "min_clearance",
]


def r3(v: float) -> float:
    """Fixed rounding of every float written to disk (byte-identical output)."""
    out = round(float(v), 3)
    return 0.0 if out == 0 else out


def outer_walls(bounds: Rect, thickness: float = 0.2, height: float = 4.0) -> list[Wall]:
    """Four boxes just outside the walkable hall."""
    x0, y0, x1, y1 = bounds
    t = thickness
    rects = [
        (x0 - t, y0 - t, x1 + t, y0),
        (x0 - t, y1, x1 + t, y1 + t),
        (x0 - t, y0, x0, y1),
        (x1, y0, x1 + t, y1),
    ]
    return [Wall(footprint=tuple(r3(v) for v in r), height=height, owner=None) for r in rects]


@dataclass
class Lane:
    """A straight run of facings on one level of a fixture (or one row of a display area)."""

    z: float
    clearance: float  # tallest product that fits
    max_depth: float
    length: float
    key: object = None  # caller's tag (face, level index ...)
    used: float = 0.0
    items: list = field(default_factory=list)  # (item, count, start offset)


def pack_lanes(items, lanes: list[Lane], *, run, height, depth, gap: float) -> None:
    """Put each item's whole run in one lane: the least-filled lane where it fits.

    ``run(item)``, ``height(item)``, ``depth(item)`` give an item's run length and box.
    Raises ValueError when an item fits nowhere.
    """
    for item in items:
        need = run(item)
        best = None
        for lane in lanes:
            extra = need + (gap if lane.items else 0.0)
            if (height(item) <= lane.clearance + 1e-9 and depth(item) <= lane.max_depth + 1e-9
                    and lane.used + extra <= lane.length + 1e-9):
                if best is None or lane.used < best.used - 1e-9:
                    best = lane
        if best is None:
            raise ValueError(f"no lane has room for {item!r} (run {need:.2f} m)")
        start = best.used + (gap if best.items else 0.0)
        best.items.append((item, start))
        best.used = start + need


def justify(lane: Lane, run) -> list[tuple[object, float]]:
    """Spread a packed lane's runs evenly over its length: (item, start offset) pairs."""
    if not lane.items:
        return []
    runs = [run(item) for item, _ in lane.items]
    gap = max(0.0, lane.length - sum(runs)) / (len(runs) + 1)
    out, pos = [], gap
    for (item, _), r in zip(lane.items, runs, strict=True):
        out.append((item, pos))
        pos += r + gap
    return out


def min_clearance(x: float, y: float, rects: list[Rect]) -> float:
    return min((rect_point_distance(r, x, y) for r in rects), default=math.inf)


def connect_waypoints(points: list[tuple[str, float, float]], rects: list[Rect], *,
                      max_dist: float, clearance: float = 0.35,
                      skip_dist: float = 0.6) -> list[Waypoint]:
    """Undirected graph: join pairs closer than ``max_dist`` whose segment keeps ``clearance``
    from every obstacle and passes no third waypoint closer than ``skip_dist``."""
    nbrs: dict[str, list[str]] = {pid: [] for pid, _, _ in points}
    for i, (a, ax, ay) in enumerate(points):
        for b, bx, by in points[i + 1:]:
            d = math.dist((ax, ay), (bx, by))
            if d > max_dist:
                continue
            if any(_point_segment_distance((cx, cy), (ax, ay), (bx, by)) < skip_dist
                   for c, cx, cy in points if c not in (a, b)):
                continue
            if segment_clearance((ax, ay), (bx, by), rects) < clearance:
                continue
            nbrs[a].append(b)
            nbrs[b].append(a)
    return [Waypoint(id=pid, x=r3(x), y=r3(y), neighbors=sorted(nbrs[pid])) for pid, x, y in points]


def _point_segment_distance(c, a, b) -> float:
    ax, ay = a
    bx, by = b
    dx, dy = bx - ax, by - ay
    L2 = dx * dx + dy * dy
    t = 0.0 if L2 == 0 else max(0.0, min(1.0, ((c[0] - ax) * dx + (c[1] - ay) * dy) / L2))
    return math.dist(c, (ax + t * dx, ay + t * dy))
