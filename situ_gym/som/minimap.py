"""Top-down layout minimap with a role's fixed handles and the user's pose.

The static part (hall, walls, fixture/store/area footprints labelled with the role's
fixed handles and the fixture's first category or the store's name, optionally the
faint waypoint graph) is drawn once per (scene index, role, size) and cached; each
call copies it and draws the user's position dot and a bold heading arrow.
Plan ``+y`` (north) points up in the image.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass

import cv2
import numpy as np

from situ_gym.backends.base import Pose
from situ_gym.scene.index import SceneIndex
from situ_gym.scene.model import Scene
from situ_gym.som.labels import check_role, fixed_handles_by_id

__all__ = ["MapTransform", "render_minimap", "map_transform"]

_MARGIN = 6
_OUTSIDE = (48, 48, 52)
_FLOOR = (236, 234, 226)
_WALL = (70, 70, 76)
_FIXTURE_FILL = (176, 196, 226)
_FIXTURE_EDGE = (60, 90, 150)
_STORE_FILL = (232, 214, 178)
_STORE_EDGE = (150, 110, 50)
_AREA_EDGE = (190, 150, 90)
_WAYPOINT = (205, 205, 200)
_USER = (220, 30, 30)
_TEXT = (20, 20, 20)
_FONT = cv2.FONT_HERSHEY_SIMPLEX


@dataclass(frozen=True)
class MapTransform:
    """Plan metres -> minimap pixels: ``u = ox + s (x - xmin)``, ``v = oy + s (ymax - y)``."""

    scale: float  # pixels per metre
    xmin: float
    ymax: float
    ox: float
    oy: float
    width: int
    height: int

    def to_px(self, x: float, y: float) -> tuple[int, int]:
        u = self.ox + self.scale * (x - self.xmin)
        v = self.oy + self.scale * (self.ymax - y)
        return int(round(u)), int(round(v))

    def rect(self, r: tuple[float, float, float, float]) -> tuple[tuple[int, int], tuple[int, int]]:
        (u0, v1), (u1, v0) = self.to_px(r[0], r[1]), self.to_px(r[2], r[3])
        return (u0, v0), (u1, v1)


_BACKGROUNDS: weakref.WeakKeyDictionary[
    SceneIndex, dict[tuple[str, int, int], tuple[np.ndarray, MapTransform]]
] = weakref.WeakKeyDictionary()


def _extent(scene: Scene) -> tuple[float, float, float, float]:
    rects = [scene.layout.bounds, *(w.footprint for w in scene.layout.walls)]
    rects += [s.footprint for s in scene.stores] + [f.footprint for f in scene.fixtures]
    return (
        min(r[0] for r in rects),
        min(r[1] for r in rects),
        max(r[2] for r in rects),
        max(r[3] for r in rects),
    )


def _resolve_size(scene: Scene, size: tuple[int, int | None]) -> tuple[int, int]:
    width, height = size
    if width < 16:
        raise ValueError(f"minimap width must be >= 16 pixels, got {width!r}")
    if height is None:
        x0, y0, x1, y1 = _extent(scene)
        inner = width - 2 * _MARGIN
        height = int(round(inner * (y1 - y0) / max(x1 - x0, 1e-6))) + 2 * _MARGIN
    if height < 16:
        raise ValueError(f"minimap height must be >= 16 pixels, got {height!r}")
    return int(width), int(height)


def map_transform(scene: Scene, size: tuple[int, int | None] = (320, 240)) -> MapTransform:
    """The plan-to-pixel transform of a minimap of ``size`` (width, height or None)."""
    width, height = _resolve_size(scene, size)
    x0, y0, x1, y1 = _extent(scene)
    scale = min(
        (width - 2 * _MARGIN) / max(x1 - x0, 1e-6), (height - 2 * _MARGIN) / max(y1 - y0, 1e-6)
    )
    ox = (width - scale * (x1 - x0)) / 2
    oy = (height - scale * (y1 - y0)) / 2
    return MapTransform(scale, x0, y1, ox, oy, width, height)


def _text(image: np.ndarray, text: str, center: tuple[int, int], box_w: int, box_h: int) -> None:
    scale = 0.4
    (tw, th), _ = cv2.getTextSize(text, _FONT, scale, 1)
    if box_w > 4 and box_h > 4:  # shrink to fit the footprint, down to a legible floor
        scale = max(
            0.28, min(scale, scale * (box_w - 2) / max(tw, 1), scale * (box_h - 2) / max(th, 1))
        )
        (tw, th), _ = cv2.getTextSize(text, _FONT, scale, 1)
    org = (center[0] - tw // 2, center[1] + th // 2)
    cv2.putText(image, text, org, _FONT, scale, _TEXT, 1, cv2.LINE_AA)


def _fixture_label(image, text: str, p0, p1) -> None:
    """Centred on the footprint; on a filled tag where the footprint is too thin for it."""
    cx, cy = (p0[0] + p1[0]) / 2, (p0[1] + p1[1]) / 2
    scale = 0.35
    (tw, th), _ = cv2.getTextSize(text, _FONT, scale, 1)
    x0, y0 = int(round(cx - tw / 2)), int(round(cy - th / 2))
    if tw + 2 > p1[0] - p0[0] or th + 2 > p1[1] - p0[1]:
        cv2.rectangle(image, (x0 - 2, y0 - 2), (x0 + tw + 1, y0 + th + 2), _FIXTURE_FILL, -1)
        cv2.rectangle(image, (x0 - 2, y0 - 2), (x0 + tw + 1, y0 + th + 2), _FIXTURE_EDGE, 1)
    cv2.putText(image, text, (x0, y0 + th), _FONT, scale, _TEXT, 1, cv2.LINE_AA)


def _tag(image: np.ndarray, text: str, corner: tuple[int, int]) -> None:
    """A filled name tag (store handles) with its top-left at ``corner``."""
    (tw, th), base = cv2.getTextSize(text, _FONT, 0.4, 1)
    x0, y0 = corner
    cv2.rectangle(image, (x0, y0), (x0 + tw + 3, y0 + th + base + 2), _STORE_EDGE, thickness=-1)
    cv2.putText(image, text, (x0 + 2, y0 + th + 1), _FONT, 0.4, (255, 255, 255), 1, cv2.LINE_AA)


def _fixture_texts(name: str, handle: str) -> list[str]:
    """Longest first: "7 breakfast cereal", "7 cereal" for "Shelf 1: breakfast cereal, oatmeal"."""
    title, _, rest = name.partition(":")
    what = rest.split(",")[0].strip() or title.strip()
    if not what:
        return [handle]
    return [f"{handle} {what}", f"{handle} {what.split()[-1]}"]


def _named_fixture_label(image, handle: str, name: str, p0, p1) -> None:
    """Handle and name along the footprint's long side (turned for tall footprints), else the handle alone."""
    w, h = p1[0] - p0[0], p1[1] - p0[1]
    along = max(w, h)
    for text in _fixture_texts(name, handle):
        (tw, th), base = cv2.getTextSize(text, _FONT, 0.35, 1)
        scale = min(0.35, 0.35 * (along - 2) / max(tw, 1))
        if scale >= 0.26:
            break
    if scale < 0.26 or text == handle:
        _fixture_label(image, handle, p0, p1)
        return
    (tw, th), base = cv2.getTextSize(text, _FONT, scale, 1)
    tag = np.empty((th + base + 3, tw + 4, 3), np.uint8)
    tag[:] = _FIXTURE_FILL
    cv2.putText(tag, text, (2, th + 1), _FONT, scale, _TEXT, 1, cv2.LINE_AA)
    if h > w:
        tag = np.ascontiguousarray(np.rot90(tag))  # reads bottom to top
    th_, tw_ = tag.shape[:2]
    x0 = int(round((p0[0] + p1[0]) / 2 - tw_ / 2))
    y0 = int(round((p0[1] + p1[1]) / 2 - th_ / 2))
    ih, iw = image.shape[:2]
    xa, ya, xb, yb = max(x0, 0), max(y0, 0), min(x0 + tw_, iw), min(y0 + th_, ih)
    if xb > xa and yb > ya:
        image[ya:yb, xa:xb] = tag[ya - y0 : yb - y0, xa - x0 : xb - x0]
        cv2.rectangle(image, (xa, ya), (xb - 1, yb - 1), _FIXTURE_EDGE, 1)


def _background(
    scene: Scene, index: SceneIndex, role: str, size, waypoints: bool = False
) -> tuple[np.ndarray, MapTransform]:
    tf = map_transform(scene, size)
    image = np.empty((tf.height, tf.width, 3), dtype=np.uint8)
    image[:] = _OUTSIDE
    p0, p1 = tf.rect(scene.layout.bounds)
    cv2.rectangle(image, p0, p1, _FLOOR, thickness=-1)

    if waypoints:
        ids = {w.id: w for w in scene.waypoints}
        for w in scene.waypoints:
            for n in w.neighbors:
                if n in ids and w.id < n:
                    cv2.line(image, tf.to_px(w.x, w.y), tf.to_px(ids[n].x, ids[n].y), _WAYPOINT, 1)
        for w in scene.waypoints:
            cv2.circle(image, tf.to_px(w.x, w.y), 2, _WAYPOINT, thickness=-1)

    for store in scene.stores:
        p0, p1 = tf.rect(store.footprint)
        cv2.rectangle(image, p0, p1, _STORE_FILL, thickness=-1)
    for wall in scene.layout.walls:
        p0, p1 = tf.rect(wall.footprint)
        cv2.rectangle(image, p0, p1, _WALL, thickness=-1)
    for store in scene.stores:  # doorway gaps drawn over the front wall
        p0, p1 = tf.rect(store.doorway)
        cv2.rectangle(image, p0, p1, _STORE_FILL, thickness=-1)

    handle_of = fixed_handles_by_id(index, role)
    for area in scene.areas:
        p0, p1 = tf.rect(area.footprint)
        cv2.rectangle(image, p0, p1, _AREA_EDGE, thickness=1)
        center = ((p0[0] + p1[0]) // 2, (p0[1] + p1[1]) // 2)
        _text(image, handle_of.get(area.id, "?"), center, p1[0] - p0[0], p1[1] - p0[1])
    for store in scene.stores:
        p0, p1 = tf.rect(store.footprint)
        cv2.rectangle(image, p0, p1, _STORE_EDGE, thickness=1)
        _tag(image, f"{handle_of.get(store.id, '?')} {store.name}", (p0[0] + 1, p0[1] + 1))
    for fixture in scene.fixtures:
        p0, p1 = tf.rect(fixture.footprint)
        cv2.rectangle(image, p0, p1, _FIXTURE_FILL, thickness=-1)
        cv2.rectangle(image, p0, p1, _FIXTURE_EDGE, thickness=1)
    for fixture in scene.fixtures:  # labels after all boxes, so none is painted over
        p0, p1 = tf.rect(fixture.footprint)
        _named_fixture_label(image, handle_of.get(fixture.id, "?"), fixture.name, p0, p1)
    image.setflags(write=False)
    return image, tf


def render_minimap(
    scene: Scene,
    index: SceneIndex,
    pose: Pose,
    role: str,
    size: tuple[int, int | None] = (320, 240),
    *,
    waypoints: bool = False,
) -> np.ndarray:
    """Top-down layout image (uint8 H x W x 3) with the role's handles and the user's pose.

    ``size`` is (width, height); a height of None makes the image aspect-correct.
    ``waypoints`` also draws the waypoint graph (off by default: it clutters the map).
    """
    check_role(role)
    if (index.scene.store, index.scene.name) != (scene.store, scene.name):
        raise ValueError(f"index belongs to scene {index.scene.name!r}, not {scene.name!r}")
    width, height = _resolve_size(scene, size)
    per_index = _BACKGROUNDS.setdefault(index, {})
    key = (role, width, height, bool(waypoints))
    if key not in per_index:
        per_index[key] = _background(scene, index, role, (width, height), bool(waypoints))
    background, tf = per_index[key]
    image = background.copy()
    u, v = tf.to_px(pose.x, pose.y)
    u, v = min(max(u, 0), tf.width - 1), min(max(v, 0), tf.height - 1)
    length = max(18, int(1.6 * tf.scale), tf.width // 16)
    yaw = math.radians(pose.yaw)
    tip = (int(round(u + length * math.cos(yaw))), int(round(v - length * math.sin(yaw))))
    # a white halo keeps the arrow readable on any fill
    cv2.arrowedLine(image, (u, v), tip, (255, 255, 255), 7, cv2.LINE_AA, tipLength=0.45)
    cv2.circle(image, (u, v), 8, (255, 255, 255), thickness=-1, lineType=cv2.LINE_AA)
    cv2.arrowedLine(image, (u, v), tip, _USER, 4, cv2.LINE_AA, tipLength=0.45)
    cv2.circle(image, (u, v), 6, _USER, thickness=-1, lineType=cv2.LINE_AA)
    return image
