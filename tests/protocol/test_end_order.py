"""End checks on the last turn: the default lets exhaustion win (terminated), the paper the turn limit."""

from __future__ import annotations

import json

import gymnasium as gym

import situ_gym  # noqa: F401 - registers the envs

# A Recommend annotation with vague words: one attempt per turn, and nothing the shopper could buy.
VAGUE = json.dumps({"response": "I have a suggestion for you, one moment.",
                    "assistant_actions": [{"type": "Recommend", "display_name": "something", "visible_now": False,
                                           "reason": "it may fit"}],
                    "expected_user_action": {"name": "idle", "arguments": {}}, "ranking": []})


def _last_turn(protocol: str):
    env = gym.make("SituRec-Supermarket-v0", protocol=protocol, max_turns=3)
    env.reset(seed=0, options={"task_id": env.unwrapped.task_ids[0]})
    for _ in range(3):
        _, _, terminated, truncated, info = env.step(VAGUE)
        if terminated or truncated:
            break
    assert info["turn"].turn == 3, "the episode must reach its last turn for this test"
    return terminated, truncated, info["termination"]


def test_default_exhaustion_on_the_last_turn_terminates():
    assert _last_turn("default") == (True, False, "recommendation_exhausted")


def test_paper_turn_limit_comes_before_exhaustion():
    assert _last_turn("paper") == (False, True, "turn_limit")


def test_paper_and_default_alike_before_the_last_turn():
    for protocol in ("default", "paper"):
        env = gym.make("SituRec-Supermarket-v0", protocol=protocol, max_turns=4)
        env.reset(seed=0, options={"task_id": env.unwrapped.task_ids[0]})
        for _ in range(3):
            _, _, terminated, truncated, info = env.step(VAGUE)
        assert (terminated, truncated, info["termination"]) == (True, False, "recommendation_exhausted"), protocol
