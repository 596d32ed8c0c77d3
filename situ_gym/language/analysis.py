"""Utterance analysis: one typed ``Utterance`` (the Doc) per text, built once and shared.

``analyze(text, lexicon, visible=..., focus=...)`` reads an assistant or shopper utterance into:
greeting / closing; questions with the slot asked; products proposed for purchase, merely
mentioned, or compared; an explanation of a product and what it cites; a navigation
instruction (target, relation, direction, distance, angle, approach); a purchase prompt;
and, for shopper-side reading, a stated budget, wanted and avoided attribute labels,
categories named, rejection / acceptance and requests (explain, compare, alternatives,
location). ``act`` is the primary dialogue action the content amounts to.

Deterministic, bounded (long input is capped by ``normalize``) and never raises: any input,
empty or hostile, gets an analysis. Results are cached per (text, context).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from situ_gym.language import patterns as P
from situ_gym.language.lexicon import Mention, PlaceMention, SceneLexicon, TagMention
from situ_gym.language.tokens import Token, normalize, sentence_spans, tokenize

__all__ = [
    "ACTS", "SLOTS", "RELATIONS", "DIRECTIONS", "DISTANCES",
    "Question", "NavInstruction", "Explanation", "Budget", "Utterance", "analyze",
]

ACTS = ("Greet", "AskPreference", "ClarifyNeed", "Navigate", "Recommend", "Explain",
        "AnswerQuestion", "Compare", "HandleRejection", "ConfirmPurchase")
SLOTS = ("category", "use", "preference", "avoid", "budget", "size", "location", "other")
RELATIONS = ("to", "into", "out_of", "past", "along", "behind", "toward")
DIRECTIONS = ("left", "right", "ahead", "back", "around", "up", "down")
DISTANCES = ("short", "medium", "long")

_PRICE = re.compile(r"\$\s?(\d{1,7}(?:,\d{3})*(?:\.\d{1,2})?)|(\d{1,7}(?:\.\d{1,2})?)\s?(?:dollars|bucks|usd)\b")
_ANGLE = re.compile(r"(\d{1,3})\s?(?:°|deg\b|degrees?)")
_PRONOUN = re.compile(r"\b(?:it|its|it's|this one|that one|this|that|the one|them|they|these|those)\b")
# Clause breaks: commas (not before a size or price: "Cereal, 12 oz"), semicolons, dashes, "but".
_CLAUSE_BREAK = re.compile(r",(?!\s*[\d$])\s*|;|\s-\s|\bbut\b|\binstead\b")
_TRANSLATE = frozenset("go head walk move step come enter leave exit continue proceed cross pass stroll wander return get make keep pop duck hop".split())


@dataclass(frozen=True)
class Question:
    slots: tuple[str, ...]  # subset of SLOTS; ("other",) when none is recognised
    sentence: str
    clarifies: bool = False  # checks a detail already given ("just to confirm ...?")


@dataclass(frozen=True)
class NavInstruction:
    target: str | None = None  # fixture / store / area id
    relation: str | None = None  # RELATIONS
    direction: str | None = None  # DIRECTIONS
    distance: str | None = None  # DISTANCES
    angle: float | None = None  # degrees, when given or implied ("slightly" 30, "around" 180)
    approach: str | None = None  # "front" | "back" | "inside" | "outside"
    landmark: str | None = None  # a place passed on the way ("past Shelf 2")


@dataclass(frozen=True)
class Explanation:
    product: str | None
    cites: tuple[str, ...]  # the product's labels ("flavour:vanilla"), "price", "budget", "use"


@dataclass(frozen=True)
class Budget:
    amount: float
    bound: str  # "max" or "about"


@dataclass(frozen=True)
class Utterance:
    text: str
    tokens: tuple[Token, ...] = ()
    mentions: tuple[Mention, ...] = ()
    places: tuple[PlaceMention, ...] = ()
    tags: tuple[TagMention, ...] = ()
    prices: tuple[float, ...] = ()
    act: str = "AnswerQuestion"
    greeting: bool = False
    closing: bool = False
    thanks: bool = False
    questions: tuple[Question, ...] = ()
    proposed: tuple[str, ...] = ()
    mentioned: tuple[str, ...] = ()
    compared: tuple[str, ...] = ()
    explanation: Explanation | None = None
    navigation: NavInstruction | None = None
    purchase_prompt: bool = False
    acknowledges_rejection: bool = False
    budget: Budget | None = None
    wants: tuple[str, ...] = ()
    avoids: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    rejects: bool = False
    accepts: bool = False
    requests: tuple[str, ...] = ()
    claims: tuple[str, ...] = ()
    refers_to_focus: bool = False  # "it" / "this one" stands for the product under discussion
    unknown_products: tuple[str, ...] = ()  # product-like names the catalog lacks
    extras: dict = field(default_factory=dict, compare=False)

    @property
    def empty(self) -> bool:
        return not self.tokens

    @property
    def asks(self) -> tuple[str, ...]:
        """Slots asked, in order, without repeats."""
        return tuple(dict.fromkeys(s for q in self.questions for s in q.slots))

    @property
    def products(self) -> tuple[str, ...]:
        """Every product the text refers to (proposed, compared, mentioned), in order."""
        return tuple(dict.fromkeys(self.proposed + self.compared + self.mentioned))


def analyze(
    text: object,
    lexicon: SceneLexicon | None = None,
    *,
    visible: frozenset[str] | set[str] | tuple[str, ...] = frozenset(),
    focus: str | None = None,
) -> Utterance:
    """The analysis of ``text`` (see the module docstring); ``visible`` and ``focus`` resolve
    references such as "the yogurt" or "it" to one product. Without a ``lexicon`` no entity
    is linked (cues only: acts, questions, stance, closing)."""
    try:
        norm = normalize(text)
    except Exception:  # noqa: BLE001 - the contract is: never raise on any input
        norm = ""
    return _analyze(norm, lexicon, frozenset(visible), focus)


@lru_cache(maxsize=8_192)
def _analyze(text: str, lex: SceneLexicon, visible: frozenset[str], focus: str | None) -> Utterance:
    if not text:
        return Utterance(text="")
    toks = tokenize(text)
    mentions, places, tags = lex.link(toks) if lex is not None else ([], [], [])
    low = text.lower()
    sentences = sentence_spans(text)
    prices = tuple(float((m.group(1) or m.group(2)).replace(",", "")) for m in _PRICE.finditer(text))

    def resolve(m: Mention) -> str | None:
        c = m.candidates
        if not c:
            return None
        if len(c) == 1:
            return c[0]
        if focus in c:
            return focus
        seen = [pid for pid in c if pid in visible]
        if seen:
            return seen[0]
        return c[0] if m.kind == "product" else None

    proposed: list[str] = []
    mentioned: list[str] = []
    compared: list[str] = []
    questions: list[Question] = []
    explanation: Explanation | None = None
    navigation: NavInstruction | None = None
    purchase = False
    refers_focus = False
    wants: list[str] = []
    avoids: list[str] = []

    for s, e in sentences:
        sent = low[s:e]
        sm = [m for m in mentions if s <= m.char_start < e]
        resolved = [(m, resolve(m)) for m in sm]
        pids = [pid for _, pid in resolved if pid]
        is_question = sent.rstrip().endswith("?") or bool(P.QUESTION_START.search(sent)) and "?" in sent
        sent_purchase = bool(P.PURCHASE.search(sent))
        purchase |= sent_purchase
        # ---- comparison: two products set against each other
        sent_compared = len(set(pids)) >= 2 and bool(P.COMPARE.search(sent))
        if not sent_compared and pids and focus and focus not in pids and re.search(r"\b(?:than|compared|versus|vs|unlike)\b", sent):
            if _PRONOUN.search(sent):
                pids_all = pids + [focus]
                compared.extend(pids_all)
                sent_compared = True
        if sent_compared:
            compared.extend(pids)
        # ---- proposals, clause by clause (a rejection and a new suggestion share sentences)
        spans = {id(m): _clause_span(low, s, e, m.char_start, m.char_end) for m, _ in resolved}
        # A proposal cue in a clause naming no product ("..., would suit you") carries over to
        # the sentence's products whose own clause says nothing either way.
        floating = any(
            P.PROPOSE.search(low[a:b]) and not any(a <= m.char_start < b for m in sm)
            for a, b in _clause_spans(low, s, e)
        )
        for m, pid in resolved:
            if pid is None:
                continue
            a, b = spans[id(m)]
            clause = low[a:b]
            neg = P.NOT_PROPOSED.search(clause)
            pro = P.PROPOSE.search(clause) or (is_question and re.search(r"\b(?:how|what) about\b", clause))
            if not pro and not neg and floating and not P.COMPARE.search(clause):
                pro = True
            favoured = pro and not neg
            if sent_compared and not favoured:
                continue
            if favoured:
                proposed.append(pid)
            elif sent_purchase and not neg:
                proposed.append(pid)
            else:
                mentioned.append(pid)
        if not pids and focus and _PRONOUN.search(sent) and (P.PROPOSE.search(sent) or sent_purchase) and not P.NOT_PROPOSED.search(sent):
            refers_focus = True
        # ---- questions and their slots
        if is_question or P.INFO_REQUEST.search(sent):
            nav_like = _motion(toks, s, e) and (any(s <= p.char_start < e for p in places) or _direction(sent))
            if not (sent_purchase or nav_like or (pids and P.PROPOSE.search(sent) and not _slot_words(sent))):
                slots = tuple(name for name, pat in P.SLOTS if pat.search(sent))
                if "budget" in slots and re.search(r"how much (?:of|space|room)", sent):
                    slots = tuple(x for x in slots if x != "budget")
                if "category" in slots and "preference" in slots and re.search(r"looking for in\b", sent):
                    slots = tuple(x for x in slots if x != "category")
                if "use" in slots and "category" in slots and not re.search(r"\buse\b|occasion|purpose|who", sent):
                    slots = tuple(x for x in slots if x != "use")
                if not slots and any(s <= t.char_start < e for t in _tag_spans(tags, toks)):
                    slots = ("preference",)
                clarifies = bool(P.CLARIFY.search(sent)) or _either_or(sent, tags, toks, s, e)
                questions.append(Question(slots or ("other",), text[s:e], clarifies))
        # ---- navigation
        nav = _navigation(sent, toks, s, e, places)
        if nav is not None and navigation is None:
            navigation = nav
        # ---- shopper-side stance on attribute labels
        for t in tags:
            if t.in_name or not (s <= toks[t.start].start < e):
                continue
            clause = _clause_at(low, s, e, toks[t.start].start)
            before = clause[: max(0, toks[t.start].start - s - (len(low[s:e]) - len(clause)))] if False else clause
            head = low[max(s, toks[t.start].start - 40) : toks[t.start].start]
            negated = bool(P.NEGATION.search(head)) or re.search(r"\b" + re.escape(t.phrase.split()[-1]) + r"\w*[- ]free\b", low[toks[t.start].start : toks[t.start].start + 40] or "")
            (avoids if negated and not before.startswith("free") else wants).extend(sorted(t.tags))

    proposed = _unique(proposed)
    compared = _unique(compared)
    mentioned = [p for p in _unique(mentioned) if p not in proposed and p not in compared]
    # ---- explanation: reasons given for the product in play
    subject = (proposed or compared or [None])[0]
    if subject is None and focus and (_PRONOUN.search(low) or not mentions):
        subject = focus
    if subject is None and mentioned:
        subject = mentioned[0]
    if subject is not None:
        explanation = _explanation(subject, low, toks, mentions, tags, prices, lex)
    budget = _budget(low, prices)
    categories = _unique(
        [m.category for m in mentions if m.category]
        + [lex.category_of[c] for m in mentions if m.kind == "product" for c in m.candidates[:1]]
    )
    greeting = bool(P.GREETING.search(low))
    closing = bool(P.CLOSING.search(low))
    ack = bool(P.ACK_REJECTION.search(low))
    utt = Utterance(
        text=text,
        tokens=toks,
        mentions=tuple(mentions),
        places=tuple(places),
        tags=tuple(tags),
        prices=prices,
        greeting=greeting,
        closing=closing,
        thanks=bool(P.THANKS.search(low)),
        questions=tuple(questions),
        proposed=tuple(proposed),
        mentioned=tuple(mentioned),
        compared=tuple(compared),
        explanation=explanation,
        navigation=navigation,
        purchase_prompt=purchase,
        acknowledges_rejection=ack,
        budget=budget,
        wants=tuple(_unique(w for w in wants if w not in avoids)),
        avoids=tuple(_unique(avoids)),
        categories=tuple(categories),
        rejects=bool(P.REJECT.search(low)),
        accepts=bool(P.ACCEPT.search(low)),
        requests=tuple(name for name, pat in P.REQUESTS if pat.search(low)),
        claims=tuple(m.group(0) for m in P.CLAIMS.finditer(low)),
        refers_to_focus=refers_focus,
        unknown_products=tuple(m.phrase for m in mentions if m.kind == "unknown"),
    )
    return _with_act(utt, focus)


# ---------------------------------------------------------------------- pieces
def _unique(items) -> list:
    return list(dict.fromkeys(items))


def _clause_spans(low: str, s: int, e: int) -> list[tuple[int, int]]:
    out, pos = [], s
    for b in _CLAUSE_BREAK.finditer(low, s, e):
        if b.start() > pos:
            out.append((pos, b.start()))
        pos = b.start() if low[b.start() : b.end()].strip() in ("but", "instead") else b.end()
        if pos == b.start():
            out.append((pos, b.end()))
            pos = b.end()
    if pos < e:
        out.append((pos, e))
    return out


def _clause_span(low: str, s: int, e: int, start: int, end: int | None = None) -> tuple[int, int]:
    """The clause of the sentence ``low[s:e]`` around ``start`` (a name is never split)."""
    end = start if end is None else end
    left, right = s, e
    for b in _CLAUSE_BREAK.finditer(low, s, e):
        if b.end() <= start:
            left = b.start() if low[b.start() : b.end()].strip() in ("but", "instead") else b.end()
        elif b.start() >= end:
            right = b.start()
            break
    return left, right


def _clause_at(low: str, s: int, e: int, start: int, end: int | None = None) -> str:
    a, b = _clause_span(low, s, e, start, end)
    return low[a:b]


def _slot_words(sent: str) -> bool:
    return any(pat.search(sent) for name, pat in P.SLOTS if name in ("budget", "avoid", "use", "size"))


def _tag_spans(tags: list[TagMention], toks) -> list:
    class _S:
        __slots__ = ("char_start",)

        def __init__(self, c: int):
            self.char_start = c

    return [_S(toks[t.start].start) for t in tags if not t.in_name]


def _either_or(sent: str, tags, toks, s: int, e: int) -> bool:
    inside = [t for t in tags if s <= toks[t.start].start < e and not t.in_name]
    return len(inside) >= 2 and " or " in sent


def _motion(toks, s: int, e: int) -> bool:
    return any(t.lemma in P.MOTION for t in toks if s <= t.start < e)


def _direction(sent: str) -> str | None:
    for name, pat in P.DIRECTION:
        if pat.search(sent):
            return name
    return None


def _navigation(sent: str, toks, s: int, e: int, places: list[PlaceMention]) -> NavInstruction | None:
    here = [p for p in places if s <= p.char_start < e]
    earlier = None
    if not here and re.search(r"\b(?:there|over there)\b", sent):
        earlier = next((p for p in reversed(places) if p.char_start < s), None)
    verbs = [t for t in toks if s <= t.start < e and t.lemma in P.MOTION]
    relation_here = next((name for name, pat in P.RELATION if pat.search(sent)), None)
    direction = _direction(sent)
    if not verbs and not (here and relation_here) and direction not in ("around", "up", "down"):
        if not (here and re.search(r"\b(?:over to|up to|head|way to|to the|to)\b", sent) and re.search(r"\b(?:let'?s|you'?ll|next|now|first|then)\b", sent)):
            return None
    if not here and direction is None and relation_here is None and earlier is None:
        return None
    if sent.rstrip().endswith("?") and not verbs and not here:
        return None
    target = landmark = None
    relation = None
    if here:
        # The place after "to/into/toward/out of" is the target; "past X" is a landmark.
        scored = []
        for p in here:
            before = sent[max(0, p.char_start - s - 25) : p.char_start - s]
            rel, at = None, -1
            for name, pat in P.RELATION:  # the cue nearest to the place wins
                for m in pat.finditer(before[-18:]):
                    if m.start() > at:
                        rel, at = name, m.start()
            to = [m.start() for m in re.finditer(r"\b(?:to|at|for)\b", before[-18:])]
            if to and to[-1] > at:
                rel = None
            scored.append((p, rel, before))
        mains = [x for x in scored if x[1] != "past"] or scored
        main = next((x for x in mains if re.search(r"\b(?:to|into|toward|towards|for|inside|enter|reach)\b\W*(?:the\W*)?$", x[2])), None)
        main = main or mains[-1]
        target, relation = main[0].entity_id, main[1] or ("to" if relation_here in (None, "past") else relation_here)
        passed = [x for x in scored if x[1] == "past" and x[0] is not main[0]]
        if passed:
            landmark = passed[0][0].entity_id
        if relation == "to" and relation_here in ("behind", "along", "into", "out_of", "toward"):
            relation = relation_here
    elif earlier is not None and verbs:
        target, relation = earlier.entity_id, relation_here or "to"
    else:
        relation = relation_here if relation_here in ("along", "behind", "toward", "past") else None
    distance = None
    for name, pat in P.DISTANCE:
        if pat.search(sent):
            distance = name
            break
    translational = any(t.lemma in _TRANSLATE for t in verbs) or relation in ("along", "past")
    if distance is None and (translational or target) and direction not in ("up", "down", "around"):
        distance = "medium" if not target else None
    if distance is None and translational and not target and direction in ("left", "right", "ahead", "back"):
        distance = "medium"
    if verbs and all(t.lemma in ("turn", "look", "glance", "tilt", "face", "pivot", "rotate", "spin", "swing") for t in verbs) and not target:
        if relation != "along":
            distance = distance if re.search(r"\b(?:walk|go|head|move|step)\b", sent) else None
    angle = None
    m = _ANGLE.search(sent)
    if m:
        angle = float(min(180, max(1, int(m.group(1)))))
    elif direction == "around":
        angle = 180.0
    elif direction in ("left", "right"):
        angle = 30.0 if re.search(r"\b(?:slightly|a little|a bit|a touch|partly|a tad)\b", sent) else 90.0
    elif direction in ("up", "down"):
        angle = 20.0
    approach = None
    if relation == "behind" or re.search(r"\bback (?:side|of)\b", sent):
        approach = "back"
    elif re.search(r"\bfront\b", sent):
        approach = "front"
    elif relation == "into" or re.search(r"\binside\b", sent):
        approach = "inside"
    elif relation == "out_of" or re.search(r"\b(?:outside|entrance|doorway|storefront)\b", sent):
        approach = "outside"
    if target is None and direction is None and relation is None:
        return None
    return NavInstruction(target, relation, direction, distance, angle, approach, landmark)


def _explanation(pid, low, toks, mentions, tags, prices, lex) -> Explanation | None:
    product = lex.index.products.get(pid) if lex is not None else None
    if product is None:
        return None
    own = [m for m in mentions if pid in m.candidates]
    own_spans = [(m.start, m.end) for m in own]
    cites: list[str] = []
    for t in tags:
        if any(a <= t.start < b for a, b in own_spans):
            continue
        hit = sorted(t.tags & set(product.tags))
        cites.extend(hit)
    if any(abs(p - product.price) <= max(0.011, 0.005 * product.price) for p in prices) or re.search(r"\b(?:priced|price|costs?|cheap\w*|affordable|inexpensive|value|bargain|economical)\b", low):
        cites.append("price")
    if re.search(r"\b(?:budget|within|under your|below your|your limit|afford)\b", low):
        cites.append("budget")
    if re.search(r"\b(?:ideal for|great for|good for|perfect for|for your|suits your|for the (?:kids|family|party|guests|dinner|breakfast))\b", low):
        cites.append("use")
    cites = _unique(cites)
    if not cites and not P.EXPLAIN_CUE.search(low):
        return None
    if not cites and not (own or _PRONOUN.search(low)):
        return None
    return Explanation(pid, tuple(cites))


def _budget(low: str, prices) -> Budget | None:
    for m in _PRICE.finditer(low):
        head = low[max(0, m.start() - 40) : m.start()]
        tail = low[m.end() : m.end() + 12]
        amount = float((m.group(1) or m.group(2)).replace(",", ""))
        for bound, pat in P.BUDGET_BOUND:
            if pat.search(head) or (bound == "max" and re.search(r"\b(?:or less|tops|max|at most)\b", tail)) or (bound == "about" and re.search(r"\bish\b|or so", tail)):
                if re.search(r"\b(?:it'?s|is|costs?|priced|for)\s*$", head) and not re.search(r"budget|spend|afford|limit", head):
                    continue
                return Budget(amount, bound)
    return None


def _with_act(u: Utterance, focus: str | None) -> Utterance:
    new_proposal = [p for p in u.proposed if p != focus]
    if len(set(u.compared)) >= 2:
        act = "Compare"
    elif new_proposal and not (u.purchase_prompt and not u.proposed[0:1] == new_proposal[0:1]):
        act = "Recommend"
    elif u.purchase_prompt:
        act = "ConfirmPurchase"
    elif u.navigation is not None:
        act = "Navigate"
    elif u.acknowledges_rejection and not u.questions:
        act = "HandleRejection"
    elif u.greeting and not u.explanation:
        act = "Greet"
    elif u.proposed or u.refers_to_focus:
        act = "Recommend" if not u.explanation else "Explain"
    elif u.explanation is not None and (u.explanation.cites or not u.questions):
        act = "Explain"
    elif u.questions and any(q.clarifies for q in u.questions):
        act = "ClarifyNeed"
    elif u.questions and u.acknowledges_rejection:
        act = "HandleRejection"
    elif u.questions:
        act = "AskPreference"
    else:
        act = "AnswerQuestion"
    return _replace_act(u, act)


def _replace_act(u: Utterance, act: str) -> Utterance:
    from dataclasses import replace

    return replace(u, act=act)
