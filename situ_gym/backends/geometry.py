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

Faces are numbered ``box * 6 + d`` with ``d`` in ``(-x, +x, -y, +y, -z, +z)``; quads
follow the boxes. Each face carries an RGB colour (base colour with directional
shading), a segmentation colour and a validity flag (degenerate faces are skipped).
Textured faces also carry a :class:`FaceTextures` row: which tile, and the linear map
from world coordinates to texels (``u`` along the face's horizontal edge as seen from
its front, ``v`` down from its top edge).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from situ_gym.backends.appearance import (
    TILE,
    TOP_DEPTH,
    material_pattern,
    package_texture,
    package_top_texture,
    pattern_texture,
    product_color,
)
from situ_gym.scene.model import (
    FLOOR_COLOR,
    WALL_COLOR,
    Fixture,
    Instance,
    Product,
    Scene,
    Store,
)

__all__ = ["SceneGeometry", "FaceTextures", "build_geometry", "face_entity_table", "yaw_axis", "CULL_KINDS",
           "FACE_SHADE"]

# Box kinds: products (and their labels) may be distance-culled, the rest never is.
KIND_STRUCTURE, KIND_PRODUCT = 0, 1
CULL_KINDS = (KIND_PRODUCT,)

_LIGHT = np.array([0.45, 0.3, 0.84])
_LIGHT = _LIGHT / np.linalg.norm(_LIGHT)
_NORMALS = np.array(
    [[-1, 0, 0], [1, 0, 0], [0, -1, 0], [0, 1, 0], [0, 0, -1], [0, 0, 1]], dtype=np.float64
)
# Lambert: a directional light plus a strong ambient term; every face keeps its hue readable.
FACE_SHADE = 0.62 + 0.38 * np.clip(_NORMALS @ _LIGHT, 0.0, 1.0)

WALL_RGB = (222, 219, 210)
FLOOR_RGB = (190, 188, 180)
CEILING_RGB = (236, 236, 232)
LIGHT_RGB = (255, 255, 246)
METAL_RGB = (182, 186, 192)
BOARD_RGB = (150, 156, 164)
RAIL_RGB = (236, 238, 240)
FREEZER_RGB = (232, 236, 240)
INTERIOR_RGB = (92, 104, 118)
WOOD_RGB = (150, 104, 62)
WOOD_DARK_RGB = (112, 74, 42)
MULLION_RGB = (70, 74, 82)
GLASS_TINT = np.array([190.0, 222.0, 240.0])


def _hash01(text: str, salt: str = "") -> float:
    digest = hashlib.md5((salt + text).encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "little") / 2**32


def yaw_axis(yaw: float) -> tuple[int, int]:
    """The plan axis (0 = x, 1 = y) and sign a yaw points along, snapped to 90 degrees."""
    quadrant = int(round((yaw % 360.0) / 90.0)) % 4
    return [(0, 1), (1, 1), (0, -1), (1, -1)][quadrant]


def _mix(a, b, t: float) -> tuple[int, int, int]:
    a, b = np.asarray(a, float), np.asarray(b, float)
    c = np.clip(np.round(a * (1 - t) + b * t), 0, 255)
    return int(c[0]), int(c[1]), int(c[2])


@dataclass
class FaceTextures:
    """Textured faces: texel ``u = (W[u_axis] - u_origin) * u_scale``, ``v = (W[v_axis] - v_origin) * v_scale``.

    ``W`` is the world point; scales are signed texels per metre. Vertical faces run ``u``
    along their horizontal edge as seen from the front and ``v`` down from the top; the
    top of a stocked row runs ``u`` along the row and ``v`` from the front backwards.
    Both wrap every :data:`TILE` texels (a row of facings repeats its package).
    """

    face: np.ndarray  # (T,) face index
    tile: np.ndarray  # (T,) index into ``tiles``
    u_axis: np.ndarray  # (T,) world axis of u
    u_origin: np.ndarray  # (T,)
    u_scale: np.ndarray  # (T,)
    v_axis: np.ndarray  # (T,) world axis of v
    v_origin: np.ndarray  # (T,)
    v_scale: np.ndarray  # (T,)
    tiles: list[np.ndarray]  # (TILE, TILE, 3) uint8 unshaded RGB


@dataclass
class SceneGeometry:
    """Static geometry of one scene, ready for the renderer."""

    lo: np.ndarray  # (N, 3) box minima
    hi: np.ndarray  # (N, 3) box maxima
    kind: np.ndarray  # (N,) KIND_*
    hide_axis: np.ndarray  # (N,) axis of a plane the eye must be in front of to see the box, or -1
    hide_coord: np.ndarray  # (N,) that plane's coordinate
    hide_sign: np.ndarray  # (N,) +1: visible when eye[axis] > coord; -1: when eye[axis] < coord
    face_rgb: np.ndarray  # (N * 6 + Q, 3) uint8
    face_seg: np.ndarray  # (N * 6 + Q, 3) uint8
    face_valid: np.ndarray  # (N * 6 + Q,) bool
    face_axis: np.ndarray  # (N * 6 + Q,) plane axis 0/1/2
    face_coord: np.ndarray  # (N * 6 + Q,) plane coordinate
    face_sign: np.ndarray  # (N * 6 + Q,) +1 if the face looks toward +axis, else -1
    face_corners: np.ndarray  # (N * 6 + Q, 4, 3) corners in order around the face
    n_boxes: int
    quad_first: int  # index of the first quad face
    quad_base: np.ndarray  # (Q,) bool: base quads (floor, ceiling) drawn before tiles
    quad_cullable: np.ndarray  # (Q,) bool: small quads that may be distance-culled
    ceiling_height: float
    textures: FaceTextures | None = None
    atlas_cache: dict = field(default_factory=dict, repr=False)  # renderers share the shaded texture atlas
    labels: list[str] = field(default_factory=list)  # per box, for debugging
    # Text painted on faces: (face index, world corners TL, TR, BR, BL as (4, 3), text, ink RGB)
    signs: list[tuple[int, np.ndarray, str, tuple[int, int, int]]] = field(default_factory=list)


class _Builder:
    def __init__(self) -> None:
        self.lo: list[tuple[float, float, float]] = []
        self.hi: list[tuple[float, float, float]] = []
        self.kind: list[int] = []
        self.hide: list[tuple[int, float, float]] = []
        self.rgb: list[np.ndarray] = []  # (6, 3) per box
        self.seg: list[tuple[int, int, int]] = []
        self.valid: list[np.ndarray] = []
        self.labels: list[str] = []
        self.quads: list[tuple[tuple[float, float, float, float], float, tuple, tuple, bool, bool, bool]] = []
        self.signs: list[tuple[int, np.ndarray, str, tuple[int, int, int]]] = []
        self.tex: list[tuple[int, int, int, float, float, int, float, float]] = []
        self.tiles: list[np.ndarray] = []
        self._tile_ids: dict[int, int] = {}

    def _tile_id(self, tile: np.ndarray) -> int:
        key = id(tile)
        if key not in self._tile_ids:
            self._tile_ids[key] = len(self.tiles)
            self.tiles.append(tile)
        return self._tile_ids[key]

    def _textured(self, box: int, d: int, tile: np.ndarray, u: tuple, v: tuple) -> None:
        self.tex.append((box * 6 + d, self._tile_id(tile), *u, *v))
        mean = tile.reshape(-1, 3).mean(axis=0)  # the flat colour a far face shows
        self.rgb[box][d] = np.clip(np.round(mean * FACE_SHADE[d]), 0, 255)

    def texture(self, d: int, tile: np.ndarray, u_period: float, v_period: float, v_top: float | None = None,
                u_start: float | None = None) -> None:
        """Map ``tile`` onto vertical face ``d`` of the box added last, repeating every period (metres)."""
        box = len(self.lo) - 1
        axis, upper = d // 2, d % 2
        if axis == 2 or not self.valid[box][d]:
            return
        lo, hi = self.lo[box], self.hi[box]
        u_axis = 1 - axis
        sign = (1.0 if upper else -1.0) * (1.0 if axis == 0 else -1.0)
        if u_start is None:
            u_start = lo[u_axis] if sign > 0 else hi[u_axis]
        top = hi[2] if v_top is None else v_top
        # v_scale a hair under TILE / period: a face's top and bottom rows stay in one tile
        self._textured(box, d, tile, (u_axis, float(u_start), sign * TILE / u_period),
                       (2, float(top), -(TILE - 0.01) / v_period))

    def texture_top(self, tile: np.ndarray, front: int, u_start: float, u_period: float, v_period: float) -> None:
        """Map ``tile`` onto the top of the box added last: u along the row as seen from the
        front face ``front``, v from that face backwards, repeating every period (metres)."""
        box = len(self.lo) - 1
        if not self.valid[box][5]:
            return
        lo, hi = self.lo[box], self.hi[box]
        axis, upper = front // 2, front % 2
        u_sign = (1.0 if upper else -1.0) * (1.0 if axis == 0 else -1.0)
        v_origin = hi[axis] if upper else lo[axis]
        v_sign = -1.0 if upper else 1.0  # growing away from the front
        self._textured(box, 5, tile, (1 - axis, float(u_start), u_sign * TILE / u_period),
                       (axis, float(v_origin), v_sign * TILE / v_period))

    def sign(self, d: int, text: str, ink=(255, 255, 255)) -> None:
        """Paint ``text`` on face ``d`` of the box added last (read from outside the box)."""
        box = len(self.lo) - 1
        lo, hi = np.array(self.lo[box]), np.array(self.hi[box])
        axis, upper = d // 2, d % 2
        if axis == 2:
            return
        n = np.zeros(3)
        n[axis] = 1.0 if upper else -1.0
        right = np.cross(-n, [0.0, 0.0, 1.0])  # a viewer facing the face looks along -n
        c = 0.5 * (lo + hi)
        c[axis] = hi[axis] if upper else lo[axis]
        half_w = 0.5 * abs(float(np.dot(hi - lo, np.abs(right))))
        half_h = 0.5 * (hi[2] - lo[2])
        up = np.array([0.0, 0.0, 1.0])
        corners = np.array([c - right * half_w + up * half_h, c + right * half_w + up * half_h,
                            c + right * half_w - up * half_h, c - right * half_w - up * half_h])
        self.signs.append((box * 6 + d, corners, text, tuple(int(v) for v in ink)))

    def box(self, lo, hi, rgb, seg, *, kind=KIND_STRUCTURE, label="", faces=None, top_rgb=None, front=None,
            hide=None):
        lo = tuple(float(v) for v in lo)
        hi = tuple(float(v) for v in hi)
        if any(h - low < -1e-9 for low, h in zip(lo, hi, strict=True)):
            return
        thin = [h - low <= 1e-9 for low, h in zip(lo, hi, strict=True)]
        if sum(thin) > 1:
            return
        colors = np.tile(np.asarray(rgb, float), (6, 1)) * FACE_SHADE[:, None]
        if top_rgb is not None:
            colors[5] = np.asarray(top_rgb, float) * FACE_SHADE[5]
        if front is not None:
            d, col = front
            colors[d] = np.asarray(col, float) * FACE_SHADE[d]
        valid = np.ones(6, bool)
        for axis in range(3):
            if thin[axis]:
                valid[:] = False
        if faces is not None:
            valid[:] = False
            valid[list(faces)] = True
        self.lo.append(lo)
        self.hi.append(hi)
        self.kind.append(kind)
        self.hide.append(hide if hide is not None else (-1, 0.0, 0.0))
        self.rgb.append(np.clip(np.round(colors), 0, 255))
        self.seg.append(tuple(int(c) for c in seg))
        self.valid.append(valid)
        self.labels.append(label)

    def quad(self, rect, z, rgb, seg, *, up=True, base=False, cullable=False):
        self.quads.append((tuple(float(v) for v in rect), float(z), rgb, seg, up, base, cullable))

    def build(self, ceiling: float) -> SceneGeometry:
        n = len(self.lo)
        lo = np.array(self.lo, float).reshape(n, 3)
        hi = np.array(self.hi, float).reshape(n, 3)
        q = len(self.quads)
        total = n * 6 + q
        face_rgb = np.zeros((total, 3), np.uint8)
        face_seg = np.zeros((total, 3), np.uint8)
        face_valid = np.zeros(total, bool)
        face_axis = np.zeros(total, np.int64)
        face_coord = np.zeros(total)
        face_sign = np.ones(total)
        corners = np.zeros((total, 4, 3))
        if n:
            face_rgb[: n * 6] = np.stack(self.rgb).reshape(n * 6, 3)
            face_seg[: n * 6] = np.repeat(np.array(self.seg, np.uint8), 6, axis=0)
            face_valid[: n * 6] = np.stack(self.valid).reshape(n * 6)
            for d in range(6):
                axis, upper = d // 2, d % 2
                u, v = [a for a in range(3) if a != axis]
                c = np.where(upper, hi[:, axis], lo[:, axis])
                idx = np.arange(n) * 6 + d
                face_axis[idx] = axis
                face_coord[idx] = c
                face_sign[idx] = 1.0 if upper else -1.0
                for j, (su, sv) in enumerate([(0, 0), (1, 0), (1, 1), (0, 1)]):
                    corners[idx, j, axis] = c
                    corners[idx, j, u] = np.where(su, hi[:, u], lo[:, u])
                    corners[idx, j, v] = np.where(sv, hi[:, v], lo[:, v])
        quad_base = np.zeros(q, bool)
        quad_cull = np.zeros(q, bool)
        for i, (rect, z, rgb, seg, up, base, cullable) in enumerate(self.quads):
            f = n * 6 + i
            x0, y0, x1, y1 = rect
            face_rgb[f] = rgb
            face_seg[f] = seg
            face_valid[f] = x1 > x0 and y1 > y0
            face_axis[f] = 2
            face_coord[f] = z
            face_sign[f] = 1.0 if up else -1.0
            corners[f] = [[x0, y0, z], [x1, y0, z], [x1, y1, z], [x0, y1, z]]
            quad_base[i] = base
            quad_cull[i] = cullable
        return SceneGeometry(
            lo=lo,
            hi=hi,
            kind=np.array(self.kind, np.int64),
            hide_axis=np.array([h[0] for h in self.hide], np.int64),
            hide_coord=np.array([h[1] for h in self.hide], np.float64),
            hide_sign=np.array([h[2] for h in self.hide], np.float64),
            face_rgb=face_rgb,
            face_seg=face_seg,
            face_valid=face_valid,
            face_axis=face_axis,
            face_coord=face_coord,
            face_sign=face_sign,
            face_corners=corners,
            n_boxes=n,
            quad_first=n * 6,
            quad_base=quad_base,
            quad_cullable=quad_cull,
            ceiling_height=ceiling,
            textures=self._textures(),
            labels=self.labels,
            signs=self.signs,
        )

    def _textures(self) -> FaceTextures | None:
        if not self.tex:
            return None
        cols = list(zip(*self.tex, strict=True))
        return FaceTextures(
            face=np.array(cols[0], np.int64), tile=np.array(cols[1], np.int64), u_axis=np.array(cols[2], np.int64),
            u_origin=np.array(cols[3]), u_scale=np.array(cols[4]), v_axis=np.array(cols[5], np.int64),
            v_origin=np.array(cols[6]), v_scale=np.array(cols[7]), tiles=self.tiles,
        )


def _instance_box(inst: Instance) -> tuple[np.ndarray, np.ndarray]:
    x, y, z = inst.position
    sx, sy, sz = inst.size
    return np.array([x - sx / 2, y - sy / 2, z]), np.array([x + sx / 2, y + sy / 2, z + sz])


def _front_face(yaw: float) -> int:
    axis, sign = yaw_axis(yaw)
    return axis * 2 + (1 if sign > 0 else 0)


def _facing_rows(instances: list[Instance]) -> list[tuple[np.ndarray, np.ndarray, float, float, float]]:
    """Runs of evenly spaced equal facings side by side: (lo, hi, facing yaw, pitch, width) per run."""
    groups: dict[tuple, list[Instance]] = {}
    for inst in instances:
        axis, _ = yaw_axis(inst.facing)
        key = (round(inst.facing % 360.0, 3), round(inst.position[2], 4), tuple(round(v, 4) for v in inst.size),
               round(inst.position[axis], 4))
        groups.setdefault(key, []).append(inst)
    rows = []
    for _, insts in sorted(groups.items()):
        along = 1 - yaw_axis(insts[0].facing)[0]
        insts = sorted(insts, key=lambda i: i.position[along])
        width = insts[0].size[along]
        runs: list[list[Instance]] = [[insts[0]]]
        for inst in insts[1:]:
            run = runs[-1]
            step = inst.position[along] - run[-1].position[along]
            pitch = run[1].position[along] - run[0].position[along] if len(run) > 1 else step
            if width - 1e-6 <= step <= width + 0.05 and abs(step - pitch) < 1e-3:
                run.append(inst)
            else:
                runs.append([inst])
        for run in runs:
            lo, _ = _instance_box(run[0])
            _, hi = _instance_box(run[-1])
            pitch = (run[-1].position[along] - run[0].position[along]) / (len(run) - 1) if len(run) > 1 else width
            rows.append((lo, hi, run[0].facing, pitch, width))
    return rows


def _fill_boards(fx: Fixture, rows: list, panel) -> list:
    """Widen each row by whole facings into the free board space beside it (half of each gap).

    Rows reach back to the panel first; a row's neighbours are the rows on the same board
    (same height and facing) whose depth range overlaps its own.
    """
    deep = [(p, _stock_depth(lo, hi, facing, panel), row) for p, row in rows for lo, hi, facing, *_ in [row]]
    out = []
    x0, y0, x1, y1 = fx.footprint
    for p, (lo, hi), row in deep:
        _, _, facing, pitch, width = row
        axis = yaw_axis(facing)[0]
        along = 1 - axis
        left = (x0, y0)[along] + 0.06
        right = (x1, y1)[along] - 0.06
        for _, (lo2, hi2), row2 in deep:
            if row2 is row or abs(lo2[2] - lo[2]) > 0.01 or yaw_axis(row2[2]) != yaw_axis(facing):
                continue
            if hi2[axis] <= lo[axis] + 1e-6 or lo2[axis] >= hi[axis] - 1e-6:
                continue  # another depth band
            if hi2[along] <= lo[along] + 1e-6:
                left = max(left, 0.5 * (hi2[along] + lo[along]))
            elif lo2[along] >= hi[along] - 1e-6:
                right = min(right, 0.5 * (lo2[along] + hi[along]))
        lo_o, hi_o = row[0].copy(), row[1].copy()
        lo_o[along] -= max(0, int((lo[along] - left) // pitch)) * pitch
        hi_o[along] += max(0, int((right - hi[along]) // pitch)) * pitch
        out.append((p, (lo_o, hi_o, facing, pitch, width)))
    return out


def _stock_depth(lo: np.ndarray, hi: np.ndarray, facing: float, panel) -> tuple[np.ndarray, np.ndarray]:
    """Extend a row of facings back to its fixture's panel, so the board reads as full."""
    if panel is None:
        return lo, hi
    p_axis, p_lo, p_hi = panel
    f_axis, f_sign = yaw_axis(facing)
    lo, hi = lo.copy(), hi.copy()
    if f_axis == p_axis and f_sign > 0 and lo[p_axis] >= p_hi - 1e-6:
        lo[p_axis] = min(lo[p_axis], p_hi + 0.002)
    elif f_axis == p_axis and f_sign < 0 and hi[p_axis] <= p_lo + 1e-6:
        hi[p_axis] = max(hi[p_axis], p_lo - 0.002)
    return lo, hi


def _hide_plane(lo: np.ndarray, hi: np.ndarray, facing: float, panel):
    """Products behind their fixture's back panel / spine are never seen: the plane the eye must pass."""
    if panel is None:
        return None
    p_axis, p_lo, p_hi = panel
    f_axis, f_sign = yaw_axis(facing)
    if f_axis == p_axis and f_sign > 0 and lo[p_axis] >= p_hi - 1e-6:
        return (p_axis, p_hi, 1.0)
    if f_axis == p_axis and f_sign < 0 and hi[p_axis] <= p_lo + 1e-6:
        return (p_axis, p_lo, -1.0)
    return None


def _tinted(tile: np.ndarray, tint: np.ndarray | None, cache: dict) -> np.ndarray:
    if tint is None:
        return tile
    out = cache.get(id(tile))
    if out is None:
        out = cache[id(tile)] = np.round(tile * 0.72 + tint * 0.28).astype(np.uint8)
    return out


def _add_shelf_row(b: _Builder, product: Product, row, tint, panel, tint_cache: dict) -> None:
    """A stocked row: one box from the front facings back to the panel, package art once per facing."""
    lo, hi, facing, pitch, width = row
    depth = hi[yaw_axis(facing)[0]] - lo[yaw_axis(facing)[0]]  # one package deep, before stocking
    lo, hi = _stock_depth(lo, hi, facing, panel)
    hide = _hide_plane(lo, hi, facing, panel)
    d = _front_face(facing)
    tile = _tinted(package_texture(product, width, hi[2] - lo[2], pitch), tint, tint_cache)
    mean = tuple(int(c) for c in np.round(tile.reshape(-1, 3).mean(axis=0)))
    b.box(lo, hi, mean, product.color, kind=KIND_PRODUCT, label=product.id, top_rgb=_mix(mean, (30, 30, 34), 0.3),
          hide=hide)
    axis = d // 2
    u_axis = 1 - axis
    sign = (1.0 if d % 2 else -1.0) * (1.0 if axis == 0 else -1.0)
    gap = 0.5 * (pitch - width)  # the art centres each package in its pitch
    start = lo[u_axis] - gap if sign > 0 else hi[u_axis] + gap
    b.texture(d, tile, pitch, hi[2] - lo[2], u_start=start)
    top = _tinted(package_top_texture(product, width, depth, pitch), tint, tint_cache)
    b.texture_top(top, d, start, pitch, depth * TOP_DEPTH)


_PATTERN_SIZE = 0.5  # metres of surface one pattern tile covers


def _textured_sides(b: _Builder, tile: np.ndarray) -> None:
    for d in range(4):
        b.texture(d, tile, _PATTERN_SIZE, _PATTERN_SIZE)


def _add_floor_product(b: _Builder, product: Product, inst: Instance) -> None:
    """A floor-standing product without a furniture model: a box in its colour and material."""
    lo, hi = _instance_box(inst)
    rgb = product_color(product)
    b.box(lo, hi, rgb, product.color, kind=KIND_PRODUCT, label=product.id, top_rgb=_mix(rgb, (255, 255, 255), 0.12))
    _textured_sides(b, pattern_texture(rgb, material_pattern(product), _seed(product.id)))


def _seed(text: str) -> int:
    return int(_hash01(text, "pattern") * 2**31)


_SEATS = ("sofa", "loveseat", "armchair", "accent chair")
_CHAIRS = ("office chair", "gaming chair")
_TABLES = ("table", "desk")
_LAMPS = ("floor lamp", "table lamp", "desk lamp")
_SHELVES = ("bookcase", "shelving unit", "curio cabinet")


def _furniture_parts(category: str) -> list[tuple[tuple[float, ...], str]]:
    """Parts of a furniture model as ((u0, u1, d0, d1, z0, z1), tone) fractions of its box.

    ``u`` runs across the front, ``d`` from the back (0) to the front (1), ``z`` up.
    Parts never overlap. An empty list means "draw the plain box".
    """
    c = category.lower()
    if c == "bed frame":
        return [((0, 1, 0, 0.07, 0, 1), "dark"), ((0, 1, 0.07, 1, 0, 0.36), "base"),
                ((0, 1, 0.07, 1, 0.36, 0.55), "soft")]
    if any(k in c for k in _SEATS):
        return [((0, 1, 0, 1, 0, 0.5), "base"), ((0, 1, 0, 0.25, 0.5, 1), "base"),
                ((0, 0.12, 0.25, 1, 0.5, 0.75), "base"), ((0.88, 1, 0.25, 1, 0.5, 0.75), "base")]
    if any(k in c for k in _CHAIRS):
        return [((0.1, 0.9, 0.1, 0.9, 0, 0.05), "dark"), ((0.44, 0.56, 0.44, 0.56, 0.05, 0.4), "dark"),
                ((0, 1, 0.12, 1, 0.4, 0.5), "base"), ((0.06, 0.94, 0, 0.12, 0.4, 1), "base")]
    if c == "dining chair":
        legs = [((u, u + 0.1, d, d + 0.1, 0, 0.52), "dark") for u in (0, 0.9) for d in (0.1, 0.9)]
        return legs + [((0, 1, 0.1, 1, 0.52, 0.58), "base"), ((0, 1, 0, 0.1, 0, 1), "base")]
    if any(k in c for k in _TABLES):
        legs = [((u, u + 0.06, d, d + 0.06, 0, 0.92), "dark") for u in (0, 0.94) for d in (0, 0.94)]
        return legs + [((0, 1, 0, 1, 0.92, 1), "base")]
    if c in _LAMPS:
        return [((0.25, 0.75, 0.25, 0.75, 0, 0.04), "dark"), ((0.45, 0.55, 0.45, 0.55, 0.04, 0.66), "dark"),
                ((0, 1, 0, 1, 0.66, 1), "shade")]
    if c == "planter":
        return [((0.12, 0.88, 0.12, 0.88, 0, 0.85), "base"), ((0, 1, 0, 1, 0.85, 1), "base")]
    if c in ("vase", "candle holder"):
        return [((0.25, 0.75, 0.25, 0.75, 0, 0.1), "base"), ((0.1, 0.9, 0.1, 0.9, 0.1, 0.7), "base"),
                ((0.3, 0.7, 0.3, 0.7, 0.7, 1), "base")]
    if c == "plant stand":
        legs = [((u, u + 0.1, d, d + 0.1, 0, 0.92), "base") for u in (0, 0.9) for d in (0, 0.9)]
        return legs + [((0, 1, 0, 1, 0.92, 1), "base"), ((0.1, 0.9, 0.1, 0.9, 0.3, 0.36), "base")]
    if c in ("footstool", "ottoman"):
        legs = [((u, u + 0.1, d, d + 0.1, 0, 0.2), "dark") for u in (0.02, 0.88) for d in (0.02, 0.88)]
        return legs + [((0, 1, 0, 1, 0.2, 1), "base")]
    if c in ("nightstand", "tv stand", "filing cabinet"):
        return [((0.04, 0.96, 0.04, 0.96, 0, 0.08), "dark"), ((0, 1, 0, 1, 0.08, 1), "base")]
    if c == "pendant light":
        return [((0.45, 0.55, 0.45, 0.55, 0.55, 1), "dark"), ((0, 1, 0, 1, 0, 0.55), "shade")]
    if c == "potted plant":
        return [((0.2, 0.8, 0.2, 0.8, 0, 0.3), "pot"), ((0, 1, 0, 1, 0.3, 1), "leaf")]
    if c in _SHELVES:
        parts = [((0, 1, 0, 0.1, 0, 1), "dark"), ((0, 0.06, 0.1, 1, 0, 1), "base"),
                 ((0.94, 1, 0.1, 1, 0, 1), "base")]
        parts += [((0.06, 0.94, 0.1, 1, z, z + 0.03), "base") for z in (0.0, 0.25, 0.5, 0.75)]
        return parts + [((0.06, 0.94, 0.1, 1, 0.97, 1), "base")]
    return []


_TONES = {
    "base": lambda rgb: rgb,
    "dark": lambda rgb: _mix(rgb, (25, 22, 20), 0.45),
    "soft": lambda rgb: _mix(rgb, (245, 242, 236), 0.7),
    "shade": lambda rgb: _mix(rgb, (255, 244, 214), 0.65),
    "pot": lambda rgb: _mix(rgb, (168, 92, 56), 0.75),
    "leaf": lambda rgb: _mix(rgb, (52, 128, 60), 0.7),
}


def _add_furniture(b: _Builder, product: Product, inst: Instance) -> bool:
    """Draw a furniture instance as a simple model; False if it has none."""
    parts = _furniture_parts(product.category)
    if not parts:
        return False
    lo, hi = _instance_box(inst)
    axis, sign = yaw_axis(inst.facing)
    across = 1 - axis
    rgb = product_color(product)
    pattern = material_pattern(product)
    size = hi - lo
    for (u0, u1, d0, d1, z0, z1), tone in parts:
        plo, phi = lo.copy(), hi.copy()
        plo[across], phi[across] = lo[across] + u0 * size[across], lo[across] + u1 * size[across]
        if sign > 0:  # front at the high end of the axis
            plo[axis], phi[axis] = lo[axis] + d0 * size[axis], lo[axis] + d1 * size[axis]
        else:
            plo[axis], phi[axis] = hi[axis] - d1 * size[axis], hi[axis] - d0 * size[axis]
        plo[2], phi[2] = lo[2] + z0 * size[2], lo[2] + z1 * size[2]
        col = _TONES[tone](rgb)
        b.box(plo, phi, col, product.color, kind=KIND_PRODUCT, label=product.id,
              top_rgb=_mix(col, (255, 255, 255), 0.15))
        _textured_sides(b, pattern_texture(col, _TONE_PATTERN.get(tone, pattern), _seed(product.id)))
    return True


_TONE_PATTERN = {"pot": "ceramic", "leaf": "speckle", "shade": "fabric", "soft": "fabric"}



def _product_extent(instances: list[Instance]) -> tuple[np.ndarray, np.ndarray] | None:
    if not instances:
        return None
    los, his = zip(*(_instance_box(i) for i in instances), strict=True)
    return np.min(los, axis=0), np.max(his, axis=0)


def _fixture_parts(b: _Builder, fx: Fixture, instances: list[Instance]) -> tuple[int, float, float] | None:
    """Add a fixture's parts; return its back panel as (axis, lo, hi) when it hides products."""
    x0, y0, x1, y1 = fx.footprint
    lo_fp = np.array([x0, y0, 0.0])
    hi_fp = np.array([x1, y1, fx.height])
    depth_axis, sign = yaw_axis(fx.front_yaw)
    long_axis = 1 - depth_axis
    seg = fx.color
    ext = _product_extent(instances)
    levels = sorted(fx.levels) or [0.0]
    front_d = depth_axis * 2 + (1 if sign > 0 else 0)

    def part(lo, hi, rgb, label, **kw):
        b.box(lo, hi, rgb, seg, label=f"{fx.id}:{label}", **kw)

    def span(axis_lo, axis_hi, axis, lo=None, hi=None):
        lo = lo_fp.copy() if lo is None else lo.copy()
        hi = hi_fp.copy() if hi is None else hi.copy()
        lo[axis], hi[axis] = axis_lo, axis_hi
        return lo, hi

    # Free margins between the footprint edges and the products (parts must not overlap them).
    p_lo = ext[0] if ext is not None else (lo_fp + hi_fp) / 2
    p_hi = ext[1] if ext is not None else (lo_fp + hi_fp) / 2
    end_lo = min(lo_fp[long_axis] + 0.05, p_lo[long_axis])
    end_hi = max(hi_fp[long_axis] - 0.05, p_hi[long_axis])
    back_lo = min(lo_fp[depth_axis] + 0.05, p_lo[depth_axis])
    back_hi = max(hi_fp[depth_axis] - 0.05, p_hi[depth_axis])
    bottom = levels[0]
    top_free = max(fx.height - 0.04, p_hi[2]) if ext is not None else fx.height - 0.04

    # A hanging sign above the fixture, named on both sides.
    length = hi_fp[long_axis] - lo_fp[long_axis]
    centre = 0.5 * (lo_fp + hi_fp)
    lo, hi = centre.copy(), centre.copy()
    half = min(1.1, 0.45 * length)  # large enough to read across the hall
    lo[long_axis], hi[long_axis] = centre[long_axis] - half, centre[long_axis] + half
    lo[depth_axis], hi[depth_axis] = centre[depth_axis] - 0.02, centre[depth_axis] + 0.02
    sign_z = max(max(fx.height, p_hi[2]) + 0.45, 2.45)  # above head height even over low fixtures
    lo[2], hi[2] = sign_z, sign_z + 0.42
    title, _, rest = fx.name.partition(":")
    text = title.strip() + ("\n" + rest.strip() if rest.strip() else "")
    part(lo, hi, _mix(seg, (28, 30, 36), 0.55), "sign")
    b.sign(depth_axis * 2, text)
    b.sign(depth_axis * 2 + 1, text)

    if fx.kind in ("shelf", "open_cooler", "upright_freezer"):
        double = "back" in fx.approach and fx.kind == "shelf"
        body = {"shelf": METAL_RGB, "open_cooler": FREEZER_RGB, "upright_freezer": FREEZER_RGB}[fx.kind]
        board = {"shelf": BOARD_RGB, "open_cooler": INTERIOR_RGB, "upright_freezer": (200, 214, 226)}[fx.kind]
        inner = INTERIOR_RGB if fx.kind != "shelf" else body
        # Back panel (centre spine for double-sided gondolas), between the products.
        mid = (lo_fp[depth_axis] + hi_fp[depth_axis]) / 2
        if double:
            facing_front = [i for i in instances if yaw_axis(i.facing) == (depth_axis, sign)]
            facing_back = [i for i in instances if yaw_axis(i.facing) != (depth_axis, sign)]
            fe, be = _product_extent(facing_front), _product_extent(facing_back)
            lo_side = be if sign > 0 else fe  # products on the low side of the spine
            hi_side = fe if sign > 0 else be
            gap_lo = lo_side[1][depth_axis] if lo_side is not None else mid - 0.03
            gap_hi = hi_side[0][depth_axis] if hi_side is not None else mid + 0.03
            panel = (max(gap_lo, mid - 0.03), min(gap_hi, mid + 0.03))
        else:
            panel = (lo_fp[depth_axis], back_lo) if sign > 0 else (back_hi, hi_fp[depth_axis])
        z_top = top_free
        has_panel = panel[1] - panel[0] > 1e-4
        if has_panel:
            lo, hi = span(*panel, depth_axis)
            lo[long_axis], hi[long_axis] = end_lo, end_hi
            hi[2] = z_top
            part(lo, hi, inner, "panel")
        # End uprights / side walls over the full depth.
        for a, c in ((lo_fp[long_axis], end_lo), (end_hi, hi_fp[long_axis])):
            if c - a > 1e-4:
                lo, hi = span(a, c, long_axis)
                hi[2] = z_top
                part(lo, hi, body, "side")
        # Top cap / canopy (freezers and coolers have a lit header).
        lo, hi = lo_fp.copy(), hi_fp.copy()
        lo[2] = z_top
        if hi[2] - lo[2] > 1e-4:
            part(lo, hi, body, "cap", front=(front_d, (250, 250, 250) if fx.kind != "shelf" else body))
        # Boards (split around the spine), the lowest one a plinth from the floor.
        segments = [(lo_fp[depth_axis], panel[0]), (panel[1], hi_fp[depth_axis])] if double else [
            (back_lo, hi_fp[depth_axis]) if sign > 0 else (lo_fp[depth_axis], back_hi)
        ]
        for k, lvl in enumerate(levels):
            z_lo = 0.0 if k == 0 else max(lvl - 0.03, 0.0)
            if lvl - z_lo < 1e-4:
                continue
            for s_lo, s_hi in segments:
                if s_hi - s_lo < 1e-4:
                    continue
                lo, hi = span(s_lo, s_hi, depth_axis)
                lo[long_axis], hi[long_axis] = end_lo, end_hi
                lo[2], hi[2] = z_lo, lvl
                rail = RAIL_RGB if fx.kind == "shelf" else board
                fronts = (depth_axis * 2 + 1, depth_axis * 2) if double else (front_d,)
                colors = board if k else (body if fx.kind == "shelf" else INTERIOR_RGB)
                part(lo, hi, colors, f"board{k}", front=(fronts[0], rail))
        if fx.kind == "upright_freezer":
            # Glass doors: dark mullions standing just in front of the footprint.
            length = hi_fp[long_axis] - lo_fp[long_axis]
            n_doors = max(1, int(round(length / 0.7)))
            plane = hi_fp[depth_axis] if sign > 0 else lo_fp[depth_axis]
            # mullion k spans [a_k, b_k], clipped to the footprint so neighbours only touch
            spans = []
            for k in range(n_doors + 1):
                c = lo_fp[long_axis] + length * k / n_doors
                spans.append((max(c - 0.025, lo_fp[long_axis]), min(c + 0.025, hi_fp[long_axis])))
            slab = (plane, plane + 0.03) if sign > 0 else (plane - 0.03, plane)
            for k, (a, c) in enumerate(spans):
                lo, hi = lo_fp.copy(), hi_fp.copy()
                lo[long_axis], hi[long_axis] = a, c
                lo[depth_axis], hi[depth_axis] = slab
                lo[2], hi[2] = bottom, z_top
                part(lo, hi, MULLION_RGB, f"mullion{k}")
            for z_lo, z_hi in ((max(bottom - 0.04, 0.0), bottom), (z_top - 0.04, z_top)):
                for k in range(n_doors):
                    lo, hi = lo_fp.copy(), hi_fp.copy()
                    lo[long_axis], hi[long_axis] = spans[k][1], spans[k + 1][0]
                    lo[depth_axis], hi[depth_axis] = slab
                    lo[2], hi[2] = z_lo, z_hi
                    part(lo, hi, MULLION_RGB, "rail")
        return (depth_axis, float(panel[0]), float(panel[1])) if has_panel else None

    if fx.kind == "chest_freezer":
        # An island freezer: base up to the goods, a low solid rim, glass sides (not drawn:
        # the goods stay visible through them), corner posts and the lid edge on top.
        lo, hi = lo_fp.copy(), hi_fp.copy()
        hi[2] = bottom
        if bottom > 1e-4:
            part(lo, hi, FREEZER_RGB, "base")
        wall = 0.06
        in_lo = np.minimum(lo_fp + wall, p_lo)
        in_hi = np.maximum(hi_fp - wall, p_hi)
        rim = min(bottom + 0.06, fx.height - 0.05)
        lid = fx.height - 0.03
        for z0, z1, name, rgb, top in ((bottom, rim, "rim", FREEZER_RGB, (60, 96, 140)),
                                       (lid, fx.height, "lid", (70, 98, 132), (60, 96, 140))):
            for axis in (0, 1):
                for a, c in ((lo_fp[axis], in_lo[axis]), (in_hi[axis], hi_fp[axis])):
                    if c - a < 1e-4:
                        continue
                    lo, hi = lo_fp.copy(), hi_fp.copy()
                    lo[axis], hi[axis] = a, c
                    if axis == 1:  # the y walls fit between the x walls
                        lo[0], hi[0] = in_lo[0], in_hi[0]
                    lo[2], hi[2] = z0, z1
                    part(lo, hi, rgb, name, top_rgb=top)
        for xa, xc in ((lo_fp[0], in_lo[0]), (in_hi[0], hi_fp[0])):
            for ya, yc in ((lo_fp[1], in_lo[1]), (in_hi[1], hi_fp[1])):
                if xc - xa > 1e-4 and yc - ya > 1e-4 and lid - rim > 1e-4:
                    part((xa, ya, rim), (xc, yc, lid), (70, 98, 132), "post")
        return None

    # produce_stand: a wooden stand with a stepped block under each level's products.
    lo, hi = lo_fp.copy(), hi_fp.copy()
    hi[2] = bottom
    if bottom > 1e-4:
        part(lo, hi, WOOD_RGB, "base", top_rgb=WOOD_DARK_RGB)
    for k, lvl in enumerate(levels[1:], start=1):
        on = [i for i in instances if abs(i.position[2] - lvl) < 0.02]
        e = _product_extent(on)
        if e is None or lvl - bottom < 1e-4:
            continue
        lo, hi = lo_fp.copy(), hi_fp.copy()  # a step across the stand under this level's band
        lo[depth_axis], hi[depth_axis] = e[0][depth_axis], e[1][depth_axis]
        lo[long_axis], hi[long_axis] = end_lo, end_hi
        lo[2], hi[2] = bottom, lvl
        part(lo, hi, WOOD_RGB, f"tier{k}", top_rgb=WOOD_DARK_RGB)
    return None


def _store_parts(b: _Builder, store: Store, walls: list) -> None:
    """Lintel over the doorway and a sign band along the outside of the front wall."""
    x0, y0, x1, y1 = store.footprint
    dx0, dy0, dx1, dy1 = store.doorway
    cx, cy = (dx0 + dx1) / 2, (dy0 + dy1) / 2
    dists = {"w": abs(cx - x0), "e": abs(cx - x1), "s": abs(cy - y0), "n": abs(cy - y1)}
    side = min(dists, key=dists.get)
    door_top = min(2.3, store.wall_height - 0.05)
    if store.wall_height - door_top > 1e-3:
        b.box((dx0, dy0, door_top), (dx1, dy1, store.wall_height), _mix(store.color, WALL_RGB, 0.55),
              store.color, label=f"{store.id}:lintel")
    own = [w for w in walls if w.owner == store.id]
    if not own:
        return
    fps = np.array([w.footprint for w in own], float)
    z0, z1 = max(door_top + 0.05, store.wall_height - 0.75), store.wall_height - 0.12
    if z1 - z0 < 0.1:
        return
    if side in ("s", "n"):
        out = fps[:, 1].min() - 0.05 if side == "s" else fps[:, 3].max()
        lo, hi = (x0, out, z0), (x1, out + 0.05, z1)
    else:
        out = fps[:, 0].min() - 0.05 if side == "w" else fps[:, 2].max()
        lo, hi = (out, y0, z0), (out + 0.05, y1, z1)
    sign_rgb = _mix(store.color, (30, 30, 36), 0.35)
    b.box(lo, hi, sign_rgb, store.color, label=f"{store.id}:sign")
    b.sign({"s": 2, "n": 3, "w": 0, "e": 1}[side], store.name, ink=_mix(store.color, (255, 255, 255), 0.85))


def build_geometry(scene: Scene) -> SceneGeometry:
    """Turn a scene into boxes and quads with colours and textures (pure function of the scene)."""
    b = _Builder()
    layout = scene.layout
    by_fixture: dict[str, list[Instance]] = {}
    for p in scene.products:
        if p.fixture_id is not None:
            by_fixture.setdefault(p.fixture_id, []).extend(p.instances)
    fixtures = {f.id: f for f in scene.fixtures}
    panels = {fx.id: _fixture_parts(b, fx, by_fixture.get(fx.id, [])) for fx in scene.fixtures}
    stores = {s.id: s for s in scene.stores}
    for wall in layout.walls:
        x0, y0, x1, y1 = wall.footprint
        if wall.owner is not None and wall.owner in stores:
            st = stores[wall.owner]
            rgb, seg = _mix(st.color, WALL_RGB, 0.82), st.color  # a hint of the store colour
        else:
            rgb, seg = WALL_RGB, WALL_COLOR
        b.box((x0, y0, 0.0), (x1, y1, wall.height), rgb, seg, label=f"wall:{wall.owner}")
    for st in scene.stores:
        _store_parts(b, st, layout.walls)
    tint_cache: dict[int, np.ndarray] = {}
    standing: list[Instance] = []
    rows_by_fixture: dict[str, list] = {}
    for p in scene.products:
        fx = fixtures.get(p.fixture_id) if p.fixture_id else None
        if fx is None:
            for inst in p.instances:
                if not _add_furniture(b, p, inst):
                    _add_floor_product(b, p, inst)
                if inst.position[2] < 0.02:
                    standing.append(inst)
            continue
        rows_by_fixture.setdefault(fx.id, []).extend((p, row) for row in _facing_rows(p.instances))
    for fx_id, rows in rows_by_fixture.items():
        fx = fixtures[fx_id]
        tint = GLASS_TINT if fx.kind in ("upright_freezer", "chest_freezer") else None
        for p, row in _fill_boards(fx, rows, panels.get(fx_id)):
            _add_shelf_row(b, p, row, tint, panels.get(fx_id), tint_cache)

    ceiling = max([w.height for w in layout.walls] + [s.wall_height + 0.8 for s in scene.stores] + [3.6])
    bx0, by0, bx1, by1 = layout.bounds
    pad = 0.5  # floor and ceiling run under the outer walls
    rect = (bx0 - pad, by0 - pad, bx1 + pad, by1 + pad)
    b.quad(rect, 0.0, FLOOR_RGB, FLOOR_COLOR, base=True)
    b.quad(rect, ceiling, CEILING_RGB, WALL_COLOR, up=False, base=True)
    floors = []  # (rect, rgb, seg) in drawing order: what a shadow darkens
    for st in scene.stores:
        wood = _mix(WOOD_RGB, (235, 220, 200), 0.45 + 0.3 * _hash01(st.id))
        b.quad(st.footprint, 0.0, wood, FLOOR_COLOR)
        floors.append((st.footprint, wood, FLOOR_COLOR))
    for area in scene.areas:
        rug = _mix(area.color, (222, 212, 192), 0.8)  # a muted rug: the products stand out
        b.quad(area.footprint, 0.0, rug, area.color)
        floors.append((area.footprint, rug, area.color))
    for inst in standing:  # a soft contact shadow: a darker margin of the floor under the piece
        lo, hi = _instance_box(inst)
        cx, cy = (lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2
        under = [f for f in floors if f[0][0] <= cx <= f[0][2] and f[0][1] <= cy <= f[0][3]]
        rect_s, rgb, seg = under[-1] if under else (rect, FLOOR_RGB, FLOOR_COLOR)
        m = 0.06
        r = (max(lo[0] - m, rect_s[0]), max(lo[1] - m, rect_s[1]), min(hi[0] + m, rect_s[2]), min(hi[1] + m, rect_s[3]))
        b.quad(r, 0.0, _mix(rgb, (20, 18, 16), 0.3), seg, cullable=True)
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
