"""Set-of-Mark overlays on synthetic frames whose every pixel the test controls."""

from __future__ import annotations

import re

import cv2
import numpy as np
import pytest

from situ_gym.som import (
    ROLES,
    analyse,
    annotate,
    annotate_roles,
    draw,
    fixed_handles,
    fixed_handles_by_id,
)
from tests.som.conftest import FORMATS, Canvas


def _products(view):
    return [v for v in view.visible if v.kind == "product"]


def test_adjacent_instances_share_one_contour_and_label(market):
    frame = Canvas(market).paint("p0", 20, 20, 40, 50).paint("p0", 40, 20, 60, 50).frame()
    region = analyse(frame, market).region("p0")
    assert len(region.contours) == 1
    assert region.pixels == 40 * 30 and region.bbox == (20, 20, 40, 30)
    view = annotate(frame, market, "user")
    assert [(v.handle, v.entity_id) for v in _products(view)] == [("1", "p0")]


def test_adjacent_instances_with_a_thin_gap_still_share_a_contour(market):
    # a 2-pixel seam (e.g. an edge line between two boxes) is bridged by the closing
    frame = Canvas(market).paint("p0", 20, 20, 40, 50).paint("p0", 42, 20, 62, 50).frame()
    assert len(analyse(frame, market).region("p0").contours) == 1


def test_near_instances_with_a_wider_seam_share_a_contour(market):
    # a near product (60 px tall) with an 8 px seam: the kernel grows with the box
    near = Canvas(market).paint("p0", 10, 10, 50, 70).paint("p0", 58, 10, 98, 70).frame()
    assert len(analyse(near, market).region("p0").contours) == 1
    # ...but two near runs 40 px apart stay separate
    apart = Canvas(market).paint("p0", 10, 10, 50, 70).paint("p0", 90, 10, 130, 70).frame()
    assert len(analyse(apart, market).region("p0").contours) == 2


def test_separated_instances_get_separate_contours_but_one_label(market):
    frame = Canvas(market).paint("p0", 10, 10, 30, 40).paint("p0", 100, 60, 130, 90).frame()
    region = analyse(frame, market).region("p0")
    assert len(region.contours) == 2
    boxes = sorted(cv2.boundingRect(c) for c in region.contours)
    assert boxes == [(10, 10, 20, 30), (100, 60, 30, 30)]
    for role in ROLES:
        view = annotate(frame, market, role)
        assert len(_products(view)) == 1
        product_handles = [h for h, e in view.handles.items() if e == "p0"]
        assert len(product_handles) == 1


def test_entity_beyond_max_depth_is_not_marked(market):
    canvas = (
        Canvas(market).paint("p0", 10, 10, 40, 40, depth=2.0).paint("p1", 60, 10, 90, 40, depth=9.0)
    )
    view = annotate(canvas.frame(), market, "assistant", max_depth=8.0)
    assert [v.entity_id for v in view.visible] == ["p0"]
    assert "p1" not in view.handles.values()
    view = annotate(canvas.frame(), market, "assistant", max_depth=10.0)
    assert sorted(v.entity_id for v in view.visible) == ["p0", "p1"]


def test_buildings_have_their_own_depth_limit(market):
    fixture = next(iter(market.fixtures))
    canvas = (
        Canvas(market).paint("p0", 10, 10, 40, 40, depth=12.0).paint(fixture, 60, 10, 150, 60, depth=12.0)
    )
    view = annotate(canvas.frame(), market, "assistant", max_depth=8.0, building_max_depth=25.0)
    assert [v.entity_id for v in view.visible] == [fixture]  # far fixture marked, far product not
    view = annotate(canvas.frame(), market, "assistant", max_depth=8.0)
    assert view.visible == []  # by default buildings share the product limit
    with pytest.raises(ValueError, match="building_max_depth"):
        annotate(canvas.frame(), market, "assistant", building_max_depth=-1.0)


def test_only_pixels_within_depth_count(market):
    # 30x30 product: 26 columns far, 4 columns near -> 120 near pixels
    canvas = (
        Canvas(market).paint("p0", 10, 10, 40, 40, depth=9.0).paint("p0", 10, 10, 14, 40, depth=3.0)
    )
    region = analyse(canvas.frame(), market, min_pixels=30).region("p0")
    assert region.pixels == 120 and region.bbox == (10, 10, 4, 30) and region.distance == 3.0
    assert analyse(canvas.frame(), market, min_pixels=121).region("p0") is None


def test_distance_is_nearest_visible_pixel(market):
    canvas = (
        Canvas(market).paint("p0", 10, 10, 40, 40, depth=4.0).paint("p0", 20, 20, 22, 22, depth=2.5)
    )
    (entity,) = annotate(canvas.frame(), market, "user").visible
    assert entity.distance == pytest.approx(2.5)


def test_tiny_and_unknown_regions_are_ignored(market):
    canvas = Canvas(market).paint("p0", 10, 10, 14, 14)  # 16 pixels
    canvas.seg[50:90, 50:90] = (1, 2, 3)  # a colour no entity has
    canvas.depth[50:90, 50:90] = 1.0
    assert analyse(canvas.frame(), market, min_pixels=30).regions == ()
    assert [r.entity_id for r in analyse(canvas.frame(), market, min_pixels=16).regions] == ["p0"]


def test_fixture_gets_a_box_around_its_visible_region(market):
    canvas = Canvas(market).paint("f1", 20, 15, 140, 100, depth=3.0).paint("p0", 50, 40, 70, 60)
    frame = canvas.frame()
    analysis = analyse(frame, market)
    fixture = analysis.region("f1")
    # the product in front hides part of the fixture; the box still spans its whole region
    assert fixture.bbox == (20, 15, 120, 85) and fixture.contours == ()
    assert fixture.pixels == 120 * 85 - 20 * 20
    view = draw(analysis, market, "user")
    box_color = np.array((255, 120, 0), dtype=np.uint8)
    top_edge = view.image[15, 20:140]
    left_edge = view.image[15:100, 20]
    assert (top_edge == box_color).all(axis=1).mean() > 0.6
    assert (left_edge == box_color).all(axis=1).mean() > 0.6
    (fixture_entry,) = [v for v in view.visible if v.kind == "fixture"]
    assert fixture_entry.handle == fixed_handles_by_id(market, "user")["f1"]
    assert view.handles[fixture_entry.handle] == "f1"


def test_both_roles_resolve_to_the_same_entities(market):
    canvas = Canvas(market).paint("f0", 0, 0, 160, 110, depth=4.0)
    canvas.paint("p0", 10, 10, 30, 30).paint("p1", 50, 10, 70, 30).paint("p2", 10, 60, 30, 80)
    canvas.paint("p3", 90, 60, 110, 80)
    views = annotate_roles(canvas.frame(), market, held_item="p1")
    user, assistant = views["user"], views["assistant"]
    assert set(user.visible_ids()) == set(assistant.visible_ids()) == {"f0", "p0", "p1", "p2", "p3"}
    for role, view in views.items():
        for v in view.visible:
            assert re.fullmatch(FORMATS[role][v.kind], v.handle), (role, v)
            assert view.handles[v.handle] == v.entity_id
    for eid in user.visible_ids():
        assert (
            user.handles[user.handle_of(eid)] == assistant.handles[assistant.handle_of(eid)] == eid
        )
    # the two numberings are different orders of the same products
    assert [v.entity_id for v in _products(user)] == ["p0", "p2", "p1", "p3"]  # left to right
    assert [v.entity_id for v in _products(assistant)] == ["p0", "p1", "p2", "p3"]  # rows


def test_handles_include_all_fixed_targets_even_when_not_visible(market):
    view = annotate(Canvas(market).paint("p0", 10, 10, 40, 40).frame(), market, "assistant")
    fixed = fixed_handles(market, "assistant")
    assert {h: view.handles[h] for h in fixed} == fixed
    assert [v.kind for v in view.visible] == ["product"]


def test_product_labels_are_renumbered_per_observation(market):
    first = annotate(
        Canvas(market).paint("p0", 10, 10, 40, 40).paint("p1", 80, 10, 110, 40).frame(),
        market,
        "user",
    )
    second = annotate(Canvas(market).paint("p1", 80, 10, 110, 40).frame(), market, "user")
    assert first.handle_of("p1") == "2"
    assert second.handle_of("p1") == "1" and second.handles["1"] == "p1"
    assert "2" not in second.handles


def test_fixed_handles_are_stable_across_observations(market):
    a = annotate(Canvas(market).paint("f2", 10, 10, 150, 100).frame(), market, "user")
    b = annotate(
        Canvas(market).paint("f2", 60, 40, 100, 60).paint("f3", 0, 0, 30, 30).frame(),
        market,
        "user",
    )
    assert a.handle_of("f2") == b.handle_of("f2") == fixed_handles_by_id(market, "user")["f2"]
    assert a.handles[a.handle_of("f2")] == "f2"


def test_label_point_lies_on_the_region(market):
    canvas = Canvas(market)
    # a hollow frame: its centroid and bounding-box centre fall in the hole
    canvas.paint("p0", 20, 20, 90, 90).paint("f0", 30, 30, 80, 80, depth=3.0)
    canvas.paint("p1", 100, 5, 104, 100)  # a thin sliver
    canvas.paint("p2", 150, 100, 160, 120)  # clipped by the image corner
    frame = canvas.frame()
    analysis = analyse(frame, market)
    assert {r.entity_id for r in analysis.regions} == {"p0", "p1", "p2", "f0"}
    for r in analysis.regions:
        x, y = r.anchor
        color = market.entities[r.entity_id].color
        assert tuple(frame.seg[y, x]) == color, r.entity_id
        assert frame.depth[y, x] <= 8.0


def test_label_is_drawn_at_the_label_point(market):
    frame = Canvas(market).paint("p0", 40, 40, 100, 90).frame()
    analysis = analyse(frame, market)
    view = draw(analysis, market, "user")
    x, y = analysis.region("p0").anchor
    changed = np.any(view.image != frame.rgb, axis=2)
    assert changed[y - 3 : y + 4, x - 3 : x + 4].all()  # the filled label background


def test_held_item_gets_the_next_product_label_when_not_visible(market):
    frame = Canvas(market).paint("p0", 10, 10, 40, 40).paint("p1", 80, 10, 110, 40).frame()
    for role, expected in (("user", "3"), ("assistant", "c")):
        view = annotate(frame, market, role, held_item="p3")
        assert view.handles[expected] == "p3"
        assert "p3" not in view.visible_ids()
    # a visible held item keeps its visible label; no extra handle
    view = annotate(frame, market, "user", held_item="p1")
    assert [h for h, e in view.handles.items() if e == "p1"] == [view.handle_of("p1")]
    assert "3" not in view.handles


def test_annotate_is_deterministic_and_leaves_the_frame_alone(market):
    canvas = Canvas(market).paint("f0", 0, 0, 160, 110, depth=4.0)
    rng = np.random.default_rng(0)
    for i in range(4):
        x, y = rng.integers(0, 130, size=2)
        canvas.paint(f"p{i}", int(x), int(y) % 90, int(x) + 25, int(y) % 90 + 25)
    frame = canvas.frame()
    rgb = frame.rgb.copy()
    a = annotate(frame, market, "assistant", held_item="p2")
    b = annotate(canvas.frame(), market, "assistant", held_item="p2")
    assert np.array_equal(frame.rgb, rgb)
    assert np.array_equal(a.image, b.image) and a.image is not frame.rgb
    assert list(a.handles.items()) == list(b.handles.items())
    assert a.visible == b.visible


def test_draw_from_one_analysis_matches_annotate(market):
    frame = (
        Canvas(market).paint("f0", 0, 0, 160, 110, depth=4.0).paint("p0", 10, 10, 40, 40).frame()
    )
    both = annotate_roles(frame, market)
    for role in ROLES:
        single = annotate(frame, market, role)
        assert np.array_equal(both[role].image, single.image)
        assert both[role].handles == single.handles


def test_home_store_and_area_are_boxed_with_their_handles(home):
    canvas = (
        Canvas(home).paint("s1", 0, 0, 160, 60, depth=6.0).paint("a11", 20, 60, 120, 110, depth=5.0)
    )
    for role in ROLES:
        view = annotate(canvas.frame(), home, role)
        kinds = {v.kind: v for v in view.visible}
        assert set(kinds) == {"store", "area"}
        assert view.handles[kinds["store"].handle] == "s1"
        assert view.handles[kinds["area"].handle] == "a11"
        assert kinds["area"].handle.startswith(kinds["store"].handle)


@pytest.mark.parametrize(
    "kwargs, bad",
    [({"max_depth": 0.0}, "0.0"), ({"min_pixels": 0}, "0")],
)
def test_bad_arguments_raise_with_the_value(market, kwargs, bad):
    frame = Canvas(market).frame()
    with pytest.raises(ValueError, match=re.escape(bad)):
        analyse(frame, market, **kwargs)


def test_bad_role_and_mismatched_images_raise(market):
    frame = Canvas(market).frame()
    with pytest.raises(ValueError, match="'robot'"):
        annotate(frame, market, "robot")
    frame.depth = frame.depth[:-1]
    with pytest.raises(ValueError, match="does not match"):
        analyse(frame, market)


def test_label_placement_stays_inside_and_avoids_taken_rects():
    from situ_gym.som.overlay import _overlaps, _place

    taken: list = []
    for _ in range(4):  # four labels wanting the same spot
        taken.append(_place((50, 50), (20, 14), (120, 160), taken))
    for i, a in enumerate(taken):
        assert 0 <= a[0] and a[2] <= 160 and 0 <= a[1] and a[3] <= 120
        assert not any(_overlaps(a, b) for b in taken[i + 1 :])
    assert taken[0] == (40, 43, 60, 57)  # the first one is centred on its point
    assert _place((159, 119), (20, 14), (120, 160), []) == (140, 106, 160, 120)  # clamped


def test_assistant_rows_follow_shelf_levels(market):
    # two rows whose label points wobble by a few pixels: row by row, each left to right
    canvas = Canvas(market)
    canvas.paint("p0", 100, 10, 120, 30).paint("p1", 10, 16, 30, 36)  # upper row
    canvas.paint("p2", 60, 70, 80, 90).paint("p3", 20, 64, 40, 84)  # lower row
    view = annotate(canvas.frame(), market, "assistant")
    assert [(v.handle, v.entity_id) for v in _products(view)] == [
        ("a", "p1"), ("b", "p0"), ("c", "p3"), ("d", "p2")
    ]  # fmt: skip
    user = annotate(canvas.frame(), market, "user")
    assert [v.entity_id for v in _products(user)] == ["p1", "p3", "p2", "p0"]


def test_shared_or_reserved_entity_colours_are_rejected():
    from situ_gym.scene.index import SceneIndex
    from tests.world import marks_market

    scene = marks_market()
    clash = scene.model_copy(
        update={
            "products": [
                scene.products[0],
                scene.products[1].model_copy(update={"color": scene.products[0].color}),
            ]
        }
    )
    frame = Canvas(SceneIndex(scene)).frame()
    with pytest.raises(ValueError, match="share the colour"):
        analyse(frame, SceneIndex(clash))
    floor = scene.model_copy(
        update={"products": [scene.products[0].model_copy(update={"color": (8, 8, 8)})]}
    )
    with pytest.raises(ValueError, match="reserved"):
        analyse(frame, SceneIndex(floor))
