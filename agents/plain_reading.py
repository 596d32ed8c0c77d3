"""The plain assistant's own reading of the shopper's words: categories, budget, labels, no's.

Deliberately ordinary: a word matcher over the catalog's own vocabulary (categories and
attribute labels), dollar amounts with the budget words around them, a few negation words
and everyday ways of turning something down. It knows nothing about how the simulated
shopper phrases things; the lexicons below are plain English, kept apart from the code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agents.obs_text import CatalogEntry

__all__ = ["Reading", "CatalogVocabulary", "words", "read_utterance"]

MAX_TEXT = 4000  # characters read per utterance; longer text is cut (bounded work)

# Words that turn the label or category after them into something to avoid.
NEGATORS = frozenset(
    "no not without avoid avoiding nothing never don't dont doesn't isn't aren't won't "
    "allergic allergy skip except hate dislike free minus".split()
)
# Negations that describe a product rather than a wish, unless a wish verb is near.
LACKS = frozenset("isn't aren't lack lacks lacking missing doesn't".split())
PREFERENCE_VERBS = frozenset("want like need love prefer avoid mind".split())
# Words near an amount that make it a spending limit.
BUDGET_WORDS = frozenset(
    "budget spend spending most under below max maximum limit cap afford less up within "
    "tops around about pay paying than over exceed beyond more".split()
)
# Everyday ways of turning an offer down (lower-case phrases, matched on word boundaries).
REJECTIONS = (
    "no thanks", "no thank you", "not for me", "not quite", "not really", "doesn't work",
    "does not work", "won't work", "wouldn't work", "isn't right", "not right", "not what",
    "too expensive", "too pricey", "too much", "too costly", "over my", "above my", "over budget",
    "out of my", "more than i", "can't afford", "cannot afford", "i'll pass", "i will pass",
    "pass on", "skip it", "skip that", "skip this", "not interested", "don't like", "do not like",
    "don't want", "do not want", "rather not", "not a fit", "doesn't fit", "does not fit", "doesn't suit", "not suit",
    "won't do", "not that one", "not this one", "no good", "don't need", "isn't for me",
    "not keen", "decided against", "put it back",
)
PRICE_COMPLAINTS = ("expensive", "pricey", "costly", "budget", "afford", "cheaper", "over my", "above my", "too much")
ACCEPTANCES = (
    "i'll take it", "i'll take this", "i'll take that", "i'll take the", "i will take it", "i'll buy",
    "i will buy", "sounds good", "sounds great", "perfect",
    "that works", "looks good", "looks great", "let's get", "add it", "i'll get", "i want it",
    "i'd like it", "i like it", "i love it", "great choice",
)
ASK_WHY = ("why", "suit", "good for", "right for", "reason", "what makes")
ASK_PRICE = ("how much", "price", "cost", "costs")
ASK_WHERE = ("where", "which way", "how do i get", "can't find", "cannot find", "don't see", "do not see", "can't see")
ASK_OTHERS = ("other", "else", "alternative", "alternatives", "options", "compare", "cheaper", "instead")
ASK_DETAILS = ("made of", "material", "colour", "color", "size", "flavour", "flavor", "ingredients", "allergen", "what is")

# Label values that are also everyday function words ("I can spend", "some yogurt").
COMMON_WORDS = frozenset("can some none no any all one it more less much free yes not".split())

_TOKEN = re.compile(r"[a-z0-9]+(?:['\-.][a-z0-9]+)*")
_MONEY = re.compile(r"\$\s?(\d[\d,]*(?:\.\d+)?)|(\d[\d,]*(?:\.\d+)?)\s?(?:dollars|bucks|usd)\b", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _singular(token: str) -> str:
    """A crude singular so that "lamps" meets "lamp" and "berries" meets "berry"."""
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if len(token) > 4 and token.endswith(("ches", "shes", "sses", "xes")):
        return token[:-2]
    if len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    return token


def words(text: str) -> list[str]:
    """Lower-case word tokens in their crude singular form."""
    return [_singular(t) for t in _TOKEN.findall(text.lower().replace("’", "'"))]


def _has_phrase(text: str, phrases: tuple[str, ...]) -> bool:
    return any(re.search(r"(?<![a-z])" + re.escape(p) + r"(?![a-z])", text) for p in phrases)


def _find(seq: list[str], phrase: list[str]) -> list[int]:
    n = len(phrase)
    return [i for i in range(len(seq) - n + 1) if seq[i : i + n] == phrase] if n else []


@dataclass(frozen=True)
class CatalogVocabulary:
    """What can be recognised: category phrases, label values and product names."""

    categories: dict[tuple[str, ...], str]  # word sequence -> category
    labels: dict[tuple[str, ...], tuple[str, ...]]  # value words -> full tags ("flavour:vanilla")
    names: tuple[str, ...]  # product display names, longest first
    places: tuple[str, ...] = ()  # fixture, store and area names (heard as places, not wishes)

    @classmethod
    def from_catalog(cls, products: list[CatalogEntry], places: list[str] = ()) -> CatalogVocabulary:
        categories = {tuple(words(p.category)): p.category for p in products}
        labels: dict[tuple[str, ...], set[str]] = {}
        for p in products:
            for tag in p.tags:
                _, _, value = tag.partition(":")
                key = tuple(words(value or tag))
                if key:
                    labels.setdefault(key, set()).add(tag)
        names = tuple(sorted({p.name for p in products}, key=lambda n: (-len(n), n)))
        spots = tuple(sorted({p.lower() for p in places}, key=lambda n: (-len(n), n)))
        return cls(categories, {k: tuple(sorted(v)) for k, v in labels.items()}, names, spots)


@dataclass
class Reading:
    """What one shopper utterance told us."""

    categories: list[str] = field(default_factory=list)  # categories asked for, best first
    head_matches: list[str] = field(default_factory=list)  # categories met by their last word only
    budget: float | None = None
    wanted: set[str] = field(default_factory=set)
    avoided: set[str] = field(default_factory=set)
    named: list[str] = field(default_factory=list)  # product names mentioned
    rejected_names: list[str] = field(default_factory=list)
    rejection_labels: set[str] = field(default_factory=set)  # labels named while turning down
    rejects: bool = False  # turns something down without naming it
    price_complaint: bool = False
    accepts: bool = False
    questions: list[str] = field(default_factory=list)  # "why", "price", "where", "others", "details"


def _negated(seq: list[str], start: int) -> bool:
    window = seq[max(0, start - 4) : start]
    return any(w in NEGATORS for w in window)


def _lacking(seq: list[str], start: int) -> bool:
    """"it isn't vegan", "doesn't have a lid": a product lacks it (so it is wanted)."""
    window = seq[max(0, start - 4) : start]
    return any(w in LACKS for w in window) and not any(w in PREFERENCE_VERBS for w in window)


def _amounts(sentence: str, asked_budget: bool, product_prices: set[float]) -> list[float]:
    low = sentence.lower()
    found = []
    for m in _MONEY.finditer(low):
        value = float((m.group(1) or m.group(2)).replace(",", ""))
        before = words(low[max(0, m.start() - 40) : m.start()])[-5:]
        after = words(low[m.end() : m.end() + 20])[:2]
        cue = any(w in BUDGET_WORDS for w in before + after)
        if cue or (asked_budget and round(value, 2) not in product_prices):
            found.append(value)
    return found


def read_utterance(
    text: str,
    vocab: CatalogVocabulary,
    *,
    asked_budget: bool = False,
    prices: dict[str, float] | None = None,
    only_labels: set[str] | None = None,
) -> Reading:
    """Read one shopper utterance. ``asked_budget``: our last question was about money,
    so a bare amount is the answer. ``prices`` (name -> price) tell a quoted product price
    from a limit. ``only_labels``: the labels worth hearing (those of the category sought)."""
    prices = prices or {}
    reading = Reading()
    text = text[:MAX_TEXT]
    for sentence in _SENTENCE.split(text):
        low = sentence.lower().replace("’", "'")
        named = [n for n in vocab.names if n.lower() in low]
        # drop names contained in a longer name already found
        named = [n for n in named if not any(n != m and n.lower() in m.lower() for m in named)]
        stripped = low
        for n in named:
            stripped = stripped.replace(n.lower(), " ")
        for place in vocab.places:  # "the Office Chairs area" names a place, not a wish
            stripped = stripped.replace(place, " ")
        seq = words(stripped)
        rejecting = _has_phrase(low, REJECTIONS) or re.match(r"^\s*(no|nope|nah)\b", low) is not None
        quoted = {round(prices[n], 2) for n in named if n in prices}
        for value in _amounts(stripped, asked_budget, quoted):
            reading.budget = value if reading.budget is None else min(reading.budget, value)
        for phrase, category in vocab.categories.items():
            for i in _find(seq, list(phrase)):
                if not _negated(seq, i) and category not in reading.categories:
                    reading.categories.append(category)
        if not reading.categories:
            for phrase, category in vocab.categories.items():
                if phrase[-1] in seq and category not in reading.head_matches:
                    i = seq.index(phrase[-1])
                    if not _negated(seq, i):
                        reading.head_matches.append(category)
        for phrase, tags in vocab.labels.items():
            if only_labels is not None:
                tags = tuple(t for t in tags if t in only_labels)
            if not tags or (len(phrase) == 1 and phrase[0] in COMMON_WORDS):
                continue
            for i in _find(seq, list(phrase)):
                allergen = any(t.startswith("allergen:") for t in tags)
                if _lacking(seq, i) and not allergen:
                    reading.wanted.update(tags)
                elif _negated(seq, i) or (allergen and "allergic" in seq):
                    reading.avoided.update(tags)
                elif rejecting:
                    reading.rejection_labels.update(tags)
                elif not allergen:
                    reading.wanted.update(tags)
        reading.named.extend(n for n in named if n not in reading.named)
        if rejecting:
            if named:
                reading.rejected_names.extend(n for n in named if n not in reading.rejected_names)
            else:
                reading.rejects = True
            reading.price_complaint |= _has_phrase(low, PRICE_COMPLAINTS)
        elif _has_phrase(low, ACCEPTANCES):
            reading.accepts = True
        if "?" in sentence:
            for kind, cues in (
                ("others", ASK_OTHERS),
                ("where", ASK_WHERE),
                ("price", ASK_PRICE),
                ("why", ASK_WHY),
                ("details", ASK_DETAILS),
            ):
                if _has_phrase(low, cues) and kind not in reading.questions:
                    reading.questions.append(kind)
        elif _has_phrase(low, ASK_WHERE) and "where" not in reading.questions:
            reading.questions.append("where")  # "I can't find it" asks for directions too
    # a label also present in "wanted" and "avoided" in one breath: trust the avoidance
    reading.wanted -= reading.avoided
    return reading
