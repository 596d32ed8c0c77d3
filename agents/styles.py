"""Style assistants: the heuristic's turns said in another register, nothing else changed.

Each wraps ``HeuristicAssistant`` (which sees the real dialogue, as ``agents.probes``'s
``ProbeAssistant`` does) and rewrites only ``response``; ``assistant_actions``,
``expected_user_action`` and ``ranking`` are the heuristic's, key for key. The meaning is
kept: every product the heuristic names, every price, place, direction, angle and
question is still in the restyled text. They test how much of the reward, the shopper and
the judges depend on the surface form of an honest assistant's words.

* ``style-chat`` (:class:`ChatStyleAssistant`): chat-model prose with markdown, a friendly
  opener, **bold** names and places, bullet points for facts, numbered options when two
  products are weighed, a closing question or offer; at most ``MAX_CHAT_WORDS`` words.
* ``style-clipped`` (:class:`ClippedStyleAssistant`): lower-case notes without articles
  or filler ("rec: <name>, 4.69", "shelf 3 -> left", "budget?"); product names cut to the
  part before the first comma (:func:`clipped_name`, which identifies the product), prices
  sometimes written without "$".
* ``style-nonnative`` (:class:`NonNativeStyleAssistant`): non-native English (dropped
  articles and copulas, wrong prepositions, "more cheap", "try turning left", prices
  sometimes "4.69 dollars").

The rewriting works sentence by sentence with its own rules, written apart from the
text reader of ``situ_gym``: names, places and prices are masked, each sentence is matched
against the heuristic's sentence forms (a frame with slots), and each style renders the
frame; a sentence of no known form goes through the style's generic rewrite. Variants
are picked with a numpy Generator seeded from ``reset``'s seed, so a seed gives the same
words every time.
"""

from __future__ import annotations

import copy
import json
import re
import zlib
from typing import Any

import numpy as np

from agents.base import Assistant
from agents.heuristic import HeuristicAssistant
from agents.obs_text import CatalogEntry, parse_catalog, parse_nav_targets
from situ_gym.stores import PAPER_STORES

__all__ = [
    "StyleAssistant",
    "ChatStyleAssistant",
    "ClippedStyleAssistant",
    "NonNativeStyleAssistant",
    "clipped_name",
    "split_frames",
    "MAX_CHAT_WORDS",
]

MAX_CHAT_WORDS = 90
_MONEY = re.compile(r"\$\d[\d,]*(?:\.\d+)?")
_TOKEN = re.compile(r"\u27e8([PLM])(\d+)\u27e9")  # ⟨P0⟩ product, ⟨L0⟩ place, ⟨M0⟩ money
_P, _L, _M = r"\u27e8P\d+\u27e9", r"\u27e8L\d+\u27e9", r"\u27e8M\d+\u27e9"


def clipped_name(name: str) -> str:
    """The identifying words of a catalog name, lower-cased: the part before the first
    comma (the size or finish after it is dropped). "Meadow Creek Dairy Plain Greek
    Yogurt, 32 oz" -> "meadow creek dairy plain greek yogurt"."""
    return name.split(",", 1)[0].strip().lower()


# ---------------------------------------------------------------- sentence forms
# (kind, pattern) over a masked sentence; P/L/M stand for masked products, places, prices.
_FORMS: list[tuple[str, str]] = [
    ("hello", r"Hi!"),
    ("happy_help", r"I'm happy to help you shop today\."),
    ("ask_need", r"What are you looking for, and what will you use it for\?"),
    ("ask_kind", r"What kind of product do you have in mind\?"),
    ("kind_hint", r"A product type or how you plan to use it helps me find the right aisle\."),
    ("tell_more", r"Tell me a little more about what you need, a product type, a brand or what it is for, "
                  r"and I'll find it for you\."),
    ("more_q", r"Could you tell me a bit more about what you need\?"),
    ("got_cat", r"Got it, (?P<cat>[^.?!]+)\."),
    ("ask_budget", r"Roughly how much would you like to spend\?"),
    ("ask_features", r"Any must-haves or things to avoid for your (?P<cat>.+?), like flavour, material, "
                     r"size or allergens\?"),
    ("labels", r"The (?P<p>{P}) costs (?P<price>{M}); its labels say (?P<labels>.+)\."),
    ("suggest", r"I suggest the (?P<p>{P}) because it is (?P<why>.+) and costs (?P<price>{M})"
                r"(?:, within your (?P<budget>{M}) budget)?\."),
    ("compare", r"Compared with the (?P<alt>{P}), which (?P<diff>costs more|misses some of what you asked for), "
                r"the (?P<p>{P}) suits you better since it offers (?P<feat>.+)\."),
    ("closest", r"The (?P<p>{P}) is the closest match here since it offers (?P<feat>.+)\."),
    ("fits", r"The (?P<p>{P}) fits your needs because it is an? (?P<cat>.+?)(?: and has none of (?P<none>.+))?, "
             r"priced at (?P<price>{M})\."),
    ("matches", r"The (?P<p>{P}) matches what you told me\."),
    ("cart_if", r"If you're happy with it, add it to your cart\."),
    ("cart_q", r"Shall we put it in your cart\?"),
    ("cart_ready", r"It's ready to go in your cart whenever you are\."),
    ("closer", r"Take a closer look\."),
    ("look_at", r"Have a look at it\."),
    ("skip", r"Understood, I'll skip that one\."),
    ("better", r"There's a better match for your (?P<cat>.+); let me guide you to it\."),
    ("at_place", r"You're at (?P<here>{L})\."),
    ("in_place", r"You're in (?P<here>{L})\."),
    ("step", r"Step (?P<way>left|right) along it; the (?P<cat>.+) is further along this side\."),
    ("turn_little", r"Turn (?P<way>left|right) a little; the (?P<cat>.+) is on display here\."),
    ("head_area", r"Head over to the (?P<here>{L}) in (?P<shop>{L}); the (?P<cat>.+) is there\."),
    ("turn_find", r"Turn (?P<way>left|right) to find the (?P<here>{L}) display\."),
    ("leave", r"Let's leave (?P<here>{L}) through its doorway first; (?P<shop>{L}) is elsewhere on the floor\."),
    ("enter", r"Walk into (?P<here>{L}) through its doorway, just inside\."),
    ("at_fixture", r"The (?P<cat>.+) is at the (?P<side>front|back|nearest side) of (?P<here>{L})\."),
    ("head_there", r"Head there\."),
    ("hop_store", r"Walk to the doorway of (?P<here>{L}), just outside; (?P<goal>{L}) is beyond it\."),
    ("hop_fixture", r"Walk over to the nearest side of (?P<here>{L}); (?P<goal>{L}) is beyond it\."),
    ("turn_deg", r"Turn (?P<way>left|right) about (?P<angle>\d+) degrees; (?P<here>{L}) is in that direction\."),
    ("ahead", r"Walk ahead a few steps toward (?P<here>{L})\."),
    ("keep_guiding", r"I'll keep guiding you\."),
    ("getting_closer", r"We're getting closer\."),
    ("blocks", r"Tell me if anything blocks your way\."),
]
_COMPILED = [
    (kind, re.compile("^" + pat.replace("{P}", _P).replace("{L}", _L).replace("{M}", _M) + "$"))
    for kind, pat in _FORMS
]
_NEXT = re.compile(r"^(?:As a next step|Next): ")


def split_frames(masked: str) -> list[tuple[str, dict[str, str]]]:
    """(kind, slots) per sentence of a masked text; ("other", {"text": ...}) when no form
    matches, ("next", {}) for the "As a next step:" / "Next:" lead-in."""
    frames: list[tuple[str, dict[str, str]]] = []
    for sentence in re.split(r"(?<=[.!?])\s+", masked.strip()):
        if not sentence:
            continue
        if _NEXT.match(sentence):
            frames.append(("next", {}))
            sentence = _NEXT.sub("", sentence, count=1)
        for kind, pattern in _COMPILED:
            m = pattern.match(sentence)
            if m:
                frames.append((kind, {k: v for k, v in m.groupdict().items() if v is not None}))
                break
        else:
            frames.append(("other", {"text": sentence}))
    return frames


def _labels(text: str) -> list[str]:
    """"gluten-free, high protein and plain" -> the labels one by one."""
    return [x.strip() for x in re.split(r",\s*|\s+and\s+", text) if x.strip()]


class StyleAssistant(Assistant):
    """The heuristic's decisions with its ``response`` restyled (see the module docstring).

    ``last_heuristic`` keeps the heuristic's own output of the last turn (for tests and
    inspection)."""

    name = "style"

    def __init__(self, max_questions: int = 3):
        self.inner = HeuristicAssistant(max_questions=max_questions)
        self.rng = np.random.default_rng(0)
        self.last_heuristic: dict[str, Any] = {}
        self.products: dict[str, CatalogEntry] = {}
        self.places: list[str] = []

    def reset(self, observation: dict[str, Any], info: dict[str, Any], *, seed: int | None = None) -> None:
        self.inner.reset(observation, info, seed=seed)
        self.store = info.get("store", PAPER_STORES[0])
        self.rng = np.random.default_rng([0 if seed is None else int(seed), zlib.crc32(self.name.encode())])
        catalog = observation.get("catalog", "")
        self.products = {e.name: e for e in parse_catalog(catalog)}
        targets = parse_nav_targets(catalog)
        self.places = sorted({t.name for t in targets} | {t.name.split(":", 1)[0].strip() for t in targets},
                             key=lambda n: (-len(n), n))
        self.last_heuristic = {}

    def act(self, observation: dict[str, Any]) -> str:
        out = json.loads(self.inner.act(observation))
        self.last_heuristic = copy.deepcopy(out)
        if isinstance(out.get("response"), str) and out["response"].strip():
            out["response"] = self.restyle(out["response"])
        return json.dumps(out)

    # ------------------------------------------------------------------ masking
    def mask(self, text: str) -> tuple[str, dict[str, str]]:
        """``text`` with product names, place names and prices replaced by tokens, and the
        token -> original table."""
        table: dict[str, str] = {}

        def sub(kind: str, names: list[str], text: str) -> str:
            for name in names:
                pattern = re.compile(r"(?<![A-Za-z0-9])" + re.escape(name) + r"(?![A-Za-z0-9])")
                if pattern.search(text):
                    token = f"\u27e8{kind}{len(table)}\u27e9"
                    table[token] = name
                    text = pattern.sub(token, text)
            return text

        text = sub("P", sorted(self.products, key=lambda n: (-len(n), n)), text)
        text = sub("L", self.places, text)
        tokens: dict[str, str] = {}

        def money(m: re.Match) -> str:
            if m.group(0) not in tokens:
                tokens[m.group(0)] = token = f"\u27e8M{len(table)}\u27e9"
                table[token] = m.group(0)
            return tokens[m.group(0)]

        return _MONEY.sub(money, text), table

    def unmask(self, text: str, table: dict[str, str]) -> str:
        def put(m: re.Match) -> str:
            original = table.get(m.group(0), m.group(0))
            kind = m.group(1)
            return self.product(original) if kind == "P" else self.place(original) if kind == "L" else self.money(original)

        text = _TOKEN.sub(put, text)
        # "the The Plant" (a place whose name starts with "The"): one article
        return re.sub(r"\b[Tt]he ((?:\*\*)?The )", r"\1", text)

    # how each style writes a masked entity (overridden)
    def product(self, name: str) -> str:
        return name

    def place(self, name: str) -> str:
        return name

    def money(self, amount: str) -> str:
        return amount

    def pick(self, options: list[str]) -> str:
        return options[int(self.rng.integers(len(options)))]

    # ------------------------------------------------------------------ rewriting
    def restyle(self, text: str) -> str:
        masked, table = self.mask(text)
        frames = split_frames(masked)
        return self.unmask(self.compose(frames), table)

    def compose(self, frames: list[tuple[str, dict[str, str]]]) -> str:
        parts = []
        for kind, slots in frames:
            render = getattr(self, f"say_{kind}", None)
            parts.append(render(**slots) if render is not None else self.say_other(self.fallback_text(kind, slots)))
        return " ".join(p for p in parts if p)

    @staticmethod
    def fallback_text(kind: str, slots: dict[str, str]) -> str:
        return slots.get("text", "")

    def say_other(self, text: str) -> str:
        return text


# ====================================================================== clipped notes
class ClippedStyleAssistant(StyleAssistant):
    """Clipped lower-case notes: no capitals, no articles or filler, arrows and "?"-only
    questions; names cut to their identifying words, prices sometimes without "$"."""

    name = "style-clipped"

    def product(self, name: str) -> str:
        return clipped_name(name)

    def place(self, name: str) -> str:
        return name.lower()

    def money(self, amount: str) -> str:
        return self.pick([amount, amount[1:]])

    def restyle(self, text: str) -> str:
        return super().restyle(text).lower()

    def say_hello(self):
        return self.pick(["hi.", "hey."])

    def say_happy_help(self):
        return self.pick(["here to help w/ shopping.", "can help today."])

    def say_ask_need(self):
        return self.pick(["looking for what? used for what?", "need what, for what use?"])

    def say_ask_kind(self):
        return self.pick(["product type?", "what kind of product?"])

    def say_kind_hint(self):
        return self.pick(["type or use -> right aisle.", "type/use helps find aisle."])

    def say_tell_more(self):
        return "more info pls: type, brand or use -> will find it."

    def say_more_q(self):
        return self.pick(["more detail on need?", "need more info?"])

    def say_got_cat(self, cat):
        return self.pick([f"ok, {cat}.", f"{cat}, noted."])

    def say_ask_budget(self):
        return self.pick(["budget?", "spend how much?"])

    def say_ask_features(self, cat):
        return f"{cat}: must-haves / avoid? flavour, material, size, allergens?"

    def say_labels(self, p, price, labels):
        return f"{p}: {price}. labels: {labels}."

    def say_suggest(self, p, why, price, budget=None):
        within = self.pick([f", under {budget} budget", f" (budget {budget} ok)"]) if budget else ""
        return self.pick([f"rec: {p}, {price}{within}. {why}.", f"rec: {p} -> {why}, {price}{within}."])

    def say_compare(self, alt, diff, p, feat):
        worse = "pricier" if diff == "costs more" else "misses some asks"
        return f"vs {alt} ({worse}): {p} better, {feat}."

    def say_closest(self, p, feat):
        return f"closest match: {p}. {feat}."

    def say_fits(self, p, cat, price, none=None):
        free = f", no {none}" if none else ""
        return f"{p} fits: {cat}{free}, {price}."

    def say_matches(self, p):
        return self.pick([f"{p} matches your asks.", f"{p} = what you said."])

    def say_cart_if(self):
        return self.pick(["happy? -> add to cart.", "ok with it? add to cart."])

    def say_cart_q(self):
        return self.pick(["cart?", "put in cart?"])

    def say_cart_ready(self):
        return "ready for cart when you are."

    def say_closer(self):
        return self.pick(["look closer.", "closer look."])

    def say_look_at(self):
        return self.pick(["have a look.", "check it."])

    def say_skip(self):
        return "ok, skip that one."

    def say_better(self, cat):
        return f"better {cat} match elsewhere, will guide."

    def say_at_place(self, here):
        return f"at {here}."

    def say_in_place(self, here):
        return f"in {here}."

    def say_step(self, way, cat):
        return self.pick([f"step {way} along it, {cat} further this side.", f"{way} along it -> {cat} further down this side."])

    def say_turn_little(self, way, cat):
        return f"turn {way} a bit, {cat} on display here."

    def say_head_area(self, here, shop, cat):
        return self.pick([f"go to {here} in {shop}, {cat} there.", f"{shop}: {here} -> {cat} there."])

    def say_turn_find(self, way, here):
        return f"turn {way} -> {here} display."

    def say_leave(self, here, shop):
        return f"leave {here} via doorway first; {shop} elsewhere on floor."

    def say_enter(self, here):
        return f"into {here} via doorway, just inside."

    def say_at_fixture(self, cat, side, here):
        return self.pick([f"{cat}: {side} of {here}.", f"{cat} @ {side} of {here}."])

    def say_head_there(self):
        return self.pick(["go there.", "head there."])

    def say_hop_store(self, here, goal):
        return f"to doorway of {here}, just outside; {goal} beyond."

    def say_hop_fixture(self, here, goal):
        return self.pick([f"to nearest side of {here}; {goal} beyond it.", f"{here} (nearest side) first, {goal} past it."])

    def say_turn_deg(self, way, angle, here):
        return self.pick([f"turn {way} ~{angle} degrees; {here} that way.", f"{here} -> {way}, ~{angle} degrees."])

    def say_ahead(self, here):
        return f"few steps ahead -> {here}."

    def say_keep_guiding(self):
        return "will keep guiding."

    def say_getting_closer(self):
        return "getting closer."

    def say_blocks(self):
        return "anything blocking, tell me."

    def say_next(self):
        return "next:"

    _FILLER = re.compile(r"\b(?:the|a|an|please|just|really|very|actually|i think|so|well|okay|ok),?\s+", re.I)

    def say_other(self, text: str) -> str:
        """Generic clipping: lower case, articles and filler dropped, "I'll"/"you're" cut."""
        text = self._FILLER.sub("", text)
        text = re.sub(r"\b(?:I'll|I will)\b", "will", text)
        text = re.sub(r"\b(?:you're|you are)\b", "you", text, flags=re.I)
        return text.lower()


# ====================================================================== non-native English
class NonNativeStyleAssistant(StyleAssistant):
    """Non-native English: articles and copulas dropped now and then, wrong prepositions,
    "more cheap", -ing motion verbs, prices sometimes as "4.69 dollars"."""

    name = "style-nonnative"

    def money(self, amount: str) -> str:
        return self.pick([amount, f"{amount[1:]} dollars"])

    def say_hello(self):
        return self.pick(["Hello!", "Hi, hello!"])

    def say_happy_help(self):
        return self.pick(["I am happy for help you with the shopping today.", "I am glad for helping you shop today."])

    def say_ask_need(self):
        return self.pick(["What you are looking for, and for what you will use it?",
                          "What you search, and for what is the use of it?"])

    def say_ask_kind(self):
        return self.pick(["Which kind of product you have in the mind?", "What kind product you are thinking?"])

    def say_kind_hint(self):
        return self.pick(["Product type or how you plan using it, this help me for find right aisle.",
                          "If you say product type or for what you use it, I can find right aisle more easy."])

    def say_tell_more(self):
        return "Please tell me little more about what you need, product type, brand or for what it is, and I find it for you."

    def say_more_q(self):
        return self.pick(["You can tell me bit more about what you need?", "Can you say little more what you need?"])

    def say_got_cat(self, cat):
        return self.pick([f"Okay, {cat}.", f"I understand, {cat}."])

    def say_ask_budget(self):
        return self.pick(["How much you like to spend, more or less?", "About how much money you want spend?"])

    def say_ask_features(self, cat):
        return f"Something you must have or you want avoid for your {cat}, like flavour, material, size or allergens?"

    def say_labels(self, p, price, labels):
        return self.pick([f"The {p} cost {price}; on its labels is written {labels}.",
                          f"{p} is costing {price}; labels are saying {labels}."])

    def say_suggest(self, p, why, price, budget=None):
        within = self.pick([f", inside your budget of {budget}", f", it is in your {budget} budget"]) if budget else ""
        return self.pick([f"I suggest you the {p} because it is {why} and it cost {price}{within}.",
                          f"I am recommending {p}, because is {why}, and price is {price}{within}."])

    def say_compare(self, alt, diff, p, feat):
        if diff == "costs more":
            return f"Compare with the {alt}, which is more expensive, the {p} is more cheap and suit you better, it offer {feat}."
        return f"Compare with the {alt}, which miss some things you ask, the {p} is more good for you, it offer {feat}."

    def say_closest(self, p, feat):
        return f"The {p} is most close match here, it offer {feat}."

    def say_fits(self, p, cat, price, none=None):
        free = f", and it has nothing of {none}" if none else ""
        return f"The {p} is good for your needs because it is {cat}{free}, price {price}."

    def say_matches(self, p):
        return self.pick([f"The {p} is match with what you told me.", f"{p} same like what you told me."])

    def say_cart_if(self):
        return "If you are happy with it, you put it in your cart."

    def say_cart_q(self):
        return self.pick(["We put it in your cart?", "You want we put it in the cart?"])

    def say_cart_ready(self):
        return "It is ready for going in your cart when you want."

    def say_closer(self):
        return self.pick(["Take more close look.", "Please look more close."])

    def say_look_at(self):
        return self.pick(["Please have a look on it.", "Try looking at it."])

    def say_skip(self):
        return "Understood, I skip this one."

    def say_better(self, cat):
        return f"There is more better match for your {cat}; I guide you to it."

    def say_at_place(self, here):
        return f"You are in {here} now."

    def say_in_place(self, here):
        return f"You are inside of {here}."

    def say_step(self, way, cat):
        return f"Try stepping {way} along it; the {cat} is more far on this side."

    def say_turn_little(self, way, cat):
        return f"Try turning {way} little bit; {cat} is on display here."

    def say_head_area(self, here, shop, cat):
        return f"Go over to the {here} inside of {shop}; {cat} is there."

    def say_turn_find(self, way, here):
        return f"Try turning {way} for find the {here} display."

    def say_leave(self, here, shop):
        return f"First go outside of {here} by its doorway; {shop} is in other part of the floor."

    def say_enter(self, here):
        return f"Walk inside of {here} by its doorway, just little inside."

    def say_at_fixture(self, cat, side, here):
        if side == "nearest side":
            return f"The {cat} is on nearest side from {here}."
        return f"The {cat} is in the {side} side of {here}."

    def say_head_there(self):
        return self.pick(["Please go to there.", "Go in there."])

    def say_hop_store(self, here, goal):
        return f"Walk until doorway of {here}, just outside; {goal} is behind of it."

    def say_hop_fixture(self, here, goal):
        return self.pick([f"Walk to nearest side from {here}; {goal} is behind of it.",
                          f"Keep going to nearest side of {here}; {goal} is more far, past it."])

    def say_turn_deg(self, way, angle, here):
        return f"Try turning {way} around {angle} degrees; {here} is in this direction."

    def say_ahead(self, here):
        return f"Keep going ahead few steps in direction of {here}."

    def say_keep_guiding(self):
        return "I keep guiding you."

    def say_getting_closer(self):
        return "We are getting more close."

    def say_blocks(self):
        return "Tell me if something is blocking your way."

    def say_next(self):
        return "Next step:"

    def say_other(self, text: str) -> str:
        """Generic: articles dropped, "at" -> "in", "I'll" -> "I"; never the sentence as given."""
        out = re.sub(r"\b(?:the|a|an) (?=\w)", "", text, count=2, flags=re.I)
        out = re.sub(r"\bat\b", "in", out)
        out = re.sub(r"\bI'll\b", "I", out)
        out = re.sub(r"\b(?:it's|it is)\b", "is", out, flags=re.I)
        if out == text:
            out = "So, " + text[:1].lower() + text[1:]
        return out[:1].upper() + out[1:]


# ====================================================================== chat-model markdown
class ChatStyleAssistant(StyleAssistant):
    """Chat-model prose with markdown: opener, **bold** names, bullet facts, numbered
    options when two products are weighed, closing question or offer (<= 90 words)."""

    name = "style-chat"

    _OPENERS = ["Sure thing!", "Happy to help!", "Of course!", "Great question!", "Glad you asked!"]
    _NAV_OPENERS = ["Sure thing!", "No problem!", "You're doing great!", "Let's keep going!"]
    _OFFERS = ["Let me know if you have any questions!", "Feel free to ask me anything along the way.",
               "I'm here if you need anything else.", "Just let me know how it goes!"]
    _NAV = {"at_place", "in_place", "step", "turn_little", "head_area", "turn_find", "leave", "enter",
            "at_fixture", "head_there", "hop_store", "hop_fixture", "turn_deg", "ahead"}

    def product(self, name: str) -> str:
        return f"**{name}**"

    def place(self, name: str) -> str:
        return f"**{name}**"

    def compose(self, frames):
        say: list[str] = []
        bullets: list[str] = []
        options: list[str] = []
        asks: list[str] = []
        for kind, slots in frames:
            render = getattr(self, f"chat_{kind}", None)
            piece = render(**slots) if render is not None else self.chat_other(self.fallback_text(kind, slots))
            say += piece.get("say", [])
            bullets += piece.get("bullets", [])
            options += piece.get("options", [])
            asks += piece.get("ask", [])
        kinds = {k for k, _ in frames}
        opener = "" if "hello" in kinds else self.pick(self._NAV_OPENERS if kinds & self._NAV else self._OPENERS)
        offer = "" if asks else self.pick(self._OFFERS)

        def build(opener: str, offer: str) -> str:
            blocks = [" ".join(x for x in [opener, *say] if x)]
            if bullets:
                blocks.append("\n".join(f"- {b}" for b in bullets))
            if options:
                blocks.append("\n".join(f"{i}. {o}" for i, o in enumerate(options, 1)))
            blocks.append(" ".join(asks) if asks else offer)
            return "\n\n".join(b for b in blocks if b)

        text = build(opener, offer)
        for fewer in ((opener, ""), ("", offer), ("", "")):  # keep it short: drop the extras first
            if _words(self.unmask_preview(text)) <= MAX_CHAT_WORDS:
                break
            text = build(*fewer)
        if "**" not in text and not bullets and not options and not re.search(f"{_P}|{_L}", text):
            # markdown in every turn: the first sentence in bold
            text = re.sub(r"^(.+?[.!?:])(?=\s|$)", r"**\1**", text, count=1)
        return text

    def unmask_preview(self, text: str) -> str:
        # names count with their words (a token stands for a whole name)
        return _TOKEN.sub(lambda m: "x " * 6, text)

    # each chat_<kind> returns {"say": [...], "bullets": [...], "options": [...], "ask": [...]}
    def chat_hello(self):
        return {"say": [self.pick(["Hi there, and welcome!", "Hello, and a warm welcome!"])]}

    def chat_happy_help(self):
        return {"say": ["I'd be really glad to help you find exactly what you need today."]}

    def chat_ask_need(self):
        return {"ask": ["What are you **shopping for** today, and what will you be **using it for**?"]}

    def chat_ask_kind(self):
        return {"ask": ["What **kind of product** do you have in mind?"]}

    def chat_kind_hint(self):
        return {"bullets": ["**Tip:** a product type, or how you plan to use it, helps me find the right aisle for you."]}

    def chat_tell_more(self):
        return {"say": ["Tell me a little more about what you need and I'll find it for you, for example:"],
                "bullets": ["a **product type**", "a **brand**", "or **what it is for**"]}

    def chat_more_q(self):
        return {"ask": ["Could you tell me a bit more about **what you need**?"]}

    def chat_got_cat(self, cat):
        return {"say": [f"Got it, you're looking for **{cat}**!"]}

    def chat_ask_budget(self):
        return {"ask": ["Roughly how much would you like to **spend**?"]}

    def chat_ask_features(self, cat):
        return {"ask": [f"Are there any **must-haves** or things to **avoid** for your {cat}, like flavour, "
                        "material, size or allergens?"]}

    def chat_labels(self, p, price, labels):
        return {"say": [f"Here's what I can tell you about the {p}:"],
                "bullets": [f"**Price:** {price}", f"**Labels:** {labels}"]}

    def chat_suggest(self, p, why, price, budget=None):
        within = f", within your {budget} budget" if budget else ""
        return {"say": [self.pick([f"I'd suggest the {p}, which I think is a great fit for you.",
                                   f"My top suggestion for you is the {p}."])],
                "bullets": [f"**Why:** it is {why}", f"**Price:** {price}{within}"]}

    def chat_compare(self, alt, diff, p, feat):
        return {"say": ["Here's how the two options compare:"],
                "options": [f"{p}: suits you better, since it offers {feat}", f"{alt}: {diff}"]}

    def chat_closest(self, p, feat):
        return {"say": [f"The {p} is the closest match here."], "bullets": [f"**It offers:** {feat}"]}

    def chat_fits(self, p, cat, price, none=None):
        bullets = [f"**Type:** {cat}"] + ([f"**Has none of:** {none}"] if none else []) + [f"**Price:** {price}"]
        return {"say": [f"The {p} fits your needs nicely:"], "bullets": bullets}

    def chat_matches(self, p):
        return {"say": [f"The {p} matches everything you've told me."]}

    def chat_cart_if(self):
        return {"say": ["If you're happy with it, go ahead and add it to your cart."]}

    def chat_cart_q(self):
        return {"ask": ["Shall we put it in your **cart**?"]}

    def chat_cart_ready(self):
        return {"say": ["It's ready to go in your cart whenever you are."]}

    def chat_closer(self):
        return {"say": ["Take a closer look at it."]}

    def chat_look_at(self):
        return {"say": ["Have a look at it when you get a moment."]}

    def chat_skip(self):
        return {"say": ["Understood, I'll skip that one, no problem at all."]}

    def chat_better(self, cat):
        return {"say": [f"There's a better match for your {cat}, and I'll guide you right to it."]}

    def chat_at_place(self, here):
        return {"say": [f"You're at {here} now."]}

    def chat_in_place(self, here):
        return {"say": [f"You're in {here} now."]}

    def chat_step(self, way, cat):
        return {"bullets": [f"**Next step:** step **{way}** along it", f"**Look for:** the {cat}, further along this side"]}

    def chat_turn_little(self, way, cat):
        return {"bullets": [f"**Next step:** turn **{way}** a little", f"**Look for:** the {cat}, on display here"]}

    def chat_head_area(self, here, shop, cat):
        return {"say": [f"Head over to the {here} in {shop}, which is where you'll find the {cat}."]}

    def chat_turn_find(self, way, here):
        return {"say": [f"Turn **{way}** to find the {here} display."]}

    def chat_leave(self, here, shop):
        return {"say": [f"First, let's leave {here} through its doorway, since {shop} is elsewhere on the floor."]}

    def chat_enter(self, here):
        return {"say": [f"Walk into {here} through its doorway and stop just inside."]}

    def chat_at_fixture(self, cat, side, here):
        return {"say": [f"The {cat} is at the **{side}** of {here}."]}

    def chat_head_there(self):
        return {"say": ["Head there whenever you're ready."]}

    def chat_hop_store(self, here, goal):
        return {"say": [f"Walk to the doorway of {here} and stop just outside; {goal} is beyond it."]}

    def chat_hop_fixture(self, here, goal):
        return {"say": [f"Walk over to the nearest side of {here}; {goal} is just beyond it."]}

    def chat_turn_deg(self, way, angle, here):
        return {"say": [f"Turn **{way}** about **{angle} degrees**, since {here} is in that direction."]}

    def chat_ahead(self, here):
        return {"say": [f"Walk ahead a few steps toward {here}."]}

    def chat_keep_guiding(self):
        return {"say": ["I'll keep guiding you along the way."]}

    def chat_getting_closer(self):
        return {"say": ["We're getting closer!"]}

    def chat_blocks(self):
        return {"say": ["Tell me if anything blocks your way."]}

    def chat_next(self):
        return {"say": ["Here's the next step:"]}

    def chat_other(self, text):
        if text.endswith("?"):
            return {"ask": [text]}
        return {"say": [text]}


def _words(text: str) -> int:
    return len([w for w in text.split() if re.search(r"[A-Za-z0-9$]", w)])
