"""The SituRec env as an OpenEnv environment, and the FastAPI app that serves it."""

from __future__ import annotations

import functools
import inspect
import logging
import threading
import uuid
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import load_env_creator
from openenv.core.env_server.http_server import HTTPEnvServer
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import ConcurrencyConfig, EnvironmentMetadata, ServerMode

from situ_gym import ENV_IDS
from situ_gym.env import EnvSnapshot, SituRecEnv
from situ_gym.serve.messages import (
    ResetRequest,
    SituRecAction,
    SituRecObservation,
    SituRecState,
    encode_info,
    encode_obs,
    group_seed,
    registered_env_ids,
)

__all__ = ["SituRecEnvironment", "EnvPool", "create_app", "DEFAULT_REWARD", "SERVER_SIDE_ARGS", "MAX_SNAPSHOTS"]

logger = logging.getLogger(__name__)

# The reward wrapper, named by entry point as gymnasium names envs and wrappers: recrm sits
# above situ_gym in the layers (ARCHITECTURE.md), so situ_gym never imports it.
DEFAULT_REWARD = "recrm.wrapper:RecRMReward"
# SituRecEnv arguments a client may not set: they choose what runs on the server (an engine,
# an LLM simulator, a window) rather than the episode.
SERVER_SIDE_ARGS = ("store", "backend", "user", "moderator", "render_mode")
MAX_SNAPSHOTS = 64  # per session; each holds a copy of the episode (about a megabyte)


class EnvPool:
    """Envs of finished sessions, handed to the next sessions with the same settings.

    A server must not build an env per session: every SituRecEnv built stays in the language
    layer's per-scene caches for the life of the process (about 2 MB each, measured by
    ``benchmarks.serve_soak``), and building one costs 0.1 s. A pooled env is always reset
    before its next episode, which replaces the whole episode (``reset(seed=...)`` gives the
    same episode on a used env as on a new one). At most ``size`` envs wait; beyond, the
    longest-waiting one is closed.
    """

    def __init__(self, size: int):
        self.size = size
        self._free: list[tuple[tuple, gym.Env]] = []
        self._lock = threading.Lock()  # sessions close in their own threads
        # One env is built at a time: sessions that start together would otherwise all build the
        # cold caches (scene, lexicon, charset) at once, each as slowly as all of them together.
        self._build_lock = threading.Lock()

    def take(self, config: tuple, build) -> gym.Env:
        """A free env of ``config``, or ``build()``."""
        with self._lock:
            for i, (free_config, env) in enumerate(self._free):
                if free_config == config:
                    del self._free[i]
                    return env
        with self._build_lock:
            return build()

    def give(self, config: tuple, env: gym.Env) -> None:
        with self._lock:
            self._free.append((config, env))
            closing = self._free[: max(len(self._free) - self.size, 0)]
            del self._free[: len(closing)]
        for _, old in closing:
            old.close()

    def close(self) -> None:
        with self._lock:
            free, self._free = self._free, []
        for _, env in free:
            env.close()


class SituRecEnvironment(Environment[SituRecAction, SituRecObservation, SituRecState]):
    """One session's env on the server (OpenEnv makes one per WebSocket connection).

    The first reset takes ``reward(gym.make(env_id, **env_kwargs), **reward_kwargs)`` from the
    server's ``EnvPool`` (or builds it); later resets keep it while the three stay the same, so
    a session plays many episodes on one env, and closing the session gives it back.
    Branching commands keep snapshots in this session only, by handle (at most
    ``max_snapshots``); ``call_tool`` answers an assistant tool call of the current turn
    (``catalog_view="tools"``) without stepping; nothing a client sends is unpickled or evaluated.
    """

    SUPPORTS_CONCURRENT_SESSIONS = True  # every session has its own env; nothing mutable is shared

    def __init__(self, env_ids: tuple[str, ...] = ENV_IDS, reward: str | None = DEFAULT_REWARD,
                 max_snapshots: int = MAX_SNAPSHOTS, pool: EnvPool | None = None):
        super().__init__()
        self.env_ids, self.reward, self.max_snapshots = tuple(env_ids), reward, max_snapshots
        self.pool = pool or EnvPool(0)
        self._env: gym.Env | None = None
        self._config: tuple | None = None
        self._image_format = "png"
        self._snapshots: dict[str, tuple[EnvSnapshot, bool]] = {}
        self._state = SituRecState()

    # ------------------------------------------------------------------ OpenEnv API
    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> SituRecObservation:
        self._check_open()
        request = ResetRequest.model_validate({"seed": seed, "episode_id": episode_id, **kwargs})
        options = dict(request.options or {})
        group_key = options.pop("group_key", None)
        if group_key is not None:
            if request.seed is not None:
                raise ValueError("reset takes a seed or a group_key option, not both")
            seed = group_seed(group_key)
        else:
            seed = request.seed
        env_id = request.env_id or self.env_ids[0]
        env = self._env_for(env_id, request.env_kwargs, request.reward_kwargs)
        self._image_format = request.image_format
        obs, info = env.reset(seed=seed, options=options or None)
        self._state = SituRecState(episode_id=request.episode_id or uuid.uuid4().hex, env_id=env_id,
                                   task_id=info.get("task_id"), seed=seed, done=False,
                                   snapshots=list(self._snapshots))
        return self._observation(obs, info)

    def step(self, action: SituRecAction, timeout_s: float | None = None, **kwargs: Any) -> SituRecObservation:
        self._check_open()
        if self._env is None or self._state.episode_id is None:
            raise RuntimeError("step before reset: send a reset first")
        if action.command is not None:
            return self._command(action)
        obs, reward, terminated, truncated, info = self._env.step(action.text)
        self._state.step_count += 1
        self._state.done = terminated or truncated
        return self._observation(obs, info, reward=float(reward), terminated=terminated, truncated=truncated)

    @property
    def state(self) -> SituRecState:
        return self._state

    def close(self) -> None:
        """Called when the client disconnects and when the server reclaims an idle session."""
        if self._env is not None:
            self.pool.give(self._config, self._env)
        self._env, self._config = None, None
        self._snapshots.clear()
        self._state = SituRecState(closed=True)

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name="SituRec", version="0", description=(
                f"SituRecBench situated recommendation (envs {', '.join(self.env_ids)}): the action is the "
                "assistant's JSON turn ({'text': ...}), a branching command or an assistant tool call ({'command': "
                "'call_tool', 'tool': ..., 'arguments': ...}, catalog_view='tools'); the observation carries the "
                "env's observation and info (or the tool's result), the reward is RecRM's"))

    # ------------------------------------------------------------------ internals
    def _check_open(self) -> None:
        if self._state.closed:
            raise RuntimeError("this session was reclaimed by the server (idle longer than its session timeout): "
                               "open a new session")

    def _env_for(self, env_id: str, env_kwargs: dict[str, Any], reward_kwargs: dict[str, Any]) -> gym.Env:
        """The session's env for these settings: kept from the last reset, or built (the old one closed)."""
        if env_id not in self.env_ids:
            raise ValueError(f"env_id {env_id!r} is not served here; this server serves {list(self.env_ids)}")
        taken = sorted(set(env_kwargs) & set(SERVER_SIDE_ARGS))
        if taken:
            raise ValueError(f"env_kwargs {taken} are the server's to choose; a client may set the others of "
                             f"SituRecEnv: {[a for a in _env_args() if a not in SERVER_SIDE_ARGS]}")
        config = (env_id, repr(sorted(env_kwargs.items())), repr(sorted(reward_kwargs.items())))
        if config != self._config:
            if self._env is not None:
                self.pool.give(self._config, self._env)
            self._env, self._config = None, None
            self._snapshots.clear()  # they belong to the old settings, which restore would refuse

            def build() -> gym.Env:
                # Without gymnasium's passive checker: it only warns, and in gymnasium 1.4 a first reset
                # that raises (an unknown task_id) leaves it failing every later step of the session.
                env = gym.make(env_id, disable_env_checker=True, **env_kwargs)
                return env if self.reward is None else load_env_creator(self.reward)(env, **reward_kwargs)

            self._env, self._config = self.pool.take(config, build), config
        return self._env

    def _command(self, action: SituRecAction) -> SituRecObservation:
        base = self._env.unwrapped
        if action.command == "call_tool":
            if base.catalog_view != "tools":
                raise ValueError(f"call_tool needs an env made with catalog_view='tools'; this session's has "
                                 f"catalog_view={base.catalog_view!r} (reset with env_kwargs "
                                 "{'catalog_view': 'tools'})")
            # The env answers (an open episode only), records the call in the current turn and keeps
            # the per-turn cap; a bad call's answer is an "Error: ..." result, not an exception.
            return SituRecObservation(result=base.call_tool(action.tool, action.arguments), done=self._state.done)
        if action.command == "snapshot":
            if len(self._snapshots) >= self.max_snapshots:
                raise ValueError(f"this session keeps {self.max_snapshots} snapshots already: release one first")
            handle = uuid.uuid4().hex
            self._snapshots[handle] = (base.snapshot(), self._state.done)
            self._state.snapshots = list(self._snapshots)
            return SituRecObservation(handle=handle, done=self._state.done)
        if action.handle not in self._snapshots:
            raise ValueError(f"unknown snapshot handle {action.handle!r}; this session keeps {list(self._snapshots)}")
        if action.command == "release":
            del self._snapshots[action.handle]
            self._state.snapshots = list(self._snapshots)
            return SituRecObservation(handle=action.handle, done=self._state.done)
        snapshot, done = self._snapshots[action.handle]
        obs, info = base.restore(snapshot)
        self._state.task_id, self._state.done = info.get("task_id"), done
        self._state.step_count = len(base.turns)
        return self._observation(obs, info, handle=action.handle)

    def _observation(self, obs: dict, info: dict, *, reward: float | None = None, terminated: bool = False,
                     truncated: bool = False, handle: str | None = None) -> SituRecObservation:
        return SituRecObservation(obs=encode_obs(obs, self._image_format), info=encode_info(info), reward=reward,
                                  done=terminated or truncated, terminated=terminated, truncated=truncated,
                                  handle=handle)


class _QuietDisconnect:
    """OpenEnv 0.3.0 closes a finished ``/ws`` session in a ``finally`` that catches only
    RuntimeError; when the client closed first (its own client always does), starlette raises
    WebSocketDisconnect, which uvicorn logs as an ERROR traceback for a session that ended
    normally (huggingface/OpenEnv#1159). The session is already destroyed by then."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        from starlette.websockets import WebSocketDisconnect

        try:
            await self.app(scope, receive, send)
        except WebSocketDisconnect:
            if scope["type"] != "websocket":
                raise


@functools.cache
def _env_args() -> tuple[str, ...]:
    return tuple(inspect.signature(SituRecEnv.__init__).parameters)[1:]


def create_app(*, max_sessions: int = 8, session_timeout: float | None = 600.0, env_ids: tuple[str, ...] | None = None,
               reward: str | None = DEFAULT_REWARD, max_snapshots: int = MAX_SNAPSHOTS):
    """The FastAPI app: OpenEnv's routes for ``SituRecEnvironment`` sessions.

    ``env_ids``: the SituRec env ids served (the first is the default of a reset that names
    none), any registered store's (``situ_gym.stores``: register a folder store with
    ``register_store_folder`` first); default: every registered store's, now.

    Sessions are OpenEnv WebSocket sessions (``/ws``), at most ``max_sessions`` at once (the
    next is refused with ``CAPACITY_REACHED``); one idle for more than ``session_timeout``
    seconds is closed and its slot reclaimed (OpenEnv checks every ``max(timeout / 4, 5)`` s).
    OpenEnv's production mode: the stateless HTTP ``/reset`` and ``/step``, which build a fresh
    env for every request and so cannot play a multi-turn episode, are not served.
    """
    from fastapi import FastAPI

    known = registered_env_ids()
    env_ids = known if env_ids is None else tuple(env_ids)
    for env_id in env_ids:
        if env_id not in known:
            raise ValueError(f"unknown env id {env_id!r}; the registered stores' are {list(known)} (a folder store "
                             "is registered with situ_gym.stores.register_store_folder, or --store PATH)")
    if not env_ids:
        raise ValueError("env_ids must name at least one env")
    if reward is not None:
        load_env_creator(reward)  # a wrong entry point fails now, not at the first reset
    pool = EnvPool(max_sessions)
    factory = functools.partial(SituRecEnvironment, env_ids=tuple(env_ids), reward=reward,
                                max_snapshots=max_snapshots, pool=pool)
    server = HTTPEnvServer(factory, SituRecAction, SituRecObservation,
                           concurrency_config=ConcurrencyConfig(max_concurrent_envs=max_sessions,
                                                                session_timeout=session_timeout))
    app = FastAPI(title="SituRec Gym over OpenEnv", version="0")
    server.register_routes(app, mode=ServerMode.PRODUCTION)
    app.add_middleware(_QuietDisconnect)
    app.router.on_shutdown.append(pool.close)
    app.state.openenv_server = server  # tests and benchmarks read the session count from it
    return app
