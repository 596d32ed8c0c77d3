"""What counts as a recommendation attempt: the one rule the env's limit, the shopper, RecRM and
the metrics all apply.

A turn's words *put forward* every product they offer for the shopper to consider, in any
wording: proposed with a cue ("try the X", "how about the X?"), said in passing ("by the way,
the X is great", "rec: X", "here's a quick rundown of the X"), pointed out unprompted ("the X
is on Shelf 3") or set beside another in a comparison nobody asked for, whether or not it
picks a side ("isla pot 48.99 / orla pot 46.99 -> orla" puts forward both). What is NOT put
forward: a product set aside ("you turned the X down", "the X is over your budget, so let's
skip it", "compared with the A, the B suits you better" puts forward B only), a kind of
product named without naming one ("nice pick, yogurt then!"), the sides of a comparison the
shopper asked for, and a product named as a landmark ("right next to the corn flakes").

Each product put forward for the first time is one attempt; a product the shopper raised
itself (named by its own name, asked about, picked up, inspected, put in the cart:
``raised_by`` for its words) is never a new one, so answering about it or confirming it costs
nothing. A wish that happens to fit one product ("a writing desk with drawers") raises none.
Proposing again ("I suggest the X") a product the shopper turned down is an attempt too,
whatever the annotation: it is a new
recommendation of it (so relabelling it ``Explain`` saves nothing), while repeating a
standing recommendation on the way to it is not. A turn annotated ``Recommend`` is an
attempt even when its words are too vague to name a product (the paper counts one per
Recommend annotation), so the count is never below the paper's.

>>> from situ_gym.scene import SceneIndex
>>> from situ_gym.scene.loader import load_scene
>>> from situ_gym.language import analyze, lexicon_for
>>> lex = lexicon_for(SceneIndex(load_scene("supermarket")))
>>> said = analyze("Head to Shelf 3. By the way, the Sunny Fields Honey Oat Clusters are great.", lex)
>>> recommendation_attempt(said).new, recommendation_attempt(said).count
(('sm_p001',), 1)
>>> recommendation_attempt(said, before={"sm_p001"}).count  # the same product again: no new attempt
0
>>> recommendation_attempt(analyze("Could you tell me your budget?", lex), annotated="Recommend").count
1
>>> again = analyze("I suggest the Sunny Fields Honey Oat Clusters.", lex)
>>> recommendation_attempt(again, before={"sm_p001"}, declined={"sm_p001"}).count  # turned down, offered anew
1
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from situ_gym.language.analysis import Utterance
from situ_gym.language.lexicon import SceneLexicon, lemmas_of

__all__ = ["Attempt", "put_forward", "raised_by", "turned_down", "recommendation_attempt"]


@dataclass(frozen=True)
class Attempt:
    """The recommendation attempts of one assistant turn."""

    put_forward: tuple[str, ...]  # every product the words put forward, old or new, in order
    new: tuple[str, ...]  # of them, the ones never put forward before nor raised by the shopper
    annotated: bool = False  # the turn is annotated Recommend
    repeated: tuple[str, ...] = ()  # products the shopper turned down, proposed again

    @property
    def count(self) -> int:
        """Attempts the turn spends: one per new product, and at least one when annotated
        Recommend or proposing again a product the shopper turned down."""
        return len(self.new) or int(self.annotated or bool(self.repeated))


def put_forward(said: Utterance, *, compare_requested: bool = False) -> tuple[str, ...]:
    """The products ``said`` puts forward for the shopper to consider (see the module docstring).

    ``compare_requested``: the shopper asked for this comparison, so its sides are answers,
    not offers (the side the assistant favours is still proposed)."""
    favoured = [p for p in said.compared if p in said.proposed]
    if said.proposed and (favoured or said.act == "Compare"):
        # a comparison that picks a side offers that side, and unasked, every side it lists
        # ("3 opts: A / B / C -> C"); one weighed and set aside ("compared with the A") is not
        listed = [p for p in said.compared if p not in said.set_aside]
        return tuple(dict.fromkeys([*said.proposed, *([] if compare_requested else listed)]))
    aside = set(said.set_aside) | set(said.landmarks)
    mentioned = [p for p in said.mentioned if p in said.named and p not in aside]
    # "Compared with the A, the B suits you better": A is weighed and set aside, not offered.
    neutral = not (compare_requested or favoured)
    compared = [p for p in said.compared if p not in said.set_aside] if neutral else []
    return tuple(dict.fromkeys([*said.proposed, *compared, *mentioned]))


def raised_by(heard: Utterance, lexicon: SceneLexicon) -> tuple[str, ...]:
    """The products the shopper's words ``heard`` raise: the ones they name by a word of the
    product's own name that says neither what it is nor one of its labels ("the Noor", "Golden
    Acre creamy"), and every one they name in asking ("where are the cannellini beans?", "is the
    honey roasted pb vegan?"): answering about those costs no attempt. A wish that happens to fit
    one product ("I want a writing desk with drawers") raises none: the product the assistant
    then offers is its own recommendation."""
    if heard.questions:
        return tuple(heard.named)
    return tuple(pid for pid in heard.named if any(
        m.kind == "product" and pid in m.candidates and lexicon.own_words[pid] & set(lemmas_of(m.phrase))
        for m in heard.mentions
    ))


def turned_down(heard: Utterance, offered: Iterable[str]) -> tuple[str, ...]:
    """The products a shopper's reply ``heard`` turns down: the ones it names when it rejects,
    else the last one the turn it answers put forward (``offered``); none when it does not reject."""
    if not heard.rejects:
        return ()
    return tuple(heard.named) or tuple(offered)[-1:]


def recommendation_attempt(
    said: Utterance,
    *,
    before: Iterable[str] = (),
    raised: Iterable[str] = (),
    annotated: str | None = None,
    compare_requested: bool = False,
    declined: Iterable[str] = (),
) -> Attempt:
    """The attempts of the turn whose response reads as ``said``.

    ``before``: products earlier turns put forward; ``raised``: products the shopper raised
    itself; ``annotated``: the turn's dialogue-action annotation (``"Recommend"`` counts);
    ``declined``: products the shopper turned down (``turned_down``), which a proposal offers
    anew."""
    words = put_forward(said, compare_requested=compare_requested)
    old = set(before) | set(raised)
    no = set(declined)
    again = tuple(p for p in words if p in no and p in said.proposed)
    return Attempt(words, tuple(p for p in words if p not in old), annotated == "Recommend", again)
