"""Playing one assistant through one episode of a real env, for the assistant tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agents.base import agent_info

__all__ = ["play"]


def play(env, agent, task_id: str, seed: int = 0, *, note: Callable[[], Any] = lambda: None):
    """Turns ``(text, note(), TurnRecord)`` and the last ``info``; ``note`` runs after each act."""
    obs, info = env.reset(seed=seed, options={"task_id": task_id})
    agent.reset(obs, agent_info(info), seed=seed)
    turns, done = [], False
    while not done:
        text = agent.act(obs)
        noted = note()
        obs, _, terminated, truncated, info = env.step(text)
        turns.append((text, noted, info["turn"]))
        done = terminated or truncated
    return turns, info
