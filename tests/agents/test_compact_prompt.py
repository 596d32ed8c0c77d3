"""The compact (retrieved-catalog) prompt: each entry once, compact captions, full view unchanged."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

import situ_gym  # noqa: F401  (registers the envs)
from agents.base import agent_info
from agents.obs_text import catalog_lines, parse_nav_targets
from agents.prompting import (
    Conversation,
    compact_caption,
    compact_entry,
    compact_index,
    is_compact,
    ranking_size,
    state_text,
    system_prompt,
    turn_text,
)
from agents.restricted import RestrictedHeuristic
from train.tiny import build_tiny_tokenizer, corpus

CAPTION = """Visible products:
[a] Sunny Fields Corn Flakes Cereal, 18 oz (5.0 m)
[b] Tropic Farms Yellow Bananas, bunch of 6 (6.7 m)
[c] Hillside Orchard Gala Apples, 3 lb bag (6.7 m)
Visible fixtures:
[1] Shelf 1: breakfast cereal, oatmeal, granola bars (approach: nearest, front, back)
[28] Produce Stand 1: apples, bananas, berries (approach: nearest, front)
Holding: nothing
Cart: empty"""


@pytest.fixture(scope="module")
def tokenizer():
    return build_tiny_tokenizer(corpus(), vocab_size=600)


def test_compact_caption_keeps_known_products_by_id_and_fixture_handles():
    text = compact_caption(CAPTION, {"Tropic Farms Yellow Bananas, bunch of 6": "sm_p9"})
    assert text.splitlines() == [
        "Visible products:",
        "[b] sm_p9 (6.7 m)",
        "(+2 others)",
        "Visible fixtures: [1] [28]",
    ]  # "Holding: nothing" and "Cart: empty" are the default the rules state once
    held = CAPTION.replace("Holding: nothing", "Holding: [b] Tropic Farms Yellow Bananas, bunch of 6")
    assert compact_caption(held, {"Tropic Farms Yellow Bananas, bunch of 6": "sm_p9"}).endswith("Holding: [b] sm_p9")


def _episode(tokenizer, view: str, turns: int = 6):
    env = gym.make("SituRec-Supermarket-v0", catalog_view=view, catalog_k=5)
    obs, info = env.reset(seed=0, options={"task_id": env.unwrapped.task_ids[0]})
    agent = RestrictedHeuristic()
    agent.reset(obs, agent_info(info), seed=0)
    conv = Conversation(tokenizer, "supermarket", obs)
    listed: set[str] = set(catalog_lines(obs["catalog"]))
    observations = [obs]
    for _ in range(turns):
        action = agent.act(obs)
        conv.add_model_tokens(tokenizer(action, add_special_tokens=False)["input_ids"])
        obs, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            break
        conv.add_observation(obs)
        listed |= set(catalog_lines(obs["catalog"]))
        observations.append(obs)
    env.close()
    return conv, listed, observations


def test_compact_conversation_holds_every_retrieved_entry_exactly_once(tokenizer):
    conv, listed, observations = _episode(tokenizer, "retrieved")
    assert all(is_compact(o) for o in observations)
    text = tokenizer.decode(conv.ids)
    assert listed, "the dialogue must retrieve some entries"
    lines = {}
    for o in observations:
        lines.update(catalog_lines(o["catalog"]))
    handles = {t.name: t.handle for t in parse_nav_targets(observations[0]["catalog"])}
    for pid, line in lines.items():
        assert text.count(compact_entry(line, handles)) == 1, pid
        assert text.count(f"\n{pid} | ") == 1, pid
    assert set(conv.shown_products) == listed
    # The assistant's words are in its own turns only, not echoed back in the env's turns.
    env_text = tokenizer.decode([t for t, m in zip(conv.completion_ids, conv.env_mask, strict=True) if m == 0])
    assert "Assistant: " not in env_text and "User: " in env_text


def test_full_view_turns_are_unchanged(tokenizer):
    conv, listed, observations = _episode(tokenizer, "full", turns=3)
    assert len(listed) == 233 and not is_compact(observations[0])
    text = tokenizer.decode(conv.completion_ids)
    assert "More catalog entries" not in text and "Assistant: " in text
    second = turn_text(observations[1], observations[0]["history"], conv.shown_products)
    assert second == turn_text(observations[1], observations[0]["history"])  # no entry is new


def test_an_unchanged_compact_view_is_not_repeated():
    obs = {
        "history": "User: I want bananas.",
        "catalog": "Catalog entries relevant to the dialogue so far, best first (at most 5) (id | ...):\n"
        "sm_p1 | Tropic Farms Yellow Bananas, bunch of 6 | bananas | $1.99 | Produce Stand 1 | organic:no",
        "visible": CAPTION,
        "pose": np.zeros(3, np.float32),
    }
    first = turn_text(obs, "", {})
    assert "[b] sm_p1 (6.7 m)" in first and "More catalog entries" in first
    assert "sm_p1 | Tropic Farms Yellow Bananas, bunch of 6 | bananas | $1.99 | Produce Stand 1 |" in first
    shown = {"sm_p1": "Tropic Farms Yellow Bananas, bunch of 6"}
    again = turn_text(obs, "User: I want bananas.", shown, state_text(obs, shown))
    assert "unchanged since the last turn" in again and "More catalog entries" not in again
    moved = dict(obs, pose=np.array([1.0, 0.0, 0.0], np.float32))
    assert "[b] sm_p1 (6.7 m)" in turn_text(moved, "User: I want bananas.", shown, state_text(obs, shown))


def test_compact_entry_gives_the_location_as_a_handle():
    line = "sm_p1 | Gala Apples, 3 lb bag | apples | $3.99 | Produce Stand 1: apples, bananas (front) | organic:no"
    handles = {"Produce Stand 1: apples, bananas": "28"}
    assert compact_entry(line, handles) == "sm_p1 | Gala Apples, 3 lb bag | apples | $3.99 | [28] (front) | organic:no"
    grouped = "sm_p2 | Oats | oatmeal | $2.99 | Shelf 1 | feature:whole grain; feature:quick; size:18 oz"
    assert compact_entry(grouped, {}).endswith("| Shelf 1 | feature:whole grain, quick; size:18 oz")
    home = "hf_p1 | Elio Lamp | table lamp | $75.99 | Light Logic / Light Logic - Lamps | color:amber"
    assert compact_entry(home, {"Light Logic": "3", "Light Logic - Lamps": "3b"}).endswith("| [3b] | color:amber")
    assert compact_entry(home, {}) == home  # unknown places stay as written


def test_chat_assistant_gets_the_same_compact_turns_as_the_conversation(tokenizer):
    from agents.chat_agent import ChatAssistant
    from tests.llm.scripted import ScriptedBackend

    ask = ('{"response": "What are you looking for today?", "assistant_actions": [{"type": "AskPreference"}], '
           '"expected_user_action": {"name": "idle", "arguments": {}}, "ranking": []}')
    backend = ScriptedBackend(lambda request, i: ask)
    agent = ChatAssistant(backend)
    env = gym.make("SituRec-Supermarket-v0", catalog_view="retrieved", catalog_k=5)
    obs, info = env.reset(seed=0, options={"task_id": env.unwrapped.task_ids[0]})
    agent.reset(obs, agent_info(info), seed=0)
    conv = Conversation(tokenizer, "supermarket", obs)
    conv.add_model_tokens(tokenizer(agent.act(obs), add_special_tokens=False)["input_ids"])
    for _ in range(4):
        obs, _, terminated, truncated, _ = env.step(ask)
        if terminated or truncated:
            break
        expected = conv.env_text(obs)
        conv.add_observation(obs)
        conv.add_model_tokens(tokenizer(agent.act(obs), add_special_tokens=False)["input_ids"])
        sent = [m for m in backend.batches[-1][0].messages if m["role"] == "user"][-1]["content"]
        assert sent in expected  # the chat template aside, the same user message
    assert conv.shown_products and "More catalog entries" in str(backend.batches[-1][0].messages)
    env.close()


@pytest.mark.parametrize("env_id", ["SituRec-Supermarket-v0", "SituRec-HomeFurnishings-v0"])
def test_compact_system_prompt_keeps_every_target_and_asks_for_k_ids(env_id):
    env = gym.make(env_id, catalog_view="retrieved", catalog_k=4)
    obs, _ = env.reset(seed=0)
    store = env.unwrapped.store
    env.close()
    text = system_prompt(store, obs["catalog"])
    assert ranking_size(obs["catalog"]) == 4 and "up to 4 catalog product ids" in text
    index = compact_index(obs["catalog"])
    assert index in text and "Navigation targets (handle | name" not in text
    targets = parse_nav_targets(obs["catalog"])
    assert targets
    for t in targets:  # every handle once, with its position, areas after their store
        assert index.count(f"[{t.handle}] ") == 1, t.handle
        assert f"[{t.handle}] " in index and f"({t.x:.1f}, {t.y:.1f})" in index
        if t.kind.startswith("area of "):
            store_line = next(line for line in index.splitlines() if line.startswith(f"[{t.handle.rstrip('abcdefgh')}] "))
            assert f"[{t.handle}] " in store_line
    full = gym.make(env_id)
    full_obs, _ = full.reset(seed=0)
    full.close()
    assert ranking_size(full_obs["catalog"]) == 10 and "up to 10 catalog product ids" in system_prompt(
        store, full_obs["catalog"])


def test_restricted_heuristic_ranks_as_many_ids_as_the_compact_view_retrieves():
    env = gym.make("SituRec-HomeFurnishings-v0", catalog_view="retrieved", catalog_k=3)
    obs, info = env.reset(seed=0, options={"task_id": env.unwrapped.task_ids[0]})
    agent = RestrictedHeuristic()
    agent.reset(obs, agent_info(info), seed=0)
    lengths = []
    for _ in range(8):
        action = agent.act(obs)
        lengths.append(len(json.loads(action)["ranking"]))
        obs, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            break
    env.close()
    assert max(lengths) == 3  # it knows more than three entries by then, and ranks three


def test_compact_index_groups_areas_under_their_store_and_keeps_orphans_whole():
    catalog = (
        "Catalog entries relevant to the dialogue so far, best first (at most 5) (id | ...):\n"
        "Navigation targets (handle | name | kind | position | approach):\n"
        "[1] Alpha | store | (1.0, 2.0) | outside_doorway, inside_doorway\n"
        "[1a] Alpha - Desks | area of Alpha | (1.5, 2.5) | area\n"
        "[2] Shelf 2: jam, tea | shelf | (3.0, 4.0) | nearest, front, back\n"
        "[9a] Ghost - Lamps | area of Ghost | (5.0, 6.0) | area"
    )
    assert compact_index(catalog).splitlines()[1:] == [
        "[1] Alpha (1.0, 2.0) areas: [1a] Desks (1.5, 2.5)",
        "[2] Shelf 2: jam, tea (3.0, 4.0) nearest/front/back",
        "[9a] Ghost - Lamps (5.0, 6.0)",
    ]
