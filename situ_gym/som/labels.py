"""Role-specific SoM handles (paper App. B.2) and the textual caption of a view.

User: products ``1, 2, ...``; fixtures/stores ``A .. Z, AA, ...``; areas ``A1`` (store
letter + area number within the store). Assistant: products ``a .. z, aa, ...``;
fixtures/stores ``1, 2, ...``; areas ``1a`` (store number + area letter).

Fixture/store/area handles are fixed for a scene. The assistant numbers them in scene
order; the user letters them by a permutation drawn from an RNG seeded by the scene
name, chosen so that no entity has the same position in both orders (a derangement):
one role's label never gives away the other's.
"""

from __future__ import annotations

import hashlib
import re
import weakref

import numpy as np

from situ_gym.scene.index import SceneIndex
from situ_gym.som.types import ROLES, RoleView

__all__ = [
    "check_role",
    "letters",
    "product_label",
    "fixed_handles",
    "fixed_handles_by_id",
    "caption",
]

_CACHE: weakref.WeakKeyDictionary[SceneIndex, dict[str, dict[str, str]]] = (
    weakref.WeakKeyDictionary()
)


def check_role(role: str) -> str:
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}, got {role!r}")
    return role


def letters(i: int, *, upper: bool = True) -> str:
    """Bijective base-26 label of a 0-based index: 0 -> A, 25 -> Z, 26 -> AA, 27 -> AB.

    >>> [letters(i) for i in (0, 25, 26, 701, 702)]
    ['A', 'Z', 'AA', 'ZZ', 'AAA']
    """
    if i < 0:
        raise ValueError(f"label index must be >= 0, got {i!r}")
    out = ""
    n = i + 1
    while n > 0:
        n, r = divmod(n - 1, 26)
        out = chr(ord("A") + r) + out
    return out if upper else out.lower()


def product_label(i: int, role: str) -> str:
    """Handle of the ``i``-th (0-based) product of an observation for ``role``.

    >>> product_label(0, "user"), product_label(0, "assistant"), product_label(27, "assistant")
    ('1', 'a', 'ab')
    """
    check_role(role)
    if i < 0:
        raise ValueError(f"product index must be >= 0, got {i!r}")
    return str(i + 1) if role == "user" else letters(i, upper=False)


def _rng(scene_name: str, salt: str) -> np.random.Generator:
    digest = hashlib.sha256(f"situ_gym.som:{scene_name}:{salt}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def _derangement(n: int, rng: np.random.Generator) -> list[int]:
    """A permutation of range(n) with no fixed point (identity-free for n >= 2)."""
    if n < 2:
        return list(range(n))
    while True:  # expected ~e draws
        perm = rng.permutation(n)
        if not np.any(perm == np.arange(n)):
            return [int(v) for v in perm]


def _build(index: SceneIndex) -> dict[str, dict[str, str]]:
    scene = index.scene
    buildings = list(index.fixtures) + list(index.stores)
    user_pos = _derangement(len(buildings), _rng(scene.name, "buildings"))
    out: dict[str, dict[str, str]] = {"user": {}, "assistant": {}}  # handle -> id
    store_handle: dict[str, dict[str, str]] = {"user": {}, "assistant": {}}  # id -> handle
    for i, eid in enumerate(buildings):
        for role, handle in (("assistant", str(i + 1)), ("user", letters(user_pos[i]))):
            out[role][handle] = eid
            store_handle[role][eid] = handle

    by_store: dict[str, list[str]] = {}
    for area in scene.areas:
        if area.store_id not in index.stores:
            raise ValueError(f"area {area.id!r} names unknown store {area.store_id!r}")
        by_store.setdefault(area.store_id, []).append(area.id)
    for store_id in index.stores:
        area_ids = by_store.get(store_id, [])
        perm = _derangement(len(area_ids), _rng(scene.name, f"areas:{store_id}"))
        for j, aid in enumerate(area_ids):
            out["assistant"][store_handle["assistant"][store_id] + letters(j, upper=False)] = aid
            out["user"][store_handle["user"][store_id] + str(perm[j] + 1)] = aid
    return out


def _natural_key(handle: str) -> tuple:
    """Sort key: letter runs by (length, text), digit runs by value ("B" < "AA", "2" < "10")."""
    parts = re.findall(r"[A-Za-z]+|\d+", handle)
    return tuple((0, int(p), "") if p.isdigit() else (1, len(p), p) for p in parts)


def _cached(index: SceneIndex) -> dict[str, dict[str, str]]:
    maps = _CACHE.get(index)
    if maps is None:
        # Sorted by handle so that the dict order never reveals the other role's order.
        fwd = {
            r: dict(sorted(m.items(), key=lambda kv: _natural_key(kv[0])))
            for r, m in _build(index).items()
        }
        maps = {**fwd, **{f"{r}:by_id": {v: k for k, v in fwd[r].items()} for r in ROLES}}
        _CACHE[index] = maps
    return maps


def fixed_handles(index: SceneIndex, role: str) -> dict[str, str]:
    """The role's fixed fixture/store/area handles: ``{handle: entity_id}`` (a fresh copy)."""
    return dict(_cached(index)[check_role(role)])


def fixed_handles_by_id(index: SceneIndex, role: str) -> dict[str, str]:
    """The inverse of :func:`fixed_handles`: ``{entity_id: handle}`` (a fresh copy)."""
    return dict(_cached(index)[f"{check_role(role)}:by_id"])


_SECTIONS = (
    ("product", "Visible products:"),
    ("fixture", "Visible fixtures:"),
    ("store", "Visible stores:"),
    ("area", "Visible areas:"),
)


def caption(
    view: RoleView,
    index: SceneIndex,
    *,
    held_item: str | None = None,
    cart: list[str] | tuple[str, ...] = (),
) -> str:
    """The textual caption of one role's view, in that role's handles.

    Lists what is marked (products with distance, fixtures/stores with their approach
    options, areas with their store), then the held item and the cart. Uses only the
    view and the public scene; no task data.
    """
    lines: list[str] = []
    for kind, title in _SECTIONS:
        rows = [v for v in view.visible if v.kind == kind]
        if not rows:
            continue
        lines.append(title)
        for v in rows:
            if kind == "product":
                lines.append(f"[{v.handle}] {v.name} ({v.distance:.1f} m)")
            elif kind == "fixture":
                fixture = index.fixtures[v.entity_id]
                options = ["nearest"] + [a for a in ("front", "back") if a in fixture.approach]
                lines.append(f"[{v.handle}] {v.name} (approach: {', '.join(options)})")
            elif kind == "store":
                store = index.stores[v.entity_id]
                options = [a for a in ("outside_doorway", "inside_doorway") if a in store.approach]
                lines.append(f"[{v.handle}] {v.name} (approach: {', '.join(options)})")
            else:
                area = index.areas[v.entity_id]
                lines.append(f"[{v.handle}] {v.name} ({index.name(area.store_id)})")
    if held_item is None:
        lines.append("Holding: nothing")
    else:
        handle = view.handle_of(held_item)
        name = index.name(held_item)
        lines.append(f"Holding: [{handle}] {name}" if handle else f"Holding: {name}")
    lines.append("Cart: " + ("; ".join(index.name(pid) for pid in cart) if cart else "empty"))
    return "\n".join(lines)
