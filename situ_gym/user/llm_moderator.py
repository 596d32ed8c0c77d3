"""The LLM moderator: a chat model decides after each exchange whether the dialogue is over (App. B.3).

It reads the recent dialogue, the latest assistant and user messages and the user's
action, and answers ``{"end": true|false, "reason": "..."}``. A reply that does not
parse is re-asked once; a second failure keeps the dialogue going (counted as a fallback).
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any

from situ_gym.llm import METER, ChatBackend, ChatRequest, chat_lockstep, extract_json, make_backend
from situ_gym.user.base import Exchange, Moderator

__all__ = ["LLMModerator", "MODERATOR_PROMPT"]

logger = logging.getLogger(__name__)

MODERATOR_PROMPT = (
    "You moderate a conversation between a shopper and a shopping assistant in a store. "
    "Decide whether the conversation has ended.\n"
    "Answer yes (end) when the shopper clearly gives up, declines further help or ends the "
    "interaction, or when both sides have completed a purchase confirmation or a closing exchange.\n"
    "Answer no while the shopper is still clarifying needs, exploring, comparing or inspecting "
    "products, or asks for help after a rejection or a navigation difficulty.\n"
    'Reply with ONLY one JSON object: {"end": true or false, "reason": "a short reason"}'
)
_HISTORY_LINES = 12


class LLMModerator(Moderator):
    """``model``: a ChatBackend or a spec "hf:..." / "openai:..." (greedy decoding)."""

    name = "llm"

    def __init__(self, model: ChatBackend | str | None = None, *, base_url: str | None = None,
                 cache: Any = None, max_tokens: int = 60):
        if model is None:
            raise ValueError("the LLM moderator needs a chat model: pass model='hf:...' or 'openai:...'")
        self.backend = make_backend(model, base_url=base_url, cache=cache)
        self.max_tokens = int(max_tokens)

    def _request(self, messages: list[dict[str, str]], seed: int) -> ChatRequest:
        return ChatRequest(messages, role="moderator", max_tokens=self.max_tokens, temperature=0.0,
                           seed=seed, json_mode=True)

    @staticmethod
    def _parse(text: str) -> tuple[tuple[bool, str] | None, str]:
        try:
            data = extract_json(text)
        except ValueError as exc:
            return None, str(exc)
        end = data.get("end")
        if isinstance(end, str) and end.strip().lower() in ("yes", "no", "true", "false"):
            end = end.strip().lower() in ("yes", "true")
        if not isinstance(end, bool):
            return None, '"end" must be true or false'
        return (end, str(data.get("reason") or ("ended" if end else "ongoing"))[:200]), ""

    def decide(self, exchange: Exchange) -> tuple[bool, str]:
        lines = "\n".join(f"{who.capitalize()}: {text}" for who, text in exchange.history[-_HISTORY_LINES:])
        action = json.dumps(exchange.user_action or {"name": "idle", "arguments": {}}, sort_keys=True)
        message = (
            f"Conversation so far:\n{lines or '(empty)'}\n\n"
            f"Latest assistant message: {exchange.last_assistant or '(none)'}\n"
            f"Latest shopper message: {exchange.last_user or '(none)'}\nShopper's action: {action}\n\n"
            "Has the conversation ended?"
        )
        messages = [{"role": "system", "content": MODERATOR_PROMPT}, {"role": "user", "content": message}]
        seed = int.from_bytes(hashlib.sha256(message.encode()).digest()[:4], "little")
        (first,) = chat_lockstep(self.backend, [self._request(messages, seed)])
        verdict, error = self._parse(first.text)
        if verdict is None:
            METER.add("moderator", model=self.backend.model, reasks=1)
            retry = messages + [
                {"role": "assistant", "content": first.text},
                {"role": "user", "content": f"That reply was not usable: {error}. Answer with only the JSON object."},
            ]
            (second,) = chat_lockstep(self.backend, [self._request(retry, seed + 1)])
            verdict, error = self._parse(second.text)
        if verdict is None:
            METER.add("moderator", model=self.backend.model, fallbacks=1)
            logger.warning("moderator: unusable reply after one re-ask (%s); the dialogue goes on", error)
            return False, f"moderator reply unusable ({error}); continuing"
        return verdict
