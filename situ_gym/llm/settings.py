"""How hard the chat backends try and how much they may send: timeouts, retries, caps, rates.

One ``LLMSettings`` value per process (``configure`` replaces it; backends built afterwards
use it). The rollout CLI sets it from ``--llm-timeout``, ``--llm-retries``,
``--llm-concurrency``, ``--llm-rpm``, ``--llm-tpm`` and ``--max-context``, giving each
worker process its share of the run-wide caps, so that the sum over workers never
exceeds them.

>>> s = LLMSettings(concurrency=8, rpm=600)
>>> s.share(3).concurrency, s.share(3).rpm
(2, 200.0)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

__all__ = ["LLMSettings", "SETTINGS", "configure", "current"]


@dataclass(frozen=True)
class LLMSettings:
    """``timeout`` seconds per request (the connection is closed when it passes, so the
    server can stop generating); ``retries`` transient retries per request, with
    exponential backoff from ``backoff`` seconds up to ``max_backoff`` and full jitter
    (a server's Retry-After wins); ``persistent_after`` consecutive requests whose retries
    all failed mark the endpoint dead; ``concurrency`` requests in flight per endpoint in
    this process; ``rpm`` / ``tpm`` requests / tokens per minute per endpoint (None: no
    limit); ``max_context`` the model's context in tokens when the server does not report it."""

    timeout: float = 120.0
    retries: int = 6
    backoff: float = 0.5
    max_backoff: float = 30.0
    persistent_after: int = 3
    concurrency: int = 8
    rpm: float | None = None
    tpm: float | None = None
    max_context: int | None = None

    def __post_init__(self):
        if self.timeout <= 0:
            raise ValueError(f"llm timeout must be positive, got {self.timeout!r}")
        if self.retries < 0:
            raise ValueError(f"llm retries must be >= 0, got {self.retries!r}")
        if self.backoff < 0 or self.max_backoff < self.backoff:
            raise ValueError(f"need 0 <= backoff <= max_backoff, got {self.backoff!r}, {self.max_backoff!r}")
        if self.persistent_after < 1:
            raise ValueError(f"persistent_after must be >= 1, got {self.persistent_after!r}")
        if self.concurrency < 1:
            raise ValueError(f"llm concurrency must be >= 1, got {self.concurrency!r}")
        for name in ("rpm", "tpm"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ValueError(f"llm {name} must be positive, got {value!r}")
        if self.max_context is not None and self.max_context < 1:
            raise ValueError(f"max_context must be positive, got {self.max_context!r}")

    def share(self, workers: int) -> LLMSettings:
        """This process's part of run-wide caps split over ``workers`` processes."""
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers!r}")
        if workers > self.concurrency:
            raise ValueError(f"llm concurrency {self.concurrency} is below the worker count {workers}: "
                             "every worker needs at least one request in flight")
        return dataclasses.replace(
            self,
            concurrency=self.concurrency // workers,
            rpm=None if self.rpm is None else self.rpm / workers,
            tpm=None if self.tpm is None else self.tpm / workers,
        )


SETTINGS = LLMSettings()
_current = [SETTINGS]


def configure(settings: LLMSettings | None = None, **changes) -> LLMSettings:
    """Set this process's settings (``settings`` or the current ones with ``changes``)."""
    value = settings if settings is not None else dataclasses.replace(_current[0], **changes)
    _current[0] = value
    return value


def current() -> LLMSettings:
    return _current[0]
