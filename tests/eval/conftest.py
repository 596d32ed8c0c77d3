"""Fixtures of the eval tests."""

import pytest

from situ_gym.scene.index import SceneIndex
from tests.eval.builders import home_scene, market_scene


@pytest.fixture
def home_index():
    return SceneIndex(home_scene())


@pytest.fixture
def market_index():
    return SceneIndex(market_scene())
