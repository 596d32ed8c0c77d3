"""Turn and episode records: what the env reports in ``info`` and what eval saves.

These are the boundary records of the toolkit. ``SituRecEnv.step`` puts a ``TurnRecord``
in ``info["turn"]``; ``eval.rollout`` collects them into one ``EpisodeRecord`` per line of
``trajectories.jsonl``; ``eval.metrics`` and ``recrm.score`` read only these files.
Everything is stored by entity id, never by SoM handle (handles are per observation).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

__all__ = ["ToolCall", "ExecutionResult", "TurnRecord", "EpisodeRecord", "TERMINATION_REASONS"]

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
    frames: list[str] = []  # optional paths of saved SoM frames, relative to the run dir
