"""A pinhole rasteriser for axis-aligned box scenes: ID buffer, exact depth, colour lookups.

Visibility is exact for non-overlapping boxes without a z-buffer: a kd-tree over the
boxes whose cuts never split a box (built once per scene) gives a back-to-front order
for any eye position, computed per frame in numpy from the eye's side of each cut.
Faces are filled far to near with ``cv2.fillConvexPoly`` into an int32 face-ID buffer;
depth then comes per pixel from the face's plane (``depth = plane offset / ray
component``) and RGB / segmentation from per-face colour tables, so the three images
agree pixel for pixel.

Textured faces (package art, material patterns) are looked up per pixel after the
fill: each textured pixel's world point comes from its depth and ray, its texel from
the face's linear map (:class:`~situ_gym.backends.geometry.FaceTextures`), and the
colour from an atlas of pre-shaded tiles built once per geometry. A face smaller on
screen than ``texture_min_px`` per tile shows its tile's mean colour instead (no
aliasing, less work), so texture only costs where it can be seen.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import cv2
import numpy as np

from situ_gym.backends.appearance import TILE
from situ_gym.backends.geometry import CULL_KINDS, FACE_SHADE, SceneGeometry
from situ_gym.backends.recycle import ArrayPool

__all__ = ["Camera", "OrderTree", "Renderer", "camera_basis"]

_EPS = 1e-6
_SHIFT = 4  # fixed-point bits of polygon vertices
_SCALE = float(1 << _SHIFT)
_WORD = 62  # bits of one packed order key
LUT_MAX_FACES = 255  # frames drawing at most this many faces use the 8-bit ID buffer and cv2.LUT
# Table types cv2.LUT reads (the 8-bit ID buffer's lookups); others go through np.take.
_LUT_TYPES = frozenset(np.dtype(t) for t in (np.uint8, np.int8, np.uint16, np.int16, np.int32, np.float32, np.float64))
_SIGN_MIN_PX = 12  # a sign shorter than this is not painted: its first line would be under 7 px


def camera_basis(yaw_deg: float, pitch_deg: float) -> np.ndarray:
    """Rows: right, down, forward (world frame) for a camera with this yaw and pitch."""
    y, p = math.radians(yaw_deg), math.radians(pitch_deg)
    forward = (math.cos(p) * math.cos(y), math.cos(p) * math.sin(y), math.sin(p))
    right = (math.sin(y), -math.cos(y), 0.0)
    up = (-math.cos(y) * math.sin(p), -math.sin(y) * math.sin(p), math.cos(p))
    return np.array([right, [-u for u in up], forward], dtype=np.float64)


@dataclass(frozen=True)
class Camera:
    width: int
    height: int
    fx: float
    fy: float
    cx: float
    cy: float
    near: float = 0.05

    @classmethod
    def from_hfov(cls, width: int, height: int, hfov: float) -> Camera:
        f = (width / 2.0) / math.tan(math.radians(hfov) / 2.0)
        return cls(width, height, f, f, (width - 1) / 2.0, (height - 1) / 2.0)

    def matrix(self) -> np.ndarray:
        return np.array([[self.fx, 0, self.cx], [0, self.fy, self.cy], [0, 0, 1]], dtype=np.float64)


class OrderTree:
    """A kd-tree of boxes whose cuts split no box; leaves hold one box (or an inseparable group)."""

    def __init__(self, lo: np.ndarray, hi: np.ndarray):
        n = len(lo)
        axes: list[int] = []
        coords: list[float] = []
        self.leaf_of_box = np.zeros(n, np.int64)
        paths: list[list[tuple[int, int]]] = []
        stack: list[tuple[np.ndarray, list[tuple[int, int]]]] = [(np.arange(n), [])] if n else []
        while stack:
            idx, path = stack.pop()
            cut = self._find_cut(lo[idx], hi[idx]) if len(idx) > 1 else None
            if cut is None:
                self.leaf_of_box[idx] = len(paths)
                paths.append(path)
                continue
            axis, c, left_mask = cut
            node = len(axes)
            axes.append(axis)
            coords.append(c)
            stack.append((idx[~left_mask], path + [(node, 1)]))
            stack.append((idx[left_mask], path + [(node, 0)]))
        self.node_axis = np.array(axes, np.int64)
        self.node_coord = np.array(coords, np.float64)
        depth = max((len(p) for p in paths), default=0)
        self.depth = depth
        self.n_leaves = len(paths)
        self.path_node = np.zeros((len(paths), max(depth, 1)), np.int64)
        self.path_side = np.zeros((len(paths), max(depth, 1)), bool)
        self.path_valid = np.zeros((len(paths), max(depth, 1)), bool)
        for i, p in enumerate(paths):
            for j, (node, side) in enumerate(p):
                self.path_node[i, j] = node
                self.path_side[i, j] = bool(side)
                self.path_valid[i, j] = True
        self.leaf_size = np.bincount(self.leaf_of_box, minlength=len(paths)) if n else np.zeros(0, np.int64)

    @staticmethod
    def _find_cut(lo: np.ndarray, hi: np.ndarray):
        n = len(lo)
        best = None
        for axis in range(3):
            order = np.lexsort((hi[:, axis], lo[:, axis]))
            lsort = lo[order, axis]
            hmax = np.maximum.accumulate(hi[order, axis])
            free = np.nonzero(hmax[:-1] <= lsort[1:] + _EPS)[0]
            if len(free) == 0:
                continue
            balance = np.minimum(free + 1, n - free - 1)
            k = int(np.argmax(balance))
            score = int(balance[k])
            if best is None or score > best[0]:
                i = int(free[k])
                c = 0.5 * (hmax[i] + lsort[i + 1])
                left = np.zeros(n, bool)
                left[order[: i + 1]] = True
                best = (score, axis, c, left)
        if best is None:
            return None
        return best[1], best[2], best[3]

    def leaf_keys(self, eye: np.ndarray, leaves: np.ndarray) -> list[np.ndarray]:
        """Packed keys (most significant word first); ascending = back to front."""
        if self.depth == 0:
            return [np.zeros(len(leaves), np.uint64)]
        cam_side = eye[self.node_axis] >= self.node_coord
        nodes = self.path_node[leaves]
        near = (cam_side[nodes] == self.path_side[leaves]) & self.path_valid[leaves]
        keys = []
        for w in range(0, self.depth, _WORD):
            block = near[:, w : w + _WORD].astype(np.uint64)
            weights = np.left_shift(np.uint64(1), np.arange(block.shape[1] - 1, -1, -1, dtype=np.uint64))
            keys.append((block * weights).sum(axis=1, dtype=np.uint64))
        return keys


class Renderer:
    """Renders a SceneGeometry from an eye pose into (rgb, depth, seg, face ids)."""

    def __init__(
        self, geometry: SceneGeometry, camera: Camera, *, cull_distance: float = 20.0, tree: OrderTree | None = None,
        texture_min_px: float = 32.0,
    ):
        self.geo = geometry
        self.texture_min_px = float(texture_min_px)
        self.camera = camera
        self.cull_distance = float(cull_distance)
        self.tree = tree if tree is not None else OrderTree(geometry.lo, geometry.hi)
        w, h = camera.width, camera.height
        self.U = ((np.arange(w, dtype=np.float32) - camera.cx) / camera.fx)[None, :].repeat(h, 0)
        self.V = ((np.arange(h, dtype=np.float32) - camera.cy) / camera.fy)[:, None].repeat(w, 1)
        total = len(geometry.face_axis)
        # Colours packed as RGBA words: one np.take per image, then cvtColor drops alpha.
        rgb = np.zeros((total + 1, 4), np.uint8)
        rgb[0, :3] = (40, 42, 48)
        rgb[1:, :3] = geometry.face_rgb
        seg = np.zeros((total + 1, 4), np.uint8)
        seg[1:, :3] = geometry.face_seg
        self.rgb_table = rgb.view(np.uint32).reshape(-1)
        self._setup_textures(total)
        self.seg_table = seg.view(np.uint32).reshape(-1)
        self._axis_ext = np.concatenate([[0], geometry.face_axis])
        self._coord_ext = np.concatenate([[0.0], geometry.face_coord])
        self.cullable = np.isin(geometry.kind, CULL_KINDS)
        q0 = geometry.quad_first
        self.quad_ids = np.arange(q0, total)
        qc = geometry.face_corners[q0:]
        self.quad_lo = qc.min(axis=1)
        self.quad_hi = qc.max(axis=1)
        # Scratch buffers reused by every render (large per-frame allocations are slow).
        self._ids = np.zeros((h, w), np.int32)
        # Frames with fewer than 256 drawn faces (about half in the Supermarket) fill an
        # 8-bit ID buffer and read every per-face table with cv2.LUT, about twice as fast
        # as np.take; the others use the int32 buffer and np.take.
        self._ids8 = np.zeros((h, w), np.uint8)
        # The face ids as intp, converted once per frame: np.take would otherwise
        # convert (and allocate) its int32 indices again for every table it reads.
        self._idx = np.zeros((h, w), np.intp)
        self._idx_ready = False  # _idx holds the last render's ids (always on the int32 path)
        self._ids_now = self._ids  # the ID buffer the last render filled
        self._words = np.zeros((h, w), np.uint32)
        self._f1 = np.zeros((h, w), np.float32)
        self._f2 = np.zeros((h, w), np.float32)
        self._mask = np.zeros((h, w), bool)
        # numpy's maximum against a full array is several times faster than against a scalar
        self._inv_far = np.full((h, w), np.float32(1.0 / 200.0), np.float32)
        self._pos = np.zeros(total, np.int64)  # face -> 1 + its place among the drawn faces
        self._tex_buffers = {name: np.empty(h * w, dtype) for name, dtype in (
            ("f", np.intp), ("d", np.float32), ("uc", np.float32), ("vc", np.float32), ("acc", np.float32),
            ("tmp", np.float32), ("ui", np.int32), ("vi", np.int32), ("texel", np.uint32))}
        self._drawn = np.zeros(1, np.intp)  # per drawn-face value: face id + 1 (0: none)
        self._outputs = ArrayPool()  # rgb, depth, seg and gathered arrays, reused once let go
        self.stats: dict[str, float] = {}
        self.signs = [_sign_entry(face, corners, text, ink) for face, corners, text, ink in geometry.signs]
        self._focal = np.array([camera.fx, camera.fy])
        self._centre = np.array([camera.cx, camera.cy])
        self.sign_faces = np.array([face for face, *_ in geometry.signs], np.int64)
        self.sign_corners = np.array([corners for _, corners, *_ in geometry.signs], np.float64).reshape(-1, 4, 3)

    def _setup_textures(self, total: int) -> None:
        """Per-face texture tables and the shaded atlas (shared by renderers of one geometry)."""
        tex = self.geo.textures
        self.tex_base = np.full(total, -1, np.int64)  # first atlas texel of the face's tile, -1: none
        self.tex_params = np.zeros((total, 6))  # u_axis, u_origin, u_scale, v_axis, v_origin, v_scale
        self.atlas = np.zeros(1, np.uint32)
        if tex is None:
            return
        cached = self.geo.atlas_cache.get("atlas")
        if cached is None:
            d = tex.face % 6
            keys = sorted({(int(t), int(k)) for t, k in zip(tex.tile, d, strict=True)})
            slot = {key: i for i, key in enumerate(keys)}
            tiles = np.zeros((len(keys), TILE, TILE, 4), np.uint8)
            for (t, k), i in slot.items():
                tiles[i, :, :, :3] = np.clip(np.round(tex.tiles[t] * FACE_SHADE[k]), 0, 255)
            base = np.array([slot[(int(t), int(k))] for t, k in zip(tex.tile, d, strict=True)], np.int64)
            cached = self.geo.atlas_cache["atlas"] = (tiles.view(np.uint32).reshape(-1), base * TILE * TILE)
        self.atlas, bases = cached
        self.tex_base[tex.face] = bases
        self.tex_params[tex.face] = np.stack(
            [tex.u_axis, tex.u_origin, tex.u_scale, tex.v_axis, tex.v_origin, tex.v_scale], 1)
        # flag the textured faces in the colour table's alpha byte: 1 + the axis u runs along
        rgb = self.rgb_table.view(np.uint8).reshape(-1, 4)
        rgb[tex.face + 1, 3] = 1

    def _texture(self, words: np.ndarray, depth: np.ndarray, ids: np.ndarray, faces: np.ndarray,
                 eye: np.ndarray, basis: np.ndarray) -> None:
        """Replace the flat colour of textured pixels (flagged in the alpha byte) with their texels.

        Per pixel and for each of u and v: ``depth * (U * a + V * b + c) + k``, with ``a, b,
        c, k`` per face (the ray's component along the texture axis, scaled, and the eye's
        offset). Column-wise ``np.take`` into reused buffers: a 2-D row gather or fresh
        temporaries cost several times more.
        """
        flat = words.reshape(-1)
        flagged = np.greater_equal(flat, np.uint32(1 << 24), out=self._mask.reshape(-1))
        if not flagged.any():  # the textured faces drawn are all hidden (most frames)
            return
        pix = np.flatnonzero(flagged)
        n = len(pix)
        prm = self.tex_params[faces]
        m = len(faces) + 1
        table = np.zeros((8, m), np.float32)  # a, b, c, k for u then v, per drawn face (0: none)
        for j, (ax, origin, scale) in enumerate(((0, 1, 2), (3, 4, 5))):
            axis = prm[:, ax].astype(np.int64)
            for r in range(3):  # the ray's world component along the axis, per camera basis row
                table[4 * j + r, 1:] = basis[r, axis] * prm[:, scale]
            table[4 * j + 3, 1:] = (eye[axis] - prm[:, origin]) * prm[:, scale]
        base = np.zeros(m, np.int32)
        base[1:] = np.maximum(self.tex_base[faces], 0)
        buf = self._tex_buffers
        f = buf["f"][:n]
        if self._idx_ready:  # the int32 path converted its ids to intp already
            np.take(self._idx.reshape(-1), pix, out=f, mode="clip")
        else:  # the 8-bit ID buffer, widened to intp for the takes below
            np.copyto(f, ids.reshape(-1).take(pix, mode="clip"))
        d = np.take(depth.reshape(-1), pix, out=buf["d"][:n], mode="clip")
        uc = np.take(self.U.reshape(-1), pix, out=buf["uc"][:n], mode="clip")
        vc = np.take(self.V.reshape(-1), pix, out=buf["vc"][:n], mode="clip")
        acc, tmp = buf["acc"][:n], buf["tmp"][:n]
        out = []
        for j, name in ((0, "ui"), (4, "vi")):
            np.multiply(uc, np.take(table[j], f, out=tmp, mode="clip"), out=acc)
            acc += np.multiply(vc, np.take(table[j + 1], f, out=tmp, mode="clip"), out=tmp)
            acc += np.take(table[j + 2], f, out=tmp, mode="clip")
            acc *= d
            acc += np.take(table[j + 3], f, out=tmp, mode="clip")
            texel = buf[name][:n]
            np.copyto(texel, acc, casting="unsafe")  # truncation toward zero; the mask wraps
            np.bitwise_and(texel, TILE - 1, out=texel)
            out.append(texel)
        ui, vi = out
        vi *= TILE
        vi += ui
        vi += np.take(base, f, out=ui, mode="clip")
        flat[pix] = np.take(self.atlas, vi, out=buf["texel"][:n], mode="clip")

    def _texture_flags(self, drawn_rgb: np.ndarray, faces: np.ndarray, pts_cam: np.ndarray) -> None:
        """Clear the texture flag of faces too small on screen to show their texture."""
        textured = np.flatnonzero(self.tex_base[faces] >= 0)
        if not len(textured):
            return
        z = np.maximum(pts_cam[textured, :, 2].min(axis=1), self.camera.near)
        prm = self.tex_params[faces[textured]]
        # pixels per tile along u and v at the face's nearest corner (a long row seen
        # obliquely keeps its texture where it is near)
        px_u = self.camera.fx * TILE / np.maximum(np.abs(prm[:, 2]), 1e-6) / z
        px_v = self.camera.fy * TILE / np.maximum(np.abs(prm[:, 5]), 1e-6) / z
        small = np.minimum(px_u, px_v) < self.texture_min_px
        drawn_rgb[textured[small] + 1] &= np.uint32(0x00FFFFFF)

    # -- culling ---------------------------------------------------------------
    def _frustum_planes(self, eye: np.ndarray, basis: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The five frustum planes (near, left, right, top, bottom; 2 px margin) as
        (positive parts of the normals, negative parts, offsets), a point p inside when
        ``normal . p + offset >= 0`` for all five."""
        right, down, fwd = basis
        cam = self.camera
        tx = (cam.width / 2.0 + 2.0) / cam.fx
        ty = (cam.height / 2.0 + 2.0) / cam.fy
        normals = np.array([fwd, fwd * tx - right, fwd * tx + right, fwd * ty - down, fwd * ty + down])
        offsets = -(normals @ eye)
        offsets[0] -= cam.near
        return np.maximum(normals, 0.0).T, np.minimum(normals, 0.0).T, offsets

    @staticmethod
    def _in_frustum(lo: np.ndarray, hi: np.ndarray, planes) -> np.ndarray:
        """Boxes (corners ``lo``, ``hi``) not wholly outside a plane: per plane the corner
        furthest along its normal (``hi`` where the normal is positive, else ``lo``) is inside."""
        pos, neg, offsets = planes
        reach = hi @ pos
        reach += lo @ neg
        reach += offsets
        return (reach >= 0).all(axis=1)

    # -- main entry ------------------------------------------------------------
    def render(self, eye: np.ndarray, yaw: float, pitch: float, *, rgb: bool = True):
        """Return (rgb uint8, depth float32, seg uint8, ID buffer) for an eye pose.

        ``rgb=False`` leaves out the colour image (rgb is None): no colours, textures or
        signs, which touch neither depth, seg nor the ID buffer, so those are the same.

        rgb, depth and seg are new arrays (in memory of earlier ones nobody holds any
        more, see :class:`~situ_gym.backends.recycle.ArrayPool`); the ID buffer (per pixel 1 + the place of its
        face among this frame's drawn faces, 0: none; uint8 when fewer than 256 faces are
        drawn, else int32; read per-face tables through it with :meth:`gather`) is
        scratch that the next call overwrites. A Renderer is not
        meant to be shared between threads.
        """
        t0 = time.perf_counter()
        geo, cam = self.geo, self.camera
        eye = np.asarray(eye, np.float64)
        basis = camera_basis(yaw, pitch)
        planes = self._frustum_planes(eye, basis)

        # Boxes: frustum cull, distance cull for products, back-to-front order.
        keep = self._in_frustum(geo.lo, geo.hi, planes)
        if self.cullable.any():
            closest = np.clip(eye, geo.lo, geo.hi)
            far = np.einsum("ij,ij->i", closest - eye, closest - eye) > self.cull_distance**2
            keep &= ~(self.cullable & far)
        hidden = geo.hide_axis >= 0
        if hidden.any():  # products behind their fixture's back panel
            side = geo.hide_sign * (eye[np.maximum(geo.hide_axis, 0)] - geo.hide_coord)
            keep &= ~hidden | (side > 0)
        boxes = np.nonzero(keep)[0]
        leaves = self.tree.leaf_of_box[boxes]
        keys = self.tree.leaf_keys(eye, leaves)
        centre = 0.5 * (geo.lo[boxes] + geo.hi[boxes])
        dist = np.einsum("ij,ij->i", centre - eye, centre - eye)
        order = np.lexsort([-dist] + keys[::-1])
        boxes = boxes[order]
        faces = (boxes[:, None] * 6 + np.arange(6)).reshape(-1)

        # Quads in list order (floor and ceiling first), cull the small ones.
        q_keep = self._in_frustum(self.quad_lo, self.quad_hi, planes)
        qc = geo.quad_cullable
        if qc.any():
            closest = np.clip(eye, self.quad_lo, self.quad_hi)
            far = np.einsum("ij,ij->i", closest - eye, closest - eye) > (self.cull_distance * 1.5) ** 2
            q_keep &= ~(qc & far)
        faces = np.concatenate([self.quad_ids[q_keep], faces])

        # Valid, front-facing faces only.
        axis = geo.face_axis[faces]
        facing = geo.face_sign[faces] * (eye[axis] - geo.face_coord[faces]) > _EPS
        faces = faces[facing & geo.face_valid[faces]]

        # To camera space; clip against the near plane where needed.
        pts_cam = (geo.face_corners[faces] - eye) @ basis.T  # (F, 4, 3)
        z = pts_cam[..., 2]
        inside = z.min(axis=1) >= cam.near
        ids = self._ids8 if len(faces) <= LUT_MAX_FACES else self._ids  # scratch, overwritten by the next render
        ids.fill(0)
        f, cx, cy = cam.fx, cam.cx, cam.cy
        zz = np.where(inside[:, None], z, 1.0)
        px = np.empty(pts_cam.shape[:2] + (2,), np.float64)
        px[..., 0] = (f * pts_cam[..., 0] / zz + cx) * _SCALE
        px[..., 1] = (cam.fy * pts_cam[..., 1] / zz + cy) * _SCALE
        np.clip(px, -2.0e9 / 4, 2.0e9 / 4, out=px)
        pts = np.round(px).astype(np.int32)
        # The ID buffer holds each face's place among this frame's faces (1..F), so the
        # per-face tables below are built for the drawn faces only.
        drawn = self._drawn = np.concatenate([[0], faces + 1])
        polys = list(pts)
        n_clipped = 0
        for i in np.flatnonzero(~inside).tolist():  # faces crossing the near plane, clipped first
            poly = _clip_near(pts_cam[i], cam.near)
            if poly is None:
                polys[i] = None
                continue
            n_clipped += 1
            p = np.empty((len(poly), 2))
            p[:, 0] = (f * poly[:, 0] / poly[:, 2] + cx) * _SCALE
            p[:, 1] = (cam.fy * poly[:, 1] / poly[:, 2] + cy) * _SCALE
            np.clip(p, -2.0e9 / 4, 2.0e9 / 4, out=p)
            polys[i] = np.round(p).astype(np.int32)
        vals = range(1, len(polys) + 1)
        if n_clipped < len(polys) - int(inside.sum()):  # some lay wholly behind the near plane
            vals = [v for v, poly in zip(vals, polys, strict=True) if poly is not None]
            polys = [poly for poly in polys if poly is not None]
        fill, line = cv2.fillConvexPoly, cv2.LINE_8
        t1 = time.perf_counter()
        for val, poly in zip(vals, polys, strict=True):  # back to front: nearer faces overwrite
            fill(ids, poly, val, line, _SHIFT)
        t2 = time.perf_counter()

        h, w = ids.shape
        self._ids_now = ids
        self._idx_ready = False
        if ids is self._ids:
            self._place_index()
        words = self._words.view(np.uint8).reshape(h, w, 4)
        depth = self._depth(ids, drawn, eye, basis)
        rgb, t_tex = self._colour(words, depth, ids, drawn, faces, pts_cam, eye, basis) if rgb else (None, 0.0)
        self._lookup(self.seg_table[drawn], self._words)
        seg = cv2.cvtColor(words, cv2.COLOR_RGBA2RGB, dst=self._outputs.empty((h, w, 3), np.uint8))
        t3 = time.perf_counter()
        self.stats = {
            "boxes": float(len(boxes)),
            "faces": float(len(faces)),
            "clipped": float(n_clipped),
            "t_cull_order": t1 - t0,  # culling, ordering, projection
            "t_fill": t2 - t1,  # fillConvexPoly loop
            "t_lookup": t3 - t2,  # colour tables, textures and per-pixel depth
            "t_texture": t_tex,  # of which: texture lookups
        }
        return rgb, depth, seg, ids

    def _colour(self, words, depth, ids, drawn, faces, pts_cam, eye, basis) -> tuple[np.ndarray, float]:
        """The colour image of the faces just rasterised (flat colours, textures, then signs)
        and the seconds its texture lookups took."""
        cam, (h, w) = self.camera, ids.shape
        drawn_rgb = self.rgb_table[drawn]
        self._texture_flags(drawn_rgb, faces, pts_cam)
        self._lookup(drawn_rgb, self._words)
        t_tex = time.perf_counter()
        self._texture(self._words, depth, ids, faces, eye, basis)
        t_tex = time.perf_counter() - t_tex
        rgb = cv2.cvtColor(words, cv2.COLOR_RGBA2RGB, dst=self._outputs.empty((h, w, 3), np.uint8))
        if len(self.sign_faces):
            pos = self._pos
            pos[faces] = np.arange(1, len(faces) + 1)
            sign_vals = pos[self.sign_faces]
            pos[faces] = 0
            cand = np.nonzero(sign_vals)[0]
            if len(cand):  # one projection for all: most signs are too far to read, skip them here
                pc = (self.sign_corners[cand] - eye) @ basis.T
                z = np.maximum(pc[..., 2], cam.near)
                rows = cam.fy * pc[..., 1] / z
                readable = (pc[..., 2] >= cam.near).all(axis=1) & (rows.max(axis=1) - rows.min(axis=1) >= _SIGN_MIN_PX)
                pc = pc[readable]
                px = pc[..., :2] * self._focal / pc[..., 2:] + self._centre  # per corner: f * x / z + c
                for k, corners_px in zip(cand[readable].tolist(), px, strict=True):
                    self._paint_sign(rgb, ids, int(sign_vals[k]), self.signs[k], corners_px)
        return rgb, t_tex

    def _paint_sign(self, rgb, ids, val, sign, px) -> None:
        """Warp a sign's text texture onto the pixels where its face (ID-buffer value ``val``) won.

        ``px``: the sign's corners in pixels (all in front of the near plane).
        """
        _, _, tex, ink, src = sign
        cam = self.camera
        lo, hi = px.min(axis=0).tolist(), px.max(axis=0).tolist()
        x0, y0 = math.floor(lo[0]), math.floor(lo[1])
        x1, y1 = math.ceil(hi[0]), math.ceil(hi[1])
        if y1 - y0 < _SIGN_MIN_PX:
            return
        x0, y0 = max(x0, 0), max(y0, 0)
        x1, y1 = min(x1, cam.width - 1), min(y1, cam.height - 1)
        if x1 < x0 or y1 < y0:
            return
        won = ids[y0 : y1 + 1, x0 : x1 + 1] == val
        if not won.any():  # hidden behind nearer faces: nothing to warp
            return
        m = cv2.getPerspectiveTransform(src, (px - [x0, y0]).astype(np.float32))
        alpha = cv2.warpPerspective(tex, m, (x1 - x0 + 1, y1 - y0 + 1), flags=cv2.INTER_LINEAR)
        mask = (alpha > 0) & won
        if not mask.any():
            return
        roi = rgb[y0 : y1 + 1, x0 : x1 + 1]
        a = (alpha[mask].astype(np.float32) / 255.0)[:, None]
        roi[mask] = np.round(roi[mask] * (1.0 - a) + ink * a).astype(np.uint8)

    def gather(self, table: np.ndarray) -> np.ndarray:
        """A new (H, W) array of ``table[face id]`` per pixel of the last render.

        ``table`` is indexed by face id + 1 (entry 0: no face), like the colour tables,
        e.g. a per-face entity index. (New to the caller: its memory may be that of an
        earlier result nobody holds any more.)
        """
        t0 = time.perf_counter()
        out = self._lookup(table[self._drawn], self._outputs.empty(self._ids_now.shape, table.dtype))
        self.stats["t_gather"] = self.stats.get("t_gather", 0.0) + time.perf_counter() - t0
        return out

    def _place_index(self) -> np.ndarray:
        """The last render's ID buffer as intp (np.take's index type), converted once."""
        if not self._idx_ready:
            np.copyto(self._idx, self._ids_now)
            self._idx_ready = True
        return self._idx

    def _lookup(self, table: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Per pixel ``table[ID buffer]`` (``table`` has one entry per drawn face + 1), into ``out``.

        cv2.LUT on the 8-bit buffer where it applies (a 256-entry table of a type OpenCV
        knows; uint32 words are read as int32, the same bytes), else np.take: the same values.
        """
        if self._ids_now is self._ids8:
            lut_type = np.dtype(np.int32) if table.dtype == np.uint32 else table.dtype
            if lut_type in _LUT_TYPES:
                lut = np.zeros(256, lut_type)
                lut[: len(table)] = table.view(lut_type)
                if out is None:
                    return cv2.LUT(self._ids8, lut).view(table.dtype)
                cv2.LUT(self._ids8, lut, dst=out.view(lut_type))
                return out
        return np.take(table, self._place_index(), out=out, mode="clip")

    def _depth(self, ids: np.ndarray, drawn: np.ndarray, eye: np.ndarray, basis: np.ndarray):
        """Exact depth from each pixel's face plane: 1/depth = (ray . axis) / (plane - eye)."""
        axis = self._axis_ext[drawn]
        num = self._coord_ext[drawn] - eye[axis]
        num = np.where(np.abs(num) < _EPS, _EPS, num)
        inv = (1.0 / num).astype(np.float32)
        inv[0] = 0.0
        right, down, fwd = (np.ascontiguousarray(basis[r, axis].astype(np.float32) * inv) for r in range(3))
        invd, tmp = self._f1, self._f2
        self._lookup(right, invd)
        invd *= self.U
        self._lookup(down, tmp)
        tmp *= self.V
        invd += tmp
        self._lookup(fwd, tmp)
        invd += tmp
        # Pixels on a polygon's rasterised edge can extrapolate past the plane's horizon.
        np.maximum(invd, self._inv_far, out=invd)  # = max(invd, float32(1 / 200))
        depth = self._outputs.empty(invd.shape, np.float32)
        np.divide(np.float32(1.0), invd, out=depth)
        empty = np.equal(ids, 0, out=self._mask)
        np.copyto(depth, np.float32(np.inf), where=empty)
        return depth


def _sign_entry(face: int, corners: np.ndarray, text: str, ink) -> tuple:
    """(face id + 1, corners, alpha texture, ink colour, the texture's corner points)."""
    tex = _text_texture(text, corners)
    th, tw = tex.shape
    src = np.array([[0, 0], [tw - 1, 0], [tw - 1, th - 1], [0, th - 1]], np.float32)
    return face + 1, corners, tex, np.array(ink, np.float32), src


def _text_texture(text: str, corners: np.ndarray, height: int = 72) -> np.ndarray:
    """An alpha texture with ``text`` centred (first line large, the rest smaller)."""
    w_m = float(np.linalg.norm(corners[1] - corners[0]))
    h_m = float(np.linalg.norm(corners[3] - corners[0]))
    width = int(np.clip(round(height * w_m / max(h_m, 1e-3)), 32, 1200))
    tex = np.zeros((height, width), np.uint8)
    lines = [ln for ln in text.split("\n") if ln.strip()]
    if not lines:
        return tex
    weights = [1.0] + [0.6] * (len(lines) - 1)
    slot = [height * wgt / sum(weights) for wgt in weights]
    y = 0.0
    font = cv2.FONT_HERSHEY_DUPLEX
    for line, h in zip(lines, slot, strict=True):
        (tw, th), base = cv2.getTextSize(line, font, 1.0, 2)
        scale = min(0.92 * width / tw, 0.7 * h / (th + base))
        thick = max(1, int(round(2 * scale)))
        (tw, th), base = cv2.getTextSize(line, font, scale, thick)
        org = (int(round((width - tw) / 2)), int(round(y + (h + th) / 2)))
        cv2.putText(tex, line, org, font, scale, 255, thick, cv2.LINE_AA)
        y += h
    return tex


def _clip_near(poly: np.ndarray, near: float) -> np.ndarray | None:
    """Sutherland-Hodgman clip of a camera-space polygon to z >= near."""
    out = []
    n = len(poly)
    for i in range(n):
        a, b = poly[i], poly[(i + 1) % n]
        a_in, b_in = a[2] >= near, b[2] >= near
        if a_in:
            out.append(a)
        if a_in != b_in:
            t = (near - a[2]) / (b[2] - a[2])
            out.append(a + t * (b - a))
    if len(out) < 3:
        return None
    return np.array(out)
