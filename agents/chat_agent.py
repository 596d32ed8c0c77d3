"""ChatAssistant: an assistant served by a chat backend (an OpenAI-compatible endpoint or a local model).

The prompt is rendered by ``agents.prompting`` (the same system message, catalog and
per-turn text as ``--agent hf``), kept as one growing chat per episode. With
``images=True`` the latest user turn also carries the assistant's Set-of-Mark view and
the map (older turns keep their text only, to bound the request size). ``act_batch``
sends every open episode's request as one backend batch.

    python -m eval.rollout --agent openai --model gpt-4o --images ...                 # hosted API
    python -m eval.rollout --agent openai --model NAME --base-url http://127.0.0.1:8000/v1 ...
"""

from __future__ import annotations

import logging
from typing import Any

from agents.base import Assistant
from agents.prompting import catalog_names, render_messages, state_text, turn_text
from situ_gym.llm import ChatBackend, ChatRequest, make_backend

__all__ = ["ChatAssistant", "OpenAIAssistant"]

logger = logging.getLogger(__name__)


class ChatAssistant(Assistant):
    """``model``: a backend spec ("openai:NAME", "hf:...") or a ChatBackend; ``base_url`` for
    OpenAI-compatible servers; ``images`` sends the SoM view and map; ``cache`` a response
    cache file; ``temperature`` (0: greedy), ``max_tokens``, ``seed``."""

    name = "chat"

    def __init__(
        self,
        model: str | ChatBackend,
        *,
        base_url: str | None = None,
        images: bool = False,
        cache: Any = None,
        temperature: float = 0.0,
        max_tokens: int = 384,
        seed: int = 0,
    ):
        self.backend = make_backend(model, base_url=base_url, cache=cache)
        self.images = bool(images)
        self.temperature = float(temperature)
        self.max_tokens = int(max_tokens)
        self.seed = int(seed)
        self._slots: list[dict[str, Any]] = []

    def reset(self, observation: dict[str, Any], info: dict[str, Any], *, seed: int | None = None) -> None:
        self.reset_batch([observation], [info], seeds=[seed])

    def reset_batch(self, observations: list[dict[str, Any]], infos: list[dict[str, Any]], *,
                    seeds: list[int | None] | None = None) -> None:
        seeds = seeds if seeds is not None else [None] * len(infos)
        if not len(observations) == len(infos) == len(seeds):
            raise ValueError(f"reset_batch needs equal lengths, got {len(observations)}, {len(infos)}, {len(seeds)}")
        self._slots = []
        for info, seed in zip(infos, seeds, strict=True):
            if "store" not in info:
                raise ValueError(f"info must carry 'store', got keys {sorted(info)!r}")
            self._slots.append({"store": info["store"], "seed": self.seed if seed is None else int(seed),
                                "turn": 0, "messages": None, "seen": "", "shown": {}, "state": None})

    def _with_images(self, messages: list[dict[str, Any]], obs: dict[str, Any]) -> list[dict[str, Any]]:
        """The chat as sent: the last user message gets the SoM view and map images."""
        if not self.images:
            return messages
        last = messages[-1]
        parts: list[dict[str, Any]] = [{"type": "image", "image": obs["som_rgb"]}]
        if obs.get("map") is not None:
            parts.append({"type": "image", "image": obs["map"]})
        return messages[:-1] + [{"role": "user", "content": parts + [{"type": "text", "text": last["content"]}]}]

    def act(self, observation: dict[str, Any]) -> str:
        return self.act_batch([observation])[0]

    def act_batch(self, observations: list[dict[str, Any]], *, episodes: list[int] | None = None) -> list[str]:
        if not self._slots:
            raise RuntimeError("call reset() or reset_batch() before act()")
        episodes = list(range(len(self._slots))) if episodes is None else episodes
        if len(episodes) != len(observations) or any(not 0 <= i < len(self._slots) for i in episodes):
            raise ValueError(f"episodes {episodes!r} must name one open episode per observation")
        requests = []
        for i, obs in zip(episodes, observations, strict=True):
            slot = self._slots[i]
            if slot["messages"] is None:
                slot["messages"] = render_messages(obs, slot["store"])
            else:
                text = turn_text(obs, slot["seen"], slot["shown"], slot["state"])
                slot["messages"].append({"role": "user", "content": text})
            slot["seen"] = str(obs.get("history", ""))
            slot["state"] = state_text(obs, slot["shown"])  # compact view: catalog entries arrive per turn
            slot["shown"].update(catalog_names(obs))
            requests.append(ChatRequest(self._with_images(slot["messages"], obs), role="assistant",
                                        max_tokens=self.max_tokens, temperature=self.temperature,
                                        seed=slot["seed"] * 1009 + slot["turn"], json_mode=True))
        results = self.backend.chat_batch(requests)
        texts = []
        for i, res in zip(episodes, results, strict=True):
            slot = self._slots[i]
            slot["messages"].append({"role": "assistant", "content": res.text})
            slot["turn"] += 1
            texts.append(res.text)
        return texts


class OpenAIAssistant(ChatAssistant):
    """``--agent openai --model NAME [--base-url URL]``: a ChatAssistant on an OpenAI-compatible endpoint."""

    name = "openai"

    def __init__(self, model: str, **kwargs: Any):
        if not isinstance(model, str) or not model:
            raise ValueError("--agent openai needs --model NAME (the served model's name)")
        spec = model if model.startswith(("openai:", "hf:")) else f"openai:{model}"
        super().__init__(spec, **kwargs)
