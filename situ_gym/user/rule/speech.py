"""What the rule shopper says: several phrasings per intent, picked by its seed and persona.

Slots are ``str.format`` names: ``{name}`` (a product as said aloud, or a place phrase),
``{price}``, ``{budget}``, ``{feature}``, ``{other}``, ``{direction}``. Places come through
``situ_gym.scene.wording.place_phrase`` so that "Shelf 3", "Nordic Nest" and "the Floor Lamps
area" read right; handles never appear.
"""

from __future__ import annotations

import numpy as np

from situ_gym.scene.model import DisclosureItem
from situ_gym.scene.wording import avoid_phrasings, need_phrasings
from situ_gym.stores import store_spec
from situ_gym.user.rule.disclosure import Answer

__all__ = ["PHRASES", "REMARKS", "say", "format_price", "disclose", "restate", "answer_part", "capitalize"]

# How the shopper names a goal detail it tells later, by its kind.
_TOPIC = {"budget": "the budget", "avoid": "what to avoid", "need": "what else I need", "category": "what it's for",
          "use": "what it's for"}

PHRASES: dict[str, tuple[str, ...]] = {
    "category": ("I'm looking for {article} {text}.", "I need {article} {text}.", "I'm after {article} {text}.",
                 "I came in for {article} {text}.", "I'd like to pick up {article} {text}."),
    "budget": ("My budget is about {budget}.", "I'd like to keep it under {budget}.",
               "I don't want to spend more than {budget}.", "Up to {budget} is fine.", "{budget} is my limit."),
    "restate": ("Like I said, {text}", "As I mentioned, {text}", "Again, {text}", "Just to repeat, {text}"),
    # a part of the assistant's question the shopper has nothing for, or must answer later
    "nothing_avoid": ("Nothing I need to avoid, really.", "No, nothing to avoid."),
    "nothing_preference": ("No particular preferences beyond that.", "Nothing special, really."),
    "nothing_size": ("Any size is fine.", "Size doesn't matter much."),
    "nothing_budget": ("I haven't set a budget.",),
    "later": ("One thing at a time, I'll come to {topic} in a moment.", "Let me get back to you on {topic}.",
              "I'll tell you about {topic} after that."),
    "ack": ("Okay.", "Alright.", "Thanks.", "Sure.", "Hmm.", "Got it.", "Right.", "I see."),
    "greet": ("Hi!", "Hello!", "Hi there.", "Hey, thanks for helping.", "Hello, thanks."),
    "confused": ("Sorry, I didn't catch that.", "I'm not sure what you mean.", "Could you say that again?",
                 "That doesn't really help me."),
    "repeated": ("You already said that.", "We've been over this.", "That's the same as before."),
    "follow_fixture": ("Okay, I'll head to {name}.", "Sure, walking over to {name} now.", "Alright, going to {name}.",
                       "On my way to {name}."),
    "follow_fixture_back": ("I'll go round to the back of {name}.", "Okay, the other side of {name} then."),
    "follow_store_inside": ("I'll go into {name}.", "Okay, heading inside {name}.", "Let me walk into {name}."),
    "follow_store_outside": ("I'll walk over to the entrance of {name}.", "Okay, heading to the doorway of {name}.",
                             "Let me step out to the front of {name}."),
    "follow_area": ("Let me go over to {name}.", "Okay, I'll check out {name}.", "I'll walk to {name}."),
    "follow_direction": ("Okay, {direction}.", "Got it, {direction}.", "Alright, {direction} then.", "Sure, {direction}."),
    "decline_guidance": ("I'd rather look around on my own for a moment.", "Let me look around here first.",
                         "I'll take my own route for now."),
    "explore": ("Let me look around a bit.", "I'll have a look over here.", "I'll keep looking.",
                "Let me see what else is around."),
    "explore_target": ("{name} looks promising, I'll go and check.", "Maybe {name} has what I need.", "I'll try {name}."),
    "cannot_see_place": ("I can't see {name} from here. Which way is it?", "Where is {name}? I don't see it.",
                         "I don't see {name} anywhere around me."),
    "blocked": ("Something's in my way, let me turn.", "I can't get through there, I'll turn a bit."),
    "blocked_ask": ("There's something in my way ahead. Which way around should I go?",
                    "I can't walk straight on from here, it's blocked. Where should I go instead?"),
    "inspect_pick_up_item": ("Let me pick up the {name} and read the label.", "I'll grab the {name} and check the details.",
                            "Let me have a look at the {name}."),
    "inspect_check_item": ("Let me take a closer look at the {name}.", "I'll check the {name} more closely.",
                                 "Let me see the details of the {name}."),
    "ask_explain": ("Why would the {name} suit me?", "What makes the {name} a good fit for me?",
                    "Can you tell me why the {name} is a good choice?", "What's good about the {name}?"),
    "buy": ("Great, I'll take the {name}.", "The {name} at {price} works for me. I'll add it to my cart.",
            "That's what I need. Adding the {name} to my cart.", "Perfect, the {name} it is."),
    "buy_tradeoff": ("It's not exactly what I wanted, but you've convinced me. I'll take the {name}.",
                     "Fair point. I'll go with the {name}.", "Alright, the {name} will do. Adding it to my cart."),
    "hesitate_budget": ("The {name} is {price}, a bit over what I planned. Is it really worth it?",
                        "Hmm, {price} is more than I wanted to pay. Why should I go for the {name}?"),
    "hesitate_need": ("The {name} isn't {feature}, though. Would it still work for me?",
                      "I was hoping for {feature}, and the {name} doesn't have it. Is it still a good choice?"),
    "reject_budget": ("The {name} is {price}, that's more than I want to spend.", "At {price}, the {name} is over my limit.",
                      "{price} is too much for me."),
    "reject_budget_reveal": ("The {name} is {price}, but I don't want to go over {budget}.",
                             "At {price}, the {name} is above my budget of {budget}."),
    "reject_avoid": ("The {name} has {feature}. That's a no for me.", "I can't take the {name}, it has {feature}.",
                     "No, the {name} has {feature} in it."),
    "reject_need": ("The {name} isn't {feature}, and I need that.", "The {name} doesn't have the {feature} I'm after.",
                    "The {name} is missing {feature}."),
    "reject_category": ("The {name} isn't really what I'm looking for.", "The {name} is not the kind of thing I need."),
    "reject_generic": ("The {name} doesn't quite fit what I need.", "I don't think the {name} is right for me.",
                       "The {name} isn't for me."),
    "reject_substitute": ("The {name} is close, but not quite what I had in mind.", "The {name} is similar, but I'd prefer something else."),
    "reject_pricier": ("The {name} costs more than the {other}, so I'd rather not.", "The {other} is cheaper than the {name}, I'll pass on this one."),
    "style_clarify": ("Is there anything else that would work?", "Do you have something that fits better?", "What else could I look at?"),
    "style_compare": ("How do the other options compare?", "Could you compare it with something else?",
                      "Which alternative would you suggest instead?"),
    "already_there": ("I'm at {name} now, but I don't see it. Where exactly should I look?", "I'm already at {name}. Let me look around here.",
                      "I'm standing at {name}. Which part should I look at?"),
    "put_back": ("I'll put the {name} back.", "Let me put the {name} back where it was."),
    "already_rejected": ("I already looked at the {name}, it doesn't work for me.", "We ruled out the {name} already."),
    "cannot_see": ("I'd like the {name}, but I can't see it from here. Where is it?", "Where can I find the {name}?"),
    "give_up": ("I don't think I'll find what I need today. Thanks anyway, goodbye.", "This isn't getting me anywhere. I'll leave it for now, goodbye.",
                "Never mind, that's all for today. Goodbye.", "I'm going to stop here. Thanks, goodbye."),
}

# Personal remarks of talkative shoppers, by behaviour style (each at most once an episode).
REMARKS: dict[str, tuple[str, ...]] = {
    "decisive": ("I'd like to get this done quickly.", "I usually know what I want."),
    "exploratory": ("I like browsing a bit before I decide.", "I'm open to ideas."),
    "cautious": ("I want to be careful with this choice.", "I'd like to be sure first."),
    "skeptical": ("I'll need some convincing.", "I'm not easily sold on things."),
    "chatty": ("This place is nicer than I expected.", "I've been meaning to do this for a while."),
    "default": ("Thanks for helping me out.", "I appreciate the help."),
}


def say(rng: np.random.Generator, key: str, **slots: object) -> str:
    """One phrasing of ``key``, chosen with ``rng``, filled and capitalised."""
    if key not in PHRASES:
        raise ValueError(f"unknown phrase key {key!r}; valid: {sorted(PHRASES)}")
    options = PHRASES[key]
    return capitalize(options[int(rng.integers(len(options)))].format(**slots))


def capitalize(sentence: str) -> str:
    return sentence[:1].upper() + sentence[1:] if sentence else sentence


def format_price(value: float) -> str:
    """``9.99 -> "$9.99"``, ``10.0 -> "$10"``, ``1200.0 -> "$1,200"``."""
    value = float(value)
    return f"${value:,.0f}" if value == round(value) else f"${value:,.2f}"


def _article(category: str, store: str) -> str:
    return store_spec(store).article(category)


def disclose(rng: np.random.Generator, kind: str, text: str, value: object, store: str) -> str:
    """One sentence disclosing a goal detail, phrased afresh from its value where it can be."""
    if kind == "budget" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return say(rng, "budget", budget=format_price(value))
    if kind == "category" and isinstance(value, str):
        return say(rng, "category", article=_article(value, store), text=value)
    if kind in ("need", "avoid") and isinstance(value, str) and ":" in value:
        options = need_phrasings(value) if kind == "need" else avoid_phrasings(value)
        return capitalize(options[int(rng.integers(len(options)))])
    text = (text or "").strip()
    return capitalize(text if text[-1:] in ".!?" else text + ".") if text else ""


def restate(rng: np.random.Generator, kind: str, text: str, value: object, store: str) -> str:
    sentence = disclose(rng, kind, text, value, store)
    first = sentence if sentence.startswith(("I ", "I'")) else sentence[:1].lower() + sentence[1:]
    return say(rng, "restate", text=first)


def answer_part(rng: np.random.Generator, part: Answer, items: list[DisclosureItem], store: str) -> str:
    """The sentence for one part of the shopper's answer (``disclosure.Answer``)."""
    if part.how in ("new", "again"):
        item = items[part.item]
        speak = disclose if part.how == "new" else restate
        return speak(rng, item.kind, item.text, item.value, store)
    if part.how == "none":
        return say(rng, f"nothing_{part.slot}") if f"nothing_{part.slot}" in PHRASES else ""
    if part.how == "later":
        return say(rng, "later", topic=_TOPIC.get(items[part.item].kind, "the rest"))
    raise ValueError(f"unknown answer part {part.how!r}")
