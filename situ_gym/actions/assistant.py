"""The assistant's structured output (paper App. A.2, B.2): schema constants and types.

One assistant turn is a JSON object::

    {"response": "user-facing utterance",
     "assistant_actions": [{"type": "Navigate", "navigation_goal": "7", "reason": "..."}],
     "expected_user_action": {"name": "move_to_fixture", "arguments": {"fixture": "7", "approach": "front"}},
     "ranking": ["sm_p012", "..."]}

``navigation_goal`` and every target argument are the assistant's own handles
(fixture/store/area handles are fixed; product handles come from the current view).
``ranking`` holds up to ten catalog product ids.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from situ_gym.records import ToolCall
from situ_gym.stores import spec_table

__all__ = ["ACTION_TYPES", "REQUIRED_FIELDS", "MAX_RANKING", "AssistantOutput"]

ACTION_TYPES = (
    "Greet",
    "AskPreference",
    "ClarifyNeed",
    "Navigate",
    "Recommend",
    "Explain",
    "AnswerQuestion",
    "Compare",
    "HandleRejection",
    "ConfirmPurchase",
)

# Required fields beyond "type", per store (paper App. B.2): {store id: {action type: fields}}.
REQUIRED_FIELDS: Mapping[str, dict[str, tuple[str, ...]]] = spec_table(lambda spec: {
    "Recommend": ("display_name", "visible_now", "reason"),
    "Navigate": spec.navigate_fields,
})

MAX_RANKING = 10


@dataclass
class AssistantOutput:
    """A parsed and validated assistant turn. Never raised from: errors are listed."""

    raw: str
    response: str = ""  # recovered user-facing text, even when the rest is invalid
    action: dict[str, Any] | None = None
    action_type: str | None = None
    expected_user_action: dict[str, Any] | None = None  # {"name", "arguments"}
    expected_target_id: str | None = None
    navigation_goal_id: str | None = None
    recommended_id: str | None = None
    ranking: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    # Added by the actions layer: findings that do not make the turn invalid (e.g. ranking
    # ids outside the catalog, which Catalog % counts), and the expected user action as a
    # ToolCall (legal/valid/target_id filled) ready for TurnRecord.expected_user_action.
    warnings: list[str] = field(default_factory=list)
    expected_call: ToolCall | None = None

    @property
    def valid(self) -> bool:
        return not self.errors
