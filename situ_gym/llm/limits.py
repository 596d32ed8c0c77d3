"""Per-endpoint caps shared by every chat backend of the process: requests in flight,
requests per minute and tokens per minute (``LLMSettings.concurrency`` / ``rpm`` / ``tpm``).

Rates are kept by the ``limits`` package (in the ``llm`` extra). Why that one: it is
maintained, synchronous and thread-safe (its in-memory storage locks per key), so it fits
our thread-based backend, and it never sleeps itself, so our waits stay interruptible by
``close()``. ``aiolimiter`` is asyncio-only; ``pyrate-limiter`` blocks inside its own acquire,
which a closing backend cannot cut short. Requests per minute use its exact moving window
(one entry per request); tokens per minute use its sliding-window counter, which costs O(1)
per request where a moving window would store one entry per token.

>>> import threading
>>> from situ_gym.llm.settings import LLMSettings
>>> caps = EndpointLimits("http://127.0.0.1:8000/v1", LLMSettings(concurrency=2))
>>> with caps.slot(threading.Event()):
...     caps.in_flight
1
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from situ_gym.llm.settings import LLMSettings

__all__ = ["EndpointLimits", "Cancelled"]

_POLL = 0.05  # seconds between looks at the stop event while waiting for a slot
_MAX_RATE_WAIT = 1.0  # re-read the window at least this often while waiting for a rate


class Cancelled(Exception):
    """The wait was cut short by its stop event (the backend is closing or the call failed)."""


_STORAGE: list[Any] = []  # the process's one in-memory rate storage, made on first use
_STORAGE_LOCK = threading.Lock()


def _storage() -> Any:
    with _STORAGE_LOCK:
        if not _STORAGE:
            try:
                from limits.storage import MemoryStorage
            except ImportError as exc:
                raise ImportError('llm rpm/tpm limits need the limits package: pip install "situ-gym[llm]"') from exc
            _STORAGE.append(MemoryStorage())
        return _STORAGE[0]


def _per_minute(rate: float) -> Any:
    """``rate`` per minute as a ``limits`` item; a fractional rate is floored (a worker's
    share must not round up past its part of a run-wide cap), one below 1/min becomes one
    per ``ceil(60 / rate)`` seconds."""
    from limits import RateLimitItemPerMinute, RateLimitItemPerSecond

    if rate >= 1:
        return RateLimitItemPerMinute(int(rate))
    return RateLimitItemPerSecond(1, math.ceil(60 / rate))


class EndpointLimits:
    """The caps of one endpoint (``url``), shared by every backend of the process that talks
    to it. The caps are those of the settings last given (``configure``)."""

    def __init__(self, url: str, settings: LLMSettings):
        self.url = url
        self._cond = threading.Condition()
        self.in_flight = 0
        self.max_in_flight = 0  # high-water mark, for reports and tests
        self._rate_lock = threading.Lock()
        self._rates: list[tuple[str, Any, Any]] = []  # (what, strategy, item)
        self._rate_key: tuple[float | None, float | None] = (None, None)
        self.configure(settings)

    def configure(self, settings: LLMSettings) -> None:
        with self._cond:
            self.concurrency = settings.concurrency
            self._cond.notify_all()
        key = (settings.rpm, settings.tpm)
        with self._rate_lock:
            if key == self._rate_key:
                return
            rates = []
            if settings.rpm is not None or settings.tpm is not None:
                storage = _storage()  # first: it says which extra to install when limits is missing
                from limits import strategies

                if settings.rpm is not None:
                    rates.append(("requests", strategies.MovingWindowRateLimiter(storage), _per_minute(settings.rpm)))
                if settings.tpm is not None:
                    rates.append(("tokens", strategies.SlidingWindowCounterRateLimiter(storage),
                                  _per_minute(settings.tpm)))
            self._rates, self._rate_key = rates, key

    @contextmanager
    def slot(self, stop: threading.Event) -> Iterator[None]:
        """Hold one of the endpoint's ``concurrency`` slots (waits for one; Cancelled on ``stop``)."""
        with self._cond:
            while self.in_flight >= self.concurrency:
                if stop.is_set():
                    raise Cancelled
                self._cond.wait(_POLL)
            if stop.is_set():
                raise Cancelled
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            yield
        finally:
            with self._cond:
                self.in_flight -= 1
                self._cond.notify()

    def admit(self, tokens: int, stop: threading.Event) -> None:
        """Wait until one more request of ``tokens`` tokens fits in the minute's rates, and
        count it (Cancelled on ``stop``). A request larger than the whole token rate waits
        for an empty window."""
        while True:
            with self._rate_lock:
                if not self._rates:
                    return
                costs = [1 if what == "requests" else max(1, min(tokens, item.amount)) for what, _, item in self._rates]
                refused = [(what, strategy, item) for (what, strategy, item), cost in zip(self._rates, costs, strict=True)
                           if not strategy.test(item, self.url, what, cost=cost)]
                if not refused:
                    for (what, strategy, item), cost in zip(self._rates, costs, strict=True):
                        strategy.hit(item, self.url, what, cost=cost)
                    return
                reset = max(strategy.get_window_stats(item, self.url, what).reset_time for what, strategy, item in refused)
            wait = min(max(reset - time.time(), 0.01), _MAX_RATE_WAIT)
            if stop.wait(wait):
                raise Cancelled

    def wake(self) -> None:
        """Let waiters look at their stop events now."""
        with self._cond:
            self._cond.notify_all()
