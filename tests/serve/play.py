"""Heuristic episodes recorded byte for byte, for comparing an env in-process and remotely."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np

from agents.base import agent_info
from agents.registry import make_agent
from recrm import RecRMReward
from situ_gym.serve.messages import encode_info

__all__ = ["SMALL", "local_env", "record", "play", "replay"]

SMALL = dict(image_size=(64, 48), max_turns=6)  # small frames and short episodes: the same code paths, fast


def local_env(env_id: str, **kwargs) -> gym.Env:
    return RecRMReward(gym.make(env_id, **kwargs))


def record(obs: dict, *rest) -> tuple:
    """An observation's arrays as bytes (with dtype and shape) and texts, then the step's
    reward and flags, and the info as JSON: what must be identical in-process and remotely."""
    *flags, info = rest
    arrays = {k: (np.asarray(v).dtype.str, np.shape(v), np.asarray(v).tobytes()) for k, v in obs.items()}
    return arrays, *flags, json.dumps(encode_info(info), sort_keys=True)


def play(env, seed: int | None = 5, options: dict | None = None, agent: str = "heuristic") -> tuple[list[tuple], list[str]]:
    """The records of an ``agent`` episode (reset first) and the actions it took."""
    obs, info = env.reset(seed=seed, options=options)
    agent = make_agent(agent)
    agent.reset(obs, agent_info(info), seed=seed)
    out, actions, done = [record(obs, info)], [], False
    while not done:
        actions.append(agent.act(obs))
        obs, reward, terminated, truncated, info = env.step(actions[-1])
        out.append(record(obs, reward, terminated, truncated, info))
        done = terminated or truncated
    return out, actions


def replay(env, actions: list[str]) -> list[tuple]:
    out = []
    for action in actions:
        step = env.step(action)
        out.append(record(*step))
        if step[2] or step[3]:
            break
    return out
