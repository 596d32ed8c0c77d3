"""Turn and episode records: what the env reports in ``info`` and what eval saves.

These are the boundary records of the toolkit. ``SituRecEnv.step`` puts a ``TurnRecord``
in ``info["turn"]``; ``eval.rollout`` collects them into one ``EpisodeRecord`` per line of
``trajectories.jsonl``; ``eval.metrics`` and ``recrm.score`` read only these files.
Everything is stored by entity id, never by SoM handle (handles are per observation).
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from situ_gym import jsonl

__all__ = [
    "ToolCall", "ExecutionResult", "TurnRecord", "EpisodeRecord", "TERMINATION_REASONS",
    "read_episodes", "parse_episode_lines",
]

logger = logging.getLogger(__name__)

TERMINATION_REASONS = (
    "success_cart_added",
    "recommendation_exhausted",
    "moderator_end",
    "motion_stall",
    "turn_limit",
    "error",  # the episode crashed; EpisodeRecord.error holds the traceback
)


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ToolCall(_Record):
    """A user tool call as issued (role handles) and resolved (entity id)."""

    name: str
    arguments: dict[str, Any] = {}
    target_id: str | None = None  # entity the target argument resolved to
    legal: bool = True  # the name is in the store's legal set
    valid: bool = True  # arguments and targets passed validation against the view
    error: str | None = None


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
    # Reward components written by reward wrappers (name -> value)
    reward: dict[str, float | None] = {}


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
    turns: list[TurnRecord] = []
    cart: list[str] = []
    termination: str
    error: str | None = None
    # Why an "error" episode ended: an LLM role's episode-level fault (situ_gym.llm.errors
    # EPISODE_CAUSES: "context_length", "content_filter", "invalid_request"), a dead
    # endpoint ("backend_unavailable"), or anything else that raised ("crash").
    error_cause: str | None = None
    frames: list[str] = []  # optional paths of saved SoM frames, relative to the run dir


# ---- trajectory files (JSON lines, one EpisodeRecord each), read by eval and recrm alike


def parse_episode_lines(text: str, path: str) -> tuple[list[EpisodeRecord], int | None]:
    """Parse every line; return the records and the index of a bad last line (or None)."""
    episodes: list[EpisodeRecord] = []
    lines = text.split("\n")
    # A file written by append_episode ends with "\n", so the final split piece is "".
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            episodes.append(EpisodeRecord.model_validate(jsonl.loads(line)))
        except (json.JSONDecodeError, ValueError) as exc:
            is_last = all(not rest.strip() for rest in lines[i + 1 :])
            if is_last:
                logger.warning(
                    "%s: dropping truncated last line %d (%d chars): %s",
                    path, i + 1, len(line), str(exc).splitlines()[0],
                )
                return episodes, i
            raise ValueError(f"{path}: line {i + 1} is not a valid EpisodeRecord: {exc}") from exc
    return episodes, None


def read_episodes(path: str | os.PathLike) -> list[EpisodeRecord]:
    """Read a trajectory file. A broken *last* line (a run killed mid-write) is dropped with
    a warning; a broken line anywhere else raises ``ValueError`` naming the line."""
    p = Path(path)
    if not p.exists():
        raise ValueError(f"trajectory file does not exist: {str(p)!r}")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{p}: not a trajectory file (not UTF-8 text at byte {exc.start})") from None
    episodes, _ = parse_episode_lines(text, str(p))
    return episodes
