"""A scripted ChatBackend for deterministic tests: replies come from a function of the request."""

from __future__ import annotations

from collections.abc import Callable

from situ_gym.llm import ChatBackend, ChatRequest, ChatResult


class ScriptedBackend(ChatBackend):
    """``reply(request, call_index) -> text``; every batch it receives is recorded."""

    def __init__(self, reply: Callable[[ChatRequest, int], str], model: str = "scripted"):
        self.reply = reply
        self.model = model
        self.batches: list[list[ChatRequest]] = []
        self.calls = 0

    def chat_batch(self, requests: list[ChatRequest]) -> list[ChatResult]:
        self.batches.append(list(requests))
        out = []
        for r in requests:
            text = self.reply(r, self.calls)
            self.calls += 1
            out.append(ChatResult(text=text, prompt_tokens=10, completion_tokens=len(text.split()), seconds=0.01,
                                  model=self.model))
        return out
