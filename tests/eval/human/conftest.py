"""Shared helpers of the human-evaluation tests."""

import json

import pytest

from agents.base import Assistant

ENV = "SituRec-Supermarket-v0"


class ChattyAssistant(Assistant):
    """Says something different in every instance: a stand-in for a sampled model."""

    name = "chatty"
    instances = 0

    def __init__(self):
        ChattyAssistant.instances += 1
        self.tag = ChattyAssistant.instances

    def reset(self, observation, info, *, seed=None):
        self.turn = 0

    def act(self, observation):
        self.turn += 1
        return json.dumps({
            "response": f"Instance {self.tag} says hello for the {self.turn}. time. What do you need?",
            "assistant_actions": [{"type": "AskPreference"}],
            "expected_user_action": {"name": "idle", "arguments": {}},
            "ranking": [],
        })


@pytest.fixture
def turn_left():
    return {"name": "turn", "arguments": {"direction": "left", "angle": 30}}
