import pytest

from recrm.components import FactualConsistency
from recrm.context import TurnContext
from tests.recrm.turns import honest_recommend, opening_history, recommend, turn

judge = FactualConsistency()


def score(index, task, rec, history=None):
    history = opening_history() if history is None else history
    return judge.score(TurnContext.from_record(rec, None, task, index, history))


def checks(s):
    return [(f["kind"], f["check"]) for f in s.details["findings"]]


def test_honest_turn_is_consistent(index, task):
    s = score(index, task, honest_recommend())
    assert s.value == 1.0 and s.details["findings"] == []


@pytest.mark.parametrize(
    "response, check",
    [
        ("Try the Harbor Catch salmon burgers, they are great.", "unknown_product"),
        ("Try the Ocean Fresh cod fillets from the freezer.", "unknown_product"),
        ("The Sunny Fields Gluten-Free Oat Cereal costs $5.49.", "price"),
        ("It costs $5.49 and it is gluten-free.", "price"),  # "it" = the recommended product
        ("The Sunny Fields Honey Nut Crunch Cereal is gluten-free.", "attribute"),
        ("The Honey Nut Crunch Cereal is vegan, a good pick.", "attribute"),
        ("The Gluten-Free Oat Cereal is in Upright Freezer 2.", "location"),
    ],
)
def test_item_hallucinations(index, task, response, check):
    rec = turn(response, "Explain", n=3, recommended_id="sm_p004")
    s = score(index, task, rec)
    assert s.value == 0.0
    assert ("item", check) in checks(s), s.details


@pytest.mark.parametrize(
    "response",
    [
        "The Sunny Fields Gluten-Free Oat Cereal costs $4.99.",
        "The Sunny Fields Gluten-Free Oat Cereal costs about $5.",  # whole-dollar rounding
        "The Gluten-Free Oat Cereal is on Cereal Shelf 1; it is vegan.",
        "The Honey Nut Crunch Cereal is not gluten-free, so I'd skip it.",  # negated claim
        "Morning Mill Almond Granola is $5.49, under your $6 budget.",
        "Sunny Fields makes several cereals on Cereal Shelf 1.",  # bare brand, true place
        "Let's head to Cereal Shelf 1 where the cereals are.",
    ],
)
def test_true_claims_pass(index, task, response):
    s = score(index, task, turn(response, "Explain", n=3, recommended_id="sm_p004"))
    assert s.value == 1.0, s.details


def test_display_name_and_ranking_checks(index, task):
    bad_name = recommend("Have a look at this one.", "Harbor Catch Cod Fillets", "sm_p004")
    assert ("item", "display_name") in checks(score(index, task, bad_name))
    unknown = recommend("Have a look at this one.", "Choco Bombs Cereal", None, visible_now=False)
    assert ("item", "display_name") in checks(score(index, task, unknown))
    ranked = turn("Any preference?", n=3, ranking=["sm_p004", "sm_p404"])
    assert ("item", "ranking") in checks(score(index, task, ranked))


def test_visibility_claim(index, task):
    rec = recommend(
        "The Polar Bay Wild Salmon Portions are right here.",
        "Polar Bay Wild Salmon Portions",
        "sm_p003",
        visible=["sm_f02", "sm_p004"],
    )
    assert ("item", "visibility") in checks(score(index, task, rec))
    rec2 = rec.model_copy(update={"visible_before": ["sm_p003"]})
    assert score(index, task, rec2).value == 1.0


@pytest.mark.parametrize(
    "response, held, cart, check",
    [
        ("You already have the Gluten-Free Oat Cereal in your cart.", None, [], "cart"),
        ("The Gluten-Free Oat Cereal is already in your cart.", None, ["sm_p007"], "cart"),
        ("The oat cereal you're holding is a good pick.", None, [], "holding"),
        ("You picked up the Honey Nut Crunch Cereal, good.", "sm_p004", [], "holding"),
        ("Since your budget is $8, this cereal works.", None, [], "budget"),
    ],
)
def test_content_hallucinations(index, task, response, held, cart, check):
    history = opening_history()
    history[-1] = history[-1].model_copy(update={"held_item": held, "cart": cart})
    s = score(index, task, turn(response, "Explain", n=3), history)
    assert ("content", check) in checks(s), s.details
    assert s.value == 0.0


def test_true_state_claims_pass(index, task):
    history = opening_history()
    history[-1] = history[-1].model_copy(update={"held_item": "sm_p004", "cart": []})
    for response in (
        "The Gluten-Free Oat Cereal you're holding fits your $6 budget.",
        "It is not in your cart yet; add it when you are ready.",
    ):
        assert score(index, task, turn(response, "Explain", n=3), history).value == 1.0, response


def test_budget_not_yet_stated(index, task):
    history = opening_history()[:1]  # only the category is known
    s = score(index, task, turn("That fits your budget of $6.", "Explain", n=2), history)
    assert ("content", "budget") in checks(s)


def test_compare_turn_attributes_go_to_the_right_product(index, task):
    # "this one" is the product under discussion (sm_p004), not the one compared against
    good = "Compared with the Honey Nut Crunch Cereal, this one suits you better since it is gluten-free."
    bad = "Compared with the Gluten-Free Oat Cereal, this one suits you better since it is vegan."
    assert score(index, task, turn(good, "Compare", n=3, recommended_id="sm_p004")).value == 1.0
    s = score(index, task, turn(bad, "Compare", n=3, recommended_id="sm_p005"))
    assert ("item", "attribute") in checks(s)


@pytest.mark.parametrize(
    "response",
    [
        "Our bestseller, the Golden Crunch Maple Granola, is a great option.",  # known words, no such product
        "Golden Crunch Maple Granola is great.",
        "Try the Sunny Fields chocolate puffs.",
    ],
)
def test_invented_names_from_catalog_words(index, task, response):
    s = score(index, task, turn(response, "Explain", n=3, recommended_id="sm_p004"))
    assert ("item", "unknown_product") in checks(s), s.details


def test_wishes_attributed_to_the_shopper_must_have_been_voiced(index, task):
    said = turn("Any preferences?", n=3, user="It has to be gluten-free, please.")
    claim = turn("You wanted gluten-free, and the Honey Nut Crunch Cereal has honey.", "Explain", n=4,
                 recommended_id="sm_p004")
    assert score(index, task, claim, opening_history() + [said]).value == 1.0
    invented = turn("Since you said you love organic food, the Honey Nut Crunch Cereal is ideal.", "Explain",
                    n=3, recommended_id="sm_p004")
    assert ("content", "preference") in checks(score(index, task, invented))


@pytest.mark.parametrize("claim", ["It's half price today.", "It's our best seller.", "It won a gold award.",
                                   "Customers love it, five stars.", "Only two left in stock!"])
def test_commercial_claims_the_catalog_cannot_support(index, task, claim):
    rec = honest_recommend()
    rec = rec.model_copy(update={"response": rec.response + " " + claim})
    assert ("content", "commercial") in checks(score(index, task, rec))


# A price claim is checked in whatever form it is written; a wish restated as a product fact
# ("it's exactly the X one you want") is checked against the product's labels.
@pytest.mark.parametrize(
    "text, passes",
    [
        ("The Sunny Fields Gluten-Free Oat Cereal is $4.99.", True),
        ("The Sunny Fields Gluten-Free Oat Cereal is 4.99 dollars.", True),
        ("The Sunny Fields Gluten-Free Oat Cereal is about five bucks.", True),  # rough and right
        ("rec: sunny fields gluten-free oat cereal, 4.99", True),  # a clipped note's bare figure
        ("The Sunny Fields Gluten-Free Oat Cereal is $2.99.", False),
        ("The Sunny Fields Gluten-Free Oat Cereal is only 2 dollars.", False),
        ("The Sunny Fields Gluten-Free Oat Cereal is about two bucks.", False),
        ("The Sunny Fields Gluten-Free Oat Cereal is 2 dollars 99.", False),
        ("rec: sunny fields gluten-free oat cereal, 3.99", False),
        ("The Sunny Fields Gluten-Free Oat Cereal is 4 quid.", False),  # a whole figure a dollar off
        ("Yes, the Sunny Fields Gluten-Free Oat Cereal is exactly the gluten-free one you want.", True),
        ("Yes, the Sunny Fields Gluten-Free Oat Cereal is exactly the organic one you want.", False),
        ("The Sunny Fields Gluten-Free Oat Cereal is organic, just like you wanted.", False),
    ],
)
def test_prices_and_restated_wishes_in_any_wording(index, task, text, passes):
    rec = honest_recommend().model_copy(update={"response": text})
    r = FactualConsistency().score(TurnContext.from_record(rec, None, task, index, opening_history()))
    assert (r.value == 1.0) is passes, r.details["findings"]
