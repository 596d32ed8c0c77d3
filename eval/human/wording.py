"""What the participant reads: refusals of their action, the outcome, product details, place names.

Everything here speaks to the person playing the shopper ("your view", "your hands"), never
about "the user". Refusals are worked out from the call and the view, not read back from
``validate_user_call``'s messages (those are written for logs and model prompts); its
message is the fallback for what no rule here covers.
"""

from __future__ import annotations

from typing import Any

from situ_gym.actions.tools import ANGLE_RANGE, DISTANCES, LEGAL_TOOLS, TARGET_ARGUMENT, TOOLS
from situ_gym.language.analysis import analyze
from situ_gym.language.lexicon import lexicon_for
from situ_gym.scene.wording import label_value

__all__ = ["action_problem", "outcome_text", "product_details", "mark_places", "OUTCOMES", "PARTICIPANT_HELP"]

_KIND_WORD = {"item": "product", "fixture": "shelf or fixture", "store": "store", "area": "area"}

# Tool help said to the participant where the schema's words are written for a model.
PARTICIPANT_HELP = {
    "add_to_cart": "Put a product you see or hold into your cart. You buy it, and the conversation ends.",
    "do_not_add_to_cart": "Tell the assistant you decided against a product you see.",
    "idle": "Do nothing physical this turn (just talk).",
}

# Why a conversation ended, as the participant is told on the questionnaire page.
OUTCOMES = {
    "success_cart_added": "You put a product in your cart, which ends the conversation.",
    "recommendation_exhausted": "The assistant had made three recommendations, the most a conversation allows.",
    "moderator_end": "The conversation had come to its end (nothing more was happening).",
    "motion_stall": "You tried to walk three times in a row without getting anywhere.",
    "turn_limit": "The conversation reached its limit of {max_turns} turns.",
    "error": "The assistant stopped working, so the conversation was ended early.",
}


def action_problem(call: dict[str, Any], *, store: str, view: Any, held_item: str | None,
                   index: Any) -> str | None:
    """Why the participant cannot do ``call`` now, in their words; None when no rule here
    objects (``validate_user_call`` still has the last word)."""
    name = call.get("name") if isinstance(call, dict) else None
    if not isinstance(name, str) or name.strip() not in LEGAL_TOOLS[store]:
        return "please choose one of the actions offered"
    name = name.strip()
    args = call.get("arguments") if isinstance(call.get("arguments"), dict) else {}
    spec = TOOLS[name]
    for arg in spec.required:
        if arg not in args or args[arg] in ("", None):
            kind = spec.arguments[arg]
            if kind == "handle":
                return f"please choose which {_KIND_WORD[arg]} ({name.replace('_', ' ')})"
            return f"please choose the {arg} ({name.replace('_', ' ')})"
    if "angle" in args:
        lo, hi = ANGLE_RANGE
        angle = args["angle"]
        if isinstance(angle, bool) or not isinstance(angle, (int, float)) or not lo <= angle <= hi:
            return f"the angle must be a number of degrees from {lo:g} to {hi:g}"
    if "distance" in args and args["distance"] not in DISTANCES:
        return f"the distance must be one of: {', '.join(DISTANCES)}"
    if name == "drop_item" and held_item is None:
        return "your hands are empty: there is nothing to put back"
    target = TARGET_ARGUMENT.get(name)
    if target is not None and target in args:
        handle = str(args[target]).strip()
        entity = view.handles.get(handle)
        visible = {v.handle for v in view.visible}
        if entity is None or (handle not in visible and not (target == "item" and entity == held_item)):
            where = "in your view or in your hands" if target == "item" else "in your view"
            return f"[{handle[:20]}] is not {where} now; choose one of the labels you can see"
        if index.kind(entity) != {"item": "product"}.get(target, target):
            return f"[{handle[:20]}] is not a {_KIND_WORD[target]}"
        approach = args.get("approach")
        if name == "move_to_fixture" and approach in ("front", "back"):
            fixture = index.fixtures[entity]
            if approach not in fixture.approach:
                return f"{fixture.name.partition(':')[0]} has no {approach} side to walk to; choose nearest"
    return None


def outcome_text(termination: str | None, *, bought: list[str], gave_up: bool, max_turns: int) -> dict[str, str]:
    """``{"bought": ..., "reason": ...}``: what ended in the cart and why it ended, in words."""
    if bought:
        what = "You bought " + ", ".join(bought) + "."
    else:
        what = "You did not buy anything."
    if gave_up:
        reason = "You ended the conversation yourself."
    else:
        reason = OUTCOMES.get(termination or "", "The conversation ended.").format(max_turns=max_turns)
    return {"bought": what, "reason": reason}


def product_details(product: Any) -> dict[str, Any]:
    """A product as its label reads: name, price, and each attribute in words ("diet: gluten-free,
    high protein"); labels that no attribute already says follow in words too."""
    details = []
    said = set()
    for key, value in product.attributes.items():
        values = value if isinstance(value, (list, tuple)) else [value]
        words = [str(v).replace("_", " ") for v in values]
        said.update(w.lower() for w in words)
        details.append(f"{key.replace('_', ' ')}: {', '.join(words)}")
    extra = [label_value(t) for t in product.tags if label_value(t).lower() not in said]
    return {"name": product.name, "price": float(product.price), "details": details,
            "labels": list(dict.fromkeys(x for x in extra if x))}


def mark_places(text: str, index: Any, handle_of: dict[str, str]) -> str:
    """``text`` with the participant's map label after each place it names: "Walk to Shelf 9"
    -> "Walk to Shelf 9 [N]", the letter the map, the view and the action menu show for it.
    Places are found by the language layer (:func:`situ_gym.language.analysis.analyze`)."""
    if not text:
        return text
    said = analyze(text, lexicon_for(index))
    out, cursor = [], 0
    for place in said.places:
        handle = handle_of.get(place.entity_id)
        phrase = said.text[place.char_start:place.char_end]
        at = text.find(phrase, cursor) if handle and phrase else -1
        if at < 0:
            continue
        end = at + len(phrase)
        if text[end:end + len(handle) + 3].lstrip().startswith((f"[{handle}]", f"({handle})")):
            continue
        out.append(text[cursor:end] + f" [{handle}]")
        cursor = end
    return "".join(out) + text[cursor:]
