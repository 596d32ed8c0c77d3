"""Turn and episode records: what the env reports in ``info`` and what eval saves.

These are the boundary records of the toolkit. ``SituRecEnv.step`` puts a ``TurnRecord``
in ``info["turn"]``; ``eval.rollout`` collects them into one ``EpisodeRecord`` per line of
``trajectories.jsonl``; ``eval.metrics`` and ``recrm.score`` read only these files.
Everything is stored by entity id, never by SoM handle (handles are per observation).
"""

from __future__ import annotations

import codecs
import json
import logging
import os
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from situ_gym import jsonl
from situ_gym.stores import ENV_VAR as STORES_ENV_VAR
from situ_gym.stores import registered_stores

__all__ = [
    "ToolCall", "AssistantToolCall", "ExecutionResult", "TurnRecord", "EpisodeRecord", "TERMINATION_REASONS",
    "read_episodes", "parse_episode_lines", "decode_trajectory", "validation_summary", "REWARD_LIMIT",
]

logger = logging.getLogger(__name__)

REWARD_LIMIT = 1e6
MAX_TURN_ATTEMPTS = 10_000  # a turn puts forward at most a few products; more is corruption

TERMINATION_REASONS = (
    "success_cart_added",
    "recommendation_exhausted",
    "moderator_end",
    "motion_stall",
    "turn_limit",
    "error",  # the episode crashed; EpisodeRecord.error holds the traceback
)


class _Record(BaseModel):
    """A record of the trajectory file format.

    In code a record is built with its fields' defaults; read from a file (validation
    context ``{"file": True}``, what :func:`parse_episode_lines` passes) every field is
    required except those in ``added_later``: the fields added after the format's first
    version, which a file written before them lacks and which read with their defaults.
    The writer (``model_dump_json``) always writes every field, so a field missing from a
    line is a damaged or hand-made record: an episode without ``turns`` would otherwise
    score as a 0-turn episode. A field added from now on has a default and goes into
    ``added_later``.
    """

    # Numbers are finite: a NaN or infinite reward, budget or pose read from a file would
    # make every mean computed from it NaN or infinite.
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    added_later: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def required_in_file(cls) -> list[str]:
        """The fields a line of a trajectory file must hold, in schema order."""
        return [name for name in cls.model_fields if name not in cls.added_later]

    @model_validator(mode="before")
    @classmethod
    def _complete_in_file(cls, data: Any, info: ValidationInfo) -> Any:
        if isinstance(data, dict) and info.context and info.context.get("file"):
            missing = [name for name in cls.required_in_file() if name not in data]
            if missing:
                more = f" (and {len(missing) - 1} more: {', '.join(missing[1:4])})" if len(missing) > 1 else ""
                raise PydanticCustomError("missing_in_file", "Field required in a trajectory file{more}",
                                          {"field": missing[0], "more": more})
        return data


class ToolCall(_Record):
    """A user tool call as issued (role handles) and resolved (entity id)."""

    name: str
    arguments: dict[str, Any] = {}
    target_id: str | None = None  # entity the target argument resolved to
    legal: bool = True  # the name is in the store's legal set
    valid: bool = True  # arguments and targets passed validation against the view
    error: str | None = None


class AssistantToolCall(_Record):
    """A catalog/map tool call the assistant made within its turn (``situ_gym.assistant_tools``),
    before its answer: the tool, its arguments as sent (the text itself when they were no JSON
    object) and the result it read (an error text starts with "Error: ", and ``ok`` is False)."""

    name: str
    arguments: dict[str, Any] | str = {}
    result: str
    ok: bool = True


class ExecutionResult(_Record):
    ok: bool
    message: str
    displacement: float = 0.0
    translational: bool = False


class TurnRecord(_Record):
    turn: int  # 1-based
    # Assistant side
    assistant_raw: str
    assistant_valid: bool
    assistant_errors: list[str] = []
    response: str  # user-facing text recovered from the output ("" if none)
    action_type: str | None = None  # one of the ten dialogue actions
    action: dict[str, Any] | None = None  # the parsed primary action as given
    navigation_goal_id: str | None = None  # Navigate: fixture/store/area entity id
    recommended_id: str | None = None  # Recommend: product entity id
    expected_user_action: ToolCall | None = None
    ranking: list[str] = []  # as given, up to 10 (may hold ids outside the catalog)
    # User side
    user_utterance: str = ""
    user_action: ToolCall | None = None
    result: ExecutionResult | None = None
    visible_before: list[str] = []  # entity ids in the view the assistant acted on
    visible_after: list[str] = []  # entity ids in the user's view after the action
    pose_after: tuple[float, float, float] = (0.0, 0.0, 0.0)  # x, y, yaw
    held_item: str | None = None
    cart: list[str] = []
    revealed: list[str] = []  # goal details the user disclosed this turn (DisclosureItem kinds)
    # Marker labels the shopper's words gave away (paper 3.3: neither role may say them), as
    # matched by situ_gym.language.names.find_marker_disclosures; recorded only, never acted on
    user_marker_disclosures: list[str] = []  # added later
    # Recommendation attempts (situ_gym.language.attempts): the products the response put
    # forward, and how many attempts the turn spent toward the env's limit
    put_forward: list[str] = []
    recommendation_attempts: int = Field(0, ge=0, le=MAX_TURN_ATTEMPTS)
    # The assistant's catalog/map tool calls of the turn, in order (catalog_view="tools" only).
    # Written only when there are some: a file of a run without tools is what it was before.
    tool_calls: list[AssistantToolCall] = Field([], exclude_if=lambda calls: not calls)
    # Reward components written by reward wrappers (name -> value), finite and within
    # +-REWARD_LIMIT (every reward of this project is within a few units: a larger value in
    # a file is corruption, and sums of such values overflow to infinity)
    reward: dict[str, float | None] = {}

    added_later: ClassVar[frozenset[str]] = frozenset({"user_marker_disclosures", "put_forward",
                                                       "recommendation_attempts", "tool_calls"})

    @field_validator("reward")
    @classmethod
    def _reward_in_range(cls, value: dict[str, float | None]) -> dict[str, float | None]:
        for name, v in value.items():
            if v is not None and abs(v) > REWARD_LIMIT:
                raise ValueError(f"reward {name[:40]!r} = {v:g} is outside +-{REWARD_LIMIT:g}")
        return value


def known_store(value: str) -> str:
    """``value`` if it names a registered store; the ValueError a record's validator raises otherwise."""
    if value not in registered_stores():
        raise ValueError(f"unknown store {value[:40]!r}; expected one of {list(registered_stores())} "
                         f"(list a store folder in ${STORES_ENV_VAR} to read its records)")
    return value


class EpisodeRecord(_Record):
    episode_id: str
    env_id: str
    store: str
    task_id: str
    profile_id: str
    subset: int
    seed: int
    agent: str
    user: str
    target_id: str
    reference_set: list[str]
    budget: float
    turns: list[TurnRecord] = []  # required in a file (see _Record), like every field not added later
    cart: list[str] = []
    termination: str
    error: str | None = None
    # Why an "error" episode ended: an LLM role's episode-level fault (situ_gym.llm.errors
    # EPISODE_CAUSES: "context_length", "content_filter", "invalid_request"), a dead
    # endpoint ("backend_unavailable"), or anything else that raised ("crash").
    error_cause: str | None = None
    frames: list[str] = []  # optional paths of saved SoM frames, relative to the run dir
    protocol: Literal["default", "paper"] = "default"  # situ_gym.protocol: the rules the episode ran under

    added_later: ClassVar[frozenset[str]] = frozenset({"error_cause", "protocol"})

    @property
    def tool_calls(self) -> int:
        """The assistant's catalog/map tool calls in the episode (``TurnRecord.tool_calls``)."""
        return sum(len(t.tool_calls) for t in self.turns)

    # metrics need the store's legal tools: an unknown store is refused at the file's line
    _known_store = field_validator("store")(classmethod(lambda cls, value: known_store(value)))


# ---- checks of decoded JSON that pydantic cannot make (free-form dict fields hold anything)

def validation_summary(exc: ValidationError) -> str:
    """The first error of a pydantic ValidationError in one line: ``field X: message``."""
    err = exc.errors()[0]
    loc = tuple(err["loc"])
    if err["type"] == "missing_in_file":  # raised by the record holding the field: name the field itself
        loc += (err["ctx"]["field"],)
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"field {jsonl.field_path(loc)}: {err['msg']}{more}"


# ---- trajectory files (JSON lines, one EpisodeRecord each), read by eval and recrm alike


def decode_trajectory(raw: bytes, path: str) -> str:
    """The text of a trajectory file's bytes (a UTF-8 BOM skipped). A multi-byte character
    cut off at the very end (a run killed mid-write) is left out for the truncated-line rule
    of :func:`parse_episode_lines`; any other byte that is not UTF-8 is a ``ValueError``
    naming the line."""
    if raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8):]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        if exc.reason == "unexpected end of data" and b"\n" not in raw[exc.start:]:
            try:
                return raw[: exc.start].decode("utf-8")
            except UnicodeDecodeError:  # pragma: no cover - exc.start is the first bad byte
                pass
        raise ValueError(f"{path}: line {line} is not UTF-8 text (byte {exc.start}: "
                         f"{raw[exc.start:exc.start + 4]!r})") from None


def parse_episode_lines(text: str, path: str) -> tuple[list[EpisodeRecord], int | None]:
    """Parse every line; return the records and the index of a dropped truncated last line
    (or None).

    A last line that has no newline after it and is not JSON is what a run killed mid-write
    leaves (``append_episode`` writes a record and its newline at once): it is dropped with
    a warning. Any other bad line, the last one included when it is complete (has its
    newline) or is JSON of the wrong shape, is a ``ValueError`` whose one-line message is
    ``"PATH: line N ..."``. Blank lines (whitespace only, "\\r" of CRLF files) are skipped.
    """
    episodes: list[EpisodeRecord] = []
    lines = text.split("\n")
    # A file written by append_episode ends with "\n", so the final split piece is "".
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            data = jsonl.decode_json(line)
        except ValueError as exc:  # JSONDecodeError, or an integer too long to convert
            if i == len(lines) - 1:  # no newline after it: cut off mid-write
                logger.warning("%s: dropping truncated last line %d (%d chars): %s",
                               path, i + 1, len(line), str(exc).splitlines()[0])
                return episodes, i
            msg = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc).splitlines()[0]
            col = f" at column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
            raise ValueError(f"{path}: line {i + 1} is not JSON: {msg}{col}") from None
        if not isinstance(data, dict):
            raise ValueError(f"{path}: line {i + 1} is not a valid EpisodeRecord: "
                             f"expected a JSON object, got {type(data).__name__}")
        bad = jsonl.bad_leaf(data) if jsonl.suspect(line) else None
        if bad is not None:
            raise ValueError(f"{path}: line {i + 1} is not a valid EpisodeRecord: "
                             f"field {jsonl.field_path(bad[0])}: {bad[1]}")
        try:
            episodes.append(EpisodeRecord.model_validate(data, context={"file": True}))
        except ValidationError as exc:
            raise ValueError(f"{path}: line {i + 1} is not a valid EpisodeRecord: "
                             f"{validation_summary(exc)}") from None
    return episodes, None


def read_episodes(path: str | os.PathLike) -> list[EpisodeRecord]:
    """Read a trajectory file. A cut-off last line (a run killed mid-write: no newline after
    it, not JSON) is dropped with a warning; any other broken line raises ``ValueError``
    naming the file and line (``"PATH: line N ..."``, one line)."""
    p = Path(path)
    if not p.exists():
        raise ValueError(f"trajectory file does not exist: {str(p)!r}")
    episodes, _ = parse_episode_lines(decode_trajectory(p.read_bytes(), str(p)), str(p))
    return episodes
