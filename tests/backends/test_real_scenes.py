"""The embedded backend on the packaged stores: every targeted move arrives, targets are seen."""

from __future__ import annotations

import math

import numpy as np
import pytest

from situ_gym.backends.base import Pose, Primitive
from situ_gym.backends.embedded import EmbeddedBackend
from situ_gym.backends.raster import OrderTree
from situ_gym.scene.loader import load_scene


@pytest.fixture(scope="module")
def mart():
    return EmbeddedBackend(load_scene("supermarket"), width=160, height=120)


@pytest.fixture(scope="module")
def home():
    return EmbeddedBackend(load_scene("home_furnishings"), width=160, height=120)


def _go_from_start(b, tool: str, **arguments):
    """Reset to the store's start and run one targeted move, which must succeed."""
    s = b.scene.layout.start
    b.reset(Pose(s.x, s.y, s.yaw, 0.0))
    r = b.execute(Primitive(tool, arguments))
    assert r.ok, (tool, arguments, r.message)
    return r


def _visible(b, color) -> int:
    return int(np.all(b.capture().seg == np.array(color, np.uint8), axis=-1).sum())


@pytest.mark.parametrize("store", ["supermarket", "home_furnishings"])
def test_geometry_boxes_do_not_overlap(store):
    """Every kd-tree leaf holds one box: exact visibility order everywhere in the store."""
    b = EmbeddedBackend(load_scene(store), width=32, height=24)
    tree = OrderTree(b.geometry.lo, b.geometry.hi)
    assert tree.leaf_size.max() == 1


def test_every_fixture_side_is_reached_and_seen(mart):
    for fx in mart.scene.fixtures:
        for side, pose in fx.approach.items():
            r = _go_from_start(mart, "move_to_fixture", fixture=fx.id, approach=side)
            assert mart.pose() == Pose(pose.x, pose.y, pose.yaw % 360.0, mart.view_pitch(fx, pose.x, pose.y, pose.yaw))
            straight = math.hypot(pose.x - mart.scene.layout.start.x, pose.y - mart.scene.layout.start.y)
            assert r.displacement >= straight - 1e-6
            assert _visible(mart, fx.color) > 200, (fx.id, side)
            products = [p for p in mart.scene.products if p.fixture_id == fx.id]
            seen = sum(_visible(mart, p.color) > 0 for p in products)
            assert seen >= min(2, len(products)), (fx.id, side, seen)  # its goods are in view


def test_every_fixture_nearest_point_is_next_to_it(mart):
    radius = mart.scene.layout.body_radius
    for fx in mart.scene.fixtures:
        _go_from_start(mart, "move_to_fixture", fixture=fx.id, approach="nearest")
        p = mart.pose()
        x0, y0, x1, y1 = fx.footprint
        d = math.hypot(max(x0 - p.x, 0, p.x - x1), max(y0 - p.y, 0, p.y - y1))
        assert radius - 1e-6 <= d <= radius + 0.15, (fx.id, d)
        assert _visible(mart, fx.color) > 200, fx.id


def test_every_doorway_and_area_is_reached_and_seen(home):
    for st in home.scene.stores:
        for approach, pose in st.approach.items():
            _go_from_start(home, "move_to_store", store=st.id, approach=approach)
            assert home.pose() == Pose(pose.x, pose.y, pose.yaw % 360.0, 0.0)
            if approach == "outside_doorway":
                assert _visible(home, st.color) > 200, st.id
    for area in home.scene.areas:
        _go_from_start(home, "move_to_area", area=area.id)
        a = area.approach
        assert home.pose() == Pose(a.x, a.y, a.yaw % 360.0, 0.0)
        seen = home.capture().seg.reshape(-1, 3)
        colours = {tuple(int(v) for v in c) for c in np.unique(seen, axis=0)}
        products = {tuple(p.color) for p in home.scene.products if p.area_id == area.id}
        assert colours & products, area.id  # its products are in view


def test_waypoints_are_mutually_reachable(mart, home):
    for b in (mart, home):
        wps = b.scene.waypoints
        first = wps[0]
        for w in wps[1:]:
            b.reset(Pose(first.x, first.y, 0.0))
            assert b.grid.plan((first.x, first.y), (w.x, w.y)) is not None, w.id


def test_hiding_products_behind_panels_changes_no_pixel(mart):
    """Culling products behind their fixture's back panel is exact: same images as without it."""
    import dataclasses

    from benchmarks.frames import bench_poses
    from situ_gym.backends.raster import Renderer

    geo = mart.geometry
    plain = Renderer(dataclasses.replace(geo, hide_axis=np.full_like(geo.hide_axis, -1)), mart.camera,
                     tree=mart.renderer.tree)
    assert (geo.hide_axis >= 0).sum() > 200  # rows of facings on the shelves and coolers
    for p in bench_poses(mart.scene, 12, seed=5):
        mart.reset(p)
        frame = mart.capture()
        rgb, depth, seg, _ = plain.render(np.array([p.x, p.y, mart.scene.layout.eye_height]), p.yaw, p.pitch)
        assert seg.tobytes() == frame.seg.tobytes()
        assert rgb.tobytes() == frame.rgb.tobytes()
        assert depth.tobytes() == frame.depth.tobytes()
