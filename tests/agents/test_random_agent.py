"""RandomAssistant: parses the observation text, emits valid-format seeded turns."""

from __future__ import annotations

import json

import pytest

from agents.random_agent import RandomAssistant
from agents.registry import make_agent, resolve_agent
from situ_gym.actions.assistant import ACTION_TYPES, REQUIRED_FIELDS
from situ_gym.actions.tools import LEGAL_TOOLS, TARGET_ARGUMENT

CATALOG = """Catalog (id | name | category | price | location | attributes):
sm_p001 | Harbor Catch Plain Frozen Cod Fillets, 1 lb | frozen fish | $9.99 | Upright Freezer 2 (front) | allergen:fish
sm_p002 | Sunny Oats, 500 g | cereal | $3.49 | Shelf 4 (back) | diet:vegan
sm_p003 | Crisp Apples | fruit | $2.00 | Produce Stand 1 | diet:vegan
Navigation targets (handle | name | kind | position | approach):
[3] Upright Freezer 2 | upright_freezer | (12.0, 4.5) | nearest, front
[4] Shelf 4 | shelf | (2.0, 4.5) | nearest, front, back"""

VISIBLE = """Visible products:
[a] Harbor Catch Plain Frozen Cod Fillets, 1 lb (2.3 m)
[b] Sunny Oats, 500 g (4.0 m)
Visible fixtures:
[3] Upright Freezer 2 (approach: nearest, front)
Holding: nothing
Cart: empty"""

OBS = {"catalog": CATALOG, "visible": VISIBLE, "history": ""}


def _turns(seed, n=40):
    agent = RandomAssistant()
    agent.reset(OBS, {"store": "supermarket"}, seed=seed)
    return [agent.act(OBS) for _ in range(n)]


def test_turns_are_valid_format_and_use_only_visible_targets():
    seen_types = set()
    for text in _turns(0, 200):
        out = json.loads(text)
        action = out["assistant_actions"][0]
        assert action["type"] in ACTION_TYPES
        seen_types.add(action["type"])
        for req in REQUIRED_FIELDS["supermarket"].get(action["type"], ()):
            assert req in action
        if action["type"] == "Navigate":
            assert action["navigation_goal"] in {"3", "4"}
        exp = out["expected_user_action"]
        assert exp["name"] in LEGAL_TOOLS["supermarket"]
        target = TARGET_ARGUMENT.get(exp["name"])
        if target == "item":
            assert exp["arguments"]["item"] in {"a", "b"}
        if target == "fixture":
            assert exp["arguments"]["fixture"] == "3"  # the only visible fixture
        ranking = out["ranking"]
        assert sorted(ranking) == ["sm_p001", "sm_p002", "sm_p003"]  # all three, no repeats
    assert seen_types == set(ACTION_TYPES)  # uniform over 200 turns covers all ten


def test_seeded_and_seed_sensitive():
    assert _turns(7) == _turns(7)
    assert _turns(7) != _turns(8)


def test_home_navigate_has_waypoint_and_approach():
    catalog = """Catalog (id | name | category | price | location | attributes):
hf_p001 | Oak Lamp | table lamp | $49.00 | Light Logic / Reading Nook | style:modern
Navigation targets (handle | name | kind | position | approach):
[2] Light Logic | store | (30.0, 18.0) | outside_doorway, inside_doorway
[2a] Reading Nook | area of Light Logic | (31.5, 20.0) | area"""
    visible = "Visible stores:\n[2] Light Logic (approach: outside_doorway, inside_doorway)\nHolding: nothing\nCart: empty"
    obs = {"catalog": catalog, "visible": visible}
    agent = RandomAssistant()
    agent.reset(obs, {}, seed=1)  # the store is inferred from the catalog
    assert agent.store == "home_furnishings"
    navs = [json.loads(agent.act(obs))["assistant_actions"][0] for _ in range(100)]
    navs = [a for a in navs if a["type"] == "Navigate"]
    assert navs and all(a["next_waypoint"] == "2" for a in navs)
    assert all(a["target_approach"] in {"outside_doorway", "inside_doorway", "area"} for a in navs)


def test_registry():
    assert resolve_agent("random") is RandomAssistant
    assert resolve_agent("agents.random_agent:RandomAssistant") is RandomAssistant
    assert isinstance(make_agent("random"), RandomAssistant)
    with pytest.raises(ValueError, match="random"):
        resolve_agent("nope")
    with pytest.raises(ValueError, match="not an agents.base.Assistant"):
        resolve_agent("json:dumps")
    with pytest.raises(ValueError, match="needs a model"):
        make_agent("hf")


@pytest.mark.parametrize("store", ["supermarket", "home_furnishings"])
def test_every_turn_passes_the_env_parser(store):
    """Observation text rendered by the real formatters for a tiny scene; every one of 200
    random turns must parse and validate without errors."""
    import numpy as np

    from situ_gym.actions.parse import parse_assistant_output
    from situ_gym.scene.index import SceneIndex
    from situ_gym.som import caption, fixed_handles
    from situ_gym.som.types import RoleView, VisibleEntity
    from situ_gym.text import catalog_text, nav_targets_text
    from tests.world import records_home, records_market

    scene = records_market() if store == "supermarket" else records_home()
    seen = [("a", "product"), ("b", "product"), ("fx1", "fixture")] if store == "supermarket" else [
        ("p1", "product"), ("st1", "store"), ("ar1", "area")]
    index = SceneIndex(scene)
    fixed = fixed_handles(index, "assistant")
    by_id = {eid: h for h, eid in fixed.items()}
    handles, entities = dict(fixed), []
    for i, (eid, kind) in enumerate(seen):
        h = "abc"[i] if kind == "product" else by_id[eid]
        handles[h] = eid
        entities.append(VisibleEntity(h, eid, kind, index.name(eid), 2.0, 100))
    view = RoleView("assistant", np.zeros((8, 8, 3), np.uint8), handles, entities)
    obs = {"catalog": catalog_text(index) + "\n" + nav_targets_text(index, fixed),
           "visible": caption(view, index)}
    agent = RandomAssistant()
    agent.reset(obs, {"store": store}, seed=3)
    for _ in range(200):
        out = parse_assistant_output(agent.act(obs), store=store, index=index, view=view)
        assert out.valid, out.errors
