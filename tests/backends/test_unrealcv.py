"""UnrealCVBackend against a loopback fake UnrealCV server: protocol, motion, pixels, failures."""

from __future__ import annotations

import json
import sys
import threading
import time

import numpy as np
import pytest

from situ_gym.actions.validate import to_primitive as validated  # backends get validated primitives
from situ_gym.backends.base import Backend, BackendError, Pose
from situ_gym.backends.embedded import EmbeddedBackend
from situ_gym.backends.unrealcv import (
    ColorSnapper,
    UnrealCVBackend,
    decode_depth,
    from_ue,
    snap_colors,
    to_ue,
)
from situ_gym.scene.model import BACKGROUND_COLOR
from tests.backends.fake_unrealcv_server import STRAY_COLOR, FakeUnrealCVServer, scene_objects

# Every wait below is bounded: a hang would surface as a failed bound, not a stuck suite.
HANG_BOUND = 5.0  # seconds; far below the stock client's ~55 s dead-socket retry and 15 s waits


@pytest.fixture()
def wall_x():
    return 600.0  # cm: the fake engine's wall that moveto cannot cross


def _product(scene, pid):
    return next(p for p in scene.products if p.id == pid)


# -- conventions ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("yaw", "ue_yaw"), [(0.0, 0.0), (90.0, -90.0), (180.0, 180.0), (270.0, 90.0), (45.0, -45.0), (359.0, 1.0)]
)
def test_yaw_maps_to_ue_clockwise_with_mirrored_y(yaw, ue_yaw):
    (X, Y, Z), (pitch, yw, roll) = to_ue(2.0, 3.0, 1.5, yaw, -12.0)
    assert (X, Y, Z) == (200.0, -300.0, 150.0)
    assert (pitch, roll) == (-12.0, 0.0) and yw == pytest.approx(ue_yaw)
    # the facing direction agrees: ours (cos, sin) in (x, y) is UE's (cos, sin) in (X, Y) with Y = -y
    ours = np.array([np.cos(np.radians(yaw)), np.sin(np.radians(yaw))])
    ue = np.array([np.cos(np.radians(yw)), np.sin(np.radians(yw))])
    assert ue == pytest.approx(ours * [1.0, -1.0], abs=1e-9)
    (x, y, z), (yaw_back, pitch_back) = from_ue((X, Y, Z), (pitch, yw, roll))
    assert (x, y, z) == pytest.approx((2.0, 3.0, 1.5)) and yaw_back == pytest.approx(yaw % 360.0)
    assert pitch_back == -12.0


def test_unflipped_level_keeps_yaw_sign():
    (X, Y, _), (_, yw, _) = to_ue(2.0, 3.0, 1.5, 90.0, flip_y=False)
    assert (X, Y, yw) == (200.0, 300.0, 90.0)


# -- decoding ----------------------------------------------------------------------
def test_snap_colors_tolerance_dark_channels_and_background():
    palette = np.array([BACKGROUND_COLOR, (200, 40, 40), (104, 80, 200), (10, 120, 60)])
    mask = np.array(
        [[(203, 37, 41), (104, 80, 200), (204, 40, 40)],  # +-3 snaps; 4 off does not
         [(0, 121, 58), (12, 117, 63), (2, 2, 2)]],  # channel 10 read as 0 snaps; near-black -> background
        np.uint8,
    )
    seg = snap_colors(mask, palette, tol=3)
    assert seg.dtype == np.uint8 and seg.shape == mask.shape
    assert [tuple(map(int, c)) for c in seg.reshape(-1, 3)] == [
        (200, 40, 40), (104, 80, 200), (0, 0, 0), (10, 120, 60), (10, 120, 60), (0, 0, 0)]


def test_snapper_agrees_with_brute_force_nearest_match():
    rng = np.random.default_rng(7)
    palette = np.vstack([[BACKGROUND_COLOR, (8, 8, 8)], rng.integers(0, 256, (60, 3))])
    base = palette[rng.integers(0, len(palette), (40, 50))]
    mask = np.clip(base + rng.integers(-5, 6, base.shape), 0, 255).astype(np.uint8)
    mask[::9] = 0  # crushed dark rows
    got = ColorSnapper(palette, tol=3)(mask)
    px = mask.reshape(-1, 1, 3).astype(int)
    diff = np.abs(px - palette[None])
    diff = np.where((palette[None] < 16) & (px == 0), 0, diff).max(axis=2)
    best = diff.argmin(axis=1)  # ties: the lower index, like the snapper
    want = np.where((diff[np.arange(len(best)), best] <= 3)[:, None], palette[best], 0)
    assert (got.reshape(-1, 3) == want).all()
    assert 0.2 < (got.reshape(-1, 3) != 0).any(axis=1).mean() < 0.9  # both outcomes exercised


def test_point_depth_becomes_plane_depth():
    buf = __import__("io").BytesIO()
    np.save(buf, np.full((3, 5), 200.0, np.float32), allow_pickle=False)
    plane = decode_depth(buf.getvalue(), kind="point", focal=2.0)
    assert plane[1, 2] == pytest.approx(2.0)  # centre ray: unchanged
    assert plane[0, 0] == pytest.approx(2.0 / np.sqrt(1 + (2.0**2 + 1.0**2) / 4.0))
    far = __import__("io").BytesIO()
    np.save(far, np.array([[65504.0, -1.0]], np.float32), allow_pickle=False)
    assert np.isinf(decode_depth(far.getvalue())).all()  # float16 max and invalid -> nothing


# -- connect, setup, capture ----------------------------------------------------------
@pytest.mark.parametrize("fmt", ["png", "bmp"])
def test_connect_sets_up_and_capture_is_consistent(scene, server, fmt):
    b = UnrealCVBackend(scene, width=64, height=48, port=server.port, timeout=2.0, image_format=fmt)
    try:
        assert isinstance(b, Backend)
        assert "vget /unrealcv/status" in server.commands
        assert server.size == (64, 48) and server.fov == 90.0
        for p in scene.products:
            assert all(server.objects[i.id] == tuple(p.color) for i in p.instances)
        assert server.objects["f_shelf"] == (200, 40, 40) and b.colored_objects == len(server.objects)
        f = b.capture()
        assert f.rgb.shape == (48, 64, 3) and f.rgb.dtype == np.uint8
        assert f.seg.shape == (48, 64, 3) and f.seg.dtype == np.uint8
        assert f.depth.shape == (48, 64) and f.depth.dtype == np.float32
        target = tuple(_product(scene, "p3").color)
        rect = (slice(12, 24), slice(16, 32))
        assert (f.seg[rect] == target).all()  # shifted by (+2, -2, +1) in the mask, snapped back
        assert (f.seg[-4:, -4:] == BACKGROUND_COLOR).all()  # STRAY_COLOR is no scene colour
        assert {tuple(map(int, c)) for c in np.unique(f.seg.reshape(-1, 3), axis=0)} == {BACKGROUND_COLOR, target}
        assert tuple(f.rgb[15, 20]) == (250, 200, 10)  # lit channels in RGB order
        assert f.depth[15, 20] == pytest.approx(1.5) and f.depth[0, 0] == pytest.approx(3.0)
        assert f.pose == b.pose()
    finally:
        b.close()
    assert STRAY_COLOR != target


def test_object_names_mapping_and_missing_objects_do_not_fail(scene):
    names = [*scene_objects(scene), "ShelfActor_1"]
    with FakeUnrealCVServer(names) as srv:
        b = UnrealCVBackend(scene, width=32, height=24, port=srv.port, timeout=2.0,
                            object_names={"f_shelf": "ShelfActor_1", "f_chest": ["ChestMissing"]})
        assert srv.objects["ShelfActor_1"] == (200, 40, 40)
        assert srv.objects["f_shelf"] == (0, 0, 0)  # not the convention name any more
        assert b.colored_objects == len(names) - 2  # f_shelf unmapped, f_chest's object is missing
        b.close()
    with pytest.raises(ValueError, match="nope"):
        UnrealCVBackend(scene, connect=False, object_names={"nope": "X"})
    with FakeUnrealCVServer(names) as srv:  # a level with baked colours: no colour traffic
        b = UnrealCVBackend(scene, width=32, height=24, port=srv.port, timeout=2.0, assign_colors=False)
        assert not any("/color" in c or c == "vget /objects" for c in srv.commands) and b.colored_objects == 0
        b.close()


def test_reset_places_camera_in_ue_coordinates(backend, server):
    backend.reset(Pose(2.0, 3.0, 90.0, -10.0))
    assert server.location == pytest.approx([200.0, -300.0, 160.0])
    assert server.rotation == pytest.approx([-10.0, -90.0, 0.0])
    assert backend.pose() == Pose(2.0, 3.0, 90.0, -10.0) and backend.cart == [] and backend.held_item is None


# -- motion ---------------------------------------------------------------------------
def test_moveto_into_wall_reports_true_clamped_displacement(backend, server):
    backend.reset(Pose(1.0, 4.0, 0.0))
    r = backend.execute(validated("move_forward", {"distance": "long"}))
    assert r.ok and r.translational and r.displacement == pytest.approx(3.0) and r.message == "walked 3.0 m forward"
    r = backend.execute(validated("move_forward", {"distance": "long"}))  # wall at X=600 cm, body 30 cm
    assert r.translational and r.displacement == pytest.approx(1.7, abs=1e-3)
    assert r.message == "blocked after 1.7 m"
    assert (backend.pose().x, backend.pose().y) == pytest.approx((5.7, 4.0), abs=1e-3)
    assert server.location[0] == pytest.approx(570.0)
    assert any(c.startswith("vset /camera/0/moveto 700.000 -400.000 160.000") for c in server.commands)
    r = backend.execute(validated("move_backward", {"distance": "short"}))
    assert r.displacement == pytest.approx(0.5) and backend.pose().x == pytest.approx(5.2, abs=1e-3)


def test_turns_and_looks_map_to_ue_rotation(backend, server):
    backend.reset(Pose(1.0, 4.0, 0.0))
    backend.execute(validated("turn", {"direction": "left", "angle": 90}))
    assert backend.pose().yaw == 90.0 and server.rotation == pytest.approx([0.0, -90.0, 0.0])
    backend.execute(validated("turn", {"direction": "right", "angle": 180}))
    assert backend.pose().yaw == 270.0 and server.rotation == pytest.approx([0.0, 90.0, 0.0])
    backend.execute(validated("look_up_down", {"direction": "down", "angle": 20}))
    assert server.rotation == pytest.approx([-20.0, 90.0, 0.0])
    r = backend.execute(validated("side_step", {"direction": "left", "distance": "short"}))  # facing -y: left is +x
    assert r.displacement == pytest.approx(0.5) and server.location[:2] == pytest.approx([150.0, -400.0])


def test_targeted_move_walks_planned_legs_to_the_embedded_approach_pose(scene, backend, server):
    emb = EmbeddedBackend(scene, width=32, height=24)
    for b in (emb, backend):
        b.reset(Pose(1.0, 4.0, 0.0))
    prim = validated("move_to_fixture", {"fixture": "f_chest", "approach": "front"})
    want, got = emb.execute(prim), backend.execute(prim)
    assert got.ok and got.message == want.message and got.displacement == pytest.approx(want.displacement, abs=1e-3)
    assert backend.pose().x == pytest.approx(emb.pose().x, abs=1e-3)
    assert backend.pose().y == pytest.approx(emb.pose().y, abs=1e-3)
    assert (backend.pose().yaw, backend.pose().pitch) == (emb.pose().yaw, emb.pose().pitch)
    assert server.rotation == pytest.approx([emb.pose().pitch, to_ue(0, 0, 0, emb.pose().yaw)[1][1], 0.0])
    assert sum(c.startswith("vset /camera/0/moveto") for c in server.commands) >= 1
    # nearest approach: same end point as the embedded planner
    prim = validated("move_to_fixture", {"fixture": "f_shelf"})
    want, got = emb.execute(prim), backend.execute(prim)
    assert got.ok and (backend.pose().x, backend.pose().y) == pytest.approx((emb.pose().x, emb.pose().y), abs=2e-3)


def test_home_store_and_area_moves_match_the_embedded_backend():
    from tests.world import render_home

    scene = render_home()
    names = [i.id for p in scene.products for i in p.instances] + ["s1", "a1"]
    with FakeUnrealCVServer(names) as srv:
        b = UnrealCVBackend(scene, width=32, height=24, port=srv.port, timeout=2.0)
        assert srv.objects["s1"] == (180, 120, 40) and srv.objects["a1"] == (60, 160, 90)
        emb = EmbeddedBackend(scene, width=32, height=24)
        for prim in (validated("move_to_store", {"store": "s1", "approach": "inside_doorway"}),
                     validated("move_to_area", {"area": "a1"})):
            want, got = emb.execute(prim), b.execute(prim)
            assert got.ok and got.message == want.message
            assert got.displacement == pytest.approx(want.displacement, abs=1e-3)
            assert (b.pose().x, b.pose().y, b.pose().yaw) == pytest.approx((emb.pose().x, emb.pose().y, emb.pose().yaw),
                                                                           abs=1e-3)
        assert srv.location[:2] == pytest.approx([800.0, -830.0]) and srv.rotation[1] == pytest.approx(-90.0)
        b.close()


def test_targeted_move_blocked_in_engine_reports_partial_walk(backend, server):
    backend.reset(Pose(1.0, 4.0, 0.0))
    r = backend.execute(validated("move_to_fixture", {"fixture": "f_upright", "approach": "front"}))  # at x=10.2
    assert not r.ok and r.translational and "blocked on the way to the front of Upright Freezer 1" in r.message
    assert r.displacement == pytest.approx(backend.pose().x - 1.0, abs=0.05) and backend.pose().x < 5.75


def test_item_actions_match_the_embedded_backend(scene, backend, server):
    emb = EmbeddedBackend(scene, width=32, height=24)
    plan = [validated("pick_up_item", {"item": "p1"}), validated("check_item", {"item": "p2"}),
            validated("pick_up_item", {"item": "p2"}), validated("drop_item", {}), validated("drop_item", {}),
            validated("do_not_add_to_cart", {"item": "p1"}), validated("add_to_cart", {"item": "p2"}),
            validated("move_to_store", {"store": "x", "approach": "inside_doorway"})]
    n = len(server.commands)
    for prim in plan:
        want, got = emb.execute(prim), backend.execute(prim)
        assert (got.ok, got.message, got.revealed_product, got.cart_added) == (
            want.ok, want.message, want.revealed_product, want.cart_added)
    assert backend.cart == emb.cart == ["p2"] and backend.inspected == emb.inspected == {"p1", "p2"}
    assert server.commands[n:] == []  # item state lives in Python: no engine traffic


# -- failures -------------------------------------------------------------------------
def test_server_that_never_greets_raises_within_the_deadline(scene):
    with FakeUnrealCVServer(greet=False) as srv:
        t0 = time.monotonic()
        with pytest.raises(BackendError, match="no UnrealCV greeting"):
            UnrealCVBackend(scene, width=32, height=24, port=srv.port, timeout=0.5)
        assert time.monotonic() - t0 < HANG_BOUND


def test_refused_connection_raises(scene):
    with FakeUnrealCVServer() as srv:
        port = srv.port
    t0 = time.monotonic()
    with pytest.raises(BackendError, match="cannot connect"):
        UnrealCVBackend(scene, width=32, height=24, port=port, timeout=2.0)
    assert time.monotonic() - t0 < HANG_BOUND


def test_killed_server_fails_fast_on_the_next_call(scene):
    srv = FakeUnrealCVServer(scene_objects(scene)).start()
    b = UnrealCVBackend(scene, width=32, height=24, port=srv.port, timeout=30.0)  # the timeout is not the rescue
    b.execute(validated("move_forward", {"distance": "short"}))
    srv.kill()
    t0 = time.monotonic()
    with pytest.raises(BackendError):
        b.execute(validated("move_forward", {"distance": "short"}))
    with pytest.raises(BackendError):
        b.capture()
    assert time.monotonic() - t0 < HANG_BOUND
    b.close()


def test_server_dying_mid_request_fails_fast(scene):
    srv = FakeUnrealCVServer(scene_objects(scene)).start()
    b = UnrealCVBackend(scene, width=32, height=24, port=srv.port, timeout=30.0)
    srv.delays.append(("vget /camera/0/lit", 10.0))
    killer = threading.Timer(0.2, srv.kill)
    killer.start()
    t0 = time.monotonic()
    with pytest.raises(BackendError):
        b.capture()
    assert time.monotonic() - t0 < HANG_BOUND
    killer.join()
    b.close()


def test_timeout_reconnects_and_the_next_request_gets_its_own_answer(scene, server):
    b = UnrealCVBackend(scene, width=64, height=48, port=server.port, timeout=1.0)
    b.reset(Pose(1.0, 4.0, 0.0))
    server.delays.append(("vget /camera/0/location", 3.0))  # the moveto's read-back answers late
    with pytest.raises(BackendError, match="no reply"):
        b.execute(validated("move_forward", {"distance": "short"}))
    assert server.accepted == 1
    # The late location reply must not answer the next request: lit PNG bytes must come back.
    f = b.capture()
    assert server.accepted == 2 and tuple(f.rgb[15, 20]) == (250, 200, 10)
    assert b.pose().x == pytest.approx(1.5, abs=1e-3)  # the lost move's end is read back on reconnect
    r = b.execute(validated("move_forward", {"distance": "short"}))
    assert r.ok and b.pose().x == pytest.approx(2.0, abs=1e-3) and r.displacement == pytest.approx(0.5, abs=1e-3)
    assert server.commands.count("vget /unrealcv/status") == 1  # set-up is not repeated
    b.close()


def test_close_is_idempotent_and_final(backend):
    backend.close()
    backend.close()
    with pytest.raises(BackendError, match="closed"):
        backend.capture()
    with pytest.raises(BackendError, match="closed"):
        backend.execute(validated("idle", {}))


def test_missing_client_names_the_extra(scene, monkeypatch):
    monkeypatch.setitem(sys.modules, "unrealcv", None)
    with pytest.raises(ImportError, match=r"situ-gym\[unreal\]"):
        UnrealCVBackend(scene, port=9, timeout=0.5)


@pytest.mark.parametrize(
    "kwargs", [{"port": 0}, {"timeout": 0}, {"camera_id": -1}, {"image_format": "jpg"}, {"depth_kind": "z"},
               {"seg_tolerance": 99}, {"user_object": "a b"}, {"animations": {"turn": "Wave"}}]
)
def test_bad_arguments_print_the_value(scene, kwargs):
    with pytest.raises(ValueError, match=repr(next(iter(kwargs.values())))[:6].replace("{", r"\{")):
        UnrealCVBackend(scene, connect=False, **kwargs)


def test_user_object_follows_and_animations_call_blueprints(scene):
    with FakeUnrealCVServer([*scene_objects(scene), "Shopper"]) as srv:
        b = UnrealCVBackend(scene, width=32, height=24, port=srv.port, timeout=2.0, user_object="Shopper",
                            animations={"turn": "PlayTurn"})
        b.reset(Pose(1.0, 4.0, 0.0))
        b.execute(validated("turn", {"direction": "left", "angle": 90}))
        assert "vset /object/Shopper/location 100.000 -400.000 0.000" in srv.commands
        assert srv.commands[-2:] == ["vset /object/Shopper/rotation 0.000 -90.000 0.000", "vbp Shopper PlayTurn"]
        b.close()


# -- inside the environment -------------------------------------------------------------
def test_works_inside_situ_rec_env():
    from situ_gym.env import SituRecEnv
    from situ_gym.scene.loader import load_scene
    from situ_gym.user import UserSimulator, UserTurn

    class TwoSteps(UserSimulator):
        name = "two-steps"
        calls = [{"name": "move_forward", "arguments": {"distance": "short"}},
                 {"name": "turn", "arguments": {"direction": "left", "angle": 30}}]

        def reset(self, task, profile, index, rng):
            self.k = 0

        def respond(self, obs):
            call = self.calls[min(self.k, 1)]
            self.k += 1
            return UserTurn(utterance="Okay.", tool_call=call, gave_up=False, intent="explore")

    scene = load_scene("supermarket")
    product = scene.products[0]
    with FakeUnrealCVServer(scene_objects(scene), mask_object=product.instances[0].id) as srv:
        backend = UnrealCVBackend(scene, width=64, height=48, port=srv.port, timeout=5.0)
        env = SituRecEnv("supermarket", backend=backend, user=TwoSteps(), image_size=(64, 48))
        try:
            obs, info = env.reset(seed=0)
            start = scene.layout.start
            assert srv.location[:2] == pytest.approx(list(to_ue(start.x, start.y, 0, 0)[0][:2]))
            assert product.id in env.user_view.visible_ids()  # the engine's mask drives the marks
            action = json.dumps({"response": "Hi! What are you looking for?",
                                 "assistant_actions": [{"type": "Greet"}],
                                 "expected_user_action": {"name": "idle", "arguments": {}}, "ranking": []})
            _, _, term, trunc, _ = env.step(action)
            assert not term and env.turns[-1].result.displacement == pytest.approx(0.5, abs=1e-3)
            env.step(action)
            assert env.turns[-1].result.ok and backend.pose().yaw == pytest.approx((start.yaw + 30) % 360)
            assert srv.rotation[1] == pytest.approx(to_ue(0, 0, 0, backend.pose().yaw)[1][1])
        finally:
            env.close()
            env.close()


# -- launching a "packaged binary" (a stand-in script that serves on the ini's port) -------
def _stand_in(tmp_path, body=None):
    from pathlib import Path

    server = Path(__file__).with_name("fake_unrealcv_server.py")
    exe = tmp_path / "FakeMart-Linux-Shipping"
    repo = Path(__file__).resolve().parents[2]
    exe.write_text(body or f'#!/bin/sh\ncd "{repo}"\nexec "{sys.executable}" "{server}" --ini "{tmp_path}/unrealcv.ini" "$@"\n')
    exe.chmod(0o755)
    return exe


def test_launch_writes_ini_waits_for_greeting_and_kills_the_group(scene, tmp_path):
    from situ_gym.backends.unreal_launch import launch

    proc = launch(_stand_in(tmp_path), "FakeMart", width=48, height=32, ready_timeout=20.0)
    try:
        ini = (tmp_path / "unrealcv.ini").read_text()
        assert f"Port={proc.port}" in ini and "Width=48" in ini and "Height=32" in ini
        b = UnrealCVBackend(scene, width=48, height=32, port=proc.port, timeout=5.0, process=proc.popen)
        assert b.capture().rgb.shape == (32, 48, 3)
        proc.close()
        assert not proc.alive
        t0 = time.monotonic()
        with pytest.raises(BackendError):
            b.execute(validated("move_forward", {"distance": "short"}))
        assert time.monotonic() - t0 < HANG_BOUND
        b.close()
    finally:
        proc.close()
        proc.close()


def test_launch_of_a_binary_that_exits_reports_its_code(tmp_path):
    from situ_gym.backends.unreal_launch import launch

    exe = _stand_in(tmp_path, "#!/bin/sh\necho missing map >&2\nexit 3\n")
    t0 = time.monotonic()
    with pytest.raises(BackendError, match="code 3.*missing map"):
        launch(exe, ready_timeout=20.0)
    assert time.monotonic() - t0 < HANG_BOUND
