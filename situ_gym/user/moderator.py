"""The rule-based dialogue moderator: has the conversation ended (paper App. B.3, item 4)?

Yes when the user gave up, declines further help or closes the conversation, or when both
sides have completed a purchase confirmation or closing exchange. No while the user keeps
clarifying, exploring, comparing, inspecting, or asks for help after a rejection or a
navigation difficulty. Both messages are read through ``situ_gym.language.analyze``.
"""

from __future__ import annotations

from situ_gym.language import analyze
from situ_gym.protocol import check_protocol
from situ_gym.user.base import Exchange, Moderator

__all__ = ["RuleModerator"]

_CONTINUING_INTENTS = frozenset({"ask", "answer", "follow", "explore", "inspect", "reject", "open"})


class RuleModerator(Moderator):
    """Rules over the language layer's reading and the shopper's intent; deterministic."""

    name = "rule"

    def __init__(self, protocol: str = "default") -> None:
        self.protocol = check_protocol(protocol)  # "paper": reads the messages and the action only (B.3)

    def decide(self, exchange: Exchange) -> tuple[bool, str]:
        user_turn = exchange.user_turn
        if user_turn is not None and user_turn.gave_up:
            return True, "the user gave up"
        action = (exchange.user_action or {}).get("name")
        user = analyze(exchange.last_user)
        if user.questions:
            return False, "the user is still asking for help"
        if user_turn is not None and user_turn.intent in _CONTINUING_INTENTS:
            if user.closing and action in (None, "idle"):
                return True, "the user closed the conversation"
            return False, f"the user is still shopping ({user_turn.intent})"
        if user.closing:
            if action not in (None, "idle") and action != "add_to_cart":
                return False, "the user says goodbye but is still moving"
            return True, "the user closed the conversation"
        if analyze(exchange.last_assistant).closing and (user.thanks or user.closing):
            return True, "both sides completed the closing exchange"
        if action == "add_to_cart":
            return True, "the purchase was confirmed"
        return False, "the conversation is ongoing"
