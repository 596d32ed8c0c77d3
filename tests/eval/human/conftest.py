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


class BrokenAssistant(ChattyAssistant):
    """Answers once, then its endpoint is gone for good: every later ``act`` raises."""

    def act(self, observation):
        if self.turn >= 1:
            raise ConnectionError("endpoint went away\nsecond line")
        return super().act(observation)


class DeadOnArrivalAssistant(ChattyAssistant):
    """Cannot even start a conversation: ``reset`` raises."""

    def reset(self, observation, info, *, seed=None):
        raise RuntimeError("model weights are corrupt")


class UnbuildableAssistant(ChattyAssistant):
    """Its constructor raises, as a model path that does not exist would."""

    def __init__(self):
        raise OSError("no such model: /missing")


class ModelAssistant(ChattyAssistant):
    """A model-backed kind: built with the model after ``KIND:``."""

    def __init__(self, model, base_url=None):
        super().__init__()
        self.model, self.base_url = model, base_url

    def act(self, observation):
        return super().act(observation).replace("hello", f"hello via {self.base_url}")


class NamedModelAssistant(Assistant):
    """A model-backed kind whose "model" names the registered agent that answers (``KIND:heuristic``):
    two models of one kind that behave differently, as two API models would."""

    def __init__(self, model, **options):
        from agents.registry import make_agent

        self.model = model
        self.inner = make_agent(model)

    def reset(self, observation, info, *, seed=None):
        self.inner.reset(observation, info, seed=seed)

    def act(self, observation):
        return self.inner.act(observation)
