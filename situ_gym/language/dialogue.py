"""An assistant turn read as the reply to the shopper's last words.

``analyze`` reads one text on its own. What a turn *does* often depends on what it answers:
"parmesan wedge = 10.79" answers "how much is the parmesan?" (it names the product without
offering it), "decaf, 100%" picks a side of "the breakfast blend or the decaf?", "ok! tho
heads up it's family size" handles "I don't want the big pot pie", and "the golden acre
no-salt-added creamy ticks all three" after "I want smooth peanut butter, low salt" offers
a product. ``in_reply`` re-reads the act and the proposed / mentioned / compared products
of an analysed turn given the shopper's analysed words (``heard``) and the products the
shopper raised itself (named, asked about, picked up):

* **a choice asked** ("A or B?", "which is better ...", "oslo or brio dumbbells, want it
  heavy"; not "how do the other options compare?", which asks for new ones): a reply that
  names one of the sides is a ``Compare``; the sides are compared, and the side it favours
  is proposed: the one the words propose, else the one it opens with ("decaf, 100%"), else
  the only side of a sentence that prefers ("for evening is better the decaf one"); none
  when it only weighs ("the salmon is cheaper, 9.49, and the cod is 10.29");
* **a question about products the shopper raised** (price, place, size, "does it have"; "it"
  / "that one" stand for the product under discussion): the reply answers
  (``AnswerQuestion``, or ``Explain`` when a reason was asked) and names those products
  without offering them, unless it asks to buy one or offers a new one; "where's the X?"
  answered by where it is, with no motion, is an answer, not directions;
* **a turn-down** ("no, the brownie mix is too much", "that's expensive"): a reply that is
  not just directions or a purchase prompt handles it (``HandleRejection``);
* **a need stated** ("I need a gluten-free pasta"): a product the reply names that the
  shopper did not raise, and that the reply neither sets aside nor uses as a landmark, is
  offered (``Recommend``).

The rules only ever move a product between ``proposed``, ``mentioned`` and ``compared`` and
change the act; links to the catalog stay ``analyze``'s.

>>> from situ_gym.scene import SceneIndex
>>> from situ_gym.scene.loader import load_scene
>>> from situ_gym.language import analyze, lexicon_for
>>> lex = lexicon_for(SceneIndex(load_scene("supermarket")))
>>> heard = analyze("how much is the parmesan?", lex)
>>> said = in_reply(analyze("parmesan wedge = 10.79", lex, visible={"sm_p215"}), heard, raised={"sm_p215"})
>>> said.act, said.proposed, said.mentioned
('AnswerQuestion', (), ('sm_p215',))
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from lemminflect import getAllLemmas

from situ_gym.language import patterns as P
from situ_gym.language.acts import read_act
from situ_gym.language.analysis import (
    _ACK_OPENING,
    _FINITE_VERB,
    _NEED,
    _OPENS_QUESTION,
    _PRICED_OUT,
    _PRONOUN,
    ANSWER_OPENING,
    Explanation,
    Question,
    Utterance,
    _act,
    _clause_spans,
    _explanation,
    analyze,
    categories_offered,
    drop_sides,
    ends_asking_need,
    motion_verbs,
    reading_questions,
)
from situ_gym.language.claims import words
from situ_gym.language.lexicon import SceneLexicon, lemmas_of
from situ_gym.language.money import amounts
from situ_gym.language.tokens import FUNCTION_WORDS, STOPWORDS, sentence_spans

__all__ = ["analyze_reply", "echoed_questions", "in_reply", "read_reply"]

# A choice between options the shopper names: "A or B?", "A vs B", "which one ...".
_CHOICE = re.compile(r"\bor\b|\bvs\.?\b|\bversus\b|\bwhich\b|\bbetter\b|/")
# Words before the side a reply opens with: "decaf, ...", "oh with a dog um the elio".
_OPENING = re.compile(r"\W*(?:(?:so|oh|um|uh|ok|okay|well|honestly|definitely|the|for sure|i'?d say)\W+)*(?:the\W+)?")
# A sentence that prefers, for the one side it names: "is (more) better", "for sure", "hands down".
_PREFERS = re.compile(
    r"\b(?:better|best|more good|most good|winner|wins|for sure|hands down|definitely|100%|go (?:with|for)|i'?d (?:go|take|get|pick|say)|imo|easy pick|i think)\b"
    r"|->|\u2192|\bit is(?=\W*(?:$|[.!?]))"
)
# A pick said right after the side it picks, ending what is said of it: "ember imo",
# "strawberries it is".
_PICK_AFTER = re.compile(r"\b(?:it is|imo|tbh|easy pick|ftw|hands down|all day|for sure|for me|all the way|every time|wins)\W*$")
# ... or right before it, in a sentence weighing both: "... and the jasper's bigger so I'd say
# the fern", "for your soup I think cannellini", "-> honestly clusters".
_PICK_BEFORE = re.compile(
    r"(?:\b(?:i'?d (?:say|go(?: with| for| w/)?|pick|take|choose|get|grab|do|lean (?:to|toward|towards))|i (?:choose|prefer|pick|take)"
    r"|i think|imo|my pick(?: is)?|stick (?:with|w/)|(?:you )?keep|go (?:with|for|w/))"
    r"|->|\u2192)\W+(?:(?:the|um|uh|honestly|def|prob|probably|yeah|just|like|tbh|totally)\W+)*$"
)
# (or after a dash: "rowan's 299.99, orla's 309.99 \u2014 rowan, 10 less")
_SO_BEFORE = re.compile(r"(?:\bso\W+|[\u2014\u2013]\s*|\s-\s+)(?:(?:the|um|uh|yeah|yep|like|honestly|just)\W+)*$")
_ANSWERED_ACTS = frozenset({"Recommend", "Explain", "AnswerQuestion"})
# Acts a reply keeps whatever it answers: a greeting, directions, a purchase prompt, a turn-down handled.
_OWN_ACTS = frozenset({"Greet", "ConfirmPurchase", "Navigate", "HandleRejection"})


def _asks(heard: Utterance) -> bool:
    """Whether the shopper's words ask something (with or without a "?")."""
    return bool(heard.questions) or heard.text.rstrip().endswith("?")


def _favoured(said: Utterance, sides: list[str]) -> str | None:
    """The side of an asked choice the reply favours: one it proposes; else the one it opens
    with ("decaf, 100%", "elio, hands down"); else the only side in a sentence that prefers
    ("for evening is better the decaf one"). None when the reply weighs without picking
    ("the salmon is cheaper, 9.49, and the cod is 10.29")."""
    low = said.text.lower()
    refs = [(at, p) for at, p in said.references if p in sides]
    # the pick said last, whatever was said of the sides before: "... so I'd go elio, it's twelve
    # less", "... -> honestly clusters", "... strawberries it is", "salmon's 90c less, easy pick"
    for k in range(len(refs) - 1, -1, -1):
        a, p = refs[k]
        until = refs[k + 1][0] if k + 1 < len(refs) else len(low)
        if _PICK_BEFORE.search(low, max(0, a - 24), a) or _PICK_AFTER.search(re.split(r"[.!?\n]", low[a:until])[0]):
            return p
        # "..., so bexley unless u need white": a side said after "so" with no verb of its own
        if k == len(refs) - 1 and _SO_BEFORE.search(low, max(0, a - 12), a) and not _FINITE_VERB.search(
                re.split(r"[,;.!?\n]", low[a:until])[0]):
            return p
    picked = [p for p in said.proposed if p in sides]
    if picked:
        return picked[0]
    if not refs:
        return None
    at, first = refs[0]
    clause = re.split(r"[,;:.!?\u2014\u2013\u2192]|\s-\s|->", low[at:], maxsplit=1)[0]
    # (a reply that ends by asking which the shopper needs opens with a side, not a pick:
    # "swiss = sliced, 10.89 / cheddar = shredded, 4.29. slices or shreds?")
    if _OPENING.fullmatch(low[:at]) and not _FINITE_VERB.search(clause) and not ends_asking_need(low, said.questions):
        return first  # the pick said first, on its own: "decaf, 100%", "puppy one for sure -"
    for start, end in sentence_spans(said.text):
        inside = {p for a, p in refs if start <= a < end}
        if len(inside) == 1 and _PREFERS.search(low, start, end):
            return inside.pop()
        # "Elio is more better than Alba": the side before "better than"
        better = re.search(r"\b(?:better|best) (?:than|over|for you than)\b", low[start:end])
        if better:
            before = [p for a, p in refs if start <= a < start + better.start()]
            if before:
                return before[-1]
        # ... or in a clause ("between the greek and the coconut, coconut one is more better: ...")
        for cs, ce in _clause_spans(low, start, end):
            inside = {p for a, p in refs if cs <= a < ce}
            if len(inside) == 1 and _PREFERS.search(low, cs, ce) and not re.search(r"\bthan\b", low[cs:ce]):
                return inside.pop()
    return None


def _without_echoes(said: Utterance, heard: Utterance, focus: str | None) -> Utterance:
    """``said`` without the shopper's own words asked back before an answer ("paper towels?
    shelf 10!", "a table? sure"): a question of at most four words, every one the shopper's,
    asks nothing when more follows."""
    spoken = set(words(heard.text))
    echoes = [q for q in said.questions if 0 < len(w := words(q.sentence)) <= 4 and set(w) <= spoken]
    if not echoes or len(words(said.text)) <= sum(len(words(q.sentence)) for q in echoes):
        return said
    kept = replace(said, questions=tuple(q for q in said.questions if q not in echoes))
    return replace(kept, act=_act(kept, focus, said.text.lower()))


def _offered(said: Utterance, own: list[str], focus: str | None) -> list[str]:
    """Products the reply names that the shopper did not raise and the reply does not set
    aside: after a need or a wish is stated, naming one offers it."""
    aside = set(said.set_aside) | set(said.landmarks) | set(own) | {focus}
    return [p for p in said.mentioned if p in said.named and p not in aside]


# A price said back about the product: "39.99 for a basket?", "76.99 for a plant?"
_PRICE_SAID_BACK = re.compile(r"^\W*" + P.PRICE_FOR_THING + r"\?")
# A reply that grants the shopper's point before keeping to its own: "fair, but", "haha fair, it's
# not cheap", "Yes I understand, however"
_GRANTS = re.compile(r"\W*(?:(?:haha|ha|yeah|yes|yep|ok|okay|oh|um|uh)\W+)*(?:fair|true|i know|i see|i understand|i hear you|"
                     r"totally|agreed|understood|it'?s not cheap|it is not cheap)\b")
# Words that keep to a point against an objection: "fair, but ...", "however ...", "keep in mind ...".
_YET = re.compile(r"\b(?:but|however|actually|though|tho|still|keep in mind|just so you know|worth (?:noting|knowing)|bear in mind)\b")


def _pushes_back(said: Utterance, own: list[str], focus: str, focus_tags: set[str]) -> bool:
    """Whether the reply stands up for ``focus`` against the shopper's objection: it states
    labels of it ("it's 5 lb + high protein") after a "but", offers nothing else (a product
    only weighed against it, "cheaper than the X", is set aside by ``analyze``) and sets
    nothing aside."""
    low = said.text.lower()
    reasons = (said.explanation is not None and said.explanation.product == focus) or any(
        t.tags & focus_tags for t in said.tags
    )
    return (
        reasons and not [p for p in said.proposed if p != focus] and not _offered(said, own, focus)
        and _YET.search(low) is not None and not P.NOT_PROPOSED.search(low) and focus not in said.set_aside
    )


def in_reply(
    said: Utterance, heard: Utterance | None, *, raised: Iterable[str] = (), focus: str | None = None,
    lexicon: SceneLexicon | None = None,
) -> Utterance:
    """``said`` read as the reply to ``heard`` (see the module docstring); ``raised``: the
    products the shopper raised itself, in addition to the ones ``heard`` names; ``focus``: the
    product under discussion, which "that one" / "it" in the shopper's words stands for. With
    the ``lexicon``, a wish the shopper states that the focus's catalog labels fail is a
    turn-down ("I can't eat wheat" of crackers with wheat), and a push-back's facts are the
    reasons for the focus."""
    if heard is None or heard.empty or said.empty:
        return said
    said = _without_echoes(said, heard, focus)
    raised = tuple(raised)
    pointed = [focus] if focus is not None and not heard.named and _PRONOUN.search(heard.text.lower()) else []
    own = list(dict.fromkeys([*raised, *_named_besides(heard, raised, lexicon), *pointed]))
    named_sides = [p for _, p in said.references if p in own]
    asked = _asks(heard)
    low = heard.text.lower()
    # "Ten eighty-nine for Swiss cheese? That's way too much.": a question of no wh-word or
    # auxiliary says the price back; the turn-down after it stands
    really_asked = any(_OPENS_QUESTION.match(q.sentence.lower()) for q in heard.questions) or (
        asked and not heard.questions and not heard.rejects)  # ("23 bucks for shrimp??" asks nothing)

    # "I want the garlic one" -> "the roasted garlic sauce or the garlic pepper blend?": products
    # that each fit the shopper's words, given as the options of a question, are readings of what
    # the shopper meant: asked about, none offered
    readings = _readings(said, heard, lexicon)
    if readings:
        kinds = {lexicon.category_of[p] for p in readings}
        questions = said.questions or (Question(("other",), said.text),)  # "sorry which one um the A or the B"
        return replace(
            said, act="ClarifyNeed", proposed=(), compared=(), explanation=None,
            mentioned=tuple(dict.fromkeys([*readings, *said.mentioned])),
            set_aside=tuple(dict.fromkeys([*said.set_aside, *readings])),
            questions=tuple(reading_questions(questions, kinds)),
        )

    # "which pizza tho?", "wait which thing?" after "grab me the pizza": the shopper spoke of one
    # thing as if there were one; asking which is asking what it meant
    if (lexicon is not None and said.questions and not said.proposed and not said.purchase_prompt
            and said.navigation is None and not heard.named and not heard.asks_to_compare):
        # (the words of "the pizza", and "one" / "thing" when the shopper said "the sage one")
        meant = {w for words in _meant(heard, with_noun=True) for w in words}
        which = re.search(r"\bwhich\s+([a-z]+)", said.text.lower())
        if which and set(lemmas_of(which.group(1))[:1]) & meant:
            return replace(said, act="ClarifyNeed", questions=tuple(replace(q, clarifies=True) for q in said.questions))

    # a choice asked between products the shopper raised ("oslo or brio dumbbells, want it heavy":
    # two of them set side by side ask for a pick, with or without a "?")
    # ("how do the other options compare?" asks for new ones, not a pick among its own)
    choice = len(own) >= 2 and (heard.asks_to_compare or bool(_CHOICE.search(low))) and (
        "alternatives" not in heard.requests
    )
    if choice and (asked or re.search(r"\bor\b|\bvs\.?\b|\bversus\b", low)) and named_sides:
        if said.act in _OWN_ACTS:
            return said
        sides = list(dict.fromkeys(named_sides))
        pick = _favoured(said, own)
        others = [p for p in said.proposed if p not in own]
        compared = list(dict.fromkeys([*said.compared, *(sides if len(sides) >= 2 else own)]))
        # the pick keeps its place among the proposals (the first one is the product judged)
        proposed = [p for p in said.proposed if p == pick or p in others] if pick in said.proposed else (
            ([pick] if pick else []) + others
        )
        return replace(
            said,
            act="Compare",
            proposed=tuple(proposed),
            compared=tuple(compared),
            mentioned=tuple(p for p in said.mentioned if p not in compared and p not in proposed),
        )

    # a comparison, unasked, that picks the shopper's own product ("what's good about B?" ->
    # "between A and B, I'd pick B: ..."): the other side is the foil it is weighed against
    picks_own = said.proposed and all(p in own for p in said.proposed) and len(set(said.compared)) >= 2
    if picks_own and said.act == "Compare":
        foils = tuple(p for p in said.compared if p not in own and p not in said.set_aside)
        if foils:
            said = replace(said, set_aside=(*said.set_aside, *foils))

    # ("39.99 for a basket?" asks the price back; a reply that grants the point takes it as the
    # objection it was: "fair, but: big, lid + handles. keep?")
    granted = bool(_PRICE_SAID_BACK.search(low) and _GRANTS.match(said.text.lower()))

    # a question about products the shopper raised: the reply answers about them
    lone_compare = said.act == "Compare" and len(set(said.compared)) < 2  # a "comparison" of one product
    if (asked and (really_asked or not heard.rejects) and own and named_sides and (said.act in _ANSWERED_ACTS or lone_compare) and not said.purchase_prompt
            and not granted):
        if all(p in own for p in said.proposed):  # nothing new offered with the answer
            act = "Explain" if "explain" in heard.requests else "AnswerQuestion"
            return replace(said, act=act, proposed=(), mentioned=tuple(dict.fromkeys([*said.proposed, *said.mentioned])))

    # "where's the X?" answered by where it is ("ground cinnamon's on shelf 8, back side"): an
    # answer, not directions, unless the reply tells the shopper to move
    # (a route is directions without a verb: "straight ahead, past produce stand 1 -> ...",
    # "out of light logic, then hang a right")
    nav = said.navigation
    route = nav is not None and (nav.direction in ("ahead", "around") or nav.relation in ("past", "out_of")
                                 or re.match(r"\W*(?:->|\u2192)", said.text) is not None)  # "-> oc3, cheese + eggs"
    if asked and "location" in heard.requests and said.act == "Navigate" and not route and not any(
        t.low != "back" for t in motion_verbs(said.tokens, said.text.lower())  # "back side" is where, not a move
    ):
        return replace(said, act="AnswerQuestion", navigation=None, location=said.location or said.navigation)

    # a turn-down, in words or by a wish the product under discussion fails: the reply handles
    # it (a turn-down that asks something is answered by what it asks)
    product = lexicon.index.products.get(focus) if lexicon is not None and focus is not None else None
    tags = set(product.tags) if product is not None else set()
    # (weighing it against another by name still compares; "the X is fair trade too", leaving it
    # unnamed, offers the X instead)
    weighed = said.act == "Compare" and focus in said.named
    fails = product is not None and not asked and (said.act != "Compare" or not weighed) and (
        any(t not in tags for t in heard.wants) or any(t in tags for t in heard.avoids)
    )
    # ... by standing up for the product turned down ("fair, but it's 5 lb + high protein"):
    # a push-back proposes it again, its facts the reasons for it
    objected = ((heard.rejects or fails) and not really_asked) or granted
    if objected and focus is not None and _pushes_back(said, own, focus, tags):
        reasons = said.explanation
        if product is not None and (reasons is None or reasons.product != focus):
            reasons = _reasons_for(said, focus, lexicon)
        return replace(said, act="HandleRejection", proposed=(focus,), explanation=reasons,
                       mentioned=tuple(p for p in said.mentioned if p != focus))
    if (heard.rejects and not really_asked and said.act not in _OWN_ACTS) or (
        fails and said.act not in _OWN_ACTS - {"HandleRejection"}
    ):
        offered = _offered(said, own, focus)
        # the product turned down is no side of a comparison ("skip the umber um the wren is
        # forty less"): the alternative is offered, the one dropped only mentioned
        dropped = [p for p in said.compared if p in said.set_aside or (p == focus and p not in said.proposed)]
        compared, left = drop_sides(said.compared, dropped)
        reasons = said.explanation
        if dropped and reasons is not None and lexicon is not None:  # reasons no longer weighed against the one dropped
            reasons = _reasons_for(said, reasons.product, lexicon)
        proposed = tuple(dict.fromkeys([*said.proposed, *offered]))
        # the alternative's facts are the reasons for it ("the mira doesn't lock, the noor does:
        # lockable, compact, 179.99"), not the turn-down's (no reasons are given against a product)
        if reasons is None and proposed and lexicon is not None:
            reasons = _reasons_for(said, proposed[0], lexicon)
        return replace(
            said, act="HandleRejection", proposed=proposed,
            compared=tuple(compared), explanation=reasons,
            mentioned=tuple(dict.fromkeys([*(p for p in said.mentioned if p not in offered),
                                           *(p for p in left if p not in said.proposed)])),
        )

    # a need stated, also as a question for a kind ("any chips that are vegan?"): a product named
    # that the shopper did not raise is offered
    # ("yes, one: the X", "only the X is organic", "four bookcases have ..." answer the question)
    said_low = said.text.lower()
    asked_for_kind = asked and not own and not heard.requests and not (ANSWER_OPENING.match(said_low) or _COUNTED.match(said_low))
    # (a need in the shopper's words, whether or not its labels or kind are in the catalog's
    # terms: "I need a plant that's safe around my cats", "Pendant for a small kitchen")
    states_need = bool(heard.wants or heard.categories or heard.budget or _NEED.search(low)) or any(
        m.kind == "category" for m in heard.mentions) or (
        # a need in words the catalog lacks ("Blocks for my kids - one's 4, the other's 7"): the
        # reply names a product unasked and gives reasons for it
        not asked and said.explanation is not None and said.explanation.product in _offered(said, own, focus))
    if (not asked or asked_for_kind) and not heard.rejects and states_need and not said.questions:
        offered = _offered(said, own, focus)
        if offered and said.act in ("AnswerQuestion", "Explain", "Recommend", "HandleRejection"):
            # a reply that sets its own option aside ("skipping the X, over your 20 - the Y ...")
            # recommends; one that opens by taking words on board ("no problem, skip the X")
            # handles a turn-down the shopper's words carried
            handles = (said.act == "HandleRejection" and _ACK_OPENING.match(said_low) is not None) or (
                _takes_objection_on_board(said_low, focus, offered))
            return replace(
                said, act="HandleRejection" if handles else "Recommend",
                proposed=tuple(dict.fromkeys([*said.proposed, *offered])),
                mentioned=tuple(p for p in said.mentioned if p not in offered),
            )
        if said.proposed and said.act in ("AnswerQuestion", "Explain"):
            return replace(said, act="Recommend")
    if said.act == "Recommend" and not asked and _takes_objection_on_board(said_low, focus, said.proposed):
        return replace(said, act="HandleRejection")
    return said


# "Oh, and one more idea ...": an offer besides, not an answer to an objection
_ADD_ON = re.compile(r"\W*(?:oh|ah|ok|okay)\W+(?:and|also|one more|btw|by the way|plus)\b")


def _takes_objection_on_board(low: str, focus: str | None, offered) -> bool:
    """Whether a reply opens by taking the shopper's words about the product under discussion
    on board and offers another ("oh yeah fair, then maybe the lintu fern throw", "oof yeah,
    the corsa tho"): whatever turn-down those words carried, read or not, is handled."""
    return (focus is not None and bool(offered) and focus not in offered
            and _ACK_OPENING.match(low) is not None and not _ADD_ON.match(low))
_POINTED = re.compile(r"\b(?:this|these|that|those)\s+$")


def _named_besides(heard: Utterance, raised, lexicon: SceneLexicon | None) -> list[str]:
    """The products the shopper's words name, less those a raised product's model name accounts
    for: "quill or umber chair?" with the Umber accent chair raised is no Umber office chair."""
    if lexicon is None or not raised:
        return list(heard.named)

    def model(p: str) -> set[str]:  # ("Quill and Co Quill Office Chair": its model is "quill")
        return set(lexicon.model_words[p] - lexicon.kind_words[p])

    return [p for p in heard.named if p in raised or not any(model(p) & model(r) for r in raised)]


def _reasons_for(said: Utterance, pid: str, lexicon: SceneLexicon):
    """The reasons ``said`` gives for ``pid``, weighed against no other product."""
    low = said.text.lower()
    return _explanation(pid, low, said.tokens, list(said.mentions), list(said.tags), amounts(low), lexicon)


# The thing the shopper means, said as if there were one: "the garlic one", "that sparkling
# thing", "the snake plant", "the Halden?", "the forest green armchair pls" (the words after
# the article, up to "one", a "please" or the end).
_THE_ONE = re.compile(
    r"\b(?:the|that|this)\s+([a-z][\w'-]*(?:\s+[a-z][\w'-]*){0,2}?)\s*(?:\b(?:one|ones|thing|stuff)\b|(?:\b(?:pls|plz|please)\b\W*)?(?:[?.!,]|$))"
)
# A reply that asks which: a question, or speech opening with "which" ("sorry which one um ...").
# ... or ends asking which, unpunctuated: "... and the peppermint bark ice cream so uh which are you after"
_WHICH_ASKED = re.compile(r"\bwhich (?:one|ones|is it|are you|do you|did you|of them)\b[^.!?]*$")
_ASKS_WHICH = re.compile(r"\W*(?:(?:sorry|oh|um|uh|wait|hmm|ok|okay)\W+)*which\b")


def _readings(said: Utterance, heard: Utterance, lexicon: SceneLexicon | None) -> list[str]:
    """The products a reply gives as the options of a question ("A or B?", "which halden: ...")
    when every one of them has all the words of the one thing the shopper meant (words of its
    name, kind or labels): readings of the shopper's words, not offers."""
    low = said.text.lower()
    if lexicon is None or said.purchase_prompt or said.navigation is not None:
        return []
    if not (said.questions or _ASKS_WHICH.match(low) or _WHICH_ASKED.search(low)) or not re.search(r"\bor\b|\bwhich\b", low):
        return []
    options = [p for p in dict.fromkeys(p for _, p in said.references) if p not in said.landmarks]
    listed = _listed_readings(said, heard, lexicon)
    for meant in _meant(heard) if len(options) >= 2 else ():
        if all(meant <= lexicon.all_words[p] for p in options):
            return list(dict.fromkeys([*options, *listed]))
    return listed


# The items of a list said in a line: "pendant, nightstand, gaming desk or planter", "a dish soap
# and laundry pods and uh a spray cleaner", "black, kidney, cannellini, chickpeas or refried".
_ITEM_BREAK = re.compile(r"\s*(?:,|;|/|\n|\bor\b|\band\b|\bn\b|\u2014|-\s)\s*")


def _listed_readings(said: Utterance, heard: Utterance, lexicon: SceneLexicon) -> list[str]:
    """"Where's the Arden?" -> "arden = pendant, nightstand, gaming desk or planter?": the shopper
    named one thing by words that two to eight products' names all carry, and the reply lists
    them by the words that tell them apart. Each item that picks out exactly one of them names it."""
    # (a name, not a kind: "cereal pls" -> "honey or chocolate?" asks a preference; and not the
    # shopper's own choice of two, "Brio or Alba dumbbells?", which asks to compare)
    if re.search(r"\bor\b|\bvs\.?\b|\bversus\b", heard.text.lower()):
        return []
    sides = _meant_products(heard, lexicon)
    if not 2 <= len(sides) <= 8:
        return []
    shared = set.intersection(*(set(lexicon.all_words[p]) for p in sides))
    own = {p: (lexicon.all_words[p] | lexicon.kind_words[p]) - shared for p in sides}
    found = []
    for item in _ITEM_BREAK.split(said.text.lower()):
        spoken = set(lemmas_of(item))
        fits = [p for p in sides if spoken & own[p]]
        best = max((len(spoken & own[p]) for p in fits), default=0)
        top = [p for p in fits if len(spoken & own[p]) == best]
        if len(top) == 1 and top[0] not in found:
            found.append(top[0])
    return found if len(found) >= 2 else []


def _meant_products(heard: Utterance, lexicon: SceneLexicon) -> list[str]:
    """The products the shopper's words could mean: those of the one name it said that several
    carry ("the Arden"), else, when it named no kind, those with every catalog word it said ("got
    any peppermint?", "where's delph")."""
    named = [m for m in heard.mentions if m.kind == "product"]
    if len(named) == 1:
        meant = {w for w in lemmas_of(named[0].phrase) if w not in STOPWORDS}
        return [p for p, ws in lexicon.all_words.items() if meant <= ws]
    if named or any(m.kind == "category" for m in heard.mentions):
        return []  # (options of a kind the shopper named ask a preference: "cat food" -> "kitten or adult?")
    toks = heard.tokens
    # (a thing asked for with "a" is any of a kind: "I need a cleaning spray")
    meant = {t.lemma for k, t in enumerate(toks) if _name_word(t.lemma, t.low, lexicon)
             and not any(o.low in ("a", "an") for o in toks[max(0, k - 2) : k])}
    return [p for p, ws in lexicon.all_words.items() if meant <= ws] if meant else []


def _name_word(lemma: str, low: str, lexicon: SceneLexicon) -> bool:
    """Whether a word of the shopper's is a word of a product's name, not of a kind or a doing
    ("I need a cleaning spray", "something to bake")."""
    if lemma not in lexicon.product_vocab or lemma in STOPWORDS or lemma in FUNCTION_WORDS:
        return False
    if lemma in lexicon.category_words or lemma in lexicon.heads:
        return False
    forms = getAllLemmas(low)
    return not ("VERB" in forms and "NOUN" not in forms) and not low.endswith("ing")


def _meant(heard: Utterance, with_noun: bool = False) -> list[set[str]]:
    """The words of each thing the shopper spoke of as if there were one ("the garlic one" ->
    {garlic}; with ``with_noun``, {garlic, one})."""
    return [words for m in _THE_ONE.finditer(heard.text.lower())
            if (words := set(lemmas_of(m.group(0).split(None, 1)[-1] if with_noun else m.group(1))))]


def _fitting(heard: Utterance, lexicon: SceneLexicon | None, most: int = 6) -> frozenset[str]:
    """The products that have every word of the one thing the shopper's words meant ("the
    emerald chair", "the tomato basil?"), when there are at most ``most`` of them."""
    if lexicon is None:
        return frozenset()
    for meant in _meant(heard):
        fits = [p for p, ws in lexicon.all_words.items() if meant <= ws]
        if 0 < len(fits) <= most:
            return frozenset(fits)
    return frozenset()


# An answer that says how many there are: "only the X is ...", "four bookcases have ...", "yup, two".
_COUNTED = re.compile(r"\W*(?:yup\W+)?(?:only|just|\d+|one|two|three|four|five|six|several|a few|a couple)\b")


def echoed_questions(said: Utterance, heard: str) -> tuple[str, ...]:
    """The questions of ``said`` that say the shopper's own words ``heard`` back to it
    ("Okay. Where can I find the gluten-free cereal?" after the shopper asked exactly that):
    whole words, questions of more than 12 characters."""
    spoken = f" {' '.join(words(heard))} "
    if not spoken.strip():
        return ()
    return tuple(q.sentence for q in said.questions if len(q.sentence) > 12 and f" {' '.join(words(q.sentence))} " in spoken)


def analyze_reply(
    text: object,
    lexicon: SceneLexicon | None,
    *,
    heard: Utterance | None = None,
    raised: Iterable[str] = (),
    visible: frozenset[str] | set[str] | tuple[str, ...] = frozenset(),
    focus: str | None = None,
) -> Utterance:
    """An assistant turn's ``text`` analysed as the reply to the shopper's words ``heard``:
    the rules' reading (``read_reply``), with the act chosen by the model fitted on the
    labelled corpora over that reading and the words (``acts``). The one reading the env,
    the shopper and RecRM share."""
    raised = tuple(raised)
    said = read_reply(text, lexicon, heard=heard, raised=raised, visible=visible, focus=focus)
    if said.empty:
        return said
    said = replace(said, act=read_act(said, heard, raised))
    return _as_the_act_reads(said, heard, tuple(raised), focus, lexicon)


def _as_the_act_reads(said: Utterance, heard: Utterance | None, raised: tuple[str, ...], focus: str | None,
                      lexicon: SceneLexicon | None) -> Utterance:
    """``said`` with what it offers, asks and explains made to agree with its act, as the act
    reader reads it: the rules' cue words miss turns whose act the reader still gets right
    ("um tomato basil like the pasta sauce or the soup" asks which was meant, "apple cinnamon
    oats, 4 bucks 09 - adding it?" prompts the purchase)."""
    low = said.text.lower()
    if said.act == "ClarifyNeed":
        return _which_was_meant(said, heard, lexicon)
    if said.act == "Compare" and len(set(said.compared)) == 2:
        return _side_picked(said)
    if said.act == "AnswerQuestion" and said.compared and not said.proposed and not (heard is not None and heard.asks_to_compare):
        # an answer that lists what fits ("Yes, there are two: the Calla Mantel Clock and the
        # Ember Mantel Clock") names them, it weighs none against another
        return replace(said, compared=(), mentioned=tuple(dict.fromkeys([*said.compared, *said.mentioned])))
    if said.act not in ("Recommend", "ConfirmPurchase", "HandleRejection"):
        return said

    def offer(pids: list[str], **changes) -> Utterance:
        return replace(said, proposed=tuple(pids), mentioned=tuple(p for p in said.mentioned if p not in pids), **changes)

    named = [p for p in said.mentioned if p not in said.set_aside and p not in said.landmarks]
    if said.act == "Recommend" and not said.proposed and not said.compared:
        # a recommendation in words with no cue of proposing ("oh the calla gaming desk, it's got
        # a cup holder ..."): the one product named and not set aside is the one recommended
        offered = [p for p in named if p != focus and p not in raised]
        if len(offered) == 1:
            reasons = _reasons_for(said, offered[0], lexicon) if lexicon is not None else None
            kept = said.explanation if said.explanation and said.explanation.product in offered else None
            return offer(offered, explanation=reasons or kept)
    elif said.act == "ConfirmPurchase" and said.proposed:
        return replace(said, purchase_prompt=True)  # "do you want to just grab the candy canes and we'll call it done"
    elif said.act == "ConfirmPurchase":
        # "apple cinnamon oats, 4 bucks 09 - adding it?", "The Brio Plant Stand, I can place it
        # for you in cart, okay?": the one product it names, else the one under discussion
        offered = named if len(named) == 1 else [focus] if focus is not None and not named else []
        if offered:
            return offer(offered, purchase_prompt=True)
    elif said.act == "HandleRejection" and focus is not None:
        defends, lets_go = bool(_DEFENDS.search(low)), bool(_LETS_GO.search(low))
        if said.proposed == (focus,) and lets_go and not defends:
            # the product turned down let go: "Okay, we don't take the monstera. What size ...?"
            return replace(said, proposed=(), mentioned=tuple(dict.fromkeys([focus, *said.mentioned])))
        others = [p for p in named if p != focus and p not in raised]
        if not said.proposed and len(others) == 1:  # the alternative: "fair lol, greta floor lamp's matte steel"
            return offer(others)
        if not said.proposed and not others and set(said.mentioned) <= {focus} and defends and not lets_go:
            # the product turned down stood up for: "i get it, but it's low pile and won't shed"
            return offer([focus])
    return said


def _which_was_meant(said: Utterance, heard: Utterance | None, lexicon: SceneLexicon | None) -> Utterance:
    """A turn that asks which need the shopper meant, however it is worded ("um tomato basil
    like the pasta sauce or the soup", "kira's on 6 things: coffee table, bookcase, ...",
    "ooh two colas, fizzwell or the zero sugar one?"): the products it names are readings of the
    shopper's words, asked about and none offered, and it asks which kind was meant when they
    are of different kinds, else which variant. Options put to a shopper who asked for advice
    ("Nonna Lucia Roasted Garlic Sauce or Bella Strada Arrabbiata?" after "what's the best pasta
    sauce?") are offered, as the rules read them."""
    readings = [p for p in dict.fromkeys([*said.proposed, *said.compared, *said.mentioned]) if p in said.named]
    if said.questions and not said.set_aside and heard is not None and _ASKS_ADVICE.search(heard.text.lower()):
        return said
    if said.proposed and _OFFERED.search(said.text.lower()):
        return said  # offered in so many words: "You could try the A, the B or the C." (each an attempt)
    kinds = {lexicon.category_of[p] for p in readings} if lexicon is not None else set()
    if not said.questions:  # asked in words the rules read no question in: the kinds it names are the readings
        if lexicon is not None:
            kinds |= set(said.categories) | categories_offered(said.tokens, said.tags, [(0, len(said.text))], lexicon)
        questions = reading_questions([Question(("other",), said.text)], kinds)
    elif len(kinds) >= 2:
        questions = reading_questions(said.questions, kinds)
    else:  # a slot the rules read stands ("which kind of table - coffee? side?"); none asks which variant
        questions = [replace(q, clarifies=True, slots=("preference",)) if q.slots == ("other",) and readings else q
                     for q in said.questions]
    return replace(
        said, questions=tuple(questions), proposed=(), compared=(),
        mentioned=tuple(dict.fromkeys([*readings, *said.mentioned])),
        set_aside=tuple(dict.fromkeys([*said.set_aside, *readings])),
    )


def _side_picked(said: Utterance) -> Utterance:
    """A comparison of two products proposes the side written first in "X > Y" ("apricot >
    marmalade if u want less sugar"), and none when it leaves the choice to the shopper with no
    pick of its own ("... black vs green - ur call", "depends if organic matters to u")."""
    sides = list(dict.fromkeys(said.compared))
    low = said.text.lower()
    better = _SIDE_OVER.search(low)
    if better:
        pick = next((p for at, p in said.references if p in sides and at <= better.start() < at + 40), None)
        # (or the side not named right after it: "apricot > marmalade", apricot read by its kind only)
        beaten = next((p for at, p in said.references if p in sides and better.end() <= at < better.end() + 4), None)
        pick = pick or next((p for p in sides if beaten is not None and p != beaten), None)
        if pick is not None:
            return replace(said, proposed=(pick, *(p for p in said.proposed if p not in sides)))
    if _LEFT_TO_SHOPPER.search(low) and not _OFFERED.search(low):
        return replace(said, proposed=tuple(p for p in said.proposed if p not in sides))
    return said


# "X > Y": the side before the sign is favoured
_SIDE_OVER = re.compile(r"\s>\s")
# The choice left to the shopper: "ur call", "depends if organic matters to u", "up to you"
_LEFT_TO_SHOPPER = re.compile(r"\b(?:(?:ur|your) (?:call|choice|pick)|up to (?:you|u)|depends\b|(?<!before )(?:you|u) decide|either (?:works|is fine))")


# A turn-down answered by standing by the product, or by letting it go
_DEFENDS = re.compile(r"\b(?:but|tho|though|hear me out|still worth)\b")
_LETS_GO = re.compile(r"\b(?:leave|skip|forget|scratch|ditch|pass on|(?:it'?s|that'?s|one'?s|are|is) out|don'?t take|stays? on the shelf|off the list)\b")


# Words that offer or pick products, whatever else the turn asks ("could be the A or the B" does not)
_OFFERED = re.compile(r"\b(?:try|suggest\w*|recommend\w*|how about|what about|i'?d (?:go|pick|take|get|say|choose|grab)"
                      r"|i (?:pick|choose|prefer)|go (?:with|for|w/)|stick (?:with|w/)|advi[sc]e|propose)\b")
# The shopper asks for advice: the options a reply puts to them are offers
_ASKS_ADVICE = re.compile(r"\b(?:best|recommend\w*|suggest\w*|(?:which|what) (?:one )?should|advi[cs]e|your pick|what'?s good)\b")


def read_reply(
    text: object,
    lexicon: SceneLexicon | None,
    *,
    heard: Utterance | None = None,
    raised: Iterable[str] = (),
    visible: frozenset[str] | set[str] | tuple[str, ...] = frozenset(),
    focus: str | None = None,
) -> Utterance:
    """The rules' reading of a reply: the products the shopper just named resolve references
    as the ones in view do ("the decaf" after "the breakfast blend or the decaf?"), then
    ``in_reply`` reads what the turn does."""
    raised = tuple(dict.fromkeys(raised))
    named = frozenset(_named_besides(heard, raised, lexicon)) if heard is not None else frozenset()
    # "it", "they" in the reply stand for the product under discussion, else for the one product
    # the shopper raised (asked about, picked up: "price of the monstera?" -> "it's 48.99")
    about = focus if focus is not None else raised[0] if len(raised) == 1 else None
    # the few products that fit what the shopper meant ("the emerald chair") are as good as in
    # view: "rowan (swivel, big) or vale (compact)?" names two of them
    asks_which = bool(re.search(r"\bor\b|\bwhich\b", str(text).lower())) and "?" in str(text)
    # (also when the shopper's words named one of them by a name several carry: "where's the Zephyr?")
    fitting = _fitting(heard, lexicon) if heard is not None and asks_which else frozenset()
    if heard is not None and heard.named and not set(heard.named) <= fitting:
        fitting = frozenset()
    in_view = frozenset(visible) | named | frozenset(raised) | fitting
    said = analyze(text, lexicon, visible=in_view, focus=about)
    if lexicon is not None and focus in lexicon.category_of and not [p for _, p in said.references if p != focus]:
        # words naming nothing but the product under discussion may name another of its kind,
        # as good as in view beside it: "ooh or crunch hollow's baked ones", "delph = same
        # dimmable reading light", "the fjord's the same navy fabric"
        # ("these biscuits", "this one" point at the product under discussion itself)
        # (read again only when a word of another such name is said: most replies about the
        # product under discussion name nothing else)
        kin = [p for p in lexicon.by_category[lexicon.category_of[focus]] if p != focus]
        spoken = {w for t in said.tokens for w in (t.lemma, t.low.removesuffix("'s"))}
        if any(spoken & (lexicon.name_words[p] | lexicon.brand_words[p]) for p in kin):
            wider = analyze(text, lexicon, visible=in_view | frozenset(kin), focus=about)
            low = wider.text.lower()
            others = [at for at, p in wider.references if p != focus]
            if others and not any(_POINTED.search(low, max(0, at - 8), at) for at in others):
                said = wider
    return _reasons_as_heard(in_reply(said, heard, raised=raised, focus=focus, lexicon=lexicon), heard, lexicon, focus)



# A colour is a reason only when it answers the shopper (a colour or a look turned down or
# asked for: "i don't like white", "mustard's too loud", "isn't my style"), is said to match
# ("same navy", "also walnut", "still white", "like u said", "to match your sofa") or is given
# as the cause ("because it's navy"). Otherwise it describes the product like the words of its
# name ("walnut w/ hidden storage", "cream leather, compact"), also after a material is turned
# down ("no rattan -> black metal": the metal answers, not the black). In the same way the
# flavour of a side of a comparison is its name ("lime 3.99 vs grapefruit 5.79 -> lime"),
# unless the shopper spoke of flavours ("he hates the mint").
# (the catalog's colour words, and the basic colour terms it may lack)
_LOOKS = re.compile(r"\bcolou?r\w*|\bshades?\b|\bstyle\b|\bvibe\b|\blooks?\b"
                    r"|\btoo (?:dark|bright|loud|plain|boring|dull|cold|pale|busy|old[- ]fashioned|formal|fussy|flashy|girly|ugly)\b"
                    r"|\b(?:beige|tan|red|orange|yellow|purple|pink|brown|gr[ae]y|black|white|blue|green)\b")
_MATERIALS = re.compile(r"\bmaterials?\b|\bmade (?:of|from)\b|\bfabric\b|\bfeels?\b")
_TASTES = re.compile(r"\bflavou?r\w*|\btaste\w*|\bsweet|\bspicy\b|\bplain\b")
_COLOUR_TIED = re.compile(
    r"\b(?:same|both|also|still|too|like (?:u|you) (?:said|wanted|asked)|match\w*|because|since|cause|prefer(?:s|red)?|wants?|wanted|loves?|loved)\b[^.!?\n]{0,30}$"
)
_COLOUR_TIED_AFTER = re.compile(r"[^.!?\n]{0,30}?\b(?:too|as well|like (?:u|you)r?|like (?:u|you) (?:said|wanted|asked)|match\w*)\b")


def _spoken_of(heard: Utterance | None, key: str, words: re.Pattern, values: frozenset[str] = frozenset()) -> bool:
    """Whether the shopper's words speak of labels of ``key``: ``words`` said, such a label
    turned down, or one of ``values`` said ("i don't like white"; flavours pass none: they name
    the products, "salmon or lamb?" asks no flavour)."""
    if heard is None:
        return False
    if words.search(heard.text.lower()) or any(t.startswith(key + ":") for t in heard.avoids):
        return True
    return any(w in values for t in heard.tokens for w in (t.lemma, t.low.removesuffix("'s").removesuffix("\u2019s")))


def _reasons_as_heard(
    said: Utterance, heard: Utterance | None, lexicon: SceneLexicon | None, focus: str | None = None
) -> Utterance:
    """``said`` with the reasons it gives weighed against what the shopper said: a colour that
    only describes (and a material said with it), the flavour that names a side of a comparison
    and what a push-back grants the shopper's complaint (``_conceded``) are no reasons; an
    alternative to a product priced out of the limit the shopper gave answers that limit."""
    reasons = said.explanation
    if reasons is None or lexicon is None:
        return said
    drop = set()
    colours = lexicon.label_words_by_key.get("color", frozenset())
    if any(c.startswith("color:") for c in reasons.cites) and not _spoken_of(heard, "color", _LOOKS, colours):
        low = said.text.lower()
        drop |= {cite for cite in reasons.cites if cite.startswith("color:") and not any(
            _COLOUR_TIED.search(low[max(0, said.tokens[m.start].start - 40) : said.tokens[m.start].start])
            or _COLOUR_TIED_AFTER.match(low, said.tokens[m.end - 1].end)
            for m in said.tags if cite in m.tags
        )}
    if drop and any(c.startswith("material:") for c in reasons.cites) and not _spoken_of(
        heard, "material", _MATERIALS, lexicon.label_words_by_key.get("material", frozenset())
    ):
        # the material of a describing colour describes with it ("black metal", "white wood")
        dropped_ends = {m.end for m in said.tags if m.tags & drop}
        drop |= {c for m in said.tags if m.start in dropped_ends for c in m.tags if c.startswith("material:") and c in reasons.cites}
    if any(c.startswith("flavour:") for c in reasons.cites) and _weighed(said, reasons.product, lexicon) and not _spoken_of(heard, "flavour", _TASTES):
        drop |= {cite for cite in reasons.cites if cite.startswith("flavour:")}
    if heard is not None and heard.rejects and reasons.product is not None and reasons.product == focus:
        drop |= _conceded(said, reasons.cites)
    # another product priced out of the limit the shopper gave ("I need a sofa, maximum 1100" ->
    # "the Brio is 1829.99, too expensive for you. I advise the Corsa, 1049.99"): the one offered
    # instead answers the limit
    if (heard is not None and heard.budget is not None and "price" in reasons.cites and "budget" not in reasons.cites
            and set(said.set_aside) - {reasons.product} and (_PRICED_OUT.search(said.text.lower()) or P.OVER_LIMIT.search(said.text.lower()))):
        said = replace(said, explanation=Explanation(reasons.product, (*reasons.cites, "budget")))
        reasons = said.explanation
    if not drop:
        return said
    keep = tuple(c for c in reasons.cites if c not in drop)
    return replace(said, explanation=Explanation(reasons.product, keep) if keep else None)


def _weighed(said: Utterance, pid: str | None, lexicon: SceneLexicon) -> bool:
    """Whether the turn sets ``pid`` against another product of its kind."""
    low = said.text.lower()
    comparing = len(set(said.compared)) >= 2 or (P.COMPARE.search(low) is not None and not P.HANDLE_REJECTION.search(low))
    kind = lexicon.category_of.get(pid)
    others = {p for _, p in said.references} | set(said.compared)
    return comparing and any(p != pid and lexicon.category_of.get(p) == kind for p in others)


# A push-back grants the complaint before it answers it: "true, it's large. tho: drawers + cable
# mgmt", "yes it is compact, but for bathroom is good": what it grants is no reason for the product.
# ("it's a 5 lb bag though": a "though" that ends its clause turns the clause itself against the complaint)
_CONTRAST = re.compile(r"\b(?:but|however|that said|still)\b|\b(?:tho|though)\b(?!\s*(?:[,.!?;\u2014-]|$))")


def _conceded(said: Utterance, cites: tuple[str, ...]) -> set[str]:
    """The labels of ``cites`` said only before the turn's first "but" (or "tho", "however")."""
    low = said.text.lower()
    turn = _CONTRAST.search(low)
    if turn is None or turn.start() == 0:
        return set()
    out = set()
    for cite in cites:
        if cite in ("price", "budget"):
            continue  # (a price conceded is read where prices are)
        at = [said.tokens[m.start].start for m in said.tags if cite in m.tags]
        if not at and cite.startswith("size:"):  # a size said as a figure: "(22 oz)"
            figure = re.search(r"\d+(?:\.\d+)?", cite)
            at = [m.start() for m in re.finditer(rf"(?<![\d.]){re.escape(figure.group(0))}(?![\d.])", low)] if figure else []
        if at and max(at) < turn.start():
            out.add(cite)
    return out
