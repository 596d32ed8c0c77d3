"""The moderator's inputs: by default it also reads the shopper's record; the paper's reads the conversation only."""

from __future__ import annotations

import collections

import gymnasium as gym
import pytest

import situ_gym  # noqa: F401 - registers the envs
from agents.heuristic import HeuristicAssistant
from situ_gym.user import RuleModerator, UserTurn
from situ_gym.user.base import Exchange
from situ_gym.user.rule.speech import PHRASES
from tests.episodes import play

IDLE = {"name": "idle", "arguments": {}}
QUESTION = "Where can I find the cereal?"


def _ends(protocol: str, user_text: str, action=IDLE, turn: UserTurn | None = None, assistant="Here you go.") -> bool:
    history = [("assistant", assistant), ("user", user_text)]
    return RuleModerator(protocol).decide(Exchange(history, assistant, user_text, action, turn))[0]


def test_default_ends_on_the_shoppers_give_up_flag_whatever_its_words():
    flagged = UserTurn(utterance=QUESTION, tool_call=IDLE, gave_up=True, intent="give_up")
    assert _ends("default", QUESTION, turn=flagged)


def test_paper_reads_the_words_not_the_give_up_flag_or_intent():
    flagged = UserTurn(utterance=QUESTION, tool_call=IDLE, gave_up=True, intent="give_up")
    assert not _ends("paper", QUESTION, turn=flagged)
    bye = "Never mind, that's all for today. Goodbye."
    unflagged = UserTurn(utterance=bye, tool_call=IDLE, gave_up=False, intent="ask")
    assert _ends("paper", bye, turn=unflagged)
    assert _ends("paper", bye, turn=None) == _ends("paper", bye, turn=unflagged)


@pytest.mark.parametrize("phrase", PHRASES["give_up"])
def test_paper_reads_every_rule_shopper_give_up_as_an_end(phrase):
    assert _ends("paper", phrase)
    assert _ends("default", phrase)


@pytest.mark.parametrize(
    ("user_text", "action"),
    [
        ("The Harbor Catch Breaded Tilapia is breaded. Do you have something plain?", {"name": "drop_item", "arguments": {}}),
        ("I can't find the freezer, where is it?", IDLE),
        ("Let me pick up the cod and read the label.", {"name": "pick_up_item", "arguments": {"item": "41"}}),
        ("Okay, I'll head to the Upright Freezer 2.", {"name": "move_to_fixture", "arguments": {"fixture": "B", "approach": "nearest"}}),
        ("How does it compare to the haddock?", IDLE),
        ("I'm looking for some frozen fish.", IDLE),
        ("There's something in my way ahead. Which way around should I go?", {"name": "turn", "arguments": {"direction": "left", "angle": 45.0}}),
        ("Thanks. Let me look around a bit.", {"name": "move_forward", "arguments": {"distance": "medium"}}),
        ("Thanks. My budget is about $10.", IDLE),
    ],
)
def test_paper_says_no_while_the_user_keeps_shopping(user_text, action):
    assert not _ends("paper", user_text, action, assistant="Enjoy your day, goodbye!")
    assert not _ends("paper", user_text, action)


def test_paper_ends_a_closing_exchange_and_a_goodbye_while_walking_does_not():
    assert _ends("paper", "Thanks, you too!", assistant="Enjoy your dinner, goodbye!")
    assert _ends("paper", "No thanks, I'll leave it.", assistant="Can I help with anything else?")
    assert not _ends("paper", "Okay, goodbye.", {"name": "move_forward", "arguments": {"distance": "short"}})


def test_the_env_hands_its_protocol_to_the_moderator():
    for protocol in ("default", "paper"):
        env = gym.make("SituRec-Supermarket-v0", protocol=protocol, image_size=(160, 120))
        assert env.unwrapped.moderator.protocol == protocol


@pytest.mark.parametrize("env_id", ["SituRec-Supermarket-v0", "SituRec-HomeFurnishings-v0"])
def test_heuristic_episodes_end_alike_under_the_default_and_paper_moderators(env_id):
    # Only the moderator differs (the env plays the default shopper): its words must say what its
    # record says, so every episode ends the same way.
    ends = {}
    for protocol in ("default", "paper"):
        env = gym.make(env_id, moderator=RuleModerator(protocol), image_size=(160, 120))
        ends[protocol] = [play(env, HeuristicAssistant(), t, seed=0)[1]["termination"] for t in env.unwrapped.task_ids[:20]]
    assert ends["paper"] == ends["default"], collections.Counter(ends["paper"])
