"""Fixtures of the backend tests: the render world of tests/world.py behind a fake UnrealCV engine."""

import pytest

from situ_gym.backends.unrealcv import UnrealCVBackend
from tests.backends.fake_unrealcv_server import FakeUnrealCVServer, scene_objects
from tests.world import render_market


@pytest.fixture()
def scene():
    return render_market()


@pytest.fixture()
def wall_x():
    """No wall in the fake engine's world unless a test module overrides this."""
    return None


@pytest.fixture()
def server(scene, wall_x):
    srv = FakeUnrealCVServer(scene_objects(scene), mask_object="p3-0", wall_x=wall_x).start()
    yield srv
    srv.kill()


@pytest.fixture()
def backend(scene, server):
    b = UnrealCVBackend(scene, width=64, height=48, port=server.port, timeout=2.0)
    yield b
    b.close()
