"""The user's physical actions in the embedded backend: collision, targeted moves, items."""

from __future__ import annotations

import math

import numpy as np
import pytest

from situ_gym.actions.validate import to_primitive as validated  # backends get validated primitives
from situ_gym.backends.base import Pose
from situ_gym.backends.embedded import PITCH_LIMIT, EmbeddedBackend
from situ_gym.backends.motion import clearance, obstacles_from_scene
from situ_gym.scene.model import Fixture, Pose2, Wall
from tests.world import render_home, render_market


@pytest.fixture()
def mart():
    return EmbeddedBackend(render_market(), width=64, height=48)


@pytest.fixture()
def home():
    return EmbeddedBackend(render_home(), width=64, height=48)


def test_free_walk_reports_full_distance(mart):
    mart.reset(Pose(1.0, 4.0, 0.0))
    r = mart.execute(validated("move_forward", {"distance": "long"}))
    assert r.ok and r.translational and r.displacement == pytest.approx(3.0)
    assert (mart.pose().x, mart.pose().y) == pytest.approx((4.0, 4.0))
    assert r.message == "walked 3.0 m forward"


def test_walk_into_shelf_stops_at_contact(mart):
    mart.reset(Pose(5.0, 4.0, 90.0))  # shelf footprint starts at y=6.0, body radius 0.3
    r = mart.execute(validated("move_forward", {"distance": "long"}))
    assert r.ok and r.translational
    assert r.displacement == pytest.approx(1.7, abs=1e-3)
    assert mart.pose().y == pytest.approx(5.7, abs=1e-3)
    assert "blocked by Shelf 1" in r.message
    # pressed against it: further steps go nowhere, stepping back is free
    r = mart.execute(validated("move_forward", {"distance": "short"}))
    assert r.displacement == pytest.approx(0.0, abs=1e-3)
    r = mart.execute(validated("move_backward", {"distance": "short"}))
    assert r.displacement == pytest.approx(0.5) and mart.pose().y == pytest.approx(5.2, abs=1e-3)


def test_side_steps_and_hall_edge(mart):
    mart.reset(Pose(1.0, 4.0, 0.0))
    r = mart.execute(validated("side_step", {"direction": "right", "distance": "long"}))  # toward y=0
    assert r.displacement == pytest.approx(3.0) and mart.pose().y == pytest.approx(1.0)
    r = mart.execute(validated("side_step", {"direction": "right", "distance": "long"}))
    assert r.displacement == pytest.approx(0.7, abs=1e-3)  # hall edge at y=0, radius 0.3
    assert "blocked by the wall" in r.message
    r = mart.execute(validated("side_step", {"direction": "left", "distance": "short"}))
    assert mart.pose().y == pytest.approx(0.8, abs=1e-3) and mart.pose().yaw == 0.0


def test_diagonal_collision_keeps_body_radius(mart):
    mart.reset(Pose(1.5, 4.0, 45.0))
    mart.execute(validated("move_forward", {"distance": "long"}))
    p = mart.pose()
    clear, _ = clearance([[p.x, p.y]], obstacles_from_scene(mart.scene))
    assert clear[0] == pytest.approx(0.3, abs=2e-3)


def test_turn_and_move_orders(mart):
    mart.reset(Pose(1.0, 4.0, 0.0))
    r = mart.execute(validated("turn_and_move", {"direction": "left", "angle": 90, "distance": "short"}))
    assert r.ok and mart.pose().yaw == pytest.approx(90.0)
    assert (mart.pose().x, mart.pose().y) == pytest.approx((1.0, 4.5))
    r = mart.execute(validated("move_and_turn", {"direction": "right", "angle": 90, "distance": "short"}))
    assert (mart.pose().x, mart.pose().y) == pytest.approx((1.0, 5.0))
    assert mart.pose().yaw == pytest.approx(0.0)


def test_turning_and_looking_change_only_orientation(mart):
    mart.reset(Pose(2.0, 3.0, 10.0, 0.0))
    r = mart.execute(validated("turn", {"direction": "right", "angle": 30}))
    assert r.ok and not r.translational and r.displacement == 0.0
    assert mart.pose() == Pose(2.0, 3.0, 340.0, 0.0)
    mart.execute(validated("look_up_down", {"direction": "down", "angle": 30}))
    assert mart.pose() == Pose(2.0, 3.0, 340.0, -30.0)
    r = mart.execute(validated("look_up_down", {"direction": "down", "angle": 30}))
    assert r.ok and mart.pose().pitch == -PITCH_LIMIT
    r = mart.execute(validated("look_up_down", {"direction": "down", "angle": 5}))
    assert not r.ok and mart.pose().pitch == -PITCH_LIMIT


def test_move_to_fixture_front_and_missing_back(mart):
    mart.reset(Pose(1.0, 4.0, 0.0))
    r = mart.execute(validated("move_to_fixture", {"fixture": "f_shelf", "approach": "front"}))
    assert r.ok and r.translational
    p = mart.pose()
    assert (p.x, p.y, p.yaw) == (5.0, 5.0, 90.0)
    assert r.displacement >= math.hypot(4.0, 1.0) - 1e-9
    # the view tilts down to frame the goods: boards 0.15-1.75 m seen from 1 m away
    assert -30.0 < p.pitch < -10.0 and p.pitch == mart.view_pitch(mart.scene.fixtures[0], 5.0, 5.0, 90.0)
    r = mart.execute(validated("move_to_fixture", {"fixture": "f_shelf", "approach": "back"}))
    assert not r.ok and mart.pose() == p


def test_fixture_view_frames_its_goods():
    b = EmbeddedBackend(render_market(), width=320, height=240)
    shelf = b.scene.fixtures[0]
    goods = [p for p in b.scene.products if p.fixture_id == shelf.id]
    b.execute(validated("move_to_fixture", {"fixture": shelf.id, "approach": "front"}))
    seg = b.capture().seg
    masks = [np.all(seg == np.array(p.color, np.uint8), axis=-1) for p in goods]
    levels = {p.instances[0].position[2] for p, m in zip(goods, masks, strict=True) if m.any()}
    assert levels == set(shelf.levels)  # every board's goods are in the frame
    tilted = sum(int(m.sum()) for m in masks)
    b.reset(Pose(5.0, 5.0, 90.0, 0.0))  # the same spot with a level view shows less of them
    seg = b.capture().seg
    level = sum(int(np.all(seg == np.array(p.color, np.uint8), axis=-1).sum()) for p in goods)
    assert tilted > level


def test_path_goes_around_obstacles(mart):
    # from north of the shelf to its front (south): must walk around an end of the 6 m shelf
    mart.reset(Pose(5.0, 8.0, 0.0))
    r = mart.execute(validated("move_to_fixture", {"fixture": "f_shelf", "approach": "front"}))
    assert r.ok
    assert r.displacement > 6.0  # straight line is 3 m; around either end is > 6 m


def test_move_to_fixture_nearest_ends_next_to_the_footprint(mart):
    mart.reset(Pose(1.0, 4.0, 0.0))
    r = mart.execute(validated("move_to_fixture", {"fixture": "f_upright", "approach": "nearest"}))
    assert r.ok
    p = mart.pose()
    x0, y0, x1, y1 = 11.2, 2.0, 12.0, 4.0
    d = math.hypot(max(x0 - p.x, 0, p.x - x1), max(y0 - p.y, 0, p.y - y1))
    assert 0.3 - 1e-6 <= d <= 0.45
    assert math.cos(math.radians(p.yaw)) > 0.7  # roughly facing the freezer (east)


def test_unreachable_target_leaves_pose(mart):
    boxed = Fixture(
        id="f_boxed", name="Boxed Shelf", kind="shelf", footprint=(8.0, 8.0, 9.0, 8.5), height=1.0,
        levels=[0.2], color=(90, 90, 200), front_yaw=270.0,
        approach={"front": Pose2(x=8.5, y=7.5, yaw=90.0)}, product_ids=[],
    )
    scene = render_market(extra_fixtures=[boxed])
    walls = list(scene.layout.walls) + [
        Wall(footprint=(7.0, 6.8, 10.0, 7.0), height=3.0),
        Wall(footprint=(7.0, 7.0, 7.2, 10.0), height=3.0),
        Wall(footprint=(9.8, 7.0, 10.0, 10.0), height=3.0),
    ]
    scene = scene.model_copy(update={"layout": scene.layout.model_copy(update={"walls": walls})})
    b = EmbeddedBackend(scene, width=64, height=48)
    b.reset(Pose(1.0, 4.0, 0.0))
    r = b.execute(validated("move_to_fixture", {"fixture": "f_boxed", "approach": "front"}))
    assert not r.ok and r.displacement == 0.0 and b.pose() == Pose(1.0, 4.0, 0.0)
    r = b.execute(validated("move_to_fixture", {"fixture": "f_boxed", "approach": "nearest"}))
    assert not r.ok and b.pose() == Pose(1.0, 4.0, 0.0)


def test_home_store_and_area_moves_end_on_their_poses(home):
    st, area = home.scene.stores[0], home.scene.areas[0]
    for approach in ("outside_doorway", "inside_doorway"):
        home.reset(Pose(2.0, 2.0, 45.0))
        r = home.execute(validated("move_to_store", {"store": st.id, "approach": approach}))
        a = st.approach[approach]
        assert r.ok and home.pose() == Pose(a.x, a.y, a.yaw, 0.0)
    home.reset(Pose(2.0, 2.0, 45.0))
    r = home.execute(validated("move_to_area", {"area": area.id}))
    assert r.ok and home.pose() == Pose(area.approach.x, area.approach.y, area.approach.yaw, 0.0)
    # through the doorway: longer than the straight line would be only if it detours
    assert r.displacement >= math.hypot(area.approach.x - 2.0, area.approach.y - 2.0) - 1e-9


def test_store_wall_blocks_but_doorway_passes(home):
    home.reset(Pose(6.0, 5.0, 90.0))  # facing the storefront wall west of the doorway
    r = home.execute(validated("move_forward", {"distance": "long"}))
    assert r.displacement == pytest.approx(0.7, abs=1e-3) and "Nordic Nest" in r.message
    home.reset(Pose(8.0, 5.0, 90.0))  # in line with the 1.6 m doorway
    r = home.execute(validated("move_forward", {"distance": "long"}))
    assert r.displacement == pytest.approx(3.0)
    r = home.execute(validated("move_forward", {"distance": "long"}))
    assert "Product sofa" in r.message  # the sofa stands at y 9.45-10.35


def test_item_actions(mart, home):
    r = mart.execute(validated("pick_up_item", {"item": "p1"}))
    assert r.ok and r.revealed_product == "p1" and mart.held_item == "p1"
    r = mart.execute(validated("pick_up_item", {"item": "p2"}))
    assert mart.held_item == "p2" and "put back" in r.message
    assert mart.inspected == {"p1", "p2"}
    assert mart.execute(validated("drop_item", {})).ok and mart.held_item is None
    assert not mart.execute(validated("drop_item", {})).ok
    r = mart.execute(validated("add_to_cart", {"item": "p3"}))
    assert r.ok and r.cart_added == "p3" and mart.cart == ["p3"]
    r = home.execute(validated("check_item", {"item": "sofa"}))
    assert r.ok and r.revealed_product == "sofa" and home.inspected == {"sofa"}
    r = home.execute(validated("do_not_add_to_cart", {"item": "lamp"}))
    assert r.ok and home.cart == []
    mart.reset(Pose(1.0, 1.0, 0.0))
    assert mart.cart == [] and mart.held_item is None and mart.inspected == set()


@pytest.mark.parametrize(
    "prim",
    [
        validated("move_to_fixture", {"fixture": "nope", "approach": "front"}),
        validated("move_to_fixture", {"fixture": "f_shelf", "approach": "sideways"}),
        validated("pick_up_item", {"item": "nope"}),
    ],
)
def test_infeasible_actions_return_not_ok(mart, prim):
    before = mart.pose()
    r = mart.execute(prim)
    assert not r.ok and r.message and mart.pose() == before
    assert r.translational == (prim.name == "move_to_fixture")  # a failed move still counts toward a stall


def test_a_primitive_no_validator_builds_is_a_backend_error(mart):
    from situ_gym.backends.base import BackendError, Primitive

    with pytest.raises(BackendError, match="no such primitive 'fly'"):
        mart.execute(Primitive("fly", {}))


def test_a_route_walked_again_is_planned_once_and_is_the_same(mart, monkeypatch):
    grid = mart.grid
    grid._paths.clear()
    searches = []
    real = grid.astar
    monkeypatch.setattr(grid, "astar", lambda *a: searches.append(a) or real(*a))
    first = grid.plan((5.0, 8.0), (5.0, 1.0))
    again = grid.plan((5.0, 8.0), (5.0, 1.0))
    assert first is not None and first == again and len(searches) == 1  # the second walk reuses the path
    grid._paths.clear()
    assert grid.plan((5.0, 8.0), (5.0, 1.0)) == first and len(searches) == 2  # same as a fresh search
