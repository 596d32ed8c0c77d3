"""The App. D.4 ablations from the assistant's side, under both protocols.

"w/o EVV" (``no_ego_view``): no first-person image, the textual caption kept; "w/o EVV &
Textual Caption" (``no_ego_view_no_caption``): neither, a static index of the fixed handles
instead, a prompt without the current-view handle requirement that allows a pickup
suggestion without a product identifier. Assistants learn the condition from
``agent_info(info)`` at reset. Checked here: the prompt of each condition (the unablated
one byte for byte as before), that no request carries the view under an ablation (the map
still goes, as the paper keeps it), that the baselines play valid turns in every
condition, and that turns written to the relaxed prompt parse as valid.
"""

from __future__ import annotations

import hashlib
import json

import gymnasium as gym
import jsonschema
import numpy as np
import pytest

import situ_gym  # noqa: F401 - registers the envs
from agents.base import agent_info
from agents.chat_agent import ChatAssistant, assistant_schema
from agents.heuristic import HeuristicAssistant
from agents.obs_text import parse_catalog, parse_nav_targets
from agents.plain import PlainAssistant
from agents.prompting import _rules, render_messages, state_text, system_prompt, turn_text
from eval.runner import EpisodeSpec, play_batch
from situ_gym.protocol import PROTOCOLS
from tests.llm.scripted import ScriptedBackend

ENV = "SituRec-Supermarket-v0"
HOME = "SituRec-HomeFurnishings-v0"
ABLATIONS = ("no_ego_view", "no_ego_view_no_caption")
CONDITIONS = [(a, p) for a in ABLATIONS for p in PROTOCOLS]
SIZE = (160, 120)  # small frames: the image path is the same
GREET = json.dumps({"response": "Hi! What are you shopping for today?", "assistant_actions": [{"type": "Greet"}],
                    "expected_user_action": {"name": "idle", "arguments": {}}, "ranking": []})


def _env(env_id=ENV, ablation=None, protocol="default", **kwargs):
    env = gym.make(env_id, image_size=SIZE, ablation=ablation, protocol=protocol, **kwargs)
    obs, info = env.reset(seed=0)
    return env, obs, info


# ---------------------------------------------------------------------- prompt text

# sha256 of the rules before ablations existed (store, compact): the unablated prompt is pinned.
UNABLATED_RULES = {
    ("supermarket", False): "faba22a477754676",
    ("supermarket", True): "1cb75959d3e67a57",
    ("home_furnishings", False): "44b90da5d5b4e243",
    ("home_furnishings", True): "c1f97d9e4791998b",
}


@pytest.mark.parametrize(("store", "compact"), list(UNABLATED_RULES))
def test_the_unablated_rules_are_byte_identical_to_before(store, compact):
    rules = _rules(store, 8 if compact else 10, compact)
    assert hashlib.sha256(rules.encode()).hexdigest()[:16] == UNABLATED_RULES[(store, compact)]
    assert _rules(store, 8 if compact else 10, compact, ablation=None) == rules


def test_no_ablation_keyword_changes_nothing():
    env, obs, info = _env()
    assert info["ablation"] is None
    assert render_messages(obs, "supermarket", ablation=None) == render_messages(obs, "supermarket")
    obs2 = env.step(GREET)[0]
    assert turn_text(obs2, obs["history"], {}, ablation=None) == turn_text(obs2, obs["history"], {})


@pytest.mark.parametrize("store", ["supermarket", "home_furnishings"])
def test_no_ego_view_prompt_says_there_is_no_image_and_to_rely_on_the_caption(store):
    full, rules = system_prompt(store, "Catalog:"), system_prompt(store, "Catalog:", ablation="no_ego_view")
    assert "share the shopper's first-person view" in full and "share the shopper's first-person view" not in rules
    assert "no image of the shopper's first-person view: rely on its textual caption" in rules
    assert "product letters ([a], [b], ...) the caption lists now" in rules
    assert "must be listed in the caption now (or the held product)" in rules


@pytest.mark.parametrize("store", ["supermarket", "home_furnishings"])
def test_no_caption_prompt_drops_the_current_view_requirement_and_allows_item_less_pickup(store):
    rules = system_prompt(store, "Catalog:", ablation="no_ego_view_no_caption")
    # What the full prompt requires is gone ...
    for gone in ("of the current view", "must be visible now", "share the shopper's first-person view",
                 "visible_now is true only if", "handle visible NOW"):
        assert gone not in rules
    # ... and what D.4 allows is said.
    inspect = "pick_up_item" if store == "supermarket" else "check_item"
    assert "neither as an image nor as a caption" in rules
    assert "as the navigation index lists them; every one is valid, in view or not" in rules
    assert "may be any handle of the navigation index" in rules
    assert f'{inspect} may leave item out ("arguments": {{}})' in rules
    assert "write its catalog name as item" in rules
    assert "visible_now is false, since you cannot see the view" in rules
    if store == "home_furnishings":
        assert "next_waypoint (a store or area handle of the navigation index" in rules


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_no_caption_turns_do_not_repeat_the_static_index(protocol):
    env, obs, info = _env(ablation="no_ego_view_no_caption", protocol=protocol)
    assert obs["visible"].startswith("Navigation targets (")  # the env's no-caption text
    messages = render_messages(obs, "supermarket", ablation=info["ablation"])
    index = obs["visible"].split("\nHolding:")[0]
    assert index in messages[0]["content"]  # the system message holds the index once
    user = messages[1]["content"]
    assert "Navigation targets" not in user and not parse_nav_targets(user)
    assert "No view of the store" in user and "Holding: nothing" in user and "Cart: empty" in user
    assert "Current view" not in state_text(obs, {}, ablation=info["ablation"])


def test_an_unknown_ablation_is_refused():
    with pytest.raises(ValueError, match="ablation must be one of"):
        system_prompt("supermarket", "Catalog:", ablation="no_map")


# ---------------------------------------------------------------------- no image in requests

def _image_parts(request) -> list[np.ndarray]:
    return [p["image"] for m in request.messages if isinstance(m["content"], list) for p in m["content"]
            if p["type"] == "image"]


def _chat_requests(ablation, protocol):
    backend = ScriptedBackend(lambda request, call: GREET)
    agent = ChatAssistant(backend, images=True)
    env, obs, info = _env(ablation=ablation, protocol=protocol)
    agent.reset(obs, agent_info(info), seed=0)
    agent.act(obs)
    obs2 = env.step(GREET)[0]
    agent.act(obs2)
    env.close()
    return [r for batch in backend.batches for r in batch], [obs, obs2]


@pytest.mark.parametrize(("ablation", "protocol"), CONDITIONS)
def test_chat_requests_carry_no_view_under_an_ablation(ablation, protocol):
    requests, observations = _chat_requests(ablation, protocol)
    assert len(requests) == 2
    for request, obs in zip(requests, observations, strict=True):
        images = _image_parts(request)
        # The map alone: the paper keeps the map and pose in both ablations (D.4).
        assert len(images) == 1 and np.array_equal(images[0], obs["map"])
        assert ("som_rgb" in obs) == (protocol == "default")
        assert request.messages[0]["content"] == system_prompt("supermarket", obs["catalog"], ablation=ablation)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_chat_requests_carry_the_view_without_ablation(protocol):
    requests, observations = _chat_requests(None, protocol)
    for request, obs in zip(requests, observations, strict=True):
        images = _image_parts(request)
        assert len(images) == 2 and np.array_equal(images[0], obs["som_rgb"]) and obs["som_rgb"].any()


@pytest.fixture(scope="module")
def vision_policy(tmp_path_factory):
    """The tiny in-process LLaVA (tests.llm.tiny_vision) as an HF policy; generate is spied."""
    from agents.hf_policy import HFPolicyAssistant
    from tests.llm.tiny_vision import build_tiny_vision_model

    folder = build_tiny_vision_model(tmp_path_factory.mktemp("vlm") / "model")
    agent = HFPolicyAssistant(str(folder), max_new_tokens=4, do_sample=False, device="cpu")
    assert agent.processor is not None  # the vision path
    calls: list[dict] = []
    generate = agent.model.generate

    def spy(**kwargs):
        calls.append(kwargs)
        return generate(**kwargs)

    agent.model.generate = spy
    return agent, calls


@pytest.mark.parametrize(("ablation", "protocol"), [(None, "default"), (None, "paper"), *CONDITIONS])
def test_hf_vision_policy_gets_pixels_only_without_ablation(vision_policy, ablation, protocol):
    agent, calls = vision_policy
    env, obs, info = _env(ablation=ablation, protocol=protocol)
    agent.reset(obs, agent_info(info), seed=0)
    n = len(calls)
    obs2 = env.step(agent.act(obs))[0]
    agent.act(obs2)  # a second turn: a growing conversation, still without an image
    image_token = agent.model.config.image_token_index
    for call in calls[n:]:
        sends_image = ablation is None
        assert ("pixel_values" in call) == sends_image
        assert bool((call["input_ids"] == image_token).any()) == sends_image
    system = agent._slots[0]["messages"][0]["content"]
    assert system == system_prompt("supermarket", obs["catalog"], ablation=ablation)
    env.close()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_saved_frames_skip_the_missing_view(tmp_path, protocol):
    from eval.rollout_worker import _save_frames

    env, obs, _ = _env(ablation="no_ego_view_no_caption", protocol=protocol)
    saved = _save_frames(tmp_path, "ep", 1, obs, env)
    # assistant view (the default's black frame), map, shopper view; the paper has no view to save
    assert len(saved) == (3 if protocol == "default" else 2)
    assert all((tmp_path / path).exists() for path in saved)
    env.close()


# ---------------------------------------------------------------------- baselines play valid turns

@pytest.mark.parametrize("agent_cls", [HeuristicAssistant, PlainAssistant], ids=["heuristic", "plain"])
@pytest.mark.parametrize(("ablation", "protocol"), CONDITIONS)
def test_baselines_complete_episodes_with_valid_turns(agent_cls, ablation, protocol):
    tasks = ["sm_u01_t1", "sm_u02_t1", "sm_u03_t1"]
    envs = [gym.make(ENV, image_size=SIZE, ablation=ablation, protocol=protocol) for _ in tasks]
    valid: list[bool] = []
    results = play_batch(envs, agent_cls(), [EpisodeSpec(t, 0) for t in tasks],
                         on_step=lambda i, text, obs, info, done: valid.append(info["turn"].assistant_valid))
    assert all(r.error is None and r.termination is not None for r in results), results
    assert len(valid) >= len(tasks) and sum(valid) / len(valid) >= 0.9, valid
    for env in envs:
        env.close()


# ---------------------------------------------------------------------- relaxed outputs parse

def _turn(action, expected):
    return {"response": "The cereal is on a shelf near the entrance; take a look there.",
            "assistant_actions": [action], "expected_user_action": expected, "ranking": []}


def _unseen(env, obs, store: bool = False):
    """A fixture (or a store) of the static index that the assistant does not see now."""
    view = env.unwrapped.assistant_view
    seen = {v.entity_id for v in view.visible}
    for t in parse_nav_targets(obs["catalog"]):
        wanted = t.kind == "store" if store else t.kind != "store" and not t.kind.startswith("area")
        if wanted and view.handles.get(t.handle) not in seen:
            return t
    raise AssertionError("every such target is in view")


def _step_valid(env, turn) -> tuple[bool, list[str], object]:
    info = env.step(json.dumps(turn))[4]
    return info["turn"].assistant_valid, info["turn"].assistant_errors, info["turn"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_supermarket_turns_following_the_no_caption_prompt_are_valid(protocol):
    env, obs, info = _env(ablation="no_ego_view_no_caption", protocol=protocol)
    product = parse_catalog(obs["catalog"])[0]
    shelf = _unseen(env, obs)
    schema = assistant_schema(obs, "supermarket", ablation=info["ablation"])
    turns = [
        # A Recommend the assistant cannot see, with an item-less pickup suggestion.
        _turn({"type": "Recommend", "display_name": product.name, "visible_now": False, "reason": "It fits."},
              {"name": "pick_up_item", "arguments": {}}),
        # A pickup named by the product's catalog name.
        _turn({"type": "Recommend", "display_name": product.name, "visible_now": False, "reason": "It fits."},
              {"name": "pick_up_item", "arguments": {"item": product.name}}),
        # The purchase prompt names the product too (no handle to give).
        _turn({"type": "ConfirmPurchase"}, {"name": "add_to_cart", "arguments": {"item": product.name}}),
        # A fixture from the static index that is not in view.
        _turn({"type": "Navigate", "navigation_goal": shelf.handle, "reason": "The cereal is there."},
              {"name": "move_to_fixture", "arguments": {"fixture": shelf.handle, "approach": shelf.approaches[0]}}),
    ]
    for turn in turns:
        jsonschema.validate(turn, schema)  # the chat schema offers what the prompt allows
        ok, errors, record = _step_valid(env, turn)
        assert ok, errors
    env.close()


def test_the_item_less_pickup_stays_invalid_when_the_caption_is_kept():
    env, obs, info = _env(ablation="no_ego_view", protocol="paper")
    turn = _turn({"type": "Greet"}, {"name": "pick_up_item", "arguments": {}})
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(turn, assistant_schema(obs, "supermarket", ablation=info["ablation"]))
    ok, errors, _ = _step_valid(env, turn)
    assert not ok and any("item" in e for e in errors)
    env.close()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_home_turns_following_the_no_caption_prompt_are_valid(protocol):
    env, obs, info = _env(HOME, ablation="no_ego_view_no_caption", protocol=protocol)
    store = _unseen(env, obs, store=True)
    schema = assistant_schema(obs, "home_furnishings", ablation=info["ablation"])
    turns = [
        _turn({"type": "Navigate", "navigation_goal": store.handle, "reason": "Lamps are sold there.",
               "next_waypoint": store.handle, "target_approach": "outside_doorway"},
              {"name": "move_to_store", "arguments": {"store": store.handle, "approach": "outside_doorway"}}),
        _turn({"type": "AskPreference"}, {"name": "check_item", "arguments": {}}),
    ]
    for turn in turns:
        jsonschema.validate(turn, schema)
        ok, errors, _ = _step_valid(env, turn)
        assert ok, errors
    env.close()
