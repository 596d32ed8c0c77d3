"""Wording of the rule-based shopper: template banks filled with real names, chosen by a seed.

Templates name products, fixtures, stores, areas and attributes by their display names and
never by Set-of-Mark handles. Slots use ``str.format`` names: ``{name}``, ``{price}``,
``{text}``, ``{feature}``, ``{other}``, ``{direction}``, ``{budget}``.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "TEMPLATES",
    "STYLE_FILLERS",
    "CLOSING_PHRASES",
    "pick",
    "format_price",
    "detail_sentence",
    "restate_sentence",
]

TEMPLATES: dict[str, tuple[str, ...]] = {
    # Disclosure, by DisclosureItem kind (used when the item's text is a phrase, not a sentence).
    "category": (
        "I'm looking for {text}.",
        "I need {text}.",
        "I'm shopping for {text}.",
        "I'm hoping to find {text}.",
    ),
    "use": (
        "It's for {text}.",
        "I want it for {text}.",
        "I'll be using it for {text}.",
        "It's meant for {text}.",
    ),
    "budget": (
        "I'd like to stay {text}.",
        "Budget-wise, {text}.",
        "Price matters: {text}.",
    ),
    "budget_value": (
        "My budget is about {budget}.",
        "I'd like to keep it under {budget}.",
        "I don't want to spend more than {budget}.",
        "I can spend up to {budget}.",
    ),
    "avoid": (
        "I'd rather avoid {text}.",
        "Please, nothing with {text}.",
        "I don't want {text}.",
        "One thing: I want to stay away from {text}.",
    ),
    "need": (
        "I'd prefer {text}.",
        "What matters to me is {text}.",
        "Ideally I'd like {text}.",
        "It's important that it's {text}.",
    ),
    "restate_prefix": ("Like I said, ", "As I mentioned, ", "Again, ", "To repeat, "),
    # Acknowledgements (medium/high talkativeness).
    "ack": ("Okay.", "Alright.", "Thanks.", "Sure.", "Hmm, let me think.", "Got it."),
    "greet": ("Hi!", "Hello!", "Hi there.", "Hey, thanks."),
    "confused": (
        "Sorry, I didn't catch that.",
        "I'm not sure what you mean.",
        "Could you say that again?",
        "That doesn't really help me.",
    ),
    "repeated": (
        "You already said that.",
        "We've been over this.",
        "That's the same as before.",
    ),
    # Navigation.
    "follow_fixture": (
        "Okay, I'll head to the {name}.",
        "Sure, walking over to the {name} now.",
        "Alright, going to the {name}.",
        "I'll go to the {name}.",
    ),
    "follow_store_inside": (
        "I'll go into {name}.",
        "Okay, heading inside {name}.",
        "Let me walk into {name}.",
    ),
    "follow_store_outside": (
        "I'll walk up to the entrance of {name}.",
        "Okay, heading to the doorway of {name}.",
        "Let me go over to {name}.",
    ),
    "follow_area": (
        "Let me go over to the {name}.",
        "Okay, I'll check out the {name}.",
        "I'll walk to the {name}.",
    ),
    "follow_direction": (
        "Okay, {direction}.",
        "Got it, {direction}.",
        "Alright, {direction} then.",
    ),
    "decline_guidance": (
        "I'd rather look around on my own for a moment.",
        "Let me look around here first.",
        "I'll take my own route for now.",
    ),
    "explore": (
        "Let me look around a bit.",
        "I'll have a look over here.",
        "I'll keep looking.",
        "Let me see what else is around.",
    ),
    "explore_target": (
        "The {name} looks promising, I'll go check it.",
        "Maybe the {name} has what I need.",
        "I'll try the {name}.",
    ),
    "blocked": (
        "Something's in my way, let me turn.",
        "I can't get through there, I'll turn around a bit.",
    ),
    "blocked_ask": (
        "There's something in my way ahead. Which way around should I go?",
        "I can't walk straight on from here, it's blocked. Where should I go instead?",
    ),
    # Products.
    "inspect_supermarket": (
        "Let me pick up the {name} and read the label.",
        "I'll grab the {name} and check the details.",
        "Let me have a look at the {name}.",
    ),
    "inspect_home_furnishings": (
        "Let me take a closer look at the {name}.",
        "I'll check the {name} more closely.",
        "Let me see the details of the {name}.",
    ),
    "ask_explain": (
        "Why would the {name} suit me?",
        "What makes the {name} a good fit for me?",
        "Can you tell me why the {name} is a good choice?",
        "How does the {name} compare to the other options?",
    ),
    "buy": (
        "Great, I'll take the {name}.",
        "The {name} at {price} works for me. I'll add it to my cart.",
        "That's what I need. Adding the {name} to my cart.",
        "Perfect, the {name} it is.",
    ),
    "reject_budget": (
        "The {name} is {price}, that's more than I want to spend.",
        "At {price}, the {name} is over my limit.",
    ),
    "reject_budget_reveal": (
        "The {name} is {price}, but I don't want to go over {budget}.",
        "At {price}, the {name} is above my budget of {budget}.",
    ),
    "reject_avoid": (
        "The {name} has {feature}, which I want to avoid.",
        "I can't take the {name}, it has {feature}.",
    ),
    "reject_need": (
        "The {name} isn't {feature}, and I need that.",
        "The {name} doesn't have the {feature} I'm after.",
    ),
    "reject_category": (
        "The {name} isn't really what I'm looking for.",
        "The {name} is not the kind of thing I need.",
    ),
    "reject_generic": (
        "The {name} doesn't quite fit what I need.",
        "I don't think the {name} is right for me.",
    ),
    "reject_substitute": (
        "The {name} is close, but not quite what I had in mind.",
        "The {name} is similar, but I'd prefer something else.",
    ),
    "reject_pricier": (
        "The {name} costs more than the {other}, so I'd rather not.",
        "The {other} is cheaper than the {name}, I'll pass on this one.",
    ),
    "style_clarify": (
        "Is there anything else that would work?",
        "Do you have something that fits better?",
        "What else could I look at?",
    ),
    "style_compare": (
        "How do the other options compare?",
        "Could you compare it with something else?",
        "Which alternative would you suggest instead?",
    ),
    "already_there": (
        "I'm at the {name} now, but I don't see it. Where exactly should I look?",
        "I'm already at the {name}. Let me look around here.",
        "I'm standing at the {name}. Which part should I look at?",
    ),
    "put_back": (
        "I'll put the {name} back.",
        "Let me put the {name} back where it was.",
    ),
    "already_rejected": (
        "I already looked at the {name}, it doesn't work for me.",
        "We ruled out the {name} already.",
    ),
    "cannot_see": (
        "I'd like the {name}, but I can't see it from here. Where is it?",
        "Where can I find the {name} again?",
    ),
    "give_up": (
        "I don't think I'll find what I need today. Thanks anyway, goodbye.",
        "This isn't getting me anywhere. I'll leave it for now, goodbye.",
        "Never mind, that's all for today. Goodbye.",
        "I'm going to stop here. Thanks, goodbye.",
    ),
}

# Extra sentences for talkative shoppers, by behavior style.
STYLE_FILLERS: dict[str, tuple[str, ...]] = {
    "decisive": ("I'd like to get this done quickly.", "I know what I want."),
    "exploratory": ("I like browsing a bit before I decide.", "I'm open to ideas."),
    "cautious": ("I want to be careful with this choice.", "I'd like to be sure first."),
    "skeptical": ("I'll need some convincing.", "I'm not easily sold on things."),
    "chatty": ("This store is nicer than I expected.", "I've been meaning to do this for a while."),
    "default": ("Thanks for helping me out.", "I appreciate the help."),
}

# Phrases a shopper uses to close a conversation (the moderator listens for them).
CLOSING_PHRASES = (
    "goodbye",
    "bye",
    "that's all",
    "that is all",
    "i'll leave it",
    "i will leave it",
    "no thanks",
    "no, thanks",
    "i'm done",
    "i am done",
    "i'm going to stop",
    "never mind",
    "not interested",
    "i give up",
)

_SENTENCE_STARTS = ("i ", "i'", "my ", "we ", "we'", "our ", "it ", "it'", "please", "something ")


def pick(rng: np.random.Generator, key: str, **slots: object) -> str:
    """Choose one template of ``key`` with ``rng`` and fill it."""
    if key not in TEMPLATES:
        raise ValueError(f"unknown template key {key!r}; valid: {sorted(TEMPLATES)}")
    options = TEMPLATES[key]
    return options[int(rng.integers(len(options)))].format(**slots)


def format_price(value: float) -> str:
    """``9.99 -> "$9.99"``, ``10.0 -> "$10"``."""
    value = float(value)
    return f"${value:.0f}" if value == round(value) else f"${value:.2f}"


def _is_sentence(text: str) -> bool:
    low = text.strip().lower()
    return low.startswith(_SENTENCE_STARTS) or text.strip()[-1:] in ".!?"


def _as_sentence(text: str) -> str:
    text = text.strip()
    text = text[0].upper() + text[1:] if text else text
    return text if text[-1:] in ".!?" else text + "."


def detail_sentence(rng: np.random.Generator, kind: str, text: str, value: object = None) -> str:
    """One sentence disclosing a goal detail (a DisclosureItem's kind, text and value)."""
    if text and _is_sentence(text):
        return _as_sentence(text)
    if kind == "budget" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return pick(rng, "budget_value", budget=format_price(value))
    if kind not in ("category", "use", "budget", "avoid", "need"):
        raise ValueError(f"unknown disclosure kind {kind!r}")
    return pick(rng, kind, text=text.strip().rstrip("."))


def restate_sentence(rng: np.random.Generator, kind: str, text: str, value: object = None) -> str:
    """Repeat an already disclosed detail ("Like I said, ...")."""
    sentence = detail_sentence(rng, kind, text, value)
    prefix = pick(rng, "restate_prefix")
    first = sentence[:1].lower() if not sentence.startswith(("I ", "I'")) else sentence[:1]
    return prefix + first + sentence[1:]
