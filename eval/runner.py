"""The one episode runner: plays a batch of episodes in lock-step, one ``act_batch`` per turn.

Every caller that plays episodes goes through ``play_batch``: the rollout CLI (through an
executor, see ``eval.executors``), training evaluation, SFT teacher data and the env
benchmark. What a caller keeps of an episode (trajectory records, frames, rewards, a
training conversation) it collects through the ``on_reset`` / ``on_step`` hooks.

An episode ends when the env says so (``terminated`` or ``truncated``; the env's
``max_turns`` truncates) and its reason is the env's ``info["termination"]``. A crash in
the env, the assistant or a hook ends only the episodes it touched: their result carries
``termination="error"``, the traceback and its cause (``error_cause``: an LLM role's
episode-level fault such as ``"context_length"``, ``"backend_unavailable"`` for a dead
endpoint, else ``"crash"``), and the others play on. A batched assistant may return an
``EpisodeError`` in place of one episode's text: that episode alone ends with its cause.
"""

from __future__ import annotations

import logging
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from agents.base import acts_in_batches, agent_info
from situ_gym.llm.errors import BackendUnavailable, EpisodeError

__all__ = ["EpisodeSpec", "EpisodeResult", "play_batch", "error_cause"]

logger = logging.getLogger(__name__)

ResetHook = Callable[[int, dict[str, Any], dict[str, Any]], None]  # (episode, obs, info)
StepHook = Callable[[int, str, dict[str, Any], dict[str, Any], bool], None]  # (episode, text, obs, info, done)
DoneHook = Callable[[int, "EpisodeResult"], None]


@dataclass(frozen=True)
class EpisodeSpec:
    """Which episode to play: the env is reset with ``seed`` and ``options={"task_id": ...}``."""

    task_id: str | None
    seed: int


@dataclass
class EpisodeResult:
    """How an episode ended: the env's termination reason (``"error"`` with the traceback and
    its cause when it failed), the assistant turns played, and seconds spent in
    ``env.reset``/``env.step``."""

    termination: str | None = None
    error: str | None = None
    error_cause: str | None = None
    turns: int = 0
    env_seconds: float = 0.0


def play_batch(
    envs: Sequence[Any],
    assistant: Any,
    episodes: Sequence[EpisodeSpec],
    *,
    on_reset: ResetHook | None = None,
    on_step: StepHook | None = None,
    on_done: DoneHook | None = None,
    lockstep: bool = False,
) -> list[EpisodeResult]:
    """Play ``episodes[i]`` on ``envs[i]`` with one assistant; never raises for an episode.

    The assistant sees ``agent_info(info)`` only. Assistants that act in batches get one
    ``act_batch`` per turn for all open episodes; the others (the per-episode default of
    ``agents.base.Assistant``) are asked episode by episode. ``lockstep=True`` steps the
    envs in threads inside one ``situ_gym.llm`` lock-step session, so that LLM shoppers'
    calls of all episodes reach their backend as one batch. ``on_done`` gets each result
    as soon as its episode ends; all results are returned in ``episodes`` order.
    """
    if len(envs) != len(episodes):
        raise ValueError(f"play_batch needs one env per episode, got {len(envs)} envs for {len(episodes)} episodes")
    results = [EpisodeResult() for _ in episodes]
    observations: list[Any] = [None] * len(episodes)

    def fail(i: int, exc: BaseException) -> None:
        finish(i, "error", _describe(exc), error_cause(exc))

    def finish(i: int, termination: str, error: str | None = None, cause: str | None = None) -> None:
        results[i].termination, results[i].error, results[i].error_cause = termination, error, cause
        if on_done is not None:
            on_done(i, results[i])

    opened, infos = [], []
    for i, spec in enumerate(episodes):
        try:
            t0 = time.perf_counter()
            options = {"task_id": spec.task_id} if spec.task_id is not None else None
            observations[i], info = envs[i].reset(seed=spec.seed, options=options)
            results[i].env_seconds += time.perf_counter() - t0
            if on_reset is not None:
                on_reset(i, observations[i], info)
            infos.append(agent_info(info))  # the caller keeps the task id, the assistant does not see it
            opened.append(i)
        except Exception as exc:  # noqa: BLE001 - a crashed episode is data, not a crashed run
            fail(i, exc)
    slot = {i: k for k, i in enumerate(opened)}  # episode -> its index in reset_batch order
    if opened:
        try:
            assistant.reset_batch([observations[i] for i in opened], infos, seeds=[episodes[i].seed for i in opened])
        except Exception as exc:  # noqa: BLE001
            for i in opened:
                fail(i, exc)
            opened = []
    batched = acts_in_batches(assistant)
    while opened:
        texts = _act(assistant, opened, observations, slot, batched, fail)
        for i, outcome in _step_envs(envs, texts, lockstep=lockstep).items():
            if isinstance(outcome, BaseException):  # the step raised
                fail(i, outcome)
                continue
            try:
                (observations[i], _reward, terminated, truncated, info), seconds = outcome
                results[i].turns += 1
                results[i].env_seconds += seconds
                done = bool(terminated or truncated)
                if on_step is not None:
                    on_step(i, texts[i], observations[i], info, done)
                if done:
                    finish(i, info["termination"])
            except Exception as exc:  # noqa: BLE001
                fail(i, exc)
        opened = [i for i in opened if results[i].termination is None]
    return results


def _act(assistant: Any, opened: list[int], observations: list[Any], slot: dict[int, int], batched: bool,
         fail: Callable[[int, BaseException], None]) -> dict[int, str]:
    """The assistant's text for each open episode; a crash fails the episodes it served, an
    ``EpisodeError`` returned for one episode fails that one."""
    texts: dict[int, Any] = {}
    if batched:
        try:
            texts = dict(zip(opened, assistant.act_batch([observations[i] for i in opened],
                                                         episodes=[slot[i] for i in opened]), strict=True))
        except Exception as exc:  # noqa: BLE001 - the whole batch failed
            for i in opened:
                fail(i, exc)
            return {}
    else:
        for i in opened:
            try:
                texts[i] = assistant.act_batch([observations[i]], episodes=[slot[i]])[0]
            except Exception as exc:  # noqa: BLE001
                fail(i, exc)
    for i, text in list(texts.items()):
        if isinstance(text, EpisodeError):
            fail(i, text)
            del texts[i]
    return texts


def error_cause(exc: BaseException) -> str:
    """The ``error_cause`` of an episode that ``exc`` ended (see the module docstring)."""
    if isinstance(exc, EpisodeError):
        return exc.cause
    if isinstance(exc, BackendUnavailable):
        return "backend_unavailable"
    return "crash"


def _describe(exc: BaseException) -> str:
    """The traceback of ``exc`` (its one-line message when it was returned, not raised)."""
    if exc.__traceback__ is None:
        return f"{type(exc).__name__}: {exc}"
    return "".join(traceback.format_exception(exc))


def _step_envs(envs: Sequence[Any], texts: dict[int, str], *, lockstep: bool) -> dict[int, Any]:
    """``env.step`` for each open episode: (the step's result, seconds), or the exception it raised."""
    if not lockstep or len(texts) <= 1:
        return {i: _timed_step(envs[i], text) for i, text in texts.items()}
    from concurrent.futures import ThreadPoolExecutor

    from situ_gym.llm import GATE

    def step(i: int, text: str) -> Any:
        with GATE.participant(i):
            return _timed_step(envs[i], text)

    with GATE.session(len(texts)), ThreadPoolExecutor(max_workers=len(texts)) as pool:
        futures = {i: pool.submit(step, i, text) for i, text in texts.items()}
        return {i: f.result() for i, f in futures.items()}


def _timed_step(env: Any, text: str) -> Any:
    try:
        t0 = time.perf_counter()
        result = env.step(text)
        return result, time.perf_counter() - t0
    except Exception as exc:  # noqa: BLE001 - recorded as the episode's error
        return exc
