"""Chat request/result records and the ChatBackend protocol shared by every backend."""

from __future__ import annotations

import base64
import hashlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from situ_gym.llm.errors import BackendUnavailable, LLMError

__all__ = ["ROLES", "BackendUnavailable", "ChatRequest", "ChatResult", "ChatBackend", "image_digest", "png_data_url"]

# Who asked: usage and cache statistics are kept per role.
ROLES = ("user", "moderator", "judge", "assistant")


_TOOL_KEYS = ("tool_calls", "tool_call_id", "name")  # what a tool-calling turn adds to a message


def _tool_keys(message: dict[str, Any]) -> dict[str, Any]:
    return {k: message[k] for k in _TOOL_KEYS if k in message}


@dataclass
class ChatRequest:
    """One chat completion request.

    ``messages`` are OpenAI-style ``{"role", "content"}`` dicts; ``content`` is a string or
    a list of parts ``{"type": "text", "text": ...}`` / ``{"type": "image", "image":
    uint8 HxWx3 RGB array}``. ``temperature == 0`` means greedy decoding.

    ``schema``: the JSON Schema the reply must validate against (structured output: a
    constrained decoder locally, ``response_format`` over HTTP); ``json_mode`` asks for any
    JSON object when there is no schema. ``conversation``: a key shared by the successive
    requests of one role in one episode, so that the usage log can tell how much of each
    prompt repeats the previous one (what prefix caches reuse).

    ``tools``: function tools the model may call instead of answering (OpenAI's
    ``{"type": "function", "function": {...}}`` format), for backends with
    ``supports_tools``; ``tool_choice`` ("auto", "none", ...) as the API takes it. Messages
    may then carry an assistant turn's ``tool_calls`` and ``role: "tool"`` results with their
    ``tool_call_id``; the reply's calls are ``ChatResult.tool_calls``.
    """

    messages: list[dict[str, Any]]
    role: str = "assistant"
    max_tokens: int = 256
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int = 0
    json_mode: bool = False  # ask the server for a JSON object where it supports it
    schema: dict[str, Any] | None = None
    conversation: str | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | None = None

    def __post_init__(self):
        if self.role not in ROLES:
            raise ValueError(f"role must be one of {ROLES}, got {self.role!r}")
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be positive, got {self.max_tokens!r}")
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature!r}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p!r}")
        if not self.messages:
            raise ValueError("messages must not be empty")

    def has_images(self) -> bool:
        return any(
            isinstance(m.get("content"), list) and any(p.get("type") == "image" for p in m["content"])
            for m in self.messages
        )

    def text_messages(self) -> list[dict[str, str]]:
        """The messages with images dropped and parts joined (for text-only models)."""
        out = []
        for m in self.messages:
            content = m.get("content", "")
            if isinstance(content, list):
                content = "\n".join(p.get("text", "") for p in content if p.get("type") == "text")
            out.append({"role": m["role"], "content": str(content)})
        return out

    def api_messages(
        self, image_part: Callable[[np.ndarray], dict[str, Any]], *, text_as_parts: bool = False
    ) -> list[dict[str, Any]]:
        """The messages in a chat API's form: each image part as ``image_part(pixels)`` (in
        message order), text parts as ``{"type": "text"}``; string content stays a string
        unless ``text_as_parts``."""
        out = []
        for m in self.messages:
            content = m.get("content", "")
            if isinstance(content, list):
                content = [
                    image_part(p["image"]) if p.get("type") == "image" else {"type": "text", "text": p.get("text", "")}
                    for p in content
                ]
            elif text_as_parts:
                content = [{"type": "text", "text": str(content)}]
            out.append({"role": m["role"], "content": content, **_tool_keys(m)})
        return out

    def key_payload(self, model: str) -> dict[str, Any]:
        """Everything that determines the answer, with images replaced by content hashes."""
        messages = []
        for m in self.messages:
            content = m.get("content", "")
            if isinstance(content, list):
                content = [
                    {"type": "image", "sha256": image_digest(p["image"])} if p.get("type") == "image" else p
                    for p in content
                ]
            messages.append({"role": m["role"], "content": content, **_tool_keys(m)})
        tools = {"tools": self.tools, "tool_choice": self.tool_choice} if self.tools else {}
        return tools | {
            "model": model,
            "messages": messages,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "seed": self.seed,
            "json_mode": self.json_mode,
            "schema": self.schema,
        }


@dataclass
class ChatResult:
    """The text of one completion and what it cost.

    ``error`` is set (and ``text`` empty) when this one request cannot be answered as it
    is (an ``EpisodeError``: context length, content filter); the other requests of the
    batch are answered. ``raise_for_error`` turns it into the exception.
    """

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0  # this request's share of the backend call's wall time
    cached: bool = False
    model: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    cached_prompt_tokens: int = 0  # prompt tokens the server served from its prefix cache
    latency: float = 0.0  # this request's own wall time, retries included
    retries: int = 0  # transient failures retried before this answer
    error: LLMError | None = None

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        """The tools the model called instead of (or besides) answering, as the API sent them
        (``{"id", "type": "function", "function": {"name", "arguments": JSON text}}``)."""
        calls = self.extra.get("tool_calls")
        return list(calls) if isinstance(calls, list) else []

    def raise_for_error(self) -> ChatResult:
        if self.error is not None:
            raise self.error
        return self


class ChatBackend(ABC):
    """Answers batches of chat requests. ``model`` names what answers (for the report)."""

    model: str = "backend"
    supports_images: bool = False  # True: image parts reach the model (else they are dropped)
    supports_tools: bool = False  # True: ChatRequest.tools reach the model and its calls come back

    @abstractmethod
    def chat_batch(self, requests: list[ChatRequest]) -> list[ChatResult]:
        """One result per request, in order. A request that can never succeed gets a result
        with ``error`` set (situ_gym.llm.errors: episode kind); raises BackendUnavailable
        when the backend cannot answer at all."""

    def chat(self, request: ChatRequest) -> ChatResult:
        return self.chat_batch([request])[0]

    def check(self) -> None:
        """Fail fast (BackendUnavailable, one line) when the backend cannot answer at all."""
        return None

    def close(self) -> None:
        """Release connections or models; safe to call twice."""
        return None


def image_digest(image: Any) -> str:
    """sha256 of an image array's shape, dtype and bytes."""
    arr = np.ascontiguousarray(image)
    h = hashlib.sha256(f"{arr.shape}|{arr.dtype}|".encode())
    h.update(arr.tobytes())
    return h.hexdigest()


def png_data_url(image: Any) -> str:
    """An RGB uint8 array as a ``data:image/png;base64,...`` URL (what chat APIs take)."""
    import cv2

    arr = np.ascontiguousarray(image, dtype=np.uint8)
    ok, buf = cv2.imencode(".png", cv2.cvtColor(arr, cv2.COLOR_RGB2BGR))
    if not ok:
        raise ValueError(f"cannot encode image of shape {arr.shape} as PNG")
    return "data:image/png;base64," + base64.b64encode(buf.tobytes()).decode("ascii")
