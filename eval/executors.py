"""Where batches of episodes run: in this process, in local worker processes, or on Ray.

An executor maps one picklable, module-level function over chunks of work and yields
``(chunk index, outcome)`` as chunks finish, the outcome being the function's return value
or a ``ChunkFailed`` carrying the error text. A worker that dies (killed, out of memory)
is ``WorkerDied``: which of its episodes finished is unknown, so the caller stops and
``--resume`` reruns what was not saved. Results do not depend on the executor: callers
key them by chunk and sort what they keep. ``close(abort=True)`` ends the chunks in flight
at once instead of waiting for them.

Ctrl-C is the parent's alone: worker processes ignore SIGINT (a terminal sends it to the
whole process group), so an interrupt ends the run with the parent's one message instead of
a traceback from every worker; the parent's ``close(abort=True)`` ends them.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import os
import signal
import traceback
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

__all__ = ["EXECUTORS", "ChunkFailed", "WorkerDied", "InlineExecutor", "ProcessExecutor", "RayExecutor",
           "make_executor", "ignore_sigint"]

logger = logging.getLogger(__name__)

EXECUTORS = ("inline", "process", "ray")


@dataclass(frozen=True)
class ChunkFailed:
    """The chunk's function raised (in the worker); ``error`` is its traceback text."""

    error: str


class WorkerDied(RuntimeError):
    """A worker process or node went away mid-chunk."""


def ignore_sigint() -> None:
    """Worker initializer: SIGINT is for the parent (see the module docstring)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class InlineExecutor:
    """Chunks run one after the other in this process (exceptions propagate)."""

    workers = 1

    def map_unordered(self, fn: Callable[[Any], Any], chunks: Sequence[Any]) -> Iterator[tuple[int, Any]]:
        for k, chunk in enumerate(chunks):
            yield k, fn(chunk)

    def close(self, abort: bool = False) -> None:
        return None


class ProcessExecutor:
    """Chunks run in ``workers`` local processes (forkserver where available, else spawn),
    each keeping its envs and agents between chunks."""

    def __init__(self, workers: int):
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers!r}")
        self.workers = workers
        methods = mp.get_all_start_methods()
        ctx = mp.get_context("forkserver" if "forkserver" in methods else "spawn")
        self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=ignore_sigint)

    def map_unordered(self, fn: Callable[[Any], Any], chunks: Sequence[Any]) -> Iterator[tuple[int, Any]]:
        pending = {self._pool.submit(fn, chunk): k for k, chunk in enumerate(chunks)}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in sorted(done, key=pending.get):
                k = pending.pop(fut)
                try:
                    yield k, fut.result()
                except BrokenProcessPool as exc:
                    raise WorkerDied(f"a worker process died ({exc})") from exc
                except Exception:  # noqa: BLE001 - e.g. an unpicklable result
                    yield k, ChunkFailed(traceback.format_exc())

    def close(self, abort: bool = False) -> None:
        """Wait for the chunks in flight, or with ``abort`` end the workers at once (a run that
        decided to stop must not go on sending requests to a failing endpoint)."""
        if abort:
            # concurrent.futures has no public way to end running workers before Python 3.14
            # (ProcessPoolExecutor.terminate_workers); _processes is the pool's own table.
            for proc in list((getattr(self._pool, "_processes", None) or {}).values()):
                proc.terminate()
            self._pool.shutdown(wait=False, cancel_futures=True)
            return
        self._pool.shutdown(wait=True, cancel_futures=True)


class RayExecutor:
    """Chunks run as Ray tasks (one CPU each): on a local Ray started here with ``workers``
    CPUs, or on the running cluster at ``address`` (``"auto"``, ``"ray://HOST:10001"``, ...),
    whose nodes must have this package and its dependencies installed."""

    def __init__(self, workers: int, address: str | None = None):
        try:
            import ray
        except ImportError as exc:
            raise ValueError(f'--executor ray needs Ray: pip install "situ-gym[ray]" ({exc})') from exc
        self._ray = ray
        self.workers = workers
        self._owned = not ray.is_initialized()
        if self._owned:
            # Ray's own INFO lines ("Started a local Ray instance") only when the CLI is verbose
            quiet = {"log_to_driver": False, "logging_level": logging.getLogger().getEffectiveLevel()}
            # every result waited on is fetched (and its error raised) in map_unordered; the only
            # errors never fetched are of tasks a Ctrl-C killed with their workers, which Ray would
            # log as "Unhandled error ... worker died" beside the CLI's one message
            os.environ.setdefault("RAY_IGNORE_UNHANDLED_ERRORS", "1")
            try:
                if address:
                    ray.init(address=address, **quiet)
                else:
                    ray.init(num_cpus=workers, include_dashboard=False, **quiet)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                detail = str(exc).strip().splitlines()
                raise ValueError(f"cannot start Ray{f' at {address}' if address else ''}: "
                                 f"{detail[0] if detail else type(exc).__name__}") from exc
        self._refs: list[Any] = []

    def map_unordered(self, fn: Callable[[Any], Any], chunks: Sequence[Any]) -> Iterator[tuple[int, Any]]:
        ray = self._ray
        task = ray.remote(num_cpus=1, max_retries=0)(fn)
        pending = {task.remote(chunk): k for k, chunk in enumerate(chunks)}
        self._refs = list(pending)
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                k = pending.pop(ref)
                try:
                    yield k, ray.get(ref)
                except (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError,
                        ray.exceptions.ActorDiedError) as exc:
                    raise WorkerDied(f"a Ray worker died ({str(exc).splitlines()[0]})") from exc
                except ray.exceptions.RayTaskError as exc:
                    yield k, ChunkFailed(str(exc))

    def close(self, abort: bool = False) -> None:
        if self._owned:
            # Shutting down the Ray started here ends its workers. No ray.cancel first: a cancel
            # racing a task's completion trips a fatal check in Ray's core worker (ray#54798), which
            # aborted 1 in 2 interrupted runs.
            self._refs = []
            if self._ray.is_initialized():
                self._ray.shutdown()
            return
        # Someone else's cluster lives on: cancel what is still running there, never what has finished.
        running = self._ray.wait(self._refs, num_returns=len(self._refs), timeout=0)[1] if self._refs else []
        for ref in running:
            try:
                self._ray.cancel(ref, force=abort)
            except Exception:  # noqa: BLE001 - finished meanwhile or already gone
                logger.debug("cancelling a Ray task failed", exc_info=True)
        self._refs = []


def make_executor(kind: str, workers: int = 1, ray_address: str | None = None):
    """The executor named ``kind`` (one of ``EXECUTORS``)."""
    if kind == "inline":
        return InlineExecutor()
    if kind == "process":
        return ProcessExecutor(workers)
    if kind == "ray":
        return RayExecutor(workers, ray_address)
    raise ValueError(f"unknown executor {kind!r}; choose one of {list(EXECUTORS)}")
