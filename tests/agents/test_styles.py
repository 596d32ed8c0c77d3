"""Style assistants (agents/styles.py): the heuristic's turns in another register, same meaning."""

from __future__ import annotations

import json
import re

import gymnasium as gym
import pytest

import situ_gym
from agents.base import agent_info
from agents.heuristic import HeuristicAssistant
from agents.obs_text import parse_catalog, parse_nav_targets
from agents.paraphrase import mentioned
from agents.registry import make_agent
from agents.styles import (
    MAX_CHAT_WORDS,
    ChatStyleAssistant,
    ClippedStyleAssistant,
    NonNativeStyleAssistant,
    StyleAssistant,
    clipped_name,
    split_frames,
)

SMALL = (160, 120)  # the assistants read the caption text only; a small view keeps rendering cheap
STRUCTURED = ("assistant_actions", "expected_user_action", "ranking")
TASKS = (2, 3, 63)  # bank positions: recommendations, a comparison, a rejection, a doubtful product, long routes
STYLES = (ChatStyleAssistant, ClippedStyleAssistant, NonNativeStyleAssistant)
_PRICE = re.compile(r"\$(\d[\d,]*(?:\.\d+)?)")
_MARKDOWN = re.compile(r"\*\*[^*\n]+\*\*|^(?:- |\d+\. )", re.M)


@pytest.fixture(scope="module", params=situ_gym.ENV_IDS)
def env(request):
    return gym.make(request.param, image_size=SMALL)


def side_by_side(env, agent: StyleAssistant, task_id: str, seed: int = 0):
    """(styled output, a separate heuristic's output for the same observation, TurnRecord) per turn."""
    obs, info = env.reset(seed=seed, options={"task_id": task_id})
    heuristic = HeuristicAssistant()
    agent.reset(obs, agent_info(info), seed=seed)
    heuristic.reset(obs, agent_info(info), seed=seed)
    turns, done = [], False
    while not done:
        styled, theirs = agent.act(obs), json.loads(heuristic.act(obs))
        assert agent.last_heuristic == theirs  # the wrapped heuristic saw what a separate one sees
        obs, _, terminated, truncated, info = env.step(styled)
        turns.append((json.loads(styled), theirs, info["turn"]))
        done = terminated or truncated
    return turns


def _places(obs) -> list[str]:
    targets = parse_nav_targets(obs["catalog"])
    return sorted({t.name for t in targets} | {t.name.split(":", 1)[0].strip() for t in targets})


@pytest.fixture(scope="module")
def played(env):
    """{style class: [(styled, heuristic, turn), ...]} over TASKS, seed 0."""
    return {cls: [t for i in TASKS for t in side_by_side(env, cls(), env.unwrapped.task_ids[i])] for cls in STYLES}


@pytest.mark.parametrize("cls", STYLES, ids=lambda c: c.name)
def test_annotations_are_the_heuristics_and_facts_survive(env, played, cls):
    obs, _ = env.reset(seed=0)
    products, places = [p.name for p in parse_catalog(obs["catalog"])], _places(obs)
    kinds = set()
    for styled, theirs, turn in played[cls]:
        assert turn.assistant_valid, (turn.turn, turn.assistant_errors)
        for key in STRUCTURED:
            assert styled[key] == theirs[key], key
        kinds.add(theirs["assistant_actions"][0]["type"])
        said, original = styled["response"], theirs["response"]
        clipped = cls is ClippedStyleAssistant
        for name in mentioned(original, products):
            assert (clipped_name(name) if clipped else name) in said, (name, said)
        rest = original
        for name in mentioned(original, products):
            rest = rest.replace(name, " ")
        for place in mentioned(rest, places):
            assert (place.lower() if clipped else place) in said, (place, said)
        for amount in _PRICE.findall(original):
            assert re.search(r"(?<![\d.])" + re.escape(amount) + r"(?![\d])", said), (amount, said)
        for word in ("left", "right"):
            if re.search(rf"\b{word}\b", original):
                assert re.search(rf"\b{word}\b", said), (word, said)
        for angle in re.findall(r"(\d+) degrees", original):
            assert re.search(rf"\b{angle} degrees", said), (angle, said)
        if "?" in original:
            assert "?" in said, (original, said)
    assert {"Greet", "Navigate", "Recommend", "Explain"} <= kinds


def test_chat_style_markers(played):
    turns = played[ChatStyleAssistant]
    for styled, theirs, _ in turns:
        said = styled["response"]
        assert _MARKDOWN.search(said), said
        assert len(said.split()) <= MAX_CHAT_WORDS, said
        assert said != theirs["response"]
    said = [s["response"] for s, _, _ in turns]
    assert any(re.search(r"^- ", s, re.M) for s in said)  # bullet facts
    assert any(re.search(r"^1\. .*\n2\. ", s, re.M) for s in said)  # numbered options (a comparison)
    for s, theirs, _ in turns:  # bold product names
        if theirs["assistant_actions"][0]["type"] == "Recommend":
            assert f"**{theirs['assistant_actions'][0]['display_name']}**" in s["response"]


def test_clipped_style_markers(env, played):
    obs, _ = env.reset(seed=0)
    names = sorted([clipped_name(p.name) for p in parse_catalog(obs["catalog"])]
                   + [p.lower() for p in _places(obs)], key=len, reverse=True)
    turns = played[ClippedStyleAssistant]
    for styled, theirs, _ in turns:
        said = styled["response"]
        assert not any(c.isupper() for c in said), said
        words = said
        for name in names:  # ("the plant" is a store's name)
            words = words.replace(name, " ")
        assert not re.search(r"\b(?:the|an)\b", words), said
        assert len(said.split()) < len(theirs["response"].split()) + 3, (theirs["response"], said)
    said = " ".join(s["response"] for s, _, _ in turns)
    assert "rec: " in said and "?" in said
    # prices sometimes without "$"
    assert re.search(r"(?<![$\d.])\d+\.\d\d\b", said)


def test_nonnative_style_markers(played):
    turns = played[NonNativeStyleAssistant]
    for styled, theirs, _ in turns:
        assert styled["response"] != theirs["response"]
    said = " ".join(s["response"] for s, _, _ in turns)
    assert re.search(r"\btry turning (?:left|right)\b", said, re.I) or "Keep going" in said
    assert re.search(r"\d dollars\b", said)  # prices sometimes as "4.69 dollars"


@pytest.mark.parametrize("cls", STYLES, ids=lambda c: c.name)
def test_deterministic_under_seed(env, cls):
    task_id = env.unwrapped.task_ids[TASKS[0]]
    a = [json.dumps(s) for s, _, _ in side_by_side(env, cls(), task_id, seed=1)]
    b = [json.dumps(s) for s, _, _ in side_by_side(env, cls(), task_id, seed=1)]
    assert a == b
    c = [json.dumps(s) for s, _, _ in side_by_side(env, cls(), task_id, seed=2)]
    assert c != a


def test_clipped_name_identifies_the_product(env):
    obs, _ = env.reset(seed=0)
    names = [p.name.lower() for p in parse_catalog(obs["catalog"])]
    for name in names:
        short = clipped_name(name)
        assert len(short.split()) >= 2
        assert [n for n in names if short in n] == [name], short


def test_sentence_forms():
    agent = ClippedStyleAssistant()
    agent.products = {"Campo Verde Gluten Free Penne, 32 oz": None, "Campo Verde Chickpea Rotini, 32 oz": None}
    agent.places = ["Open Cooler 1", "Shelf 3"]
    text = ("Compared with the Campo Verde Chickpea Rotini, 32 oz, which costs more, the Campo Verde Gluten Free "
            "Penne, 32 oz suits you better since it offers gluten-free, vegan. As a next step: Walk over to the "
            "nearest side of Shelf 3; Open Cooler 1 is beyond it. Something new at $3.50.")
    masked, table = agent.mask(text)
    assert sorted(table.values()) == ["$3.50", "Campo Verde Chickpea Rotini, 32 oz",
                                      "Campo Verde Gluten Free Penne, 32 oz", "Open Cooler 1", "Shelf 3"]
    assert [k for k, _ in split_frames(masked)] == ["compare", "next", "hop_fixture", "other"]


def test_registered_by_name():
    for name, cls in (("style-chat", ChatStyleAssistant), ("style-clipped", ClippedStyleAssistant),
                      ("style-nonnative", NonNativeStyleAssistant)):
        agent = make_agent(name)
        assert type(agent) is cls and agent.name == name
