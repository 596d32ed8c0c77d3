"""Set-of-Mark drawing: one role's handles on a copy of an analysed frame, labels never overlapping.

Product handles are assigned afresh in each observation: the user's in left-to-right
order of label points, the assistant's row by row (top to bottom), each row left to
right, so the two numberings usually differ and one role's label does not give away
the other's. Label text scales with the image height (the sizes below are for 480 rows).
"""

from __future__ import annotations

import functools
import threading

import cv2
import numpy as np

from situ_gym.backends.recycle import ArrayPool
from situ_gym.scene.index import SceneIndex
from situ_gym.som.labels import check_role, fixed_handles, fixed_handles_by_id, product_label
from situ_gym.som.types import Analysis, Region, RoleView, VisibleEntity

__all__ = ["draw"]

_FONT = cv2.FONT_HERSHEY_SIMPLEX
_FONT_SCALE = 0.45
_FONT_THICK = 1
# Distinct bright colours for product marks (RGB); label i uses _PALETTE[i % len].
_PALETTE = (
    (255, 215, 0),
    (0, 230, 255),
    (255, 80, 200),
    (120, 255, 80),
    (255, 140, 40),
    (170, 130, 255),
    (255, 255, 255),
    (60, 160, 255),
)
_BUILDING_COLOR = {"fixture": (255, 120, 0), "store": (255, 120, 0), "area": (0, 200, 120)}


_LOCAL = threading.local()


def _images_pool() -> ArrayPool:
    """This thread's pool of marked images (two per frame: one per role, and the caller's last few)."""
    pool = getattr(_LOCAL, "pool", None)
    if pool is None:
        pool = _LOCAL.pool = ArrayPool(slots=6)
    return pool


def _product_order(regions: list[Region], role: str, height: int) -> list[Region]:
    if role == "user":
        return sorted(regions, key=lambda r: (r.anchor[0], r.anchor[1], r.entity_id))
    # Assistant: rows (label points within 1/16 of the image height of the row's
    # first point, e.g. one shelf level), top to bottom, each left to right.
    tol = max(1, height // 16)
    rows: list[list[Region]] = []
    for r in sorted(regions, key=lambda r: (r.anchor[1], r.anchor[0], r.entity_id)):
        if rows and r.anchor[1] - rows[-1][0].anchor[1] <= tol:
            rows[-1].append(r)
        else:
            rows.append([r])
    return [r for row in rows for r in sorted(row, key=lambda r: (r.anchor[0], r.entity_id))]


def _overlaps(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _free(rect: tuple[int, int, int, int], taken: list) -> bool:
    """``rect`` overlaps none of ``taken`` (as :func:`_overlaps`, inlined: it runs per label pair)."""
    x0, y0, x1, y1 = rect
    for t in taken:
        if x0 < t[2] and t[0] < x1 and y0 < t[3] and t[1] < y1:
            return False
    return True


def _place(
    anchor: tuple[int, int], size: tuple[int, int], shape: tuple[int, int], taken: list
) -> tuple[int, int, int, int]:
    """A label rectangle (x0, y0, x1, y1) near ``anchor``, inside the image, on none of ``taken``.

    Candidates ring the anchor at growing distances (nearest first); the first free one
    wins. Only an image with no free spot left at all gets an overlapping label.
    """
    (tw, th), (img_h, img_w) = size, shape
    ax, ay = anchor

    def at(dx: int, dy: int) -> tuple[int, int, int, int]:
        x0 = min(max(ax - tw // 2 + dx, 0), max(img_w - tw, 0))
        y0 = min(max(ay - th // 2 + dy, 0), max(img_h - th, 0))
        return (x0, y0, x0 + tw, y0 + th)

    first = at(0, 0)
    if _free(first, taken):
        return first
    rings = max(img_w // max(tw, 1), img_h // max(th, 1)) + 1
    for k in range(1, rings + 1):
        ring = [(i, j) for j in range(-k, k + 1) for i in range(-k, k + 1) if max(abs(i), abs(j)) == k]
        ring.sort(key=lambda ij: (ij[0] ** 2 * tw**2 + ij[1] ** 2 * th**2, ij[1], ij[0]))
        for i, j in ring:
            rect = at(i * tw, j * th)
            if _free(rect, taken):
                return rect
    return first


def _text_color(bg: tuple[int, int, int]) -> tuple[int, int, int]:
    luminance = 0.299 * bg[0] + 0.587 * bg[1] + 0.114 * bg[2]
    return (0, 0, 0) if luminance > 128 else (255, 255, 255)


def _font(height: int) -> tuple[float, int]:
    """Label font scale and thickness for an image ``height`` rows tall."""
    scale = max(0.3, _FONT_SCALE * height / 480.0)
    return scale, max(_FONT_THICK, int(round(scale / 0.6)))


@functools.lru_cache(maxsize=4096)
def _text_size(text: str, scale: float, thick: int) -> tuple[tuple[int, int], int]:
    """cv2.getTextSize, remembered: the same few handles are measured in every frame."""
    return cv2.getTextSize(text, _FONT, scale, thick)


def _label(image: np.ndarray, text: str, anchor, color, taken: list) -> None:
    scale, thick = _font(image.shape[0])
    (tw, th), base = _text_size(text, scale, thick)
    size = (tw + 4, th + base + 4)
    x0, y0, x1, y1 = _place(anchor, size, image.shape[:2], taken)
    taken.append((x0, y0, x1, y1))
    cv2.rectangle(image, (x0, y0), (x1 - 1, y1 - 1), color, thickness=-1)
    cv2.putText(
        image,
        text,
        (x0 + 2, y0 + 2 + th),
        _FONT,
        scale,
        _text_color(color),
        thick,
        cv2.LINE_AA,
    )


def _box(image: np.ndarray, r: Region, color: tuple[int, int, int]) -> None:
    """A fixture's, store's or area's mark: its box, or for one too large for a box its
    outline, left off along the frame's edge."""
    if r.contours:
        ih, iw = image.shape[:2]
        inner = image[2 : ih - 2, 2 : iw - 2]
        cv2.drawContours(inner, list(r.contours), -1, color, thickness=2, offset=(-2, -2))
    else:
        x, y, w, h = r.bbox
        cv2.rectangle(image, (x, y), (x + w - 1, y + h - 1), color, thickness=2)


def draw(
    analysis: Analysis,
    index: SceneIndex,
    role: str,
    *,
    held_item: str | None = None,
    fixed: dict[str, str] | None = None,
    pixels: bool = True,
) -> RoleView:
    """Mark a copy of the frame's RGB image with ``role``'s handles.

    ``pixels=False``: the same handles and visible entities with no image (``image`` None),
    for policies that read no pixels; the marks' placement never changes a handle.
    """
    check_role(role)
    rgb = analysis.frame.rgb
    if pixels:
        image = _images_pool().empty(rgb.shape, rgb.dtype)  # memory of a view nobody holds any more
        np.copyto(image, rgb)
    else:
        image = None
    if fixed is None:
        fixed = fixed_handles(index, role)
        fixed_by_id = fixed_handles_by_id(index, role)
    else:
        fixed_by_id = {eid: h for h, eid in fixed.items()}

    products = _product_order(
        [r for r in analysis.regions if r.kind == "product"], role, rgb.shape[0]
    )
    buildings = [r for r in analysis.regions if r.kind != "product"]
    handles: dict[str, str] = {}
    visible: list[VisibleEntity] = []
    labels: list[tuple[str, tuple[int, int], tuple[int, int, int]]] = []

    for r in buildings:  # boxes first so product outlines stay on top
        handle = fixed_by_id.get(r.entity_id)
        if handle is None:
            continue
        color = _BUILDING_COLOR[r.kind]
        if image is not None:
            _box(image, r, color)
        labels.append((handle, r.anchor, color))
        visible.append(VisibleEntity(handle, r.entity_id, r.kind, r.name, r.distance, r.pixels))
    building_visible = visible
    visible = []
    product_labels = []
    for i, r in enumerate(products):
        handle = product_label(i, role)
        color = _PALETTE[i % len(_PALETTE)]
        if image is not None:  # cv2.polylines draws a closed contour as drawContours does, at half the cost
            cv2.polylines(image, r.contours, True, color, thickness=2)
        handles[handle] = r.entity_id
        product_labels.append((handle, r.anchor, color))
        visible.append(VisibleEntity(handle, r.entity_id, r.kind, r.name, r.distance, r.pixels))
    if held_item is not None and held_item not in handles.values():
        handles[product_label(len(products), role)] = held_item

    if image is not None:
        taken: list[tuple[int, int, int, int]] = []
        for text, anchor, color in product_labels + labels:  # products get first pick
            _label(image, text, anchor, color, taken)
    handles.update(fixed)
    return RoleView(role=role, image=image, handles=handles, visible=visible + building_visible)
