"""Scene geometry's data and its builder: boxes and quads with per-face colours and textures.

Faces are numbered ``box * 6 + d`` with ``d`` in ``(-x, +x, -y, +y, -z, +z)``; quads
follow the boxes. Each face carries an RGB colour (base colour with directional
shading), a segmentation colour and a validity flag (degenerate faces are skipped).
Textured faces also carry a :class:`FaceTextures` row: which tile, and the linear map
from world coordinates to texels (``u`` along the face's horizontal edge as seen from
its front, ``v`` down from its top edge). ``situ_gym.backends.geometry`` fills it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from situ_gym.backends.appearance import TILE

__all__ = ["BOARD_RGB", "CEILING_RGB", "CULL_KINDS", "FACE_SHADE", "FLOOR_RGB", "FREEZER_RGB",
           "FaceTextures", "GLASS_TINT", "INTERIOR_RGB", "KIND_PRODUCT", "KIND_STRUCTURE", "LIGHT_RGB",
           "METAL_RGB", "MULLION_RGB", "MeshBuilder", "RAIL_RGB", "SceneGeometry", "WALL_RGB",
           "WOOD_DARK_RGB", "WOOD_RGB", "hash01", "mix", "yaw_axis"]

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


def hash01(text: str, salt: str = "") -> float:
    digest = hashlib.md5((salt + text).encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "little") / 2**32


def yaw_axis(yaw: float) -> tuple[int, int]:
    """The plan axis (0 = x, 1 = y) and sign a yaw points along, snapped to 90 degrees."""
    quadrant = int(round((yaw % 360.0) / 90.0)) % 4
    return [(0, 1), (1, 1), (0, -1), (1, -1)][quadrant]


def mix(a, b, t: float) -> tuple[int, int, int]:
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


class MeshBuilder:
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
