"""TurnContext: everything one assistant turn is judged on, from a live env or a saved record."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from situ_gym.records import EpisodeRecord, ToolCall, TurnRecord
from situ_gym.scene.index import SceneIndex
from situ_gym.scene.model import DisclosureItem, Task

__all__ = ["TurnContext", "judged_item"]


def judged_item(
    action_type: str | None, recommended_id: str | None, ranking: Sequence[str], index: SceneIndex
) -> str | None:
    """The product a turn is judged on: the Recommend target, else the ranking's first catalog id."""
    if action_type == "Recommend" and recommended_id in index.products:
        return recommended_id
    for pid in ranking:
        if pid in index.products:
            return pid
    return None


@dataclass(frozen=True, eq=False)
class TurnContext:
    """One assistant turn plus the ground truth it is judged against.

    The user-state fields (``held_item``, ``cart``, ``visible``) describe the world as
    the assistant saw it when it acted, i.e. before this turn's user action. ``revealed``
    counts the goal details the user disclosed in *earlier* turns, by DisclosureItem kind;
    ``revealed_items`` resolves them against the task's disclosure order. ``history``
    holds the earlier TurnRecords of the episode (oldest first).
    """

    task: Task
    index: SceneIndex
    turn: int = 1
    raw: str = ""
    response: str = ""
    action_type: str | None = None
    action: dict[str, Any] | None = None
    navigation_goal_id: str | None = None
    recommended_id: str | None = None
    expected_user_action: ToolCall | None = None
    ranking: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    visible: frozenset[str] = frozenset()
    held_item: str | None = None
    cart: tuple[str, ...] = ()
    history: tuple[TurnRecord, ...] = ()
    revealed: dict[str, int] = field(default_factory=dict)

    # ----------------------------------------------------------------- builders
    @classmethod
    def from_record(
        cls,
        record: TurnRecord,
        episode: EpisodeRecord | None,
        task: Task,
        index: SceneIndex,
        history: Sequence[TurnRecord] = (),
    ) -> TurnContext:
        """Build the context of a saved turn; ``history`` = the episode's earlier turns."""
        if episode is not None and episode.task_id != task.id:
            raise ValueError(f"episode is for task {episode.task_id!r}, got task {task.id!r}")
        if task.store != index.store:
            raise ValueError(
                f"task {task.id!r} is for store {task.store!r}, index is {index.store!r}"
            )
        history = tuple(t for t in history if t.turn < record.turn)
        revealed = Counter(kind for t in history for kind in t.revealed)
        last = history[-1] if history else None
        return cls(
            task=task,
            index=index,
            turn=record.turn,
            raw=record.assistant_raw,
            response=record.response or "",
            action_type=record.action_type,
            action=record.action,
            navigation_goal_id=record.navigation_goal_id,
            recommended_id=record.recommended_id,
            expected_user_action=record.expected_user_action,
            ranking=tuple(record.ranking),
            errors=tuple(record.assistant_errors),
            visible=frozenset(record.visible_before),
            held_item=last.held_item if last else None,
            cart=tuple(last.cart) if last else (),
            history=history,
            revealed=dict(revealed),
        )

    @classmethod
    def from_env(cls, env: Any, record: TurnRecord) -> TurnContext:
        """Build the context of the turn a live env just stepped (reads ``env.unwrapped``)."""
        base = env.unwrapped
        turns = getattr(base, "turns", None) or []
        return cls.from_record(record, None, base.task, base.index, turns)

    # ---------------------------------------------------------------- derived
    @property
    def store(self) -> str:
        return self.index.store

    @property
    def revealed_items(self) -> list[DisclosureItem]:
        """The task's disclosure items already revealed (first n of each kind, in order)."""
        left = dict(self.revealed)
        out = []
        for item in self.task.disclosure:
            if left.get(item.kind, 0) > 0:
                out.append(item)
                left[item.kind] -= 1
        return out

    @property
    def dialogue(self) -> list[tuple[str, str]]:
        """The dialogue before this turn as (speaker, text), speaker "assistant" or "user"."""
        out: list[tuple[str, str]] = []
        for t in self.history:
            if t.response:
                out.append(("assistant", t.response))
            if t.user_utterance:
                out.append(("user", t.user_utterance))
        return out

    @property
    def last_user_utterance(self) -> str:
        for t in reversed(self.history):
            if t.user_utterance:
                return t.user_utterance
        return ""

    @property
    def judged_item(self) -> str | None:
        return judged_item(self.action_type, self.recommended_id, self.ranking, self.index)
