"""``SituRecEnv.snapshot`` / ``restore``: branching from the middle of an episode replays
byte for byte, in both stores, with the RecRM reward, into the same or another env."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import situ_gym  # noqa: F401 - registers the envs
from agents.base import agent_info
from agents.registry import make_agent
from recrm import RecRMReward
from situ_gym import STORE_OF_ENV
from situ_gym.env import EnvSnapshot
from situ_gym.scene.loader import load_task_bank

ENVS = list(STORE_OF_ENV)
ASK_BUDGET = ('{"response": "Could you tell me your budget?", "assistant_actions": [{"type": "AskPreference"}], '
              '"expected_user_action": {"name": "idle", "arguments": {}}}')


def _make(env_id: str, **kwargs):
    return RecRMReward(gym.make(env_id, **kwargs))


def _actions(env, task_id: str, agent_name: str = "heuristic", seed: int = 5) -> list[str]:
    """The actions an assistant plays through one whole episode."""
    agent = make_agent(agent_name)
    obs, info = env.reset(seed=seed, options={"task_id": task_id})
    agent.reset(obs, agent_info(info), seed=seed)
    actions, done = [], False
    while not done:
        actions.append(agent.act(obs))
        obs, _, terminated, truncated, _ = env.step(actions[-1])
        done = terminated or truncated
    return actions


def _replay(env, actions: list[str]) -> list:
    """(observation arrays and texts, reward, flags, turn record) of each action."""
    out = []
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(action)
        out.append(({k: np.asarray(v).tobytes() for k, v in obs.items()}, reward, terminated, truncated,
                    info["turn"].model_dump_json(), info.get("termination")))
        if terminated or truncated:
            break
    return out


@pytest.mark.parametrize("env_id", ENVS)
def test_restore_replays_the_original_continuation(env_id):
    task_id = load_task_bank(STORE_OF_ENV[env_id]).tasks[11].id
    env = _make(env_id)
    actions = _actions(env, task_id)
    assert len(actions) >= 6
    cut = len(actions) // 2
    env.reset(seed=5, options={"task_id": task_id})
    _replay(env, actions[:cut])
    state = env.unwrapped.snapshot()
    original = _replay(env, actions[cut:])
    # A different continuation first, then back to the snapshot twice: the same as the original.
    env.unwrapped.restore(state)
    _replay(env, [ASK_BUDGET, ASK_BUDGET])
    for _ in range(2):
        obs, info = env.unwrapped.restore(state)
        assert info["task_id"] == task_id and obs["history"]
        assert _replay(env, actions[cut:]) == original
    env.close()


def test_restore_into_another_env_of_the_same_settings():
    env_id = ENVS[1]
    task_id = load_task_bank(STORE_OF_ENV[env_id]).tasks[3].id
    first, second = _make(env_id), _make(env_id)
    actions = _actions(first, task_id)
    first.reset(seed=5, options={"task_id": task_id})
    _replay(first, actions[:3])
    state = first.unwrapped.snapshot()
    second.reset(seed=99)  # another task: restore replaces all of it
    second.unwrapped.restore(state)
    assert _replay(second, actions[3:]) == _replay(first, actions[3:])
    for env in (first, second):
        env.close()


def test_snapshot_is_unchanged_by_what_follows():
    env_id = ENVS[0]
    env = _make(env_id)
    task_id = load_task_bank(STORE_OF_ENV[env_id]).tasks[0].id
    actions = _actions(env, task_id)
    env.reset(seed=5, options={"task_id": task_id})
    _replay(env, actions[:2])
    state = env.unwrapped.snapshot()
    before = (len(state.episode["turns"]), list(state.backend["cart"]), state.backend["pose"])
    _replay(env, actions[2:])
    assert (len(state.episode["turns"]), list(state.backend["cart"]), state.backend["pose"]) == before
    env.close()


def test_bad_snapshot_use_is_a_clear_error():
    env = gym.make(ENVS[0])
    with pytest.raises(RuntimeError, match="before reset"):
        env.unwrapped.snapshot()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="takes what snapshot"):
        env.unwrapped.restore({"pose": None})
    state = env.unwrapped.snapshot()
    assert isinstance(state, EnvSnapshot)
    other = gym.make(ENVS[0], protocol="paper")
    other.reset(seed=0)
    with pytest.raises(ValueError, match="other settings"):
        other.unwrapped.restore(state)
    for e in (env, other):
        e.close()
