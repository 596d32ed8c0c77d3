"""The assistant interface every agent implements (random, heuristic, HF policy, API)."""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from typing import Any

__all__ = ["Assistant", "AGENT_INFO_KEYS", "agent_info", "acts_in_batches"]

# What an assistant may read from the env's info: the store and the input condition (the
# ablation and the protocol, which decide what its prompt may require), and under
# catalog_view="tools" the handle of its catalog/map tools (situ_gym.assistant_tools). The task
# and profile ids are left out: the packaged task bank maps them to the target, budget and
# reference set.
AGENT_INFO_KEYS = ("store", "ablation", "protocol", "tools")


def agent_info(info: dict[str, Any]) -> dict[str, Any]:
    """The part of a reset ``info`` an assistant may see (runners keep the rest)."""
    return {k: info[k] for k in AGENT_INFO_KEYS if k in info}


class Assistant(ABC):
    """An assistant plays SituRec episodes, one or several at a time.

    ``reset`` is called once per episode with the first observation and ``agent_info(info)``
    (the store, the input condition and any tool handle: never the hidden task, nor the task id that the packaged bank maps to
    the answer); ``act`` returns the assistant's JSON text for the observation of the
    current turn.

    The runner (``eval.runner.play_batch``) drives the batch interface: ``reset_batch``
    opens one episode per observation and ``act_batch(observations, episodes=...)``
    continues the named ones (indices in ``reset_batch`` order). Policies that generate for
    many episodes at once (``HFPolicyAssistant``, ``ChatAssistant``) override both; the
    default here plays each episode with its own copy of this assistant through
    ``reset``/``act``, so an assistant written for one episode needs nothing more (its
    state must survive ``copy.deepcopy``, which plain Python state does).
    """

    name: str = "assistant"

    @abstractmethod
    def reset(self, observation: dict[str, Any], info: dict[str, Any], *, seed: int | None = None) -> None: ...

    @abstractmethod
    def act(self, observation: dict[str, Any]) -> str: ...

    def reset_batch(self, observations: list[dict[str, Any]], infos: list[dict[str, Any]], *,
                    seeds: list[int | None] | None = None) -> None:
        """Open one episode per observation, each on a fresh copy of this assistant."""
        seeds = list(seeds) if seeds is not None else [None] * len(observations)
        if not len(observations) == len(infos) == len(seeds):
            raise ValueError(f"reset_batch needs equal lengths, got {len(observations)} observations, "
                             f"{len(infos)} infos, {len(seeds)} seeds")
        self._episodes: list[Assistant] = []  # emptied first so that copies do not nest
        episodes = [copy.deepcopy(self) for _ in observations]
        for agent, obs, info, seed in zip(episodes, observations, infos, seeds, strict=True):
            agent.reset(obs, info, seed=seed)
        self._episodes = episodes

    def act_batch(self, observations: list[dict[str, Any]], *, episodes: list[int] | None = None) -> list[str]:
        """One turn for the named open episodes (default: all, in ``reset_batch`` order)."""
        opened = getattr(self, "_episodes", [])
        if not opened:  # never batch-reset: the observations continue this one episode
            return [self.act(obs) for obs in observations]
        episodes = list(range(len(opened))) if episodes is None else list(episodes)
        if len(episodes) != len(observations) or any(not 0 <= i < len(opened) for i in episodes):
            raise ValueError(f"episodes {episodes!r} must name one open episode (of {len(opened)}) per observation")
        return [opened[i].act(obs) for i, obs in zip(episodes, observations, strict=True)]


def acts_in_batches(assistant: Any) -> bool:
    """Whether ``assistant`` answers many episodes in one ``act_batch`` call (it overrides the
    per-episode default, or is a duck-typed batch policy); the runner then asks it once per
    turn, and asks the others episode by episode so that one crash stays one episode's."""
    method = getattr(type(assistant), "act_batch", None)
    return method is not None and method is not Assistant.act_batch
