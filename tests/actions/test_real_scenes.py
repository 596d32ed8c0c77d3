"""The parser against the committed store assets: names resolve, real names are not flagged."""

from __future__ import annotations

import json

import numpy as np
import pytest

from situ_gym.actions import parse_assistant_output
from situ_gym.actions.parse import find_marker_disclosures, resolve_product_name
from situ_gym.scene.index import SceneIndex
from situ_gym.scene.loader import load_scene
from situ_gym.som.labels import fixed_handles
from situ_gym.som.types import RoleView, VisibleEntity

STORES = ("supermarket", "home_furnishings")


@pytest.fixture(scope="module", params=STORES)
def real(request) -> SceneIndex:
    return SceneIndex(load_scene(request.param))


def test_every_catalog_name_resolves_exactly_and_without_its_size(real):
    for pid, product in real.products.items():
        assert resolve_product_name(product.name, real) == (pid, None)
        short = product.name.rsplit(",", 1)[0].lower()  # "<brand> <variant> <noun>"
        assert resolve_product_name(short, real) == (pid, None), short


def test_navigation_targets_resolve_by_handle_and_name(real):
    handles = fixed_handles(real, "assistant")
    view = RoleView("assistant", np.zeros((2, 2, 3), np.uint8), handles=handles, visible=[])
    kind = "Navigate"
    for handle, eid in handles.items():
        for goal in (handle, real.name(eid)):
            action = {"type": kind, "navigation_goal": goal, "reason": "there"}
            if real.store == "home_furnishings":
                action.update(next_waypoint=handle, target_approach="area")
            text = json.dumps(
                {
                    "response": f"Let's go to {real.name(eid)}.",
                    "assistant_actions": [action],
                    "expected_user_action": {"name": "idle", "arguments": {}},
                }
            )
            out = parse_assistant_output(
                text, store=real.store, index=real, view=view, no_view=True
            )
            assert out.navigation_goal_id == eid, (goal, out.errors)
            assert not [e for e in out.errors if "discloses" in e], out.errors


def test_entity_names_in_responses_are_not_marker_disclosures(real):
    # Every fixed handle plus a full alphabet of product handles is "current".
    handles = dict(fixed_handles(real, "assistant")) | {chr(97 + i): "p" for i in range(26)}
    for entity in real.entities.values():
        for text in (
            f"I'd recommend the {entity.name}. It costs $3.99, a great choice.",
            f"Head over to the {entity.name}; the item is there.",
            f"Walk to the doorway of {entity.name}, just outside.",
        ):
            assert find_marker_disclosures(text, handles=handles, index=real) == [], text


def test_caption_style_handle_is_flagged(real):
    handles = fixed_handles(real, "assistant")
    handle = next(iter(handles))
    text = f"It is the one marked [{handle}] on your screen."
    assert find_marker_disclosures(text, handles=handles, index=real) == [f"[{handle}]"]


def test_visible_recommendation_with_real_view(real):
    pid, product = next(iter(real.products.items()))
    handles = {"a": pid}
    view = RoleView(
        "assistant",
        np.zeros((2, 2, 3), np.uint8),
        handles=handles,
        visible=[VisibleEntity("a", pid, "product", product.name, 1.5, 300)],
    )
    item_tool = "pick_up_item" if real.store == "supermarket" else "check_item"
    text = json.dumps(
        {
            "response": f"Have a look at the {product.name}.",
            "assistant_actions": [
                {
                    "type": "Recommend",
                    "display_name": product.name,
                    "visible_now": True,
                    "reason": "fits",
                }
            ],
            "expected_user_action": {"name": item_tool, "arguments": {"item": "a"}},
            "ranking": [pid],
        }
    )
    out = parse_assistant_output(text, store=real.store, index=real, view=view)
    assert out.errors == [] and out.warnings == []
    assert (out.recommended_id, out.expected_target_id, out.ranking) == (pid, pid, [pid])
