"""The budget rule (App. A.3 step 4) on hand-made cases, and the reference set."""

import pytest

from situ_gym.scene.budget import (
    compute_budget,
    eligible_products,
    price_increment,
    reference_set,
    round_up_budget,
)
from situ_gym.scene.model import Product


@pytest.mark.parametrize(
    ("price", "step"),
    [(0.99, 1.0), (19.99, 1.0), (20.0, 5.0), (99.99, 5.0), (100.0, 10.0), (499.99, 10.0),
     (500.0, 50.0), (999.99, 50.0), (1000.0, 100.0), (2999.0, 100.0)],
)
def test_increment_per_price_range(price, step):
    assert price_increment(price) == step


def test_increment_rejects_non_positive_price():
    with pytest.raises(ValueError, match="-1"):
        price_increment(-1)


@pytest.mark.parametrize(
    ("target", "budget"),
    [(3.49, 4.0), (4.0, 5.0), (19.5, 20.0), (23.4, 25.0), (45.0, 50.0), (149.0, 150.0),
     (120.0, 130.0), (740.0, 750.0), (600.0, 650.0), (1234.0, 1300.0), (1200.0, 1300.0)],
)
def test_strict_rounds_target_up_and_bumps_on_equality(target, budget):
    # Cheaper and dearer eligible products do not matter for the strict tier.
    assert compute_budget(target, [1.0, target, target * 3], "strict") == budget


DEARER = [5.5, 6.5, 7.5, 8.5, 9.5, 10.5]


def test_moderate_and_flexible_take_one_and_two_thirds_positions():
    eligible = [2.0, 4.5] + DEARER  # the target (4.5) and a cheaper one are ignored
    # n = 6: moderate -> 1-based ceil(6/3) = 2nd (6.5), flexible -> ceil(12/3) = 4th (8.5)
    assert compute_budget(4.5, eligible, "moderate") == 7.0
    assert compute_budget(4.5, eligible, "flexible") == 9.0


@pytest.mark.parametrize(
    ("dearer", "moderate", "flexible"),
    [([7.2], 8.0, 8.0), ([7.2, 9.2], 8.0, 10.0), ([7.2, 9.2, 11.2, 13.2], 10.0, 12.0)],
)
def test_position_index_rule_for_small_lists(dearer, moderate, flexible):
    assert compute_budget(5.0, dearer, "moderate") == moderate
    assert compute_budget(5.0, dearer, "flexible") == flexible


def test_none_dearer_falls_back_to_target_price():
    for tier in ("moderate", "flexible"):
        assert compute_budget(12.0, [3.0, 12.0], tier) == 13.0  # 12 -> 12, not above -> +$1


def test_increment_is_that_of_the_starting_price():
    # target $18 ($1 range), flexible start $21.30 ($5 range) -> $25
    assert compute_budget(18.0, [21.3], "flexible") == 25.0
    # start $480 ($10 range) -> $480 exactly, already above the $450 target
    assert compute_budget(450.0, [480.0], "moderate") == 480.0


def test_round_up_budget_exact_multiple_above_target_is_kept():
    assert round_up_budget(30.0, 20.0) == 30.0
    assert round_up_budget(30.0, 30.0) == 35.0


def test_unknown_tier_is_rejected():
    with pytest.raises(ValueError, match="'cheap'"):
        compute_budget(5.0, [], "cheap")


def _p(pid, price, tags, category="tea"):
    return Product(id=pid, name=pid, brand="b", category=category, group="g", price=price,
                   attributes={}, tags=tags, color=(16, 16, 16), instances=[])


def test_eligible_and_reference_set():
    products = [
        _p("a", 3.0, ["diet:vegan", "flavour:mint"]),
        _p("b", 4.0, ["diet:vegan"]),
        _p("c", 6.0, ["diet:vegan", "caffeine:decaf"]),
        _p("d", 2.0, ["flavour:mint"]),
        _p("e", 2.5, ["diet:vegan"], category="coffee"),
    ]
    elig = eligible_products(products, "tea", ["diet:vegan"], ["caffeine:decaf"])
    assert [p.id for p in elig] == ["a", "b"]
    assert reference_set(products, "tea", ["diet:vegan"], [], 4.0) == ["a", "b"]
    assert reference_set(products, "tea", ["diet:vegan"], [], 3.99) == ["a"]
    assert reference_set(products, "tea", [], ["diet:vegan"], 100.0) == ["d"]


def test_docstring_examples():
    import doctest

    import situ_gym.scene.budget as budget

    assert doctest.testmod(budget).failed == 0
