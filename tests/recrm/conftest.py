"""Fixtures of the RecRM tests: the reward world of tests/world.py and its breakfast task."""

import pytest

from tests.world import reward_market, reward_task


@pytest.fixture(scope="module")
def index():
    return reward_market()


@pytest.fixture(scope="module")
def task():
    return reward_task()
