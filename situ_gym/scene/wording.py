"""How people say catalog things: attribute labels as needs or avoidances, names, places.

Shared by the task generator (the canonical disclosure texts) and the shoppers (varied
phrasings). Every function returns several phrasings; callers pick one with their seed.
"""

from __future__ import annotations

__all__ = ["label_value", "need_phrasings", "avoid_phrasings", "spoken_name", "place_phrase", "AVOIDABLE_KEYS"]

# Label keys a person avoids (allergens, flavours, materials ...). Sizes, features and care
# labels are things one wants or not, never "avoids": "Please nothing 12 oz size" is no wish.
AVOIDABLE_KEYS = (
    "allergen", "flavour", "scent", "caffeine", "roast", "form", "texture", "fat", "preparation",
    "material", "color", "style", "plant",
)


def label_value(tag: str) -> str:
    """``"diet:gluten-free"`` -> ``"gluten-free"``."""
    return tag.partition(":")[2].replace("_", " ")


def need_phrasings(tag: str) -> tuple[str, ...]:
    """Sentences asking for a product with this label."""
    key, v = tag.partition(":")[0], label_value(tag)
    by_key = {
        "flavour": (f"I'd like the {v} flavour.", f"{v.capitalize()} flavour, if you have it.", f"I'm after something {v}-flavoured."),
        "scent": (f"I'd like a {v} scent.", f"Something that smells of {v}, ideally.", f"{v.capitalize()} scent would be nice."),
        "diet": (f"It has to be {v}.", f"I need it to be {v}.", f"It should be {v}."),
        "material": (f"Preferably {v}.", f"I'd like it made of {v}.", f"Something in {v} would be ideal."),
        "color": (f"I'd like it in {v}.", f"{v.capitalize()} would suit my place.", f"Ideally in {v}."),
        "style": (f"Something {v} in style.", f"I like a {v} look.", f"It should have a {v} feel."),
        "size": (f"A {v} one, please.", f"I need the {v} size.", f"Size-wise, {v}."),
        "packaging": (f"I'd prefer it in a {v}.", f"A {v} would be handiest.", f"Ideally in a {v}."),
        "feature": (f"It should have {v}.", f"{v.capitalize()} is important to me.", f"I need something with {v}."),
        "care": (f"It needs to be {v}.", f"I want something {v}.", f"{v.capitalize()} matters to me."),
        "plant": (f"I'd like a {v}.", f"I'm hoping for a {v}.", f"A {v} would be lovely."),
        "pet": (f"It's for my {v}.", f"Something for a {v}, please.", f"It has to be for a {v}."),
        "life stage": (f"It's for a {v}.", f"Something suitable for a {v}.", f"My pet is a {v}."),
        "ply": (f"{v.capitalize()}, please.", f"I'd like {v}.", f"I need the {v} kind."),
        "certification": (f"I'd like it {v}.", f"It should be {v}.", f"{v.capitalize()} matters to me."),
        "caffeine": (f"It should be {v}.", f"I'd like it {v}.", f"{v.capitalize()}, please."),
        "roast": (f"A {v} roast, please.", f"I like a {v} roast.", f"I'd prefer {v} roast."),
        "form": (f"I'd like it {v}.", f"{v.capitalize()}, please.", f"I prefer it {v}."),
        "use": (f"It's for {v} use.", f"Something for {v} use.", f"I need it for {v} use."),
        "season": (f"Something {v}-themed.", f"I'd like a {v} one.", f"It's for the {v}s."),
        "origin": (f"I'd like something {v}.", f"{v.capitalize()}, ideally.", f"Something from the {v} would be nice."),
    }
    by_value_noun = ("fish", "cheese", "variety", "shape", "grain", "bean", "oil", "vegetable", "cut", "egg", "fat")
    if key in by_value_noun:
        return (f"I'd like {v}.", f"{v.capitalize()}, if you have it.", f"I'm after {v}.")
    return by_key.get(key, (f"I'd like it {v}.", f"It should be {v}.", f"{v.capitalize()} is what I'm after."))


def avoid_phrasings(tag: str) -> tuple[str, ...]:
    """Sentences ruling out products with this label."""
    key, v = tag.partition(":")[0], label_value(tag)
    by_key = {
        "allergen": (f"I'm allergic to {v}, so nothing with {v}.", f"It can't contain any {v}.", f"No {v} please, I'm allergic."),
        "flavour": (f"I don't like {v} flavour.", f"Not {v}, please.", f"Anything but {v}."),
        "scent": (f"No {v} scent, please.", f"I can't stand a {v} smell.", f"Nothing {v}-scented."),
        "material": (f"Nothing made of {v}.", f"I'd rather avoid {v}.", f"Not {v}, please."),
        "color": (f"Not in {v}, please.", f"I don't want it in {v}.", f"Anything but {v}."),
        "style": (f"Nothing too {v}.", f"I'm not into the {v} look.", f"I'd rather avoid a {v} style."),
        "plant": (f"Not a {v}, please.", f"I don't want a {v}.", f"Anything but a {v}."),
    }
    return by_key.get(key, (f"I don't want it {v}.", f"Not {v}, please.", f"I'd rather avoid {v}."))


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
