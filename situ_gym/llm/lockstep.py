"""Lock-step batching: chat calls made from several episode threads go to the backend as one batch.

A runner stepping N episodes opens a session of N participants and steps each episode in
its own thread inside ``participant(order)``. Each LLM role's call waits until every
participant still stepping is waiting too (or has finished its step); then one
``chat_batch`` per backend carries all waiting requests, in participant order, so the
batch composition and order do not depend on thread timing. Calls from a thread that is
not a participant go straight to the backend.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from situ_gym.llm.types import ChatBackend, ChatRequest, ChatResult

__all__ = ["LockstepGate", "GATE", "chat_lockstep"]


class LockstepGate:
    def __init__(self) -> None:
        self._cv = threading.Condition()
        self._active = 0
        self._pending: list[dict[str, Any]] = []
        self._local = threading.local()
        self.batches: list[int] = []  # sizes of the flushed backend batches (for tests and figures)

    @contextmanager
    def session(self, participants: int) -> Iterator[LockstepGate]:
        """``participants`` threads will each enter ``participant`` exactly once."""
        with self._cv:
            if self._active:
                raise RuntimeError("a lock-step session is already open")
            self._active = int(participants)
        try:
            yield self
        finally:
            with self._cv:
                self._active = 0
                self._pending.clear()

    @contextmanager
    def participant(self, order: int) -> Iterator[None]:
        self._local.order = order
        try:
            yield
        finally:
            self._local.order = None
            with self._cv:
                self._active -= 1
                ready = self._ready()
            if ready:
                self._flush()

    def _ready(self) -> bool:
        return bool(self._pending) and len(self._pending) >= self._active

    def submit(self, backend: ChatBackend, requests: list[ChatRequest]) -> list[ChatResult]:
        order = getattr(self._local, "order", None)
        if order is None:
            return backend.chat_batch(requests)
        entry: dict[str, Any] = {"backend": backend, "requests": requests, "order": order, "done": False}
        with self._cv:
            self._pending.append(entry)
            ready = self._ready()
        if ready:
            self._flush()
        with self._cv:
            while not entry["done"]:
                self._cv.wait()
        if "error" in entry:
            raise entry["error"]
        return entry["results"]

    def _flush(self) -> None:
        with self._cv:
            entries, self._pending = sorted(self._pending, key=lambda e: e["order"]), []
        by_backend: dict[int, list[dict[str, Any]]] = {}
        for e in entries:
            by_backend.setdefault(id(e["backend"]), []).append(e)
        for group in by_backend.values():
            flat = [r for e in group for r in e["requests"]]
            try:
                results = group[0]["backend"].chat_batch(flat)
                self.batches.append(len(flat))
                k = 0
                for e in group:
                    e["results"] = results[k : k + len(e["requests"])]
                    k += len(e["requests"])
            except BaseException as exc:  # noqa: BLE001 - handed to every waiting caller
                for e in group:
                    e["error"] = exc
        with self._cv:
            for e in entries:
                e["done"] = True
            self._cv.notify_all()


# The process's gate: LLM roles submit through it; runners open sessions on it.
GATE = LockstepGate()


def chat_lockstep(backend: ChatBackend, requests: list[ChatRequest]) -> list[ChatResult]:
    """``backend.chat_batch(requests)``, joined with the other participants' calls when the
    calling thread takes part in a lock-step session."""
    return GATE.submit(backend, requests)
