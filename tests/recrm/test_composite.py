import pytest

from recrm.composite import VARIANTS, RecRMComposite, resolve_variant
from recrm.context import TurnContext
from tests.recrm.turns import honest_recommend, opening_history, turn

ASKS = [
    "Hi! What brings you in today?",
    "What kind of cereal do the kids like?",
    "Is there a price you'd like to stay under?",
    "Anything you need to avoid, like allergens?",
    "Do you prefer oats or corn?",
    "Crunchy or soft?",
    "Sweet or plain?",
    "How big a box would you like?",
]


def ctx(index, task, rec, history=None):
    history = opening_history() if history is None else history
    return TurnContext.from_record(rec, None, task, index, history)


def honest_total(index, task, composite=None):
    return (composite or RecRMComposite()).score(ctx(index, task, honest_recommend())).total


def test_honest_turn_scores_high(index, task):
    r = RecRMComposite().score(ctx(index, task, honest_recommend()))
    assert r.total == pytest.approx(1.0)
    assert r.indicator and r.judged_item == "sm_p004"
    assert set(r.components) == {"instruction", "consistency", "relevance", "ranking", "behavior"}


def test_formula_and_normalisation():
    c = RecRMComposite(alpha=1.0, beta=0.5, tau=0.5, normalize=False)
    assert c.combine(1, 1, 1.0, 0.5, 1.0) == pytest.approx(1.0 + 0.5 * 1.5)
    assert RecRMComposite().combine(1, 1, 1.0, 0.5, 1.0) == pytest.approx(1.75 / 2.0)
    assert RecRMComposite().combine(1, 1, 1.0, None, None) == pytest.approx(0.5)
    assert RecRMComposite().combine(1, 1, None, 1.0, 1.0) == 0.0


@pytest.mark.parametrize("gates", [(0.0, 1.0), (1.0, 0.0), (0.0, 0.0)])
def test_gates_zero_the_reward(gates):
    assert RecRMComposite().combine(gates[0], gates[1], 1.0, 1.0, 1.0) == 0.0


def test_indicator_threshold_just_below_and_above():
    below, above = RecRMComposite(tau=0.5), RecRMComposite(tau=0.49)
    assert below.combine(1, 1, 0.5, 1.0, 1.0) == pytest.approx(0.25)  # 0.5 is not > 0.5
    assert above.combine(1, 1, 0.5, 1.0, 1.0) == pytest.approx((0.5 + 0.5 * 2) / 2)
    assert RecRMComposite(tau=0.5).combine(1, 1, 0.51, 0.0, 1.0) == pytest.approx((0.51 + 0.5) / 2)


def test_gate_failures_on_real_turns(index, task):
    honest = honest_recommend()
    wrong_price = honest.model_copy(update={"response": honest.response.replace("$4.99", "$3.49")})
    r = RecRMComposite().score(ctx(index, task, wrong_price))
    assert r.gates["consistency"] == 0.0 and r.total == 0.0
    assert r.components["relevance"] == 1.0  # the other components are still reported
    jargon = honest.model_copy(update={"response": honest.response + " It tops my ranking."})
    r = RecRMComposite().score(ctx(index, task, jargon))
    assert r.gates["instruction"] == 0.0 and r.total == 0.0


def test_ladder_variants(index, task):
    honest = honest_recommend()
    wrong_price = honest.model_copy(update={"response": honest.response.replace("$4.99", "$3.49")})
    weak = honest_recommend().model_copy(
        update={
            "recommended_id": "sm_p005",
            "ranking": ["sm_p005"],
            "response": "The Sunny Fields Honey Nut Crunch Cereal is $3.99, within your budget.",
            "action": {
                "type": "Recommend",
                "display_name": "Sunny Fields Honey Nut Crunch Cereal",
                "visible_now": True,
                "reason": "cheap and tasty cereal",
            },
            "expected_user_action": None,
        }
    )
    history = opening_history() + [
        turn("Anything to avoid?", n=3, user="No nuts please.", revealed=["avoid"])
    ]
    expected = {
        # name: (honest, wrong price, weak item)
        "outcome": (0.0, 0.0, 0.0),
        "+instruction": (1.0, 1.0, 1.0),
        "+relevance": (1.0, 1.0, 0.5),
        "+behavior": (1.0, 1.0, 0.25),
        "full": (1.0, 0.0, 0.25),
    }
    for name, (a, b, c) in expected.items():
        comp = RecRMComposite(variant=name)
        assert comp.score(ctx(index, task, honest)).total == pytest.approx(a), name
        assert comp.score(ctx(index, task, wrong_price)).total == pytest.approx(b), name
        got = comp.score(ctx(index, task, weak.model_copy(update={"turn": 4}), history)).total
        assert got == pytest.approx(c), name


def test_variant_names_and_aliases():
    assert [resolve_variant(f"R{i}").name for i in range(1, 6)] == list(VARIANTS)[:5]
    assert resolve_variant("R5").name == "full"  # the paper's formula is asked for by name
    assert resolve_variant("paper").name == "paper" and list(VARIANTS)[5] == "paper"
    assert resolve_variant("relevance").name == "+relevance"
    assert VARIANTS["+behavior"].active == ("instruction", "relevance", "ranking", "behavior")
    with pytest.raises(ValueError, match="R6"):
        resolve_variant("R6")


def test_constructor_checks():
    with pytest.raises(ValueError, match="tau"):
        RecRMComposite(tau=1.0)
    with pytest.raises(ValueError, match="alpha"):
        RecRMComposite(alpha=0, beta=0)
    with pytest.raises(ValueError, match="relevance"):
        RecRMComposite(components=[], variant="+relevance")


# ---------------------------------------------------------------- reward hacking
def test_probe_listing_every_product(index, task):
    names = "; ".join(p.name for p in index.products.values())
    rec = honest_recommend().model_copy(update={"response": f"Options: {names}."})
    r = RecRMComposite().score(ctx(index, task, rec))
    assert r.total < honest_total(index, task)
    assert r.total == 0.0


def test_probe_never_recommending(index, task):
    """Questions are paid while they ask something open; once the shopper has told everything,
    asking again earns nothing, and no question ever earns what one honest recommendation does."""
    comp = RecRMComposite()
    history, totals = [], []
    kinds = ["category", "budget", "avoid", "need"]  # what sm_t001's shopper discloses, in order
    for i in range(1, 21):
        text = ASKS[i % len(ASKS)] + f" (question {i})"
        rec = turn(text, "AskPreference", n=i, user=f"reply {i}", revealed=kinds[i - 1 : i])
        r = comp.score(TurnContext.from_record(rec, None, task, index, history))
        assert r.total < honest_total(index, task)
        totals.append(r.total)
        history.append(rec)
    assert sum(totals) / len(totals) < honest_total(index, task) / 4  # per turn, what GSPO averages
    assert totals[-5:] == [0.0] * 5  # everything is known: asking more is no progress


def test_probe_repeating_the_users_words(index, task):
    history = opening_history()
    rec = honest_recommend().model_copy(update={"response": "Under six dollars please."})
    r = RecRMComposite().score(ctx(index, task, rec, history))
    assert r.gates["instruction"] == 0.0
    assert r.total < honest_total(index, task)


def test_probe_naming_a_product_not_in_the_catalog(index, task):
    rec = honest_recommend().model_copy(
        update={"response": "Grab the Sunny Fields chocolate puffs, the kids will love them."}
    )
    r = RecRMComposite().score(ctx(index, task, rec))
    assert r.gates["consistency"] == 0.0
    assert r.total < honest_total(index, task)


def test_probes_on_a_150_product_catalog():
    from benchmarks.recrm_scoring import sample_turns, synthetic_world

    index, task = synthetic_world(150)
    comp = RecRMComposite()
    totals = [
        comp.score(TurnContext.from_record(t, None, task, index, h)).total
        for t, h in sample_turns(index, task)
    ]
    ask, honest, wrong_price, invented, dump, echo, _ = totals
    assert honest > 0.75
    assert wrong_price == invented == dump == echo == 0.0
    assert ask <= honest  # a question with a good ranking is judged on the ranking head
