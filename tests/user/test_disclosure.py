"""Every part of the assistant's question answered, one new goal detail a turn (paper App. A.3)."""

from __future__ import annotations

import numpy as np
import pytest

from situ_gym.language import analyze
from situ_gym.user.rule.disclosure import Answer, choose_disclosure
from situ_gym.user.rule.persona import Persona
from tests.world import shopper_home_task, shopper_market_task, shopper_profile

from .conftest import MiniShop
from .test_rule_based import SM_PLACES, _user

MARKET = shopper_market_task()  # items: 0 category, 1 use, 2 budget, 3 avoid, 4 need
HOME = shopper_home_task()  # items: 0 use, 1 budget, 2 need; nothing to avoid


def _plan(task, disclosed, asked, may_tell_new=True):
    persona = Persona.of(shopper_profile(), task)
    return choose_disclosure(task.disclosure, set(disclosed), tuple(asked), False, persona,
                             np.random.default_rng(0), may_tell_new=may_tell_new)


@pytest.mark.parametrize("disclosed, asked, parts", [
    # two parts with details left: the first is told, the second put off (one new a turn)
    ({0}, ["budget", "avoid"], [Answer("new", "budget", 2), Answer("later", "avoid", 3)]),
    # two slots waiting for the same detail put it off once
    ({0, 2, 3}, ["avoid", "size", "preference"], [Answer("again", "avoid", 3), Answer("new", "size", 4)]),
    ({0, 2}, ["avoid", "size", "preference"], [Answer("new", "avoid", 3), Answer("later", "size", 4)]),
    # a part asked again is restated beside the new one, in the order asked
    ({0, 2}, ["budget", "avoid"], [Answer("again", "budget", 2), Answer("new", "avoid", 3)]),
    # must-haves and things to avoid: both parts answered
    ({0, 2, 3}, ["preference", "avoid"], [Answer("new", "preference", 4), Answer("again", "avoid", 3)]),
    # everything told: every part restated, nothing new
    ({0, 1, 2, 3, 4}, ["avoid", "budget"], [Answer("again", "avoid", 3), Answer("again", "budget", 2)]),
    # a location question is answered by the view, not by a goal detail
    ({0}, ["location"], []),
])
def test_every_part_of_a_question_is_answered_with_at_most_one_new_detail(disclosed, asked, parts):
    got = _plan(MARKET, disclosed, asked)
    assert got == parts
    assert sum(p.how == "new" for p in got) <= 1


def test_a_part_the_shopper_has_nothing_for_is_answered_as_such():
    assert _plan(HOME, {0}, ["preference", "avoid"]) == [Answer("new", "preference", 2), Answer("none", "avoid")]


def test_a_turn_that_already_revealed_a_detail_tells_no_new_one_but_still_answers():
    assert _plan(MARKET, {0, 2}, ["avoid", "budget"], may_tell_new=False) == [
        Answer("later", "avoid", 3), Answer("again", "budget", 2)]


def test_the_opening_tells_the_category_whatever_was_asked():
    assert _plan(MARKET, set(), ["budget", "avoid"]) == [Answer("new", item=0)]


def _talk(user, shop, text):
    turn = user.respond(shop.observe(text))
    shop.apply(turn.utterance, turn.tool_call)
    return turn


def test_the_shopper_answers_a_two_part_question_in_both_parts(sm_index):
    for seed in range(8):
        user = _user(sm_index, seed=seed, navigation_following=0.0)
        shop = MiniShop(sm_index, SM_PLACES, "start")
        _talk(user, shop, "Hi! What are you shopping for?")
        first = _talk(user, shop, "What's your budget, and is there anything you'd rather avoid?")
        assert first.revealed == ["budget"] and "$10" in first.utterance
        assert "what to avoid" in first.utterance  # put off in words, so the assistant asks again
        second = _talk(user, shop, "Got it. Anything to avoid? And your budget was?")
        assert second.revealed == ["avoid"] and "breaded" in second.utterance and "$10" in second.utterance


def test_the_shopper_says_it_has_nothing_to_avoid_beside_its_must_have(hf_index):
    for seed in range(8):
        user = _user(hf_index, task=HOME, seed=seed, navigation_following=0.0)
        shop = MiniShop(hf_index, {"start": ["hf_s01"]}, "start")
        _talk(user, shop, "Hello! What can I help you find?")
        turn = _talk(user, shop, "Any must-haves, and anything you want to avoid?")
        assert turn.revealed == ["need"] and "rattan" in turn.utterance
        assert "nothing to avoid" in turn.utterance.lower() or "nothing i need to avoid" in turn.utterance.lower()


@pytest.mark.parametrize("text", [
    "One thing at a time, I'll come to the budget in a moment.", "Let me get back to you on what to avoid.",
    "I'll tell you about what else I need after that.", "No, nothing to avoid.", "I haven't set a budget.",
])
def test_put_off_and_nothing_answers_state_no_wish_refusal_or_budget(text):
    u = analyze(text, None)
    assert not u.rejects and not u.wants and not u.avoids and u.budget is None, text
