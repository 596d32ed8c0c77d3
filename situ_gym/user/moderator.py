"""The rule-based dialogue moderator: has the conversation ended (paper App. B.3, item 4)?

Yes when the user gave up, declines further help or closes the conversation, or when both
sides have completed a purchase confirmation or closing exchange. No while the user keeps
clarifying, exploring, comparing, inspecting, or asks for help after a rejection or a
navigation difficulty. Both messages are read through ``situ_gym.language.analyze``.

``protocol="default"`` also reads the rule shopper's own record of the turn (its give-up flag
and intent: exact, never a misreading of its words). ``protocol="paper"`` decides from the
conversation alone, as B.3 specifies: the history, the latest assistant and user messages and
the user's action; the ``UserTurn`` is never read.
"""

from __future__ import annotations

from situ_gym.language import analyze
from situ_gym.protocol import check_protocol
from situ_gym.user.base import Exchange, Moderator

__all__ = ["RuleModerator"]

_CONTINUING_INTENTS = frozenset({"ask", "answer", "follow", "explore", "inspect", "reject", "open"})


class RuleModerator(Moderator):
    """Rules over the language layer's reading (and, by default, the shopper's intent); deterministic."""

    name = "rule"

    def __init__(self, protocol: str = "default") -> None:
        self.protocol = check_protocol(protocol)  # "paper": reads the messages and the action only (B.3)

    def decide(self, exchange: Exchange) -> tuple[bool, str]:
        if self.protocol == "paper":
            return self._from_conversation(exchange)
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

    @staticmethod
    def _from_conversation(exchange: Exchange) -> tuple[bool, str]:
        """B.3 (4) from the messages and the action only (the paper's protocol)."""
        action = (exchange.user_action or {}).get("name")
        user = analyze(exchange.last_user)
        if user.questions:  # clarifying, comparing, or asking for help after a rejection or getting lost
            return False, "the user is still asking for help"
        if user.closing:  # gives up, declines further help, or says goodbye
            if action not in (None, "idle", "add_to_cart"):
                return False, "the user says goodbye but is still moving"
            return True, "the user closed the conversation"
        if action == "add_to_cart":
            return True, "the purchase was confirmed"
        # "Thanks" to the assistant's goodbye ends it only when the user stands still and says
        # nothing more: thanking while moving on, rejecting or telling a need is still shopping.
        says_more = bool(user.budget or user.wants or user.avoids or user.categories or user.products
                         or user.navigation or user.requests or user.rejects)
        if (action in (None, "idle") and user.thanks and not says_more
                and analyze(exchange.last_assistant).closing):
            return True, "both sides completed the closing exchange"
        return False, "the conversation is ongoing"
