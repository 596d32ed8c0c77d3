"""Under an ablation the default keeps a black frame of the same shape; the paper sends no image."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import situ_gym  # noqa: F401 - registers the envs

ABLATIONS = ("no_ego_view", "no_ego_view_no_caption")


@pytest.mark.parametrize("ablation", ABLATIONS)
def test_default_keeps_a_black_frame_of_the_same_shape(ablation):
    full = gym.make("SituRec-Supermarket-v0")
    env = gym.make("SituRec-Supermarket-v0", ablation=ablation)
    assert env.observation_space["som_rgb"] == full.observation_space["som_rgb"]
    obs, _ = env.reset(seed=0)
    assert obs["som_rgb"].shape == full.observation_space["som_rgb"].shape and not obs["som_rgb"].any()


@pytest.mark.parametrize("ablation", ABLATIONS)
def test_paper_observation_has_no_image(ablation):
    env = gym.make("SituRec-Supermarket-v0", ablation=ablation, protocol="paper")
    check_env(env.unwrapped, skip_render_check=True)
    assert "som_rgb" not in env.observation_space.spaces
    obs, _ = env.reset(seed=0)
    assert "som_rgb" not in obs and {"map", "pose", "catalog", "history", "visible"} <= set(obs)
    obs, *_ = env.step('{"response": "Hi, what are you looking for?", "assistant_actions": [{"type": "Greet"}]}')
    assert "som_rgb" not in obs


def test_paper_without_ablation_keeps_the_image():
    env = gym.make("SituRec-Supermarket-v0", protocol="paper")
    obs, _ = env.reset(seed=0)
    assert obs["som_rgb"].any()
    assert np.array_equal(obs["som_rgb"], gym.make("SituRec-Supermarket-v0").reset(seed=0)[0]["som_rgb"])
