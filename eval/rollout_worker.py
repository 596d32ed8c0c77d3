"""The rollout's worker side: each process (or Ray worker) builds its envs and assistant once,
plays chunks of episode jobs through ``eval.runner.play_batch`` and returns their records."""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path
from typing import Any

from eval.rollout_config import (
    EpisodeJob,
    RolloutConfig,
    llm_cache,
    llm_roles,
    llm_settings,
    store_of,
)
from eval.runner import EpisodeSpec, play_batch
from eval.viewer import frame_name, marks_name
from situ_gym.records import EpisodeRecord

__all__ = ["make_env", "worker_state", "forget_state", "play_jobs", "episode_record"]

logger = logging.getLogger(__name__)

_WORKER: dict[str, Any] = {}  # per process: the envs and the assistant, built once and reused


def make_env(config: RolloutConfig):
    import gymnasium as gym

    import situ_gym  # noqa: F401 - registers the envs
    from situ_gym.llm import METER
    from situ_gym.user import make_moderator, make_user

    user, moderator = config.user, config.moderator
    if user == "llm" or moderator == "llm":
        METER.log_path = Path(config.out) / "llm_usage.jsonl"
    if user == "llm":
        user = make_user("llm", model=config.user_model, base_url=config.user_base_url,
                         cache=llm_cache(config), images=config.images or None)
    if moderator == "llm":
        moderator = make_moderator("llm", model=config.moderator_model or config.user_model,
                                   base_url=config.user_base_url, cache=llm_cache(config))
    env = gym.make(config.env, user=user, moderator=moderator, max_turns=config.max_turns, protocol=config.protocol,
                   **config.env_kwargs)
    if config.reward == "recrm":
        from recrm import RecRMReward

        env = RecRMReward(env, **config.reward_kwargs)
    return env


def worker_state(config: RolloutConfig, n_envs: int = 1) -> tuple[list[Any], Any]:
    """This process's first ``n_envs`` envs and its assistant for ``config`` (built on first
    use, then reused; everything is rebuilt after ``forget_state``)."""
    from agents.registry import make_agent

    key = json.dumps(dataclasses.asdict(config), sort_keys=True, default=str)
    if _WORKER.get("key") != key:
        forget_state()
        _WORKER.update(key=key, envs=[], agent=None)
        from situ_gym.llm import configure

        configure(llm_settings(config).share(config.workers) if llm_roles(config) else llm_settings(config))  # this process's part of the run-wide caps
    envs = _WORKER["envs"]
    while len(envs) < n_envs:
        envs.append(make_env(config))
    if _WORKER["agent"] is None:
        extra = {}
        if config.agent in ("openai", "chat"):
            from situ_gym.llm import METER

            METER.log_path = Path(config.out) / "llm_usage.jsonl"
            extra = {"base_url": config.base_url, "images": config.images, "cache": llm_cache(config)}
        _WORKER["agent"] = make_agent(config.agent, model=config.model, **extra)
    return envs[:n_envs], _WORKER["agent"]


def forget_state() -> None:
    """Close and forget this process's envs and assistant (after a crash they may be broken)."""
    for env in _WORKER.get("envs", []):
        try:
            env.close()
        except Exception:  # noqa: BLE001 - it is being thrown away
            logger.debug("closing a crashed env failed", exc_info=True)
    _WORKER.clear()


def play_jobs(jobs: list[EpisodeJob]) -> list[str]:
    """Play ``jobs`` in lock-step (one ``act_batch`` per turn) and return each episode's
    EpisodeRecord as JSON, in job order. Never raises for an episode."""
    if not jobs:
        return []
    config = jobs[0].config
    out = Path(config.out)
    envs, assistant = worker_state(config, len(jobs))
    turns: list[list[Any]] = [[] for _ in jobs]
    frames: list[list[str]] = [[] for _ in jobs]

    def on_reset(i: int, obs: dict[str, Any], info: dict[str, Any]) -> None:
        if config.save_frames:
            frames[i] += _save_frames(out, jobs[i].episode_id, 1, obs, envs[i])

    def on_step(i: int, text: str, obs: dict[str, Any], info: dict[str, Any], done: bool) -> None:
        turns[i].append(info["turn"])
        if config.save_frames:
            frames[i] += _save_frames(out, jobs[i].episode_id, len(turns[i]) + 1, obs, envs[i])

    results = play_batch(envs, assistant, [EpisodeSpec(job.task_id, job.seed) for job in jobs],
                         on_reset=on_reset, on_step=on_step,
                         lockstep=config.user == "llm" or config.moderator == "llm")
    if any(r.error is not None for r in results):
        forget_state()  # rebuild the envs and the assistant for the next chunk
    return [episode_record(job, turns[i], frames[i], r.termination, r.error, r.error_cause)
            for i, (job, r) in enumerate(zip(jobs, results, strict=True))]


def _save_frames(out: Path, episode_id: str, turn: int, obs: dict[str, Any], env) -> list[str]:
    import cv2
    import numpy as np

    saved = []
    images = {"assistant": obs.get("som_rgb"), "map": obs.get("map")}
    views = {"assistant": getattr(env.unwrapped, "assistant_view", None)}
    user_view = getattr(env.unwrapped, "user_view", None)
    if user_view is not None and getattr(user_view, "image", None) is not None:
        images["user"] = user_view.image
        views["user"] = user_view
    for role, image in images.items():
        if image is None:
            continue
        rel = frame_name(episode_id, turn, role)
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(path), cv2.cvtColor(np.ascontiguousarray(image, dtype=np.uint8), cv2.COLOR_RGB2BGR))
        saved.append(rel)
        view = views.get(role)
        if view is not None and getattr(view, "visible", None) is not None:
            # The legend: which entity each mark in this frame stands for (the viewer names them).
            marks = [[v.handle, v.entity_id] for v in view.visible]
            (out / marks_name(rel)).write_text(json.dumps(marks), encoding="utf-8")
    return saved


def episode_record(job: EpisodeJob, turns: list[Any], frames: list[str], termination: str, error: str | None,
                   error_cause: str | None = None) -> str:
    """The EpisodeRecord of a finished (or crashed) episode, as one JSON line."""
    config = job.config
    record = EpisodeRecord(
        episode_id=job.episode_id,
        env_id=config.env,
        store=store_of(config.env, config.env_kwargs),
        task_id=job.task_id,
        profile_id=job.profile_id,
        subset=job.subset,
        seed=job.seed,
        agent=config.agent,
        user=config.user,
        target_id=job.target_id,
        reference_set=list(job.reference_set),
        budget=job.budget,
        turns=turns,
        cart=list(turns[-1].cart) if turns else [],
        termination=termination,
        error=error,
        error_cause=error_cause if error is not None else None,
        frames=frames,
        protocol=config.protocol,
    )
    try:
        return record.model_dump_json()
    except ValueError:  # PydanticSerializationError: text no parser cleaned (e.g. a plug-in shopper's)
        from situ_gym.actions.parse import scrub_surrogates

        logger.warning("episode %s: replaced unencodable characters in its record", job.episode_id)
        return EpisodeRecord.model_validate(scrub_surrogates(record.model_dump())).model_dump_json()
