"""The rule-based dialogue moderator: has the conversation ended (paper App. B.3, item 4)?

Yes when the user gave up, declines further help or closes the conversation ("that's all",
"goodbye", "no thanks, I'll leave it"), or when both sides have completed a purchase
confirmation or closing exchange. No while the user keeps clarifying, exploring, comparing,
inspecting, or asks for help after a rejection or a navigation difficulty.
"""

from __future__ import annotations

import re
from typing import Any

from situ_gym.user.base import Moderator, UserTurn
from situ_gym.user.templates import CLOSING_PHRASES

__all__ = ["RuleModerator"]

_ASSISTANT_CLOSING = (
    "goodbye",
    "bye",
    "enjoy your",
    "have a great",
    "have a nice",
    "have a good",
    "thanks for shopping",
    "thank you for shopping",
    "glad i could help",
    "happy shopping",
)
_USER_THANKS = ("thank", "thanks", "great", "perfect", "bye")
_CONTINUING_INTENTS = frozenset({"ask", "answer", "follow", "explore", "inspect", "reject", "open"})


def _has_phrase(text: str, phrases: tuple[str, ...]) -> bool:
    low = " ".join(text.lower().replace("\u2019", "'").split())
    return any(re.search(r"(?<![a-z])" + re.escape(p) + r"(?![a-z])", low) for p in phrases)


class RuleModerator(Moderator):
    """Keyword and intent rules; deterministic, no model."""

    name = "rule"

    def should_end(
        self,
        history: list[tuple[str, str]],
        last_assistant: str,
        last_user: str,
        user_action: dict[str, Any] | None,
        user_turn: UserTurn | None = None,
    ) -> tuple[bool, str]:
        if user_turn is not None and user_turn.gave_up:
            return True, "the user gave up"
        action = (user_action or {}).get("name")
        asks = "?" in last_user
        if asks:
            return False, "the user is still asking for help"
        if user_turn is not None and user_turn.intent in _CONTINUING_INTENTS:
            if _has_phrase(last_user, CLOSING_PHRASES) and action in (None, "idle"):
                return True, "the user closed the conversation"
            return False, f"the user is still shopping ({user_turn.intent})"
        if _has_phrase(last_user, CLOSING_PHRASES):
            if action not in (None, "idle") and action != "add_to_cart":
                return False, "the user says goodbye but is still moving"
            return True, "the user closed the conversation"
        if _has_phrase(last_assistant, _ASSISTANT_CLOSING) and _has_phrase(last_user, _USER_THANKS):
            return True, "both sides completed the closing exchange"
        if action == "add_to_cart":
            return True, "the purchase was confirmed"
        return False, "the conversation is ongoing"
