"""2D collision of the user's body disc against the scene's obstacles (plan view).

Obstacles are axis-aligned rectangles: walls (storefront walls keep their doorway gaps),
fixture footprints and, in the Home Furnishings store, furniture instances; the hall
bounds enclose everything. Straight moves are swept in small steps and refined by
bisection, so the reported displacement is the distance actually walked.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from situ_gym.scene.model import Scene
from situ_gym.stores import store_spec

__all__ = ["Obstacles", "obstacles_from_scene", "clearance", "sweep"]


@dataclass(frozen=True)
class Obstacles:
    rects: np.ndarray  # (M, 4) xmin, ymin, xmax, ymax
    names: tuple[str, ...]  # what the user bumps into, e.g. "Shelf 3", "the wall"
    bounds: tuple[float, float, float, float]


def obstacles_from_scene(scene: Scene) -> Obstacles:
    """Every solid rectangle of the scene with a human-readable name."""
    rects: list[tuple[float, float, float, float]] = []
    names: list[str] = []
    stores = {s.id: s.name for s in scene.stores}
    for wall in scene.layout.walls:
        rects.append(tuple(wall.footprint))
        names.append(f"the wall of {stores[wall.owner]}" if wall.owner in stores else "the wall")
    for fx in scene.fixtures:
        rects.append(tuple(fx.footprint))
        names.append(fx.name.split(":")[0].strip())  # "Shelf 3", not its category list
    if store_spec(scene.store).products_block:
        for p in scene.products:
            for inst in p.instances:
                x, y, _ = inst.position
                sx, sy, _ = inst.size
                rects.append((x - sx / 2, y - sy / 2, x + sx / 2, y + sy / 2))
                names.append(p.name)
    arr = np.array(rects, np.float64).reshape(-1, 4)
    return Obstacles(arr, tuple(names), tuple(float(v) for v in scene.layout.bounds))


def clearance(points: np.ndarray, obs: Obstacles) -> tuple[np.ndarray, np.ndarray]:
    """Distance from each point (S, 2) to the nearest obstacle or hall edge, and its index.

    The index is -1 for the hall bounds. Points inside a rectangle have clearance 0;
    points outside the hall have negative clearance.
    """
    pts = np.asarray(points, np.float64).reshape(-1, 2)
    bx0, by0, bx1, by1 = obs.bounds
    wall = np.minimum.reduce([pts[:, 0] - bx0, bx1 - pts[:, 0], pts[:, 1] - by0, by1 - pts[:, 1]])
    if len(obs.rects) == 0:
        return wall, np.full(len(pts), -1)
    r = obs.rects
    dx = np.maximum(np.maximum(r[None, :, 0] - pts[:, None, 0], pts[:, None, 0] - r[None, :, 2]), 0.0)
    dy = np.maximum(np.maximum(r[None, :, 1] - pts[:, None, 1], pts[:, None, 1] - r[None, :, 3]), 0.0)
    d = np.hypot(dx, dy)
    k = d.argmin(axis=1)
    best = d[np.arange(len(pts)), k]
    use_wall = wall < best
    return np.where(use_wall, wall, best), np.where(use_wall, -1, k)


def sweep(
    obs: Obstacles, start: tuple[float, float], heading_deg: float, distance: float, radius: float, step: float = 0.02
) -> tuple[float, int | None]:
    """Walk up to ``distance`` metres along a heading; return (walked, blocker index or None).

    The body is blocked where its clearance would drop below ``radius`` (or below the
    starting clearance, so a body already touching something can still step away).
    ``blocker`` is -1 for the hall edge.
    """
    if distance <= 0:
        return 0.0, None
    direction = np.array([np.cos(np.radians(heading_deg)), np.sin(np.radians(heading_deg))])
    origin = np.asarray(start, np.float64)
    c0 = float(clearance(origin[None], obs)[0][0])
    limit = min(radius, c0) - 1e-9
    ts = np.append(np.arange(step, distance, step), distance)
    clear, which = clearance(origin + ts[:, None] * direction, obs)
    bad = np.nonzero(clear < limit)[0]
    if len(bad) == 0:
        return float(distance), None
    k = int(bad[0])
    lo, hi = (ts[k - 1] if k else 0.0), ts[k]
    for _ in range(20):  # bisection to sub-millimetre
        mid = 0.5 * (lo + hi)
        if clearance((origin + mid * direction)[None], obs)[0][0] < limit:
            hi = mid
        else:
            lo = mid
    return float(lo), int(which[k])
