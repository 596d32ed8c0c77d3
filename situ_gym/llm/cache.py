"""On-disk response cache keyed by the whole request, and a backend wrapper that uses it.

The key is the sha256 of the canonical JSON of the endpoint, the model name, the messages
(images as content hashes), the sampling parameters, the seed and the reply's schema, so
a rerun of the same episodes replays the same answers without calling the model, and a
reply from one server is never replayed for another. Only replies are stored: a failed
request (an error, or an empty text) is asked again next time. SQLite (stdlib) keeps the file safe
for several worker processes.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
from pathlib import Path

from situ_gym import jsonl
from situ_gym.llm.types import ChatBackend, ChatRequest, ChatResult
from situ_gym.llm.usage import METER, UsageMeter

__all__ = ["ResponseCache", "CachedBackend", "request_key"]

logger = logging.getLogger(__name__)


def request_key(request: ChatRequest, model: str, endpoint: str | None = None) -> str:
    payload = json.dumps(request.key_payload(model) | {"endpoint": endpoint}, sort_keys=True, ensure_ascii=False,
                         separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ResponseCache:
    """``get(key)`` / ``put(key, result)`` over one SQLite file."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(str(self.path), timeout=30, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            self._db.commit()
        except sqlite3.DatabaseError as exc:
            raise ValueError(f"cannot open the response cache {str(self.path)!r}: {exc}") from exc

    def get(self, key: str) -> ChatResult | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        data = jsonl.loads(row[0])
        return ChatResult(
            text=data["text"],
            prompt_tokens=data.get("prompt_tokens", 0),
            cached_prompt_tokens=data.get("cached_prompt_tokens", 0),
            completion_tokens=data.get("completion_tokens", 0),
            model=data.get("model", ""),
            cached=True,
            extra={"tool_calls": data["tool_calls"]} if data.get("tool_calls") else {},
        )

    def put(self, key: str, result: ChatResult) -> None:
        value = json.dumps(
            {"text": result.text, "prompt_tokens": result.prompt_tokens,
             "cached_prompt_tokens": result.cached_prompt_tokens,
             "completion_tokens": result.completion_tokens, "model": result.model,
             **({"tool_calls": result.tool_calls} if result.tool_calls else {})}
        )
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO responses (key, value) VALUES (?, ?)", (key, value))
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()


class CachedBackend(ChatBackend):
    """Serves hits from ``cache`` and sends only the misses to ``inner``, as one batch.

    Usage (tokens, seconds, hits, misses, errors) is recorded on ``meter`` per request role.
    ``endpoint`` (the server's URL, None for a local model) is part of every key.
    """

    def __init__(self, inner: ChatBackend, cache: ResponseCache | None, meter: UsageMeter | None = None,
                 endpoint: str | None = None):
        self.inner = inner
        self.cache = cache
        self.endpoint = endpoint
        self.meter = meter or METER
        self.model = inner.model
        self.supports_images = inner.supports_images
        self.supports_tools = inner.supports_tools

    def chat_batch(self, requests: list[ChatRequest]) -> list[ChatResult]:
        results: list[ChatResult | None] = [None] * len(requests)
        keys = [request_key(r, self.model, self.endpoint) for r in requests] if self.cache is not None else []
        misses = []
        for i in range(len(requests)):
            hit = self.cache.get(keys[i]) if self.cache is not None else None
            if hit is not None:
                results[i] = hit
            else:
                misses.append(i)
        if misses:
            answered = self.inner.chat_batch([requests[i] for i in misses])
            for i, res in zip(misses, answered, strict=True):
                results[i] = res
                if self.cache is not None and res.error is None and (res.text or res.tool_calls):
                    self.cache.put(keys[i], res)
        final = [r for r in results if r is not None]
        self.meter.record(self.model, requests, final)
        return final

    def check(self) -> None:
        self.inner.check()

    def close(self) -> None:
        self.inner.close()
        if self.cache is not None:
            self.cache.close()
