"""The simulated-user and moderator interfaces (paper App. A.3, B.3) and their turn records.

A user simulator plays the shopper: each turn it reads only what a shopper can know
(:class:`UserObservation`: the assistant's response text, its own Set-of-Mark view, what
it holds and has inspected, the dialogue so far) plus its private task and profile, and
answers with one utterance and one tool call in its own handles (:class:`UserTurn`). The
moderator decides after each exchange whether the conversation is over. Rule-based and
LLM-backed implementations share these abstract classes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from situ_gym.scene.index import SceneIndex
from situ_gym.scene.model import Profile, Task
from situ_gym.som.types import RoleView

__all__ = ["INTENTS", "UserObservation", "UserTurn", "UserSimulator", "Exchange", "Moderator"]

# What the user meant to do this turn (recorded for analysis; the moderator may use it).
INTENTS = (
    "open",  # first turn: states the category / intended use
    "ask",  # asks for a reason, a comparison or more options
    "answer",  # answers the assistant's question (re-states or discloses a detail)
    "follow",  # follows the assistant's navigation guidance
    "explore",  # looks around / walks on its own
    "inspect",  # picks up or checks a product
    "reject",  # turns a product down
    "buy",  # adds a product to the cart
    "give_up",  # ends the conversation without buying
)


@dataclass
class UserObservation:
    """Everything a shopper may know this turn (never the assistant's hidden fields)."""

    turn: int  # 1-based
    assistant_response: str  # the response text only
    view: RoleView  # the user's own SoM view: handles + visible entities (with names)
    held_item: str | None = None  # product id of the held item (Supermarket)
    cart: list[str] = field(default_factory=list)  # product ids
    # product id -> details revealed by pick_up_item / check_item:
    # {"price": float, "attributes": {...}, "tags": [...], "category": str, "name": str}
    inspected: dict[str, dict[str, Any]] = field(default_factory=dict)
    last_result: str | None = None  # message of the user's last executed action
    history: list[tuple[str, str]] = field(default_factory=list)  # (speaker, text)


@dataclass
class UserTurn:
    """One user reply: what it says and the one tool action it takes (user handles)."""

    utterance: str
    tool_call: dict[str, Any]  # {"name": ..., "arguments": {...}}
    revealed: list[str] = field(default_factory=list)  # DisclosureItem kinds newly disclosed (<= 1)
    gave_up: bool = False
    intent: str = "explore"  # one of INTENTS


class UserSimulator(ABC):
    """A simulated shopper. ``reset`` once per episode, then ``respond`` once per turn.

    Implementations must be deterministic given the generator passed to ``reset`` and
    must only use the private task/profile, the observation, and catalog details of
    products the observation says the user has inspected.
    """

    name: str = "user"

    @abstractmethod
    def reset(
        self, task: Task, profile: Profile, index: SceneIndex, rng: np.random.Generator
    ) -> None: ...

    @abstractmethod
    def respond(self, obs: UserObservation) -> UserTurn: ...


@dataclass(frozen=True)
class Exchange:
    """One finished exchange as the moderator reads it."""

    history: list[tuple[str, str]]  # (speaker, text), this exchange included
    last_assistant: str
    last_user: str
    user_action: dict[str, Any] | None  # the shopper's tool call
    user_turn: UserTurn | None = None  # the shopper's full reply, when the simulator gives it


class Moderator(ABC):
    """Decides after each exchange whether the dialogue has ended (paper App. B.3, item 4).

    Implementations decide on one :class:`Exchange`; ``should_end`` takes its fields.
    """

    name: str = "moderator"

    def should_end(
        self,
        history: list[tuple[str, str]],
        last_assistant: str,
        last_user: str,
        user_action: dict[str, Any] | None,
        user_turn: UserTurn | None = None,
    ) -> tuple[bool, str]:
        """Return ``(end, reason)``; ``reason`` is a short human-readable justification."""
        return self.decide(Exchange(history, last_assistant, last_user, user_action, user_turn))

    @abstractmethod
    def decide(self, exchange: Exchange) -> tuple[bool, str]:
        """``(end, reason)`` for one exchange."""
