"""Set-of-Mark overlays: segmentation + depth -> marked RGB view and handle map per role.

The per-frame work (which entities are visible within ``max_depth``, their regions,
contours and label points) is done once by :func:`analyse`; ``draw``
(:mod:`situ_gym.som.overlay`) then marks a copy of the RGB image with one role's
handles. :func:`annotate` does both.

Products are outlined (adjacent instances of one product share a contour after a small
morphological closing; separated instances get separate contours; all regions of one
product share one label). Fixtures, stores and areas get a box around their visible
region; one that would span most of the frame is outlined along its visible part
instead, the outline left off where it runs along the frame's edge. Every label sits
on a visible pixel of its region (the maximum of the mask's distance transform),
moved aside only to avoid another label: no two labels overlap.
"""

from __future__ import annotations

import logging
import math
import threading
import weakref
from dataclasses import dataclass

import cv2
import numpy as np

from situ_gym.backends.base import Frame
from situ_gym.scene.index import SceneIndex
from situ_gym.scene.model import BACKGROUND_COLOR, FLOOR_COLOR, WALL_COLOR
from situ_gym.som.labels import check_role
from situ_gym.som.overlay import draw
from situ_gym.som.types import ROLES, Analysis, Region, RoleView

__all__ = ["Region", "Analysis", "analyse", "draw", "annotate", "annotate_roles"]

logger = logging.getLogger(__name__)

_KIND_ORDER = {"product": 0, "fixture": 1, "store": 2, "area": 3}
_RESERVED = {BACKGROUND_COLOR, FLOOR_COLOR, WALL_COLOR}
_LARGE = 0.6  # a building whose box would cover more than this share of the frame is outlined
_GAP_FRACTION = 0.15  # product closing kernel as a fraction of the tallest piece
_MAX_CLOSE = 31


@dataclass(frozen=True)
class _ColorTable:
    """A collision-free multiplicative hash of the scene's entity colours.

    A seg pixel is read as one uint32 (its RGBA bytes, alpha 255); its slot is
    ``table[(key * mult) >> shift]`` when ``keys[slot] == key``, else 0 (no entity).
    """

    mult: np.uint32
    shift: np.uint32
    table: np.ndarray  # int32 (2**bits,): slot index, 0 = none
    keys: np.ndarray  # uint32 (n + 1,): pixel key of each slot (slot 0 never matches)
    ids: tuple[str, ...]  # entity id of each slot ("" at slot 0)
    product: np.ndarray  # bool (n + 1,): the slot is a product (gets the product depth limit)
    n_products: int  # slots 1..n_products are the products when ``products_first``
    products_first: bool  # the product slots come first (SceneIndex.entities order)


_TABLES: weakref.WeakKeyDictionary[SceneIndex, _ColorTable] = weakref.WeakKeyDictionary()


def _pixel_keys(rgb: np.ndarray) -> np.ndarray:
    """(..., 3) uint8 colours -> (...) uint32 keys, the same packing as :func:`_color_table`."""
    flat = np.ascontiguousarray(rgb.reshape(-1, 1, 3))
    rgba = cv2.cvtColor(flat, cv2.COLOR_RGB2RGBA)
    return rgba.view(np.uint32).reshape(rgb.shape[:-1])


def _color_table(index: SceneIndex) -> _ColorTable:
    table = _TABLES.get(index)
    if table is not None:
        return table
    ids = ("", *index.entities)
    n = len(ids) - 1
    seen: dict[tuple[int, int, int], str] = {}
    for eid in ids[1:]:
        color = tuple(index.entities[eid].color)
        if color in _RESERVED:
            raise ValueError(f"entity {eid!r} uses the reserved segmentation colour {color!r}")
        if color in seen:
            raise ValueError(f"entities {seen[color]!r} and {eid!r} share the colour {color!r}")
        seen[color] = eid
    colors = np.array([index.entities[e].color for e in ids[1:]], dtype=np.uint8).reshape(-1, 3)
    entity_keys = _pixel_keys(colors) if n else np.zeros(0, dtype=np.uint32)
    # slot 0 gets a key no pixel can have (alpha 0)
    keys = np.concatenate([np.zeros(1, np.uint32), entity_keys])
    rng = np.random.default_rng(0)
    bits = max(6, math.ceil(math.log2(4 * max(n, 1))))
    while True:
        for _ in range(64):
            mult = np.uint32(rng.integers(1, 2**31) * 2 + 1)
            shift = np.uint32(32 - bits)
            hashed = (entity_keys * mult) >> shift
            if len(np.unique(hashed)) == n:
                break
        else:
            bits += 1
            continue
        break
    slots = np.zeros(2**bits, dtype=np.int32)
    slots[hashed] = np.arange(1, n + 1, dtype=np.int32)
    product = np.array([False] + [eid in index.products for eid in ids[1:]], dtype=bool)
    n_products = int(product.sum())
    products_first = bool(product[1 : n_products + 1].all())
    table = _ColorTable(mult, shift, slots, keys, ids, product, n_products, products_first)
    _TABLES[index] = table
    return table


class _Scratch:
    """Reusable full-frame work arrays for one image size (one set per thread)."""

    def __init__(self, h: int, w: int):
        self.rgba = np.empty((h, w, 4), dtype=np.uint8)
        self.u32 = np.empty((h, w), dtype=np.uint32)
        self.slot = np.empty((h, w), dtype=np.int32)
        self.ok = np.empty((h, w), dtype=bool)
        self.near = np.empty((h, w), dtype=bool)
        self.limit = np.empty((h, w), dtype=np.float32)
        self.change = np.empty((h, w), dtype=bool)
        self.typed: dict[np.dtype, np.ndarray] = {}

    def slots(self, dtype: np.dtype) -> np.ndarray:
        """An (H, W) work array of ``dtype`` for the masked slots of the entity-index path."""
        out = self.typed.get(dtype)
        if out is None:
            out = self.typed[dtype] = np.empty(self.slot.shape, dtype=dtype)
        return out


_LOCAL = threading.local()


def _scratch(h: int, w: int) -> _Scratch:
    cache = getattr(_LOCAL, "scratch", None)
    if cache is None or cache.slot.shape != (h, w):
        cache = _LOCAL.scratch = _Scratch(h, w)
    return cache


def _closing_size(mask: np.ndarray, close_px: int) -> int:
    """Closing kernel for one product's mask: ``close_px``, widened for near products.

    Facings of one product stand a small fixed gap apart (1 cm in the generated
    Supermarket, a few percent of a box's height), so the seam on screen grows with
    the box; the kernel follows the tallest connected piece, capped at ``_MAX_CLOSE``.
    Large crops are labelled on every ``step``-th row and column (as in :func:`_anchor`),
    which measures the tallest piece to within ``step`` pixels.
    """
    h, w = mask.shape
    if math.ceil(_GAP_FRACTION * h) <= close_px:
        return close_px  # no piece is taller than the crop: the smallest kernel, no labelling needed
    step = max(1, math.ceil(math.sqrt(h * w / 16384)))
    sub = np.ascontiguousarray(mask[::step, ::step]) if step > 1 else mask
    _, _, stats, _ = cv2.connectedComponentsWithStats(sub, connectivity=8)
    if len(stats) < 2:  # the subsample missed every pixel
        _, _, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
        step = 1
    tallest = min(h, int(stats[1:, cv2.CC_STAT_HEIGHT].max()) * step)
    return max(close_px, min(math.ceil(_GAP_FRACTION * tallest), _MAX_CLOSE))


def _anchor(mask: np.ndarray) -> tuple[int, int]:
    """(x, y) of the mask's distance-transform maximum; always a non-zero pixel."""
    h, w = mask.shape
    step = max(1, math.ceil(math.sqrt(h * w / 16384)))  # keep the transform small
    sub = mask[::step, ::step]
    if step > 1 and not sub.any():
        step, sub = 1, mask
    padded = cv2.copyMakeBorder(np.ascontiguousarray(sub), 1, 1, 1, 1, cv2.BORDER_CONSTANT, value=0)
    dist = cv2.distanceTransform(padded, cv2.DIST_L2, 3)
    y, x = divmod(int(np.argmax(dist)), dist.shape[1])
    return (x - 1) * step, (y - 1) * step


def analyse(
    frame: Frame,
    index: SceneIndex,
    *,
    max_depth: float = 8.0,
    min_pixels: int = 30,
    close_px: int = 5,
    building_max_depth: float | None = None,
) -> Analysis:
    """Find the entities visible in ``frame``: products within ``max_depth`` metres,
    fixtures/stores/areas within ``building_max_depth`` (default: ``max_depth``).

    Buildings are large and are navigation targets, so a larger limit for them lets a
    shopper see where to go across the hall while product labels stay legible up close.
    An entity is kept when at least ``min_pixels`` of its pixels lie within its depth
    limit. ``close_px`` is the smallest closing kernel that merges adjacent product
    instances (gaps narrower than it are bridged); near products, large on screen,
    get a kernel of 15% of their height (at most 31 px).

    Entities are read from ``frame.entity_index`` when the backend provides it (the
    embedded renderer does), else decoded from the seg colours; both give the same
    result. Should the index disagree with seg at a label point (seg edited after
    capture), the colours win.
    """
    if max_depth <= 0:
        raise ValueError(f"max_depth must be positive, got {max_depth!r}")
    if building_max_depth is None:
        building_max_depth = max_depth
    if building_max_depth <= 0:
        raise ValueError(f"building_max_depth must be positive, got {building_max_depth!r}")
    if min_pixels < 1:
        raise ValueError(f"min_pixels must be >= 1, got {min_pixels!r}")
    if close_px < 1:
        raise ValueError(f"close_px must be >= 1, got {close_px!r}")
    seg, depth = frame.seg, frame.depth
    if seg.ndim != 3 or seg.shape[2] != 3 or seg.dtype != np.uint8:
        raise ValueError(f"seg must be uint8 (H, W, 3), got {seg.dtype} {seg.shape}")
    if depth.shape != seg.shape[:2]:
        raise ValueError(f"depth shape {depth.shape} does not match seg {seg.shape[:2]}")

    table = _color_table(index)
    h, w = depth.shape
    buf = _scratch(h, w)
    entity_index = frame.entity_index
    if entity_index is not None:
        if entity_index.shape != (h, w) or entity_index.dtype.kind not in "ui":
            raise ValueError(
                f"entity_index must be an integer (H, W) array like depth {depth.shape}, "
                f"got {entity_index.dtype} {entity_index.shape}"
            )
        slot = _index_slots(entity_index, depth, table, buf, max_depth, building_max_depth)
    else:
        slot = _colour_slots(seg, depth, table, buf, max_depth, building_max_depth)
    counts, present, boxes = _runs(slot, len(table.ids), min_pixels, buf)
    regions = _regions(frame, index, table, slot, counts, present, boxes, close_px)
    if entity_index is not None and not all(
        tuple(int(c) for c in seg[r.anchor[1], r.anchor[0]]) == tuple(index.entities[r.entity_id].color)
        for r in regions
    ):
        # The index disagrees with the segmentation image (edited after capture?):
        # the colours are the reference, so decode them.
        logger.debug("entity_index disagrees with seg; decoding the segmentation colours")
        slot = _colour_slots(seg, depth, table, buf, max_depth, building_max_depth)
        counts, present, boxes = _runs(slot, len(table.ids), min_pixels, buf)
        regions = _regions(frame, index, table, slot, counts, present, boxes, close_px)
    return Analysis(frame=frame, regions=tuple(regions))


def _colour_slots(seg, depth, table: _ColorTable, buf: _Scratch, max_depth, building_max_depth) -> np.ndarray:
    """Per-pixel entity slot from the seg colours (0: none or beyond its depth limit)."""
    h, w = depth.shape
    # Reused buffers: fresh full-frame temporaries cost more in page faults than the
    # arithmetic itself.
    rgba = cv2.cvtColor(np.ascontiguousarray(seg), cv2.COLOR_RGB2RGBA, dst=buf.rgba)
    keys = rgba.view(np.uint32).reshape(h, w)
    np.multiply(keys, table.mult, out=buf.u32)
    np.right_shift(buf.u32, table.shift, out=buf.u32)
    slot = np.take(table.table, buf.u32, out=buf.slot)
    np.take(table.keys, slot, out=buf.u32)
    np.equal(buf.u32, keys, out=buf.ok)
    limits = np.where(table.product, np.float32(max_depth), np.float32(building_max_depth))
    np.take(limits.astype(np.float32), slot, out=buf.limit)
    np.less_equal(depth, buf.limit, out=buf.near)
    np.logical_and(buf.ok, buf.near, out=buf.ok)
    np.multiply(slot, buf.ok, out=slot)
    return slot


def _index_slots(entity_index, depth, table: _ColorTable, buf: _Scratch, max_depth, building_max_depth):
    """The same slots from a renderer's per-pixel entity index (no colour decoding)."""
    product_limit, building_limit = np.float32(max_depth), np.float32(building_max_depth)
    near = buf.near
    if product_limit == building_limit:
        np.less_equal(depth, product_limit, out=near)
    elif table.products_first:  # slots 1..n_products are products: a comparison, no lookup
        np.greater(entity_index, table.n_products, out=buf.ok)
        buf.limit.fill(product_limit)
        np.copyto(buf.limit, building_limit, where=buf.ok)
        np.less_equal(depth, buf.limit, out=near)
    else:
        limits = np.where(table.product, product_limit, building_limit).astype(np.float32)
        np.take(limits, entity_index, out=buf.limit, mode="clip")
        np.less_equal(depth, buf.limit, out=near)
    slot = buf.slots(entity_index.dtype)
    np.multiply(entity_index, near, out=slot)
    return slot


def _runs(slot: np.ndarray, n_slots: int, min_pixels: int, buf: _Scratch):
    """Pixel counts, the slots with at least ``min_pixels`` and their boxes, from row runs.

    A run is a maximal horizontal stretch of one slot; the runs of a slot give its
    pixel count (their lengths) and its bounding box (first / last run row, least
    start / greatest end column), in a few passes over the image instead of one
    per statistic.
    """
    h, w = slot.shape
    change = buf.change
    change[:, 0] = True
    np.not_equal(slot[:, 1:], slot[:, :-1], out=change[:, 1:])
    starts = np.flatnonzero(change)
    ends = np.empty_like(starts)
    ends[:-1] = starts[1:]
    ends[-1] = h * w
    vals = slot.ravel()[starts]
    keep = vals != 0
    starts, ends, vals = starts[keep], ends[keep], vals[keep].astype(np.intp)
    if len(vals) and not 0 <= int(vals.min()) <= int(vals.max()) < n_slots:
        bad = int(vals.min()) if int(vals.min()) < 0 else int(vals.max())
        raise ValueError(f"entity_index holds {bad}, outside the scene's slots 0..{n_slots - 1}")
    lengths = ends - starts
    counts = np.bincount(vals, weights=lengths, minlength=n_slots).astype(np.int64)
    present = np.flatnonzero(counts >= min_pixels)
    present = present[present > 0]
    if not len(present):
        return counts, present, np.zeros((0, 4), np.int64)
    wanted = np.zeros(n_slots, dtype=bool)
    wanted[present] = True
    sel = wanted[vals]
    starts, lengths, vals = starts[sel], lengths[sel], vals[sel]
    order = np.argsort(vals, kind="stable")  # raster order within each slot
    starts, lengths, vals = starts[order], lengths[order], vals[order]
    first = np.flatnonzero(np.r_[True, vals[1:] != vals[:-1]])
    last = np.r_[first[1:], len(vals)] - 1
    rows = starts // w
    x0 = starts - rows * w
    boxes = np.stack(
        [
            np.minimum.reduceat(x0, first),
            rows[first],
            np.maximum.reduceat(x0 + lengths, first),
            rows[last] + 1,
        ],
        axis=1,
    )
    return counts, present, boxes  # boxes: x, y, x1, y1 per present slot


def _top_left(contour: np.ndarray) -> tuple[int, int]:
    """(least y, least x) of a contour's points: its bounding box's top-left corner."""
    x, y, _, _ = cv2.boundingRect(contour)
    return y, x


def _regions(frame, index, table, slot, counts, present, boxes, close_px) -> list[Region]:
    depth = frame.depth
    kernels: dict[int, np.ndarray] = {}
    regions: list[Region] = []
    for k, (x, y, x1, y1) in zip(present.tolist(), boxes.tolist(), strict=True):
        eid = table.ids[k]
        kind = index.kind(eid)
        crop_bool = slot[y:y1, x:x1] == k  # a fresh array: the buffers are reused
        crop = crop_bool.view(np.uint8)
        distance = float(np.float32(cv2.minMaxLoc(depth[y:y1, x:x1], mask=crop)[0]))  # no masked copy
        ax, ay = _anchor(crop)
        contours: tuple[np.ndarray, ...] = ()
        if kind == "product":
            size = _closing_size(crop, close_px)
            if size not in kernels:
                kernels[size] = cv2.getStructuringElement(cv2.MORPH_RECT, (size, size))
            kernel = kernels[size]
            pad = size
            padded = cv2.copyMakeBorder(crop, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=0)
            closed = cv2.morphologyEx(padded, cv2.MORPH_CLOSE, kernel)
            found, _ = cv2.findContours(
                closed, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE, offset=(x - pad, y - pad)
            )
            # Sort for determinism independent of OpenCV's traversal order.
            contours = tuple(sorted(found, key=_top_left))
        elif (x1 - x) * (y1 - y) > _LARGE * slot.shape[0] * slot.shape[1]:
            found, _ = cv2.findContours(crop, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE, offset=(x, y))
            found = [cv2.approxPolyDP(c, 2.0, True) for c in found if cv2.contourArea(c) >= 4 * 30]
            contours = tuple(sorted(found, key=_top_left))
        regions.append(
            Region(
                entity_id=eid,
                kind=kind,
                name=index.name(eid),
                pixels=int(counts[k]),
                distance=distance,
                bbox=(x, y, x1 - x, y1 - y),
                anchor=(x + ax, y + ay),
                contours=contours,
            )
        )
    regions.sort(key=lambda r: _KIND_ORDER[r.kind])  # stable: entity order within a kind
    return regions


def annotate(
    frame: Frame,
    index: SceneIndex,
    role: str,
    *,
    max_depth: float = 8.0,
    min_pixels: int = 30,
    held_item: str | None = None,
    fixed: dict[str, str] | None = None,
    building_max_depth: float | None = None,
) -> RoleView:
    """One role's Set-of-Mark view of ``frame`` (see :func:`analyse` and :func:`draw`)."""
    check_role(role)
    analysis = analyse(
        frame, index, max_depth=max_depth, min_pixels=min_pixels, building_max_depth=building_max_depth
    )
    return draw(analysis, index, role, held_item=held_item, fixed=fixed)


def annotate_roles(
    frame: Frame,
    index: SceneIndex,
    *,
    max_depth: float = 8.0,
    min_pixels: int = 30,
    held_item: str | None = None,
    building_max_depth: float | None = None,
) -> dict[str, RoleView]:
    """Both roles' views of one frame, sharing one analysis: ``{"user": ..., "assistant": ...}``."""
    analysis = analyse(
        frame, index, max_depth=max_depth, min_pixels=min_pixels, building_max_depth=building_max_depth
    )
    return {role: draw(analysis, index, role, held_item=held_item) for role in ROLES}
