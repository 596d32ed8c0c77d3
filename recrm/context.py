"""TurnContext: everything one assistant turn is judged on, from a live env or a saved record."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from situ_gym.language import (
    Attempt,
    Utterance,
    analyze,
    analyze_reply,
    lexicon_for,
    put_forward,
    raised_by,
    recommendation_attempt,
    turned_down,
)
from situ_gym.records import EpisodeRecord, ToolCall, TurnRecord
from situ_gym.scene.index import SceneIndex
from situ_gym.scene.model import DisclosureItem, Task

__all__ = ["DIALOGUE_ACTS", "TurnContext", "judged_item"]

# Dialogue actions that elicit or guide: such a turn is judged on what it does, never on a product.
DIALOGUE_ACTS = frozenset({"Greet", "AskPreference", "ClarifyNeed", "Navigate"})

_SHOPPER_PICKS = frozenset({"pick_up_item", "check_item", "add_to_cart"})  # the shopper chose the product


def _picked(turn: TurnRecord, index: SceneIndex) -> set[str]:
    """Products the shopper chose in ``turn`` by acting on them: picked up, checked, carted, held."""
    call = turn.user_action
    out = {call.target_id} if call is not None and call.target_id in index.products and call.name in _SHOPPER_PICKS else set()
    return out | ({turn.held_item} if turn.held_item else set())


def judged_item(said: Utterance) -> str | None:
    """The product a turn is judged on: the one its words propose, else the one they explain,
    compare or mention by name. A ranking alone judges nothing (a turn that names no product is a
    dialogue turn, whatever its list holds)."""
    if said.proposed:
        return said.proposed[0]
    if said.explanation is not None and said.explanation.product:
        return said.explanation.product
    # a bare "that" or "it" for the product under discussion says nothing about it: "Let me
    # help you with that" is a dialogue turn, not a recommendation of the focus
    return (said.compared + tuple(p for p in said.mentioned if p in said.named) + (None,))[0]


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

    @cached_property
    def said(self) -> Utterance:
        """What the response says, read once by the language layer (shared by every scorer) as
        the env reads it: the reply to the shopper's last words."""
        heard = self.history_heard[-1] if self.history_heard else None
        return analyze_reply(
            self.response, lexicon_for(self.index), heard=heard, raised=self.raised, visible=self.visible, focus=self.focus,
        )

    @cached_property
    def history_heard(self) -> list[Utterance]:
        """The shopper's words after each earlier response (oldest first), read as the env
        reads them (from the view each turn started in)."""
        lex = lexicon_for(self.index)
        return [analyze(t.user_utterance or "", lex, visible=frozenset(t.visible_before)) for t in self.history]

    @cached_property
    def history_said(self) -> list[Utterance]:
        """The language layer's reading of each earlier response (oldest first), each as the
        reply to the shopper's words before it; each one's focus is the product the turn
        before it judged."""
        lex = lexicon_for(self.index)
        out: list[Utterance] = []
        previous: str | None = None
        raised: set[str] = set()
        for i, t in enumerate(self.history):
            heard = self.history_heard[i - 1] if i else None
            u = analyze_reply(
                t.response or "", lex, heard=heard, raised=raised, visible=frozenset(t.visible_before), focus=previous,
            )
            out.append(u)
            previous = judged_item(u) or previous
            raised.update(raised_by(self.history_heard[i], lex))
            raised.update(_picked(t, self.index))
        return out

    @cached_property
    def focus(self) -> str | None:
        """The product under discussion before this turn: the last one an earlier turn judged."""
        for u in reversed(self.history_said):
            pid = judged_item(u)
            if pid:
                return pid
        return None

    @cached_property
    def shopper_said(self) -> list[Utterance]:
        """The shopper's earlier utterances (the ones it said), as ``history_heard`` reads them."""
        return [u for t, u in zip(self.history, self.history_heard, strict=True) if t.user_utterance]

    @cached_property
    def raised(self) -> frozenset[str]:
        """Products the shopper raised itself: named, picked up, inspected or held."""
        lex = lexicon_for(self.index)
        raised = {p for u in self.shopper_said for p in raised_by(u, lex)}
        for t in self.history:
            raised.update(_picked(t, self.index))
        return frozenset(raised)

    @cached_property
    def declined(self) -> frozenset[str]:
        """Products the shopper turned down in earlier turns (``situ_gym.language.turned_down``),
        its replies read as the env reads them (from the view each turn started in)."""
        out: set[str] = set()
        for t, u, heard in zip(self.history, self.history_said, self.history_heard, strict=True):
            if t.user_utterance:
                out.update(turned_down(heard, t.put_forward or put_forward(u)))
        return frozenset(out)

    @cached_property
    def attempt(self) -> Attempt:
        """The turn's recommendation attempts, by the env's rule (``situ_gym.language.attempts``):
        what its words put forward, new unless an earlier turn put it forward or the shopper
        raised it (named it, picked it up, inspected it), and a product the shopper turned
        down proposed again."""
        before: set[str] = set()
        for t, u in zip(self.history, self.history_said, strict=True):
            before.update(t.put_forward or put_forward(u))
            if t.action_type == "Recommend" and t.recommended_id:
                before.add(t.recommended_id)
        last = self.history_heard[-1] if self.history_heard else None
        return recommendation_attempt(
            self.said, before=before, raised=self.raised, annotated=self.action_type,
            compare_requested=last is not None and last.asks_to_compare, declined=self.declined,
        )

    @property
    def judged_item(self) -> str | None:
        """What the words propose or discuss; "try this one" points at the annotated product.

        A turn labelled as elicitation or guidance (``DIALOGUE_ACTS``) judges no product: it is
        scored for what it does (``recrm.dialogue``), and a product it names earns nothing
        (a new one is an unlabelled recommendation attempt, which fails the instruction gate)."""
        if self.action_type in DIALOGUE_ACTS:
            return None
        pid = judged_item(self.said)
        if pid is None and self.said.deictic and self.recommended_id in self.index.products:
            return self.recommended_id
        return pid
