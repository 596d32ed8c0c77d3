"""Chat through any OpenAI-compatible endpoint (vLLM, `transformers serve`, llama.cpp, hosted APIs).

Uses the official ``openai`` client: its own retries with exponential backoff on rate
limits (429), server errors (5xx), timeouts and dropped connections; a thread pool caps
how many requests of a batch are in flight at once. The API key is read from an
environment variable (``OPENAI_API_KEY`` by default; local servers accept any value).
"""

from __future__ import annotations

import logging
import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from situ_gym.llm.types import (
    BackendUnavailable,
    ChatBackend,
    ChatRequest,
    ChatResult,
    png_data_url,
)

__all__ = ["OpenAIChatBackend"]

logger = logging.getLogger(__name__)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:300]


class OpenAIChatBackend(ChatBackend):
    """``model`` at ``base_url`` (None: the client's default, api.openai.com).

    ``timeout`` seconds per request, ``max_retries`` retries with backoff (the client's),
    ``concurrency`` requests in flight per batch, ``http_client`` an HTTP client of the kind the openai package takes (proxies,
    custom transports). Images go as PNG data URLs.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 60.0,
        max_retries: int = 4,
        concurrency: int = 8,
        http_client: Any = None,
        settings: Any = None,
    ):
        if settings is not None:
            timeout, max_retries, concurrency = settings.timeout, settings.retries, settings.concurrency
        try:
            import openai
        except ImportError as exc:
            raise ImportError('the OpenAI-compatible backend needs openai: pip install "situ-gym[llm]"') from exc
        if not model:
            raise ValueError("model must be a non-empty name")
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout!r}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries!r}")
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency!r}")
        api_key = os.environ.get(api_key_env)
        if not api_key:
            if base_url is None:
                raise ValueError(f"set {api_key_env} to the API key (or pass a local --base-url)")
            api_key = "EMPTY"  # local servers ignore the key but the client needs one
        self.model = model
        self.base_url = base_url
        self._openai = openai
        self.client = openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout, max_retries=max_retries,
                                    http_client=http_client)
        self._pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="openai-chat")

    def _where(self) -> str:
        return self.base_url or "the OpenAI API"

    def check(self) -> None:
        """One cheap request (``GET /models``, no retries, short timeout) before any episode."""
        try:
            self.client.with_options(max_retries=0, timeout=10.0).models.list()
        except self._openai.APIError as exc:
            raise BackendUnavailable(f"endpoint {self._where()} is not usable ({_first_line(exc)})") from exc

    @staticmethod
    def _messages(request: ChatRequest) -> list[dict[str, Any]]:
        return request.api_messages(lambda pixels: {"type": "image_url", "image_url": {"url": png_data_url(pixels)}})

    def _one(self, request: ChatRequest) -> ChatResult:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": self._messages(request),
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "top_p": request.top_p,
            "seed": request.seed,
        }
        if request.json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        t0 = time.perf_counter()
        try:
            response = self.client.chat.completions.create(**kwargs)
        except (self._openai.APIConnectionError, self._openai.APITimeoutError) as exc:
            raise BackendUnavailable(f"endpoint {self._where()} stopped answering ({_first_line(exc)})") from exc
        except self._openai.APIStatusError as exc:
            if exc.status_code in (400, 422) and request.json_mode:
                # Some servers reject response_format; ask again without it.
                return self._one(ChatRequest(**{**request.__dict__, "json_mode": False}))
            raise BackendUnavailable(f"endpoint {self._where()} refused the request ({_first_line(exc)})") from exc
        seconds = time.perf_counter() - t0
        choice = response.choices[0] if response.choices else None
        text = (choice.message.content if choice is not None and choice.message else None) or ""
        usage = response.usage
        return ChatResult(
            text=text,
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            seconds=seconds,
            model=self.model,
        )

    def chat_batch(self, requests: list[ChatRequest]) -> list[ChatResult]:
        if not requests:
            return []
        t0 = time.perf_counter()
        results = list(self._pool.map(self._one, requests))
        # Requests overlap: share the batch's wall time out so per-role sums are wall time.
        wall = time.perf_counter() - t0
        for r in results:
            r.seconds = wall / len(results)
        return results

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self.client.close()
