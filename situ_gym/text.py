"""The static text of the assistant's observation: catalog, location index, fixed targets.

Formats (agents parse them; keep them stable):

    Catalog (id | name | category | price | location | attributes):
    sm_p001 | Harbor Catch Plain Frozen Cod Fillets, 1 lb | frozen fish | $9.99 | Upright Freezer 2 (front) | allergen:fish; packaging:bag
    Navigation targets (handle | name | kind | position | approach):
    [3] Upright Freezer 2 | upright_freezer | (12.0, 4.5) | nearest, front
    [2] Light Logic | store | (30.0, 18.0) | outside_doorway, inside_doorway
    [2a] Reading Nook | area of Light Logic | (31.5, 20.0) | area

Positions are the target's approach point in metres (the layout map's coordinates), so
a text-only assistant can plan routes from its pose.
"""

from __future__ import annotations

from situ_gym.scene.index import SceneIndex

__all__ = ["CATALOG_COLUMNS", "catalog_text", "nav_targets_text", "product_side", "approach_options", "nav_position"]


def product_side(index: SceneIndex, product_id: str) -> str | None:
    """Which face of its fixture a Supermarket product is on ("front"/"back"), if any."""
    product = index.products[product_id]
    if product.fixture_id is None or not product.instances:
        return None
    fixture = index.fixtures[product.fixture_id]
    delta = abs((product.instances[0].facing - fixture.front_yaw + 180.0) % 360.0 - 180.0)
    return "front" if delta < 90.0 else "back"


def _location(index: SceneIndex, product_id: str) -> str:
    side = product_side(index, product_id)
    text = index.location_text(product_id)
    return f"{text} ({side})" if side else text


CATALOG_COLUMNS = "(id | name | category | price | location | attributes)"


def catalog_text(index: SceneIndex, product_ids: list[str] | None = None, *, title: str = "Catalog") -> str:
    """``title`` and one line per product (``product_ids`` in that order; default the whole catalog)."""
    lines = [f"{title} {CATALOG_COLUMNS}:"]
    for pid in index.products if product_ids is None else product_ids:
        p = index.products[pid]
        tags = "; ".join(p.tags)
        lines.append(f"{pid} | {p.name} | {p.category} | ${p.price:,.2f} | {_location(index, pid)} | {tags}")
    return "\n".join(lines)


def approach_options(index: SceneIndex, entity_id: str) -> list[str]:
    kind = index.kind(entity_id)
    if kind == "fixture":
        return ["nearest"] + [s for s in ("front", "back") if s in index.fixtures[entity_id].approach]
    if kind == "store":
        return [s for s in ("outside_doorway", "inside_doorway") if s in index.stores[entity_id].approach]
    return ["area"]


def nav_position(index: SceneIndex, entity_id: str) -> tuple[float, float]:
    """A navigation target's position in the index: its (front) approach point, or a store's doorway, in metres."""
    kind = index.kind(entity_id)
    if kind == "fixture":
        fixture = index.fixtures[entity_id]
        pose = fixture.approach.get("front") or next(iter(fixture.approach.values()))
    elif kind == "store":
        pose = index.stores[entity_id].approach["outside_doorway"]
    else:
        pose = index.areas[entity_id].approach
    return pose.x, pose.y


def nav_targets_text(index: SceneIndex, handles: dict[str, str]) -> str:
    """One line per fixed navigation handle of a role (handle -> entity id)."""
    lines = ["Navigation targets (handle | name | kind | position | approach):"]
    for handle, eid in handles.items():
        kind = index.kind(eid)
        if kind == "fixture":
            kind_text = index.fixtures[eid].kind
        elif kind == "area":
            kind_text = f"area of {index.name(index.areas[eid].store_id)}"
        else:
            kind_text = kind
        x, y = nav_position(index, eid)
        options = ", ".join(approach_options(index, eid))
        lines.append(f"[{handle}] {index.name(eid)} | {kind_text} | ({x:.1f}, {y:.1f}) | {options}")
    return "\n".join(lines)
