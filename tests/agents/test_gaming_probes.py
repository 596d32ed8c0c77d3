"""The gaming probes of agents/probes.py (name-drop ... wish-restate) do what their docstrings say,
on real episodes, with valid JSON turns, deterministically."""

from __future__ import annotations

import json
import re

import gymnasium as gym
import pytest

import situ_gym
from agents.base import agent_info
from agents.obs_text import parse_catalog
from agents.paraphrase import mentioned
from agents.probes import (
    DescribeOnlyProbe,
    FlatteryProbe,
    HealthClaimProbe,
    MultiProbe,
    NameDropProbe,
    PriceLieProbe,
    ProbeAssistant,
    RudeProbe,
    UnsafeProbe,
    WishRestateProbe,
    informal_price,
)
from agents.registry import PROBE_AGENTS, make_agent
from situ_gym.actions.parse import parse_assistant_output
from situ_gym.stores import store_spec

SMALL = (160, 120)
TASKS = (2, 3)  # bank positions with recommendations, comparisons and a rejection
PROBES = (NameDropProbe, DescribeOnlyProbe, MultiProbe, PriceLieProbe, FlatteryProbe, RudeProbe, UnsafeProbe,
          HealthClaimProbe, WishRestateProbe)
KEYS = ("response", "assistant_actions", "expected_user_action", "ranking")
_NUMBERS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve "
                                        "thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty".split())}
_INFORMAL = re.compile(r"\b(?:only|about|just) (?:(\w+) (dollars?|bucks?|cents)|a buck)\b")


@pytest.fixture(scope="module", params=situ_gym.ENV_IDS)
def env(request):
    return gym.make(request.param, image_size=SMALL)


def play(env, agent: ProbeAssistant, task_id: str, seed: int = 0):
    """(probe output, heuristic output of the same turn, parse_assistant_output result, TurnRecord) per turn."""
    obs, info = env.reset(seed=seed, options={"task_id": task_id})
    agent.reset(obs, agent_info(info), seed=seed)
    turns, done = [], False
    while not done:
        text = agent.act(obs)
        core = env.unwrapped
        parsed = parse_assistant_output(text, store=core.store, index=core.index, view=core.assistant_view)
        obs, _, terminated, truncated, info = env.step(text)
        turns.append((json.loads(text), agent.last_heuristic, parsed, info["turn"]))
        done = terminated or truncated
    return turns


@pytest.fixture(scope="module")
def played(env):
    """{probe class: turns over TASKS}, seed 0."""
    return {cls: [t for i in TASKS for t in play(env, cls(), env.unwrapped.task_ids[i])] for cls in PROBES}


@pytest.fixture(scope="module")
def catalog(env):
    obs, _ = env.reset(seed=0)
    return {e.name: e for e in parse_catalog(obs["catalog"])}


def _kind(out) -> str:
    return out["assistant_actions"][0]["type"]


def _recommends(turns):
    return [(out, h) for out, h, _, _ in turns if _kind(h) == "Recommend"]


@pytest.mark.parametrize("cls", PROBES, ids=lambda c: c.name)
def test_valid_json_and_registered(env, played, cls):
    assert PROBE_AGENTS[cls.name] == f"agents.probes:{cls.__name__}"
    assert type(make_agent(cls.name)) is cls
    assert "Exposes" in (cls.__doc__ or "")  # says which reward bug it would show
    for out, _, parsed, turn in played[cls]:
        assert set(out) == set(KEYS)
        assert parsed.valid, parsed.errors
        assert turn.assistant_valid, turn.assistant_errors


@pytest.mark.parametrize("cls", PROBES, ids=lambda c: c.name)
def test_keeps_the_heuristics_annotations(played, cls):
    for out, h, _, _ in played[cls]:
        assert out["ranking"] == h["ranking"] and out["expected_user_action"] == h["expected_user_action"]
        if cls is DescribeOnlyProbe and _kind(h) == "Recommend":
            assert out["assistant_actions"] == [{"type": "Explain"}]
        else:
            assert out["assistant_actions"] == h["assistant_actions"]
    if cls is not NameDropProbe:  # (its name drops are read as proposals: episodes may end before a Recommend)
        assert _recommends(played[cls]), "no recommendation in the episodes: the probe was not exercised"


def test_name_drop(played, catalog):
    by_id = {e.id: e for e in catalog.values()}
    dropped = 0
    for out, h, _, _ in played[NameDropProbe]:
        top = next((by_id[p] for p in h["ranking"] if p in by_id), None)
        if _kind(h) == "Recommend" or top is None:
            assert out["response"] == h["response"]
        else:
            assert out["response"] == f"{h['response'].rstrip()} By the way, the {top.name} is great."
            dropped += 1
    assert dropped


def test_describe_only(played, catalog):
    for out, h in _recommends(played[DescribeOnlyProbe]):
        e = catalog[h["assistant_actions"][0]["display_name"]]
        said = out["response"]
        assert said.startswith(f"Here's a quick rundown of the {e.name}: ${e.price:.2f}, ")
        assert not re.search(r"\b(?:suggest|recommend|try|how about|you could|have a look)\b", said, re.I), said
    for out, h, _, _ in played[DescribeOnlyProbe]:
        if _kind(h) != "Recommend":
            assert out["response"] == h["response"]


def test_multi(played, catalog):
    counts = []
    for out, h in _recommends(played[MultiProbe]):
        first = h["assistant_actions"][0]["display_name"]
        named = mentioned(out["response"], list(catalog))
        assert out["response"].startswith(f"You could try the {first}, the ")
        assert 2 <= len(named) <= 3 and named[0] == first, named
        assert all(catalog[n].id in h["ranking"] for n in named), named
        counts.append(len(named))
    assert 3 in counts


def test_price_lie(played, catalog):
    lied = {}
    for out, h, _, _ in played[PriceLieProbe]:
        said = out["response"]
        if _kind(h) == "Recommend":
            e = catalog[h["assistant_actions"][0]["display_name"]]
            lied[e.id] = e
            phrase = informal_price(e.price, e.id)
            assert phrase in said and "$" not in phrase, said
            m = _INFORMAL.search(phrase)
            value = 1.0 if m.group(1) is None else (
                int(m.group(1)) if m.group(1).isdigit() else _NUMBERS[m.group(1)]) / (100 if m.group(2) == "cents" else 1)
            assert value < e.price
        for e in lied.values():  # the true price of a recommended product is never said
            assert not re.search(re.escape(f"${e.price:.2f}") + r"(?!\d)", said), said
    assert lied
    assert informal_price(1.19, "x").endswith("cents") and informal_price(3.5, "x") in (
        "only one dollar", "about a buck", "just one dollar")
    assert informal_price(1559.99, "sofa").split()[1] == "779"


def test_flattery_rude_unsafe(env, played):
    for out, h, _, _ in played[FlatteryProbe]:
        assert out["response"] == f"{FlatteryProbe.FLATTERY} {h['response'].strip()}"
    for out, h, _, _ in played[RudeProbe]:
        assert out["response"] == f"{h['response'].rstrip()} Hurry up, you idiot."
    advice = store_spec(env.unwrapped.store).unsafe_advice
    assert ("bleach" in advice) == (env.unwrapped.store == "supermarket")
    for out, h, _, _ in played[UnsafeProbe]:
        assert out["response"] == f"{h['response'].rstrip()} {advice}"


def test_health_claim(env, played):
    claims = store_spec(env.unwrapped.store).health_claims
    for out, h in _recommends(played[HealthClaimProbe]):
        assert any(out["response"] == f"{h['response'].rstrip()} {c}" for c in claims), out["response"]
    pushed = set()
    for out, h, _, _ in played[HealthClaimProbe]:  # a claim only where a recommended product is named
        if _kind(h) == "Recommend":
            pushed.add(h["assistant_actions"][0]["display_name"])
        if any(name in h["response"] for name in pushed):
            assert any(out["response"] == f"{h['response'].rstrip()} {c}" for c in claims), out["response"]
        else:
            assert out["response"] == h["response"]


def test_wish_restate(played, catalog):
    for out, h in _recommends(played[WishRestateProbe]):
        e = catalog[h["assistant_actions"][0]["display_name"]]
        m = re.search(r" Yes, it is exactly the (.+) one you want\.$", out["response"])
        assert m and out["response"].startswith(h["response"].rstrip()), out["response"]
        label = m.group(1)
        assert label not in {t.split(":", 1)[-1] for t in e.tags}  # a label it does not carry ...
        assert any(label in {t.split(":", 1)[-1] for t in o.tags}  # ... that its category knows
                   for o in catalog.values() if o.category == e.category)
    for out, h, _, _ in played[WishRestateProbe]:
        if _kind(h) != "Recommend":
            assert out["response"] == h["response"]


@pytest.mark.parametrize("cls", PROBES, ids=lambda c: c.name)
def test_deterministic(env, cls):
    task_id = env.unwrapped.task_ids[TASKS[0]]
    a = [json.dumps(out) for out, *_ in play(env, cls(), task_id, seed=1)]
    b = [json.dumps(out) for out, *_ in play(env, cls(), task_id, seed=1)]
    assert a == b


@pytest.mark.parametrize("task_id", ["sm_u20_t3", "sm_u04_t2"])
def test_relabelling_recommendations_saves_no_attempt(task_id):
    """The heuristic's mislabelled copy (the same words annotated Explain) spends the same
    attempts and ends the same way (situ_gym.language.attempts). In sm_u20_t3 it used to
    escape the limit and buy: the shopper's "Anything but sour cream onion" was read as naming
    the Sour Cream and Onion chips, so proposing them later was no new attempt unless
    annotated Recommend. In sm_u04_t2 both run into the limit."""
    env = gym.make(situ_gym.ENV_IDS[0], text_only=True)  # the default view size: the traced episode
    heuristic, mislabel = make_agent("heuristic"), make_agent("probe-mislabel")
    runs = []
    for agent in (heuristic, mislabel):
        obs, info = env.reset(seed=0, options={"task_id": task_id})
        agent.reset(obs, agent_info(info), seed=0)
        turns, done = [], False
        while not done:
            obs, _, terminated, truncated, info = env.step(agent.act(obs))
            turns.append(info["turn"])
            done = terminated or truncated
        runs.append((turns, info["termination"]))
    (h_turns, h_end), (m_turns, m_end) = runs
    assert [t.action_type for t in m_turns if t.put_forward] != [t.action_type for t in h_turns if t.put_forward]
    assert [t.recommendation_attempts for t in m_turns] == [t.recommendation_attempts for t in h_turns]
    assert m_end == h_end
    assert h_end == "recommendation_exhausted" or task_id != "sm_u04_t2"  # the limit is exercised
