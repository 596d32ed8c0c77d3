"""SoM on frames rendered by the embedded backend (a small shelf scene built in code)."""

from __future__ import annotations

import numpy as np
import pytest

from situ_gym.backends.base import Pose
from situ_gym.backends.embedded import EmbeddedBackend
from situ_gym.scene.index import SceneIndex
from situ_gym.scene.model import Instance
from situ_gym.som import analyse, annotate_roles, caption, render_minimap
from tests.world import fixture, pose, product, scene, waypoint

FACING_GAP = 0.01  # as the Supermarket generator spaces facings of one product


def _product(i, color, xs, y, fixture_id):
    facings = [
        Instance(id=f"p{i}_{k}", position=(x, y, 0.8), size=(0.2, 0.15, 0.25), facing=-90.0)
        for k, x in enumerate(xs)
    ]
    return product(f"p{i}", f"Product {i}", brand="Brand", category="thing", group="things",
                   price=2.0, color=color, fixture_id=fixture_id, instances=facings)


def _fixture(i, rect, color):
    front = pose((rect[0] + rect[2]) / 2, rect[1] - 0.8, 90.0)
    return fixture(f"f{i}", f"Shelf {i}", footprint=rect, height=1.6, levels=[0.1, 0.8],
                   color=color, front_yaw=-90.0, approach={"front": front})


@pytest.fixture(scope="module")
def shelf():
    products = [
        _product(0, (200, 10, 0), [2.6, 2.8 + FACING_GAP], 3.1, "f0"),  # two adjacent facings
        _product(1, (200, 30, 0), [3.4], 3.1, "f0"),
        _product(2, (200, 50, 0), [5.0], 11.1, "f1"),  # far down the hall
    ]
    fixtures = [
        _fixture(0, (2.0, 3.0, 4.0, 3.4), (10, 40, 200)),
        _fixture(1, (4.2, 11.0, 5.8, 11.4), (10, 60, 200)),
    ]
    hall = scene("supermarket", "som-shelf", products, fixtures=fixtures,
                 bounds=(0.0, 0.0, 6.0, 14.0), start=pose(3.0, 1.5, 90.0),
                 waypoints=[waypoint("w0", 3.0, 1.0)])
    backend = EmbeddedBackend(hall, width=320, height=240)
    yield SceneIndex(hall), backend
    backend.close()


def _capture(backend, x, y, yaw):
    backend.reset(Pose(x, y, yaw))
    return backend.capture()


def test_rendered_shelf_is_marked_for_both_roles(shelf):
    index, backend = shelf
    frame = _capture(backend, 3.0, 1.5, 90.0)
    analysis = analyse(frame, index, min_pixels=20)
    assert [r.entity_id for r in analysis.regions] == ["p0", "p1", "f0"]
    p0 = analysis.region("p0")
    assert len(p0.contours) == 1  # the two facings share one outline
    assert p0.distance == pytest.approx(1.5, abs=0.1)
    for r in analysis.regions:
        x, y = r.anchor
        assert tuple(frame.seg[y, x]) == index.entities[r.entity_id].color
    views = annotate_roles(frame, index)
    user, assistant = views["user"], views["assistant"]
    for eid in ("p0", "p1", "f0"):
        assert (
            user.handles[user.handle_of(eid)] == assistant.handles[assistant.handle_of(eid)] == eid
        )
    text = caption(assistant, index, held_item=None, cart=[])
    assert text.splitlines()[:3] == [
        "Visible products:",
        "[a] Product 0 (1.5 m)",
        "[b] Product 1 (1.5 m)",
    ]
    assert f"[{assistant.handle_of('f0')}] Shelf 0 (approach: nearest, front)" in text
    assert not np.array_equal(user.image, frame.rgb)


def test_far_product_needs_a_larger_depth_limit(shelf):
    index, backend = shelf
    frame = _capture(backend, 5.0, 1.5, 90.0)  # clear line of sight to p2, 9.6 m ahead
    near = {r.entity_id for r in analyse(frame, index, min_pixels=5).regions}
    far = {r.entity_id for r in analyse(frame, index, min_pixels=5, max_depth=12.0).regions}
    assert "p2" not in near and "p2" in far


def test_close_up_facings_still_share_a_contour(shelf):
    index, backend = shelf
    frame = _capture(backend, 2.7, 2.3, 90.0)  # 0.7 m from the shelf: a wide seam on screen
    region = analyse(frame, index).region("p0")
    assert region is not None and len(region.contours) == 1


def test_minimap_of_the_scene(shelf):
    index, _ = shelf
    image = render_minimap(index.scene, index, Pose(3.0, 1.5, 90.0), "assistant", (160, None))
    assert image.shape[1] == 160 and image.shape[0] > image.shape[1]  # a tall hall stays tall
