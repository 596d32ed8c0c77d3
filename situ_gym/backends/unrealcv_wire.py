"""The UnrealCV wire format: plan <-> UE coordinates, image and depth decoding, mask colours.

Coordinates (``to_ue`` / ``from_ue``): our plan is right-handed (x east, y north, z
up, metres, yaw counter-clockwise from +x); UE is left-handed (X forward, Y right, Z
up, centimetres, yaw clockwise seen from above). The level is built with ``Y = -y``
(what every right-to-left-handed import does), so ``X = 100 x``, ``Y = -100 y``,
``Z = 100 z``, ``yaw_ue = -yaw`` and pitch/roll unchanged (pitch > 0 looks up in both).
``flip_y=False`` is for a level built with ``Y = +y``: then ``yaw_ue = +yaw``, and
left/right in the engine's images are mirrored with respect to our plan.

Segmentation: the scene's colours are assigned to the level's objects on connect
(``vset /object/NAME/color R G B``; product instance ids, fixture/store/area ids, or an
``object_names`` mapping). Mask colours come back through gamma and may shift a few
units, so ``snap_colors`` maps each pixel to the scene colour within +-``seg_tolerance``
per channel (channels under 16 may also read 0) and everything else to BACKGROUND.
"""

from __future__ import annotations

import io
from collections.abc import Iterable

import cv2
import numpy as np

from situ_gym.backends.base import BackendError
from situ_gym.scene.model import BACKGROUND_COLOR

__all__ = ["to_ue", "from_ue", "reply_bytes", "decode_image", "decode_depth", "ColorSnapper", "snap_colors"]


# -- coordinate conventions ------------------------------------------------------
def to_ue(x: float, y: float, z: float, yaw: float, pitch: float = 0.0, *, flip_y: bool = True):
    """Our pose (metres, yaw CCW from +x) -> UE ``((X, Y, Z) cm, (pitch, yaw, roll) deg)``.

    >>> to_ue(1.0, 2.0, 1.5, 90.0, -10.0)
    ((100.0, -200.0, 150.0), (-10.0, -90.0, 0.0))
    """
    sign = -1.0 if flip_y else 1.0
    yaw_ue = (sign * yaw + 180.0) % 360.0 - 180.0  # (-180, 180]
    if yaw_ue == -180.0:
        yaw_ue = 180.0
    return (100.0 * x, sign * 100.0 * y, 100.0 * z), (float(pitch), yaw_ue + 0.0, 0.0)


def from_ue(loc: Iterable[float], rot: Iterable[float] | None = None, *, flip_y: bool = True):
    """Inverse of ``to_ue``: ``(x, y, z)`` metres and, with ``rot``, ``(yaw, pitch)`` degrees.

    >>> from_ue((100.0, -200.0, 150.0), (-10.0, -90.0, 0.0))
    ((1.0, 2.0, 1.5), (90.0, -10.0))
    """
    sign = -1.0 if flip_y else 1.0
    X, Y, Z = (float(v) for v in loc)
    xyz = (X / 100.0, sign * Y / 100.0, Z / 100.0)
    if rot is None:
        return xyz, None
    pitch, yaw_ue, _roll = (float(v) for v in rot)
    return xyz, ((sign * yaw_ue) % 360.0 + 0.0, pitch)


# -- decoding --------------------------------------------------------------------
def reply_bytes(reply: str | bytes, what: str) -> bytes:
    if isinstance(reply, str):
        if reply.lstrip().lower().startswith("error"):
            raise BackendError(f"UnrealCV could not produce {what}: {reply.strip()[:200]!r}")
        return reply.encode("utf-8")  # the client decodes any body that happens to be valid UTF-8
    if reply is None:
        raise BackendError(f"UnrealCV connection lost while reading {what}")
    return bytes(reply)


def decode_image(data: bytes) -> np.ndarray:
    """PNG or BMP (3- or 4-channel BGR[A], either row order) bytes -> uint8 RGB (H, W, 3)."""
    if not data:
        raise BackendError("UnrealCV sent an empty image reply")
    try:
        img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    except cv2.error as exc:  # OpenCV asserts on some malformed headers instead of returning None
        raise BackendError(f"cannot decode an image from {len(data)} bytes: {str(exc).strip()[-120:]}") from exc
    if img is None:
        raise BackendError(f"cannot decode an image from {len(data)} bytes starting {data[:8]!r}")
    if img.dtype != np.uint8:
        img = (img >> 8).astype(np.uint8) if img.dtype == np.uint16 else np.clip(img, 0, 255).astype(np.uint8)
    if img.ndim == 2:
        return np.ascontiguousarray(np.repeat(img[..., None], 3, axis=2))
    return np.ascontiguousarray(img[..., 2::-1])  # BGR(A) -> RGB, alpha dropped


def decode_depth(data: bytes, *, scale: float = 0.01, kind: str = "plane", focal: float | None = None,
                 far: float = 600.0) -> np.ndarray:
    """NPY bytes (never pickled) -> float32 (H, W) metres along the view axis, inf beyond ``far``.

    ``scale`` converts the engine's unit to metres (UnrealCV: centimetres). ``kind="point"``
    converts distance-to-camera depth to plane depth with the pinhole ``focal`` (pixels).
    """
    try:
        arr = np.load(io.BytesIO(data), allow_pickle=False)
    except ValueError as exc:
        raise BackendError(f"cannot decode depth NPY from {len(data)} bytes: {exc}") from exc
    arr = np.asarray(arr, np.float32)
    if arr.ndim == 3 and arr.shape[2] >= 1:
        arr = arr[..., 0]
    if arr.ndim != 2:
        raise BackendError(f"depth must be 2-D, got shape {arr.shape}")
    depth = arr * np.float32(scale)
    if kind == "point":
        if focal is None:
            raise ValueError("point depth needs the focal length in pixels")
        h, w = depth.shape
        u = np.arange(w, dtype=np.float32) - (w - 1) / 2.0
        v = np.arange(h, dtype=np.float32) - (h - 1) / 2.0
        depth = depth / np.sqrt(1.0 + (u[None, :] ** 2 + v[:, None] ** 2) / np.float32(focal) ** 2)
    depth = np.where(np.isfinite(depth) & (depth > 0) & (depth < far), depth, np.float32(np.inf))
    return depth.astype(np.float32)


class ColorSnapper:
    """Maps mask pixels to a palette within ``tol`` per channel (see ``snap_colors``); built once.

    Every colour within reach of a palette colour is listed in a sorted key table (a
    few hundred keys per palette colour) and a frame costs one ``searchsorted`` over its
    runs of equal pixels, whatever the number of distinct colours (gamma noise, edges).
    """

    def __init__(self, palette, tol: int = 3):
        pal = np.asarray(palette, np.int64).reshape(-1, 3)
        if pal.size == 0 or pal.min() < 0 or pal.max() > 255:
            raise ValueError(f"palette must hold RGB colours in 0..255, got {pal.tolist()[:4]!r}...")
        self.palette = pal.astype(np.uint8)
        keys, dist, idx = [], [], []
        for k, color in enumerate(pal):
            axes = []
            for v in color:
                lo = 0 if v < 16 else max(0, v - tol)  # dark channels may read back as 0
                axes.append(np.arange(lo, min(255, v + tol) + 1))
            r, g, b = np.meshgrid(*axes, indexing="ij")
            d = np.maximum.reduce([np.where((c == 0) & (v < 16), 0, np.abs(c - v)) for c, v in zip((r, g, b), color,
                                                                                                   strict=True)])
            near = d <= tol
            keys.append(((r << 16) | (g << 8) | b)[near])
            dist.append(d[near])
            idx.append(np.full(int(near.sum()), k))
        keys, dist, idx = np.concatenate(keys), np.concatenate(dist), np.concatenate(idx)
        order = np.lexsort((idx, dist, keys))  # per key: nearest first, then the lower index
        keys, idx = keys[order], idx[order]
        first = np.ones(len(keys), bool)
        first[1:] = keys[1:] != keys[:-1]
        self._keys, self._idx = keys[first].astype(np.int32), idx[first]

    def __call__(self, mask: np.ndarray) -> np.ndarray:
        if mask.ndim != 3 or mask.shape[2] != 3 or mask.dtype != np.uint8:
            raise ValueError(f"mask must be uint8 (H, W, 3), got {mask.dtype} {mask.shape}")
        flat = mask.reshape(-1, 3)
        packed = (flat[:, 0].astype(np.int32) << 16) | (flat[:, 1].astype(np.int32) << 8) | flat[:, 2]
        # Masks come in runs of one colour along rows: look up each run once.
        change = np.empty(len(packed), bool)
        change[:1] = True
        np.not_equal(packed[1:], packed[:-1], out=change[1:])
        vals = packed[change]
        pos = np.minimum(np.searchsorted(self._keys, vals), len(self._keys) - 1)
        hit = self._keys[pos] == vals
        colors = np.empty((len(vals), 3), np.uint8)
        colors[:] = BACKGROUND_COLOR
        colors[hit] = self.palette[self._idx[pos[hit]]]
        out = colors[np.cumsum(change) - 1]
        return out.reshape(mask.shape)


def snap_colors(mask: np.ndarray, palette, tol: int = 3) -> np.ndarray:
    """Map every pixel to the palette colour it matches within ``tol`` per channel, else BACKGROUND.

    A palette channel under 16 also matches a read-back 0 (the engine's gamma can crush
    dark channels). Among several matches the nearest (smallest largest-channel
    difference) wins. Build a ``ColorSnapper`` once to snap many frames.
    """
    return ColorSnapper(palette, tol)(mask)
