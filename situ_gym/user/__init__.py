"""Simulated shoppers and the dialogue moderator, with factories by name.

>>> make_user("rule").name
'rule'
>>> make_moderator("rule").name
'rule'
"""

from __future__ import annotations

from typing import Any

from situ_gym.user.base import (
    INTENTS,
    Exchange,
    Moderator,
    UserObservation,
    UserSimulator,
    UserTurn,
)
from situ_gym.user.llm_moderator import LLMModerator
from situ_gym.user.llm_user import LLMUser
from situ_gym.user.moderator import RuleModerator
from situ_gym.user.rule import RuleBasedUser

__all__ = [
    "INTENTS",
    "UserObservation",
    "UserTurn",
    "UserSimulator",
    "Exchange",
    "Moderator",
    "RuleBasedUser",
    "RuleModerator",
    "LLMUser",
    "LLMModerator",
    "USERS",
    "MODERATORS",
    "make_user",
    "make_moderator",
]

# "llm" needs a chat model: make_user("llm", model="hf:gguf:smollm2" or "openai:NAME", base_url=...).
USERS: dict[str, type[UserSimulator]] = {"rule": RuleBasedUser, "llm": LLMUser}
MODERATORS: dict[str, type[Moderator]] = {"rule": RuleModerator, "llm": LLMModerator}


def make_user(name: str, **kwargs: Any) -> UserSimulator:
    """Build a user simulator by name: "rule", or "llm" with ``model="hf:..." | "openai:NAME"``."""
    if name in USERS:
        return USERS[name](**kwargs)
    raise ValueError(f"unknown user simulator {name!r}; valid names: {sorted(USERS)}")


def make_moderator(name: str, **kwargs: Any) -> Moderator:
    """Build a moderator by name: "rule", or "llm" with ``model="hf:..." | "openai:NAME"``."""
    if name in MODERATORS:
        return MODERATORS[name](**kwargs)
    raise ValueError(f"unknown moderator {name!r}; valid names: {sorted(MODERATORS)}")
