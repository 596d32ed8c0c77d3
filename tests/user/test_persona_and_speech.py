"""Persona policy, trade-offs, and the shopper's language on real episodes."""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest

import situ_gym  # noqa: F401
from agents.heuristic import HeuristicAssistant
from agents.random_agent import RandomAssistant
from situ_gym.scene.loader import load_task_bank
from situ_gym.user.rule.decision import Decision, assess
from situ_gym.user.rule.persona import Persona
from situ_gym.user.rule.state import EpisodeState
from tests.world import shopper_market_task, shopper_profile


def _persona(task, **b5_and_settings):
    big_five = {k: b5_and_settings.pop(k) for k in list(b5_and_settings) if k in
                ("openness", "agreeableness", "neuroticism", "extraversion", "conscientiousness")}
    profile = shopper_profile(**b5_and_settings)
    profile = profile.model_copy(update={"big_five": {**profile.big_five, **big_five}})
    return Persona.of(profile, task)


def test_traits_set_patience_disclosure_and_acceptance():
    task = shopper_market_task()
    calm = _persona(task, agreeableness=0.9, neuroticism=0.1, extraversion=0.9, talkativeness="high")
    tense = _persona(task, agreeableness=0.1, neuroticism=0.9, extraversion=0.1, talkativeness="low")
    assert calm.patience == tense.patience + 2
    assert calm.answer_p > tense.answer_p and calm.volunteer_p > tense.volunteer_p
    assert calm.tradeoff_p > tense.tradeoff_p
    frugal = _persona(task, price_sensitivity="high")
    relaxed = _persona(task, price_sensitivity="low")
    assert frugal.budget_slack == 0.0 < relaxed.budget_slack


def test_hard_constraints_stay_hard_and_soft_misses_need_a_convincing_explanation():
    task = shopper_market_task(accept_substitutes=True).model_copy(update={"required_tags": ["prep:plain", "diet:high_protein"]})
    persona = _persona(task, openness=0.9, agreeableness=1.0, price_sensitivity="low")
    assert "diet:high_protein" in persona.soft_needs and "prep:plain" not in persona.soft_needs
    avoid = {"price": 5.0, "tags": ["prep:breaded", "prep:plain", "diet:high_protein"], "category": "frozen fish"}
    assert assess(avoid, task, persona).kind == "avoid"  # an avoided label is never traded off
    other = {"price": 5.0, "tags": ["prep:plain", "diet:high_protein"], "category": "cereal"}
    assert assess(other, task, persona).kind == "category"
    slightly_over = {"price": 10.5, "tags": ["prep:plain", "diet:high_protein"], "category": "frozen fish"}
    assert assess(slightly_over, task, persona).kind == "soft"  # within the 10% slack
    state = EpisodeState()
    decision = Decision(task, persona, state, np.random.default_rng(0))
    inspected = {"sm_p09": slightly_over}
    assert decision.decide("sm_p09", inspected)[0] == "hesitate"  # voices the price first
    assert decision.decide("sm_p09", inspected)[0] == "reject"  # no reason given: no
    state2 = EpisodeState(explained={"sm_p09": {"price", "budget"}})
    decision2 = Decision(task, persona, state2, np.random.default_rng(0))
    assert decision2.decide("sm_p09", inspected)[0] == "buy_tradeoff"  # tradeoff_p = 0.7, first draw
    strict = _persona(task, price_sensitivity="high")
    assert assess(slightly_over, task, strict).kind == "budget"


_DEFECTS = [
    (re.compile(r"\bthe (?:Shelf|Upright Freezer|Chest Freezer|Open Cooler|Produce Stand) \d"), "article before a numbered fixture"),
    (re.compile(r"\bthe The\b"), "doubled article"),
    (re.compile(r"\b(\w+)\. \1\b"), "doubled filler"),
    (re.compile(r"Please nothing|Important to me:"), "template-made disclosure"),
    (re.compile(r"\b\d+ (?:oz|lb|count|bags?|rolls?)\b.*\b(?:avoid|no for me)\b", re.I), "a size as an avoidance"),
]


@pytest.mark.parametrize("env_id", ["SituRec-Supermarket-v0", "SituRec-HomeFurnishings-v0"])
def test_shopper_language_has_none_of_the_old_defects(env_id):
    env = gym.make(env_id, image_size=(160, 120))
    utterances = []
    for agent in (HeuristicAssistant(), RandomAssistant()):
        for k in range(4):
            obs, info = env.reset(seed=k, options={"task_id": env.unwrapped.task_ids[k * 13]})
            agent.reset(obs, {"store": info["store"]}, seed=k)
            for _ in range(12):
                obs, _, term, trunc, info = env.step(agent.act(obs))
                utterances.append(info["turn"].user_utterance)
                if term or trunc:
                    break
    env.close()
    for pattern, defect in _DEFECTS:
        bad = [u for u in utterances if pattern.search(u)]
        assert not bad, (defect, bad[:3])
    assert len(set(utterances)) > 0.6 * len(utterances)  # varied, not one template


def test_no_task_avoids_a_size_and_disclosures_read_as_sentences():
    for store in ("supermarket", "home_furnishings"):
        for task in load_task_bank(store).tasks:
            assert not any(t.startswith(("size:", "feature:", "care:")) for t in task.avoided_tags), task.id
            for item in task.disclosure:
                assert item.text[:1].isupper() and item.text[-1:] in ".!?", (task.id, item.text)
