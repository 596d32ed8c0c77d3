"""Rendering of the embedded backend: occlusion, agreement of rgb/depth/seg, determinism."""

from __future__ import annotations

import math

import numpy as np
import pytest

from situ_gym.actions.validate import to_primitive as validated  # backends get validated primitives
from situ_gym.backends.base import Backend, BackendError, Pose
from situ_gym.backends.embedded import EmbeddedBackend
from situ_gym.scene.model import BACKGROUND_COLOR, FLOOR_COLOR, Instance
from tests.world import render_home, render_market, render_product


def _mask(seg: np.ndarray, color) -> np.ndarray:
    return np.all(seg == np.array(color, np.uint8), axis=-1)


def _colors(seg: np.ndarray) -> set[tuple[int, int, int]]:
    return {tuple(int(v) for v in c) for c in np.unique(seg.reshape(-1, 3), axis=0)}


@pytest.fixture(scope="module")
def hidden_scene():
    """The tiny supermarket plus a product standing right behind the shelf's back panel."""
    hidden = render_product(
        "hidden",
        (250, 128, 16),
        instances=[Instance(id="hidden-0", position=(5.0, 6.9, 0.0), size=(0.5, 0.3, 1.2), facing=90.0)],
    )
    return render_market(extra_products=[hidden])


def test_product_behind_fixture_is_not_in_seg(hidden_scene):
    b = EmbeddedBackend(hidden_scene, width=320, height=240)
    shelf_color = next(f.color for f in hidden_scene.fixtures if f.id == "f_shelf")
    b.reset(Pose(5.0, 4.0, 90.0, 0.0))  # south of the shelf, facing it
    frame = b.capture()
    assert _mask(frame.seg, shelf_color).sum() > 1000
    assert _mask(frame.seg, (250, 128, 16)).sum() == 0
    b.reset(Pose(5.0, 9.0, 270.0, 0.0))  # north of the shelf, facing it: now in plain view
    frame = b.capture()
    visible = _mask(frame.seg, (250, 128, 16))
    assert visible.sum() > 500
    # and it is the nearest thing there: 9.0 - 7.05 m along the view axis
    assert np.allclose(np.median(frame.depth[visible]), 9.0 - 7.05, atol=1e-3)


def test_product_behind_product_is_hidden():
    front = render_product("front", (64, 200, 64),
                     instances=[Instance(id="f-0", position=(6.0, 4.0, 0.0), size=(0.6, 0.3, 1.0))])
    back = render_product("back", (200, 64, 200),
                    instances=[Instance(id="b-0", position=(7.0, 4.0, 0.0), size=(0.3, 0.3, 0.5))])
    scene = render_market(extra_products=[front, back])
    b = EmbeddedBackend(scene, width=320, height=240)
    b.reset(Pose(3.0, 4.0, 0.0, -10.0))  # looking east along y=4: back is fully behind front
    seg = b.capture().seg
    assert _mask(seg, (64, 200, 64)).sum() > 500
    assert _mask(seg, (200, 64, 200)).sum() == 0
    b.reset(Pose(7.0, 2.0, 90.0, -10.0))  # from the side both are visible
    seg = b.capture().seg
    assert _mask(seg, (200, 64, 200)).sum() > 200


@pytest.mark.parametrize("pitch", [0.0, -20.0, 15.0])
def test_floor_depth_matches_camera_geometry(pitch):
    scene = render_market()
    w, h, hfov = 320, 240, 90.0
    b = EmbeddedBackend(scene, width=w, height=h, hfov=hfov)
    b.reset(Pose(1.0, 4.0, 0.0, pitch))
    frame = b.capture()
    floor = _mask(frame.seg, FLOOR_COLOR)
    assert floor.sum() > 0.05 * w * h
    f = (w / 2) / math.tan(math.radians(hfov / 2))
    v = (np.arange(h) - (h - 1) / 2) / f  # image rows, +down
    p = math.radians(pitch)
    # ray z component per row for a camera pitched by p: forward_z - v * up_z
    dz = math.sin(p) - v * math.cos(p)
    expected = np.where(dz < 0, -scene.layout.eye_height / np.where(dz < 0, dz, -1), np.inf)
    exp_img = np.repeat(expected[:, None], w, axis=1)
    rel = np.abs(frame.depth[floor] - exp_img[floor]) / exp_img[floor]
    assert np.percentile(rel, 99) < 1e-3
    assert np.all(np.isfinite(frame.depth[floor]))


def test_images_agree_and_cover_the_view():
    scene = render_market()
    ahead = [p for p in scene.products if p.instances[0].position[2] == 1.5][3]
    x_ahead = ahead.instances[0].position[0]
    b = EmbeddedBackend(scene, width=320, height=240)
    b.reset(Pose(x_ahead, 4.5, 90.0, 0.0))
    frame = b.capture()
    assert frame.rgb.shape == (240, 320, 3) and frame.rgb.dtype == np.uint8
    assert frame.seg.shape == (240, 320, 3) and frame.seg.dtype == np.uint8
    assert frame.depth.shape == (240, 320) and frame.depth.dtype == np.float32
    # Inside a closed hall with a ceiling every ray hits something.
    assert np.isfinite(frame.depth).all()
    assert _mask(frame.seg, BACKGROUND_COLOR).sum() == 0
    # Product pixels lie between the box's front plane and the shelf's back (a stocked row
    # reaches back to the panel); the product straight ahead on the top board (1.5-1.75 m,
    # eye at 1.6 m) shows its front face at the centre.
    checked = 0
    shelf_back = scene.fixtures[0].footprint[3]
    for p in scene.products:
        m = _mask(frame.seg, p.color)
        if m.sum() < 50:
            continue
        inst = p.instances[0]
        y_front = inst.position[1] - inst.size[1] / 2
        d = frame.depth[m]
        assert d.min() > y_front - 4.5 - 0.01 and d.max() < shelf_back - 4.5 + 0.01
        checked += 1
    assert checked >= 6
    assert tuple(frame.seg[120, 160]) == ahead.color
    y_front = ahead.instances[0].position[1] - ahead.instances[0].size[1] / 2
    assert frame.depth[120, 160] == pytest.approx(y_front - 4.5, abs=3e-3)
    assert tuple(frame.rgb[120, 160]) != tuple(frame.seg[120, 160])  # display colours differ from ids


def test_package_art_shows_within_the_products_segment():
    scene = render_market()
    b = EmbeddedBackend(scene, width=640, height=480)  # near enough for the art (not the far mean colour)
    b.reset(Pose(scene.products[0].instances[0].position[0], 5.0, 90.0, -20.0))
    frame = b.capture()
    p = scene.products[0]
    m = _mask(frame.seg, p.color)
    assert m.sum() > 100
    # the product's pixels show its package art: many shades, not one flat colour per face
    assert len(np.unique(frame.rgb[m].reshape(-1, 3), axis=0)) >= 20


def test_capture_is_deterministic_and_backends_agree():
    actions = [
        validated("move_forward", {"distance": "medium"}),
        validated("turn", {"direction": "left", "angle": 35}),
        validated("look_up_down", {"direction": "down", "angle": 10}),
        validated("move_to_fixture", {"fixture": "f_shelf", "approach": "front"}),
    ]
    a, b = EmbeddedBackend(render_market(), width=160, height=120), EmbeddedBackend(
        render_market(), width=160, height=120
    )
    f1, f2 = a.capture(), a.capture()
    assert f1.rgb.tobytes() == f2.rgb.tobytes() and f1.seg.tobytes() == f2.seg.tobytes()
    assert f1.depth.tobytes() == f2.depth.tobytes()
    for act in actions:
        ra, rb = a.execute(act), b.execute(act)
        assert ra == rb
        fa, fb = a.capture(), b.capture()
        assert fa.rgb.tobytes() == fb.rgb.tobytes()
        assert fa.seg.tobytes() == fb.seg.tobytes()
        assert fa.depth.tobytes() == fb.depth.tobytes()


def test_frames_do_not_share_memory():
    b = EmbeddedBackend(render_market(), width=160, height=120)
    first = b.capture()
    kept = (first.rgb.copy(), first.depth.copy(), first.seg.copy())
    b.execute(validated("turn", {"direction": "left", "angle": 90}))
    second = b.capture()
    assert second.seg.tobytes() != kept[2].tobytes()  # the view changed ...
    assert first.rgb.tobytes() == kept[0].tobytes()  # ... and the old frame did not
    assert first.depth.tobytes() == kept[1].tobytes()
    assert first.seg.tobytes() == kept[2].tobytes()


def test_home_store_walls_and_areas_use_entity_colours():
    scene = render_home()
    b = EmbeddedBackend(scene, width=320, height=240)
    b.reset(Pose(8.0, 5.2, 90.0, -10.0))  # outside the doorway, looking in
    seg = b.capture().seg
    colors = _colors(seg)
    assert scene.stores[0].color in colors  # storefront walls / sign
    assert scene.areas[0].color in colors  # the rug seen through the doorway
    assert (200, 60, 120) in colors  # the sofa inside
    b.reset(Pose(8.0, 5.2, 270.0, 0.0))  # turned away: none of them
    seg = b.capture().seg
    assert (200, 60, 120) not in _colors(seg)


def test_is_a_backend_and_closes_twice():
    b = EmbeddedBackend(render_market(), width=64, height=48)
    assert isinstance(b, Backend)
    assert b.camera_intrinsics()[0, 0] == pytest.approx(32.0)
    b.close()
    b.close()
    with pytest.raises(BackendError):
        b.capture()


@pytest.mark.parametrize(
    "kwargs",
    [{"width": 0}, {"height": -3}, {"width": 64.5}, {"hfov": 0}, {"hfov": 200.0}, {"seed": "x"}, {"cull_distance": 0}],
)
def test_bad_arguments_raise_valueerror_naming_the_value(kwargs):
    with pytest.raises(ValueError, match=repr(next(iter(kwargs.values())))):
        EmbeddedBackend(render_market(), **kwargs)


def test_unchanged_pose_reuses_the_read_only_frame():
    b = EmbeddedBackend(render_market(), width=160, height=120)
    first = b.capture()
    assert not first.rgb.flags.writeable and not first.seg.flags.writeable
    with pytest.raises(ValueError):
        first.rgb[0, 0] = 0  # a snapshot: copy it to edit
    b.execute(validated("idle", {}))
    again = b.capture()
    assert again.rgb is first.rgb and again.entity_index is first.entity_index  # no re-render
    b.execute(validated("turn", {"direction": "left", "angle": 30}))
    moved = b.capture()
    assert moved.rgb is not first.rgb and moved.seg.tobytes() != first.seg.tobytes()
    b.reset(Pose(*[getattr(first.pose, k) for k in ("x", "y", "yaw", "pitch")]))
    back = b.capture()  # the same pose again, after another view: rendered anew, same bytes
    assert back.rgb is not first.rgb and back.rgb.tobytes() == first.rgb.tobytes()
