"""Both protocols count recommendation attempts the same way, never below the paper's count (one
per Recommend annotation): a vague Recommend counts, and so does a product put forward under
another label."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import situ_gym  # noqa: F401 - registers the envs

HONEY = "sm_p001"


def _say(text: str, action: dict) -> str:
    return json.dumps({"response": text, "assistant_actions": [action],
                       "expected_user_action": {"name": "idle", "arguments": {}}, "ranking": []})


def _counts(protocol: str) -> tuple[list[int], list[list[str]]]:
    env = gym.make("SituRec-Supermarket-v0", image_size=(96, 72), protocol=protocol)
    env.reset(seed=0)
    turns = [
        ("This one might be just right for you.", {"type": "Recommend", "display_name": "this one",
                                                   "visible_now": False, "reason": "fits"}),
        ("Let's keep walking. By the way, the Sunny Fields Honey Oat Clusters are great.", {"type": "Navigate"}),
        ("What is your budget?", {"type": "AskPreference"}),
    ]
    counts, offered = [], []
    for text, action in turns:
        *_, info = env.step(_say(text, action))
        counts.append(info["turn"].recommendation_attempts)
        offered.append(info["turn"].put_forward)
    env.close()
    return counts, offered


@pytest.mark.parametrize("protocol", ["default", "paper"])
def test_default_and_paper_count_annotations_and_products_put_forward(protocol):
    counts, offered = _counts(protocol)
    assert counts == [1, 1, 0]  # the annotation (the paper's count) and the unannotated product
    assert offered == [[], [HONEY], []]


def test_paper_count_equals_default_count():
    assert _counts("paper") == _counts("default")
