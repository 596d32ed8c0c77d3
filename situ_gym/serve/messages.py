"""The typed messages of a SituRec session over OpenEnv (action, observation, state, reset
request) and the codecs between the env's observations and infos and their JSON form (the
tools' handle of ``info["tools"]`` included: ``{"schemas": [...]}`` on the wire)."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any, Literal

import cv2
import numpy as np
from openenv.core.env_server.types import Action, Observation, State
from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from situ_gym.assistant_tools import ToolHandle
from situ_gym.records import TurnRecord
from situ_gym.scene.model import Task

__all__ = ["IMAGE_FORMATS", "COMMANDS", "EncodedArray", "SituRecAction", "SituRecObservation", "SituRecState",
           "ResetRequest", "RemoteToolHandle", "group_seed", "encode_obs", "decode_obs", "encode_info", "decode_info",
           "tool_arguments", "registered_env_ids"]

IMAGE_FORMATS = ("png", "raw")
COMMANDS = ("snapshot", "restore", "release", "call_tool")
MAX_GROUP_KEY = 1_000  # characters
# The info entries that are records in-process: sent as their JSON form, rebuilt by the client.
INFO_RECORDS: dict[str, type[BaseModel]] = {"task": Task, "turn": TurnRecord}


class EncodedArray(BaseModel):
    """A NumPy array in JSON: lossless PNG of an RGB image, or the raw bytes; base64 either way."""

    model_config = ConfigDict(extra="forbid")

    encoding: Literal["png", "raw"]
    dtype: str
    shape: tuple[int, ...]
    data: str


class SituRecAction(Action):
    """One message of a session: an assistant turn, a branching command, or a tool call.

    ``text`` is the env's action, the assistant's JSON output (``SituRecEnv``'s action space).
    ``command`` instead: ``"snapshot"`` keeps the episode's state now on the server and answers
    its ``handle``; ``"restore"`` puts the session's episode back to ``handle`` and answers the
    observation and info of that moment; ``"release"`` forgets ``handle``; ``"call_tool"``
    answers the assistant tool call ``tool(arguments)`` of the current turn in ``result``
    (``env.unwrapped.call_tool``, under ``catalog_view="tools"``): the call is recorded in the
    turn, the episode does not step. ``tool`` and ``arguments`` are passed on as sent (any
    JSON value: a bad call gets the tools' ``"Error: ..."`` result, as in-process).
    """

    text: str | None = None
    command: Literal["snapshot", "restore", "release", "call_tool"] | None = None
    handle: str | None = Field(None, max_length=64)
    tool: Any = None
    arguments: Any = None

    @model_validator(mode="after")
    def _one_kind(self) -> SituRecAction:
        # PydanticCustomError, not ValueError: OpenEnv 0.3.0 sends ``errors()`` as JSON, and a
        # ValueError's entry holds the exception itself, which fails to serialise and ends the session.
        if (self.text is None) == (self.command is None):
            raise PydanticCustomError("action_kind", "an action has either text (the assistant's turn) or a "
                                      "command, not both or neither")
        if self.command != "call_tool" and (self.tool is not None or self.arguments is not None):
            raise PydanticCustomError("action_tool", "tool and arguments belong to command 'call_tool'")
        if self.command in ("restore", "release") and self.handle is None:
            raise PydanticCustomError("action_handle", "command {command!r} needs the handle that snapshot "
                                      "answered", {"command": self.command})
        return self


class SituRecObservation(Observation):
    """What the server answers to reset, step and the branching commands.

    ``obs`` is the env's observation (texts as they are, arrays as ``EncodedArray``), ``info``
    its info in JSON form (``encode_info``); ``reward`` the wrapped env's reward (RecRM), ``done``
    ``terminated or truncated``; ``handle`` the snapshot's handle (for ``"snapshot"`` only);
    ``result`` the tool's answer (for ``"call_tool"`` only, with no obs or info).
    """

    obs: dict[str, str | EncodedArray] = {}
    info: dict[str, Any] = {}
    terminated: bool = False
    truncated: bool = False
    handle: str | None = None
    result: str | None = None


class SituRecState(State):
    """The session's state (OpenEnv's ``state`` message)."""

    env_id: str | None = None
    task_id: str | None = None
    seed: int | None = None
    done: bool = True
    snapshots: list[str] = []
    closed: bool = False  # the server reclaimed this session (idle past its timeout): open a new one


class ResetRequest(BaseModel):
    """The fields of a reset message (OpenEnv's ``reset`` data).

    ``env_id``, ``env_kwargs`` and ``reward_kwargs`` choose the env (built once per session and
    kept while they stay the same); ``seed`` and ``options`` are the env's ``reset`` arguments,
    except that ``options`` may carry ``group_key`` instead of a seed (``group_seed``).
    """

    model_config = ConfigDict(extra="forbid")

    env_id: str | None = None
    env_kwargs: dict[str, Any] = {}
    reward_kwargs: dict[str, str | int | float | bool | None] = {}
    image_format: Literal["png", "raw"] = "png"
    seed: int | None = Field(None, ge=0)
    options: dict[str, Any] | None = None
    episode_id: str | None = Field(None, max_length=255)


def group_seed(group_key: str) -> int:
    """The seed of every reset that names ``group_key``: the first 8 bytes of the key's UTF-8
    SHA-256, big-endian, as a 63-bit integer. A remote trainer sends one key per GSPO group
    (e.g. ``f"{step}/{prompt_index}"``) instead of choosing seeds, and every rollout of the group
    faces the same episode, on any server, in any process.

    >>> group_seed("step-3/prompt-1") == group_seed("step-3/prompt-1")
    True
    >>> group_seed("a") != group_seed("b") and 0 <= group_seed("a") < 2**63
    True
    """
    if not isinstance(group_key, str) or not 0 < len(group_key) <= MAX_GROUP_KEY:
        raise ValueError(f"group_key must be a non-empty string of at most {MAX_GROUP_KEY} characters, "
                         f"got {type(group_key).__name__} of length {len(group_key) if isinstance(group_key, str) else '-'}")
    digest = hashlib.sha256(group_key.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") & (2**63 - 1)


def _is_rgb_image(value: np.ndarray) -> bool:
    return value.dtype == np.uint8 and value.ndim == 3 and value.shape[2] == 3


def encode_array(value: np.ndarray, image_format: str = "png") -> EncodedArray:
    """``value`` for JSON: an RGB uint8 image as PNG when ``image_format == "png"``, else raw bytes."""
    value = np.ascontiguousarray(value)
    if image_format == "png" and _is_rgb_image(value):
        ok, png = cv2.imencode(".png", cv2.cvtColor(value, cv2.COLOR_RGB2BGR))  # a PNG in RGB order for any reader
        if not ok:
            raise ValueError(f"cannot encode an image of shape {value.shape} as PNG")
        encoding, data = "png", png.tobytes()
    else:
        encoding, data = "raw", value.tobytes()
    return EncodedArray(encoding=encoding, dtype=value.dtype.str, shape=value.shape,
                        data=base64.b64encode(data).decode("ascii"))


def decode_array(encoded: EncodedArray) -> np.ndarray:
    """The array ``encode_array`` encoded, byte for byte (a new, writable array)."""
    data = base64.b64decode(encoded.data, validate=True)
    dtype, shape = np.dtype(encoded.dtype), tuple(encoded.shape)
    if encoded.encoding == "png":
        bgr = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
        value = None if bgr is None else cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
    else:
        value = np.frombuffer(data, dtype).reshape(shape).copy() if len(data) == dtype.itemsize * int(np.prod(shape)) else None
    if value is None or value.shape != shape or value.dtype != dtype:
        raise ValueError(f"a damaged {encoded.encoding} array: expected {dtype} of shape {shape}")
    return value


def encode_obs(obs: dict[str, Any], image_format: str = "png") -> dict[str, str | EncodedArray]:
    return {key: value if isinstance(value, str) else encode_array(np.asarray(value), image_format)
            for key, value in obs.items()}


def decode_obs(obs: dict[str, str | EncodedArray]) -> dict[str, Any]:
    return {key: value if isinstance(value, str) else decode_array(value) for key, value in obs.items()}


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, ToolHandle):  # what a remote caller needs of it: the tools' schemas
        return {"schemas": _jsonable(value.schemas)}
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"info holds a {type(value).__name__}, which has no JSON form")


def encode_info(info: dict[str, Any]) -> dict[str, Any]:
    """The info in JSON form: records as their ``model_dump(mode="json")``, tuples as lists, the
    tools' handle (``info["tools"]``, under ``catalog_view="tools"``) as ``{"schemas": [...]}``."""
    return _jsonable(info)


class RemoteToolHandle(ToolHandle):
    """``info["tools"]`` of a remote env: a ``ToolHandle`` whose ``schemas`` (and ``names``) are
    the ones the server sent and whose calls go over the wire (``call(name, arguments) -> str``)."""

    def __init__(self, call, schemas: list[dict[str, Any]]):
        super().__init__(call)
        self.schemas = schemas
        self.names = tuple(s["function"]["name"] for s in schemas)

    def __repr__(self) -> str:
        return f"RemoteToolHandle({', '.join(self.names)})"


def decode_info(info: dict[str, Any], tools: ToolHandle | None = None) -> dict[str, Any]:
    """The info with its records (``task``, ``turn``) rebuilt, as the env returned it, and
    ``info["tools"]`` replaced by ``tools`` (the handle of the caller's remote env) if given."""
    out = dict(info)
    for key, record in INFO_RECORDS.items():
        if out.get(key) is not None:
            out[key] = record.model_validate(out[key])
    if tools is not None and isinstance(out.get("tools"), dict):
        out["tools"] = tools
    return out


def tool_arguments(arguments: Any) -> Any:
    """A tool call's ``arguments`` as a ``"call_tool"`` action carries them: as they are when JSON
    holds them exactly (a dict or its JSON text, None, any other JSON value), else their ``repr``
    text (a set, a tuple, an object: only a Python caller passes those), which the tools then
    answer with the error for arguments that are no JSON object."""
    try:
        if json.loads(json.dumps(arguments, allow_nan=False)) == arguments:
            return arguments
    except (TypeError, ValueError, RecursionError):
        pass
    return repr(arguments)


def registered_env_ids() -> tuple[str, ...]:
    """The env id of every registered store (``situ_gym.stores``): the paper's two, then the
    folder stores registered in this process (``register_store_folder``, ``$SITUREC_STORES``)."""
    from situ_gym.stores import registered_stores, store_spec

    return tuple(store_spec(store).env_id for store in registered_stores())
