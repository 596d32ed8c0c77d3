"""The SoM shortcuts draw and order what their reference versions do, pixel for pixel.

Product outlines go through cv2.polylines (closed) instead of cv2.drawContours, contours
are ordered by their bounding box's corner instead of numpy minima, and label sizes are
remembered: on real frames of both stores each gives the reference's result. Marked
images reuse the memory of earlier ones only once nobody holds them.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from benchmarks.frames import bench_poses
from situ_gym.backends.embedded import EmbeddedBackend
from situ_gym.scene.index import SceneIndex
from situ_gym.scene.loader import load_scene
from situ_gym.som import overlay
from situ_gym.som.marks import _top_left, analyse


@pytest.fixture(scope="module", params=["supermarket", "home_furnishings"])
def analysed(request):
    scene = load_scene(request.param)
    index = SceneIndex(scene)
    backend = EmbeddedBackend(scene, width=640, height=480)
    out = []
    for pose in bench_poses(scene, 16, seed=2):
        backend.reset(pose)
        out.append(analyse(backend.capture(), index))
    backend.close()
    return out


def test_polylines_draw_the_outlines_drawcontours_draws(analysed):
    n = 0
    for analysis in analysed:
        for r in analysis.regions:
            if not r.contours:
                continue
            a = analysis.frame.rgb.copy()
            b = analysis.frame.rgb.copy()
            cv2.drawContours(a, list(r.contours), -1, (255, 80, 200), thickness=2)
            cv2.polylines(b, r.contours, True, (255, 80, 200), thickness=2)
            assert np.array_equal(a, b)
            n += 1
    assert n >= 10


def test_contours_are_ordered_by_their_top_left_point(analysed):
    n = 0
    for analysis in analysed:
        for r in analysis.regions:
            keys = [(int(c[:, 0, 1].min()), int(c[:, 0, 0].min())) for c in r.contours]
            assert [_top_left(c) for c in r.contours] == keys
            assert keys == sorted(keys)
            n += len(keys) > 1
    assert n >= 1  # some region has several contours to order


def test_remembered_text_sizes_are_opencvs():
    for text in ("1", "12", "ab", "F3", "A12b"):
        for scale, thick in ((0.45, 1), (0.9, 2), (0.3, 1)):
            got = overlay._text_size(text, scale, thick)
            assert got == cv2.getTextSize(text, overlay._FONT, scale, thick)


def test_marked_images_a_caller_keeps_stay_as_drawn(analysed, request):
    index = SceneIndex(load_scene(request.node.callspec.params["analysed"]))
    kept = overlay.draw(analysed[0], index, "user")
    snapshot = kept.image.copy()
    for analysis in analysed[1:]:
        for role in ("user", "assistant"):
            view = overlay.draw(analysis, index, role)
            assert not np.shares_memory(view.image, kept.image)
            assert not np.shares_memory(view.image, analysis.frame.rgb)  # the frame stays unmarked
    assert np.array_equal(kept.image, snapshot)
