"""The rollout's configuration: its dataclass (the CLI's flags), the episode jobs it plans,
task selection, and the settings of its LLM roles."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agents.registry import AGENTS, PROBE_AGENTS
from eval.executors import EXECUTORS
from eval.io import episode_id_for
from situ_gym import jsonl
from situ_gym.protocol import PROTOCOLS, check_protocol

__all__ = ["IDENTITY", "RolloutConfig", "EpisodeJob", "ConfigError", "store_of", "select_tasks", "make_jobs",
           "executor_of", "llm_cache", "llm_roles", "llm_settings", "judge_kwargs"]

# Fields whose change makes an existing run directory a different experiment.
IDENTITY = ("env", "agent", "user", "seed", "max_turns", "reward", "model", "env_kwargs", "reward_kwargs",
            "user_model", "moderator", "moderator_model", "protocol")


class ConfigError(ValueError):
    """A setup fault (unknown agent, bad path, dead engine, bad option): the command stops
    before the first episode and the run directory is left as it was."""


def _env_ids() -> str:
    import situ_gym

    return " | ".join([*situ_gym.STORE_OF_ENV, f"{situ_gym.CUSTOM_ENV_ID} (a store folder: --env_kwargs '{{\"store\": PATH}}')"])


_AGENT_HELP = ("assistant: " + " | ".join(name for name in AGENTS if name not in PROBE_AGENTS)
               + " | pkg.module:Class (any agents.base.Assistant subclass); reward probes (eval.probes): "
               + " | ".join(PROBE_AGENTS))


@dataclass
class RolloutConfig:
    env: str = field(default="SituRec-Supermarket-v0", metadata={"help": f"registered env id: {_env_ids()}"})
    agent: str = field(default="heuristic", metadata={"help": _AGENT_HELP})
    user: str = field(default="rule", metadata={"help": "user simulator: rule | llm (with --user-model)"})
    protocol: str = field(default="default", metadata={
        "help": f"{' | '.join(PROTOCOLS)}: paper runs SituRecBench and RecRM-Bench as written (env, shopper, "
                "moderator, reward, judge); docs/protocol.md lists every difference"})
    tasks: str = field(default="all", metadata={"help": "all | A-B (bank positions, inclusive) | id,id,... | "
                                                       "per-profile (one task per profile, seed 42; Table 7)"})
    workers: int = field(default=1, metadata={"help": "parallel workers: local processes, or local Ray CPUs"})
    executor: str | None = field(default=None, metadata={
        "help": f"{' | '.join(EXECUTORS)} (default: process when --workers > 1, else inline); results do not "
                "depend on it"})
    ray_address: str | None = field(default=None, metadata={
        "help": "with --executor ray: a running cluster (auto | ray://HOST:10001); default: start Ray here"})
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
    retry_errors: bool = field(default=False, metadata={
        "help": "with --resume, also rerun episodes a model role's own fault ended (context length, content filter)"})
    llm_timeout: float = field(default=120.0, metadata={"help": "seconds per LLM request before it is abandoned "
                                                                  "(its connection closed) and retried"})
    llm_retries: int = field(default=6, metadata={"help": "retries per LLM request on transient faults "
                                                            "(connection, timeout, 5xx, 429, malformed 200)"})
    llm_concurrency: int = field(default=8, metadata={
        "help": "LLM requests in flight per endpoint across all workers and batches of the run"})
    llm_rpm: float | None = field(default=None, metadata={"help": "requests per minute per endpoint (whole run)"})
    llm_tpm: float | None = field(default=None, metadata={"help": "tokens per minute per endpoint (whole run)"})
    max_context: int | None = field(default=None, metadata={
        "help": "the served model's context in tokens, where the server does not report it"})
    max_fallback_rate: float = field(default=0.2, metadata={
        "help": "exit 4 when any LLM role replaced more than this share of its decisions by its safe fallback"})
    price_per_mtok: str | None = field(default=None, metadata={
        "help": "INPUT,CACHED,OUTPUT prices per million tokens: the report adds an estimated cost per role"})
    no_report: bool = field(default=False, metadata={"help": "skip metrics/report/plots/viewer"})
    verbose: bool = field(default=False, metadata={
        "aliases": ["-v"], "help": "log INFO lines, libraries' included (default: warnings and errors only)"})
    # dict | str: the CLI passes JSON text, which __post_init__ decodes (as TrainingArguments does).
    env_kwargs: dict[str, Any] | str | None = field(default_factory=dict,
                                                    metadata={"help": "extra gym.make kwargs (JSON object)"})
    reward_kwargs: dict[str, Any] | str | None = field(
        default_factory=dict, metadata={"help": "recrm.RecRMReward kwargs with --reward recrm (JSON object)"}
    )

    def __post_init__(self):
        self.env_kwargs = _json_object("env_kwargs", self.env_kwargs)
        self.reward_kwargs = _json_object("reward_kwargs", self.reward_kwargs)
        check_protocol(self.protocol)
        if "protocol" in self.env_kwargs:
            raise ValueError("give the protocol as --protocol, not in env_kwargs")
        if self.executor is not None and self.executor not in EXECUTORS:
            raise ValueError(f"executor must be one of {list(EXECUTORS)}, got {self.executor!r}")
        if self.ray_address and self.executor != "ray":
            raise ValueError(f"--ray-address needs --executor ray, got executor={self.executor!r}")
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
        if not 0 <= self.max_fallback_rate <= 1:
            raise ValueError(f"max_fallback_rate must be in [0, 1], got {self.max_fallback_rate!r}")
        if self.retry_errors and not self.resume:
            raise ValueError("--retry-errors needs --resume")
        self.prices()  # checked here, used by the report
        if llm_roles(self):
            llm_settings(self).share(self.workers)  # a cap below the worker count is refused here
        if self.reward_kwargs and self.reward != "recrm":
            raise ValueError(f"reward_kwargs need --reward recrm, got reward={self.reward!r}")
        store_of(self.env, self.env_kwargs)


    def prices(self) -> tuple[float, float, float] | None:
        """``price_per_mtok`` as (input, cached input, output) dollars per million tokens."""
        if self.price_per_mtok is None:
            return None
        parts = [p.strip() for p in str(self.price_per_mtok).split(",")]
        try:
            values = tuple(float(p) for p in parts)
        except ValueError:
            values = ()
        if len(values) != 3 or any(not v >= 0 for v in values):
            raise ValueError(f"price_per_mtok must be INPUT,CACHED,OUTPUT (three numbers >= 0, dollars per "
                             f"million tokens), got {self.price_per_mtok!r}")
        return values


def llm_settings(config: RolloutConfig):
    """The run-wide LLM settings of ``config`` (each worker process takes ``.share(workers)``)."""
    from situ_gym.llm.settings import LLMSettings

    return LLMSettings(timeout=config.llm_timeout, retries=config.llm_retries, concurrency=config.llm_concurrency,
                       rpm=config.llm_rpm, tpm=config.llm_tpm, max_context=config.max_context)


def _json_object(name: str, value: Any) -> dict[str, Any]:
    """A kwargs field as a dict: given as one, or as JSON object text (the CLI's form)."""
    if value is None:
        return {}
    if isinstance(value, str):
        try:
            value = jsonl.loads(value)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{name} is not JSON ({exc.msg} at column {exc.colno}): {value!r}") from None
    if not isinstance(value, dict):
        raise ValueError(f"{name} must be a JSON object like '{{\"image_size\": [320, 240]}}', got {value!r}")
    return value


def executor_of(config: RolloutConfig, chunks: int) -> str:
    """The executor a run uses: the one asked for, else processes when several workers have
    several chunks of work."""
    if config.executor is not None:
        return config.executor
    return "process" if config.workers > 1 and chunks > 1 else "inline"


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


def store_of(env_id: str, env_kwargs: dict[str, Any] | None = None) -> str:
    """The store an env id plays: its registered store, or ``env_kwargs["store"]`` (a store
    folder, for ``SituRec-Custom-v0``)."""
    import gymnasium as gym

    import situ_gym  # noqa: F401  (registers the envs gym.spec looks up)
    from situ_gym.stores import StoreError, store_spec

    try:
        spec = gym.spec(env_id)
    except gym.error.Error:
        spec = None
    if spec is None or spec.entry_point != "situ_gym.env:SituRecEnv":
        raise ValueError(f"unknown env {env_id!r}; choose one of {_env_ids()}")
    store = (env_kwargs or {}).get("store", spec.kwargs.get("store"))
    if store is None:
        raise ValueError(f"{env_id} plays a store folder: give --env_kwargs '{{\"store\": \"PATH\"}}'")
    try:
        return store_spec(store).id
    except StoreError as e:
        raise ValueError(str(e)) from None


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


def llm_cache(config: RolloutConfig) -> str | None:
    from situ_gym.llm import default_cache_path

    if config.llm_cache in ("none", ""):
        return None
    return config.llm_cache or str(default_cache_path())


def llm_roles(config: RolloutConfig) -> dict[str, tuple[str, str | None]]:
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


def judge_kwargs(config: RolloutConfig) -> dict[str, Any]:
    """``eval.judge.make_judge`` arguments: the run's protocol for either judge, the model for "llm"."""
    if config.judge != "llm":
        return {"protocol": config.protocol}
    return {"protocol": config.protocol, "model": config.judge_model, "base_url": config.judge_base_url,
            "cache": llm_cache(config)}


def make_jobs(config: RolloutConfig) -> list[EpisodeJob]:
    from situ_gym.scene.loader import load_task_bank

    bank = load_task_bank(store_of(config.env, config.env_kwargs))
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
