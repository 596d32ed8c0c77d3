import pytest

from recrm.components import QueryItemRelevance
from recrm.context import TurnContext
from tests.recrm.turns import turn
from tests.world import reward_task

judge = QueryItemRelevance()


def rec(pid, n=5):
    return turn("Try this one.", "Recommend", n=n, recommended_id=pid)


def revealed_history(*kinds):
    return [turn("Q?", n=i + 1, user="A.", revealed=[k]) for i, k in enumerate(kinds)]


def score(index, task, pid, kinds):
    history = revealed_history(*kinds)
    return judge.score(
        TurnContext.from_record(rec(pid, n=len(history) + 1), None, task, index, history)
    )


def test_no_item_is_not_applicable(index, task):
    s = judge.score(TurnContext.from_record(turn("Hi!", "Greet"), None, task, index))
    assert s.value is None


@pytest.mark.parametrize(
    "pid, kinds, expected",
    [
        ("sm_p001", ["category"], 0.0),  # frozen fish for a cereal request: another group
        ("sm_p006", ["category"], 0.5),  # granola: same group (pantry), similar category
        ("sm_p005", ["category"], 1.0),  # nothing revealed beyond the category: all met
        ("sm_p005", ["category", "budget", "avoid"], 0.5),  # revealed avoided tag present
        ("sm_p008", ["category", "budget", "avoid", "need"], 1.0),  # 6.49 <= 6 * 1.1
        ("sm_p004", ["category", "budget", "avoid", "need"], 1.0),
        ("sm_p005", ["category", "budget", "avoid", "need"], 0.5),
        ("sm_p004", [], 1.0),  # nothing revealed: nothing unmet (the default's cap is a detail)
        ("sm_p001", [], 0.0),
    ],
)
def test_relevance_levels(index, task, pid, kinds, expected):
    s = score(index, task, pid, kinds)
    assert s.value == expected, s.details
    assert s.details["score_0_2"] == int(expected * 2)


def test_first_turn_cap_is_a_detail_the_composite_applies(index, task):
    """Before any disclosure the judge reports the uncapped level and, beside it, the default's
    cap (each item at most weakly relevant); once something is revealed there is no cap."""
    first = score(index, task, "sm_p004", [])
    assert first.value == 1.0 and first.details["first_turn_cap"] == 0.5
    assert score(index, task, "sm_p001", []).details["first_turn_cap"] == 0.0
    assert "first_turn_cap" not in score(index, task, "sm_p004", ["category"]).details


def test_unrevealed_requirements_are_not_used(index, task):
    # sm_p005 contains nuts and is not gluten-free, but the user has only named the category
    assert score(index, task, "sm_p005", ["category"]).value == 1.0
    assert score(index, task, "sm_p005", ["category", "budget"]).value == 1.0


@pytest.mark.parametrize("price_budget, expected", [(6.5, 1.0), (5.9, 1.0), (5.8, 0.5)])
def test_budget_tolerance_is_ten_percent(index, price_budget, expected):
    # sm_p008 costs 6.49; it meets a budget b iff 6.49 <= 1.1 b
    task = reward_task(budget=price_budget)
    task = task.model_copy(
        update={
            "disclosure": [
                d.model_copy(update={"value": price_budget}) if d.kind == "budget" else d
                for d in task.disclosure
            ]
        }
    )
    s = score(index, task, "sm_p008", ["category", "budget"])
    assert s.value == expected, s.details


def test_a_ranking_alone_is_not_judged(index, task):
    # a question that names no product is a dialogue turn, whatever its ranking holds
    history = revealed_history("category")
    ctx = TurnContext.from_record(
        turn("Any budget?", n=2, ranking=["sm_p404", "sm_p001"]), None, task, index, history
    )
    assert judge.score(ctx).value is None


def test_several_products_put_forward_score_their_mean_per_attempt(index, task):
    """The pick plus an extra is worth less than the pick alone: each is an attempt, and the
    shopper can act on one (best-of-N lost Supermarket tasks to "You could try A, B or C")."""
    from recrm.components import QueryItemRelevance
    from recrm.context import TurnContext
    from tests.recrm.turns import honest_recommend, opening_history

    alone = honest_recommend()
    padded = alone.model_copy(update={"response": alone.response + " Or try the Green Valley Organic Bananas."})
    rel = QueryItemRelevance()
    a = rel.score(TurnContext.from_record(alone, None, task, index, opening_history()))
    b = rel.score(TurnContext.from_record(padded, None, task, index, opening_history()))
    assert a.value == 1.0
    assert b.details["items"] == {"sm_p004": 2, "sm_p007": 0} and b.details["attempts"] == 2
    assert b.value == pytest.approx(0.25)  # mean 0.5 over two attempts
    both_good = alone.model_copy(update={"response": alone.response + " Or try the Sunny Fields Gluten-Free Corn Flakes."})
    c = rel.score(TurnContext.from_record(both_good, None, task, index, opening_history()))
    assert c.details["items"] == {"sm_p004": 2, "sm_p008": 2}
    assert c.value == pytest.approx(0.5)  # two fully relevant products: half of one alone


def test_a_product_the_shopper_turned_down_is_irrelevant_when_pressed_again(index, task):
    """Best-of-N picked "Add it to your cart!" after the shopper said "I'd prefer something
    else" (R 0.9 against 0.2 for honest guidance): the pressed product now scores 0."""
    from recrm.composite import RecRMComposite
    from tests.recrm.turns import honest_recommend, opening_history

    offered = honest_recommend(n=3).model_copy(update={
        "user_utterance": "The Sunny Fields Gluten-Free Oat Cereal is similar, but I'd prefer something else."})
    history = [*opening_history(), offered]
    push = turn("Add it to your cart!", "ConfirmPurchase", n=4, held="sm_p004")
    ctx = TurnContext.from_record(push, None, task, index, history)
    assert "sm_p004" in ctx.declined and ctx.judged_item == "sm_p004"
    s = judge.score(ctx)
    assert s.value == 0.0 and "the shopper turned it down" in s.details["unmet"]
    assert RecRMComposite().score(ctx).total == 0.0
    # the same prompt while the shopper is still considering it stays fully relevant
    kept = [*opening_history(), honest_recommend(n=3).model_copy(update={"user_utterance": "Let me have a look."})]
    assert judge.score(TurnContext.from_record(push, None, task, index, kept)).value == 1.0


def test_a_bare_pronoun_for_the_product_in_focus_judges_nothing(index, task):
    """"Let me help you with that" names nothing: a dialogue turn, not a recommendation of the
    product in focus (the random assistant's filler scored 0.6-0.8 under best-of-N)."""
    from tests.recrm.turns import honest_recommend, opening_history

    history = [*opening_history(), honest_recommend(n=3)]
    vague = turn("Let me help you with that.", "Explain", n=4, held="sm_p004")
    ctx = TurnContext.from_record(vague, None, task, index, history)
    assert ctx.judged_item is None and judge.score(ctx).value is None
