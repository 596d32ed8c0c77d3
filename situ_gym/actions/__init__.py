"""Actions layer: user tool schemas and validation, assistant output schema and parser."""

from situ_gym.actions.assistant import ACTION_TYPES, MAX_RANKING, REQUIRED_FIELDS, AssistantOutput
from situ_gym.actions.parse import find_marker_disclosures, parse_assistant_output
from situ_gym.actions.tools import LEGAL_TOOLS, TARGET_ARGUMENT, TOOLS
from situ_gym.actions.validate import render_tool_schema, validate_user_call

__all__ = [
    "ACTION_TYPES",
    "REQUIRED_FIELDS",
    "MAX_RANKING",
    "AssistantOutput",
    "TOOLS",
    "LEGAL_TOOLS",
    "TARGET_ARGUMENT",
    "parse_assistant_output",
    "find_marker_disclosures",
    "validate_user_call",
    "render_tool_schema",
]
