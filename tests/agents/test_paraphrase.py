"""ParaphrasingAssistant: the heuristic's decisions and names, none of its wording."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import situ_gym
from agents.base import agent_info
from agents.obs_text import parse_catalog, parse_nav_targets
from agents.paraphrase import ParaphrasingAssistant, mentioned, shared_runs
from agents.plain_route import short_place
from agents.registry import make_agent
from tests.episodes import play

SMALL = (160, 120)  # the heuristic reads the caption text only; a small view keeps rendering cheap
STRUCTURED = ("assistant_actions", "expected_user_action", "ranking")


def names_of(obs) -> tuple[list[str], list[str]]:
    products = parse_catalog(obs["catalog"])
    targets = parse_nav_targets(obs["catalog"])
    places = {t.name for t in targets} | {short_place(t.name) for t in targets}
    places |= {t.name.split(" - ", 1)[-1] for t in targets if " - " in t.name}
    return [p.name for p in products], sorted(places), sorted({p.category for p in products})


@pytest.fixture(scope="module", params=situ_gym.ENV_IDS)
def env(request):
    return gym.make(request.param, image_size=SMALL)


def test_same_decisions_and_names_in_new_words(env):
    obs, _ = env.reset(seed=0)
    products, places, categories = names_of(obs)
    kinds = set()
    for task_id in env.unwrapped.task_ids[3:100:33]:
        agent = ParaphrasingAssistant()
        turns, _ = play(env, agent, task_id, note=lambda agent=agent: dict(agent.last_heuristic))
        for text, heuristic, turn in turns:
            assert turn.assistant_valid, (task_id, turn.turn, turn.assistant_errors)
            out = json.loads(text)
            kinds.add(out["assistant_actions"][0]["type"])
            for key in STRUCTURED:
                assert out[key] == heuristic[key]
            said, theirs = out["response"], heuristic["response"]
            for name in mentioned(theirs, products) + mentioned(theirs, places):
                assert name in said, (name, said)
            # names (and category words) count as one word each: they must stay, the rest must change
            assert not shared_runs(theirs, said, products + places + categories), (theirs, said)
    assert {"Greet", "Navigate", "Recommend"} <= kinds


def test_seeded_wording(env):
    task_id = env.unwrapped.task_ids[11]
    a = [t for t, _, _ in play(env, ParaphrasingAssistant(), task_id, seed=1)[0]]
    b = [t for t, _, _ in play(env, ParaphrasingAssistant(), task_id, seed=1)[0]]
    assert a == b
    c = [json.loads(t)["response"] for t, _, _ in play(env, ParaphrasingAssistant(), task_id, seed=2)[0]]
    assert c != [json.loads(t)["response"] for t in a]


def test_shared_runs_count_names_as_one_word():
    names = ["Glowbug Oslo String Lights, Warm White Copper Wire"]
    a = "I suggest the Glowbug Oslo String Lights, Warm White Copper Wire because it is festive."
    assert not shared_runs(a, "How about the Glowbug Oslo String Lights, Warm White Copper Wire? It's festive.", names)
    assert shared_runs(a, "Well, I suggest the Glowbug Oslo String Lights, Warm White Copper Wire because it is.", names)
    assert mentioned("Go past Shelf 2 to Shelf 12: tea.", ["Shelf 2", "Shelf 12: tea", "Shelf 12"]) == [
        "Shelf 2", "Shelf 12: tea"]


def test_registered_by_name():
    assert isinstance(make_agent("paraphrase"), ParaphrasingAssistant)


def test_heuristic_keeps_hearing_its_own_words(env):
    """Only the shopper hears the rewording: the wrapped heuristic's history shows its own lines."""
    agent = ParaphrasingAssistant()
    obs, info = env.reset(seed=0, options={"task_id": env.unwrapped.task_ids[0]})
    agent.reset(obs, agent_info(info), seed=0)
    heard, inner_act = [], agent.inner.act
    agent.inner.act = lambda o: heard.append(o["history"]) or inner_act(o)
    said = []
    for _ in range(3):
        text = agent.act(obs)
        said.append((json.loads(text)["response"], agent.last_heuristic["response"]))
        obs, *_ = env.step(text)
    agent.act(obs)
    for ours, theirs in said:
        assert f"Assistant: {ours}" in obs["history"]
        assert f"Assistant: {theirs}" in heard[-1] and f"Assistant: {ours}" not in heard[-1]
