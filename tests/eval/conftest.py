"""Fixtures of the eval tests: the records world of tests/world.py."""

import pytest

from situ_gym.scene.index import SceneIndex
from tests.world import records_home, records_market


@pytest.fixture
def home_index():
    return SceneIndex(records_home())


@pytest.fixture
def market_index():
    return SceneIndex(records_market())
