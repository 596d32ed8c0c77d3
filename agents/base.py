"""The assistant interface every agent implements (random, heuristic, HF policy, API)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

__all__ = ["Assistant", "AGENT_INFO_KEYS", "agent_info"]

# What an assistant may read from the env's info. The task and profile ids are left out:
# the packaged task bank maps them to the target, budget and reference set.
AGENT_INFO_KEYS = ("store",)


def agent_info(info: dict[str, Any]) -> dict[str, Any]:
    """The part of a reset ``info`` an assistant may see (runners keep the rest)."""
    return {k: info[k] for k in AGENT_INFO_KEYS if k in info}


class Assistant(ABC):
    """An assistant plays one SituRec episode at a time.

    ``reset`` is called once per episode with the first observation and ``agent_info(info)``
    (the store only: never the hidden task, nor the task id that the packaged bank maps to
    the answer); ``act`` returns the assistant's JSON text
    for the observation of the current turn. ``act_batch`` serves policies that
    generate for many episodes at once; the default loops over ``act``.
    """

    name: str = "assistant"

    @abstractmethod
    def reset(self, observation: dict[str, Any], info: dict[str, Any], *, seed: int | None = None) -> None: ...

    @abstractmethod
    def act(self, observation: dict[str, Any]) -> str: ...

    def act_batch(self, observations: list[dict[str, Any]]) -> list[str]:
        return [self.act(obs) for obs in observations]
