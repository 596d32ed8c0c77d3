"""How the layer reads the shopper: turn-downs and wishes, on the rule shopper's own phrasings.

The env's attempt rule (``turned_down``), the heuristic's belief and the rule judge all read
shopper turns through ``Utterance.rejects`` / ``wants`` / ``avoids``; a misread budget
statement or label costs an honest assistant whole episodes (sm_u14_t3: "I don't want to
spend more than $25" turned down the coffee the shopper was holding).
"""

from __future__ import annotations

import pytest

from situ_gym.language import analyze
from situ_gym.scene.wording import avoid_phrasings, need_phrasings
from situ_gym.user.rule.speech import PHRASES

from .corpus import lexicons

LEX = lexicons()["supermarket"]
SLOTS = dict(name="Misty Valley Earl Grey Decaf Tea", price="$4.39", budget="$10", feature="organic",
             other="Oakridge Organics Chamomile Herbal Tea", direction="turning left", article="some", text="tea",
             topic="the budget")
# Turns that are no turn-down, whatever negative words they hold; and the ones that are.
NOT_REJECTING = ("budget", "category", "ask_explain", "buy", "buy_tradeoff", "hesitate_budget", "hesitate_need",
                 "decline_guidance", "style_clarify", "style_compare", "inspect_pick_up_item", "inspect_check_item",
                 "follow_fixture", "explore", "cannot_see", "later", "nothing_avoid", "nothing_preference",
                 "nothing_size", "nothing_budget")
REJECTING = ("reject_budget", "reject_budget_reveal", "reject_avoid", "reject_need", "reject_category", "reject_generic",
             "reject_substitute", "reject_pricier", "already_rejected")


def _said(key: str) -> list[str]:
    return [p.format(**SLOTS) for p in PHRASES[key]]


@pytest.mark.parametrize("text", [t for k in REJECTING for t in _said(k)])
def test_every_turn_down_of_the_shopper_reads_as_one(text):
    u = analyze(text, LEX)
    assert u.rejects and not u.accepts, text


@pytest.mark.parametrize("text", [t for k in NOT_REJECTING for t in _said(k)])
def test_negative_words_that_turn_nothing_down_are_not_read_as_a_rejection(text):
    assert not analyze(text, LEX).rejects, text


@pytest.mark.parametrize("tag", ["diet:organic", "flavour:turkey", "diet:dairy-free"])
def test_wishes_and_refusals_of_a_label_are_no_rejection_and_keep_their_stance(tag):
    for text in need_phrasings(tag):
        u = analyze(text, LEX)
        assert not u.rejects and tag in u.wants and tag not in u.avoids, text
    for text in avoid_phrasings(tag):
        u = analyze(text, LEX)
        assert not u.rejects and tag in u.avoids and tag not in u.wants, text


@pytest.mark.parametrize("text, wants, avoids", [
    # a label said of a product is a fact about it; the stance is in the rest of the turn
    ("The Misty Valley English Breakfast Black Tea isn't organic, and I need that.", {"diet:organic"}, set()),
    ("The Misty Valley Earl Grey Decaf Tea doesn't have the organic I'm after.", {"diet:organic"}, set()),
    ("The Misty Valley Earl Grey Decaf Tea don't have the organic I'm after.", {"diet:organic"}, set()),
    ("The Misty Valley Earl Grey Decaf Tea is missing organic.", {"diet:organic"}, set()),
    ("The Whisker Farm Turkey Sensitive Stomach Dry Cat Food has turkey. That's a no for me.", set(), {"flavour:turkey"}),
    ("The Misty Valley Earl Grey Decaf Tea is organic.", set(), set()),  # a fact, no stance
    # a label that is also part of one product's name, governed by a wish or refusal
    ("Anything but sour cream onion.", set(), {"flavour:sour cream onion"}),
    ("I'd like sour cream onion.", {"flavour:sour cream onion"}, set()),
])
def test_labels_said_of_products_and_labels_inside_names(text, wants, avoids):
    u = analyze(text, LEX)
    assert set(u.wants) == wants and set(u.avoids) == avoids, (u.wants, u.avoids)


def test_a_refused_flavour_does_not_raise_the_product_named_after_it():
    """"Anything but sour cream onion" names no product: proposing the Sour Cream and Onion
    chips afterwards is a new recommendation attempt (the env's ``raised`` set stays empty)."""
    u = analyze("Right. Anything but sour cream onion. Maybe Shelf 3 has what I need.", LEX)
    assert u.named == () and u.products == ()
    assert analyze("Try the Kettle Row Sour Cream and Onion Potato Chips.", LEX).named == ("sm_p076",)
