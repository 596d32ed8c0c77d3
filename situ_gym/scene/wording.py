"""How people say catalog things: attribute labels as needs or avoidances, names, places.

Shared by the task generator (the canonical disclosure texts) and the shoppers (varied
phrasings). Every function returns several phrasings; callers pick one with their seed. The
need and avoidance sentences are templates in ``phrasings.json`` (``{v}`` the label's value,
``{V}`` the same capitalised).
"""

from __future__ import annotations

import json
from importlib import resources

__all__ = ["label_value", "need_phrasings", "avoid_phrasings", "spoken_name", "place_phrase", "AVOIDABLE_KEYS"]

# Label keys a person avoids (allergens, flavours, materials ...). Sizes, features and care
# labels are things one wants or not, never "avoids": "Please nothing 12 oz size" is no wish.
AVOIDABLE_KEYS = (
    "allergen", "flavour", "scent", "caffeine", "roast", "form", "texture", "fat", "preparation",
    "material", "color", "style", "plant",
)
_PHRASINGS = json.loads(resources.files("situ_gym.scene").joinpath("phrasings.json").read_text("utf-8"))


def label_value(tag: str) -> str:
    """``"diet:gluten-free"`` -> ``"gluten-free"``."""
    return tag.partition(":")[2].replace("_", " ")


def _said(templates: list[str], value: str) -> tuple[str, ...]:
    return tuple(t.format(v=value, V=value.capitalize()) for t in templates)


def need_phrasings(tag: str) -> tuple[str, ...]:
    """Sentences asking for a product with this label."""
    key, v = tag.partition(":")[0], label_value(tag)
    need = _PHRASINGS["need"]
    if key in need["value_noun_keys"]:  # the value is itself a noun: "I'd like cod."
        return _said(need["value_noun"], v)
    return _said(need["by_key"].get(key, need["default"]), v)


def avoid_phrasings(tag: str) -> tuple[str, ...]:
    """Sentences ruling out products with this label."""
    key, v = tag.partition(":")[0], label_value(tag)
    avoid = _PHRASINGS["avoid"]
    return _said(avoid["by_key"].get(key, avoid["default"]), v)


def spoken_name(name: str) -> str:
    """A product name as said aloud: the size after the last comma dropped."""
    base, sep, tail = name.rpartition(", ")
    return base if sep and any(c.isdigit() for c in tail) else name


def place_phrase(kind: str, name: str) -> str:
    """How a shopper names a place in a sentence: "Shelf 3", "Nordic Nest", "the Floor Lamps area"."""
    head, colon, _ = name.partition(":")
    if colon:  # "Shelf 3: jam, coffee, tea" -> "Shelf 3"
        return head.strip()
    if kind == "area":
        _, dash, tail = name.partition(" - ")
        return f"the {tail.strip()} area" if dash else f"the {name} area"
    if kind == "fixture" and not any(c.isdigit() for c in name) and not name.lower().startswith("the "):
        return f"the {name}"
    return name
