"""Simulated shoppers and the dialogue moderator, with factories by name.

>>> make_user("rule").name
'rule'
>>> make_moderator("rule").name
'rule'
"""

from __future__ import annotations

from typing import Any

from situ_gym.user.base import INTENTS, Moderator, UserObservation, UserSimulator, UserTurn
from situ_gym.user.llm_moderator import LLMModerator
from situ_gym.user.llm_user import LLMUser
from situ_gym.user.moderator import RuleModerator
from situ_gym.user.rule import RuleBasedUser

__all__ = [
    "INTENTS",
    "UserObservation",
    "UserTurn",
    "UserSimulator",
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


def _reserved_llm(kind: str, name: str) -> ValueError:
    return ValueError(
        f"{kind} {name!r} is LLM-backed and needs a chat model, which is not available yet; "
        f"use one of {sorted(USERS if kind == 'user' else MODERATORS)}"
    )


def make_user(name: str, **kwargs: Any) -> UserSimulator:
    """Build a user simulator by name ("rule"); "llm..." names are reserved for chat models."""
    if name in USERS:
        return USERS[name](**kwargs)
    if isinstance(name, str) and name.lower().startswith("llm"):
        raise _reserved_llm("user", name)
    raise ValueError(f"unknown user simulator {name!r}; valid names: {sorted(USERS)}")


def make_moderator(name: str, **kwargs: Any) -> Moderator:
    """Build a moderator by name ("rule"); "llm..." names are reserved for chat models."""
    if name in MODERATORS:
        return MODERATORS[name](**kwargs)
    if isinstance(name, str) and name.lower().startswith("llm"):
        raise _reserved_llm("moderator", name)
    raise ValueError(f"unknown moderator {name!r}; valid names: {sorted(MODERATORS)}")
