"""Route guidance for the plain assistant: the next visible step toward a named place.

The final goal may be out of sight; the step the shopper is asked to take must name a
target visible now (the assistant's handles from the caption), or be a free movement
(a turn, a few steps) that brings the goal into view.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from agents.obs_text import Caption, Marked, NavTarget

__all__ = ["Step", "product_distances", "split_location", "supermarket_step", "home_step", "turn_toward"]

_DISTANCE = re.compile(r"^\[([^\]]+)\] .* \(([0-9.]+) m\)$")
LANDMARK_GAIN = 2.0  # metres a waypoint must bring the shopper closer to be worth it
STORE_HALF_WIDTH = 6.0
AHEAD = 60  # degrees either side of the facing direction that count as "ahead"
AT_FIXTURE = 1.0  # metres from a fixture's front approach point that count as standing there  # metres either side of a store's doorway axis that count as "inside"


@dataclass(frozen=True)
class Step:
    """One move toward a goal: the expected tool call and how to say it."""

    call: dict[str, Any]
    waypoint: str | None  # Home Furnishings: the visible store/area handle of this hop
    approach: str  # Home Furnishings: target_approach of this hop
    words: str  # plain instruction, names only (never handles)


def product_distances(visible_text: str) -> dict[str, float]:
    """Product handle -> distance in metres, from the caption lines "[a] Name (2.3 m)"."""
    out: dict[str, float] = {}
    for line in visible_text.splitlines():
        m = _DISTANCE.match(line.strip())
        if m:
            out.setdefault(m.group(1), float(m.group(2)))
    return out


def split_location(location: str) -> tuple[str, str | None]:
    """("Shelf 1: cereal, oats", "front") or ("Light Logic", "Light Logic - Floor Lamps")."""
    if " / " in location:
        store, _, area = location.partition(" / ")
        return store.strip(), area.strip()
    m = re.match(r"^(.*) \((front|back)\)$", location)
    return (m.group(1), m.group(2)) if m else (location, None)


def short_place(name: str) -> str:
    """"Shelf 3: jam, coffee, tea" -> "Shelf 3"; other names unchanged."""
    return name.split(":", 1)[0].strip()


def turn_toward(pose: tuple[float, float, float], x: float, y: float) -> tuple[str, int]:
    """Direction and whole degrees (1..180) to face (x, y); yaw grows to the left."""
    px, py, yaw = pose
    bearing = math.degrees(math.atan2(y - py, x - px))
    delta = (bearing - yaw + 180.0) % 360.0 - 180.0
    direction = "left" if delta >= 0 else "right"
    return direction, int(min(180, max(1, round(abs(delta)))))


def _search(pose, target: NavTarget, name: str) -> Step:
    direction, angle = turn_toward(pose, target.x, target.y)
    if angle < 20:
        return Step({"name": "move_forward", "arguments": {"distance": "medium"}}, None, "",
                    f"walk straight ahead for a few steps toward {name}")
    return Step({"name": "turn", "arguments": {"direction": direction, "angle": angle}}, None, "",
                f"turn to your {direction} (about {angle} degrees) so that {name} comes into view")


def _visible(marks: list[Marked], name: str) -> Marked | None:
    return next((m for m in marks if m.name == name), None)


def _landmark(pose, marks: list[Marked], targets: list[NavTarget], goal: NavTarget) -> tuple[Marked, NavTarget] | None:
    """The visible place nearest the goal, if walking there brings the shopper clearly closer."""
    by_name = {t.name: t for t in targets}
    here = math.hypot(goal.x - pose[0], goal.y - pose[1])
    best = None
    for m in marks:
        t = by_name.get(m.name)
        if t is None or t.name == goal.name:
            continue
        gap = math.hypot(goal.x - t.x, goal.y - t.y)
        if gap < here - LANDMARK_GAIN and (best is None or gap < best[0]):
            best = (gap, m, t)
    return (best[1], best[2]) if best else None


def _far_face(pose, caption: Caption, targets: list[NavTarget], goal: NavTarget) -> Marked | None:
    """The fixture whose front the shopper stands at, when the goal lies beyond it (ahead,
    out of sight) and its back face can be reached."""
    by_name = {t.name: t for t in targets}
    if turn_toward(pose, goal.x, goal.y)[1] > AHEAD:
        return None
    for m in caption.fixtures:
        t = by_name.get(m.name)
        if t is not None and "back" in m.approaches and math.hypot(t.x - pose[0], t.y - pose[1]) < AT_FIXTURE:
            return m
    return None


def supermarket_step(pose, caption: Caption, targets: list[NavTarget], fixture: NavTarget, side: str | None) -> Step:
    """Walk to the product's fixture (its side when the caption offers it), else toward it."""
    short = short_place(fixture.name)
    seen = _visible(caption.fixtures, fixture.name)
    if seen is None:
        other_side = _far_face(pose, caption, targets, fixture)
        if other_side is not None:
            call = {"name": "move_to_fixture", "arguments": {"fixture": other_side.handle, "approach": "back"}}
            return Step(call, None, "", f"go round to the back of {short_place(other_side.name)}; "
                                        f"{short} should be in sight from that side")
        hop = _landmark(pose, caption.fixtures, targets, fixture)
        if hop is not None:
            call = {"name": "move_to_fixture", "arguments": {"fixture": hop[0].handle, "approach": "nearest"}}
            return Step(call, None, "", f"head toward {short_place(hop[1].name)} first; {short} is further on from there")
        return _search(pose, fixture, short)
    approach = side if side in seen.approaches else "nearest"
    where = f" and stand at its {side} side" if approach == side else ""
    call = {"name": "move_to_fixture", "arguments": {"fixture": seen.handle, "approach": approach}}
    return Step(call, None, "", f"walk over to {short}{where}")


def _inside(pose, store: NavTarget, areas: list[NavTarget]) -> bool:
    if not areas:
        return False
    ax = sum(a.x for a in areas) / len(areas) - store.x
    ay = sum(a.y for a in areas) / len(areas) - store.y
    norm = math.hypot(ax, ay) or 1.0
    ux, uy = ax / norm, ay / norm
    dx, dy = pose[0] - store.x, pose[1] - store.y
    along = dx * ux + dy * uy
    across = abs(-dx * uy + dy * ux)
    return along > 0.5 and across < STORE_HALF_WIDTH


def home_step(pose, caption: Caption, targets: list[NavTarget], store_name: str, area_name: str | None) -> Step:
    """Into the product's store, then its display area; out of any other store first."""
    stores = {t.name: t for t in targets if t.kind == "store"}
    areas_of = {s: [t for t in targets if t.kind == f"area of {s}"] for s in stores}
    store = stores.get(store_name)
    if area_name is not None:
        area = _visible(caption.areas, area_name)
        if area is not None:
            return Step({"name": "move_to_area", "arguments": {"area": area.handle}}, area.handle, "area",
                        f"go over to the {area_name} display")
    if store is None:
        raise ValueError(f"unknown store {store_name!r}")
    if _inside(pose, store, areas_of[store_name]):
        goal = next((t for t in areas_of[store_name] if t.name == area_name), None) or store
        return _search(pose, goal, goal.name)
    for other, target in stores.items():
        if other != store_name and _inside(pose, target, areas_of[other]):
            seen = _visible(caption.stores, other)
            if seen is not None:
                call = {"name": "move_to_store", "arguments": {"store": seen.handle, "approach": "outside_doorway"}}
                return Step(call, seen.handle, "outside_doorway",
                            f"step back out of {other} through its doorway, since {store_name} is elsewhere")
            return _search(pose, target, f"the doorway of {other}")
    seen = _visible(caption.stores, store_name)
    if seen is not None:
        call = {"name": "move_to_store", "arguments": {"store": seen.handle, "approach": "inside_doorway"}}
        return Step(call, seen.handle, "inside_doorway", f"walk into {store_name}")
    hop = _landmark(pose, caption.stores, targets, store)
    if hop is not None:
        call = {"name": "move_to_store", "arguments": {"store": hop[0].handle, "approach": "outside_doorway"}}
        return Step(call, hop[0].handle, "outside_doorway",
                    f"walk along to the front of {hop[1].name}; {store_name} is further on from there")
    return _search(pose, store, store_name)
