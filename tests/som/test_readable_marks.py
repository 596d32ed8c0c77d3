"""Readable marks: labels never overlap, scale with the image, big buildings are outlined; map options."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.frames import bench_poses
from situ_gym.backends.base import Pose
from situ_gym.backends.embedded import EmbeddedBackend
from situ_gym.scene.index import SceneIndex
from situ_gym.scene.loader import load_scene
from situ_gym.som import overlay
from situ_gym.som.marks import analyse, draw
from situ_gym.som.minimap import render_minimap


def _disjoint(rects) -> bool:
    return not any(overlay._overlaps(a, b) for i, a in enumerate(rects) for b in rects[i + 1 :])


def test_crowded_labels_at_one_point_never_overlap():
    taken: list = []
    for _ in range(60):
        taken.append(overlay._place((200, 150), (22, 16), (480, 640), taken))
    assert _disjoint(taken)
    assert all(0 <= x0 and 0 <= y0 and x1 <= 640 and y1 <= 480 for x0, y0, x1, y1 in taken)
    # the nearest free spots are used: the crowd stays around its point
    centres = np.array([((x0 + x1) / 2, (y0 + y1) / 2) for x0, y0, x1, y1 in taken])
    assert np.abs(centres - (200, 150)).max() < 120


@pytest.mark.parametrize("store", ["supermarket", "home_furnishings"])
def test_no_two_labels_overlap_in_real_views(store, monkeypatch):
    scene = load_scene(store)
    index = SceneIndex(scene)
    backend = EmbeddedBackend(scene, width=640, height=480)
    placed: list = []
    real = overlay._place

    def record(anchor, size, shape, taken):
        rect = real(anchor, size, shape, taken)
        placed.append(rect)
        return rect

    monkeypatch.setattr(overlay, "_place", record)
    views = 0
    for pose in bench_poses(scene, 12, seed=3):
        backend.reset(pose)
        analysis = analyse(backend.capture(), index, building_max_depth=25.0)
        for role in ("user", "assistant"):
            placed.clear()
            draw(analysis, index, role)
            assert _disjoint(placed), (pose, role)
            views += len(placed) > 3
    assert views > 0


def test_label_text_follows_image_size():
    small, large = overlay._font(240), overlay._font(960)
    assert small[0] < overlay._font(480)[0] < large[0] and large[1] >= small[1]


def test_a_store_filling_the_view_is_outlined_not_boxed():
    scene = load_scene("home_furnishings")
    index = SceneIndex(scene)
    backend = EmbeddedBackend(scene, width=320, height=240)
    a = scene.stores[0].approach["outside_doorway"]  # the storefront fills the view
    backend.reset(Pose(a.x, a.y, a.yaw, -5.0))
    analysis = analyse(backend.capture(), index)
    store = analysis.region(scene.stores[0].id)
    assert store is not None and store.contours  # larger than the box limit: an outline
    view = draw(analysis, index, "assistant")
    border = np.concatenate([view.image[0], view.image[-1], view.image[:, 0], view.image[:, -1]])
    frame_border = np.concatenate([analysis.frame.rgb[0], analysis.frame.rgb[-1],
                                   analysis.frame.rgb[:, 0], analysis.frame.rgb[:, -1]])
    assert np.array_equal(border, frame_border)  # no outline along the frame's edge


def test_minimap_leaves_the_waypoint_graph_off_by_default():
    scene = load_scene("supermarket")
    index = SceneIndex(scene)
    pose = Pose(scene.layout.start.x, scene.layout.start.y, 0.0)
    plain = render_minimap(scene, index, pose, "user")
    graph = render_minimap(scene, index, pose, "user", waypoints=True)
    assert np.any(plain != graph)
    w = scene.waypoints[0]
    from situ_gym.som.minimap import map_transform

    u, v = map_transform(scene).to_px(w.x, w.y)
    assert tuple(graph[v, u]) != tuple(plain[v, u])
