"""Resumable parallel rollout runner: agent x tasks x repeats -> trajectories.jsonl + report.

    python -m eval.rollout --env SituRec-Supermarket-v0 --agent heuristic --user rule \\
        --tasks all --workers 2 --seed 0 --repeats 1 --out runs/sm_heuristic [--resume] \\
        [--save-frames] [--max-turns 20] [--reward recrm|none] [--model PATH] [--batch-size B] \\
        [--max-consecutive-errors 5]

Episodes run in worker processes (each builds its own env and agent); the parent alone
appends each finished episode as one JSON line (flush + fsync). Task order is fixed and
episode (task, repeat) uses seed ``seed + repeat`` with the env re-seeded at every reset,
so results do not depend on the worker count. The env and agent are built and reset once
before the first episode: a setup fault stops the command (exit 2, one line) and leaves
the run directory untouched. A crashed episode is saved with termination "error" and its
traceback; ``--max-consecutive-errors`` crashes in a row stop the run (exit 1).
``--resume`` skips (task, repeat) pairs already in the file and retries crashed ones
(their records move to errors.jsonl). At the end: metrics.json, report.md, plots and the
HTML viewer in the run directory, all in (task, repeat) order.

LLM roles (model SPEC: ``hf:gguf:smollm2`` | ``hf:PATH_OR_HUB_ID`` | ``hf:gguf:FILE`` |
``openai:NAME``, see ``situ_gym.llm.factory``): ``--user llm --user-model SPEC
[--user-base-url URL]``, ``--moderator llm [--moderator-model SPEC]`` (default: the
user's), ``--judge llm --judge-model SPEC [--judge-base-url URL]``, ``--agent openai
--model NAME --base-url URL`` or ``--agent chat --model SPEC``; ``--images`` sends
Set-of-Mark images to chat backends. Responses are cached in ``--llm-cache`` (default
``~/.cache/situ_gym/llm_responses.sqlite``; ``none`` disables), keyed by the whole request,
so a rerun replays them; tokens, seconds, cache hits/misses, re-asks and fallbacks per role
go to ``llm_usage.jsonl`` and from there into metrics.json, report.md and config.json. An
unreachable endpoint is a setup fault (exit 2 before the first episode); one that dies
mid-run stops the run (exit 1) once the episodes in flight are saved as crashed, and
``--resume`` retries them.

``--batch-size B`` plays B episodes in lock-step per process with one ``act_batch`` per
turn (one batched ``generate`` for ``--agent hf``). Rule-based agents give the same
episodes as B = 1; sampled model outputs may depend on the batch composition.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import multiprocessing as mp
import os
import platform
import sys
import traceback
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.base import agent_info
from eval.io import (
    append_episode,
    done_keys,
    drop_truncated_tail,
    episode_id_for,
    move_error_episodes,
    read_episodes,
    task_order,
)
from eval.viewer import frame_name, marks_name
from situ_gym.records import EpisodeRecord

__all__ = ["RolloutConfig", "EpisodeJob", "ConfigError", "RunStopped", "select_tasks", "run_episode", "run_batch",
           "run", "finalize", "main"]

logger = logging.getLogger(__name__)

# Fields whose change makes an existing run directory a different experiment.
_IDENTITY = ("env", "agent", "user", "seed", "max_turns", "reward", "model", "env_kwargs", "reward_kwargs",
             "user_model", "moderator", "moderator_model")


@dataclass
class RolloutConfig:
    env: str = field(default="SituRec-Supermarket-v0", metadata={"help": "registered env id"})
    agent: str = field(default="heuristic", metadata={"help": "random | heuristic | hf | openai | chat | pkg.module:Class"})
    user: str = field(default="rule", metadata={"help": "user simulator name"})
    tasks: str = field(default="all", metadata={"help": "all | A-B (bank positions, inclusive) | id,id,... | "
                                                       "per-profile (one task per profile, seed 42; Table 7)"})
    workers: int = field(default=1, metadata={"help": "worker processes (1 runs in this process)"})
    seed: int = field(default=0, metadata={"help": "base seed; repeat r uses seed + r"})
    repeats: int = field(default=1, metadata={"help": "runs per task (pass^k uses k = repeats)"})
    out: str = field(default="runs/default", metadata={"help": "run directory"})
    resume: bool = field(default=False, metadata={"help": "skip (task, repeat) pairs already saved"})
    save_frames: bool = field(default=False, metadata={"help": "save both roles' SoM frames as PNG"})
    max_turns: int = field(default=20, metadata={"help": "turn limit"})
    reward: str = field(default="none", metadata={"help": "none | recrm (wrap with recrm.RecRMReward)"})
    model: str | None = field(default=None, metadata={"help": "model path or id for --agent hf"})
    judge: str = field(default="rule", metadata={"help": "dialogue judge: rule | llm | none"})
    user_model: str | None = field(default=None, metadata={"help": "chat model SPEC for --user llm: hf:... | openai:NAME"})
    user_base_url: str | None = field(default=None, metadata={"help": "OpenAI-compatible URL for the user model"})
    moderator: str = field(default="rule", metadata={"help": "moderator: rule | llm"})
    moderator_model: str | None = field(default=None, metadata={"help": "SPEC for --moderator llm (default: --user-model)"})
    judge_model: str | None = field(default=None, metadata={"help": "chat model SPEC for --judge llm"})
    judge_base_url: str | None = field(default=None, metadata={"help": "OpenAI-compatible URL for the judge model"})
    base_url: str | None = field(default=None, metadata={"help": "OpenAI-compatible URL for --agent openai"})
    images: bool = field(default=False, metadata={"help": "send Set-of-Mark images to chat-backend roles (vision models)"})
    llm_cache: str | None = field(default=None, metadata={"help": "response cache file (default: ~/.cache/situ_gym/"
                                                                    "llm_responses.sqlite; 'none' disables)"})
    batch_size: int = field(
        default=1,
        metadata={"help": "episodes played in lock-step per process with one act_batch per turn "
                          "(one batched generate for --agent hf); results can depend on it"},
    )
    max_episodes: int | None = field(
        default=None, metadata={"help": "run at most this many new episodes (smoke runs, interrupts)"}
    )
    max_consecutive_errors: int = field(
        default=5, metadata={"help": "stop (exit 1) after this many crashed episodes in a row; 0 never stops"}
    )
    no_report: bool = field(default=False, metadata={"help": "skip metrics/report/plots/viewer"})
    env_kwargs: dict[str, Any] = field(default_factory=dict, metadata={"help": "extra gym.make kwargs (JSON)"})
    reward_kwargs: dict[str, Any] = field(
        default_factory=dict, metadata={"help": "recrm.RecRMReward kwargs with --reward recrm (JSON)"}
    )

    def __post_init__(self):
        if self.workers < 1:
            raise ValueError(f"workers must be >= 1, got {self.workers!r}")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size!r}")
        if self.repeats < 1:
            raise ValueError(f"repeats must be >= 1, got {self.repeats!r}")
        if self.max_turns < 1:
            raise ValueError(f"max_turns must be >= 1, got {self.max_turns!r}")
        if self.reward not in ("none", "recrm"):
            raise ValueError(f"reward must be 'none' or 'recrm', got {self.reward!r}")
        if self.max_episodes is not None and self.max_episodes < 0:
            raise ValueError(f"max_episodes must be >= 0, got {self.max_episodes!r}")
        if self.agent == "hf" and not self.model:
            raise ValueError("--agent hf needs --model PATH")
        if self.agent in ("openai", "chat") and not self.model:
            raise ValueError(f"--agent {self.agent} needs --model NAME (and --base-url URL for a local server)")
        if self.user == "llm" and not self.user_model:
            raise ValueError("--user llm needs --user-model SPEC (hf:PATH_OR_ID_OR_GGUF | openai:NAME)")
        if self.moderator == "llm" and not (self.moderator_model or self.user_model):
            raise ValueError("--moderator llm needs --moderator-model SPEC (or --user-model)")
        if self.judge == "llm" and not self.judge_model:
            raise ValueError("--judge llm needs --judge-model SPEC")
        if self.seed < 0:
            raise ValueError(f"seed must be >= 0, got {self.seed!r}")
        if self.max_consecutive_errors < 0:
            raise ValueError(f"max_consecutive_errors must be >= 0, got {self.max_consecutive_errors!r}")
        if not isinstance(self.env_kwargs, dict):
            raise ValueError(f"env_kwargs must be a JSON object, got {self.env_kwargs!r}")
        if not isinstance(self.reward_kwargs, dict):
            raise ValueError(f"reward_kwargs must be a JSON object, got {self.reward_kwargs!r}")
        if self.reward_kwargs and self.reward != "recrm":
            raise ValueError(f"reward_kwargs need --reward recrm, got reward={self.reward!r}")
        _store_of(self.env)


@dataclass(frozen=True)
class EpisodeJob:
    """One (task, repeat) with everything a worker needs, including the task's public-to-eval
    fields so that even an episode that crashes at reset can be recorded."""

    config: RolloutConfig
    task_id: str
    repeat: int
    profile_id: str
    subset: int
    target_id: str
    reference_set: tuple[str, ...]
    budget: float

    @property
    def seed(self) -> int:
        return self.config.seed + self.repeat

    @property
    def episode_id(self) -> str:
        return episode_id_for(self.task_id, self.repeat)


def _store_of(env_id: str) -> str:
    import situ_gym

    if env_id not in situ_gym.STORE_OF_ENV:
        raise ValueError(f"unknown env {env_id!r}; choose one of {list(situ_gym.STORE_OF_ENV)}")
    return situ_gym.STORE_OF_ENV[env_id]


def select_tasks(spec: str, task_ids: list[str]) -> list[str]:
    """Resolve ``all``, ``A-B`` / ``A`` (0-based positions in bank order, inclusive) or a
    comma list of ids against the bank's ordered ids."""
    spec = spec.strip()
    if spec == "all":
        return list(task_ids)
    if all(part.strip().isdigit() for part in spec.split("-")) and spec.count("-") <= 1:
        lo, _, hi = spec.partition("-")
        a, b = int(lo), int(hi or lo)
        if a > b:
            raise ValueError(f"task range {spec!r} is empty: its start {a} is after its end {b}")
        if b >= len(task_ids):
            raise ValueError(f"task range {spec!r} is outside 0-{len(task_ids) - 1} (the bank has {len(task_ids)} tasks)")
        return task_ids[a : b + 1]
    wanted = [s.strip() for s in spec.split(",") if s.strip()]
    unknown = [t for t in wanted if t not in set(task_ids)]
    if unknown or not wanted:
        raise ValueError(f"unknown task ids {unknown or spec!r}; e.g. {task_ids[:3]}")
    return wanted


# ------------------------------------------------------------------ worker side

_WORKER: dict[str, Any] = {}  # per process: the env and agent, built once and reused


def _llm_cache(config: RolloutConfig) -> str | None:
    from situ_gym.llm import default_cache_path

    if config.llm_cache in ("none", ""):
        return None
    return config.llm_cache or str(default_cache_path())


def _llm_roles(config: RolloutConfig) -> dict[str, tuple[str, str | None]]:
    """role -> (model SPEC, base URL) for every LLM-backed role of this run."""
    roles = {}
    if config.user == "llm":
        roles["user"] = (config.user_model, config.user_base_url)
    if config.moderator == "llm":
        roles["moderator"] = (config.moderator_model or config.user_model, config.user_base_url)
    if config.judge == "llm":
        roles["judge"] = (config.judge_model, config.judge_base_url)
    if config.agent == "openai":
        roles["assistant"] = (f"openai:{config.model}", config.base_url)
    if config.agent == "chat":
        roles["assistant"] = (config.model, config.base_url)
    return roles


def _judge_kwargs(config: RolloutConfig) -> dict[str, Any]:
    if config.judge != "llm":
        return {}
    return {"model": config.judge_model, "base_url": config.judge_base_url, "cache": _llm_cache(config)}


def _make_env(config: RolloutConfig):
    import gymnasium as gym

    import situ_gym  # noqa: F401 - registers the envs
    from situ_gym.llm import METER
    from situ_gym.user import make_moderator, make_user

    user, moderator = config.user, config.moderator
    if user == "llm" or moderator == "llm":
        METER.log_path = Path(config.out) / "llm_usage.jsonl"
    if user == "llm":
        user = make_user("llm", model=config.user_model, base_url=config.user_base_url,
                         cache=_llm_cache(config), images=config.images or None)
    if moderator == "llm":
        moderator = make_moderator("llm", model=config.moderator_model or config.user_model,
                                   base_url=config.user_base_url, cache=_llm_cache(config))
    env = gym.make(config.env, user=user, moderator=moderator, max_turns=config.max_turns, **config.env_kwargs)
    if config.reward == "recrm":
        from recrm import RecRMReward

        env = RecRMReward(env, **config.reward_kwargs)
    return env


def _state(config: RolloutConfig, n_envs: int = 1, n_agents: int = 1) -> tuple[list[Any], list[Any]]:
    """This process's envs and agents for ``config`` (built on first use, then reused;
    a slot set to None after a crash is rebuilt)."""
    from agents.registry import make_agent

    key = json.dumps(dataclasses.asdict(config), sort_keys=True, default=str)
    if _WORKER.get("key") != key:
        for env in _WORKER.get("envs", []):
            if env is not None:
                env.close()
        _WORKER.clear()
        _WORKER.update(key=key, envs=[], agents=[])
    envs, agents = _WORKER["envs"], _WORKER["agents"]
    envs.extend([None] * max(0, n_envs - len(envs)))
    agents.extend([None] * max(0, n_agents - len(agents)))
    for i in range(n_envs):
        if envs[i] is None:
            envs[i] = _make_env(config)
    for i in range(n_agents):
        if agents[i] is None:
            extra = {}
            if config.agent in ("openai", "chat"):
                from situ_gym.llm import METER

                METER.log_path = Path(config.out) / "llm_usage.jsonl"
                extra = {"base_url": config.base_url, "images": config.images, "cache": _llm_cache(config)}
            agents[i] = make_agent(config.agent, model=config.model, **extra)
    return envs[:n_envs], agents[:n_agents]


def _drop(kind: str, i: int) -> None:
    """Forget a (possibly broken) env or agent after a crash; it is rebuilt on next use."""
    items = _WORKER.get(kind, [])
    if i < len(items) and items[i] is not None:
        if kind == "envs":
            try:
                items[i].close()
            except Exception:  # noqa: BLE001 - it is being thrown away
                logger.debug("closing a crashed env failed", exc_info=True)
        items[i] = None


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


def _record(job: EpisodeJob, turns: list[Any], frames: list[str], termination: str, error: str | None) -> str:
    """The EpisodeRecord of a finished (or crashed) episode, as one JSON line."""
    config = job.config
    record = EpisodeRecord(
        episode_id=job.episode_id,
        env_id=config.env,
        store=_store_of(config.env),
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
        frames=frames,
    )
    try:
        return record.model_dump_json()
    except ValueError:  # PydanticSerializationError: text no parser cleaned (e.g. a plug-in shopper's)
        from situ_gym.actions.parse import scrub_surrogates

        logger.warning("episode %s: replaced unencodable characters in its record", job.episode_id)
        return EpisodeRecord.model_validate(scrub_surrogates(record.model_dump())).model_dump_json()


def run_episode(job: EpisodeJob) -> str:
    """Play one episode and return its EpisodeRecord as JSON (never raises)."""
    config = job.config
    out = Path(config.out)
    turns: list[Any] = []
    frames: list[str] = []
    termination, error = "error", None
    try:
        (env,), (agent,) = _state(config)
        obs, info = env.reset(seed=job.seed, options={"task_id": job.task_id})
        public = agent_info(info)  # the trajectory keeps the task id, the agent does not see it
        agent.reset(obs, public, seed=job.seed)
        if config.save_frames:
            frames += _save_frames(out, job.episode_id, 1, obs, env)
        for _ in range(config.max_turns):
            text = agent.act(obs)
            obs, _reward, terminated, truncated, info = env.step(text)
            turns.append(info["turn"])
            if config.save_frames:
                frames += _save_frames(out, job.episode_id, len(turns) + 1, obs, env)
            if terminated or truncated:
                termination = info.get("termination") or ("turn_limit" if truncated else "moderator_end")
                break
        else:
            termination = "turn_limit"
    except Exception:  # noqa: BLE001 - a crashed episode is data, not a crashed run
        error = traceback.format_exc()
        termination = "error"
        _drop("envs", 0)  # rebuild env and agent for the next episode
        _drop("agents", 0)
    return _record(job, turns, frames, termination, error)


def run_batch(jobs: list[EpisodeJob], on_done: Callable[[str], None] | None = None) -> list[str]:
    """Play several episodes in lock-step: one ``act_batch`` call per turn for all open
    episodes (one batched ``generate`` for model agents). Agents with ``reset_batch``
    (e.g. ``HFPolicyAssistant``) serve every episode from one instance; others get one
    instance per episode. Each finished episode's JSON goes to ``on_done`` at once (in
    this process) and all are returned in job order. Never raises for an episode."""
    if not jobs:
        return []
    config = jobs[0].config
    out = Path(config.out)
    n = len(jobs)
    (probe,) = _state(config)[1]
    batched = hasattr(probe, "reset_batch")
    envs, agents = _state(config, n_envs=n, n_agents=1 if batched else n)
    turns: list[list[Any]] = [[] for _ in jobs]
    frames: list[list[str]] = [[] for _ in jobs]
    obs: list[Any] = [None] * n
    result: list[str | None] = [None] * n
    slot_of: dict[int, int] = {}  # job position -> episode index in reset_batch order

    def finish(i: int, termination: str, error: str | None = None) -> None:
        result[i] = _record(jobs[i], turns[i], frames[i], termination, error)
        if error is not None:
            _drop("envs", i)
        if on_done is not None:
            on_done(result[i])

    publics, seeds = [], []
    for i, job in enumerate(jobs):
        try:
            obs[i], info = envs[i].reset(seed=job.seed, options={"task_id": job.task_id})
            public = agent_info(info)  # the trajectory keeps the task id, the agent does not see it
            if batched:
                slot_of[i] = len(publics)
                publics.append(public)
                seeds.append(job.seed)
            else:
                agents[i].reset(obs[i], public, seed=job.seed)
            if config.save_frames:
                frames[i] += _save_frames(out, job.episode_id, 1, obs[i], envs[i])
        except Exception:  # noqa: BLE001
            finish(i, "error", traceback.format_exc())
    if batched and publics:
        try:
            agents[0].reset_batch([obs[i] for i in slot_of], publics, seeds=seeds)
        except Exception:  # noqa: BLE001
            tb = traceback.format_exc()
            for i in list(slot_of):
                finish(i, "error", tb)
            slot_of.clear()
    for _ in range(config.max_turns):
        open_ = [i for i in range(n) if result[i] is None]
        if not open_:
            break
        texts: dict[int, str] = {}
        if batched:
            try:
                outs = agents[0].act_batch([obs[i] for i in open_], episodes=[slot_of[i] for i in open_])
                texts = dict(zip(open_, outs, strict=True))
            except Exception:  # noqa: BLE001 - the whole batch failed
                tb = traceback.format_exc()
                for i in open_:
                    finish(i, "error", tb)
                _drop("agents", 0)
                break
        else:
            for i in open_:
                try:
                    texts[i] = agents[i].act(obs[i])
                except Exception:  # noqa: BLE001
                    finish(i, "error", traceback.format_exc())
                    _drop("agents", i)
        stepped = _step_envs(envs, texts, lockstep=config.user == "llm" or config.moderator == "llm")
        for i in texts:
            if isinstance(stepped[i], str):  # the step raised: its traceback
                finish(i, "error", stepped[i])
                continue
            try:
                obs[i], _r, terminated, truncated, info = stepped[i]
                turns[i].append(info["turn"])
                if config.save_frames:
                    frames[i] += _save_frames(out, jobs[i].episode_id, len(turns[i]) + 1, obs[i], envs[i])
                if terminated or truncated:
                    finish(i, info.get("termination") or ("turn_limit" if truncated else "moderator_end"))
            except Exception:  # noqa: BLE001
                finish(i, "error", traceback.format_exc())
    for i in range(n):
        if result[i] is None:
            finish(i, "turn_limit")
    return [r for r in result if r is not None]


def _step_envs(envs: list[Any], texts: dict[int, str], *, lockstep: bool) -> dict[int, Any]:
    """``env.step`` for each open episode: the step's result, or its traceback text.

    With LLM roles each episode steps in its own thread inside one lock-step session, so
    the shopper's (then the moderator's) calls of all episodes reach the backend as one
    batch (``situ_gym.llm.lockstep``).
    """
    from situ_gym.llm import GATE

    def step(i: int, text: str) -> Any:
        try:
            if not lockstep:
                return envs[i].step(text)
            with GATE.participant(i):
                return envs[i].step(text)
        except Exception:  # noqa: BLE001 - recorded as the episode's error
            return traceback.format_exc()

    if not lockstep or len(texts) <= 1:
        return {i: step(i, t) for i, t in texts.items()}
    from concurrent.futures import ThreadPoolExecutor

    with GATE.session(len(texts)), ThreadPoolExecutor(max_workers=len(texts)) as pool:
        futures = {i: pool.submit(step, i, t) for i, t in texts.items()}
        return {i: f.result() for i, f in futures.items()}


# ------------------------------------------------------------------ parent side


def _versions() -> dict[str, str]:
    import gymnasium
    import numpy

    import situ_gym

    return {"situ_gym": getattr(situ_gym, "__version__", "?"), "gymnasium": gymnasium.__version__,
            "numpy": numpy.__version__, "python": sys.version.split()[0], "platform": platform.platform()}


def _jobs(config: RolloutConfig) -> list[EpisodeJob]:
    from situ_gym.scene.loader import load_task_bank

    bank = load_task_bank(_store_of(config.env))
    tasks = {t.id: t for t in bank.tasks}
    if config.tasks.strip() == "per-profile":
        from eval.agreement import per_profile_tasks

        selected = per_profile_tasks(bank.tasks)
    else:
        selected = select_tasks(config.tasks, [t.id for t in bank.tasks])
    return [
        EpisodeJob(config, tid, r, tasks[tid].profile_id, tasks[tid].subset, tasks[tid].target_product_id,
                   tuple(tasks[tid].reference_set), float(tasks[tid].budget))
        for tid in selected
        for r in range(config.repeats)
    ]


def _check_reward(config: RolloutConfig) -> None:
    if config.reward != "recrm":
        return
    try:
        from recrm import RecRMReward  # noqa: F401
    except ImportError as exc:
        raise ValueError(f"--reward recrm needs recrm.RecRMReward, which is not importable ({exc})") from exc


class ConfigError(ValueError):
    """A setup fault (unknown agent, bad path, dead engine, bad option): the command stops
    before the first episode and the run directory is left as it was."""


class RunStopped(RuntimeError):
    """Too many episodes crashed in a row (an infrastructure fault, not agent behaviour)."""


def _check_config(config: RolloutConfig, out: Path) -> None:
    """Refuse a resume whose setup differs from the run directory's (reads, never writes)."""
    path = out / "config.json"
    if not (config.resume and path.exists()):
        return
    try:
        previous = json.loads(path.read_text(encoding="utf-8")).get("config", {})
    except (OSError, ValueError, AttributeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    current = dataclasses.asdict(config)
    changed = {k: (previous.get(k), current[k]) for k in _IDENTITY if previous.get(k, current[k]) != current[k]}
    if changed:
        raise ConfigError(f"--resume with a different setup than {path}: {changed}")


def _write_config(config: RolloutConfig, out: Path, argv: list[str] | None) -> None:
    payload = {"config": dataclasses.asdict(config), "versions": _versions(),
               "argv": argv if argv is not None else sys.argv}
    (out / "config.json").write_text(json.dumps(payload, indent=2, sort_keys=True, default=str), encoding="utf-8")


def _check_out(out: Path) -> None:
    """The run directory can be created and written (checked before anything is written)."""
    if out.exists():
        if not out.is_dir():
            raise ConfigError(f"--out {str(out)!r} exists and is not a directory")
        if not os.access(out, os.W_OK | os.X_OK):
            raise ConfigError(f"--out {str(out)!r} is not writable")
        return
    parent = out.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigError(f"--out {str(out)!r} cannot be created: {str(parent)!r} is not a writable directory")


def _check_setup(config: RolloutConfig, job: EpisodeJob) -> None:
    """Build the env and the agent once and reset both on the first pending task, so that a
    configuration fault stops the command before any episode is recorded."""
    try:
        (env,), (agent,) = _state(config)
        obs, info = env.reset(seed=job.seed, options={"task_id": job.task_id})
        agent.reset(obs, agent_info(info), seed=job.seed)
    except Exception as exc:  # noqa: BLE001 - any failure here is a setup fault
        _drop("envs", 0)
        _drop("agents", 0)
        detail = str(exc).strip().splitlines()
        raise ConfigError(
            f"cannot start {config.agent!r} on {config.env!r}: {type(exc).__name__}: {detail[0] if detail else ''}"
        ) from exc
    if config.workers > 1:  # workers build their own; free the parent's copy
        _drop("envs", 0)
        _drop("agents", 0)


def _check_llm(config: RolloutConfig) -> None:
    """Every LLM role's endpoint answers / model file exists, before the first episode."""
    from situ_gym.llm import BackendUnavailable, check_backend

    for role, (spec, base_url) in _llm_roles(config).items():
        try:
            check_backend(spec, base_url=base_url)
        except BackendUnavailable as exc:
            raise ConfigError(f"{role} model {spec}: {exc}") from exc


def _backend_died(error: str | None) -> str | None:
    """The message when a crashed episode's traceback ends in BackendUnavailable."""
    last = (error or "").strip().splitlines()
    if last and "BackendUnavailable:" in last[-1]:
        return last[-1].split("BackendUnavailable:", 1)[1].strip()
    return None


def _plan(config: RolloutConfig) -> tuple[Path, list[EpisodeJob], int, int]:
    """Everything checked before the run directory is touched: (out, pending jobs, episodes
    already saved, error episodes that will be retried). Raises ConfigError."""
    try:
        _check_reward(config)
        if config.judge != "none" and not config.no_report:
            from eval.judge import make_judge

            make_judge(config.judge, **_judge_kwargs(config))  # else a bad judge fails after every episode ran
        _check_llm(config)
        out = Path(config.out)
        _check_out(out)
        traj = out / "trajectories.jsonl"
        if traj.exists() and not config.resume:
            raise ConfigError(f"{traj} exists; pass --resume to continue it or choose another --out")
        _check_config(config, out)
        jobs = _jobs(config)
        saved = read_episodes(traj) if config.resume and traj.exists() else []
    except ConfigError:
        raise
    except (ValueError, OSError) as exc:
        raise ConfigError(str(exc).splitlines()[0]) from exc
    done = done_keys(ep for ep in saved if ep.termination != "error")
    retry = sum(1 for ep in saved if ep.termination == "error")
    pending = [j for j in jobs if (j.task_id, j.repeat) not in done]
    if config.max_episodes is not None:
        pending = pending[: config.max_episodes]
    if pending:
        _check_setup(config, pending[0])
    return out, pending, len(done), retry


def run(config: RolloutConfig, argv: list[str] | None = None) -> dict[str, Any] | None:
    """Run every pending episode, then write the report. Returns the metric groups (None
    with ``no_report``). Raises ConfigError before touching the run directory when the
    setup is wrong, and RunStopped after ``max_consecutive_errors`` crashes in a row."""
    from tqdm import tqdm

    out, pending, n_done, n_retry = _plan(config)
    out.mkdir(parents=True, exist_ok=True)
    traj = out / "trajectories.jsonl"
    _write_config(config, out, argv)
    if config.resume and drop_truncated_tail(traj):
        logger.warning("%s: dropped a truncated last line left by an interrupted run", traj)
    if config.resume and n_retry:
        moved = move_error_episodes(traj, out / "errors.jsonl")
        logger.info("retrying %d crashed episode(s); their records moved to %s", moved, out / "errors.jsonl")
    logger.info("%d episodes to run (%d already saved)", len(pending), n_done)

    successes = finished = errors = consecutive = 0
    bar = tqdm(total=len(pending), desc=f"{config.agent} on {config.env}", unit="ep", file=sys.stderr)

    def _save(text: str) -> None:
        nonlocal successes, finished, errors, consecutive
        record = EpisodeRecord.model_validate_json(text)
        append_episode(traj, record)
        finished += 1
        successes += bool(record.cart)
        bar.update(1)
        errors += record.error is not None
        consecutive = consecutive + 1 if record.error is not None else 0
        bar.set_postfix(success=f"{successes}/{finished}", **({"errors": errors} if errors else {}))
        died = _backend_died(record.error)
        if died:  # a dead endpoint is not the assistant's failure: stop, resume retries the episode
            raise RunStopped(f"a chat model endpoint failed: {died}; {finished} episodes saved in {traj} "
                             f"({errors} crashed, retried by --resume)")
        if config.max_consecutive_errors and consecutive >= config.max_consecutive_errors:
            last = (record.error or "").strip().splitlines()
            raise RunStopped(
                f"stopped after {consecutive} crashed episodes in a row (last: {last[-1] if last else '?'}); "
                f"{finished} of {len(pending)} episodes saved, {errors} crashed, in {traj}. "
                f"Fix the cause and rerun with --resume: crashed episodes are retried"
            )

    def _pool():
        methods = mp.get_all_start_methods()
        ctx = mp.get_context("forkserver" if "forkserver" in methods else "spawn")
        return ProcessPoolExecutor(max_workers=config.workers, mp_context=ctx)

    def _died(exc: BaseException) -> RuntimeError:
        return RuntimeError(f"a worker process died ({exc}); {finished} episodes were saved, "
                            f"rerun with --resume to finish the remaining ones")

    try:
        if config.batch_size > 1 and config.workers == 1:
            for k in range(0, len(pending), config.batch_size):
                run_batch(pending[k : k + config.batch_size], on_done=_save)
        elif config.batch_size > 1:
            chunks = [pending[k : k + config.batch_size] for k in range(0, len(pending), config.batch_size)]
            with _pool() as pool:
                try:
                    for fut in as_completed([pool.submit(run_batch, chunk) for chunk in chunks]):
                        try:
                            texts = fut.result()
                        except BrokenProcessPool as exc:
                            raise _died(exc) from exc
                        for text in texts:
                            _save(text)
                except RunStopped:
                    pool.shutdown(wait=True, cancel_futures=True)
                    raise
        elif config.workers == 1 or len(pending) <= 1:
            for job in pending:
                _save(run_episode(job))
        else:
            with _pool() as pool:
                futures = {pool.submit(run_episode, job): job for job in pending}
                try:
                    for fut in as_completed(futures):
                        try:
                            text = fut.result()
                        except BrokenProcessPool as exc:
                            # A worker died (killed, out of memory): which episode did it is
                            # unknown, so none is recorded; unsaved episodes rerun on --resume.
                            raise _died(exc) from exc
                        except Exception:  # noqa: BLE001 - e.g. an unpicklable result
                            text = _record(futures[fut], [], [], "error", traceback.format_exc())
                        _save(text)
                except RunStopped:
                    pool.shutdown(wait=True, cancel_futures=True)
                    raise
    finally:
        bar.close()
    if errors:
        logger.warning("%d of %d episodes crashed (termination 'error'); rerun with --resume to retry them",
                       errors, finished)
    if config.no_report:
        return None
    return finalize(out, judge=config.judge, judge_kwargs=_judge_kwargs(config))


def finalize(run_dir: str | Path, judge: str = "rule", judge_kwargs: dict[str, Any] | None = None) -> dict[str, Any]:
    """Score trajectories.jsonl of a run and write metrics.json, report.md, plots, viewer."""
    from eval.aggregate import load_indexes, load_tasks, summarize_groups
    from eval.judge import make_judge
    from eval.plots import write_plots
    from eval.report import write_report
    from eval.viewer import write_viewer

    run_dir = Path(run_dir)
    episodes = task_order(read_episodes(run_dir / "trajectories.jsonl"))
    stores = {ep.store for ep in episodes}
    indexes = load_indexes(stores)
    ratings = None
    if judge != "none" and episodes:
        from situ_gym.llm import METER

        METER.log_path = run_dir / "llm_usage.jsonl"
        j = make_judge(judge, **(judge_kwargs or {}))
        tasks = load_tasks(stores)
        items = [(ep, tasks.get(ep.task_id), indexes.get(ep.store)) for ep in episodes]
        ratings = j.rate_batch(items) if hasattr(j, "rate_batch") else [j.rate(*item) for item in items]
    groups = summarize_groups(episodes, indexes=indexes, ratings=ratings)
    llm = _llm_usage(run_dir)
    write_report(run_dir, groups, extra={"judge": None if ratings is None else ratings[0]["judge"],
                                         **({"llm": llm} if llm else {})})
    if llm:
        from situ_gym.llm import format_usage

        with open(run_dir / "report.md", "a", encoding="utf-8") as fh:
            fh.write("\n## LLM roles: tokens, latency, cache\n\n" + format_usage(llm) + "\n")
    if episodes:
        write_plots(run_dir, groups)
    write_viewer(run_dir, episodes, indexes, ratings)
    return groups


def _llm_usage(run_dir: Path) -> dict[str, Any]:
    """LLM usage per role from llm_usage.jsonl (also recorded in config.json)."""
    from situ_gym.llm import read_usage, summarize_usage

    summary = summarize_usage(read_usage(run_dir / "llm_usage.jsonl"))
    if not summary:
        return {}
    config_path = run_dir / "config.json"
    if config_path.exists():
        payload = json.loads(config_path.read_text(encoding="utf-8"))
        payload["llm_usage"] = summary
        config_path.write_text(json.dumps(payload, indent=2, sort_keys=True, default=str), encoding="utf-8")
    return summary


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m eval.rollout", description=__doc__.split("\n")[0])
    for f in dataclasses.fields(RolloutConfig):
        flag = "--" + f.name.replace("_", "-")
        help_ = f.metadata.get("help", "")
        type_name = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
        if type_name == "bool":
            parser.add_argument(flag, action="store_true", help=help_)
        elif f.name in ("env_kwargs", "reward_kwargs"):
            parser.add_argument(flag, type=_json_object, default={}, help=help_)
        else:
            kind = int if type_name in ("int", "int | None") else str
            default = f.default if f.default is not dataclasses.MISSING else None
            parser.add_argument(flag, type=kind, default=default, help=f"{help_} (default: {default})")
    return parser


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not JSON ({exc.msg} at column {exc.colno}): {text!r}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"must be a JSON object like '{{\"image_size\": [320, 240]}}', got {text!r}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        config = RolloutConfig(**vars(args))
        groups = run(config, argv=sys.argv if argv is None else argv)
    except ValueError as exc:  # ConfigError and the config's own checks: nothing was run
        parser.error(str(exc).splitlines()[0])
    except (RunStopped, RuntimeError) as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{parser.prog}: interrupted; every finished episode is saved in {args.out}, "
              "rerun the same command with --resume to finish", file=sys.stderr)
        return 130
    if groups is not None:
        from eval.report import format_console

        print(format_console(groups))
        print(f"\nrun directory: {config.out} (report.md, metrics.json, index.html)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
