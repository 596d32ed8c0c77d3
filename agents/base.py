"""The assistant interface every agent implements (random, heuristic, HF policy, API)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

__all__ = ["Assistant"]


class Assistant(ABC):
    """An assistant plays one SituRec episode at a time.

    ``reset`` is called once per episode with the first observation and the env's
    public ``info`` (never the hidden task); ``act`` returns the assistant's JSON text
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
