"""RemoteEnv: a ``gymnasium.Env`` whose episodes run on a SituRec OpenEnv server."""

from __future__ import annotations

import copy
import functools
import json
import threading
from pathlib import Path
from typing import Any, SupportsFloat

import gymnasium as gym
from gymnasium import spaces
from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server.types import WSErrorCode
from websockets.exceptions import ConnectionClosed

from situ_gym import ENV_IDS
from situ_gym.serve.messages import (
    IMAGE_FORMATS,
    RemoteToolHandle,
    SituRecAction,
    SituRecObservation,
    SituRecState,
    decode_info,
    decode_obs,
    registered_env_ids,
    tool_arguments,
)
from situ_gym.stores import register_store_folder, store_spec

__all__ = ["RemoteEnv", "SituRecClient", "RemoteEnvError", "RequestError", "ServerBusy", "SessionLost"]


class RemoteEnvError(Exception):
    """A fault of a remote session; ``code`` is OpenEnv's error code, ``details`` its data."""

    def __init__(self, message: str, code: str | None = None, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.code, self.details = code, details or {}


class RequestError(RemoteEnvError):
    """The server refused or failed this one request (bad message, bad argument, the env's
    own error): the session goes on, and the episode too unless the env says otherwise."""


class ServerBusy(RemoteEnvError):
    """The server holds ``--max-sessions`` sessions already: retry later, or on another server."""


class SessionLost(RemoteEnvError):
    """The session is gone (the connection closed, no answer in time, or the server reclaimed it
    after its idle timeout): make a new ``RemoteEnv``."""


# OpenEnv's error codes, each with the one behaviour it means for the caller.
_FAULTS: dict[str, type[RemoteEnvError]] = {
    WSErrorCode.INVALID_JSON: RequestError,
    WSErrorCode.UNKNOWN_TYPE: RequestError,
    WSErrorCode.VALIDATION_ERROR: RequestError,
    WSErrorCode.EXECUTION_ERROR: RequestError,
    WSErrorCode.CAPACITY_REACHED: ServerBusy,
    WSErrorCode.FACTORY_ERROR: SessionLost,
    WSErrorCode.SESSION_ERROR: SessionLost,
}


def fault(data: dict[str, Any]) -> RemoteEnvError:
    """The exception for an OpenEnv error response's data."""
    code = str(data.get("code", ""))
    message = str(data.get("message", "unknown error"))
    errors = data.get("errors")
    if errors:  # pydantic's list: which field, and what is wrong with it
        message += ": " + "; ".join(f"{'.'.join(map(str, e.get('loc', ())))}: {e.get('msg')}" for e in errors)
    return _FAULTS.get(code, RequestError)(f"server: {message} ({code or 'no code'})", code, data)


class SituRecClient(EnvClient[SituRecAction, SituRecObservation, SituRecState]):
    """OpenEnv's WebSocket client with SituRec's typed messages; server errors raise the
    ``RemoteEnvError`` their code means (``fault``)."""

    def _step_payload(self, action: SituRecAction) -> dict[str, Any]:
        return action.model_dump(exclude_none=True, exclude={"metadata"})

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[SituRecObservation]:
        obs = SituRecObservation.model_validate(
            {**payload.get("observation", {}), "reward": payload.get("reward"), "done": payload.get("done", False)})
        return StepResult(observation=obs, reward=obs.reward, done=obs.done)

    def _parse_state(self, payload: dict[str, Any]) -> SituRecState:
        return SituRecState.model_validate(payload)

    async def _send_and_receive(self, message: dict[str, Any]) -> dict[str, Any]:
        try:
            await self._send(message)
        except ConnectionClosed:
            pass  # a server that refused the session closed it before reading: its reason is queued
        try:
            response = await self._receive()
        except ConnectionClosed as exc:
            raise SessionLost(f"the server closed the session ({exc})") from exc
        except TimeoutError as exc:
            raise SessionLost(f"no answer within {self._message_timeout} s") from exc
        if response.get("type") == "error":
            raise fault(response.get("data", {}))
        return response


_SPACES_LOCK = threading.Lock()


def _spaces(env_id: str, kwargs_json: str) -> tuple[spaces.Space, spaces.Space]:
    """The in-process env's spaces, from one env built once per process and settings. Under a
    lock: RemoteEnvs made in many threads at once would otherwise each build the cold caches
    (scene, charset) at the same time, tens of seconds for 32 of them on two cores."""
    with _SPACES_LOCK:
        return _built_spaces(env_id, kwargs_json)


@functools.lru_cache(maxsize=16)
def _built_spaces(env_id: str, kwargs_json: str) -> tuple[spaces.Space, spaces.Space]:
    local = gym.make(env_id, disable_env_checker=True, **json.loads(kwargs_json))
    try:
        return local.observation_space, local.action_space
    finally:
        local.close()


def _fresh(space: spaces.Space) -> spaces.Space:
    """A copy with its own random generator. A Text space shares its charset tables, as
    ``situ_gym.spaces.text_space`` does (a deep copy costs 0.1 s each)."""
    if isinstance(space, spaces.Dict):
        return spaces.Dict({key: _fresh(sub) for key, sub in space.spaces.items()})
    if isinstance(space, spaces.Text):
        fresh = copy.copy(space)
        fresh._np_random = None
        return fresh
    return copy.deepcopy(space)


class RemoteEnv(gym.Env[dict, str]):
    """A SituRec env that runs on a server (``python -m situ_gym.serve``), as a ``gymnasium.Env``.

    ``RemoteEnv(url, env_id, **kwargs)`` plays the episodes of
    ``RecRMReward(gym.make(env_id, **kwargs))`` on the server (the server's ``--reward``; with
    ``reward_kwargs`` for the wrapper): the same spaces, observations (images decoded to the
    same uint8 arrays, byte for byte), rewards, flags and infos (``info["task"]`` and
    ``info["turn"]`` rebuilt as records) as that env in-process.

    ## Spaces
    Those of the in-process env, which the constructor builds once (and closes) to read them;
    this also checks ``kwargs`` before anything is sent.

    ## Reset options
    ``reset(seed=..., options={"task_id": id})`` as in-process, or
    ``options={"group_key": key}`` instead of a seed: the server plays
    ``seed = situ_gym.serve.messages.group_seed(key)`` (SHA-256 of the key), so every rollout
    of a GSPO group that sends the group's key faces the same episode, on any server.

    ## Branching
    ``handle = env.snapshot()`` keeps the episode's state on the server (per session, by
    handle: nothing is pickled across the wire); ``obs, info = env.restore(handle)`` puts the
    episode back to it, any number of times; ``env.release(handle)`` forgets it.

    ## Assistant tools
    Under ``catalog_view="tools"`` as in-process (``SituRecEnv``'s "Assistant tools"):
    ``env.call_tool(name, arguments) -> str`` (also ``env.unwrapped.call_tool``) answers a tool
    call of the current turn on the server, which records it in the turn
    (``info["turn"].tool_calls``) and keeps ``MAX_TOOL_CALLS_PER_TURN``; ``info["tools"]`` is a
    ``ToolHandle`` (``RemoteToolHandle``: the server's ``schemas``, calls over the wire), so an
    assistant written for the in-process tools (``heuristic-tools``) plays unchanged. A bad call
    gets the same ``"Error: ..."`` result as in-process (arguments with no JSON form, which only
    a Python caller passes, are sent as their ``repr`` text); ``call_tool`` under another view, or
    outside an open episode, raises ``RequestError``.

    ## Stores
    Any registered store's env id that the server serves (``--env``, ``--store``). The client
    builds the in-process env once to read its spaces, so it must know the store too: a folder
    store (``situ_gym.stores``) is registered in this process by ``store=PATH`` (its env id is
    then the default ``env_id``), by ``register_store_folder(PATH)`` or by ``$SITUREC_STORES``
    before the ``RemoteEnv`` is made. The folder is read here only for the spaces: the episodes
    are the server's store's, so both sides should hold the same store.

    ## Faults
    ``RequestError``: the server refused this request, the session goes on (an env error such
    as an unknown ``task_id`` or a step after the episode's end). ``ServerBusy``: the server has
    no free session; the same call may be retried later (it connects anew). ``SessionLost``:
    the connection or the session is gone (no answer within ``message_timeout_s``, or the
    session reclaimed after the server's idle timeout): this ``RemoteEnv`` is closed, make a new one. The action must be a ``str``
    (the in-process env records a non-string as an invalid turn; a server cannot receive one).

    ## Arguments
    * ``url``: the server, ``http://host:port`` or ``ws://host:port``.
    * ``env_id``: one of the registered SituRec ids the server serves (default: ``store``'s, or
      ``SituRec-Supermarket-v0``).
    * ``store``: a store folder (or a registered store id) to register here before ``env_id``
      is checked (see "Stores"); it is not sent, the server chooses its stores.
    * ``image_format``: "png" (lossless PNG, base64) or "raw" (the array's bytes, base64:
      larger, no encoding time).
    * ``reward_kwargs``: arguments of the server's reward wrapper (numbers, strings, booleans).
    * ``connect_timeout_s`` / ``message_timeout_s``: seconds to connect, and to wait for each answer.
    * ``**kwargs``: the env's arguments (``image_size``, ``max_turns``, ``protocol``, ...) except
      those the server chooses (``backend``, ``user``, ``moderator``, ``render_mode``).
    """

    metadata = {"render_modes": []}

    def __init__(self, url: str, env_id: str | None = None, *, store: str | Path | None = None,
                 image_format: str = "png", reward_kwargs: dict[str, Any] | None = None,
                 connect_timeout_s: float = 10.0, message_timeout_s: float = 300.0, **kwargs: Any):
        if store is not None:
            spec = register_store_folder(store) if isinstance(store, Path) else store_spec(store)
            if env_id is not None and env_id != spec.env_id:
                raise ValueError(f"env_id {env_id!r} is not the env id of store {spec.id!r} ({spec.env_id!r})")
            env_id = spec.env_id
        env_id = ENV_IDS[0] if env_id is None else env_id
        known = registered_env_ids()
        if env_id not in known:
            raise ValueError(f"env_id must be a registered store's, one of {known}, got {env_id!r} (a folder "
                             "store's env id is known once it is registered: RemoteEnv(..., store=PATH), "
                             "situ_gym.stores.register_store_folder(PATH) or $SITUREC_STORES)")
        if image_format not in IMAGE_FORMATS:
            raise ValueError(f"image_format must be one of {IMAGE_FORMATS}, got {image_format!r}")
        try:
            json.dumps([kwargs, reward_kwargs])
        except (TypeError, ValueError) as exc:
            raise ValueError(f"RemoteEnv sends its arguments as JSON: {exc}") from None
        self.observation_space, self.action_space = (_fresh(space) for space in _spaces(env_id, json.dumps(kwargs)))
        self.env_id, self.image_format = env_id, image_format
        self._settings = {"env_id": env_id, "env_kwargs": kwargs, "reward_kwargs": reward_kwargs or {},
                          "image_format": image_format}
        self._tools: RemoteToolHandle | None = None  # info["tools"], made at the first info that has it
        self._client = SituRecClient(url, connect_timeout_s=connect_timeout_s,
                                     message_timeout_s=message_timeout_s).sync()
        try:
            self._client.connect()
        except ConnectionError as exc:
            self._client.close()
            raise SessionLost(str(exc)) from exc

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        if isinstance(seed, int) and not isinstance(seed, bool) and seed >= 0:
            super().reset(seed=seed)  # no randomness here; keeps gymnasium's seeding contract
        answer = self._call(self._client.reset, seed=seed, options=options, **self._settings)
        return decode_obs(answer.obs), self._info(answer.info)

    def step(self, action: str) -> tuple[dict, SupportsFloat, bool, bool, dict[str, Any]]:
        if not isinstance(action, str):
            raise ValueError(f"RemoteEnv.step takes the assistant's JSON text, a str; got {type(action).__name__}")
        answer = self._call(self._client.step, SituRecAction(text=action))
        return decode_obs(answer.obs), answer.reward, answer.terminated, answer.truncated, self._info(answer.info)

    def call_tool(self, name: str, arguments: Any = None) -> str:
        """Answer one assistant tool call of the current turn on the server, which records it
        (``catalog_view="tools"``; see "Assistant tools"). ``arguments``: a dict or its JSON text."""
        answer = self._call(self._client.step, SituRecAction(command="call_tool", tool=tool_arguments(name),
                                                             arguments=tool_arguments(arguments)))
        return answer.result

    def snapshot(self) -> str:
        """Keep the episode's state now on the server; returns its handle (see "Branching")."""
        return self._call(self._client.step, SituRecAction(command="snapshot")).handle

    def restore(self, handle: str) -> tuple[dict, dict]:
        """Put the episode back to ``handle``; returns the observation and info of that moment."""
        answer = self._call(self._client.step, SituRecAction(command="restore", handle=handle))
        return decode_obs(answer.obs), self._info(answer.info)

    def release(self, handle: str) -> None:
        """Forget the snapshot ``handle`` (a session keeps a bounded number)."""
        self._call(self._client.step, SituRecAction(command="release", handle=handle))

    def state(self) -> SituRecState:
        """The session's state on the server (episode id, task, seed, steps, snapshot handles)."""
        return self._client.state()

    def close(self) -> None:
        client = getattr(self, "_client", None)
        if client is not None:
            self._client = None
            try:
                client.close()
            except (RemoteEnvError, OSError, ConnectionClosed):
                pass  # closing a lost session: nothing left to release

    def _info(self, info: dict[str, Any]) -> dict[str, Any]:
        """The info as in-process: records rebuilt, ``info["tools"]`` this env's one handle."""
        tools = info.get("tools")
        if isinstance(tools, dict) and self._tools is None:
            self._tools = RemoteToolHandle(self.call_tool, tools.get("schemas", []))
        return decode_info(info, self._tools)

    def _call(self, method, *args: Any, **kwargs: Any) -> SituRecObservation:
        if self._client is None:
            raise SessionLost("this RemoteEnv is closed or its session was lost: make a new one")
        try:
            return method(*args, **kwargs).observation
        except ServerBusy:
            self._client.disconnect()  # the server closed the refused connection; a retry opens a new one
            raise
        except SessionLost:
            self.close()  # an answer may still be on its way: the connection is out of step for good
            raise
        except RequestError as exc:
            # A session the server reclaimed answers every request with an error; its state says so.
            if self._client.state().closed:
                self.close()
                raise SessionLost(f"the server reclaimed this session after its idle timeout: make a new "
                                  f"RemoteEnv ({exc})", exc.code, exc.details) from exc
            raise
