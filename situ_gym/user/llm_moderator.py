"""The LLM moderator: a chat model decides after each exchange whether the dialogue is over (App. B.3).

Its chat grows by appending: the system message is fixed, each exchange adds one user
message (the latest assistant and shopper messages and the shopper's action) and then the
verdict it went on with (``RoleChat``; whole oldest exchanges are dropped, rarely, to
stay within ``budget_tokens``). A new episode (a first exchange, or a dialogue that does
not continue the one seen last) starts a new chat. The reply is held to the schema
``{"end": boolean, "reason": string of at most REASON_CHARS}``; one that still does not
parse is re-asked once, and a second failure keeps the dialogue going (a fallback). Per
exchange the usage log counts one decision, used or fallen back, and the re-asks; a
request the backend could not answer (``ChatResult.error``) raises.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
from typing import Any

from situ_gym.llm import METER, ChatBackend, ChatRequest, chat_lockstep, make_backend
from situ_gym.llm.replies import RoleChat, clean_text
from situ_gym.llm.structured import bounded_string, closed_object, parse_reply
from situ_gym.user.base import Exchange, Moderator

__all__ = ["LLMModerator", "MODERATOR_PROMPT", "MODERATOR_SCHEMA", "REASON_CHARS"]

logger = logging.getLogger(__name__)

MODERATOR_PROMPT = (
    "You moderate a conversation between a shopper and a shopping assistant in a store. "
    "After each exchange, decide whether the conversation has ended.\n"
    "Answer yes (end) when the shopper clearly gives up, declines further help or ends the "
    "interaction, or when both sides have completed a purchase confirmation or a closing exchange.\n"
    "Answer no while the shopper is still clarifying needs, exploring, comparing or inspecting "
    "products, or asks for help after a rejection or a navigation difficulty.\n"
    'Reply with ONLY one JSON object: {"end": true or false, "reason": "a short reason"}'
)
REASON_CHARS = 100
MODERATOR_SCHEMA = closed_object({"end": {"type": "boolean"}, "reason": bounded_string(REASON_CHARS)})
_CHATS = itertools.count(1)  # this process's moderator chats: each episode's conversation key is its own


class LLMModerator(Moderator):
    """``model``: a ChatBackend or a spec "hf:..." / "openai:..." (greedy decoding);
    ``max_tokens`` room for the longest verdict the schema allows; ``budget_tokens`` the
    prompt size beyond which whole oldest exchanges are dropped."""

    name = "llm"

    def __init__(self, model: ChatBackend | str | None = None, *, base_url: str | None = None,
                 cache: Any = None, max_tokens: int = 128, budget_tokens: int = 4000):
        if model is None:
            raise ValueError("the LLM moderator needs a chat model: pass model='hf:...' or 'openai:...'")
        self.backend = make_backend(model, base_url=base_url, cache=cache)
        self.max_tokens = int(max_tokens)
        self.budget_tokens = int(budget_tokens)
        self._seen: list[tuple[str, str]] | None = None  # the dialogue at the last decision
        self.chat = RoleChat(MODERATOR_PROMPT, budget_tokens=self.budget_tokens)
        self.conversation: str | None = None

    def _request(self, messages: list[dict[str, Any]], seed: int) -> ChatRequest:
        return ChatRequest(messages, role="moderator", max_tokens=self.max_tokens, temperature=0.0,
                           seed=seed, json_mode=True, schema=MODERATOR_SCHEMA, conversation=self.conversation)

    @staticmethod
    def _parse(text: str) -> tuple[tuple[bool, str] | None, str]:
        data, error = parse_reply(text, MODERATOR_SCHEMA)
        if data is None:
            return None, error
        return (data["end"], data["reason"].strip() or ("ended" if data["end"] else "ongoing")), ""

    def _follow(self, history: list[tuple[str, str]]) -> None:
        """Start a new chat when ``history`` does not continue the dialogue seen last."""
        history = [tuple(h) for h in history]
        seen = self._seen
        if seen is None or len(history) <= 2 or history[: len(seen)] != seen:
            self.chat = RoleChat(MODERATOR_PROMPT, budget_tokens=self.budget_tokens)
            first = clean_text(json.dumps(list(history[:2]), ensure_ascii=False))
            digest = hashlib.sha256(first.encode()).hexdigest()[:12]
            self.conversation = f"moderator:{digest}:{next(_CHATS)}"
        self._seen = history

    def message(self, exchange: Exchange) -> str:
        """The user message of one exchange (the dialogue before it, once, when the chat is new)."""
        action = json.dumps(exchange.user_action or {"name": "idle", "arguments": {}}, sort_keys=True)
        earlier = ""
        if not self.chat.turns and len(exchange.history) > 2:
            lines = "\n".join(f"{who.capitalize()}: {text}" for who, text in exchange.history[:-2])
            earlier = f"Conversation before this exchange:\n{lines}\n\n"
        return (
            f"{earlier}Assistant: {exchange.last_assistant or '(none)'}\n"
            f"Shopper: {exchange.last_user or '(none)'}\nShopper's action: {action}\n\n"
            "Has the conversation ended?"
        )

    def decide(self, exchange: Exchange) -> tuple[bool, str]:
        self._follow(list(exchange.history))
        text = clean_text(self.message(exchange))  # a lone surrogate cannot be hashed or sent
        messages = self.chat.messages(text)
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")
        model = self.backend.model
        (first,) = chat_lockstep(self.backend, [self._request(messages, seed)])
        reply = clean_text(first.raise_for_error().text)  # lone surrogates: see situ_gym.llm.replies
        verdict, error = self._parse(reply)
        if verdict is None:
            METER.add("moderator", model=model, reasks=1)
            retry = messages + [
                {"role": "assistant", "content": reply},
                {"role": "user", "content": f"That reply was not usable: {error}. Answer with only the JSON object."},
            ]
            (second,) = chat_lockstep(self.backend, [self._request(retry, seed + 1)])
            reply = clean_text(second.raise_for_error().text)
            verdict, error = self._parse(reply)
        if verdict is None:
            METER.add("moderator", model=model, decisions=1, fallbacks=1)
            logger.warning("moderator: unusable reply after one re-ask (%s); the dialogue goes on", error)
            verdict = (False, f"moderator reply unusable ({error}); continuing")
            reply = json.dumps({"end": False, "reason": "continuing"})
        else:
            METER.add("moderator", model=model, decisions=1, used=1)
        self.chat.commit(text, reply)
        return verdict
