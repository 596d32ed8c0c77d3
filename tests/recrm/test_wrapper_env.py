"""RecRMReward on the real SituRec env: rewards, records and vectorised use."""

import json

import gymnasium as gym
import numpy as np
import pytest

from recrm.wrapper import RecRMReward

ENV_ID = "SituRec-Supermarket-v0"


def _text(response, action, ranking=(), eua=None):
    return json.dumps(
        {
            "response": response,
            "assistant_actions": [action],
            "expected_user_action": eua or {"name": "idle", "arguments": {}},
            "ranking": list(ranking),
        }
    )


GREET = _text("Hi! What are you shopping for today?", {"type": "Greet"})


def test_real_env_rewards_and_records():
    env = RecRMReward(gym.make(ENV_ID, image_size=(160, 120)))
    obs, info = env.reset(seed=3)
    task = env.unwrapped.task
    _, reward, *_, info = env.step(GREET)
    assert reward == pytest.approx(0.2)  # a valid opening question: the dialogue credit
    assert info["recrm"]["judged_item"] is None
    assert info["turn"].reward["recrm/total"] == pytest.approx(0.2)
    ranking = [task.target_product_id] + [
        p for p in task.reference_set if p != task.target_product_id
    ]
    ask = _text(
        "Got it. Is there a price you would like to stay under?", {"type": "AskPreference"}, ranking
    )
    _, reward, *_, info = env.step(ask)
    rc = info["recrm"]
    # A question that names no product is a dialogue turn: its ranking is scored and reported
    # but earns nothing (padding a list is no recommendation); it is paid as a question on a
    # slot still open (the shopper has not named a budget yet).
    assert rc["judged_item"] is None
    assert rc["components"]["behavior"] == 1.0 and rc["components"]["ranking"] == pytest.approx(1.0)
    assert rc["gates"] == {"instruction": 1.0, "consistency": 1.0}, rc["details"]
    assert rc["details"]["dialogue"]["reason"] == "asks an open slot (budget)"
    assert reward == pytest.approx(rc["total"]) == pytest.approx(0.2)
    assert env.unwrapped.turns[-1].reward["recrm/behavior"] == 1.0
    name = env.unwrapped.index.products[task.target_product_id].name
    recommend = _text(f"I'd suggest the {name}.", {"type": "Recommend", "display_name": name,
                                                    "visible_now": False, "reason": "it fits"}, ranking)
    _, reward, *_, info = env.step(recommend)
    assert info["recrm"]["judged_item"] == task.target_product_id and reward >= 0.25
    bad = _text("Here is my JSON with item [a].", {"type": "AskPreference"}, ranking)
    _, reward, *_, info = env.step(bad)
    assert reward == 0.0 and info["recrm"]["gates"]["instruction"] == 0.0
    env.close()


def test_real_env_under_make_vec():
    envs = gym.make_vec(
        ENV_ID, num_envs=2, vectorization_mode="sync", wrappers=[RecRMReward], image_size=(160, 120)
    )
    envs.reset(seed=0)
    _, rewards, _, _, infos = envs.step([GREET, "not json"])
    np.testing.assert_allclose(rewards, [0.2, 0.0])
    assert list(infos["recrm"]["gates"]["instruction"]) == [1.0, 0.0]
    envs.close()
