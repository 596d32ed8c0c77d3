"""How the rule-based shopper reads the assistant's words: names, directions, questions.

Keyword and name matching only (no model): a product, fixture, store or area counts as
mentioned when its name (or its label before a colon, "Shelf 3") appears by enough word
overlap; directions and approach words map to tool arguments; question sentences say which
goal detail was asked about.
"""

from __future__ import annotations

import re
from typing import Any

from situ_gym.actions.tools import ANGLE_RANGE

__all__ = [
    "ASK_KEYWORDS",
    "BLOCKED_WORDS",
    "EXPLAIN_WORDS",
    "GREET_WORDS",
    "HINTS",
    "STOPWORDS",
    "UNITS",
    "aliases",
    "asked_kinds",
    "describe_direction",
    "mentions",
    "name_match_score",
    "parse_direction",
    "question_sentences",
    "says",
    "short_label",
    "stem",
    "tag_feature",
    "words",
]

STOPWORDS = frozenset(
    "a an the of and or for with to in on at by from your you my our this that it its is are "
    "be it's there here some any".split()
)
UNITS = frozenset("lb lbs oz fl ct pk pack g kg ml l qt gal count in cm".split())

# Keywords (in a question sentence) -> the disclosure kind the assistant is asking about.
ASK_KEYWORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("budget", ("budget", "price", "spend", "afford", "how much", "cost", "cheap", "expensive")),
    (
        "avoid",
        ("avoid", "allerg", "don't want", "do not want", "dislike", "stay away", "intoleran"),
    ),
    (
        "use",
        ("what for", "used for", "use it", "occasion", "purpose", "what is it for", "intended"),
    ),
    (
        "category",
        ("looking for", "help you find", "what brings", "what kind", "shopping for", "what can i"),
    ),
    (
        "need",
        (
            "prefer",
            "flavour",
            "flavor",
            "material",
            "colour",
            "color",
            "style",
            "size",
            "need",
            "requirement",
            "important",
            "feature",
        ),
    ),
)

EXPLAIN_WORDS = (
    "because",
    "since",
    "which means",
    "so it",
    "so you",
    "ideal for",
    "great for",
    "good for",
    "perfect for",
    "fits your",
    "matches your",
    "suits your",
    "within your budget",
    "compared",
    "than the",
    "cheaper",
    "made of",
    "made from",
)
BLOCKED_WORDS = (
    "block",
    "collid",
    "obstruct",
    "cannot move",
    "can't move",
    "could not",
    "no room",
)
GREET_WORDS = ("hello", "hi ", "hi!", "hi,", "welcome", "good morning", "good afternoon", "hey")

# Words a shopper associates with kinds of fixtures / shop names (signage-level knowledge).
HINTS: dict[str, tuple[str, ...]] = {
    "freezer": ("frozen", "ice", "pizza", "frie"),
    "cooler": ("milk", "dairy", "yogurt", "cheese", "juice", "drink", "chilled", "butter", "egg"),
    "produce": ("fruit", "vegetable", "apple", "banana", "fresh", "salad", "berrie", "berry"),
    "light": ("lamp", "light", "lighting", "bulb", "chandelier", "sconce"),
    "plant": ("plant", "planter", "pot", "succulent", "fern"),
    "leather": ("desk", "office", "study", "bookcase", "chair"),
    "ink": ("desk", "office", "study", "pen"),
    "play": ("game", "toy", "sport", "play", "kids", "ball"),
    "nordic": ("storage", "shelf", "rug", "basket", "scandinavian"),
    "atelier": ("sofa", "living", "coffee", "armchair", "modern"),
    "curio": ("vintage", "classical", "ornament", "antique", "clock"),
}


def words(text: str, *, keep_numbers: bool = True) -> list[str]:
    """Lower-case significant words of a name or utterance (stopwords and units dropped)."""
    out = []
    for w in re.findall(r"[a-z0-9]+(?:'[a-z]+)?", text.lower()):
        if w in STOPWORDS or w in UNITS:
            continue
        if not keep_numbers and w.isdigit():
            continue
        out.append(w)
    return out


def aliases(name: str) -> list[str]:
    """A display name and, for names like "Shelf 3: cereal, oatmeal", its label "Shelf 3"."""
    out = [name.strip()]
    if ":" in name:
        out.append(name.split(":", 1)[0].strip())
    return [a for a in out if a]


def says(phrase: str, low: str) -> bool:
    return (
        re.search(r"(?<![a-z0-9])" + re.escape(phrase.lower()) + r"(?![a-z0-9])", low) is not None
    )


def name_match_score(name: str, text: str, *, keep_numbers: bool = True) -> tuple[float, int]:
    """How well ``text`` mentions the entity called ``name``: (fraction of name words, count).

    A verbatim (case-insensitive, whole-word) mention of the name, or of its label before a
    colon ("Shelf 3" of "Shelf 3: cereal, oatmeal"), scores ``(1.0, n)``; otherwise the best
    word overlap over those aliases counts.
    """
    low = text.lower()
    best = (0.0, 0)
    text_words = set(words(low))
    for alias in aliases(name):
        alias_words = words(alias, keep_numbers=keep_numbers)
        if not alias_words:
            continue
        if says(alias, low):
            return 1.0, len(alias_words)
        # A number only counts next to the word it numbers ("freezer 2", not "cooler 2").
        # A numbered name without its number ("Upright Freezer" for "Upright Freezer 2") is
        # ambiguous and does not count.
        hit = 0
        for i, w in enumerate(alias_words):
            if w.isdigit():
                if not (i > 0 and says(f"{alias_words[i - 1]} {w}", low)):
                    hit = -len(alias_words)
                    break
                hit += 1
            else:
                hit += int(w in text_words)
        hit = max(hit, 0)
        frac = hit / len(alias_words)
        best = max(best, (min(frac, 0.99), hit))  # only a verbatim mention scores 1.0
    return best


def mentions(name: str, text: str, *, keep_numbers: bool = True) -> tuple[bool, tuple[float, int]]:
    """Whether ``text`` names the entity ``name``, and the score (see ``name_match_score``).

    Accepted: the whole name (or its label) verbatim, or at least two of its words making
    at least half of them.
    """
    score = name_match_score(name, text, keep_numbers=keep_numbers)
    frac, hit = score
    if frac >= 1.0:
        return True, score
    return hit >= 2 and frac >= 0.5, score


def question_sentences(text: str) -> list[str]:
    parts = re.split(r"(?<=[.!?])\s+", text.strip())
    cues = ("tell me", "let me know", "could you share", "can you share")
    return [p for p in parts if p.endswith("?") or any(c in p.lower() for c in cues)]


def asked_kinds(text: str) -> list[str]:
    """Disclosure kinds the assistant asks about, in keyword-table order (only in questions)."""
    kinds: list[str] = []
    for sentence in question_sentences(text):
        low = sentence.lower()
        for kind, keys in ASK_KEYWORDS:
            if kind not in kinds and any(k in low for k in keys):
                kinds.append(kind)
    return kinds


def parse_direction(text: str) -> dict[str, Any] | None:
    """Map directional guidance in ``text`` to a user tool call, or None if there is none."""
    low = text.lower()
    m = re.search(r"(\d{1,3})\s*(?:°|deg|degrees?)", low)
    if m:
        angle = float(min(max(int(m.group(1)), ANGLE_RANGE[0]), ANGLE_RANGE[1]))
    elif re.search(r"\b(slightly|a bit|a little|slight)\b", low):
        angle = 30.0
    else:
        angle = 90.0
    if re.search(r"\b(few steps|a step|one step|short|little further|couple of steps)\b", low):
        distance = "short"
    elif re.search(r"\b(far|all the way|end of|long way|far end)\b", low):
        distance = "long"
    else:
        distance = "medium"
    if re.search(r"\bturn (all the way )?around\b|\bbehind you\b", low):
        return {"name": "turn", "arguments": {"direction": "right", "angle": 180.0}}
    ud = re.search(
        r"\b(?:look|glance|tilt)\s+(up|down)\b|\b(top|higher|upper)\s+shel|\b(bottom|lower)\s+shel",
        low,
    )
    if ud:
        direction = "up" if (ud.group(1) == "up" or ud.group(2)) else "down"
        return {"name": "look_up_down", "arguments": {"direction": direction, "angle": 20.0}}
    lr = re.search(r"\b(left|right)\b", low)
    forward = re.search(r"\b(walk|go|head|move|continue|keep going|straight|ahead|forward)\b", low)
    if lr:
        side = lr.group(1)
        if re.search(r"\bside\s*-?\s*step|\bstep (to the )?(left|right)\b|\bsideways\b", low):
            return {"name": "side_step", "arguments": {"direction": side, "distance": "short"}}
        turn_first = re.search(r"\bturn\b", low)
        if turn_first and forward:
            return {
                "name": "turn_and_move",
                "arguments": {"direction": side, "angle": angle, "distance": distance},
            }
        return {"name": "turn", "arguments": {"direction": side, "angle": angle}}
    if re.search(r"\b(step back|back up|backward|backwards)\b", low):
        return {"name": "move_backward", "arguments": {"distance": "short"}}
    if re.search(r"\b(straight ahead|ahead|forward|keep going|walk on|go straight)\b", low):
        return {"name": "move_forward", "arguments": {"distance": distance}}
    return None


def describe_direction(call: dict[str, Any]) -> str:
    a = call["arguments"]
    name = call["name"]
    if name == "turn":
        return "turning around" if a["angle"] >= 180 else f"turning {a['direction']}"
    if name == "turn_and_move":
        return f"turning {a['direction']} and walking on"
    if name == "move_and_turn":
        return f"walking on and turning {a['direction']}"
    if name == "side_step":
        return f"stepping to the {a['direction']}"
    if name == "look_up_down":
        return f"looking {a['direction']}"
    if name == "move_backward":
        return "stepping back"
    return "walking ahead"


def short_label(name: str) -> str:
    """How a shopper says a target's name: "Shelf 3" for "Shelf 3: jam, coffee, tea"."""
    return name.split(":", 1)[0].strip() or name


def stem(word: str) -> str:
    """Crude plural folding for matching ("lamps" -> "lamp"; "glass" stays)."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def tag_feature(tag: str) -> str:
    return tag.split(":", 1)[-1].replace("_", " ")
