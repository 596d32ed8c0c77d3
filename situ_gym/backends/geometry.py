"""A scene as axis-aligned boxes and floor/ceiling quads, with per-face colours.

Everything the embedded renderer draws is built here once per scene: fixture parts
(shelf uprights, boards, back panels, freezer walls, door mullions ...), walls, store
sign bands and lintels, the products, and flat quads on the floor (store floors,
display-area rugs, soft contact shadows under furniture) and the ceiling (light panels).

Shelf products are drawn as stocked rows: a run of evenly spaced facings of one
product on one board becomes one box reaching back to the fixture's panel and widened
by whole facings into half of the free board space beside it, its front textured with
the product's package art repeated once per facing (:mod:`situ_gym.backends.appearance`). Furniture and other floor-standing products
take their colour from their colour label and a pattern from their material label.

The pieces live in their own modules: the data and the builder in
:mod:`situ_gym.backends.mesh`, products in :mod:`situ_gym.backends.stock`, fixtures and
storefronts in :mod:`situ_gym.backends.fixture_parts`.
"""

from __future__ import annotations

import numpy as np

from situ_gym.backends.fixture_parts import fixture_parts, store_parts
from situ_gym.backends.mesh import (  # noqa: F401 - the renderer's names
    CEILING_RGB,
    CULL_KINDS,
    FACE_SHADE,
    FLOOR_RGB,
    GLASS_TINT,
    LIGHT_RGB,
    WALL_RGB,
    WOOD_RGB,
    FaceTextures,
    MeshBuilder,
    SceneGeometry,
    hash01,
    mix,
    yaw_axis,
)
from situ_gym.backends.stock import (
    add_floor_product,
    add_furniture,
    add_shelf_row,
    facing_rows,
    fill_boards,
    instance_box,
)
from situ_gym.scene.model import FLOOR_COLOR, WALL_COLOR, Instance, Scene

__all__ = ["SceneGeometry", "FaceTextures", "build_geometry", "face_entity_table", "yaw_axis", "CULL_KINDS",
           "FACE_SHADE"]


def build_geometry(scene: Scene) -> SceneGeometry:
    """Turn a scene into boxes and quads with colours and textures (pure function of the scene)."""
    b = MeshBuilder()
    layout = scene.layout
    by_fixture: dict[str, list[Instance]] = {}
    for p in scene.products:
        if p.fixture_id is not None:
            by_fixture.setdefault(p.fixture_id, []).extend(p.instances)
    fixtures = {f.id: f for f in scene.fixtures}
    panels = {fx.id: fixture_parts(b, fx, by_fixture.get(fx.id, [])) for fx in scene.fixtures}
    stores = {s.id: s for s in scene.stores}
    for wall in layout.walls:
        x0, y0, x1, y1 = wall.footprint
        if wall.owner is not None and wall.owner in stores:
            st = stores[wall.owner]
            rgb, seg = mix(st.color, WALL_RGB, 0.82), st.color  # a hint of the store colour
        else:
            rgb, seg = WALL_RGB, WALL_COLOR
        b.box((x0, y0, 0.0), (x1, y1, wall.height), rgb, seg, label=f"wall:{wall.owner}")
    for st in scene.stores:
        store_parts(b, st, layout.walls)
    tint_cache: dict[int, np.ndarray] = {}
    standing: list[Instance] = []
    rows_by_fixture: dict[str, list] = {}
    for p in scene.products:
        fx = fixtures.get(p.fixture_id) if p.fixture_id else None
        if fx is None:
            for inst in p.instances:
                if not add_furniture(b, p, inst):
                    add_floor_product(b, p, inst)
                if inst.position[2] < 0.02:
                    standing.append(inst)
            continue
        rows_by_fixture.setdefault(fx.id, []).extend((p, row) for row in facing_rows(p.instances))
    for fx_id, rows in rows_by_fixture.items():
        fx = fixtures[fx_id]
        tint = GLASS_TINT if fx.kind in ("upright_freezer", "chest_freezer") else None
        for p, row in fill_boards(fx, rows, panels.get(fx_id)):
            add_shelf_row(b, p, row, tint, panels.get(fx_id), tint_cache)

    ceiling = max([w.height for w in layout.walls] + [s.wall_height + 0.8 for s in scene.stores] + [3.6])
    bx0, by0, bx1, by1 = layout.bounds
    pad = 0.5  # floor and ceiling run under the outer walls
    rect = (bx0 - pad, by0 - pad, bx1 + pad, by1 + pad)
    b.quad(rect, 0.0, FLOOR_RGB, FLOOR_COLOR, base=True)
    b.quad(rect, ceiling, CEILING_RGB, WALL_COLOR, up=False, base=True)
    floors = []  # (rect, rgb, seg) in drawing order: what a shadow darkens
    for st in scene.stores:
        wood = mix(WOOD_RGB, (235, 220, 200), 0.45 + 0.3 * hash01(st.id))
        b.quad(st.footprint, 0.0, wood, FLOOR_COLOR)
        floors.append((st.footprint, wood, FLOOR_COLOR))
    for area in scene.areas:
        rug = mix(area.color, (222, 212, 192), 0.8)  # a muted rug: the products stand out
        b.quad(area.footprint, 0.0, rug, area.color)
        floors.append((area.footprint, rug, area.color))
    for inst in standing:  # a soft contact shadow: a darker margin of the floor under the piece
        lo, hi = instance_box(inst)
        cx, cy = (lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2
        under = [f for f in floors if f[0][0] <= cx <= f[0][2] and f[0][1] <= cy <= f[0][3]]
        rect_s, rgb, seg = under[-1] if under else (rect, FLOOR_RGB, FLOOR_COLOR)
        m = 0.06
        r = (max(lo[0] - m, rect_s[0]), max(lo[1] - m, rect_s[1]), min(hi[0] + m, rect_s[2]), min(hi[1] + m, rect_s[3]))
        b.quad(r, 0.0, mix(rgb, (20, 18, 16), 0.3), seg, cullable=True)
    # Ceiling light panels every 4 m.
    for lx in np.arange(bx0 + 2.0, bx1 - 1.0, 4.0):
        for ly in np.arange(by0 + 2.0, by1 - 1.0, 4.0):
            b.quad((lx - 0.6, ly - 0.3, lx + 0.6, ly + 0.3), ceiling, LIGHT_RGB, WALL_COLOR, up=False, cullable=True)
    geo = b.build(ceiling)
    if geo.n_boxes and (np.any(~np.isfinite(geo.lo)) or np.any(~np.isfinite(geo.hi))):
        raise ValueError(f"scene {scene.name!r} has non-finite geometry")
    return geo


def face_entity_table(geometry: SceneGeometry, entity_colors: list[tuple[int, int, int]]) -> np.ndarray:
    """Per face id + 1 (0: no face), the entity slot its segmentation colour names.

    Slot ``k >= 1`` is ``entity_colors[k - 1]``; faces whose colour is no entity's
    (floor, walls, background) get 0. uint16 when the slots fit, else int32.
    """
    slot_of = {tuple(int(c) for c in color): k for k, color in enumerate(entity_colors, start=1)}
    seg = np.concatenate([np.zeros((1, 3), np.uint8), geometry.face_seg])
    dtype = np.uint16 if len(entity_colors) < np.iinfo(np.uint16).max else np.int32
    return np.array([slot_of.get(tuple(c), 0) for c in seg.tolist()], dtype=dtype)
