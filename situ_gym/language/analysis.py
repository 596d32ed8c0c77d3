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
from dataclasses import dataclass, replace
from functools import lru_cache

from situ_gym.language import patterns as P
from situ_gym.language.lexicon import Mention, PlaceMention, SceneLexicon, TagMention, lemmas_of
from situ_gym.language.money import amounts, figure_value, quantities
from situ_gym.language.tokens import (
    STOPWORDS,
    Token,
    normalize,
    sentence_spans,
    spans_between,
    tokenize,
)

__all__ = [
    "ACTS", "SLOTS", "SLOT_KINDS", "RELATIONS", "DIRECTIONS", "DISTANCES",
    "Question", "NavInstruction", "Explanation", "Budget", "Utterance", "analyze",
]

ACTS = ("Greet", "AskPreference", "ClarifyNeed", "Navigate", "Recommend", "Explain",
        "AnswerQuestion", "Compare", "HandleRejection", "ConfirmPurchase")
SLOTS = ("category", "use", "preference", "avoid", "budget", "size", "location", "other")
# Slot asked -> the goal-detail kinds (``DisclosureItem.kind``) that answer it, best first:
# shared by the shopper (what to disclose) and RecRM (whether a question is still open).
SLOT_KINDS: dict[str, tuple[str, ...]] = {
    "category": ("category", "use"),
    "use": ("use", "category"),
    "budget": ("budget",),
    "avoid": ("avoid",),
    "preference": ("need",),
    "size": ("need",),
    "location": (),
}
RELATIONS = ("to", "into", "out_of", "past", "along", "behind", "toward")
DIRECTIONS = ("left", "right", "ahead", "back", "around", "up", "down")
DISTANCES = ("short", "medium", "long")

_ANGLE = re.compile(r"(\d{1,3})\s?(?:°|deg\b|degrees?)")
_PRONOUN = re.compile(r"\b(?:it|its|it's|this one|that one|this|that|the one|them|they|these|those|this [a-z]+|that [a-z]+|these [a-z]+|those [a-z]+)\b")
# Clause breaks: commas (not before a size or price: "Cereal, 12 oz"), semicolons, dashes, "but".
_CLAUSE_BREAK = re.compile(r",(?!\s*[\d$])\s*|;|:\s|\s-\s|\bbut\b|\binstead\b|\s(?:um+|uh+|erm)\s")  # a filler: a new start in speech
_TURNS = frozenset("turn look glance tilt face pivot rotate spin swing".split())
_TRANSLATE = P.MOTION - _TURNS - {"follow", "back"}  # verbs that move the shopper somewhere


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
    location: NavInstruction | None = None  # where something is, said without telling to go
    purchase_prompt: bool = False
    budget: Budget | None = None
    wants: tuple[str, ...] = ()
    avoids: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    rejects: bool = False
    accepts: bool = False
    requests: tuple[str, ...] = ()
    claims: tuple[str, ...] = ()
    refers_to_focus: bool = False  # "it" / "this one" stands for the product under discussion
    deictic: bool = False  # proposes "this one" / "it" without naming it or having a focus
    unknown_products: tuple[str, ...] = ()  # product-like names the catalog lacks
    named: tuple[str, ...] = ()  # products called by (part of) their name, not by their kind or "it"
    # products named only to be ruled out ("you turned the X down") or asked about as readings
    # of the shopper's words ("did you mean the A or the B?"): none is offered
    set_aside: tuple[str, ...] = ()
    landmarks: tuple[str, ...] = ()  # products named to say where something is ("next to the X")
    references: tuple[tuple[int, str], ...] = ()  # (char offset, product) of every reference, in text order

    @property
    def empty(self) -> bool:
        return not self.tokens

    @property
    def asks(self) -> tuple[str, ...]:
        """Slots asked, in order, without repeats."""
        return tuple(dict.fromkeys(s for q in self.questions for s in q.slots))

    @property
    def asks_to_compare(self) -> bool:
        """The words ask for a comparison ("how do they compare?"): its sides are answers, not offers."""
        return "compare" in self.requests

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
    mentions, places, tags = lex.link(toks, text) if lex is not None else ([], [], [])
    # products the words name outright are "in view" for a short name that follows: "Sunny
    # Grove No Pulp ... and Sunny Grove Calcium Added No Pulp. I'd take the calcium one"
    named_outright = frozenset(m.candidates[0] for m in mentions if m.kind == "product" and len(m.candidates) == 1)
    if lex is not None:
        taken = {i for x in (*mentions, *places) for i in range(x.start, x.end)}
        extra = lex.names_in_view(toks, taken, visible | named_outright | ({focus} if focus else frozenset()))
        if extra:
            named_at = {m.start for m in extra}
            mentions = sorted([*mentions, *extra], key=lambda m: m.start)
            tags = [replace(t, in_name=True) if t.start in named_at else t for t in tags]
    low = text.lower()
    sentences = sentence_spans(text)
    money = amounts(text)  # "$3.49", "3.49 dollars", "under twenty bucks", a clipped "3.49"
    prices = tuple(a.value for a in money)

    earlier: list[str] = []  # products already referred to, in order
    # Kinds of product the utterance names ("the Kira" next to "yoga mat" is the Kira yoga mat).
    context_categories = {m.category for m in mentions if m.category} | {
        lex.category_of[m.candidates[0]] for m in mentions if len(m.candidates) == 1
    }
    if not context_categories:
        # two model names set side by side share a kind: "alba vs elio" are the two sofas
        kinds: dict[str, set[str]] = {}
        for m in mentions:
            if m.kind == "product" and len(m.candidates) > 1:
                for pid in m.candidates:
                    kinds.setdefault(lex.category_of[pid], set()).add(m.phrase.lower())
        context_categories = {k for k, names in kinds.items() if len(names) >= 2}

    said_labels = {tag for t in tags if not t.in_name for tag in t.tags}

    def resolve(m: Mention) -> str | None:
        """A product for a mention: the only or best-named candidate, preferring one already
        referred to, then one in view; a bare kind of product ("the oat milk") only through
        what is in view or under discussion."""
        c = m.candidates
        if not c:
            return None
        if m.kind == "category" and _OTHER_KIND.search(low, max(0, m.char_start - 24), m.char_start):
            return None  # "another kind of frozen meal" is not the one under discussion
        if focus in c and (m.kind == "category" or len(c) > 1):
            return focus
        # words that name the product under discussion too ("This Sable chair" of the Sable
        # accent chair, though the Sable office chair covers them better) are about it
        if focus is not None and focus not in c and m.kind == "product" and not _OTHER_KIND.search(low, max(0, m.char_start - 24), m.char_start):
            said = set(lemmas_of(m.phrase)) - STOPWORDS
            if said and said <= lex.all_words[focus] | lex.brand_words[focus] and said & lex.name_words[focus] - lex.kind_words[focus]:
                return focus
        again = [pid for pid in earlier if pid in c]
        if again and len(c) > 1:
            # the one whose name has all the words ("wheat crackers" after the Whole Grain Wheat
            # Crackers and the Butter Crackers, both with wheat), else the last one spoken of
            said = set(lemmas_of(m.phrase)) - STOPWORDS
            by_name = [pid for pid in dict.fromkeys(again) if said <= lex.name_words[pid]]
            return by_name[0] if len(by_name) == 1 else again[-1]
        if len(c) > 1 and m.kind == "product":
            c = [pid for pid in c if lex.category_of[pid] in context_categories] or c
            # the one the utterance's labels describe: "Orla ... lumbar support and a headrest"
            # is the office chair, not the plant in the Orla pot
            fit = {pid: len(said_labels & set(lex.index.products[pid].tags)) for pid in c}
            if max(fit.values()) > 0:
                c = [pid for pid in c if fit[pid] == max(fit.values())]
        seen = [pid for pid in c if pid in visible]
        if m.kind == "category":
            return seen[0] if len(seen) == 1 or (seen and len(c) <= 2) else None
        if len(c) == 1:
            return c[0]
        return seen[0] if seen else c[0]

    refs: list[tuple[int, int, int, str]] = []  # (sentence index, char start, char end, product)
    named: list[str] = []  # products called by (part of) their name, not by their kind or "it"
    label_at = {(t.start, t.end): t.tags for t in tags}
    for m in mentions:
        pid = resolve(m)
        if pid is not None:
            si = next((i for i, (s, e) in enumerate(sentences) if s <= m.char_start < e), 0)
            # A word listed among an earlier product's labels in the same sentence ("it offers
            # gluten-free, vegan, penne") is that product's label, not a second product.
            labels = label_at.get((m.start, m.end))
            if labels and any(r[0] == si and r[3] != pid and labels & set(lex.index.products[r[3]].tags)
                              for r in refs):
                continue
            earlier.append(pid)
            if m.kind == "product":
                named.append(pid)
            refs.append((si, m.char_start, m.char_end, pid))
    bare = {m.char_start for m in mentions if m.end - m.start == 1 or (m.start, m.end) in label_at}
    refs = [r for r in refs if not (r[1] in bare and _a_value_asked(low, sentences[r[0]], r[1], r[2], refs))]
    # "it", "this one", "these" stand, in sentences naming none, for the one product the
    # sentence before named ("I suggest the X. Have a look at it."), else for the product under
    # discussion
    named_refs = list(refs)
    for si, (s, e) in enumerate(sentences if focus is not None else ()):
        if not any(r[0] == si for r in refs):
            pm = _PRONOUN.search(low, s, e)
            if pm and not _NON_REFERRING.match(low, pm.start()) and not _IDIOM_IT.search(low, max(0, pm.start() - 12), pm.start()):
                before = {r[3] for r in named_refs if r[0] == si - 1}
                antecedent = before.pop() if len(before) == 1 else focus
                if antecedent is not None:
                    refs.append((si, pm.start(), pm.end(), antecedent))
    if focus is not None and not refs and (tags or prices) and not P.GREETING.search(low):
        refs.append((0, 0, 0, focus))  # a statement of the product's facts is about the one under discussion
    refs.sort(key=lambda r: r[1])
    ref_pids = _unique(r[3] for r in refs)

    # ---- comparison: two products set against each other
    compared: list[str] = []
    if len(ref_pids) >= 2:
        for si, (s, e) in enumerate(sentences):
            sent = low[s:e]
            if P.COMPARE.search(sent) or P.COMPARATIVE.search(sent) or ";" in sent or " / " in sent:  # "A = ..., 11.09 / B = ..., 4.19"
                compared += [r[3] for r in refs if r[0] == si]
        compared = _unique(compared) if len(set(compared)) >= 2 else []
        if not compared and (P.COMPARE.search(low) or P.COMPARATIVE.search(low)) and lex is not None and not (
            P.HANDLE_REJECTION.search(low)  # "the X isn't your style. Would the Y suit you better?" offers Y
        ):
            # a comparison over sentences: the options listed in one, weighed in the next
            # ("Two options: A at $3.99 and B at $3.89. I'd take B, it's cheaper.")
            kinds: dict[str, list[str]] = {}
            for pid in ref_pids:
                kinds.setdefault(lex.category_of[pid], []).append(pid)
            compared = next((pids for pids in kinds.values() if len(pids) >= 2), [])
    purchase = bool(P.PURCHASE.search(low))

    proposed: list[str] = []
    mentioned: list[str] = []
    set_aside: list[str] = []
    named_aside: set[str] = set()  # set aside by name, not by "it" ("it's not the cheapest" concedes)
    landmarks: list[str] = []
    # "nice pick, ..." praises their choice; "try turning left" proposes a motion, not a product
    cue_text = _TRY_MOTION.sub(lambda m: " " * len(m.group(0)), _ACK_CHOICE.sub(lambda m: " " * len(m.group(0)), low))
    questions: list[Question] = []
    question_spans: list[tuple[int, int]] = []  # where each question was asked, before the ones of no slot go
    navigation: NavInstruction | None = None
    nav_at = 0  # the sentence the instruction is in
    navs: dict[int, NavInstruction] = {}  # the instruction each sentence gives
    refers_focus = False
    wants: list[str] = []
    avoids: list[str] = []
    rejects = _rejects(low)  # the words turn an offer down
    for si, (s, e) in enumerate(sentences):
        sent = low[s:e]
        here = [r for r in refs if r[0] == si]
        # (after a question, more options with no "?" of their own ask on: "...?? n big pack or regular")
        after_question = si > 0 and low[sentences[si - 1][0] : sentences[si - 1][1]].rstrip().endswith("?")
        is_question = sent.rstrip().endswith("?") or (
            not re.search(r"[.!?]", sent) and (_INTERROGATIVE.search(sent) is not None or _ASKED_INSIDE.search(sent) is not None
                                               or (after_question and _CHOICE_ASKED.search(sent) is not None))
            and not _NON_QUESTION.search(sent)
        )
        clauses = _clause_spans(low, s, e)
        # A proposal cue in a clause naming no product ("..., would suit you") carries over to
        # the sentence's products whose own clause says nothing either way.
        floating = any(
            P.PROPOSE.search(cue_text[a:b]) and not any(a <= r[1] < b for r in here) for a, b in clauses
        )
        # ... and so does a cue in the sentence before, naming none, when the turn is about one
        # product ("I have just the thing! The X is vegan", "here's my top pick: **X**"; a list
        # of options after "here are two options:" stays a list)
        if si and not floating and len(ref_pids) == 1 and here and not any(r[0] == si - 1 for r in refs):
            ps, pe = sentences[si - 1]
            floating = bool(P.PROPOSE.search(cue_text[ps:pe])) and not low[ps:pe].rstrip().endswith("?")
        for _, cs, ce, pid in here:
            a, b = _clause_span(low, s, e, cs, ce)
            clause = low[a:b]
            # (what follows it up to the next product rules it out: "Brio Sofa is 1829.99, too
            # expensive for you", "the Pike is $429.99, well past your $300")
            upto = min([r[1] for r in here if r[1] > ce] + [e])
            neg = P.NOT_PROPOSED.search(clause) or P.OVER_LIMIT.search(low, ce, max(b, min(e, ce + 24))) or _PRICED_OUT.search(low, ce, upto) or (
                # "$5 less than the Pure Meadow ones": what it is weighed against, unless the turn
                # weighs both sides ("both are compact", "X vs Y")
                FOIL.search(low, max(a, cs - 16), cs) and not _BOTH_SIDES.search(low))
            if neg:
                set_aside.append(pid)
                if any(m.char_start == cs for m in mentions):
                    named_aside.add(pid)
            if _LANDMARK.search(low, max(a, cs - 24), cs):
                landmarks.append(pid)  # "right next to the corn flakes": where, not what
            pro = (
                P.PROPOSE.search(cue_text[a:b])
                or (is_question and re.search(r"\b(?:how|what) about\b", clause))
                or _CHOSEN.match(low, ce, b)  # "the B better", "so spaghetti for you", "golden acre all the way"
                or re.match(r"\s*>\s", low[ce : ce + 4])  # "quinoa > jasmine here"
                or (  # "cheaper -> golden acre", "go coconut", "grab the calcium one" (a named
                    # product; "-> yoga mat there" and "go to Shelf 3" point the way)
                    _CHOICE_BEFORE.search(low[max(a, cs - 14) : cs])
                    and any(m.char_start == cs and m.kind == "product" for m in mentions)
                )
            )
            if not pro and not neg and floating and not P.COMPARE.search(clause):
                pro = True
            # ("let's set the Dune aside. ... should it have pet-friendly fabric?": "it" after
            # the product is set aside offers it no more)
            dropped = pid in named_aside and not any(m.char_start == cs for m in mentions)
            if (pro or purchase) and not neg and not dropped:
                proposed.append(pid)
                if pid == focus and not any(m.char_start == cs for m in mentions):
                    refers_focus = True
            elif pid not in compared:
                mentioned.append(pid)
        # ---- questions and their slots
        if is_question or P.INFO_REQUEST.search(sent):
            start = _QUESTION_START.search(sent) if not _OPENS_QUESTION.match(sent) else None
            q = _question(sent, text[s:e], toks, s, e, mentions, places, tags, bool(here), purchase, money,
                          asked_from=s + start.start("q") if start else s)
            if q is not None:
                questions.append(q)
            if q is not None or is_question:  # a bare option asked ("cereal? oatmeal? which one") too
                question_spans.append((s, e))
        # ---- navigation
        nav = _navigation(sent, toks, s, e, places, low)
        if nav is not None:
            navs[si] = nav
        # The most specific instruction is the one meant: "Let's keep going! Turn left about 90
        # degrees toward Shelf 11" turns left; between equals the first stands.
        if nav is not None and (navigation is None or _specificity(nav) > _specificity(navigation)):
            navigation, nav_at = nav, si
        # ---- shopper-side stance on attribute labels
        for t in tags:
            start = toks[t.start].start
            if t.in_name or not (s <= start < e):
                continue
            head = low[max(s, start - 40) : start]
            tail = low[start : start + 40]
            negated = bool(P.NEGATION.search(head)) or re.search(r"^[a-z ]*?[- ]free\b", tail) is not None and "free" not in t.phrase
            # ... or refused after it: "burgundy isn't my colour", "the chime would drive me crazy"
            negated = negated or _REFUSED_AFTER.match(low, toks[t.end - 1].end, e) is not None
            if _HAS_LABEL.search(head) and (here or re.match(r"\W*(?:it|they|this|that)\b", head)):
                # A label said of a product ("the X isn't organic", "the X has turkey") is a
                # fact about it; the stance is in the rest: "..., and I need that" wants it,
                # a turn-down wants what the product lacks and avoids what it has.
                lacking = negated or bool(re.search(r"\b(?:missing|lacks?|without)\b", head))
                if _NEED.search(low[s:e]):
                    wants.extend(sorted(t.tags))
                elif rejects:
                    (wants if lacking else avoids).extend(sorted(t.tags))
                continue
            (avoids if negated else wants).extend(sorted(t.tags))

    # The way to set off, said in the sentence next to the one naming where to go: "coffee ->
    # shelf 3. turn right, walk over"
    if navigation is not None and navigation.direction is None:
        beside = [navs[k] for k in (nav_at + 1, nav_at - 1) if k in navs and navs[k].target in (None, navigation.target)]
        if beside and beside[0].direction is not None:
            navigation = replace(navigation, direction=beside[0].direction)
    # A walk with no place named goes to the section named by its kind: "turn around + a few
    # steps, office chairs are right there", "floor lamps r front left. walk along that section"
    if navigation is not None and navigation.target is None and lex is not None:
        # (not what the shopper will then see: "step back, then you see all the floor lamps")
        sections = {lex.places.get(tuple(w for w in lemmas_of(m.phrase) if w not in STOPWORDS)) for m in mentions
                    if m.kind == "category" and not _SEEN.search(low, max(0, m.char_start - 18), m.char_start)} - {None}
        if len(sections) == 1:
            target = sections.pop()
            relation = navigation.relation or ("to" if navigation.distance is not None else None)
            navigation = replace(navigation, target=target, relation=relation)
    # Where the walk ends, said in the next sentence ("go right and walk all the way over to
    # the far wall. Open Cooler 1 is the first cooler there", "Go forward only some steps more.
    # Then you are at Open Cooler 2.") or in the one before, where the thing asked for is ("Most
    # of the yogurt is in Open Cooler 2. Turn right and go two coolers down"): the one place
    # named there, told of and not walked past
    for k in (nav_at + 1, nav_at - 1):
        if navigation is None or navigation.target is not None or navigation.relation is not None or not 0 <= k < len(sentences):
            continue
        s2, e2 = sentences[k]
        told = {p.entity_id for p in places if s2 <= p.char_start < e2}
        if len(told) == 1 and not motion_verbs(toks, low, s2, e2) and not low[s2:e2].rstrip().endswith("?"):
            navigation = replace(navigation, target=told.pop(), relation="to" if navigation.distance is not None else None)
    # A walk into a shop and on inside it ends at the shop's section the turn names ("go into
    # leather and ink and turn right, the office chairs section is just inside", "textiles =
    # nordic nest back R. walk in n head R to the back"; "go inside The Plant; the indoor plants
    # are at the front" only enters)
    index = lex.index if lex is not None else None
    if index is not None and navigation is not None and navigation.target in index.stores and navigation.relation in ("into", "to") and (
        navigation.direction is not None or re.search(r"\bto the back\b", low)
    ):
        sections = {p.entity_id for p in places
                    if p.entity_id in index.areas and index.areas[p.entity_id].store_id == navigation.target}
        if len(sections) == 1:
            navigation = replace(navigation, target=sections.pop(), relation="to", approach=None)
    # A product presented on its own, with its facts and no cue either way ("rec: oat milk,
    # vegan, 3.89", "the Honeycrisp apples are a sweet one, only $4.49"), is offered: what
    # else would naming one product and selling it be? Only when it is the one new product
    # the text names, so a comparison or an answer about the product in focus stays one.
    fresh = [p for p in _unique(named) if p != focus and p not in set_aside and p not in landmarks]
    if not proposed and len(fresh) == 1 and fresh[0] in mentioned and not purchase:
        pid = fresh[0]
        # the pitch must be about it: praise in another sentence ("What a great choice!") sells nothing
        about = " ".join(low[a:b] for a, b in sentences if any(r[3] == pid and a <= r[1] < b for r in refs))
        facts = money or any(not t.in_name for t in tags)

        # What is said of it: its sentences after the clauses about other products ("X is
        # 299.99, over ur 250 so skip, Y tho, 209.99" is a note about Y), and, for a verdict
        # against it, from its name on.
        def said_of(r, from_name: bool) -> str:
            s, e = sentences[r[0]]
            if from_name:
                return low[_clause_span(low, s, e, r[1], r[2])[0] : e]
            others = [_clause_span(low, s, e, o[1], o[2])[1] for o in refs if o[0] == r[0] and o[1] < r[1] and o[3] != pid]
            return low[max([s, *others]) : e]

        own = " ".join(said_of(r, from_name=False) for r in refs if r[3] == pid)
        onward = " ".join(said_of(r, from_name=True) for r in refs if r[3] == pid)
        # A note without a verb ("copper kettle decaf ground - no caffeine, 9.19") offers what it
        # names; a sentence stating facts ("The X is $4.49 a bag") answers unless it also sells.
        # After a turn-down is acknowledged, a new product's facts offer it as the alternative
        # ("No problem, we'll skip the Granny Smiths! The Gala Apples are sweet instead.", "so
        # not the breaded tenders then um the X are just plain"); so does a list entry: the
        # name, then a dash or a colon and its facts ("The Greenhaus Zz Plant in Marlow Pot - is
        # safe for pets, 60.99"), but not "the reason I picked the X: ...", a choice explained.
        alternative = facts and P.HANDLE_REJECTION.search(low) is not None and not P.HANDLE_REJECTION.search(own)
        entry = facts and any(r[3] == pid and _ENTRY.match(low, r[2]) for r in refs) and not re.search(
            r"\b(?:reason|why|picked|chose|because)\b", about)
        selling = (facts and (_SELLING.search(about) or not _FINITE_VERB.search(own))) or _PITCH.search(about) or alternative or entry
        asking = all(low[s:e].rstrip().endswith("?") for s, e in sentences)
        if selling and not asking and not P.NOT_PROPOSED.search(onward) and not _ANSWERING.match(about.lstrip()):
            proposed.append(pid)
            mentioned.remove(pid)
    # A push-back in a sentence naming no product ("... under-bed storage. Still in the
    # running?") asks to reconsider the product the words were about: the last one referred
    # to, else the one under discussion.
    for si, (s, e) in enumerate(sentences):
        if any(r[0] == si for r in refs) or not P.RECONSIDER.search(low, s, e):
            continue
        earlier_refs = [r for r in refs if r[2] <= s]
        pid = earlier_refs[-1][3] if earlier_refs else focus
        if pid is not None and pid not in proposed:
            proposed.append(pid)
    # A choice whose object is "that one"/"this" picks the product named last before it:
    # "cheapest = earl grey decaf, still decaf -> that one", "... so I'd get that one"
    for m in _CHOOSE_DEMONSTRATIVE.finditer(low):
        before = [r for r in refs if r[2] <= m.start()]
        pid = before[-1][3] if before else None
        if pid is not None and pid not in proposed and pid not in set_aside:
            proposed.append(pid)
    if purchase or proposed or P.HANDLE_REJECTION.search(low):
        # "So the X it is?", "Worth a try?", "Happy with it?": confirmations, not questions for information
        questions = [q for q in questions if q.slots != ("other",)]
    if len(questions) > 1:
        slotted = [q for q in questions if q.slots != ("other",)]
        questions = slotted or questions
    kinds_offered = categories_offered(toks, tags, question_spans, lex) if questions and lex is not None else set()
    if questions and not proposed and not any("avoid" in q.slots for q in questions) and len(kinds_offered) >= 2:
        # "dish soap or laundry soap?", "which table? dining / coffee / side": options that are
        # different kinds of product ask which need the shopper meant (kinds named as things to
        # avoid, "wheat, milk?", are no options)
        questions = [replace(q, clarifies=True, slots=("category",) if set(q.slots) <= {"other", "preference", "use", "category"} else q.slots)
                     for q in questions]
    readings: list[str] = []
    asked = _READINGS.search(low)
    # the kinds listed anywhere in the turn: "three sage pieces - the Fjord Table Lamp, the Hollis
    # Throw Blanket and the Lune Throw Pillow. Which one caught your eye?", "Zephyr is four
    # products: ottoman, pendant light, nightstand and gaming desk. Which one you mean?"
    listed = categories_offered(toks, tags, sentences, lex) if asked and not purchase and lex is not None else set()
    if asked and not purchase and (proposed or compared or mentioned):
        # "which one did you mean?", "did you say the mint ice cream or the mint truffles": the
        # products named are readings of the shopper's words, asked about, none weighed or
        # offered; readings of different kinds ask which kind, of one kind which variant
        readings = [p for p in _unique([*proposed, *compared, *mentioned]) if p in named]
        mentioned, set_aside = [*readings, *mentioned], [*set_aside, *readings]
        kinds = kinds_offered | listed | ({lex.category_of[p] for p in mentioned} if lex is not None else set())
        proposed, compared = [], []
        if not questions:  # said without a "?": "sorry um did you say the A or the B"
            s, e = next(span for span in sentences if span[0] <= asked.start() < span[1])
            questions = [Question(("other",), text[s:e])]
        questions = reading_questions(questions, kinds)
    elif questions and len(listed) >= 2:  # kinds alone, no product named: the readings are kinds
        questions = reading_questions(questions, listed)
    proposed = _unique(proposed)
    # "the first" / "the former" after two products set side by side is the first said,
    # "the second" / "the latter" the other: "Put A next to B: the first gives you ..."
    if len(set(compared)) == 2 and not proposed:
        sides = _unique(r[3] for r in refs if r[3] in compared)
        last_name = max(r[2] for r in refs if r[3] in compared)
        pick = _ORDINAL_PICK.search(low, last_name)
        if pick:
            proposed.append(sides[0] if pick.group(1) in ("first", "former") else sides[-1])
    # a product set against the one under discussion, unasked and with no side picked, is
    # brought up as the alternative: "the Jasper is dimmable like the Bexley but $50 cheaper"
    # (not when the turn ends by asking which the shopper needs: "... brass or wood?", "need handles?")
    others = [p for p in _unique(compared) if p != focus and p not in set_aside]
    asks_need = ends_asking_need(low, questions)
    if focus is not None and focus in compared and len(others) == 1 and not proposed and not purchase and not asks_need:
        proposed.append(others[0])
    # ... and so is one of its kind set against it by words that leave it unnamed ("the rotini
    # is only 10 cents more and it's whole grain", "has the same drawers, 120 bucks less", "is
    # also 10 oz, vs $4.19 for the mac"): the two are compared
    if (focus is not None and lex is not None and not compared and focus not in named and not purchase and not rejects
            and not P.HANDLE_REJECTION.search(low)):
        beside = [p for p in _unique(named) if p != focus and p not in set_aside and p not in landmarks]
        if len(beside) == 1 and lex.category_of.get(beside[0]) == lex.category_of.get(focus) and _SET_AGAINST.search(low):
            compared = [focus, beside[0]]
            if not asks_need and beside[0] not in proposed:
                proposed.append(beside[0])
                mentioned = [p for p in mentioned if p != beside[0]]
    # options of one kind listed, then one picked ("3 opts: chamomile 8.79 / peppermint 9.89 /
    # earl grey decaf 4.39. cheapest = earl grey decaf -> that one"): every option is weighed
    if len(proposed) == 1 and lex is not None:
        kind = lex.category_of.get(proposed[0])
        options = [p for p in _unique(named) if p != proposed[0] and p not in set_aside and p not in landmarks
                   and p != focus and lex.category_of.get(p) == kind]
        # (two set side by side and one picked, "isla pot 48.99 / orla pot 46.99 -> orla", too)
        if (len(options) >= 2 and (P.COMPARATIVE.search(low) or _PICKED_AMONG.search(low))) or (
            len(options) == 1 and _PICKED_AMONG.search(low)
        ):
            compared = _unique([*compared, *options, proposed[0]])
    # the side a pick is weighed against, with its reason against it in its own clause ("2.
    # **Penne Rigate**: costs more"), is set aside, not offered
    if proposed and len(set(compared)) >= 2:
        for si, cs, ce, pid in refs:
            if pid in compared and pid not in proposed:
                alone = len({r[3] for r in refs if r[0] == si}) == 1  # a list line of its own
                a, b = sentences[si] if alone else _clause_span(low, *sentences[si], cs, ce)
                if _WEIGHED_AGAINST.search(low, a, b):
                    set_aside.append(pid)
    # a product dropped as a turn-down is acknowledged is no side of a comparison ("we'll skip
    # the umber um the wren is forty less"): it is mentioned, the alternative offered
    if P.HANDLE_REJECTION.search(low):
        compared, left = drop_sides(compared, [p for p in compared if p in set_aside and p not in proposed])
        mentioned += left
    # a product both favoured and set against another stays in the comparison too
    mentioned = [p for p in _unique(mentioned) if p not in proposed and p not in compared]
    # ---- explanation: reasons given for the product in play
    subject = next((r[3] for r in refs if r[3] in proposed), None) or (ref_pids[0] if ref_pids else None)
    if subject is not None and subject not in proposed and P.HANDLE_REJECTION.search(low):
        subject = None  # reasons against a product turned down are no explanation for it
    if subject is not None and not proposed and (readings or _READINGS.search(low) or all(low[s:e].rstrip().endswith("?") for s, e in sentences)):
        subject = None  # a question about a product ("do you mean dairy milk?") gives no reasons
    # in a comparison, a label every other product set against it has too is no reason for it
    # ("two no-pulp options: ..."), unless said of them all ("both are vanilla")
    comparing = bool(compared) or (P.COMPARE.search(low) is not None and not P.HANDLE_REJECTION.search(low))
    rivals = [p for p in _unique(named) if p != subject and lex.category_of[p] == lex.category_of[subject]] if (
        comparing and subject is not None) else []
    explanation = _explanation(subject, low, toks, mentions, tags, money, lex, rivals) if subject else None
    budget = _budget(low, money if len(low) == len(text) else amounts(low))
    categories = _unique(
        [m.category for m in mentions if m.category]
        + [lex.category_of[c] for m in mentions if m.kind == "product" for c in m.candidates[:1]]
    )
    utt = Utterance(
        text=text,
        tokens=toks,
        mentions=tuple(mentions),
        places=tuple(places),
        tags=tuple(tags),
        prices=prices,
        greeting=bool(P.GREETING.search(low)),
        closing=bool(P.CLOSING.search(low)),
        thanks=bool(P.THANKS.search(low)),
        questions=tuple(questions),
        proposed=tuple(proposed),
        mentioned=tuple(mentioned),
        compared=tuple(compared),
        explanation=explanation,
        navigation=navigation,
        location=_location(low, places) if navigation is None else None,
        purchase_prompt=purchase,
        budget=budget,
        wants=tuple(_unique(w for w in wants if w not in avoids)),
        avoids=tuple(_unique(avoids)),
        categories=tuple(categories),
        rejects=rejects,
        accepts=bool(P.ACCEPT.search(low)),
        requests=tuple(name for name, pat in P.REQUESTS if pat.search(low)),
        claims=tuple(m.group(0) for m in P.CLAIMS.finditer(low)),
        refers_to_focus=refers_focus,
        deictic=not refs and bool(_PRONOUN.search(low)) and bool(P.PROPOSE.search(low) or purchase),
        unknown_products=tuple(m.phrase for m in mentions if m.kind == "unknown"),
        named=tuple(_unique(named)),
        set_aside=tuple(p for p in _unique(set_aside) if p not in proposed),
        landmarks=tuple(p for p in _unique(landmarks) if p not in proposed),
        references=tuple((r[1], r[3]) for r in refs),
    )
    return replace(utt, act=_act(utt, focus, low))


def ends_asking_need(low: str, questions) -> bool:
    """Whether a turn ends by asking which the shopper needs ("... brass or wood?", "need
    handles?"): then the products it sets side by side are options, not a pick."""
    return low.rstrip().endswith("?") and any(q.slots != ("other",) for q in questions)


def drop_sides(compared, dropped) -> tuple[list[str], list[str]]:
    """The comparison once the ``dropped`` sides leave it (none when fewer than two sides are
    left), and every side that left it."""
    kept = [p for p in compared if p not in dropped]
    kept = kept if len(kept) >= 2 else []
    return kept, [p for p in compared if p not in kept]


def reading_questions(questions, kinds: set[str]) -> list[Question]:
    """Questions that ask which of several readings the shopper meant: which kind when the
    readings are of different ``kinds``, else which variant; a slot asked besides stays."""
    slot = ("category",) if len(kinds) >= 2 else ("preference",)
    return [replace(q, clarifies=True, slots=slot) if set(q.slots) <= {"other", "preference", "category"} else q
            for q in questions]


_READINGS = re.compile(
    r"\b(?:(?:which|what)(?: one| ones| [a-z]+)?(?: did| do)? (?:you|u) mean|(?:did|do) (?:you|u) (?:mean|say))\b"
    r"|\bwhich (?:one|ones) (?:were|are|r) (?:you|u) after\b"  # "which one were you after": which was meant
    # "You mean the A, or the B?", "..., or u mean the B?": the auxiliary left out
    r"|(?:^|[.!?:,]\s*|\b(?:or|so|oh|sorry|wait|um|uh)\s+)(?:you|u) mean\b"
    # "Is it the Halden Loveseat, the Halden Table Lamp, or the Halden Watering Can?"
    r"|(?:^|[.!?:]\s*)(?:is|was) it (?:the|a|an)\b[^.!?]*\bor\b[^.!?]*\?"
)
_OTHER_KIND = re.compile(r"\b(?:another|other|different|some other)\s+(?:(?:kind|type|sort)s?\s+of\s+)?$")
_REFUSED_AFTER = re.compile(r"\W*(?:" + P.REFUSED.pattern + "|" + P.COMPLAINT.pattern + ")")
# "got it", "I hear you on that": "it" of an idiom refers to nothing
_IDIOM_IT = re.compile(r"\b(?:got|get|gotcha|understand|hear(?: you on)?|see|make)\s+$")
_NON_REFERRING = re.compile(r"(?:it'?s (?:time|okay|ok|fine|no problem|a good idea|up to you)|that'?s (?:okay|ok|fine|alright|all)|that way|this way|it is time)")
_SLOT_WORD = re.compile(r"^(?:budget|pref|price|size|colou?r|flavou?r|allerg\w*|room|brand|scent|material|style|kind|type|preferences?|must[- ]?haves?)(?:[- ]?ish)?$")
# A question by its syntax, for speech written without "?": a wh-word or an inverted auxiliary
# opening the clause ("so what are we looking for today", "how much do you wanna spend").
_FILLERS = r"(?:so|and|n|um|uh|like|okay|ok|oh|well|also|then|now|wait|right|hmm|yeah)"  # "n": clipped "and"
_AUXILIARIES = r"(?:does|do|did|is|are|can|could|will|would|should|shall|has|have|was|were)"
_ASKING = (
    r"(?:what(?:'s|s|'re| is| are| r| do| did| would| kind| sort| type| room)?|which|how (?:much|many|big|about|old|wide|long|tall)(?:'s)?|"
    r"where(?:'s)?|who|is there|are there|anything else|anything in particular|how (?:can|may) i|do you|did you|would you|could you|can you|are you|are we|were you|have you|is it|is that|should i|shall i|"
    # an inverted auxiliary opening a question about a thing or a person: "does the mac and
    # cheese have wheat", "does he want like a particular colour"
    rf"{_AUXILIARIES}\s+(?:the|this|that|these|those|it|they|he|she|your|any(?:one|body)|some(?:one|body))\b"
    # "anyone in the house with allergies i should know about": a question about people, spoken
    r"|any(?:one|body)\b)"
)
_RELATIVE_WHICH = r"(?!which (?:is|are|was|were|has|have|makes?|means?)\b)"  # "um which is really nice"
_INTERROGATIVE = re.compile(rf"(?:(?:^|\b(?:{_FILLERS}|depends)\s+){_RELATIVE_WHICH}{_ASKING}|\b(?:is|are) there any(?:thing|one)?)\s+\w")
# Where a question starts after words that ask nothing: "haha fair, no cream, what colour
# works then", "... fifty two ninety nine so it depends like do you have pets".
_QUESTION_START = re.compile(rf"(?:[,;:\u2014\u2013]\s*|\b(?:{_FILLERS}|depends)\s+){_RELATIVE_WHICH}(?P<q>{_ASKING}\s+\w)")
# A question for information opens with a wh-word or an auxiliary ("how do the others compare?",
# "you want it?"); "X is 4 bucks 29 tho?" or "Ten eighty-nine for Swiss cheese?" does not.
_OPENS_QUESTION = re.compile(
    rf"\W*(?:{_FILLERS}\W+)*(?:how|what|which|where|why|who|when|whose|any|anything|{_AUXILIARIES}|you|u)\b"
)
# A question asked inside spoken words without its "?": "sorry when you said cleaner did you
# mean like for the kitchen", "beans like canned or do you mean coffee beans", "did you say the
# A or the B", "... or eggs and yogurt which one".
_ASKED_INSIDE = re.compile(
    r"\bwhich (?:look|style|colou?r|finish|flavou?r|one|ones) (?:do|would|did) (?:you|u) (?:like|want|prefer|need)\b|"
    r"\b(?:do|did) (?:you|u) (?:mean|say)\b|\bor do (?:you|u) (?:want|need|mean|prefer)\b|\bwhich (?:one|ones|kind|type)\W*$"
)
# "what we have", "let me show you which": a wh-word inside a statement asks nothing
_NON_QUESTION = re.compile(r"\b(?:show|tell|see|know|find|is|that'?s|here'?s) (?:you )?(?:what|which|where|how)\b")
_SHORT_Q = re.compile(r"^(?:shall we|ready|okay|ok|sound good|sounds good|right|deal|alright|all set|good)\??$")
# A short question that offers what the turn put forward: "Still worth a look?", "Might suit
# you?", "swap?", "worth it?"; it asks for a yes or no, no slot.
_OFFER_Q = re.compile(
    r"^(?:(?:so|then|still|maybe|just|might be|could be)\s+)*(?:(?:is it|it's|it is|would it be)\s+)?"
    r"(?:worth (?:a look|a try|considering|it|a shot|the swap|a swap|keeping(?: [a-z ]{1,20})?)|might (?:suit|work for) (?:you|u)|swap|switch|interested|tempted|better)\W*$"
)


def _question(sent, original, toks, s, e, mentions, places, tags, names_product, purchase, money,
              asked_from: int | None = None) -> Question | None:
    """The question asked in sentence ``sent`` (None when it is no question for information);
    ``asked_from``: where the part that asks starts, after words that ask nothing ("haha fair,
    no cream, what colour works then"): the prices and labels before it are facts, not what
    it asks about."""
    asked_from = s if asked_from is None else asked_from
    stripped = sent.strip().rstrip("?!. ")
    if _SHORT_Q.match(stripped) or _OFFER_Q.match(stripped) or (len(stripped.split()) <= 1 and not _SLOT_WORD.match(stripped) and stripped != "which"):
        return None  # "Ready?", "Okay?"; but "budget?" and "which?" ask
    nav_like = bool(motion_verbs(toks, sent, s, e, base=s)) and (any(s <= p.char_start < e for p in places) or _direction(sent)) and not re.search(r"\bwhere\b", sent)
    # the product's own name and price are no slot words: "how about the X, 8 oz?"
    spoken = list(sent)
    for a, b in [(m.char_start, m.char_end) for m in mentions if m.kind == "product"] + [(x.start, x.end) for x in money]:
        if s <= a < e:
            spoken[a - s : b - s] = " " * (min(b, e) - a)
    spoken = "".join(spoken)
    proposing = names_product and P.PROPOSE.search(sent) and not _slot_words(spoken)
    # a product's facts said with a "?" and no question word offer it: "X is 4 bucks 29 tho?"
    offering = names_product and not _OPENS_QUESTION.match(spoken, asked_from - s) and not re.search(r"\bor\b", spoken) and not (
        _slot_words(spoken) or re.search(r"\bbudget\b", spoken)
    )
    if P.PURCHASE.search(sent) or P.RECONSIDER.search(sent) or nav_like or proposing or offering:
        return None  # an offer to buy, to reconsider, to walk, or of a product asks no slot
    money = [a for a in money if a.start >= asked_from]
    tags = [t for t in tags if toks[t.start].start >= asked_from]
    # (words before the part that asks ask nothing, unless they hold a question of their own:
    # "sorry which one are you standing by right now is it a freezer or a shelf")
    before = sent[: asked_from - s]
    asking = sent if re.search(rf"\b{_ASKING}\b", before) else " " * len(before) + sent[asked_from - s :]
    slots = _slots(asking, toks, s, e, mentions, places, tags, money)
    # a question of several parts asks each part's slot: "which colour you want, and which
    # colour you don't like?", "what's your budget roughly and do you want like mesh or leather"
    parts = [(s + a, s + b) for a, b in spans_between(_PART_BREAK, sent)]
    if len(parts) >= 2:
        each = [_slots(low_part, toks, a, b, mentions, places, tags, money) or (["preference"] if _CHOICE_ASKED.search(low_part) else [])
                for (a, b), low_part in zip(parts, (sent[a - s : b - s] for a, b in parts), strict=True)]
        if all(each):  # in the slots' fixed order, as one sentence reading would list them
            found = {x for part in each for x in part} | set(slots)
            slots = [name for name, _ in P.SLOTS if name in found]
    if not slots and _CHOICE_ASKED.search(sent):
        slots = ["preference"]  # "light or dark?", "which one?", "which look suits your room?"
    if set(slots) <= {"preference", "location", "category"} and _TIME_OR_INTENT.search(sent) and not _NEED_SPECIFIC.search(sent):
        slots = []  # "in a rush or time to browse?", "buying today or just getting ideas?": no detail of the need
    clarifies = bool(P.CLARIFY.search(sent))
    return Question(tuple(dict.fromkeys(slots)) or ("other",), original, clarifies)


# A choice put to the shopper: options with "or", or a "which" of things to pick among.
_CHOICE_ASKED = re.compile(
    r"\b[a-z-]+\s+or\s+(?:the\s+|a\s+)?[a-z-]+|\bwhich (?:one|ones|look|matters|would|do|sounds|appeals)\b"
    r"|\b[a-z-]+,\s+[a-z-]+,\s+[a-z-]+\W*$"  # options listed: "brown, arborio, quinoa...?"
)


_HOW_MANY_IT_SERVES = re.compile(
    r"\b(?:just|only)\s+(?:for\s+)?(?:you|u|yourself|one)\b[^?]{0,40}?\bor\b[^?]{0,30}?\b(?:family|crowd|household|people|bunch|group|everyone|lot)\b"
    r"|\b(?:big|whole|full)\s+(?:household|family)\b[^?]{0,20}?\bor\s+(?:just\s+)?(?:for\s+)?(?:you|u|yourself)\b"
    r"|\b(?:cooking|shopping|buying|feeding)\s+(?:just\s+)?for\s+(?:yourself|one|you|u)\b[^?]{0,20}?\bor\b"
    r"|\b(?:for|feeding)\s+(?:a\s+)?(?:crowd|big\s+household|whole\s+family|lot\s+of\s+people)\b[^?]{0,20}?\bor\b"
)
_USE_OCCASION = re.compile(r"\b(?:party|parties|gift|present|occasion|brunch|picnic|bbq|barbecue|with (?:children|kids))\b")


# Where a question turns to its next part: ", and what ...", " + ", "; ", ", any ...".
_PART_BREAK = re.compile(
    r"(?:,\s*|\s+)(?:and|&|\+)\s+(?:(?:uh|um|er|like|so|also)\s+)*(?=(?:what|which|how|any|is|are|do|does|did|would|will|can|could|should|"
    r"anything|something|you|u)\b)|,\s*(?=(?:any|anything|what|which|how|is|are|do|does)\b)|;\s*|\s\+\s"
)


def _slots(sent, toks, s, e, mentions, places, tags, money) -> list[str]:
    """The slots the words ``sent`` (``low[s:e]``) ask about, in order; [] when none is recognised."""
    slots = [name for name, pat in P.SLOTS if pat.search(sent)]
    if "budget" not in slots and any(not a.bare for a in money if s <= a.start < e):
        slots.append("budget")
    cats = {m.category for m in mentions if s <= m.char_start < e and m.kind == "category" and m.category}
    # "which kind of table" (tables of several categories) asks the category; "which kind of
    # cereal" (one category) a preference within it
    kind_of = re.search(r"\b(?:what|which) (?:kind|sort|type) of (?!product|item|thing|budget|price|size|colou?r|flavou?r|style|material)", sent)
    if kind_of and any(m.char_start == s + kind_of.end() and m.kind == "category" and m.category for m in mentions):
        kind_of = None
        slots = ["preference"] + [x for x in slots if x not in ("category", "preference")]
    if len(cats) >= 2 or kind_of and not tags_in(tags, toks, s, e):
        slots = ["category"] + [x for x in slots if x not in ("category", "preference")]
    free_tags = tags_in(tags, toks, s, e)
    if free_tags and not slots:
        head = sent[: max(0, toks[free_tags[0].start].start - s)]
        slots = ["avoid" if P.NEGATION.search(head) else "preference"]
    if not free_tags and set(slots) <= {"preference"} and P.OR_SOMETHING_ELSE.search(sent):
        slots = ["category"]  # "breakfast stuff or something else today?": what the shopper came for
    if "budget" in slots and re.search(r"how much (?:of|(?:\w+ )?space|(?:\w+ )?room|wall)", sent):
        slots.remove("budget")
    if "category" in slots and "preference" in slots:
        slots.remove("preference" if not re.search(r"\bprefer|flavou?r|colou?r|brand|style|scent|material\b", sent) else "category")
    if "size" in slots and "category" in slots and re.search(r"\bhow many (?:people|ppl|of you|of u|mouths|(?:r|are) (?:you|u) (?:shopping|cooking|buying))\b", sent):
        slots.remove("category")  # "how many ppl u shopping for?": how many it feeds
    if "use" in slots and "category" in slots and re.search(r"\bwho (?:are|r) (?:you|u) (?:shopping|buying|getting)", sent):
        slots.remove("category")  # "who are you shopping for": for whom, not what
    if "use" in slots and "category" in slots and re.search(r"\b(?:what|which) room\b[^?]*\b(?:shopping|looking) for", sent):
        slots.remove("category")  # "what room r we shopping for?": the room is what is asked
    if "use" in slots and "category" in slots and not re.search(r"\buse\b|occasion|purpose|who|\broom\b|for (?:you|the kids|a party|dinner)", sent):
        slots.remove("use")
    if "avoid" in slots and "preference" in slots and not re.search(
        r"\bprefer|brands? you like|flavou?r|style\b|must[- ]?ha|non-?negotiable|features?|(?:must|need|has|have) to have|must have"
        r"|\bvibe\b|\bdo (?:you|u) like\b|\blean(?:ing)? (?:to|toward)|\bwhich (?:taste|kind|type)\b", sent
    ):
        slots.remove("preference")
    if "avoid" in slots and "category" in slots and not re.search(r"looking for|shopping for|kind of|sort of|type of", sent):
        slots.remove("category")  # "what you want avoid", "what you don't want": the avoid question
    if "preference" in slots and re.search(r"\bmatters? (?:more|most)\b|\bmore about\b|\bmore important\b", sent):
        slots = ["preference"]  # "which matters more, grease power or price?": what the choice turns on
    if _HOW_MANY_IT_SERVES.search(sent) and not _USE_OCCASION.search(sent) and (not slots or set(slots) & {"use", "preference"}):
        # "just for you or the whole family?": how many it serves, its size, not what it is for
        slots = list(dict.fromkeys("size" if x in ("use", "preference") else x for x in slots)) or ["size"]
    if "use" in slots and P.PET_LABEL.search(sent):
        # pets asked about beside a label for them ("do you have pets, like does it need to be pet
        # friendly"): the label the product must have is asked, not who lives with it
        slots = list(dict.fromkeys("preference" if x == "use" else x for x in slots))
    if "size" in slots and "use" in slots and re.search(r"\b(?:hours|hrs)\b|\bhow long\b[^?]{0,25}\b(?:sit|sitting|sessions?|gaming|play|work|each day|every day|a day)\b", sent):
        slots.remove("size")  # "how many hours a day will you sit in it": how it is used
    if "size" in slots and "preference" in slots and not re.search(r"must[- ]?ha|non-?negotiable|(?:must|need|has|have) to have|must have", sent):
        slots.remove("preference")
    if "size" not in slots and _USE_OPTIONS.search(sent) and not re.search(r"\bprefer|flavou?r|colou?r|brand|style|scent|material\b", sent):
        # the options are who or what it is for: "kid's room or grown-up space?", "reading or
        # mood light?", "puppy, grown up, or a senior?", "decorating a new place, or replacing ...?"
        slots = ["use"] + [x for x in slots if x not in ("preference", "use") and (x != "category" or re.search(r"\b(?:what|which)\b", sent))]
    if not slots and (any(s <= p.char_start < e and "_area_" not in p.entity_id for p in places) or _STANDING.search(sent)):
        slots = ["location"]  # options that are places, or where the shopper stands: "u at shelf 3 or shelf 4 rn?"
    return slots


# How much time the shopper has, or whether they buy today: asks no detail of the need (unless
# set against a need in particular: "something specific or just browsing?" asks the kind)
_TIME_OR_INTENT = re.compile(
    r"\b(?:rush|hurry|quick dash|time (?:to|for) (?:browse|look|wander)|idea[- ]hunting|(?:getting|gathering|collect|just) ideas"
    r"|(?:buying|shopping for real) today|tak(?:e|ing) something home)\b"
)
_NEED_SPECIFIC = re.compile(r"\b(?:specific|particular|in mind|looking for|after (?:anything|something|smth)|hunting for)\b")
# A figure the shopper gave, said to be exceeded: "above your $1,500", "more than your 200",
# "too much for your 250", "over your twelve", "over your twelve dollars"
_OVER_YOUR_FIGURE = (r"\b(?:over|above|beyond|past|more than|too much for|too pricey for) (?:ur|your) \$?\s?"
                     r"(?:\d|(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty"
                     r"|sixty|seventy|eighty|ninety|a hundred|hundred|a thousand|thousand)\b|[a-z]+ (?:dollars?|bucks))")
# A price then "over", bare: "= 699.99 \u2717 over." (a cross reads as a comma), not "over there"
_CROSSED_OVER = r"\d\s*,?\s*over\b(?!\s*(?:\$?\d|there|here|by|at|in|on|to)\b)"
# A product's price said to rule it out: "too expensive for you", "well past your $300", "too much".
_PRICED_OUT = re.compile(r"\btoo (?:expensive|pricey|costly)\b|\btoo much\b(?!\s+[a-z])|\btoo much for (?:you|u)\b"
                         r"|\b(?:well|way|far) (?:over|past|above)\b|\bpast (?:your|ur)\b|\bover (?:your|ur|the) (?:budget|limit)\b"
                         # the shopper's figure: "so that's over your $5", "more than your 200", "so just over"
                         r"|" + _OVER_YOUR_FIGURE + r"|\bso (?:just |a bit |juu+st )?over\b(?!\s+(?:there|here|to|by|at)\b)"
                         r"|" + _CROSSED_OVER)  # "= 699.99 \u2717 over."
# Words that say who or what a thing is for, as options of a question ("for a kid or for you").
_USE_WORD = (r"(?:kids?|kiddos?|child(?:ren)?|bab(?:y|ies)|toddlers?|grown[- ]?ups?|adults?|yourself|(?:ur|your) own|guests?|crowd|household"
             r"|lunch\w*|breakfast|dinner|supper|snacks?|part(?:y|ies)|trip|gift|present|tonight|weekend|evenings?|mornings?|bedtime"
             r"|reading|working|office|bedroom|living room|outdoors?|indoors?|mood|background|glow|decorat\w+|puppy|kitten|senior|school|camping"
             r"|gifting|birthday|holiday|everyday|baking(?: day)?|basics|refresh\w*|replac\w+)")
_USE_OPTIONS = re.compile(
    rf"\b{_USE_WORD}(?:'s)?(?: [a-z-]+)?,?\s+or\s+(?:(?:an?|just|the|more|for|soft|some) ){{0,3}}(?:{_USE_WORD}\b|for (?:you|u|yourself)\b)"
    r"|^\W*(?:lunch\w*|part(?:y|ies)|trip|gift|present|school|camping)(?:\W+[a-z]+)?\W*$"  # "lunchbox run?"
)
# Where the options a question lists part: "spaghetti, penne, rotini?", "puppy, adult or senior?".
_OPTION_BREAK = re.compile(r"\s*(?:[,/;:?\u2014\u2013]|\s-\s|\bor\b)\s*")
_OPTION_WORDS = 4


def _a_value_asked(low: str, sentence: tuple[int, int], start: int, end: int, refs) -> bool:
    """Whether the bare word or label ``low[start:end]`` is one option of several a question
    lists ("Any shape you like: spaghetti, penne, rotini, fettuccine?", "Cheddar, mozzarella,
    swiss or parmesan?"): a value of what is asked, no product, when it is the only option that
    names one ("the oats n honey or the blueberry oat?" names two; "brio (large) or fjord?")."""
    s, e = sentence
    if "?" not in low[s:e]:
        return False
    asked = re.sub(r"\([^)]*\)", lambda m: " " * len(m.group(0)), low[s:e])  # "brio (large)": one option
    parts = [(s + a, s + b) for a, b in spans_between(_OPTION_BREAK, asked) if asked[a:b].strip()]
    at = next((k for k, (a, b) in enumerate(parts) if a <= start < b), None)
    if at is None or not re.fullmatch(r"[\w' &-]+", low[start:end]) or re.match(r"(?:the|a|an|this|that)\b", low[parts[at][0] :]):
        return False

    def option(k: int) -> bool:  # a short part with no verb, next to the one named
        a, b = parts[k]
        return len(low[a:b].split()) <= _OPTION_WORDS and not _FINITE_VERB.search(low[a:b]) and not re.search(r"\b(?:you|u|i|we)\b", low[a:b])

    if not option(at):
        return False
    run = [at]
    for step in (-1, 1):
        k = at + step
        while 0 <= k < len(parts) and option(k):
            run.append(k)
            k += step
    if len(run) < 3 and not re.search(r"\bor\b", low[parts[min(run)][0] : parts[max(run)][1]]):
        return False
    named = {k for k in run for r in refs if parts[k][0] <= r[1] < parts[k][1]}
    return len(run) >= 2 and len(named) == 1


def tags_in(tags, toks, s: int, e: int) -> list:
    return [t for t in tags if not t.in_name and s <= toks[t.start].start < e]


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


def categories_offered(toks, tags, spans: list[tuple[int, int]], lex: SceneLexicon) -> set[str]:
    """The store's product kinds the words in ``spans`` (character offsets of ``toks``' text)
    set out as options ("dish soap or laundry soap", "which chair? office, gaming, dining"):
    every kind whose words all occur, also apart ("dining / coffee / side ... table"), and none
    whose words are part of a longer kind found ("desk lamp" is no "desk") or inside a label of
    several words ("milk chocolate"); none without an option mark (or, a slash, a comma, a
    question of its own: "cereal? oatmeal?"). An option naming a kind by its head noun alone
    ("food or treats?") counts as "~" + the noun, when every option names a kind."""
    inside = [i for i, t in enumerate(toks) if any(s <= t.start < e for s, e in spans)]
    if not any(toks[i].low in ("or", "/", ",", "vs") for i in inside) and len(spans) < 2:
        return set()
    # "milk chocolate" is one flavour, not milk and chocolate; "the dining room" is a room
    labelled = {i for t in tags if not t.in_name and t.end - t.start >= 2 for i in range(t.start, t.end)}
    rooms = {i for i in inside if i + 1 < len(toks) and toks[i + 1].low == "room"}
    lemmas = {w for i in inside if i not in labelled | rooms for w in (toks[i].lemma, toks[i].low)}
    found = {key: cat for key, cat in lex.categories.items() if all(w in lemmas for w in key)}
    kinds = {cat for key, cat in found.items() if not any(set(key) < set(other) for other in found)}
    # an option naming a kind by its head noun alone, a noun that is no label ("food or treats?",
    # "a lamp, a rug or a chair?"; "chicken or fish?" offers flavours)
    # (only when every option names a kind: "meat, veggie or plain cheese?" offers toppings)
    in_found = {w for key in found for w in key}
    options: list[list[str]] = [[]]
    for i in inside:
        if toks[i].text in (":", "\u2014", "\u2013", "=") or (toks[i].text == "?" and i + 1 < len(toks) and i + 1 in inside):
            options = [[]]  # the options follow what they are for: "for that corner: a lamp, ..."
        elif toks[i].low in ("or", "/", ",", "?", "vs", "+"):
            options.append([])
        elif i not in labelled | rooms and toks[i].text[:1].isalpha() and toks[i].low not in _OPTION_FILLERS:
            options[-1].append(toks[i].lemma)
    options = [o for o in options if o]
    heads = [[w for w in o if w in lex.category_heads and w not in lex.label_words] for o in options]
    if len(options) >= 2 and all(len(o) <= 3 and (h or set(o) & in_found) for o, h in zip(options, heads, strict=True)):
        kinds |= {f"~{h[-1]}" for h in heads if h and h[-1] not in in_found}
    return kinds


_OPTION_FILLERS = frozenset({"a", "an", "the", "some", "like", "um", "uh", "just", "more", "maybe", "new", "too", "lol"})


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


def _slot_words(sent: str) -> bool:
    return any(pat.search(sent) for name, pat in P.SLOTS if name in ("budget", "avoid", "use", "size"))


# A motion verb in a clause about when something is seen ("back left as you walk in", "on
# your right when you enter") says where a thing is, not where to go.
_WHEN_YOU = re.compile(r"\b(?:when|as|once|while|after|before)\s+(?:you|u)(?:'?re| are)?\s+(?:\w+\s+)?$")


def motion_verbs(toks, low: str, s: int = 0, e: int | None = None, base: int = 0) -> list:
    """The tokens from offset ``s`` to ``e`` that tell the shopper to move (``P.MOTION``),
    leaving out verbs of a "when you walk in" clause; ``low`` is the lower-cased text from
    offset ``base`` on."""
    e = base + len(low) if e is None else e
    return [t for k, t in enumerate(toks) if s <= t.start < e and t.verb in P.MOTION
            and not _WHEN_YOU.search(low, max(0, t.start - base - 24), t.start - base)
            # a thing that moves is no instruction: "it goes straight into the bowl", "the covers
            # come off"; nor is "pass on" (turning down): "let's pass on the 18-pack"
            and not _THING_MOVES.search(low, max(0, t.start - base - 12), t.start - base)
            and not (t.verb == "pass" and k + 1 < len(toks) and toks[k + 1].low == "on")
            # a switch, not a turn: "motion sensor, turns on when u walk by"
            and not (t.verb == "turn" and k + 1 < len(toks) and toks[k + 1].low in ("on", "off")
                     and not (k + 2 < len(toks) and toks[k + 2].low in ("the", "your", "ur", "left", "right")))
            # "you look for something for the living room?" searches; it moves nowhere
            and not (t.verb == "look" and k + 1 < len(toks) and toks[k + 1].low == "for")
            # "right at your back" is where a place is: no step back
            and not (t.verb == "back" and k and toks[k - 1].low in ("your", "ur", "my", "its", "at"))]


_THING_MOVES = re.compile(r"\b(?:it|they|that|this|which|covers?|cushions?|doors?|chairs?|drawers?)\s+$")


# Where a thing is, not which way to move: "it'll be on your left", "(on ur L)", "on right
# side", "front left as you walk in", "the left side of the shop" (kept after a turn or a
# walk: "turn to your right", "go on the left side").
_PLACE_SIDE = re.compile(
    r"\b(?:on|at|in|by)\s+(?:your|ur|the|my)?\s*(?:left|right|l|r)\b(?:[- ]hand)?(?:\s+side)?"
    r"|\b(?:front|back|far|rear)\s+(?:left|right|l|r)\b|\b(?:left|right)(?:[- ]hand)?\s+(?:side|wall|corner) of\b"
    r"|\bthe (?:whole |entire )?(?:left|right)(?:[- ]hand)? side\b"
    r"|\b(?:counting|numbered|second|third|fourth|fifth) from the (?:left|right)\b"  # "the fourth freezer counting from the left"
    r"|\bfrom (?:the\s+)?(?:left|right|l|r)\b(?:[- ]hand)?(?:\s+(?:end|side))?"  # "6th from the left-hand end", "6th from L"
)
# "right" as a word of talk, not a side: "ah right um", "right so", "..., right?"
_TALK_RIGHT = re.compile(
    r"(?:^|[.!?,;]\s*|\b(?:ah|oh|yeah|yep|ok|okay|alright|all)\s+)right\b(?=\s*(?:$|[?,.!]|(?:um|uh|so|then|yeah|ok|okay)\b))"
    r"|,?\s*\bright\s*\?"
)
# ("at the back on the left" says where: "back" after "the" is a place, not a motion)
_TURN_BEFORE = re.compile(rf"\b(?<!the )(?:{'|'.join(sorted(P.MOTION))}|veer|bear|stay)\w*\s*(?:to\s+)?(?:the\s+|your\s+)?$")
# "turn L", "then R", "hang a left": a clipped side after a motion word.
_SIDE_SHORT = re.compile(r"\b(?:turn|then|hang(?: an?)?|go(?:ing)?|head(?:ing)?|take an?|hard|bear|veer)\s+(?:a\s+)?(l|r)\b(?!\s*\w*')")


def _direction(sent: str) -> str | None:
    """Which way the shopper's motion words send it (never where a thing is: ``_PLACE_SIDE``)."""
    moving = _PLACE_SIDE.sub(
        lambda m: m.group(0) if _TURN_BEFORE.search(sent, max(0, m.start() - 24), m.start()) else " " * len(m.group(0)),
        _TALK_RIGHT.sub(lambda m: " " * len(m.group(0)), sent),
    )
    short = _SIDE_SHORT.search(moving)
    side = {"l": "left", "r": "right"}[short.group(1)] if short else None
    for name, pat in P.DIRECTION:
        if pat.search(moving):
            # a side outranks going on, in full words or clipped: "keep going R till the far wall"
            return side if side is not None and name in ("back", "ahead") else name
    return side


def _navigation(sent: str, toks, s: int, e: int, places: list[PlaceMention], low: str) -> NavInstruction | None:
    here = [p for p in places if s <= p.char_start < e]
    # the relation said first ("head toward the freezers along the back wall" heads toward them)
    cues = [(m.start(), k) for k, (name, pat) in enumerate(P.RELATION) if (m := pat.search(sent))]
    relation_here = P.RELATION[min(cues)[1]][0] if cues else None
    earlier = None
    # "head over there", "walk fwd + go in": the place named in the words before
    if not here and (re.search(r"\b(?:there|over there|to it|to them)\b", sent) or relation_here == "into"):
        earlier = next((p for p in reversed(places) if p.char_start < s), None)
    verbs = motion_verbs(toks, low, s, e)
    direction = _direction(sent)
    # A clipped note's arrow is a motion verb: "atelier prime -> right, ~105 degrees"
    arrow = bool(re.search(r"->|\u2192", sent)) and bool(here or direction) and not P.PURCHASE.search(sent)
    if not verbs and not arrow and not (here and relation_here) and direction not in ("around", "up", "down"):
        if not (here and re.search(r"\b(?:over to|up to|way to|next stop|first stop)\b", sent)):
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
        # "to the Desks area inside of Leather and Ink": the second place says where the first is
        qualifiers = {id(x[0]) for k, x in enumerate(scored) if k and re.search(r"\b(?:in|inside(?: of)?|within)\W*(?:the\W*)?$", x[2])}
        explicit = [
            x for x in scored
            if id(x[0]) not in qualifiers
            and (x[1] in ("into", "out_of", "toward") or re.search(r"\b(?:to|into|toward|towards|for|inside|enter|reach|at)\b\W*(?:the\W*)?$", x[2]))
        ]
        relational = [x for x in scored if x[1] in ("past", "along", "behind")]
        before_arrow = [x for x in scored if arrow and re.search(r"(?:->|\u2192)", sent[x[0].char_end - s :])]
        main = explicit[-1] if explicit else (
            relational[0] if relational else (before_arrow[-1] if before_arrow else scored[0])
        )
        qualified = any(id(x[0]) in qualifiers for x in scored)  # "inside of Y" says where X is
        if qualified and relation_here == "into":
            relation_here = None
        target, relation = main[0].entity_id, main[1] or ("to" if relation_here in (None, "past", "out_of") else relation_here)
        passed = [x for x in scored if x[1] == "past" and x[0] is not main[0]]
        if passed:
            landmark = passed[0][0].entity_id
        # (an exit said elsewhere is a first step, "go out of this aisle ... to open cooler 1":
        # the place named is where the walk ends)
        if relation == "to" and relation_here in ("behind", "along", "into", "toward"):
            relation = relation_here
        # only a shop is entered or left: "chicken is inside of it" (a freezer) says where, and
        # "leave textiles -> bedroom area" walks to the next section
        if relation in ("into", "out_of") and "_store_" not in target:
            relation = "to"
    elif earlier is not None and verbs:
        target, relation = earlier.entity_id, relation_here or "to"
    else:
        relation = relation_here if relation_here in ("along", "behind", "toward", "past") else None
    # (said in a sentence of its own, how far still tells the walk's length: "Please go behind the
    # Shelf 12, the plates are on that side. Is close."; not before it, where a place is told)
    distance = next((name for name, pat in P.DISTANCE if pat.search(sent)), None) or next(
        (name for name, pat in P.DISTANCE if pat.search(low, e)), None)
    # "shelf 1 -> left, ~135 degrees" says which way the place is: turn, do not walk yet
    # ("granola bars -> shelf 2, hang a left": an arrow to a place is a walk there)
    to_place = any(re.search(r"(?:->|\u2192)\s*(?:the\s+)?$", sent[: p.char_start - s]) for p in here)
    pointing = arrow and not verbs and direction in ("left", "right", "around") and not to_place
    # (a turn, then into a shop or past a landmark, still walks: "turn L -> into play-cation")
    # ("turn L -> shelf 10": an arrow to the place after the turn walks there)
    # "Turn around. Shelf 6 is behind you.": the place is at the shopper's back, reached by turning
    behind_you = not verbs and direction == "around" and bool(re.search(r"\bbehind (?:you|u)\b|\bat (?:your|ur) back\b", sent))
    turning_only = ((bool(verbs) and all(t.verb in _TURNS for t in verbs)) or pointing or behind_you) and relation not in (
        "into", "out_of", "past", "along") and not to_place
    translational = any(t.verb in _TRANSLATE for t in verbs) or relation in ("along", "past") or (
        target is not None and not turning_only
    )
    if distance is None and translational:
        distance = "medium"  # a walk of unstated length
    elif distance == "short" and relation == "past" and re.search(r"\bnext (?:shelf|aisle|freezer|cooler|stand|door)\b", sent):
        distance = "medium"  # past the landmark and on to the next one: "keep going past shelf 10, next shelf over"
    if pointing:
        distance = None
    # a turn in place names what the shopper will then face: no walk to it
    if turning_only and relation == "to" and distance is None:
        relation = None
    if verbs and all(t.verb in _TURNS for t in verbs) and not target:
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
    if earlier is not None and target == earlier.entity_id:  # "pet treats at front of shelf 12. go there."
        sent = low[max(0, earlier.char_start - 24) : earlier.char_start] + " " + sent
    if relation == "behind" or re.search(r"\b(?:back|rear|far) (?:side|face|of)\b|\bother side\b", sent):
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


_CONTAINERS = frozenset("can bag box jar tub pouch carton bottle canister wrapper".split())


def _specificity(nav: NavInstruction) -> tuple[bool, bool, bool]:
    """How much an instruction pins down: a place to go, a turn or side, a landmark."""
    return (nav.target is not None, nav.angle is not None or nav.direction not in (None, "ahead"),
            nav.landmark is not None)


def _location(low: str, places) -> NavInstruction | None:
    """"The cereal is at the front of Shelf 1": the place named, and the side when given."""
    if not places:
        return None
    p = places[0]
    before = low[max(0, p.char_start - 30) : p.char_start]
    approach = "back" if re.search(r"\b(?:back|rear|behind|other side)\b", before) else (
        "front" if re.search(r"\bfront\b", before) else None
    )
    return NavInstruction(target=p.entity_id, relation="to", approach=approach)


def _explanation(pid, low, toks, mentions, tags, money, lex, rivals=()) -> Explanation | None:
    product = lex.index.products.get(pid) if lex is not None else None
    if product is None:
        return None
    # Labels inside the words that name the product identify it ("the vanilla yogurt") and
    # are no reason; said again later, or predicated ("they're organic blueberries"), they are.
    labelled = {k for t in tags if t.tags & set(product.tags) for k in range(t.start, t.end)}
    # (not its labels alone after a preposition, in lower case: "why: cleans in cold water, 64
    # loads" says what it does, though those words would name it)
    naming = [m for m in mentions if pid in m.candidates and not (
        m.phrase == m.phrase.lower() and _PREPOSITION_BEFORE.search(low, max(0, m.char_start - 6), m.char_start)
        and all(k in labelled or toks[k].lemma in STOPWORDS or not toks[k].low[:1].isalpha() for k in range(m.start, m.end)))]
    # (the name said again to pick it, "I'd go with the Loyal Paws Senior Turkey", still names it)
    again = [m for m in naming[1:] if m.kind == "product" and m.candidates == (pid,) and m.end - m.start >= 3]
    # and the names of the products it is weighed against ("the chicken and rice adult")
    # (a label of its own that is also a word of another's name, "has a reading light", is said of it)
    own_labels = {(t.start, t.end) for t in tags if t.tags & set(product.tags)}
    # (words that would name it as well, "...: plain fillets", are about it)
    own_words = lex.all_words[pid] | lex.brand_words[pid] | STOPWORDS
    others = [m for m in mentions if m.kind == "product" and pid not in m.candidates and (m.start, m.end) not in own_labels
              and not set(lemmas_of(m.phrase)) <= own_words]
    spans = [(m.start, m.end) for m in naming[:1] + again + others if not _PREDICATE.search(low[max(0, m.char_start - 24) : m.char_start])]
    cites: list[str] = []
    # a label every rival has too is no reason for one ("two no-pulp options"), unless it is
    # said of them all as a fact ("both dimmable", "same black mesh", "also pet friendly")
    shared = set.intersection(*(set(lex.index.products[r].tags) for r in rivals)) if rivals else set()
    for t in tags:
        if any(a <= t.start < b for a, b in spans):
            continue
        at = toks[t.start].start
        if _THE_X_ONE.search(low[max(0, at - 10) : at]) and _ONE_AFTER.match(low, toks[t.end - 1].end):
            continue  # "the salmon one", "this avocado one": words that pick it out
        if _OWNER.search(low, max(0, at - 8), at):
            continue  # "ur cat loves tuna": the shopper's cat, no label of the product
        if _FOIL_BEFORE.search(low, max(0, at - 16), at) and _PICK_ENDS.match(low, toks[t.end - 1].end):
            continue  # "30c more than the original": the other side, by its name
        if rivals and _PICKED_BEFORE.search(low, max(0, at - 20), at) and _PICK_ENDS.match(low, toks[t.end - 1].end):
            continue  # "-> lentil, it's gf", "I'd pick the lentil.": the label names the side picked
        if _NEGATED_LABEL.search(low, max(0, at - 12), at):
            continue  # "no walnut", "skip white", "with no eggs": a label denied or turned down is no reason
        kind_said = set(lemmas_of(t.phrase)) <= lex.kind_words[pid]  # "organic milk" names the kind, no allergen
        of_all = bool(_SAID_OF_ALL.search(low[max(0, at - 40) : at]) or _SAID_OF_ALL_AFTER.match(low, toks[t.end - 1].end))
        for tag in sorted((t.tags & set(product.tags)) - (set() if of_all else shared)):
            if kind_said and tag.startswith("allergen:"):
                continue
            if tag.partition(":")[0] in _WHAT_IT_IS:
                continue  # what the product is ("gala", "for cats") picks it out
            value = tuple(t.phrase.split())
            if tag.startswith("packaging:") and set(value) <= _CONTAINERS:
                continue  # "$2.39 a can" says how it is sold, not why it suits
            cites.append(tag)
    # its size in any words and units ("twenty nine ounce can", "96 loads", "12 bars"), said
    # outside the words that name it ("Cereal, 12 oz") and not as how it is sold ("5.99 for a
    # 4-pack"); a size both sides share is no reason for one
    said = _SOLD_AS.sub(lambda m: " " * len(m.group(0)), low)
    for m in naming:  # (a kind named as the unit counted, "24 pops", still counts)
        if m.kind != "category":
            # (a name's size said in lower case is said as a fact: "berry patch strawberries, 16
            # oz"; written with the catalog's capitals, "Shredded Sharp Cheddar, 8 oz", it names)
            lower = "," in m.phrase and m.phrase == m.phrase.lower()
            end = m.char_start + m.phrase.find(",") if lower else m.char_end
            said = said[: m.char_start] + " " * (end - m.char_start) + said[end:]
    sizes = quantities(said, frozenset(lemmas_of(product.category)[-1:]))  # its kind counts items too: "80 plates"
    # (said of both, a shared size is a reason like a shared label: "they're both thirteen ounces")
    sizes_of_all = bool(re.search(r"\b(?:both|same)\b", said))
    cites += [tag for tag in product.tags if tag.startswith("size:") and (tag not in shared or sizes_of_all)
              and quantities(tag[5:]) & sizes]
    # Sales talk ("half price today", "a best seller") states no fact of the product's price.
    facts = P.CLAIMS.sub(lambda m: " " * len(m.group(0)), low)
    # a price conceded is no reason: "true, it's not the cheapest, but ..."
    facts = _NOT_CHEAP.sub(lambda m: " " * len(m.group(0)), facts)
    # its own price, exactly or as a rough figure ("about nine bucks", "~260": within 10%)
    def states_price(value: float, approx: bool = False) -> bool:
        return abs(value - product.price) <= max(0.011, (0.1 if approx else 0.005) * product.price)

    if any(states_price(a.value, a.approx) for a in money) or re.search(
        r"\b(?:priced|price|costs?|cheap\w*|affordable|inexpensive|economical|only \$|just \$)\b"
        r"|(?:\d\s*c|\d|\b(?:cents?|bucks?|dollars?|quid|c|ten|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred))"
        r"\s*(?:less|more|under)\b", facts  # "50 bucks less", "90c less", "six hundred forty less", "20 cents under the gala"
    ):
        cites.append("price")
    # a bound that is not the product's own price is the shopper's: "under ur $5", "< $30",
    # "less than your 30 dollars", and bare: "under your 6", "so under your thirty"
    bound = any(value is not None and not states_price(value) for value in _bounds(low, money))
    if bound or _OVER_LIMIT.search(low) or re.search(r"\b(?:budget|your limit|afford|under (?:the|your) \$|(?:the|that) \$[\d.,]+ you)\b", low):
        cites.append("budget")
    cites = _unique(cites)
    return Explanation(pid, tuple(cites)) if cites else None  # a reason names a fact of the product


# Labels that say what a product is, not why it suits: the variety, the animal it is for, the
# cut, the plant, the fish, the shape, the eggs, the cheese (in the corpora these are almost never
# given as reasons)
_WHAT_IT_IS = frozenset({"variety", "pet", "cut", "plant", "fish", "shape", "egg", "cheese"})
# The shopper's limit said without a bound word: another product "way over", "over ur 15" or
# "14.49 so nope" (a tick or a cross reaches here as a comma: tokens.normalize), or this one
# "fits ur 6", "just under ur 120" (a cent under is still under the shopper's figure), "within
# what you said you'd spend" (a size is no limit: "over 5 lb")
_OVER_LIMIT = re.compile(
    r"\b(?:way|a bit|a little|just|slightly|well) over\b"
    r"|\bover (?:ur |your |the |my )?\$?\s?\d[\d.,]*(?![\d.,])(?!\s*(?:oz|lb|lbs|kg|g|ml|fl|ct|count|rolls?|packs?|pieces?|loads?"
    r"|inch|in|cm|%|percent|years?|people|gal|quarts?|qt)\b)"
    r"|\d\s*(?:so )?(?:nope|nah)\b|\b(?:fits|under) (?:ur|your) \$?\s?\d|\b(?:you|u) said (?:you'?d|u'?d) spend\b"
    # the shopper's figure, in digits or words: "above your $1,500", "too much for your 250", "over your twelve"
    r"|" + _OVER_YOUR_FIGURE +
    # "parmesan wedge = 10.79 \u2717 over." (a cross reads as a comma)
    r"|" + _CROSSED_OVER
)
_NEGATED_LABEL = re.compile(r"\b(?:no|not|skip|without|isn'?t|aren'?t|zero)\s+(?:the\s+|any\s+)?$")
# Words that say a label of every side (before it in its sentence, or "too" right after).
_SAID_OF_ALL = re.compile(r"\b(?:both|same|also|each|all three|either)\b(?:(?!\b(?:but|only|while|whereas)\b)[^.!?\n])*$")
# Words that set one product against another: a difference or a likeness.
_SET_AGAINST = re.compile(r"\b(?:more|less|cheaper|pricier|same|also|too|vs\.?|versus|than|swap|switch|instead|difference)\b")
_NOT_CHEAP = re.compile(r"\b(?:not|isn'?t|aren'?t|never)\s+(?:the\s+|that\s+|so\s+|exactly\s+|very\s+)?(?:cheap\w*|affordable|inexpensive)")
_PICKED_BEFORE = re.compile(r"(?:\b(?:pick|choose|go with|go for|take|get|grab|say)|->|\u2192)\s+(?:the\s+)?$")
_PICK_ENDS = re.compile(r"\s*(?:$|[,.;:!?\u2014-]|one\b|ones\b)")
_SEEN = re.compile(r"\b(?:see|spot|find|notice|view)\s+(?:all\s+)?(?:of\s+)?(?:the\s+)?$")
_PREPOSITION_BEFORE = re.compile(r"\b(?:in|for|with|on|at|by)\s+$")
_FOIL_BEFORE = re.compile(r"\b(?:than|vs\.?|over) (?:the |this |that )?$")
_OWNER = re.compile(r"\b(?:your|ur|my|his|her|their)\s+$")  # (not "our": the store's, "one of our large consoles")
_THE_X_ONE = re.compile(r"(?<!\bis )(?<!\bare )(?<!'s )(?<!'re )\b(?:the|this|that)\s+$")  # not "it's the X one": a reason
_ONE_AFTER = re.compile(r"\s*(?:one|ones)\b")
_SAID_OF_ALL_AFTER = re.compile(r"\s*(?:too|as well)\b")
_SOLD_AS = re.compile(r"\bfor an? [\w.-]+(?: \w+)?")
# A bound said before a figure: "under", "below", "less than", "within", "<" (+ "your").
_BOUND = re.compile(r"(?:\b(?:under|below|less than|within|inside|beneath|lower than)|<)\s*(?:(?:your|ur|the|that)\s+)?")
_BARE_FIGURE = re.compile(
    r"\$?\s*(\d[\d,]*(?:\.\d+)?|[a-z]+)\b"
    r"(?!\s*(?:%|oz|lbs?|pounds?|minutes?|mins?|hours?|days?|feet|ft|inch|inches|cm|kg|g|ml|count|ct|people|servings?)\b)"
)


def _bounds(low: str, money) -> list[float | None]:
    """The figures a bound word governs: an amount ``money`` read right after it, else a bare
    figure in digits or words (None when what follows is no figure)."""
    out = []
    for m in _BOUND.finditer(low):
        read = next((a for a in money if m.end() <= a.start <= m.end() + 1), None)
        bare = _BARE_FIGURE.match(low, m.end())
        out.append(read.value if read else figure_value(bare.group(1)) if bare else None)
    return out


def _budget(low: str, money) -> Budget | None:
    """The shopper's limit among the amounts ``money`` read from the text (positions in ``low``)."""
    for m in money:
        head = low[max(0, m.start - 40) : m.start]
        tail = low[m.end : m.end + 12]
        amount = m.value
        for bound, pat in P.BUDGET_BOUND:
            if pat.search(head) or (bound == "max" and re.search(r"\b(?:or less|tops|max|at most)\b", tail)) or (bound == "about" and re.search(r"\bish\b|or so", tail)):
                if re.search(r"\b(?:it'?s|is|costs?|priced|for)\s*$", head) and not re.search(r"budget|spend|afford|limit", head):
                    continue
                return Budget(amount, bound)
    # a bare figure after a bound word: "a sofa, maximum 1100", "ground coffee pls, under 12"
    # (an age is no limit: "for kids under 6")
    for bare in _BARE_LIMIT.finditer(low):
        if not _AGED.search(low, max(0, bare.start() - 16), bare.start()):
            return Budget(float(bare.group(1).replace(",", "")), "max")
    return None


_AGED = re.compile(r"\b(?:kids?|kiddos?|child(?:ren)?|toddlers?|bab(?:y|ies)|ages?|boys?|girls?|teens?|puppies|kittens?|dogs?|cats?)\s+$")
_BARE_LIMIT = re.compile(
    r"\b(?:under|below|max(?:imum)?|up to|no more than|not more than|less than|at most|(?:my )?budget(?: is| of)?)\s+"
    r"(\d[\d,]*(?:\.\d+)?)\b(?!\s*(?:%|oz|ounces?|lbs?|pounds?|kg|g|ml|l|litres?|liters?|gal\w*|inch\w*|in|cm|ft|feet|"
    r"minutes?|mins?|hours?|days?|weeks?|months?|years?|yrs?|people|ppl|guests|kids|servings?|calories|cal|loads|count|ct|pack|pieces?|items?|watts?|w)\b)"
)


def _rejects(low: str) -> bool:
    """Whether the words turn an offer down (a product, a proposal): negative words about the
    shopper's own limits or wishes turn nothing down, and a doubt asked about is a hesitation."""
    if P.HESITATION.search(low) and low.rstrip().endswith("?"):
        return False
    return bool(P.REJECT.search(P.NOT_A_REJECTION.sub(lambda m: " " * len(m.group(0)), low)))


def _act(u: Utterance, focus: str | None, low: str) -> str:
    """The primary dialogue action the content amounts to (one of ``ACTS``)."""
    new_proposal = [p for p in u.proposed if p != focus]
    opens_with_ack = bool(_ACK_OPENING.match(low))
    cues = [m.group(0) for m in P.HANDLE_REJECTION.finditer(low)]
    # "I understand, yoga mat. How much ...?": an acknowledgement before a question is no
    # handling of a rejection unless something was turned down
    ack_only = all(_WEAK_ACK.fullmatch(c) for c in cues) and not u.products and not _TURNED_DOWN.search(low) and (
        any(q.slots != ("other",) for q in u.questions) or u.navigation is not None
    )
    handles = bool(cues) and not ack_only and not u.purchase_prompt and not u.greeting
    # "the X is over your $15, so skip that - the Y is $9.19": with nothing under discussion, an
    # option the assistant sets aside itself on the way to another is part of a recommendation
    # (a turn-down the shopper's words carried is read by ``in_reply``)
    if handles and focus is None and new_proposal and u.set_aside and not opens_with_ack:
        handles = False
    # "sorry, did you say the A or the B?": which product the shopper meant is asked
    readings = bool(u.questions) and _READINGS.search(low) is not None and not u.proposed
    if readings and u.mentioned:
        return "ClarifyNeed"
    if handles and (opens_with_ack or u.navigation is None):
        return "HandleRejection"
    # kinds named as the options of a question ("sweet ones like honey or chocolate?") are asked about
    asked_in = [(i, i + len(q.sentence)) for q in u.questions if (i := u.text.find(q.sentence)) >= 0]
    several = len({
        m.phrase.lower() for m in u.mentions if m.kind in ("product", "unknown")
        or (m.kind == "category" and not any(a <= m.char_start < b for a, b in asked_in))
    }) >= 2
    contrast = bool(P.COMPARE.search(low) or P.COMPARATIVE.search(low) or ";" in low)
    if (len(set(u.compared)) >= 2 or (several and contrast and not u.purchase_prompt and not readings)) and not (
        len(new_proposal) >= 2 and set(u.compared) <= set(new_proposal)
    ):
        return "Compare"
    if u.purchase_prompt and not (new_proposal and _EXPLICIT_RECOMMEND.search(low)):
        return "ConfirmPurchase"  # "grab the X and check out": the purchase is what is asked
    if new_proposal:
        return "Recommend"
    if u.navigation is not None:
        return "Navigate"
    if u.greeting and not u.proposed:
        return "Greet"
    if u.proposed and not u.explanation:
        return "Recommend"
    if u.questions:
        # asking where the shopper stands clarifies the situation, it asks no preference
        where = all("location" in q.slots for q in u.questions) and _WHERE_NOW.search(low) is not None
        clarifies = any(q.clarifies for q in u.questions) or P.CLARIFY.search(low) is not None or where
        return "ClarifyNeed" if clarifies else "AskPreference"
    answers = ANSWER_OPENING.match(low)
    about_focus = focus is not None and focus in u.mentioned
    # reasons that end against the product ("so it won't work with a soy allergy") answer
    # whether it suits; an explanation argues for it
    against = _AGAINST.search(low) is not None
    if not answers and not against and (u.explanation is not None or about_focus) and (P.REASON.search(low) or about_focus):
        return "Explain"
    return "AnswerQuestion"


# The pick among options listed: a superlative ("cheapest", "most cheap") or a choice said.
_PICKED_AMONG = re.compile(
    r"\b(?:most|least|best|cheapest|priciest|biggest|largest|smallest|lightest|softest|strongest|thickest|"
    r"healthiest|sweetest)\b|\bmy pick\b|\bi choose\b|->|\u2192"
)
# One of two products set side by side, by its place, as the subject that wins or gives more.
_ORDINAL_PICK = re.compile(
    r"\bthe (first|former|second|latter)(?: one)?(?:'s| is| gives| has| wins| offers| fits| suits| comes)"
)
# A verdict against the product the reasons are about.
_AGAINST = re.compile(
    r"\b(?:won'?t (?:work|suit|do)|wouldn'?t (?:work|suit)|(?:is|it'?s|they'?re|are) not (?:safe|a (?:match|fit|good fit)|for you|"
    r"right for you)|not safe for you|not a match|i'?d (?:leave|skip) (?:it|them|that one))\b"
)
# Said right after a product's name: the side chosen ("the B better", "so the spaghetti for you").
_CHOSEN = re.compile(r"\W*(?:is |are |'s )?(?:(?:much |way |a lot )?better|all the way|for you|wins?|gets? my vote)\b")
# Praise or a sales pitch of the product named ("a good shout", "great if you like 'em sweet").
_SELLING = re.compile(
    r"\b(?:great|nice|good|lovely|perfect|ideal|solid|excellent|brilliant|handy|popular|favourite|favorite|"
    r"made for|fyi|btw|by the way|also|one more idea|rec|pick|winner|star)\b"
)
_PITCH = re.compile(
    r"\b(?:good shout|can'?t go wrong|just the thing|found (?:a|the|you)|a (?:good|great|nice) (?:match|fit|one|option|pick)|"
    r"sweet one|rec|fyi|btw|by the way|easy win|(?:is|'s) the (?:move|one|way to go)|best (?:is|bet|pick|option)|"
    r"(?:nice|good|great) one to (?:check out|try|grab)|worth (?:a look|a try|checking out|trying)|p\.?s\.?)(?!\w)"
)
_WEIGHED_AGAINST = re.compile(
    r"\b(?:costs? more|pricier|more expensive|dearer|miss(?:es)? (?:some|a few|what|things)|lacks?|"
    r"does(?:n'?t| not) have|isn'?t (?:as|labell?ed))\b"
)
_ENTRY = re.compile(r"\W{0,3}?\s*(?:\u2014|\u2013|-|:)\s")
# A verb that makes a sentence of a note: facts stated about the product, not a bare listing.
_FINITE_VERB = re.compile(r"\b(?:is|are|was|were|has|have|had|costs?|comes?|does|do|makes?|runs?|sells?|fits?|goes)\b|'[sr]e?\b")
# An answer opening: "yes, ...", "no, ...", "it's $4.49" answers about what was asked.
_ANSWERING = re.compile(r"^\W*(?:yes|yeah|yep|no|nope|sure|correct|right|exactly|unfortunately|sorry|great question|good question)\b")
# An answer about what there is: "yes", "sorry", "we only have ...", "there are ...".
ANSWER_OPENING = re.compile(r"^\W*(?:yes|yeah|yep|no|nope|sorry|unfortunately|we (?:only )?(?:have|carry|stock|do)|there (?:is|are)|you asked)\b")
# A product after a spatial preposition marks a place: "right next to the corn flakes".
# What a product is weighed against: "cheaper than the battered fillets"
FOIL = re.compile(r"\bthan\s+(?:the\s+|a\s+|an\s+|that\s+|those\s+|your\s+|ur\s+)?$")
_BOTH_SIDES = re.compile(r"\b(?:both|either|vs\.?|versus|whereas|compared (?:to|with))\b")
_LANDMARK = re.compile(
    r"\b(?:next to|beside|besides|behind|near|nearby|by|past|left of|right of|above|below|beneath|under|"
    r"on top of|across from|opposite|between)\s+(?:the\s+|those\s+|these\s+)?$"
)
_TRY_MOTION = re.compile(r"\btry(?:ing)? (?:to )?(?:turn|go|walk|head|move|step|look|keep|follow|come|get)\w*")
# Praise of the shopper's own choice opening a sentence: "nice pick, yogurt then!" proposes nothing.
_ACK_CHOICE = re.compile(
    r"(?:^|(?<=[.!?]\s))\W*(?:what an? |such an? )?(?:nice|great|good|excellent|smart|solid|lovely|perfect|wise) "
    r"(?:pick|choice|call)\b(?=\s*[,!.;-])"
)
# A choice said right before a product's name (``P.CHOICE_WORDS``): "-> honeycrisp", "go coconut"
_CHOICE_BEFORE = re.compile(
    "(?:" + "|".join(re.escape(w) if not w.isalpha() else rf"\b{w}" for w in P.CHOICE_WORDS) + r")\s*(?:the\s+)?$"
)
# A choice of "that one"/"this" ("-> that one", "so I'd get that one", "that's my pick"),
# not a statement about it ("that one is popular")
_CHOOSE_DEMONSTRATIVE = re.compile(
    r"(?:->|\u2192|\b(?:i'?d|i would|i|we'?d|so)\s+(?:\w+\s+)?(?:take|get|choose|pick|grab|go (?:with|for)|do)|"
    r"\bgo (?:with|for))\s+(?:this|that|these|those)(?: one| ones)?\b(?!\s+(?:\w+\s+)?(?:is|are|has|costs?))"
    r"|\b(?:that'?s|this is|that is)\s+(?:my|the)\s+(?:pick|choice|one)\b"
)
# Where the shopper stands, asked with options: "u at shelf 3 or shelf 4 rn?", "what's in front of u"
_STANDING = re.compile(
    r"\b(?:rn|right now|atm|in front of (?:you|u))\b|\bstanding (?:next to|by|at|in|near)\b|\b(?:are|r) (?:you|u) (?:at|near|by|in|next to)\b"
    # non-native word order: "you are near to which freezer now?", "you are now in which shop?",
    # "you are now in the corridor or inside some shop?"; "which number has the shelf?"
    r"|\b(?:you|u) (?:are|r)(?: now)? (?:at|near|by|in|next)(?: to)? which\b"
    r"|\b(?:you|u) (?:are|r)(?: now)? (?:in|inside|at|near|by) (?:the|some|a)\b[^?]*\bor\b|\bwhich number\b"
    # clipped and everyday: "which cooler u at?", "in light logic yet or still in the corridor?",
    # "already in a shop?", "the nearest sign or shelf #", "the number of the shelf near you"
    r"|\b(?:u|you) at\b|\bin \w+(?: \w+)? yet\b|\bstill in the\b|\balready in\b|\bnear (?:you|u)\W*$|\bnearest\b"
    r"|\bshelf ?#|\b(?:number|name) of (?:the )?(?:shelf|freezer|cooler|aisle|shop|store|stand)\b"
)
# Where the shopper is now (not where it would like to go): "where r u atm?", "what can you see?"
_WHERE_NOW = re.compile(
    _STANDING.pattern + r"|\bwhere (?:are|r|is) (?:you|u)\b|\bwhere you(?: are|'re)\b|\bstanding\b|"
    r"\bwhat (?:are )?(?:you|u) (?:are )?seeing\b|"
    r"\bwhat (?:can|do) (?:you|u) see\b|\b(?:are|r) (?:you|u) standing\b"
)
# A label predicated of a product: "(the X) isn't", "has", "doesn't have the", "is missing".
_HAS_LABEL = re.compile(
    r"(?<!\bi )(?<!\bwe )(?<!\byou )\b(?:is|are|'s|isn'?t|aren'?t|is not|are not|has|have|hasn'?t|haven'?t|"
    r"(?:does|do)(?:n'?t| not) (?:have|contain|come in)|contains?|comes? in|is missing|lacks?)"
    r"(?: (?:the|any|no|some|a|an|real|actual))?(?: \w+)?\s*$"
)
# The shopper's own need: "and I need that", "the organic I'm after", "I was hoping for".
_NEED = re.compile(
    r"\b(?:(?:i|we) (?:really )?(?:need|want|wanted|must have|have to have|was hoping for|were hoping for)|"
    r"(?:i'?m|i am|we'?re|we are) (?:after|looking for))\b"
)
_PREDICATE = re.compile(
    r"\b(?:it'?s|it is|they'?re|they are|this is|that'?s)(?:\s+(?:also|still|just|actually|honestly|quite|pretty))*"
    r"(?: an?| the| really| very| all| our| one of (?:our|the))?\s*$"  # "it's one of our large consoles"
)
_EXPLICIT_RECOMMEND = re.compile(r"\b(?:i'?d |i would |i )?(?:recommend|suggest)\w*|\bmy (?:pick|top pick|choice)\b")
_TURNED_DOWN = re.compile(
    r"\b(?:not|no|isn'?t|aren'?t|don'?t|doesn'?t|didn'?t|won'?t|never|too|instead|different|else|other|another|"
    r"cheaper|smaller|bigger|lighter|step back|keep (?:looking|browsing)|sorry)\b"
)
_WEAK_ACK = re.compile(
    r"no problem|no worries|understood|i understand|noted|makes sense|i get it|fair enough|good to know|i hear you|"
    r"(?:that'?s|that is) (?:fine|okay|ok|alright|totally fine)|thanks for telling me"
)
_ACK_OPENING = re.compile(
    r"^\W*(?:no problem|no worries|understood|fair enough|i understand|that'?s (?:fine|okay|ok|alright)|sorry|i'?m sorry|noted|"
    r"totally|makes sense|okay|ok|alright|got it|gotcha|fine|fair|i see|i get it|i get that|ah|oh|oof|fair point|you'?re right|good to know|i hear you|thanks for telling)"
)
