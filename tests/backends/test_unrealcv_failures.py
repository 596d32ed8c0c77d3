"""A misbehaving UnrealCV engine (loopback fake server): every bad reply is a BackendError,
and a step that fails half-way leaves the env exactly as it was before the step."""

from __future__ import annotations

import json

import pytest

from situ_gym.backends.base import BackendError, Pose
from situ_gym.backends.unrealcv import UnrealCVBackend, decode_image
from tests.backends.fake_unrealcv_server import FakeUnrealCVServer, scene_objects


@pytest.mark.parametrize("data", [b"", b"\x89PNG\r\n\x1a\n", b"BM" + b"\x00" * 60, b"\x00" * 3])
def test_undecodable_images_are_backend_errors(data):
    with pytest.raises(BackendError, match="image"):
        decode_image(data)


@pytest.mark.parametrize("reply", [b"", b"\x89PNG\r\n\x1a\n\x00\x00"])
def test_empty_or_broken_image_reply_is_a_backend_error(backend, server, reply):
    backend.reset(Pose(1.0, 1.0, 0.0))
    server.replies["vget /camera/0/lit"] = reply
    with pytest.raises(BackendError):
        backend.capture()


@pytest.mark.parametrize("reply", [b"nan 0.000 0.000", b"0.000 inf 0.000", b"12.0 -3.0", b"x y z"])
def test_bad_location_reply_is_a_backend_error(backend, server, reply):
    from situ_gym.backends.base import Primitive

    backend.reset(Pose(1.0, 1.0, 0.0))
    server.replies["vget /camera/0/location"] = reply
    with pytest.raises(BackendError, match="location"):
        backend.execute(Primitive("move_forward", {"distance": 0.5}))


def test_failed_step_leaves_no_half_state_and_needs_a_reset():
    from situ_gym.env import SituRecEnv
    from situ_gym.scene.loader import load_scene
    from situ_gym.user import UserSimulator, UserTurn

    class Walker(UserSimulator):
        name = "walker"

        def reset(self, task, profile, index, rng):
            pass

        def respond(self, obs):
            return UserTurn(utterance="Okay, walking.", tool_call={"name": "move_forward", "arguments": {"distance": "short"}},
                            gave_up=False, intent="explore")

    scene = load_scene("supermarket")
    action = json.dumps({"response": "Please walk ahead.", "assistant_actions": [{"type": "AskPreference"}],
                         "expected_user_action": {"name": "idle", "arguments": {}}, "ranking": []})
    with FakeUnrealCVServer(scene_objects(scene), mask_object=scene.products[0].instances[0].id) as srv:
        backend = UnrealCVBackend(scene, width=64, height=48, port=srv.port, timeout=5.0)
        env = SituRecEnv("supermarket", backend=backend, user=Walker(), image_size=(64, 48))
        try:
            env.reset(seed=0, options={"task_id": "sm_u01_t1"})
            obs1, *_ = env.step(action)
            before = (list(env.turns), obs1["history"], env._observation()["history"], env.user_view, len(env._dialogue))
            srv.replies["vget /camera/0/location"] = b"nan nan nan"  # the engine goes bad mid-move
            with pytest.raises(BackendError):
                env.step(action)
            after = (list(env.turns), obs1["history"], env._observation()["history"], env.user_view, len(env._dialogue))
            assert after == before  # no dialogue line, no turn, same view: nothing half applied
            assert len(env.turns) == 1
            with pytest.raises(RuntimeError, match="previous step failed .*BackendError.*call reset"):
                env.step(action)
            del srv.replies["vget /camera/0/location"]  # the engine is back
            env.reset(seed=0, options={"task_id": "sm_u01_t1"})
            _, _, _, _, info = env.step(action)
            assert info["turn"].turn == 1 and info["turn"].result.ok
        finally:
            env.close()
