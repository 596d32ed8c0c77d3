"""SoM on the committed store scenes, rendered by the embedded backend."""

from __future__ import annotations

import math
import re

import pytest

from situ_gym.backends.base import Pose
from situ_gym.backends.embedded import EmbeddedBackend
from situ_gym.scene.index import SceneIndex
from situ_gym.scene.loader import load_scene
from situ_gym.som import (
    ROLES,
    analyse,
    annotate_roles,
    caption,
    fixed_handles,
    fixed_handles_by_id,
    render_minimap,
)
from tests.som.conftest import FORMATS


@pytest.fixture(scope="module", params=["supermarket", "home_furnishings"])
def store(request):
    scene = load_scene(request.param)
    backend = EmbeddedBackend(scene, width=320, height=240)
    yield SceneIndex(scene), backend
    backend.close()


def _front_of_target(index: SceneIndex) -> tuple[str, Pose]:
    """A pose 1 m behind the first navigation target's approach point, facing it."""
    scene = index.scene
    if scene.store == "supermarket":
        target, a = scene.fixtures[0].id, scene.fixtures[0].approach["front"]
    else:
        target, a = scene.stores[0].id, scene.stores[0].approach["inside_doorway"]
    back = math.radians(a.yaw + 180.0)
    return target, Pose(a.x + math.cos(back), a.y + math.sin(back), a.yaw)


def test_fixed_handles_cover_every_navigation_target(store):
    index, _ = store
    for role in ROLES:
        handles = fixed_handles(index, role)
        assert sorted(handles.values()) == sorted(index.nav_targets)
        for handle, eid in handles.items():
            assert re.fullmatch(FORMATS[role][index.kind(eid)], handle), (role, handle)
    user, assistant = fixed_handles_by_id(index, "user"), fixed_handles_by_id(index, "assistant")
    assert sum(user[e] != assistant[e] for e in index.nav_targets) == len(index.nav_targets)


def test_view_in_front_of_a_target(store):
    index, backend = store
    target, pose = _front_of_target(index)
    backend.reset(pose)
    frame = backend.capture()
    analysis = analyse(frame, index)
    assert any(r.kind == "product" for r in analysis.regions)
    for r in analysis.regions:
        x, y = r.anchor
        assert tuple(frame.seg[y, x]) == index.entities[r.entity_id].color
        assert r.distance <= 8.0
    views = annotate_roles(frame, index)
    user, assistant = views["user"], views["assistant"]
    assert target in user.visible_ids()
    assert user.visible_ids() and sorted(user.visible_ids()) == sorted(assistant.visible_ids())
    for eid in user.visible_ids():
        assert (
            user.handles[user.handle_of(eid)] == assistant.handles[assistant.handle_of(eid)] == eid
        )
    text = caption(assistant, index, held_item=None, cart=[])
    for v in assistant.visible:
        assert f"[{v.handle}] {v.name}" in text
    assert text.endswith("Holding: nothing\nCart: empty")
    image = render_minimap(index.scene, index, pose, "assistant")
    assert image.shape == (240, 320, 3)
