"""RemoteEnv plays the same episodes as the env in-process, byte for byte: observations,
rewards (RecRM), flags and infos; groups start alike; branching replays remotely."""

from __future__ import annotations

import threading

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

from recrm import RecRMReward
from situ_gym import ENV_IDS, STORE_OF_ENV
from situ_gym.records import TurnRecord
from situ_gym.scene.loader import load_task_bank
from situ_gym.scene.model import Task
from situ_gym.serve import RemoteEnv, RequestError, group_seed
from tests.serve.play import SMALL, local_env, play, replay

ASK_BUDGET = ('{"response": "Could you tell me your budget?", "assistant_actions": [{"type": "AskPreference"}], '
              '"expected_user_action": {"name": "idle", "arguments": {}}}')


def _task(env_id: str, k: int) -> str:
    return load_task_bank(STORE_OF_ENV[env_id]).tasks[k].id


@pytest.mark.parametrize("image_format", ["png", "raw"])
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_remote_episode_is_byte_identical_to_in_process(server, env_id, image_format):
    options = {"task_id": _task(env_id, 7)}
    local = local_env(env_id, **SMALL)
    remote = RemoteEnv(server.url, env_id, image_format=image_format, **SMALL)
    assert remote.observation_space == local.observation_space and remote.action_space == local.action_space
    expected, _ = play(local, options=options)
    got, _ = play(remote, options=options)
    assert len(expected) >= 3
    assert got == expected
    # The records come back as records, the RecRM reward as in-process.
    obs, info = remote.reset(seed=5, options=options)
    assert isinstance(info["task"], Task) and remote.observation_space.contains(obs)
    obs, reward, *_, info = remote.step(ASK_BUDGET)
    assert isinstance(info["turn"], TurnRecord) and reward == info["recrm"]["reward"]
    remote.close()
    local.close()


def test_remote_env_passes_check_env(server):
    env = RemoteEnv(server.url, ENV_IDS[0], **SMALL)
    check_env(env, skip_render_check=True)
    env.close()


def _play_in_threads(url: str, env_id: str, n: int, **reset) -> list:
    results: list = [None] * n

    def run(i: int) -> None:
        env = RemoteEnv(url, env_id, **SMALL)
        try:
            results[i] = play(env, **reset)[0]
        except Exception as exc:  # reported below, by the test's thread
            results[i] = exc
        finally:
            env.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    errors = [r for r in results if isinstance(r, Exception)]
    assert not errors, errors
    return results


def test_same_task_and_seed_give_the_same_episode_in_parallel_clients(server):
    env_id = ENV_IDS[1]
    first, second = _play_in_threads(server.url, env_id, 2, seed=11, options={"task_id": _task(env_id, 2)})
    assert first == second


def test_a_group_key_is_one_seed_for_the_whole_group(server):
    env_id = ENV_IDS[0]
    options = {"task_id": _task(env_id, 4), "group_key": "step-17/prompt-3"}
    first, second = _play_in_threads(server.url, env_id, 2, seed=None, options=options)
    assert first == second
    expected, _ = play(local_env(env_id, **SMALL), seed=group_seed("step-17/prompt-3"),
                       options={"task_id": options["task_id"]})
    assert first == expected
    # Without a task the key draws the same task for everyone too; a key and a seed is an error.
    env = RemoteEnv(server.url, env_id, **SMALL)
    assert env.reset(options={"group_key": "k"})[1]["task_id"] == env.reset(options={"group_key": "k"})[1]["task_id"]
    assert env.state().seed == group_seed("k")
    with pytest.raises(RequestError, match="a seed or a group_key"):
        env.reset(seed=1, options={"group_key": "k"})
    env.close()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_restore_and_replay_through_the_server_are_byte_identical(server, env_id):
    options = {"task_id": _task(env_id, 11)}
    _, actions = play(local_env(env_id, **SMALL), options=options)
    assert len(actions) >= 4
    cut = len(actions) // 2
    env = RemoteEnv(server.url, env_id, **SMALL)
    env.reset(seed=5, options=options)
    replay(env, actions[:cut])
    handle = env.snapshot()
    assert env.state().snapshots == [handle]
    original = replay(env, actions[cut:])
    env.restore(handle)
    replay(env, [ASK_BUDGET, ASK_BUDGET])  # another continuation first
    for _ in range(2):
        obs, info = env.restore(handle)
        assert info["task_id"] == options["task_id"] and obs["history"]
        assert replay(env, actions[cut:]) == original
    env.release(handle)
    with pytest.raises(RequestError, match="unknown snapshot handle"):
        env.restore(handle)
    env.close()


def test_text_only_and_reward_settings_reach_the_server(server):
    env_id = ENV_IDS[1]
    options = {"task_id": _task(env_id, 3)}
    settings = dict(SMALL, text_only=True, protocol="paper")
    remote = RemoteEnv(server.url, env_id, reward_kwargs={"variant": "+relevance"}, **settings)
    got, _ = play(remote, options=options)
    assert "som_rgb" not in remote.observation_space.spaces
    assert got == play(RecRMReward(gym.make(env_id, **settings), variant="+relevance"), options=options)[0]
    with pytest.raises(RequestError, match="scorers"):
        RemoteEnv(server.url, env_id, reward_kwargs={"scorers": {"relevance": "model:/tmp/x"}}, **SMALL).reset(seed=0)


def test_a_session_on_a_used_env_plays_as_on_a_new_one(server):
    """The server hands the env of a closed session to the next one (EnvPool): a reset replaces it all."""
    env_id = ENV_IDS[0]
    first = RemoteEnv(server.url, env_id, **SMALL)
    play(first, seed=3, options={"task_id": _task(env_id, 9)})
    first.snapshot()
    first.close()
    options = {"task_id": _task(env_id, 1)}
    expected, _ = play(local_env(env_id, **SMALL), seed=8, options=options)
    for _ in range(2):  # each session is likely to get the env the previous one gave back
        second = RemoteEnv(server.url, env_id, **SMALL)
        assert play(second, seed=8, options=options)[0] == expected
        assert second.state().snapshots == []
        second.close()
