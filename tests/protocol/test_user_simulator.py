"""The shopper: the rule shopper under either protocol unless a model is asked for; an LLM shopper under both."""

from __future__ import annotations

import json

import gymnasium as gym

import situ_gym  # noqa: F401 - registers the envs
from situ_gym.user import LLMUser, RuleBasedUser
from tests.llm.scripted import ScriptedBackend

GREET = json.dumps({"response": "Hi! What are you shopping for?", "assistant_actions": [{"type": "Greet"}],
                    "expected_user_action": {"name": "idle", "arguments": {}}, "ranking": []})


def _rule_user(protocol: str) -> RuleBasedUser:
    env = gym.make("SituRec-Supermarket-v0", protocol=protocol, image_size=(160, 120))
    env.reset(seed=0)
    env.step(GREET)  # plays a turn: no model, no network
    user = env.unwrapped.user
    assert type(user) is RuleBasedUser and user.name == "rule" and user.protocol == protocol
    return user


def test_default_plays_the_rule_shopper_with_its_soft_budget():
    user = _rule_user("default")
    slack = {"low": 0.10, "medium": 0.05, "high": 0.0}[user.profile.interaction.price_sensitivity]
    assert user.persona.budget_slack == slack


def test_paper_alone_keeps_the_rule_shopper_with_the_papers_budget_rule():
    user = _rule_user("paper")
    assert user.persona.budget_slack == 0.0 and user.persona.soft_needs == frozenset()


def _llm_turn(protocol: str, reply: dict):
    backend = ScriptedBackend(lambda request, i: json.dumps(reply))
    user = LLMUser(backend)
    env = gym.make("SituRec-Supermarket-v0", protocol=protocol, user=user, image_size=(160, 120))
    env.reset(seed=0, options={"task_id": "sm_u01_t1"})
    _, _, terminated, truncated, info = env.step(GREET)
    assert env.unwrapped.user is user and len(backend.batches) == 1
    return terminated or truncated, info


def test_an_llm_shopper_is_accepted_under_default_and_paper():
    reply = {"utterance": "I'm looking for some yogurt.", "tool_call": {"name": "idle", "arguments": {}},
             "revealed": "category", "give_up": False}
    for protocol in ("default", "paper"):
        done, info = _llm_turn(protocol, reply)
        assert not done and info["turn"].user_utterance == reply["utterance"], protocol
        assert info["turn"].revealed == ["category"]


def test_an_llm_shoppers_give_up_flag_ends_the_default_but_the_paper_reads_its_words():
    reply = {"utterance": "Where is the yogurt?", "tool_call": {"name": "idle", "arguments": {}},
             "revealed": None, "give_up": True}
    assert _llm_turn("default", reply)[1]["termination"] == "moderator_end"
    assert _llm_turn("paper", reply)[1]["termination"] is None  # a question: still asking for help
