"""The user's embodied tool actions (paper App. B.2): names, arguments, legal sets.

A tool call is ``{"name": <tool>, "arguments": {...}}``. Target arguments (``item``,
``fixture``, ``store``, ``area``) are SoM handles of the calling role; the runtime
resolves them to entity ids. Directions are words; ``angle`` is degrees; ``distance``
is one of the step lengths below (the paper scores direction only, never magnitude).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from situ_gym.stores import spec_table

__all__ = [
    "DISTANCES",
    "ANGLE_RANGE",
    "ToolSpec",
    "TOOLS",
    "LEGAL_TOOLS",
    "TRANSLATIONAL_TOOLS",
    "DIRECTIONAL_TOOLS",
    "TARGET_ARGUMENT",
]

# Step lengths in metres for the categorical ``distance`` argument.
DISTANCES = {"short": 0.5, "medium": 1.5, "long": 3.0}
ANGLE_RANGE = (1.0, 180.0)


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    # argument name -> allowed values (tuple of words), "angle", "distance" or "handle"
    arguments: dict[str, object]
    required: tuple[str, ...]


_LR = ("left", "right")
_UD = ("up", "down")

TOOLS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in [
        ToolSpec("move_forward", "Walk straight ahead.", {"distance": "distance"}, ("distance",)),
        ToolSpec("move_backward", "Step straight back.", {"distance": "distance"}, ("distance",)),
        ToolSpec(
            "turn_and_move",
            "Turn left or right by an angle, then walk forward.",
            {"direction": _LR, "angle": "angle", "distance": "distance"},
            ("direction", "angle", "distance"),
        ),
        ToolSpec(
            "move_and_turn",
            "Walk forward, then turn left or right by an angle.",
            {"direction": _LR, "angle": "angle", "distance": "distance"},
            ("direction", "angle", "distance"),
        ),
        ToolSpec(
            "side_step",
            "Step sideways without turning.",
            {"direction": _LR, "distance": "distance"},
            ("direction", "distance"),
        ),
        ToolSpec(
            "turn", "Turn in place.", {"direction": _LR, "angle": "angle"}, ("direction", "angle")
        ),
        ToolSpec(
            "look_up_down",
            "Tilt the view up or down.",
            {"direction": _UD, "angle": "angle"},
            ("direction", "angle"),
        ),
        ToolSpec(
            "add_to_cart",
            "Put a visible or held product into the cart (ends the episode).",
            {"item": "handle"},
            ("item",),
        ),
        ToolSpec("idle", "Do nothing physical this turn.", {}, ()),
        # Supermarket
        ToolSpec(
            "move_to_fixture",
            "Walk to a visible fixture: nearest reachable point, or its front/back viewpoint.",
            {"fixture": "handle", "approach": ("nearest", "front", "back")},
            ("fixture", "approach"),
        ),
        ToolSpec(
            "pick_up_item",
            "Pick up a visible product and read its label (price, flavour, packaging, allergens, nutrition).",
            {"item": "handle"},
            ("item",),
        ),
        ToolSpec("drop_item", "Put the held product back.", {}, ()),
        # Home Furnishings
        ToolSpec(
            "move_to_store",
            "Walk to a visible store's doorway, just outside or just inside.",
            {"store": "handle", "approach": ("outside_doorway", "inside_doorway")},
            ("store", "approach"),
        ),
        ToolSpec(
            "move_to_area",
            "Walk to a fixed point within a visible display area.",
            {"area": "handle"},
            ("area",),
        ),
        ToolSpec(
            "check_item",
            "Look closely at a visible product (price, material, colour, size, style).",
            {"item": "handle"},
            ("item",),
        ),
        ToolSpec(
            "do_not_add_to_cart",
            "Decide against a visible product.",
            {"item": "handle"},
            ("item",),
        ),
    ]
}

_SHARED = (
    "move_forward",
    "move_backward",
    "turn_and_move",
    "move_and_turn",
    "side_step",
    "turn",
    "look_up_down",
)

# The legal sets of App. C.1 (AFR), in the paper's order.
# Per store: {store id: tools}, from its StoreSpec (the layout fixes them).
LEGAL_TOOLS: Mapping[str, tuple[str, ...]] = spec_table(lambda spec: spec.legal_tools)

# Actions whose displacement feeds the motion-stall rule.
TRANSLATIONAL_TOOLS = frozenset(
    {
        "move_forward",
        "move_backward",
        "turn_and_move",
        "move_and_turn",
        "side_step",
        "move_to_fixture",
        "move_to_store",
        "move_to_area",
    }
)

# The five directional actions compared by LNSR.
DIRECTIONAL_TOOLS = ("turn_and_move", "move_and_turn", "side_step", "turn", "look_up_down")

# Which argument of a targeted tool names an entity.
TARGET_ARGUMENT = {
    "add_to_cart": "item",
    "move_to_fixture": "fixture",
    "pick_up_item": "item",
    "move_to_store": "store",
    "move_to_area": "area",
    "check_item": "item",
    "do_not_add_to_cart": "item",
}
