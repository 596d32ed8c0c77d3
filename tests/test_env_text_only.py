"""``SituRecEnv(text_only=True)``: no colour image and no Set-of-Mark drawing, yet the same
captions, handles, infos, shopper and RecRM reward as the full step, turn for turn."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import situ_gym  # noqa: F401 - registers the envs
from agents.base import agent_info
from agents.registry import make_agent
from recrm import RecRMReward
from situ_gym import STORE_OF_ENV
from situ_gym.backends.base import Pose
from situ_gym.backends.embedded import EmbeddedBackend
from situ_gym.scene import SceneIndex
from situ_gym.scene.loader import load_scene, load_task_bank
from situ_gym.som import analyse, draw

ENVS = list(STORE_OF_ENV)


def _episode(env_id: str, task_id: str, agent_name: str, **kwargs):
    """(observations without images, rewards, turn records, infos) of one played episode."""
    env = RecRMReward(gym.make(env_id, **kwargs))
    agent = make_agent(agent_name)
    obs, info = env.reset(seed=3, options={"task_id": task_id})
    agent.reset(obs, agent_info(info), seed=3)
    seen = [obs]
    rewards, turns, infos, done = [], [], [info], False
    while not done:
        obs, reward, terminated, truncated, info = env.step(agent.act(obs))
        seen.append(obs)
        rewards.append(reward)
        turns.append(info["turn"].model_dump())
        infos.append({k: v for k, v in info.items() if k != "turn"})
        done = terminated or truncated
    env.close()
    text = [{k: v for k, v in o.items() if k not in ("som_rgb", "map")} for o in seen]
    return text, rewards, turns, infos


@pytest.mark.parametrize("env_id", ENVS)
@pytest.mark.parametrize("agent_name", ["heuristic", "random"])
def test_text_only_plays_the_same_episode(env_id, agent_name):
    task_id = load_task_bank(STORE_OF_ENV[env_id]).tasks[7].id
    full = _episode(env_id, task_id, agent_name)
    text = _episode(env_id, task_id, agent_name, text_only=True)
    for a, b in zip(full[0], text[0], strict=True):
        assert a.keys() == b.keys()
        for key in a:
            np.testing.assert_array_equal(a[key], b[key])
    assert full[1:] == text[1:]
    assert len(full[2]) > 3  # a real episode, with moves and looks


@pytest.mark.parametrize("env_id", ENVS)
def test_text_only_observation_has_no_pixels(env_id):
    env = gym.make(env_id, text_only=True)
    obs, _ = env.reset(seed=0)
    assert "som_rgb" not in obs and "map" not in obs
    assert set(obs) == set(env.observation_space.spaces)
    assert env.unwrapped.assistant_view.image is None and env.unwrapped.user_view.image is None
    assert obs["visible"]  # the caption is still there
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


def test_text_only_view_matches_the_drawn_view():
    """The backend without colour and the undrawn view give the handles and visible
    entities of the full render, at poses around the store."""
    scene = load_scene("supermarket")
    full, bare = EmbeddedBackend(scene), EmbeddedBackend(scene, rgb=False)
    index = SceneIndex(scene)
    rng = np.random.default_rng(0)
    x0, y0, x1, y1 = scene.layout.bounds
    checked = 0
    for _ in range(12):
        pose = Pose(float(rng.uniform(x0 + 1, x1 - 1)), float(rng.uniform(y0 + 1, y1 - 1)), float(rng.uniform(0, 360)))
        full.reset(pose)
        bare.reset(pose)
        a, b = full.capture(), bare.capture()
        assert not b.rgb.any() and not b.rgb.flags.writeable
        for name in ("depth", "seg", "entity_index"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
        for role in ("user", "assistant"):
            drawn = draw(analyse(a, index), index, role)
            undrawn = draw(analyse(b, index), index, role, pixels=False)
            assert undrawn.image is None
            assert (drawn.handles, drawn.visible) == (undrawn.handles, undrawn.visible)
            checked += len(drawn.visible)
    assert checked > 20  # the poses saw things


@pytest.mark.parametrize("kwargs, message", [
    ({"text_only": 1}, "text_only must be True or False"),
    ({"text_only": True, "render_mode": "rgb_array"}, "text_only=True draws no frame"),
])
def test_bad_text_only_is_a_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        gym.make(ENVS[0], **kwargs)
