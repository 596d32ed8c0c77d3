"""Fixtures of the actions tests: the parser world of tests/world.py and both roles' views of it."""

from __future__ import annotations

import pytest

from situ_gym.scene.index import SceneIndex
from situ_gym.som.types import RoleView
from tests.world import parser_home, parser_home_views, parser_market, parser_market_views

# The parse benchmark (bench_parse.py, moving to benchmarks/parse.py) uses these names.
build_market, build_home = parser_market, parser_home
build_market_views, build_home_views = parser_market_views, parser_home_views


@pytest.fixture(scope="session")
def market() -> SceneIndex:
    return parser_market()


@pytest.fixture(scope="session")
def home() -> SceneIndex:
    return parser_home()


@pytest.fixture()
def market_views(market: SceneIndex) -> tuple[RoleView, RoleView]:
    return parser_market_views(market)


@pytest.fixture()
def home_views(home: SceneIndex) -> tuple[RoleView, RoleView]:
    return parser_home_views(home)
